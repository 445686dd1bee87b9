import Foundation
@_spi(PGModelInternals) import PGModelCore

/// One row of `pgmodel.share_list`: a share with the record it covers and the users' names, as the
/// CLI's `pgmodel shares` prints it.
///
/// ```swift
/// let shares = try await engine.listShares(user: "bob", on: connection)
/// ```
@_spi(PGModelInternals) public struct ShareListing: Sendable, Hashable {
    public var schemaName: String
    public var record: RowReference
    /// The record's owner (nil: a row the direct store inserted).
    public var owner: String?
    public var share: ModelShare

    public init(schemaName: String, record: RowReference, owner: String?, share: ModelShare) {
        self.schemaName = schemaName
        self.record = record
        self.owner = owner
        self.share = share
    }
}
