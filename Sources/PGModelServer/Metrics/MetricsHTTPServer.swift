import Logging
import NIOConcurrencyHelpers
import NIOCore
import NIOHTTP1
import NIOPosix
@_spi(PGModelInternals) import PGModelCore
@_spi(PGModelInternals) import PGModelIO

/// A small HTTP/1.1 server for the metrics and health endpoints (``MetricsHTTPRouter``). Kept robust
/// against bad peers: a malformed request is answered 400 by NIO's protocol error handler and closed,
/// headers are bounded by NIO's parser, a body past ``maxBodyBytes`` is answered 413, a connection that
/// has not finished its request within ``requestTimeout`` is closed, connections past
/// ``maxConnections`` are closed at once, and each connection carries one request (`Connection: close`).
///
/// ```swift
/// let server = MetricsHTTPServer(host: "127.0.0.1", port: 9090, router: router, logger: logger)
/// try await server.run()              // until the task is cancelled
/// let port = try await server.listeningPort()
/// ```
package struct MetricsHTTPServer: Sendable {
    package let host: String
    package let port: Int
    let router: MetricsHTTPRouter
    let logger: Logger
    let eventLoopGroup: any EventLoopGroup
    package var maxBodyBytes = 8 * 1024
    package var maxConnections = 64
    package var requestTimeout: Duration = .seconds(10)
    private let bound = PortBox()

    package init(host: String, port: Int, router: MetricsHTTPRouter, logger: Logger,
                 eventLoopGroup: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton) {
        self.host = host
        self.port = port
        self.router = router
        self.logger = logger
        self.eventLoopGroup = eventLoopGroup
    }

    /// The bound port (useful with port 0), once bound; throws when binding failed or the server ended.
    package func listeningPort() async throws -> Int {
        try await bound.value()
    }

    /// Binds and serves until the task is cancelled. Throws `invalid_configuration` when it cannot bind.
    package func run() async throws {
        let listener: NIOAsyncChannel<NIOAsyncChannel<HTTPServerRequestPart, HTTPServerResponsePart>, Never>
        do {
            listener = try await ServerBootstrap(group: eventLoopGroup)
                .serverChannelOption(.backlog, value: 64)
                .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
                .bind(host: host, port: port) { channel in
                    channel.eventLoop.makeCompletedFuture {
                        try channel.pipeline.syncOperations.configureHTTPServerPipeline(withErrorHandling: true)
                        return try NIOAsyncChannel<HTTPServerRequestPart, HTTPServerResponsePart>(wrappingChannelSynchronously: channel)
                    }
                }
        } catch {
            let failure = PGModelError(.invalidConfiguration,
                                       "cannot listen for metrics on \(host):\(port): \(ConnectionFailureText.describe(error))")
            bound.fail(failure)
            throw failure
        }
        let boundPort = listener.channel.localAddress?.port ?? port
        bound.set(boundPort)
        logger.info("metrics endpoint listening", metadata: ["host": "\(host)", "port": "\(boundPort)"])
        let open = NIOLockedValueBox(0)
        defer { bound.fail(PGModelError(.connectionFailed, "the metrics endpoint has stopped")) }
        try await withTaskCancellationHandler {
            try await withThrowingDiscardingTaskGroup { group in
                try await listener.executeThenClose { connections in
                    for try await connection in connections {
                        let admitted = open.withLockedValue { count in
                            guard count < maxConnections else { return false }
                            count += 1
                            return true
                        }
                        guard admitted else {
                            connection.channel.close(promise: nil)
                            continue
                        }
                        group.addTask {
                            defer { open.withLockedValue { $0 -= 1 } }
                            await serve(connection)
                        }
                    }
                }
            }
        } onCancel: {
            listener.channel.close(promise: nil)
        }
    }

    /// Reads one request and answers it, then closes.
    private func serve(_ connection: NIOAsyncChannel<HTTPServerRequestPart, HTTPServerResponsePart>) async {
        let channel = connection.channel
        // A peer that never finishes its request must not keep the socket.
        let timer = channel.eventLoop.scheduleTask(in: ConnectionDeadline.timeAmount(requestTimeout)) { channel.close(promise: nil) }
        defer { timer.cancel() }
        do {
            try await connection.executeThenClose { inbound, outbound in
                var head: HTTPRequestHead?
                var bodyBytes = 0
                var refused = false
                for try await part in inbound {
                    switch part {
                    case .head(let received):
                        head = received
                    case .body(let buffer):
                        bodyBytes += buffer.readableBytes
                        if bodyBytes > maxBodyBytes, !refused, let head {
                            let answer = MetricsHTTPRouter.Answer(status: .payloadTooLarge, body: Array("request too large\n".utf8))
                            try await write(answer, for: head, to: outbound)
                            refused = true
                        }
                        // The rest of a refused body is read and dropped, up to a bound: closing with unread
                        // bytes would reset the connection and lose the answer on its way.
                        if refused, bodyBytes > maxBodyBytes * 16 { return }
                    case .end:
                        guard let head, !refused else { return }
                        let answer = await router.answer(method: head.method, uri: head.uri)
                        try await write(answer, for: head, to: outbound)
                        return
                    }
                }
            }
        } catch {
            // A bad request (NIO answered 400 already), a reset or the timeout: nothing more to say.
            logger.debug("metrics connection ended with an error", metadata: ["error": "\(type(of: error))"])
        }
    }

    private func write(_ answer: MetricsHTTPRouter.Answer, for request: HTTPRequestHead,
                       to outbound: NIOAsyncChannelOutboundWriter<HTTPServerResponsePart>) async throws {
        var headers = HTTPHeaders()
        headers.add(name: "Content-Type", value: answer.contentType)
        headers.add(name: "Content-Length", value: "\(answer.body.count)")
        headers.add(name: "Connection", value: "close")
        if let allow = answer.allow { headers.add(name: "Allow", value: allow) }
        let version = request.version.major == 1 ? request.version : .http1_1
        try await outbound.write(.head(HTTPResponseHead(version: version, status: answer.status, headers: headers)))
        if !answer.body.isEmpty { try await outbound.write(.body(.byteBuffer(ByteBuffer(bytes: answer.body)))) }
        try await outbound.write(.end(nil))
    }
}
