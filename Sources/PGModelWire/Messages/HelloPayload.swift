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
    /// Whether the client's ordinary requests on this connection never depend on an earlier one still
    /// unanswered (`"concurrent":true`): the server may then run them side by side and answer each as it
    /// finishes, matched by its `id`. A client that sends a request only once what it depends on is
    /// answered (as `RemoteModelStore` does: every call awaits its answer) loses nothing and gains one
    /// connection's worth of parallel calls. Absent or false: one request after another, answered in order.
    ///
    /// ```swift
    /// var hello = HelloPayload(user: "alice", password: "secret")
    /// hello.concurrent = true   // {"op":"hello",…,"concurrent":true}
    /// ```
    public var concurrent: Bool

    public init(user: String, password: String, protocolVersion: Int = WireProtocol.version, concurrent: Bool = false) {
        self.user = user
        self.password = password
        self.protocolVersion = protocolVersion
        self.concurrent = concurrent
    }

    private enum CodingKeys: String, CodingKey {
        case user, password, protocolVersion = "protocol", concurrent
    }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        user = try c.decode(String.self, forKey: .user)
        password = try c.decode(String.self, forKey: .password)
        protocolVersion = try c.decode(Int.self, forKey: .protocolVersion)
        concurrent = try c.decodeIfPresent(Bool.self, forKey: .concurrent) ?? false
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(user, forKey: .user)
        try c.encode(password, forKey: .password)
        try c.encode(protocolVersion, forKey: .protocolVersion)
        if concurrent { try c.encode(true, forKey: .concurrent) }
    }

    public var description: String { "HelloPayload(user: \(user), protocol: \(protocolVersion))" }
    public var debugDescription: String { description }
}
