import Foundation
import Logging
import NIOConcurrencyHelpers
import NIOCore
import NIOPosix
@_spi(PGModelInternals) import PGModelClient
@_spi(PGModelInternals) import PGModelCore
@_spi(PGModelInternals) import PGModelIO
@_spi(PGModelInternals) import PGModelPostgres
@_spi(PGModelInternals) import PGModelServer
@_spi(PGModelInternals) import PGModelWire
import PostgresNIO
import Testing

/// The limits one logged-in (or not yet logged-in) client must not be able to break, through real TCP:
/// history's cap, a fetch's byte budget while reading, `hello`'s bounds and escaped logs, rights before
/// a migration's lock, each user's share and each save's lifetime of the held-save budget, the PROXY
/// protocol from trusted proxies, and password hashing.
@Suite("Server: limits one client must not break")
struct ServiceAbuseLimitsTests {
    /// A fresh user logged in through a Swift store and a raw client, on a server for a fresh schema with
    /// `entity` registered.
    static func withStore(
        _ configure: @escaping @Sendable (inout LineServerConfiguration) -> Void,
        _ body: @Sendable (_ store: RemoteModelStore, _ raw: RawProtocolClient, _ entity: String, _ port: Int) async throws -> Void
    ) async throws {
        let schemaName = "abuse_\(ServerTestHarness.uniqueSuffix())"
        let entity = ServerTestHarness.uniqueEntity("Abuse")
        let schema = ServerRemoteStoreTests.schema(entity)
        try await ServerTestHarness.register(schema, schemaName: schemaName)
        let user = try await ServerTestHarness.makeUser("abuse")
        try await ServerTestHarness.withRunningServer(schemaName: schemaName, configure: configure) { _, port in
            let store = try RemoteModelStore(url: try ServerRemoteStoreTests.url(user, port: port))
            let raw = try await RawProtocolClient.connect(port: port)
            do {
                try await store.prepare(schema)
                #expect(try await RawProtocolTests.hello(raw, user.name, "secret").ok == true)
                try await body(store, raw, entity, port)
            } catch {
                await raw.close()
                await store.close()
                throw error
            }
            await raw.close()
            await store.close()
        }
    }

    // MARK: history and fetch

