/// The fields of `hello`: who logs in and which protocol version the client speaks.
/// Its descriptions never show the password.
///
/// ```swift
/// let hello = HelloPayload(user: "alice", password: "secret")
/// print(hello)   // HelloPayload(user: alice, protocol: 1)
/// ```
@_spi(PGModelInternals) public struct HelloPayload: Hashable, Sendable, Codable, CustomStringConvertible, CustomDebugStringConvertible {
    /// The PGModel user name (not a PostgreSQL role).
    public var user: String
    /// The user's password; checked by the server with pgcrypto, never logged.
    public var password: String
    /// The protocol version the client speaks (`"protocol"` on the wire).
    public var protocolVersion: Int

    public init(user: String, password: String, protocolVersion: Int = WireProtocol.version) {
        self.user = user
        self.password = password
        self.protocolVersion = protocolVersion
    }

    private enum CodingKeys: String, CodingKey {
        case user, password, protocolVersion = "protocol"
    }

    public var description: String { "HelloPayload(user: \(user), protocol: \(protocolVersion))" }
    public var debugDescription: String { description }
}
