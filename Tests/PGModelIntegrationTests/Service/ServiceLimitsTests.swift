import Foundation
import NIOConcurrencyHelpers
import NIOCore
import NIOPosix
@_spi(PGModelInternals) import PGModelClient
@_spi(PGModelInternals) import PGModelCore
@_spi(PGModelInternals) import PGModelIO
@_spi(PGModelInternals) import PGModelPostgres
@_spi(PGModelInternals) import PGModelServer
import Testing

/// The limits that keep one client from stalling the service: PostgreSQL's statement timeout, caps on a
/// response's rows and bytes, the idle timeout, the bound on pipelined requests, and a graceful shutdown
/// that does not wait forever for a client that stopped reading.
@Suite("Server: limits")
struct ServiceLimitsTests {
    /// An admin logged in on a server for a fresh schema with one entity.
    static func withEntity<T: Sendable>(
        _ configure: @escaping (inout LineServerConfiguration) -> Void,
        _ body: @Sendable (_ client: RawProtocolClient, _ entity: String, _ schema: String, _ server: LineServer, _ port: Int) async throws -> T
    ) async throws -> T {
        let schema = "limits_\(ServerTestHarness.uniqueSuffix())"
        let entity = ServerTestHarness.uniqueEntity("Limit")
        try await ServerTestHarness.register(json: try RawProtocolTests.schemaJSON(entity), schemaName: schema)
        let admin = try await ServerTestHarness.makeUser("limits", admin: true)
        return try await ServerTestHarness.withRunningServer(schemaName: schema, configure: configure) { server, port async throws in
            let client = try await RawProtocolClient.connect(port: port)
            defer { Task { await client.close() } }
            #expect(try await RawProtocolTests.hello(client, admin.name, "secret").ok == true)
            return try await body(client, entity, schema, server, port)
        }
    }

