import Foundation

/// A logged-in service connection, as `pgmodel.session_list` shows it.
///
/// ```swift
/// for session in try await engine.listSessions(on: connection) { print(session.userName, session.clientAddress) }
/// ```
@_spi(PGModelInternals) public struct LiveSession: Sendable, Hashable, Codable {
    /// The session's id (the server's, not the client's).
    public var id: UUID
    /// Who is logged in.
    public var userName: String
    /// The client's IP address (behind a trusted proxy, the one its PROXY header named).
    public var clientAddress: String
    /// Whether the connection is TLS.
    public var tls: Bool
    /// When the `hello` succeeded.
    public var loggedInAt: Date
    /// The service instance holding the connection.
    public var instanceID: UUID
    /// That instance's host name.
    public var instanceHost: String
    /// That instance's store (PostgreSQL schema).
    public var schemaName: String

    public init(id: UUID, userName: String, clientAddress: String, tls: Bool, loggedInAt: Date,
                instanceID: UUID, instanceHost: String, schemaName: String) {
        self.id = id
        self.userName = userName
        self.clientAddress = clientAddress
        self.tls = tls
        self.loggedInAt = loggedInAt
        self.instanceID = instanceID
        self.instanceHost = instanceHost
        self.schemaName = schemaName
    }
}
