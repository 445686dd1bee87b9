import Foundation

/// What a user import wrote: rows per entity, shares made, and what it left out.
///
/// ```swift
/// let report = try await engine.importUser(lines: lines, as: "bob", on: connection)
/// print(report.rows.values.reduce(0, +), report.sharesSkipped)
/// ```
@_spi(PGModelInternals) public struct UserImportReport: Sendable, Hashable, Codable {
    /// The user who owns the imported rows.
    public var user: String
    /// The store (PostgreSQL schema) written.
    public var schema: String
    /// Rows inserted, by class.
    public var rows: [String: Int]
    /// Many-to-many links (join-table rows) inserted.
    public var links: Int
    /// Shares inserted.
    public var shares: Int
    /// Shares left out: their grantee has no user of that name here, or is the importing user.
    public var sharesSkipped: Int
    /// References set to `NULL`: they pointed at rows neither in the file nor owned by the user here.
    public var referencesCleared: Int
    /// History lines read and not imported (history is written by saves only).
    public var historySkipped: Int

    /// An empty report for `user` in `schema`, counted up as the import goes: `UserImportReport(user: "alice", schema: "public")`.
    public init(user: String, schema: String, rows: [String: Int] = [:], links: Int = 0, shares: Int = 0, sharesSkipped: Int = 0,
                referencesCleared: Int = 0, historySkipped: Int = 0) {
        self.user = user
        self.schema = schema
        self.rows = rows
        self.links = links
        self.shares = shares
        self.sharesSkipped = sharesSkipped
        self.referencesCleared = referencesCleared
        self.historySkipped = historySkipped
    }
}
