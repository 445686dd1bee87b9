import Foundation
import Logging
import NIOCore
import NIOHTTP1
import NIOPosix
@_spi(PGModelInternals) import PGModelCore
@_spi(PGModelInternals) @testable import PGModelServer
import Testing

/// The metrics endpoint without a database: routing, health bodies, and the HTTP server over real TCP
/// against well-formed and hostile requests.
@Suite("Metrics endpoint: routing and HTTP")
struct MetricsHTTPTests {
    static let readyReport = HealthReport(version: "pgmodel/test", checks: [
        .init(name: "database", ok: true, detail: "reachable"), .init(name: "schema", ok: true, detail: "loaded"),
    ])
    static let notReadyReport = HealthReport(version: "pgmodel/test", checks: [
        .init(name: "database", ok: false, detail: "unreachable"), .init(name: "schema", ok: true, detail: "loaded"),
    ])

    static func router(ready: HealthReport = readyReport) -> MetricsHTTPRouter {
        MetricsHTTPRouter(version: "pgmodel/test", scrape: { Array("pgmodel_up 1\n".utf8) }, ready: { ready })
    }

    @Test("GET /metrics answers the scrape in Prometheus's text format; the query string is ignored")
    func metrics() async {
        let answer = await Self.router().answer(method: .GET, uri: "/metrics?name[]=x")
        #expect(answer.status == .ok)
        #expect(answer.contentType == MetricsHTTPRouter.prometheusContentType)
        #expect(answer.body == Array("pgmodel_up 1\n".utf8))
    }

    @Test("/health/live is 200 with the version; /health/ready is 200 or 503 with every check")
    func health() async throws {
        let live = await Self.router(ready: Self.notReadyReport).answer(method: .GET, uri: "/health/live")
        #expect(live.status == .ok)
        #expect(try JSONDecoder().decode(HealthReport.self, from: Data(live.body)) == .live(version: "pgmodel/test"))
        let ready = await Self.router().answer(method: .GET, uri: "/health/ready")
        #expect(ready.status == .ok)
        #expect(try JSONDecoder().decode(HealthReport.self, from: Data(ready.body)) == Self.readyReport)
        let notReady = await Self.router(ready: Self.notReadyReport).answer(method: .GET, uri: "/health/ready")
        #expect(notReady.status == .serviceUnavailable)
        let report = try JSONDecoder().decode(HealthReport.self, from: Data(notReady.body))
        #expect(report.status == "not_ready" && !report.isReady && report.version == "pgmodel/test")
        #expect(String(decoding: notReady.body, as: UTF8.self)
            == #"{"checks":[{"detail":"unreachable","name":"database","ok":false},{"detail":"loaded","name":"schema","ok":true}],"status":"not_ready","version":"pgmodel/test"}"#)
    }

    @Test("unknown paths are 404, other methods 405 with Allow, HEAD answers without a body",
          arguments: [("/", HTTPResponseStatus.notFound), ("/metrics/", .notFound), ("/health", .notFound), ("//metrics", .notFound),
                      ("/" + String(repeating: "a", count: 300), .notFound)])
    func routing(uri: String, status: HTTPResponseStatus) async {
        #expect(await Self.router().answer(method: .GET, uri: uri).status == status)
    }

    @Test("POST, PUT and DELETE on the endpoint's paths are 405 with Allow: GET, HEAD", arguments: [HTTPMethod.POST, .PUT, .DELETE, .PATCH])
    func methods(method: HTTPMethod) async {
        let answer = await Self.router().answer(method: method, uri: "/metrics")
        #expect(answer.status == .methodNotAllowed)
        #expect(answer.allow == "GET, HEAD")
        let head = await Self.router().answer(method: .HEAD, uri: "/health/ready")
        #expect(head.status == .ok && head.body.isEmpty)
    }

