import Foundation
@_spi(PGModelInternals) import PGModelCore

/// The first line of a user export (`pgmodel user export`): what the file is, where it came from, and
/// the shape of every table its rows come from. The lines after it are JSON objects whose `kind` is
/// `row`, `share` or `history`.
///
/// ```swift
/// let header = try JSONDecoder().decode(UserExportHeader.self, from: Data(firstLine.utf8))
/// print(header.user.name, header.tables.map(\.table))
/// ```
@_spi(PGModelInternals) public struct UserExportHeader: Codable, Sendable, Hashable {
    /// The name every export file carries in `format`.
    public static let formatName = "pgmodel-user-export"
    /// The version of the line format this build writes and reads.
    public static let currentVersion = 1

    /// One stored column of an exported table, with its PostgreSQL type as `format_type` spells it.
    ///
    /// ```swift
    /// UserExportHeader.Column(name: "start_date", type: "timestamp with time zone")
    /// ```
    public struct Column: Codable, Sendable, Hashable {
        /// The column name.
        public var name: String
        /// The PostgreSQL type (`bigint`, `text[]`, `numeric`, …): an import refuses a target column of another type.
        public var type: String

        /// A column named `name` of PostgreSQL type `type`: `Column(name: "amount", type: "numeric")`.
        public init(name: String, type: String) {
            self.name = name
            self.type = type
        }
    }

    /// One exported model table: the classes stored in it and its columns besides `id`, `entity` and `owner_id`.
    ///
    /// ```swift
    /// UserExportHeader.Table(table: "trip", entities: ["Trip", "BusinessTrip"], columns: [.init(name: "name", type: "text")])
    /// ```
    public struct Table: Codable, Sendable, Hashable {
        /// The table name in the source store.
        public var table: String
        /// The classes stored in the table (its hierarchy), root first.
        public var entities: [String]
        /// Every column whose values the table's rows carry.
        public var columns: [Column]

        /// A table and its classes and columns: `Table(table: "trip", entities: ["Trip"], columns: [])`.
        public init(table: String, entities: [String], columns: [Column]) {
            self.table = table
            self.entities = entities
            self.columns = columns
        }
    }

    /// The source user.
    ///
    /// ```swift
    /// UserExportHeader.User(name: "alice", id: UUID())
    /// ```
    public struct User: Codable, Sendable, Hashable {
        /// The user's name (`pgmodel.users.name`).
        public var name: String
        /// The user's id in the source database.
        public var id: UUID

        /// The user `name` with id `id`: `User(name: "alice", id: aliceID)`.
        public init(name: String, id: UUID) {
            self.name = name
            self.id = id
        }
    }

    /// Always `header`: the line's kind.
    public var kind: String
    /// Always ``formatName``.
    public var format: String
    /// The format version (``currentVersion``).
    public var version: Int
    /// The source store (PostgreSQL schema).
    public var schema: String
    /// Whose rows the file holds.
    public var user: User
    /// When the snapshot was taken, ISO 8601 in UTC.
    public var exportedAt: String
    /// The source store's registered entity descriptions (`pgmodel.entities`).
    public var entities: [EntityDescription]
    /// Every table the rows come from.
    public var tables: [Table]

    /// A header of the current format and version: `UserExportHeader(schema: "public", user: user, exportedAt: "2026-11-30T10:00:00Z", entities: [], tables: [])`.
    public init(schema: String, user: User, exportedAt: String, entities: [EntityDescription], tables: [Table]) {
        self.kind = "header"
        self.format = Self.formatName
        self.version = Self.currentVersion
        self.schema = schema
        self.user = user
        self.exportedAt = exportedAt
        self.entities = entities
        self.tables = tables
    }
}

/// A `link` line of a user export: one many-to-many link (a join-table row) between two exported rows,
/// named by the relationship of the class whose row `id` is.
///
/// ```swift
/// UserExportLink(entity: "Folder", relationship: "favorites", id: folderID, target: itemID)
/// ```
@_spi(PGModelInternals) public struct UserExportLink: Codable, Sendable, Hashable {
    /// Always `link`.
    public var kind: String
    /// The class that declares the relationship.
    public var entity: String
    /// The relationship's name.
    public var relationship: String
    /// The row of `entity` (lowercase uuid).
    public var id: String
    /// The related row (lowercase uuid).
    public var target: String

    /// A link of `entity.relationship` from row `id` to row `target`: `UserExportLink(entity: "Folder", relationship: "favorites", id: a, target: b)`.
    public init(entity: String, relationship: String, id: String, target: String) {
        self.kind = "link"
        self.entity = entity
        self.relationship = relationship
        self.id = id
        self.target = target
    }
}
