import Foundation

/// A user of the service, as stored in `pgmodel.users`.
///
/// ```swift
/// let alice = try await engine.authenticate(user: "alice", password: secret, on: connection)
/// ```
@_spi(PGModelInternals) public struct AuthenticatedUser: Sendable, Hashable, Codable {
    public var id: UUID
    public var name: String
    public var isAdmin: Bool

    public init(id: UUID, name: String, isAdmin: Bool) {
        self.id = id
        self.name = name
        self.isAdmin = isAdmin
    }
}
