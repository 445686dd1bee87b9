import Foundation

/// What a service instance writes to `pgmodel.sessions` for one logged-in connection.
///
/// ```swift
/// try await engine.recordSessions([RecordedSession(id: UUID(), userID: alice.id, clientAddress: "203.0.113.7", tls: true)],
///                                 instance: instanceID, on: connection)
/// ```
@_spi(PGModelInternals) public struct RecordedSession: Sendable, Hashable {
    /// The session's id.
    public var id: UUID
    /// The logged-in user.
    public var userID: UUID
    /// The client's IP address.
    public var clientAddress: String
    /// Whether the connection is TLS.
    public var tls: Bool
    /// When the login succeeded.
    public var loggedInAt: Date

    public init(id: UUID, userID: UUID, clientAddress: String, tls: Bool, loggedInAt: Date = Date()) {
        self.id = id
        self.userID = userID
        self.clientAddress = clientAddress
        self.tls = tls
        self.loggedInAt = loggedInAt
    }
}
