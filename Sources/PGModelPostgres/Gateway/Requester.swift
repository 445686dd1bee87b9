import Foundation

/// Who is asking the store engine: the value every engine call takes, from which the role and
/// settings of its SQL transaction, the owner of inserted rows and the history's user follow.
///
/// The direct store (`postgres://`) is ``trusted``: it is the database owner's own connection and sees
/// the whole database. The service runs each request as the logged-in ``user(_:)``: on a connection in
/// the user's ``ConnectionScope`` (role `pgmodel_app`, `pgmodel.user_id`), so row-level security decides
/// every row it reads or writes, admins included.
///
/// ```swift
/// let rows = try await engine.fetch(request, in: schema, as: .user(alice), on: connection)
/// ```
@_spi(PGModelInternals) public enum Requester: Sendable, Hashable {
    /// The direct store: every row; inserted rows have no owner.
    case trusted
    /// A service user: row-level security shows them their rows, rows shared with them, and every row
    /// to an admin.
    case user(AuthenticatedUser)

    /// The service user's id, if any.
    public var userID: UUID? {
        switch self {
        case .trusted: nil
        case .user(let user): user.id
        }
    }

    /// The owner recorded on rows this requester inserts (unless they are children of someone else's
    /// record, which belong to that record's owner).
    public var newRowOwner: UUID? { userID }

    /// The user's name, recorded in history transactions.
    public var userName: String? {
        switch self {
        case .trusted: nil
        case .user(let user): user.name
        }
    }

    /// Whether schema changes and history deletes are allowed.
    public var isAdmin: Bool {
        switch self {
        case .trusted: true
        case .user(let user): user.isAdmin
        }
    }
}
