import NIOCore
import NIOSSL
import NIOTLS
@_spi(PGModelInternals) import PGModelCore

/// Completes a promise when a client connection's TLS handshake does, so that the store can tell "the
/// certificate is not trusted" from "the connection broke" before it says `hello`: fails it with the
/// TLS error, when the connection closes first, or after `timeout` (a server that is not speaking TLS
/// may otherwise keep waiting for a line). Sits right after `NIOSSLClientHandler`; lives on the
/// channel's event loop.
///
/// ```swift
/// try pipeline.addHandler(NIOSSLClientHandler(context: context, serverHostname: host))
/// try pipeline.addHandler(TLSHandshakeWatcher(promise: handshake, timeout: .seconds(10)))
/// ```
final class TLSHandshakeWatcher: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer

    private var promise: EventLoopPromise<Void>?
    private let timeout: TimeAmount
    private var timer: Scheduled<Void>?

    init(promise: EventLoopPromise<Void>, timeout: TimeAmount) {
        self.promise = promise
        self.timeout = timeout
    }

    func handlerAdded(context: ChannelHandlerContext) {
        let channel = context.channel
        let timeout = timeout
        let promise = promise
        timer = context.eventLoop.scheduleTask(in: timeout) {
            promise?.fail(PGModelError(.tlsFailed,
                "no TLS handshake within \(timeout.nanoseconds / 1_000_000) ms; is the server configured for TLS?"))
            channel.close(promise: nil)
        }
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if let event = event as? TLSUserEvent, case .handshakeCompleted = event {
            finish(.success(()))
        }
        context.fireUserInboundEventTriggered(event)
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        finish(.failure(error))
        context.fireErrorCaught(error)
    }

    func channelInactive(context: ChannelHandlerContext) {
        finish(.failure(PGModelError(.tlsFailed,
            "the server closed the connection during the TLS handshake; is it configured for TLS?")))
        context.fireChannelInactive()
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        finish(.failure(PGModelError(.tlsFailed, "the connection closed during the TLS handshake")))
    }

    private func finish(_ result: Result<Void, any Error>) {
        timer?.cancel()
        timer = nil
        // A promise completes once; later outcomes (the close after a failure) are moot.
        promise?.completeWith(result)
        promise = nil
    }
}
