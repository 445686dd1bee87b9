import Foundation
import PGModelSQL

/// Who is asking the store engine: the value every engine call takes, from which the SQL's row
/// visibility, the owner of inserted rows and the history's user follow.
///
/// The direct store (`postgres://`) is ``trusted``: it is the database owner's own connection and sees
/// the whole database. The service runs each request as the logged-in ``user(_:)``.
///
/// ```swift
/// let rows = try await engine.fetch(request, in: schema, as: .user(alice), on: connection)
/// ```
public enum Requester: Sendable, Hashable {
    /// The direct store: every row; inserted rows have no owner.
    case trusted
    /// A service user: an admin sees every row, anyone else their own.
    case user(AuthenticatedUser)

    /// The rows this requester's statements may read and change.
    public var visibility: RowVisibility {
        switch self {
        case .trusted: .allRows
        case .user(let user): user.isAdmin ? .allRows : .ownedBy(user.id)
        }
    }

    /// The owner recorded on rows this requester inserts.
    public var newRowOwner: UUID? {
        switch self {
        case .trusted: nil
        case .user(let user): user.id
        }
    }

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