    @Test("history without a limit, or past the cap, is result_too_large; pages within it are answered; fetchHistory pages by itself")
    func historyCap() async throws {
        try await Self.withStore({ $0.maxHistoryTransactions = 3 }) { store, raw, entity, _ in
            for index in 0..<5 {
                _ = try await store.save(SaveRequest(inserts: [ServerRemoteStoreTests.row(entity, "h\(index)", rank: Int64(index))]))
            }
            let all = try await raw.request(#"{"id":2,"op":"history","history":{}}"#)
            #expect(all.code == "result_too_large", "\(all.text.prefix(300))")
            #expect(all.message?.contains("limit") == true)
            #expect(try await raw.request(#"{"id":3,"op":"history","history":{"limit":4}}"#).code == "result_too_large")
            let page = try await raw.request(#"{"id":4,"op":"history","history":{"limit":3}}"#)
            let transactions = (page.object["history"] as? [String: Any])?["transactions"] as? [[String: Any]]
            #expect(transactions?.count == 3, "\(page.text.prefix(300))")

            // The Swift API still answers a request for everything, and a limit larger than a page.
            let everything = try await store.fetchHistory(HistoryRequest())
            #expect(everything.transactions.count == 5)
            #expect(everything.transactions.map(\.token) == everything.transactions.map(\.token).sorted())
            let newest = try await store.fetchHistory(HistoryRequest(newestFirst: true, limit: 4))
            #expect(newest.transactions.map(\.token) == Array(everything.transactions.map(\.token).reversed().prefix(4)))
        }
    }

    @Test("a fetch or history read stops at the byte budget while its rows are read: result_too_large, and the connection goes on")
    func byteBudgetWhileReading() async throws {
        try await Self.withStore({ $0.maxResponseBytes = 4_096 }) { store, raw, entity, _ in
            let long = String(repeating: "x", count: 1_500)
            for index in 0..<4 {
                // Inserted, then updated: history keeps an update's new values (not an insert's).
                let row = ServerRemoteStoreTests.row(entity, "r\(index)", rank: Int64(index))
                _ = try await store.save(SaveRequest(inserts: [row]))
                _ = try await store.save(SaveRequest(updates: [RowValues(entity: entity, id: row.id, values: ["code": .string("\(long)\(index)")])]))
            }
            let big = try await raw.request(#"{"id":2,"op":"fetch","entity":"\#(entity)"}"#)
            #expect(big.code == "result_too_large", "\(big.text.prefix(300))")
            // Refused while reading (the rows' own bytes), not after encoding the whole answer.
            #expect(big.message?.contains("rows read") == true, "\(big)")
            let history = try await raw.request(#"{"id":3,"op":"history","history":{"limit":100}}"#)
            #expect(history.code == "result_too_large", "\(history.text.prefix(300))")
            #expect(history.message?.contains("rows read") == true, "\(history)")
            #expect(try await raw.request(#"{"id":4,"op":"fetch","entity":"\#(entity)","limit":1}"#).rows?.count == 1)
            // The Swift client's history pages shrink until they fit.
            #expect(try await store.fetchHistory(HistoryRequest()).transactions.count == 8)
        }
    }

    // MARK: hello, logs, connections

    @Test("hello: an overlong user name or password is invalid_field, never checked or counted; a newline in a name cannot forge a log line")
    func helloBoundsAndLogs() async throws {
        let capture = LogCapture()
        let logger = Logger(label: "pgmodel.capture") { _ in capture }
        var policy = LoginThrottle.Policy()
        policy.freeFailuresPerAddress = 1_000
        let throttle = policy
        // Ten hellos on one connection that never logs in: under a loaded parallel suite they can take
        // longer than the default login timeout, which closes the connection and is not what this checks.
        try await ServerTestHarness.withRunningServer(configure: { $0.loginThrottle = throttle; $0.loginTimeout = .seconds(300) },
                                                      logger: logger) { _, port in
            let client = try await RawProtocolClient.connect(port: port)
            defer { Task { await client.close() } }
            let longName = String(repeating: "u", count: 10_000)
            for id in 1...8 {
                // More than maxFailedAuthentications (5): not counted as failed logins, the connection stays.
                let answer = try await RawProtocolTests.hello(client, longName, "x", id: id)
                #expect(answer.code == "invalid_field" && answer.field == "user", "\(answer.text.prefix(200))")
            }
            let longPassword = try await RawProtocolTests.hello(client, "alice", String(repeating: "p", count: 2_000), id: 9)
            #expect(longPassword.code == "invalid_field" && longPassword.field == "password")
            let forged = try await RawProtocolTests.hello(client, #"mallory\nnotice login succeeded user=admin"#, "x", id: 10)
            #expect(forged.code == "authentication_failed")
            #expect(capture.text.contains(#"user=mallory\nnotice login succeeded user=admin"#), "\(capture.text)")
            #expect(!capture.text.contains("\nnotice login succeeded"), "a forged line: \(capture.text)")
            #expect(!capture.text.contains(longName), "an overlong name reached the log")
        }
    }

    @Test("maxConnections has a default: 1,024")
    func connectionDefault() {
        #expect(LineServerConfiguration(databaseURL: "postgres://a@b/c").maxConnections == 1_024)
    }

    // MARK: migrate

    @Test("a non-admin migrate is refused before any lock: it answers schema_version_mismatch while the store-wide lock is held")
    func migrateRightsFirst() async throws {
        let schemaName = "abuse_\(ServerTestHarness.uniqueSuffix())"
        let entity = ServerTestHarness.uniqueEntity("Mig")
        let v1 = SchemaDescription(entities: [EntityDescription(name: entity, attributes: [AttributeDescription(name: "name", type: .string)])], version: "1.0.0")
        let v2 = SchemaDescription(entities: [EntityDescription(name: entity, attributes: [
            AttributeDescription(name: "name", type: .string), AttributeDescription(name: "note", type: .string, isOptional: true),
        ])], version: "2.0.0")
        let plan = MigrationPlanDescription(schemas: [v1, v2], stages: [.init(from: "1.0.0", to: "2.0.0", isCustom: false)])
        try await ServerTestHarness.register(v1, schemaName: schemaName)
        let user = try await ServerTestHarness.makeUser("migrant")
        try await ServerTestHarness.withRunningServer(schemaName: schemaName, requestTimeout: .seconds(5)) { _, port in
            let store = try RemoteModelStore(url: try ServerRemoteStoreTests.url(user, port: port))
            defer { Task { await store.close() } }
            try await ServerTestHarness.withDatabase { _, connection in
                // PostgresStoreEngine.bootstrapLock: what a migration takes first.
                _ = try await connection.connection.query("SELECT pg_advisory_lock(\(unescaped: "\(0x7067_6d6f_6465_6c as Int64)"))", logger: ServerTestHarness.logger).collect()
                let refused = await #expect(throws: PGModelError.self) { try await store.migrate(to: v2, plan: plan) }
                #expect(refused?.code == .schemaVersionMismatch, "\(String(describing: refused))")
                _ = try await connection.connection.query("SELECT pg_advisory_unlock_all()", logger: ServerTestHarness.logger).collect()
            }
        }
    }

    // MARK: held saves

    @Test("held saves: one user's connections together get at most their share; another user still gets room")
    func heldSaveShare() async throws {
        let slow = try await ServerTestHarness.makeUser("slow")
        let other = try await ServerTestHarness.makeUser("other")
        let entity = ServerTestHarness.uniqueEntity("Part")
        try await ServerTestHarness.register(ServerSaveInPartsTests.schema(entity))
        try await ServerTestHarness.withRunningServer(configure: {
            $0.maxHeldSaveBytes = 8_000
            $0.maxHeldSaveBytesPerUser = 3_000
        }) { _, port in
            let a1 = try await RawProtocolClient.connect(port: port)
            let a2 = try await RawProtocolClient.connect(port: port)
            let b = try await RawProtocolClient.connect(port: port)
            defer { Task { for client in [a1, a2, b] { await client.close() } } }
            try await ServerSaveInPartsTests.login(a1, slow)
            try await ServerSaveInPartsTests.login(a2, slow)
            try await ServerSaveInPartsTests.login(b, other)
            #expect(try await a1.request(ServerSaveInPartsTests.firstPart(entity, id: 2, bytes: 2_000)).object["held"] as? Int == 1)
            let second = try await a2.request(ServerSaveInPartsTests.firstPart(entity, id: 3, bytes: 2_000))
            #expect(second.code == "save_too_large", "over the user's share from a second connection: \(second)")
            let others = try await b.request(ServerSaveInPartsTests.firstPart(entity, id: 4, bytes: 2_000))
            #expect(others.object["held"] as? Int == 1, "\(others)")
        }
    }

    @Test("a save in parts past its lifetime is dropped with its connection, even with parts coming in time")
    func heldSaveLifetime() async throws {
        let user = try await ServerTestHarness.makeUser("lifetime")
        let entity = ServerTestHarness.uniqueEntity("Part")
        try await ServerTestHarness.register(ServerSaveInPartsTests.schema(entity))
        try await ServerTestHarness.withRunningServer(configure: {
            $0.heldSaveTimeout = .seconds(60)
            $0.heldSaveLifetime = .seconds(1)
        }) { _, port in
            let client = try await RawProtocolClient.connect(port: port)
            defer { Task { await client.close() } }
            try await ServerSaveInPartsTests.login(client, user)
            let started = ContinuousClock.now
            #expect(try await client.request(ServerSaveInPartsTests.firstPart(entity, id: 2, bytes: 500)).object["held"] as? Int == 1)
            // Waits for the server's notice, which comes at the lifetime's end, far before the part timeout.
            let closing = try RawResponse(try await client.readLine(timeout: .seconds(30)))
            #expect(closing.code == "timeout" && closing.idIsNull, "\(closing)")
            #expect(closing.message?.contains("lifetime") == true, "\(closing)")
            #expect(ContinuousClock.now - started < .seconds(30))
            try await client.expectClosed()
        }
    }

    // MARK: PROXY protocol

    /// A v2 header for a TCP-over-IPv4 client at `source`.
    static func proxyV2(source: [UInt8], port: UInt16) -> [UInt8] {
        let block = source + [127, 0, 0, 1] + [UInt8(port >> 8), UInt8(port & 0xFF), 0x1D, 0x08]
        return [0x0D, 0x0A, 0x0D, 0x0A, 0x00, 0x0D, 0x0A, 0x51, 0x55, 0x49, 0x54, 0x0A, 0x21, 0x11, 0, UInt8(block.count)] + block
    }

    @Test("behind a trusted proxy the PROXY header's address (v1, v2) drives the login throttle and the logs: one client's guesses lock out only that client")
    func proxyProtocolThrottle() async throws {
        let user = try await ServerTestHarness.makeUser("proxied")
        let capture = MetadataLogSink()
        let logger = Logger(label: "pgmodel.capture") { _ in MetadataLogHandler(sink: capture) }
        var policy = LoginThrottle.Policy()
        policy.freeFailuresPerAddress = 2
        policy.freeFailuresPerUser = .max
        policy.initialDelay = .seconds(60)
        let throttle = policy
        // Not a test of the login deadline: four password checks on one connection must not race it when
        // the parallel suite keeps the database busy.
        try await ServerTestHarness.withRunningServer(loginTimeout: .seconds(120), configure: {
            $0.trustedProxies = ["127.0.0.1"]
            $0.loginThrottle = throttle
        }, logger: logger) { _, port in
            let guesser = try await RawProtocolClient.connect(port: port)
            defer { Task { await guesser.close() } }
            try await guesser.send("PROXY TCP4 203.0.113.7 127.0.0.1 40000 7432\r\n")
            var throttled = false
            for id in 1...4 where !throttled {
                let answer = try await RawProtocolTests.hello(guesser, "nobody_\(ServerTestHarness.uniqueSuffix())", "guess", id: id)
                throttled = answer.code == "rate_limited"
            }
            #expect(throttled, "the guesser's address was throttled")

            // Another client behind the same balancer (v2 header) is not held back.
            let other = try await RawProtocolClient.connect(port: port)
            defer { Task { await other.close() } }
            try await other.channel.writeAndFlush(ByteBuffer(bytes: Self.proxyV2(source: [198, 51, 100, 9], port: 50000)))
            let welcome = try await RawProtocolTests.hello(other, user.name, "secret")
            #expect(welcome.ok == true, "\(welcome)")

            // The guesser's own address stays throttled, right password or not, on a new connection.
            let again = try await RawProtocolClient.connect(port: port)
            defer { Task { await again.close() } }
            try await again.send("PROXY TCP4 203.0.113.7 127.0.0.1 40001 7432\r\n" + #"{"id":1,"op":"hello","user":"\#(user.name)","password":"secret","protocol":1}"# + "\n")
            #expect(try RawResponse(try await again.readLine()).code == "rate_limited")
            #expect(capture.text.contains("peer=203.0.113.7 via 127.0.0.1"), "\(capture.text.prefix(2_000))")
            #expect(capture.text.contains("peer=198.51.100.9 via 127.0.0.1"))
        }
    }

    @Test("a trusted proxy's connection without a PROXY header is closed; an untrusted peer's PROXY line is only a malformed request")
    func proxyProtocolTrust() async throws {
        let user = try await ServerTestHarness.makeUser("proxytrust")
        try await ServerTestHarness.withRunningServer(configure: { $0.trustedProxies = ["127.0.0.0/8"] }) { _, port in
            let bare = try await RawProtocolClient.connect(port: port)
            defer { Task { await bare.close() } }
            try await bare.sendLine(#"{"id":1,"op":"hello","user":"\#(user.name)","password":"secret","protocol":1}"#)
            try await bare.expectClosed()
            // A LOCAL v2 header (a health check) keeps the socket's own address.
            let local = try await RawProtocolClient.connect(port: port)
            defer { Task { await local.close() } }
            try await local.channel.writeAndFlush(ByteBuffer(bytes: [0x0D, 0x0A, 0x0D, 0x0A, 0x00, 0x0D, 0x0A, 0x51, 0x55, 0x49, 0x54, 0x0A, 0x20, 0x00, 0, 0]))
            #expect(try await local.request(#"{"id":1,"op":"ping"}"#).ok == true)
        }
        try await ServerTestHarness.withRunningServer(configure: { $0.trustedProxies = ["192.0.2.1"] }) { _, port in
            let client = try await RawProtocolClient.connect(port: port)
            defer { Task { await client.close() } }
            let claimed = try await client.request("PROXY TCP4 203.0.113.7 127.0.0.1 40000 7432\r")
            #expect(claimed.ok == false && claimed.idIsNull, "\(claimed)")
            #expect(try await RawProtocolTests.hello(client, user.name, "secret", id: 2).ok == true)
        }
    }

    /// The `haproxy` program, when installed (`apt-get install haproxy`).
    static let haproxy: String? = ["/usr/sbin/haproxy", "/usr/local/sbin/haproxy", "/usr/bin/haproxy"]
        .first { FileManager.default.isExecutableFile(atPath: $0) }

    /// A free TCP port on 127.0.0.1 (bound and released).
    static func freePort() async throws -> Int {
        let channel = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton).bind(host: "127.0.0.1", port: 0).get()
        let port = channel.localAddress?.port ?? 0
        try await channel.close()
        return port
    }

    @Test("the real HAProxy in front (send-proxy and send-proxy-v2): the server sees the client's own address",
          .enabled(if: haproxy != nil, "haproxy is not installed"))
    func realHAProxy() async throws {
        let user = try await ServerTestHarness.makeUser("haproxy")
        let sink = MetadataLogSink()
        let logger = Logger(label: "pgmodel.capture") { _ in MetadataLogHandler(sink: sink) }
        try await ServerTestHarness.withRunningServer(configure: { $0.trustedProxies = ["127.0.0.1"] }, logger: logger) { _, port in
            let (v1, v2) = (try await Self.freePort(), try await Self.freePort())
            let directory = FileManager.default.temporaryDirectory.appendingPathComponent("pgmodel-haproxy-\(ServerTestHarness.uniqueSuffix())")
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(at: directory) }
            let config = directory.appendingPathComponent("haproxy.cfg")
            try """
                global
                  maxconn 64
                defaults
                  mode tcp
                  timeout connect 5s
                  timeout client 60s
                  timeout server 60s
                frontend v1
                  bind 127.0.0.1:\(v1)
                  default_backend pgmodel_v1
                backend pgmodel_v1
                  server s1 127.0.0.1:\(port) send-proxy
                frontend v2
                  bind 127.0.0.1:\(v2)
                  default_backend pgmodel_v2
                backend pgmodel_v2
                  server s2 127.0.0.1:\(port) send-proxy-v2

                """.write(to: config, atomically: true, encoding: .utf8)
            let process = Process()
            process.executableURL = URL(fileURLWithPath: try #require(Self.haproxy))
            process.arguments = ["-f", config.path, "-db"]
            process.standardOutput = FileHandle.nullDevice
            process.standardError = FileHandle.nullDevice
            try process.run()
            defer { process.terminate(); process.waitUntilExit() }
            for (frontend, source) in [(v1, "127.0.0.2"), (v2, "127.0.0.3")] {
                // HAProxy listens once it has read its configuration: retried until then, for at most 10 s.
                var client: RawProtocolClient?
                let deadline = ContinuousClock.now + .seconds(10)
                while client == nil {
                    do {
                        client = try await RawProtocolClient.connect(port: frontend, from: source)
                    } catch _ where ContinuousClock.now < deadline {
                        try await Task.sleep(for: .milliseconds(50))
                    }
                }
                let connected = try #require(client)
                defer { Task { await connected.close() } }
                #expect(try await RawProtocolTests.hello(connected, user.name, "secret").ok == true)
                #expect(sink.text.contains("peer=\(source) via 127.0.0.1"), "\(sink.text.suffix(2_000))")
            }
        }
    }

    @Test("LineServer refuses a malformed trusted-proxy entry")
    func proxyConfiguration() {
        var configuration = LineServerConfiguration(databaseURL: "postgres://a@127.0.0.1/c")
        configuration.trustedProxies = ["10.0.0.0/40"]
        #expect(throws: PGModelError.self) { try LineServer(configuration: configuration) }
    }

    // MARK: passwords

    @Test("passwords: new hashes have bcrypt cost 10 (PGMODEL_BCRYPT_COST in a test run); a cheaper hash is upgraded at the next right login, not at a wrong one")
    func bcryptCost() async throws {
        let user = try await ServerTestHarness.makeUser("bcrypt")
        @Sendable func hash() async throws -> String {
            try await ServerTestHarness.withDatabase { _, connection in
                let rows = try await connection.connection.query("SELECT password_hash FROM pgmodel.users WHERE name = \(user.name)", logger: ServerTestHarness.logger).collect()
                return try rows.first?.decode(String.self) ?? ""
            }
        }
        @Sendable func weaken() async throws {
            try await ServerTestHarness.withDatabase { _, connection in
                _ = try await connection.connection.query("UPDATE pgmodel.users SET password_hash = crypt('secret', gen_salt('bf', 4)) WHERE name = \(user.name)",
                                               logger: ServerTestHarness.logger).collect()
            }
        }
        let cost = String(format: "$2a$%02d$", PostgresStoreEngine.passwordHashCost)
        #expect(PostgresStoreEngine.passwordHashCost >= 6)
        #expect(try await hash().hasPrefix(cost))
        try await weaken()
        #expect(try await hash().hasPrefix("$2a$04$"))
        try await ServerTestHarness.withServer { port in
            let client = try await RawProtocolClient.connect(port: port)
            defer { Task { await client.close() } }
            #expect(try await RawProtocolTests.hello(client, user.name, "wrong", id: 1).code == "authentication_failed")
            #expect(try await hash().hasPrefix("$2a$04$"), "a wrong password changes nothing")
            #expect(try await RawProtocolTests.hello(client, user.name, "secret", id: 2).ok == true)
            #expect(try await hash().hasPrefix(cost), "upgraded at the right login")
            let next = try await RawProtocolClient.connect(port: port)
            defer { Task { await next.close() } }
            #expect(try await RawProtocolTests.hello(next, user.name, "secret").ok == true)
        }
    }

    @Test("statements that carry a password run with PostgreSQL's statement and parameter logging off, as far as the role may set it")
    func passwordsOutOfLogs() async throws {
        try await ServerTestHarness.withDatabase { engine, connection in
            let privileged = try await connection.connection.query("SELECT has_parameter_privilege('log_statement', 'SET')", logger: ServerTestHarness.logger)
                .collect().first?.decode(Bool.self) ?? false
            var quieted = 0
            let settings = try await engine.withQuietLogs(on: connection, quieted: { quieted = $0 }) {
                try await connection.connection.query(
                    "SELECT current_setting('log_statement'), current_setting('log_min_duration_statement'), current_setting('log_parameter_max_length_on_error')",
                    logger: ServerTestHarness.logger).collect().first?.decode((String, String, String).self)
            }
            #expect(settings?.2 == "0")
            if privileged {
                #expect(quieted == 6)
                #expect(settings?.0 == "none")
                #expect(settings?.1 == "-1")
            } else {
                #expect(quieted >= 1)
            }
            // Local to the transaction: the session's own settings are back afterwards.
            let after = try await connection.connection.query("SELECT current_setting('log_parameter_max_length_on_error')", logger: ServerTestHarness.logger)
                .collect().first?.decode(String.self)
            #expect(after != nil)
        }
    }
}

/// Log lines with their logger's metadata too (``LogCapture`` keeps only each event's own).
final class MetadataLogSink: Sendable {
    private let lines = NIOLockedValueBox<[String]>([])

    func append(_ line: String) { lines.withLockedValue { $0.append(line) } }

    var text: String { lines.withLockedValue { $0.joined(separator: "\n") } }
}

/// Writes every event, with the logger's and the event's metadata, to a ``MetadataLogSink``.
struct MetadataLogHandler: LogHandler {
    let sink: MetadataLogSink
    var metadata: Logger.Metadata = [:]
    var logLevel: Logger.Level = .trace

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        let all = metadata.merging(event.metadata ?? [:]) { $1 }
        let fields = all.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " ")
        sink.append("\(event.level) \(event.message) \(fields)")
    }
}
