import Foundation

/// What a user export wrote: rows per entity, shares, history entries and bytes.
///
/// ```swift
/// let report = try await engine.exportUser("alice", includeHistory: false, write: { print($0) }, on: connection)
/// print(report.rows["Trip"] ?? 0, report.bytes)
/// ```
@_spi(PGModelInternals) public struct UserExportReport: Sendable, Hashable, Codable {
    /// The exported user.
    public var user: String
    /// The store (PostgreSQL schema) read.
    public var schema: String
    /// Rows written, by class (the row's `entity`).
    public var rows: [String: Int]
    /// Many-to-many links (join-table rows) between two of those rows.
    public var links: Int
    /// Shares the user granted on those rows.
    public var shares: Int
    /// History entries written (0 without `includeHistory`).
    public var history: Int
    /// Bytes written, newlines included.
    public var bytes: Int

    /// An empty report for `user` in `schema`, counted up as the export goes: `UserExportReport(user: "alice", schema: "public")`.
    public init(user: String, schema: String, rows: [String: Int] = [:], links: Int = 0, shares: Int = 0, history: Int = 0, bytes: Int = 0) {
        self.user = user
        self.schema = schema
        self.rows = rows
        self.links = links
        self.shares = shares
        self.history = history
        self.bytes = bytes
    }
}
