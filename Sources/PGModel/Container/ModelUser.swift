import Foundation

/// A user of the PGModel service, as a container logged in through `pgmodel://`: who owns the rows
/// this container creates, and whether they see every row (an admin) or only their own and those
/// shared with them.
///
/// ```swift
/// let container = try ModelContainer(for: Trip.self, configurations: ModelConfiguration(url: serviceURL))
/// if let user = container.currentUser, !user.isAdmin { print("signed in as \(user.name)") }
/// ```
public struct ModelUser: Hashable, Sendable, Codable, CustomStringConvertible {
    /// The user's name, as created with `pgmodel user add`.
    public let name: String
    /// The user's id: the `owner_id` of the rows they create (docs/ADMIN.md).
    public let id: UUID
    /// Whether the user is an admin: sees and changes every row, creates tables, migrates.
    public let isAdmin: Bool

    /// A user with these values (the service reports them; made by hand in tests).
    ///
    /// ```swift
    /// let alice = ModelUser(name: "alice", id: UUID(), isAdmin: false)
    /// ```
    public init(name: String, id: UUID, isAdmin: Bool) {
        self.name = name
        self.id = id
        self.isAdmin = isAdmin
    }

    public var description: String { isAdmin ? "\(name) (admin)" : name }
}
