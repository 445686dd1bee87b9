import Foundation
import Logging
import NIOCore
import NIOPosix
import NIOConcurrencyHelpers
@_spi(PGModelInternals) import PGModelClient
@_spi(PGModelInternals) import PGModelCore
@_spi(PGModelInternals) import PGModelPostgres
@_spi(PGModelInternals) import PGModelServer
@_spi(PGModelInternals) import PGModelWire
import PostgresNIO
import Prometheus
import Testing

/// Logins beyond what the server checks in time are answered `server_busy` at once, held against
/// nobody, and retried by the client: a crowd connecting together all gets in.
@Suite("Server: login admission")
struct LoginAdmissionTests {
    /// Runs `body` in a database of its own (a scratch database, so the lock below holds up nothing of
    /// the other tests) with two users, the first of whom has a login that stops until released, holding
    /// its place among the logins: the user's hash is cheaper (bcrypt cost 4, a literal) than the store's,
    /// so a successful login raises it, and that `UPDATE` waits for the lock this holds on the user's row.
    /// `waitForHeld` returns once the login waits there; `release` lets it go on (else the lock goes when
    /// `body` returns).
    static func withHeldLogin(_ body: (_ databaseURL: String, _ held: AuthenticatedUser, _ other: AuthenticatedUser,
                                       _ waitForHeld: @escaping @Sendable () async throws -> Void,
                                       _ release: @escaping @Sendable () async throws -> Void) async throws -> Void) async throws {
        try await ScratchDatabase.with(label: "pgmodel.test.login-admission") { holder, logger in
            let database = try #require(try await holder.query("SELECT current_database()", logger: logger).collect().first?.decode(String.self))
            var url = try #require(URLComponents(string: try ServerTestHarness.databaseURL()))
            url.path = "/" + database
            let databaseURL = try #require(url.string)
            let engine = PostgresStoreEngine(schemaName: "public", logger: logger)
            try await engine.bootstrap(on: EngineConnection(holder))
            let held = try await engine.createUser(name: "held", password: "secret", isAdmin: false, on: EngineConnection(holder))
            let other = try await engine.createUser(name: "other", password: "secret", isAdmin: false, on: EngineConnection(holder))
            _ = try await holder.query("UPDATE pgmodel.users SET password_hash = '$2a$04$FUCO5qYawxF0UchTkp56FeD4SdxPuvouJBRB1IrbVHqVDyYSi8S2q' WHERE id = \(held.id)",
                                       logger: logger).collect()
            _ = try await holder.query("BEGIN", logger: logger).collect()
            _ = try await holder.query("SELECT 1 FROM pgmodel.users WHERE id = \(held.id) FOR UPDATE", logger: logger).collect()
            let waitForHeld: @Sendable () async throws -> Void = {
                let deadline = ContinuousClock.now + .seconds(60)
                while ContinuousClock.now < deadline {
                    // Inside the holder's transaction the activity view keeps its first snapshot: clear it.
                    _ = try await holder.query("SELECT pg_stat_clear_snapshot()", logger: logger).collect()
                    let waiting = try await holder.query("""
                        SELECT count(*)::int FROM pg_stat_activity WHERE datname = current_database()
                        AND wait_event_type = 'Lock' AND query LIKE 'UPDATE pgmodel.users SET password_hash = crypt(%'
                        """, logger: logger).collect().first?.decode(Int.self) ?? 0
                    if waiting > 0 { return }
                    try await Task.sleep(for: .milliseconds(20))
                }
                Issue.record("the held login never waited for the row lock")
            }
            let released = NIOLockedValueBox(false)
            let release: @Sendable () async throws -> Void = {
                guard released.withLockedValue({ done in defer { done = true }; return !done }) else { return }
                _ = try await holder.query("COMMIT", logger: logger).collect()
            }
            do {
                try await body(databaseURL, held, other, waitForHeld, release)
                try await release()
            } catch {
                try? await release()
                throw error
            }
        }
    }

    @Test("a hello past the pending-login limit is answered server_busy at once, counts against nobody, restarts the login clock, and the same connection logs in later")
    func busyAnswer() async throws {
        try await Self.withHeldLogin { databaseURL, held, user, waitForHeld, release in
            var configuration = LineServerConfiguration(databaseURL: databaseURL, host: "127.0.0.1", port: 0, schemaName: nil, maxDatabaseConnections: 2)
            configuration.loginTimeout = .seconds(2)
            configuration.maxPendingLogins = 1
            configuration.maxLoginConnections = 1
            configuration.maxFailedAuthentications = 3
            try await ServerTestHarness.withServer(configuration: configuration) { _, port in
                let first = try await RawProtocolClient.connect(port: port)
                defer { Task { await first.close() } }
                try await first.sendLine(#"{"id":1,"op":"hello","user":"\#(held.name)","password":"secret","protocol":1}"#)
                try await waitForHeld()
                // Connected once the held login waits: its login clock starts now.
                let client = try await RawProtocolClient.connect(port: port)
                defer { Task { await client.close() } }
                let opened = ContinuousClock.now
                // More busy answers than the connection's failed-login limit, over longer than the login
                // timeout, a hello every half second (a client's retries): none counts, none closes.
                for attempt in 1...6 {
                    let busy = try await RawProtocolTests.hello(client, user.name, "secret", id: attempt)
                    #expect(busy.code == "server_busy", "\(busy.text)")
                    #expect(busy.idNumber == attempt)
                    if attempt < 6 { try await Task.sleep(for: .milliseconds(500)) }
                }
                #expect(ContinuousClock.now - opened > .seconds(2), "the connection outlived the login timeout while it was told to wait")
                // The held login goes on once the lock is gone, and its place is free again.
                try await release()
                let heldAnswer = try RawResponse(try await first.readLine(timeout: .seconds(60)))
                #expect(heldAnswer.ok == true, "\(heldAnswer.text)")
                #expect(try await RawProtocolTests.hello(client, user.name, "secret", id: 7).ok == true)
            }
        }
    }

    @Test("a hundred clients logging in at once through one login connection all get in; some were told server_busy and retried")
    func crowdLogsIn() async throws {
        let users = try await withThrowingTaskGroup(of: AuthenticatedUser.self) { group in
            for _ in 0..<4 { group.addTask { try await ServerTestHarness.makeUser("crowd") } }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        let registry = PrometheusCollectorRegistry()
        try await ServerTestHarness.withRunningServer(configure: { configuration in
            MetricsEndpointTests.metered(registry)(&configuration)
            configuration.maxPendingLogins = 2
            configuration.maxLoginConnections = 1
        }) { server, port in
            let metricsPort = try await server.metricsPort()
            let clients = 100
            let loggedIn = try await withThrowingTaskGroup(of: Bool.self) { group in
                for index in 0..<clients {
                    let user = users[index % users.count]
                    group.addTask {
                        // Patient clients: under the parallel suite a hundred password checks in turn take a while.
                        let store = try RemoteModelStore(url: try ServerRemoteStoreTests.url(user, port: port), requestTimeout: .seconds(300))
                        defer { Task { await store.close() } }
                        let hello = try await store.connect()
                        return hello.user == user.name
                    }
                }
                return try await group.reduce(0) { $0 + ($1 ? 1 : 0) }
            }
            #expect(loggedIn == clients)
            let scrape = try await PrometheusScrape.read(port: metricsPort)
            #expect(scrape[ServerMetrics.loginsTotal, ["outcome": "ok"]] == Double(clients))
            #expect(scrape[ServerMetrics.loginsTotal, ["outcome": "server_busy"]] > 0, "the crowd met the limit")
        }
    }
}
