import Foundation

/// What a successful `hello` reports: the server's name and version and who is logged in.
///
/// ```swift
/// let result = HelloResult(server: WireProtocol.serverName, user: "alice", userID: UUID.v7())
/// // {"server":"pgmodel/0.1","user":"alice","userID":"0193…"}
/// ```
public struct HelloResult: Hashable, Sendable {
    /// `"pgmodel/0.1"`.
    public var server: String
    /// The logged-in user's name.
    public var user: String
    /// The logged-in user's id: the `owner_id` of the rows they create.
    public var userID: UUID

    public init(server: String = WireProtocol.serverName, user: String, userID: UUID) {
        self.server = server
        self.user = user
        self.userID = userID
    }
}