    /// Runs a real server on a free port for `body`, then stops it.
    static func withServer(_ router: MetricsHTTPRouter = router(), _ body: @Sendable (Int) async throws -> Void) async throws {
        var logger = Logger(label: "test.metrics")
        logger.logLevel = .critical
        var server = MetricsHTTPServer(host: "127.0.0.1", port: 0, router: router, logger: logger)
        server.maxBodyBytes = 1024
        server.requestTimeout = .seconds(2)
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { [server] in try await server.run() }
            let port = try await server.listeningPort()
            try await body(port)
            group.cancelAll()
        }
    }

    /// Sends `bytes` over a fresh TCP connection and returns everything read until the server closes it.
    static func exchange(_ bytes: String, port: Int) async throws -> String {
        let channel = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .connect(host: "127.0.0.1", port: port) { channel in
                channel.eventLoop.makeCompletedFuture { try NIOAsyncChannel<ByteBuffer, ByteBuffer>(wrappingChannelSynchronously: channel) }
            }
        return try await channel.executeThenClose { inbound, outbound in
            try await outbound.write(ByteBuffer(string: bytes))
            var text = ""
            for try await buffer in inbound { text += String(buffer: buffer) }
            return text
        }
    }

    @Test("over TCP: a GET is answered and the connection closed; the client reads the health report")
    func overTCP() async throws {
        try await Self.withServer { port in
            let answer = try await MetricsEndpointClient(host: "127.0.0.1", port: port).get("/health/ready")
            #expect(answer.status == 200)
            #expect(try JSONDecoder().decode(HealthReport.self, from: Data(answer.body)) == Self.readyReport)
            let raw = try await Self.exchange("GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n", port: port)
            #expect(raw.hasPrefix("HTTP/1.1 200 OK\r\n"))
            #expect(raw.contains("Connection: close") || raw.contains("connection: close"))
            #expect(raw.hasSuffix("pgmodel_up 1\n"))
        }
    }

    @Test("over TCP: garbage gets 400, a body past the limit 413, a 405 and a 404 — and the server keeps answering")
    func hostileRequests() async throws {
        try await Self.withServer { port in
            let garbage = try await Self.exchange("\u{01}\u{02} NOT HTTP AT ALL\r\n\r\n", port: port)
            #expect(garbage.hasPrefix("HTTP/1.1 400"), "\(garbage)")
            let large = try await Self.exchange(
                "POST /metrics HTTP/1.1\r\nHost: x\r\nContent-Length: 4096\r\n\r\n" + String(repeating: "x", count: 4096), port: port)
            #expect(large.hasPrefix("HTTP/1.1 413"), "\(large)")
            let post = try await Self.exchange("POST /health/live HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n\r\nhi", port: port)
            #expect(post.hasPrefix("HTTP/1.1 405") && post.contains("Allow: GET, HEAD"), "\(post)")
            let missing = try await Self.exchange("GET /admin HTTP/1.0\r\n\r\n", port: port)
            #expect(missing.hasPrefix("HTTP/1.0 404"), "\(missing)")
            // Past NIO's header limit: refused with 400 and closed (or reset while the client still writes).
            let huge = try? await Self.exchange("GET /" + String(repeating: "a", count: 200_000) + " HTTP/1.1\r\n\r\n", port: port)
            #expect(huge == nil || huge?.isEmpty == true || huge?.hasPrefix("HTTP/1.1 4") == true, "\(huge ?? "")")
            #expect(try await MetricsEndpointClient(host: "127.0.0.1", port: port).get("/health/live").status == 200)
        }
    }

    @Test("over TCP: a client that never finishes its request is closed after the request timeout")
    func slowClient() async throws {
        try await Self.withServer { port in
            let started = ContinuousClock.now
            let partial = try await Self.exchange("GET /metrics HTTP/1.1\r\nHost: x\r\n", port: port)
            #expect(partial.isEmpty)
            #expect(ContinuousClock.now - started < .seconds(10))
        }
    }
}
