import Logging
import NIOCore
import NIOPosix
import PostgresNIO

/// The floor under any service's point fetch on this machine: a NIO line server whose handler, for each
/// line, runs one point select on a PostgreSQL connection bound to its own event loop and writes the
/// row's text back, all on that one loop: no task, no JSON, no pool, no deadline, no row-level security.
/// Whatever a service point fetch adds over the driver's own select, this adds at least.
///
/// A request is the key as decimal digits and a newline; the answer is the number of rows and a newline.
final class PointFloor: Sendable {
    private let group: MultiThreadedEventLoopGroup
    private let server: Channel
    private let connection: PostgresConnection

    /// `sql` takes one bigint parameter: the request's key.
    static func start(configuration: PostgresConnection.Configuration, sql: String, logger: Logger) async throws -> PointFloor {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let loop = group.next()
        let connection = try await PostgresConnection.connect(on: loop, configuration: configuration, id: 77, logger: logger)
        let server = try await ServerBootstrap(group: group)
            .childChannelOption(.tcpOption(.tcp_nodelay), value: 1)
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(PointFloorHandler(connection: connection, sql: sql, logger: logger))
                }
            }
            .bind(host: "127.0.0.1", port: 0).get()
        return PointFloor(group: group, server: server, connection: connection)
    }

    private init(group: MultiThreadedEventLoopGroup, server: Channel, connection: PostgresConnection) {
        self.group = group
        self.server = server
        self.connection = connection
    }

    var port: Int { server.localAddress?.port ?? 0 }

    /// The same select straight on the server's connection, collected on its loop (the driver's
    /// `EventLoopFuture` API) and awaited from the caller's task: the driver alone, with no line server
    /// and the fewest hops (the async row sequence costs more). Returns the number of rows.
    func select(key: Int, sql: String, logger: Logger) async throws -> Int {
        var binds = PostgresBindings()
        binds.append(Int64(key))
        return try await connection.query(PostgresQuery(unsafeSQL: sql, binds: binds), logger: logger).get().rows.count
    }

    func close() async {
        try? await server.close()
        try? await connection.close()
        try? await group.shutdownGracefully()
    }
}

private final class PointFloorHandler: ChannelInboundHandler, @unchecked Sendable {
    // @unchecked: `buffered` is touched only on the channel's event loop, which is also the connection's.
    typealias InboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer
    let connection: PostgresConnection
    let sql: String
    let logger: Logger
    var buffered = ByteBuffer()

    init(connection: PostgresConnection, sql: String, logger: Logger) {
        self.connection = connection
        self.sql = sql
        self.logger = logger
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        var bytes = unwrapInboundIn(data)
        buffered.writeBuffer(&bytes)
        let channel = context.channel
        while let newline = buffered.readableBytesView.firstIndex(of: UInt8(ascii: "\n")) {
            let line = buffered.readString(length: newline - buffered.readerIndex) ?? ""
            buffered.moveReaderIndex(forwardBy: 1)
            var binds = PostgresBindings()
            binds.append(Int64(line) ?? -1)
            connection.query(PostgresQuery(unsafeSQL: sql, binds: binds), logger: logger).whenComplete { result in
                let count = (try? result.get().rows.count) ?? -1
                channel.writeAndFlush(ByteBuffer(string: "\(count)\n"), promise: nil)
            }
        }
    }
}

/// A bare NIO client of ``PointFloor``: one request at a time, its answer fulfils a promise.
final class PointFloorClient: Sendable {
    private let channel: Channel
    private let handler: PointFloorClientHandler

    static func connect(port: Int, group: EventLoopGroup) async throws -> PointFloorClient {
        let handler = PointFloorClientHandler()
        let channel = try await ClientBootstrap(group: group)
            .channelOption(.tcpOption(.tcp_nodelay), value: 1)
            .channelInitializer { $0.pipeline.addHandler(handler) }
            .connect(host: "127.0.0.1", port: port).get()
        return PointFloorClient(channel: channel, handler: handler)
    }

    private init(channel: Channel, handler: PointFloorClientHandler) {
        self.channel = channel
        self.handler = handler
    }

    /// The number of rows the server's select found for `key`.
    func rows(key: Int) async throws -> Int {
        let channel = channel
        let handler = handler
        let promise = channel.eventLoop.makePromise(of: Int.self)
        channel.eventLoop.execute {
            handler.pending = promise
            channel.writeAndFlush(ByteBuffer(string: "\(key)\n"), promise: nil)
        }
        return try await promise.futureResult.get()
    }

    func close() async { try? await channel.close() }
}

private final class PointFloorClientHandler: ChannelInboundHandler, @unchecked Sendable {
    // @unchecked: touched only on the client channel's event loop.
    typealias InboundIn = ByteBuffer
    var pending: EventLoopPromise<Int>?
    var buffered = ByteBuffer()

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        var bytes = unwrapInboundIn(data)
        buffered.writeBuffer(&bytes)
        guard let newline = buffered.readableBytesView.firstIndex(of: UInt8(ascii: "\n")) else { return }
        let line = buffered.readString(length: newline - buffered.readerIndex) ?? ""
        buffered.moveReaderIndex(forwardBy: 1)
        pending?.succeed(Int(line) ?? -1)
        pending = nil
    }
}
