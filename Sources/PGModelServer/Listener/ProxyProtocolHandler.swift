import NIOCore
@_spi(PGModelInternals) import PGModelWire

/// The first handler of a connection from a trusted proxy (``LineServerConfiguration/trustedProxies``):
/// reads the PROXY protocol header (``ProxyHeaderParser``) before anything else, TLS included, hands the
/// client's real address to ``address``, and from then on passes bytes through untouched. A connection
/// whose header is missing, malformed, or not complete within the login timeout is closed: a trusted
/// proxy always sends one, so its absence means a misconfiguration, not a client to serve under the
/// proxy's address.
///
/// ```swift
/// let proxy = ProxyProtocolHandler(peer: "10.0.0.2", timeout: .seconds(10), eventLoop: channel.eventLoop)
/// try channel.pipeline.syncOperations.addHandler(proxy, position: .first)
/// let client = try await proxy.address.get()   // "203.0.113.7"
/// ```
final class ProxyProtocolHandler: ChannelInboundHandler, RemovableChannelHandler, @unchecked Sendable {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer

    /// The client's address: the header's source, or `peer` for a `LOCAL`/`UNKNOWN` header. Fails when
    /// the connection closes without a valid header.
    let address: EventLoopFuture<String>
    private let promise: EventLoopPromise<String>
    private let peer: String
    private let timeout: TimeAmount
    // Used on the channel's event loop only (`@unchecked Sendable` above).
    private var parser = ProxyHeaderParser()
    private var isPassingThrough = false
    /// Whether ``address`` is settled (a promise is completed once).
    private var isSettled = false
    private var timer: Scheduled<Void>?

    /// The reason a connection was closed for its header.
    struct Refused: Error, CustomStringConvertible {
        var description: String
    }

    init(peer: String, timeout: TimeAmount, eventLoop: any EventLoop) {
        self.peer = peer
        self.timeout = timeout
        promise = eventLoop.makePromise(of: String.self)
        address = promise.futureResult
    }

    func handlerAdded(context: ChannelHandlerContext) {
        let channel = context.channel
        timer = context.eventLoop.scheduleTask(in: timeout) { [self] in
            settle(.failure(Refused(description: "no complete PROXY header in time")))
            channel.close(promise: nil)
        }
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard !isPassingThrough else { return context.fireChannelRead(data) }
        // Refused: the connection is closing; what it still sends is dropped.
        guard !isSettled else { return }
        let buffer = unwrapInboundIn(data)
        switch parser.feed(buffer.readableBytesView) {
        case .needMoreBytes:
            break
        case .invalid(let reason):
            refuse(context, reason)
        case .header(let header, let remainder):
            isPassingThrough = true
            timer?.cancel()
            switch header {
            case .local: settle(.success(peer))
            case .proxied(let source, _): settle(.success(source))
            }
            if !remainder.isEmpty {
                context.fireChannelRead(wrapInboundOut(context.channel.allocator.buffer(bytes: remainder)))
                context.fireChannelReadComplete()
            }
        }
    }

    func channelInactive(context: ChannelHandlerContext) {
        timer?.cancel()
        if case .invalid(let reason) = parser.endOfInput() { settle(.failure(Refused(description: reason))) }
        context.fireChannelInactive()
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        timer?.cancel()
        settle(.failure(Refused(description: "the connection ended before its PROXY header")))
    }

    private func settle(_ result: Result<String, Refused>) {
        guard !isSettled else { return }
        isSettled = true
        switch result {
        case .success(let address): promise.succeed(address)
        case .failure(let error): promise.fail(error)
        }
    }

    private func refuse(_ context: ChannelHandlerContext, _ reason: String) {
        timer?.cancel()
        settle(.failure(Refused(description: reason)))
        context.close(promise: nil)
    }
}
