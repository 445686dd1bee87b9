import NIOCore

/// A client connection as the listener hands it to its ``ConnectionServer``: the channel's async writer
/// and the inbox its request lines arrive in.
///
/// ```swift
/// await connectionServer.serve(AcceptedConnection(channel: asyncChannel, inbox: inbox))
/// ```
struct AcceptedConnection: Sendable {
    /// The connection's channel; only its writer (and `executeThenClose`) is used.
    let channel: NIOAsyncChannel<ReceivedFrame, ByteBuffer>
    /// Where the connection's lines arrive (``FrameInbox``).
    let inbox: FrameInbox
    /// The client's address from the PROXY protocol header of a trusted proxy's connection
    /// (``ProxyProtocolHandler``); nil when the socket's peer is the client.
    let proxiedAddress: EventLoopFuture<String>?
}
