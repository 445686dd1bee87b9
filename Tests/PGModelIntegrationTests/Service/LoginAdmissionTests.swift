import Foundation
import Logging
import NIOCore
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
    /// A user whose password check takes seconds: their password (`secret`) is hashed at a bcrypt cost
    /// far above the default (a literal hash, so the test spends no time making it), so that their
    /// `hello` holds its place in the login queue long enough to observe.
    static func makeSlowUser(cost: Int) async throws -> AuthenticatedUser {
        let hashes = [14: "$2a$14$pW5XGu7.YWWNzErRSwE1s.jNcsaUvef8Prw/hiAd8ihqA.K5cWsKG",
                      15: "$2a$15$KYXgXIk6bz.Oih5StJdRFO9LmsIafILlpBGj7eRyPfVZ/TDd8ywpm"]
        let hash = try #require(hashes[cost])
        let user = try await ServerTestHarness.makeUser("slow")
        try await ServerTestHarness.withDatabase { _, connection in
            _ = try await connection.connection.query(
                "UPDATE pgmodel.users SET password_hash = \(hash) WHERE id = \(user.id)", logger: ServerTestHarness.logger).collect()
        }
        return user
    }

    /// Waits until PostgreSQL has been checking a password for longer than any ordinary check takes:
    /// the slow user's `hello` holds its place.
    static func waitForSlowCheck() async throws {
        let deadline = ContinuousClock.now + .seconds(60)
        while ContinuousClock.now < deadline {
            let running = try await ServerTestHarness.withDatabase { _, connection in
                try await connection.connection.query("""
                    SELECT count(*)::int FROM pg_stat_activity
                    WHERE state = 'active' AND query LIKE '%crypt($2, coalesce(u.password_hash%' AND now() - query_start > interval '300 ms'
                    """, logger: ServerTestHarness.logger).collect().first?.decode(Int.self) ?? 0
            }
            if running > 0 { return }
            try await Task.sleep(for: .milliseconds(20))
        }
        Issue.record("the slow password check never showed in pg_stat_activity")
    }

    @Test("a hello past the pending-login limit is answered server_busy at once, counts against nobody, restarts the login clock, and the same connection logs in later")
    func busyAnswer() async throws {
        let slow = try await Self.makeSlowUser(cost: 15)
        let user = try await ServerTestHarness.makeUser("busy")
        try await ServerTestHarness.withRunningServer(requestTimeout: .seconds(120), loginTimeout: .seconds(1), configure: { configuration in
            configuration.maxPendingLogins = 1
            configuration.maxLoginConnections = 1
            configuration.maxFailedAuthentications = 3
        }) { _, port in
            let first = try await RawProtocolClient.connect(port: port)
            defer { Task { await first.close() } }
            try await first.sendLine(#"{"id":1,"op":"hello","user":"\#(slow.name)","password":"secret","protocol":1}"#)
            try await Self.waitForSlowCheck()
            let second = try await RawProtocolClient.connect(port: port)
            defer { Task { await second.close() } }
            let opened = ContinuousClock.now
            // Busy answers, more than the connection's failed-login limit and for longer than the login
            // timeout, a hello every quarter second (a client's retries): none counts, none closes.
            var busyAnswers = 0
            var attempt = 0
            while true {
                attempt += 1
                let answer = try await RawProtocolTests.hello(second, user.name, "secret", id: attempt)
                #expect(answer.idNumber == attempt)
                if answer.ok == true { break }
                #expect(answer.code == "server_busy", "\(answer.text)")
                guard answer.code == "server_busy", attempt < 600 else { return }
                busyAnswers += 1
                try await Task.sleep(for: .milliseconds(250))
            }
            #expect(busyAnswers > 3)
            #expect(ContinuousClock.now - opened > .seconds(1), "the connection outlived the login timeout while it was told to wait")
            let slowAnswer = try RawResponse(try await first.readLine(timeout: .seconds(120)))
            #expect(slowAnswer.ok == true, "\(slowAnswer.text)")
        }
    }

    @Test("a hello waiting for a login connection stops waiting at its timeoutMs: timeout, long before the server's own deadline")
    func helloWaitsOnlyAsLongAsItsClient() async throws {
        let slow = try await Self.makeSlowUser(cost: 14)
        let user = try await ServerTestHarness.makeUser("patient")
        // The second connection waits for the slow check to end before its last hello: a login timeout
        // longer than that keeps it open.
        try await ServerTestHarness.withRunningServer(requestTimeout: .seconds(120), loginTimeout: .seconds(300), configure: { configuration in
            configuration.maxLoginConnections = 1
        }) { _, port in
            let first = try await RawProtocolClient.connect(port: port)
            let second = try await RawProtocolClient.connect(port: port)
            defer { Task { await first.close(); await second.close() } }
            try await first.sendLine(#"{"id":1,"op":"hello","user":"\#(slow.name)","password":"secret","protocol":1}"#)
            try await Self.waitForSlowCheck()
            let sent = ContinuousClock.now
            let answer = try await second.request(#"{"id":2,"op":"hello","user":"\#(user.name)","password":"secret","protocol":1,"timeoutMs":300}"#)
            #expect(answer.code == "timeout", "\(answer.text)")
            #expect(ContinuousClock.now - sent < .seconds(30), "it waited its client's 300 ms, not the server's 120 s")
            #expect(try RawResponse(try await first.readLine(timeout: .seconds(120))).ok == true)
            #expect(try await RawProtocolTests.hello(second, user.name, "secret", id: 3).ok == true)
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