    static func insert(_ client: RawProtocolClient, _ entity: String, names: [String], id: Int = 50) async throws {
        let inserts = names.enumerated().map { index, name in
            #"{"entity":"\#(entity)","id":"\#(UUID().uuidString)","values":{"name":"\#(name)","rank":\#(index)}}"#
        }.joined(separator: ",")
        let saved = try await client.request(#"{"id":\#(id),"op":"save","inserts":[\#(inserts)]}"#)
        #expect(saved.ok == true, "\(saved)")
    }

    @Test("PostgreSQL cancels a statement past the statement timeout: timeout, long before the request deadline, connection intact")
    func statementTimeout() async throws {
        try await Self.withEntity({ $0.statementTimeout = .milliseconds(500) }) { client, entity, schema, _, _ in
            let lock = try await DeadlineTests.TableLock("\"\(schema)\".\"\(Naming.snakeCase(entity))\"")
            let started = ContinuousClock.now
            let stuck = try await client.request(#"{"id":2,"op":"fetch","entity":"\#(entity)"}"#)
            let elapsed = ContinuousClock.now - started
            try await lock.release()
            #expect(stuck.code == "timeout", "\(stuck)")
            #expect(stuck.text.contains("57014"), "PostgreSQL's own cancel")
            #expect(elapsed < .seconds(10), "the 30 s request deadline did not have to act (\(elapsed))")
            #expect(try await client.request(#"{"id":3,"op":"fetch","entity":"\#(entity)"}"#).ok == true)
        }
    }

    @Test("more rows than the cap: result_too_large, which says to page; pages within the cap are answered")
    func rowCap() async throws {
        try await Self.withEntity({ $0.maxResponseRows = 3 }) { client, entity, _, _, _ in
            try await Self.insert(client, entity, names: ["a", "b", "c", "d", "e"])
            let all = try await client.request(#"{"id":2,"op":"fetch","entity":"\#(entity)"}"#)
            #expect(all.code == "result_too_large", "\(all)")
            #expect(all.text.contains("limit"))
            #expect(try await client.request(#"{"id":3,"op":"fetch","entity":"\#(entity)","limit":10}"#).code == "result_too_large")
            #expect(try await client.request(#"{"id":4,"op":"ids","entity":"\#(entity)"}"#).code == "result_too_large")
            #expect(try await client.request(#"{"id":5,"op":"fetch","entity":"\#(entity)","limit":3}"#).rows?.count == 3)
            #expect(try await client.request(#"{"id":6,"op":"fetch","entity":"\#(entity)","limit":3,"offset":3}"#).rows?.count == 2)
            #expect(try await client.request(#"{"id":7,"op":"count","entity":"\#(entity)"}"#).object["count"] as? Int == 5)
        }
    }

    @Test("an answer longer than the byte cap: result_too_large instead, and the connection goes on")
    func byteCap() async throws {
        try await Self.withEntity({ $0.maxResponseBytes = 4096 }) { client, entity, _, _, _ in
            try await Self.insert(client, entity, names: [String(repeating: "x", count: 5000)])
            let big = try await client.request(#"{"id":2,"op":"fetch","entity":"\#(entity)"}"#)
            #expect(big.code == "result_too_large", "\(big.text.prefix(300))")
            #expect(big.idNumber == 2)
            #expect(try await client.request(#"{"id":3,"op":"count","entity":"\#(entity)"}"#).ok == true)
        }
    }

    @Test("an idle connection gets a timeout line and is closed; a subscribed one is not idle; the Swift client reconnects")
    func idleTimeout() async throws {
        let user = try await ServerTestHarness.makeUser("idle")
        // 3 s, not 1: on a loaded machine the test's own next line could come a second after the last
        // answer (CI once saw the subscribe refused that way), which is the server doing its job.
        try await ServerTestHarness.withRunningServer(configure: { $0.idleTimeout = .seconds(3) }) { server, port async throws in
            let listening = try await RawProtocolClient.connect(port: port)
            defer { Task { await listening.close() } }
            // The login and the subscription in one write: no gap for the idle clock, however slow the
            // machine is between an answer and the test's next line.
            try await listening.send(#"{"id":1,"op":"hello","user":"\#(user.name)","password":"secret","protocol":1}"# + "\n"
                                     + #"{"id":2,"op":"subscribe"}"# + "\n")
            #expect(try RawResponse(try await listening.readLine()).ok == true)
            #expect(try RawResponse(try await listening.readLine()).ok == true)

            let quiet = try await RawProtocolClient.connect(port: port)
            defer { Task { await quiet.close() } }
            #expect(try await RawProtocolTests.hello(quiet, user.name, "secret").ok == true)
            let line = try RawResponse(try await quiet.readLine(timeout: .seconds(10)))
            #expect(line.code == "timeout", "\(line)")
            #expect(line.object["id"] is NSNull)
            try await quiet.expectClosed()

            // Events of other tests' saves may come first; the ping's answer follows them.
            let pong = try await ServerHistoryTests.request(listening, #"{"id":3,"op":"ping"}"#, id: 3)
            #expect(pong.ok == true, "a subscriber is listening, not idle: \(pong)")

            let store = try RemoteModelStore(url: try ServerRemoteStoreTests.url(user, port: port))
            try await store.ping()
            let waitedSince = ContinuousClock.now
            while server.connectionCount > 1, ContinuousClock.now - waitedSince < .seconds(10) {
                try await Task.sleep(for: .milliseconds(50))
            }
            #expect(server.connectionCount == 1, "the store's idle connection was closed")
            try await store.ping()   // reconnects and logs in again
            await store.close()
        }
    }

    @Test("a client that pipelines without reading is held back by TCP; others are served, and it gets every answer in order")
    func pipelinedFlood() async throws {
        let user = try await ServerTestHarness.makeUser("flood")
        try await ServerTestHarness.withRunningServer(configure: { $0.maxQueuedRequests = 4 }) { _, port async throws in
            let flood = try await RawProtocolClient.connect(port: port)
            defer { Task { await flood.close() } }
            #expect(try await RawProtocolTests.hello(flood, user.name, "secret").ok == true)
            let count = 20_000
            try await flood.send((2..<(count + 2)).map { #"{"id":\#($0),"op":"ping"}"# + "\n" }.joined())

            let other = try await RawProtocolClient.connect(port: port)
            defer { Task { await other.close() } }
            #expect(try await RawProtocolTests.hello(other, user.name, "secret").ok == true)
            #expect(try await other.request(#"{"id":2,"op":"ping"}"#).ok == true)

            for id in 2..<(count + 2) {
                let answer = try RawResponse(try await flood.readLine())
                guard answer.idNumber == id, answer.ok == true else {
                    Issue.record("answer \(id) was \(answer)")
                    return
                }
            }
        }
    }

    /// Short answers are written straight to the channel on its event loop; large ones are encoded on the
    /// global executor and go through the async writer from there. Pipelined together, every answer still
    /// comes in request order, whole.
    @Test("large answers written from another thread and short ones written on the loop, pipelined: every answer in order")
    func answersKeepTheirOrderAcrossWritePaths() async throws {
        let user = try await ServerTestHarness.makeUser("order")
        let entity = ServerTestHarness.uniqueEntity()
        try await ServerTestHarness.register(json: try RawProtocolTests.schemaJSON(entity))
        try await ServerTestHarness.withServer { port in
            let client = try await RawProtocolClient.connect(port: port)
            defer { Task { await client.close() } }
            #expect(try await RawProtocolTests.hello(client, user.name, "secret").ok == true)
            let rows = RequestWeight.lightAnswerRows * 2
            let inserts = (0..<rows).map {
                #"{"entity":"\#(entity)","id":"\#(UUID.v7().uuidString.lowercased())","values":{"name":"n\#($0)","rank":\#($0)}}"#
            }.joined(separator: ",")
            #expect(try await client.request(#"{"id":2,"op":"save","inserts":[\#(inserts)]}"#).ok == true)

            // Odd ids fetch every row (a heavy answer), even ids one row or a ping (short answers).
            let requests = (10..<70).map { id -> String in
                switch id % 4 {
                case 1, 3: #"{"id":\#(id),"op":"fetch","entity":"\#(entity)","sort":[{"key":"rank"}]}"#
                case 0: #"{"id":\#(id),"op":"fetch","entity":"\#(entity)","where":{"eq":[{"key":"rank"},{"value":\#(id)}]}}"#
                default: #"{"id":\#(id),"op":"ping"}"#
                }
            }
            try await client.send(requests.map { $0 + "\n" }.joined())
            for id in 10..<70 {
                let answer = try RawResponse(try await client.readLine())
                guard answer.idNumber == id, answer.ok == true else {
                    Issue.record("answer \(id) was \(answer.text.prefix(200))")
                    return
                }
                switch id % 4 {
                case 1, 3: #expect(answer.rows?.count == rows, "answer \(id)")
                case 0: #expect(answer.rows?.count == 1, "answer \(id)")
                default: #expect(answer.object["pong"] as? Bool == true, "answer \(id)")
                }
            }
        }
    }

    @Test("graceful shutdown closes a connection whose client stopped reading after the grace period")
    func shutdownDoesNotWaitForANonReader() async throws {
        let user = try await ServerTestHarness.makeUser("stalled")
        let bodyEnded = NIOLockedValueBoxHolder()
        try await ServerTestHarness.withRunningServer(configure: { $0.shutdownGracePeriod = .seconds(1) }) { server, port async throws in
            // A client that never reads: answers pile up in the socket buffers until the server's write waits.
            let channel = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
                .channelOption(.autoRead, value: false)
                .channelOption(.socketOption(.so_rcvbuf), value: 4096)
                .connect(host: "127.0.0.1", port: port).get()
            var text = #"{"id":1,"op":"hello","user":"\#(user.name)","password":"secret","protocol":1}"# + "\n"
            for id in 2..<40_000 { text += #"{"id":\#(id),"op":"ping"}"# + "\n" }
            try await channel.writeAndFlush(ByteBuffer(string: text)).get()
            let waitedSince = ContinuousClock.now
            while server.connectionCount < 1, ContinuousClock.now - waitedSince < .seconds(10) {
                try await Task.sleep(for: .milliseconds(20))
            }
            bodyEnded.mark()
        }
        let shutdown = try #require(bodyEnded.elapsed)
        #expect(shutdown < .seconds(8), "the server stopped \(shutdown) after shutdown began")
    }
}

/// When the test body ended, to time the shutdown that follows.
final class NIOLockedValueBoxHolder: Sendable {
    private let instant = NIOLockedValueBox<ContinuousClock.Instant?>(nil)
    func mark() { instant.withLockedValue { $0 = .now } }
    var elapsed: Duration? { instant.withLockedValue { $0.map { ContinuousClock.now - $0 } } }
}
