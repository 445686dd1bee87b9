// SwiftData code uses Foundation types and Observation without importing them itself.
@_exported import Foundation
@_exported import Observation
// Of PGModel's lower layers, apps see only what they name: the error they catch (with its codes) and the
// attribute types `@Model` expansions spell out. The query IR, the SQL renderer and NIO stay out of an
// app's namespace; tools that need them import PGModelCore, PGModelPostgres or PGModelClient themselves.
@_exported import struct PGModelCore.PGModelError
@_exported import enum PGModelCore.AttributeType
// `#Unique<Member>([\.handle], scope: .allUsers)`.
@_exported import enum PGModelCore.UniquenessScope
// Sharing: `context.share(trip, with: "bob", permission: .readOnly)` and `context.shares(of:)`.
@_exported import enum PGModelCore.SharePermission
@_exported import struct PGModelCore.ModelShare
// Concurrent edits: `context.mergePolicy = .mergeByPropertyStoreTrump`, `@Attribute(.merge(.sum))`, and the
// conflicts a `save_conflict` error lists, with their values.
@_exported import struct PGModelCore.MergePolicy
@_exported import struct PGModelCore.MergeRule
@_exported import struct PGModelCore.SaveConflict
@_exported import enum PGModelCore.PGValue
