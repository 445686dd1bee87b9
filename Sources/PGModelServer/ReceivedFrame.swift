import NIOCore
import PGModelWire

/// A request line and when the server read it: a client's `timeoutMs` counts from then, so a request
/// that waited behind the connection's earlier ones does not get a fresh deadline when it starts.
///
/// ```swift
/// try channel.pipeline.syncOperations.addHandler(ReceivedFrame.Stamper())
/// // the next handler (the connection's NIOAsyncChannel) reads ReceivedFrame values
/// ```
struct ReceivedFrame: Sendable {
    var frame: LineFramer.Frame
    var received: NIODeadline

    /// Stamps each frame from ``LineFrameDecoder`` with the time it was read.
    final class Stamper: ChannelInboundHandler, Sendable {
        typealias InboundIn = LineFramer.Frame
        typealias InboundOut = ReceivedFrame

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            context.fireChannelRead(wrapInboundOut(ReceivedFrame(frame: unwrapInboundIn(data), received: .now())))
        }
    }
}
