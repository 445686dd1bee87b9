import Foundation

/// Whose rows a store operation may see and change.
///
/// The direct store runs ``unrestricted``; the service runs every request of a logged-in user with
/// that user's scope, and the rendered SQL filters on `owner_id` so other users' rows never leave
/// the database.
///
/// ```swift
/// let scope = AccessScope(userID: alice.id)
/// ```
public struct AccessScope: Sendable, Hashable {
    /// The user on whose behalf the operation runs; the owner of rows it inserts.
    public var userID: UUID?
    /// Admins see and change every row.
    public var isAdmin: Bool
    /// The user's name, recorded in history transactions.
    public var userName: String?

    public init(userID: UUID?, isAdmin: Bool = false, userName: String? = nil) {
        self.userID = userID
        self.isAdmin = isAdmin
        self.userName = userName
    }

    /// No user, every row: the direct store's scope.
    public static let unrestricted = AccessScope(userID: nil, isAdmin: true)

    /// The owner filter rendered into SQL: `nil` means no filter.
    var ownerFilter: UUID? { isAdmin ? nil : userID }
}

/// A user of the service, as stored in `pgmodel.users`.
///
/// ```swift
/// let alice = try await engine.authenticate(user: "alice", password: secret, on: connection)
/// ```
public struct AuthenticatedUser: Sendable, Hashable, Codable {
    public var id: UUID
    public var name: String
    public var isAdmin: Bool

    public init(id: UUID, name: String, isAdmin: Bool) {
        self.id = id
        self.name = name
        self.isAdmin = isAdmin
    }
}
