import Foundation

/// What a successful `hello` reports: the server's name and version, who is logged in, and the limits a
/// client sizes its requests by.
///
/// ```swift
/// let result = HelloResult(server: WireProtocol.serverName, user: "alice", userID: UUID.v7())
/// // {"server":"pgmodel/0.1","user":"alice","userID":"0193…"}
/// ```
@_spi(PGModelInternals) public struct HelloResult: Hashable, Sendable {
    /// `"pgmodel/0.1"`.
    public var server: String
    /// The logged-in user's name.
    public var user: String
    /// The logged-in user's id: the `owner_id` of the rows they create.
    public var userID: UUID
    /// Whether the user is an admin (`"admin"`); a result without it is read as not.
    public var isAdmin: Bool
    /// The server's request-line limit (`"maxLineBytes"`); a result without it is read as 1 MiB.
    public var maxLineBytes: Int?
    /// The most one save in parts may hold, its lines together (`"maxSaveBytes"`); a result without it
    /// is read as a server that takes no saves in parts.
    public var maxSaveBytes: Int?
    /// The PostgreSQL schema the service's tables live in (`"store"`): the `storeIdentifier` of its
    /// models and history. A result without it is read as a server that does not say.
    public var store: String?

    public init(server: String = WireProtocol.serverName, user: String, userID: UUID, isAdmin: Bool = false,
                maxLineBytes: Int? = nil, maxSaveBytes: Int? = nil, store: String? = nil) {
        self.server = server
        self.user = user
        self.userID = userID
        self.isAdmin = isAdmin
        self.maxLineBytes = maxLineBytes
        self.maxSaveBytes = maxSaveBytes
        self.store = store
    }
}
