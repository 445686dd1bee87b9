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
    /// `pgmodel.users.session_epoch` as read at login: a session whose user's epoch has moved on since
    /// (a new password, admin flag or name, or a revocation) is closed. 0 where no login read it.
    public var sessionEpoch: Int64

    public init(id: UUID, name: String, isAdmin: Bool, sessionEpoch: Int64 = 0) {
        self.id = id
        self.name = name
        self.isAdmin = isAdmin
        self.sessionEpoch = sessionEpoch
    }
}
