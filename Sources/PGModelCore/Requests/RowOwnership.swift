import Foundation

/// Which rows a fetch keeps by who owns them: the requesting user's own, or other users' rows shared with
/// them. Applied in SQL beside the predicate; `nil` in a ``FetchRequest`` keeps every visible row.
///
/// ```swift
/// var request = FetchRequest(entity: "Trip")
/// request.ownership = .sharedWithMe   // {"entity":"Trip","ownership":"sharedWithMe"}
/// ```
@_spi(PGModelInternals) public enum RowOwnership: String, Codable, Hashable, Sendable, CaseIterable {
    /// Rows whose `owner_id` is the requesting user (on the direct store, rows without an owner).
    case owned
    /// Rows another user owns and shared with the requesting user, directly or through a `.cascade`
    /// relationship of a shared record.
    case sharedWithMe
}
