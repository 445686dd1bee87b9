import Foundation

/// What removing a user did: per entity table, how many rows were deleted or handed over.
///
/// ```swift
/// let report = try await engine.removeUser("alice", .deleteRows, on: connection)
/// print(report.tables.map(\.rows).reduce(0, +))
/// ```
@_spi(PGModelInternals) public struct UserRemovalReport: Sendable, Hashable, Codable {
    /// One entity table's part.
    ///
    /// ```swift
    /// for table in report.tables { print("\(table.schema).\(table.table): \(table.rows)") }
    /// ```
    public struct Table: Sendable, Hashable, Codable {
        /// The store (PostgreSQL schema).
        public var schema: String
        /// The table.
        public var table: String
        /// The classes stored in it.
        public var entities: [String]
        /// Rows deleted or handed over.
        public var rows: Int
    }

    /// The removed user.
    public var user: String
    /// Who got the rows; nil when they were deleted.
    public var handedOverTo: String?
    /// Every registered entity table, in the order they were done.
    public var tables: [Table]
}
