import NIOCore
import NIOPosix

/// The floor under the service's `ping`: a NIO echo server and client on loopback TCP in this process,
/// with no async channel, no JSON and no PGModel in between. The client's handler fulfils one promise per
/// line; `roundTrip()` awaits it from a task, as `RemoteModelStore` awaits its answers.
final class LoopbackEcho: Sendable {
    private let server: Channel?
    private let client: Channel
    private let handler: EchoClientHandler

    static func start(group: EventLoopGroup) async throws -> LoopbackEcho {
        let server = try await ServerBootstrap(group: group)
            .childChannelOption(.tcpOption(.tcp_nodelay), value: 1)
            .childChannelInitializer { $0.pipeline.addHandler(EchoServerHandler()) }
            .bind(host: "127.0.0.1", port: 0).get()
        let handler = EchoClientHandler()
        let client = try await ClientBootstrap(group: group)
            .channelOption(.tcpOption(.tcp_nodelay), value: 1)
            .channelInitializer { $0.pipeline.addHandler(handler) }
            .connect(to: server.localAddress!).get()
        return LoopbackEcho(server: server, client: client, handler: handler)
    }

    /// A bare NIO client (no server of its own) against another line server, such as the service.
    static func client(to host: String, port: Int, group: EventLoopGroup) async throws -> LoopbackEcho {
        let handler = EchoClientHandler()
        let client = try await ClientBootstrap(group: group)
            .channelOption(.tcpOption(.tcp_nodelay), value: 1)
            .channelInitializer { $0.pipeline.addHandler(handler) }
            .connect(host: host, port: port).get()
        return LoopbackEcho(server: nil, client: client, handler: handler)
    }

    private init(server: Channel?, client: Channel, handler: EchoClientHandler) {
        self.server = server
        self.client = client
        self.handler = handler
    }

    func roundTrip() async throws {
        let client = client
        let handler = handler
        let promise = client.eventLoop.makePromise(of: Void.self)
        client.eventLoop.execute {
            handler.pending = promise
            client.writeAndFlush(ByteBuffer(string: "{\"id\":1,\"op\":\"ping\"}\n"), promise: nil)
        }
        try await promise.futureResult.get()
    }

    /// The same round trip with the awaiting task on the client channel's event loop.
    func roundTripOnLoop() async throws {
        let client = client
        let handler = handler
        try await client.eventLoop.flatSubmit {
            let promise = client.eventLoop.makePromise(of: Void.self)
            handler.pending = promise
            client.writeAndFlush(ByteBuffer(string: "{\"id\":1,\"op\":\"ping\"}\n"), promise: nil)
            return promise.futureResult
        }.get()
    }

    func close() async {
        try? await client.close()
        try? await server?.close()
    }
}

private final class EchoServerHandler: ChannelInboundHandler, Sendable {
    typealias InboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer
    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        context.writeAndFlush(data, promise: nil)
    }
}

private final class EchoClientHandler: ChannelInboundHandler, @unchecked Sendable {
    typealias InboundIn = ByteBuffer
    /// Touched only on the client channel's event loop.
    var pending: EventLoopPromise<Void>?
    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        pending?.succeed(())
        pending = nil
    }
}
