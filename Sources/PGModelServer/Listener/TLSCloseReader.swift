import NIOCore

/// Keeps reading while a TLS connection closes. Closing sends the peer a `close_notify` and waits for
/// the peer's own before the socket goes; but a connection's reads follow its request loop, which has
/// ended by then, so nothing would read that answer and every close would wait out the TLS shutdown
/// timeout (5 s) — holding up graceful shutdown. From the close on, this handler asks for the next read
/// after every read, until the socket closes. Sits right after `NIOSSLServerHandler`.
///
/// ```swift
/// try pipeline.addHandler(NIOSSLServerHandler(context: context))
/// try pipeline.addHandler(TLSCloseReader())
/// ```
final class TLSCloseReader: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer
    typealias OutboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    private var closing = false

    func close(context: ChannelHandlerContext, mode: CloseMode, promise: EventLoopPromise<Void>?) {
        closing = true
        context.close(mode: mode, promise: promise)
        // After the close is under way: the read brings in the peer's close_notify, which ends it.
        if context.channel.isActive { context.read() }
    }

    func channelReadComplete(context: ChannelHandlerContext) {
        context.fireChannelReadComplete()
        if closing && context.channel.isActive { context.read() }
    }
}
