import Foundation

/// Which rows a rendered statement may read or change: said explicitly, never by a missing value.
///
/// The store's caller decides it from who is asking (`Requester` in PGModelPostgres): the direct store
/// and admins see ``allRows``; a service user sees the rows ``ownedBy(_:)`` them.
///
/// ```swift
/// let select = try renderer.select(FetchRequest(entity: "Trip"), visibility: .ownedBy(alice))
/// ```
public enum RowVisibility: Sendable, Hashable {
    /// Every row: the trusted direct store, or an admin.
    case allRows
    /// Only rows whose `owner_id` is this user's id (and, in joins, only such rows on every side).
    case ownedBy(UUID)

    /// The `owner_id` every touched row must have, if any.
    var ownerID: UUID? {
        switch self {
        case .allRows: nil
        case .ownedBy(let id): id
        }
    }
}
