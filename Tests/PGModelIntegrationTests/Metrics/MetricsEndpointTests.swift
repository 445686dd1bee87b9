import Foundation
import Logging
import Metrics
import NIOCore
import NIOPosix
@_spi(PGModelInternals) import PGModelClient
@_spi(PGModelInternals) import PGModelCore
@_spi(PGModelInternals) import PGModelIO
@_spi(PGModelInternals) import PGModelPostgres
@_spi(PGModelInternals) import PGModelServer
@_spi(PGModelInternals) import PGModelWire
import Prometheus
import Testing

/// `pgmodel serve --metrics-port`: real traffic through the service client moves the metrics by exactly
/// what it did; readiness answers from real components.
@Suite("Server: metrics and health endpoint")
struct MetricsEndpointTests {
    /// A server configuration whose metrics go to `registry` alone (no global bootstrap), served on a free port.
    static func metered(_ registry: PrometheusCollectorRegistry) -> (inout LineServerConfiguration) -> Void {
        { configuration in
            configuration.metricsFactory = PrometheusMetricsFactory.pgmodel(registry: registry)
            configuration.metricsEndpoint = MetricsEndpointConfiguration(port: 0, registry: registry)
        }
    }

    /// Scrapes until `condition` holds (metrics that move after the client has its answer, such as an
    /// event counted once written), or fails after `timeout`.
    static func scrape(port: Int, until condition: (PrometheusScrape) -> Bool, timeout: Duration = .seconds(15)) async throws -> PrometheusScrape {
        let deadline = ContinuousClock.now + timeout
        while true {
            let scrape = try await PrometheusScrape.read(port: port)
            if condition(scrape) { return scrape }
            guard ContinuousClock.now < deadline else { throw ScrapeFailure(description: "the metrics did not reach the expected values: \(scrape.samples)") }
            try await Task.sleep(for: .milliseconds(20))
        }
    }

    /// `/health/ready`'s answer once it is 200 (a server is not ready until its change listener listens,
    /// which it starts with the server), or the last answer after `timeout`.
    static func ready(port: Int, timeout: Duration = .seconds(15)) async throws -> MetricsEndpointClient.Answer {
        var client = MetricsEndpointClient(host: "127.0.0.1", port: port)
        // One answer may take long under the parallel suite (the readiness probe reads the database).
        client.timeout = timeout
        let deadline = ContinuousClock.now + timeout
        while true {
            let answer = try await client.get("/health/ready")
            if answer.status == 200 || ContinuousClock.now >= deadline { return answer }
            try await Task.sleep(for: .milliseconds(20))
        }
    }

    @Test("logins, fetches, saves, a save conflict and a subscriber's event move their metrics by exactly that much")
    func trafficMovesMetrics() async throws {
        let alice = try await ServerTestHarness.makeUser("metrics")
        let entity = ServerTestHarness.uniqueEntity("Metered")
        let registry = PrometheusCollectorRegistry()
        try await ServerTestHarness.withRunningServer(configure: Self.metered(registry)) { server, port in
            let metricsPort = try await server.metricsPort()
            try await ServerTestHarness.register(ServerRemoteStoreTests.schema(entity))
            // The server's change listener starts with the server; once it listens (the server is ready), a
            // new subscriber gets no `reconnected` event, which would absorb the save's below.
            _ = try await Self.ready(port: metricsPort)
            let watcher = try RemoteModelStore(url: try ServerRemoteStoreTests.url(alice, port: port))
            let signals = watcher.changeSignals()
            try await ServerHistoryTests.eventually("the watcher subscribing") { server.signalForwarderCount == 1 }
            let store = try RemoteModelStore(url: try ServerRemoteStoreTests.url(alice, port: port))
            try await store.prepare(ServerRemoteStoreTests.schema(entity))
            let before = try await PrometheusScrape.read(port: metricsPort)

            // One failed login, one that succeeds.
            let intruder = try RemoteModelStore(url: try ServerRemoteStoreTests.url(alice, port: port, password: "wrong"))
            await #expect(throws: PGModelError.self) { _ = try await intruder.connect() }
            await intruder.close()
            let second = try RemoteModelStore(url: try ServerRemoteStoreTests.url(alice, port: port))
            _ = try await second.connect()

            // One save, two fetches, one save refused as a conflict.
            let row = ServerRemoteStoreTests.row(entity, "m_\(ServerTestHarness.uniqueSuffix())", rank: 1)
            _ = try await store.save(SaveRequest(inserts: [row]))
            #expect(try await store.fetch(FetchRequest(entity: entity)).count == 1)
            #expect(try await store.fetch(FetchRequest(entity: entity)).count == 1)
            var stale = RowValues(entity: entity, id: row.id, values: ["rank": .int(2)])
            stale.ancestor = ["rank": .int(99)]   // not what is stored: someone else changed it since
            await #expect(throws: PGModelError.self) { _ = try await store.save(SaveRequest(updates: [stale])) }
            _ = try await ServerHistoryTests.firstSignal(signals) { $0.kind == .committed && $0.entities.contains(entity) }

            let events = ServerMetrics.eventsSent
            let after = try await Self.scrape(port: metricsPort) { $0[events] - before[events] >= 1 && $0[ServerMetrics.sessionsLoggedIn] == 3 }
            let delta = { (name: String, labels: [String: String]) in after[name, labels] - before[name, labels] }
            #expect(delta(ServerMetrics.loginsTotal, ["outcome": "ok"]) == 1)
            #expect(delta(ServerMetrics.loginsTotal, ["outcome": "authentication_failed"]) == 1)
            #expect(delta(ServerMetrics.requestsTotal, ["operation": "fetch", "outcome": "ok"]) == 2)
            #expect(delta(ServerMetrics.requestsTotal, ["operation": "save", "outcome": "ok"]) == 1)
            #expect(delta(ServerMetrics.requestsTotal, ["operation": "save", "outcome": "save_conflict"]) == 1)
            #expect(delta(ServerMetrics.requestDuration + "_count", ["operation": "fetch"]) == 2)
            #expect(delta(ServerMetrics.requestDuration + "_count", ["operation": "save"]) == 2)
            #expect(delta(ServerMetrics.conflictsTotal, ["kind": "save_conflict"]) == 1)
            #expect(delta(events, [:]) == 1, "one visible save: one event to the one subscriber")
            #expect(after[ServerMetrics.historyLag + "_count"] - before[ServerMetrics.historyLag + "_count"] == 1,
                    "the subscriber's one history read that found the save")
            #expect(after[ServerMetrics.sessionsLoggedIn] == 3, "the watcher, the store and the second login")
            #expect(after[ServerMetrics.heldSaveBytes] == 0)
            // The pool lent a connection for each request above (the failed login's check uses the login pool).
            #expect(delta(StoreMetrics.poolWait + "_count", ["pool": "data"]) >= 4)
            #expect(delta(StoreMetrics.poolWait + "_count", ["pool": "login"]) >= 2)
            #expect(after.has(StoreMetrics.poolConnections, ["pool": "data"]))

            await second.close()
            await store.close()
            await watcher.close()
            let closed = try await Self.scrape(port: metricsPort) { $0[ServerMetrics.connectionsOpen] == 0 }
            #expect(closed[ServerMetrics.sessionsLoggedIn] == 0)
        }
    }

    @Test("a running server is live and ready, with its version; unknown paths are 404 and other methods 405")
    func readyWithDatabase() async throws {
        let registry = PrometheusCollectorRegistry()
        try await ServerTestHarness.withRunningServer(configure: Self.metered(registry)) { server, _ in
            let client = MetricsEndpointClient(host: "127.0.0.1", port: try await server.metricsPort())
            let live = try await client.get("/health/live")
            #expect(live.status == 200)
            let ready = try await Self.ready(port: try await server.metricsPort())
            #expect(ready.status == 200, "\(ready.text)")
            let report = try JSONDecoder().decode(HealthReport.self, from: Data(ready.body))
            #expect(report.version == WireProtocol.serverName)
            #expect(report.checks.map(\.name) == ["database", "schema", "listener"])
            #expect(report.checks.allSatisfy { $0.ok })
            #expect(try await client.get("/nothing").status == 404)
            let metrics = try await client.get("/metrics")
            #expect(metrics.status == 200)
            #expect(metrics.text.contains(StoreMetrics.poolWait))
        }
    }

    @Test("readiness is 503 with the database unreachable (a gateway pointed at a closed port), with that check failing")
    func notReadyWithoutDatabase() async throws {
        // A port that was free a moment ago and is closed now: connecting is refused.
        let probe = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton).bind(host: "127.0.0.1", port: 0).get()
        let closedPort = probe.localAddress?.port ?? 9
        try await probe.close().get()
        var configuration = try PostgresStoreConfiguration.parse("postgres://nobody:nothing@127.0.0.1:\(closedPort)/none")
        configuration.metricsFactory = NOOPMetricsHandler.instance
        let gateway = DatabaseGateway(configuration: configuration, maximumConnections: 1, requestTimeout: .seconds(2),
                                      eventLoopGroup: MultiThreadedEventLoopGroup.singleton, logger: ServerTestHarness.logger)
        let readiness = ServerReadiness()
        readiness.schemaLoaded()
        let readinessProbe = ReadinessProbe(gateway: gateway, readiness: readiness, timeout: .seconds(2), logger: ServerTestHarness.logger)
        let router = MetricsHTTPRouter(version: WireProtocol.serverName, scrape: { [] }, ready: { await readinessProbe.report() })
        let server = MetricsHTTPServer(host: "127.0.0.1", port: 0, router: router, logger: ServerTestHarness.logger)
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try await server.run() }
            let client = MetricsEndpointClient(host: "127.0.0.1", port: try await server.listeningPort())
            let ready = try await client.get("/health/ready")
            #expect(ready.status == 503)
            let report = try JSONDecoder().decode(HealthReport.self, from: Data(ready.body))
            #expect(report.status == "not_ready")
            #expect(report.checks.first { $0.name == "database" } == HealthReport.Check(name: "database", ok: false, detail: "unreachable"))
            #expect(report.checks.first { $0.name == "schema" }?.ok == true)
            #expect(try await client.get("/health/live").status == 200, "the process still runs")
            group.cancelAll()
        }
        await gateway.close()
    }

    @Test("pgmodel status --server http://… shows readiness and version, --json too; not ready exits 1")
    func statusCommand() async throws {
        let registry = PrometheusCollectorRegistry()
        try await ServerTestHarness.withRunningServer(configure: Self.metered(registry)) { server, _ in
            let url = "http://127.0.0.1:\(try await server.metricsPort())"
            _ = try await Self.ready(port: try await server.metricsPort())
            // Each run asks anew, and the probe's database check has 2 s: under the parallel suite one may
            // miss it, which is the probe doing its job. Each form is asked until it reports ready (15 s).
            func status(_ arguments: [String]) async throws -> (status: Int32, output: String, error: String) {
                let deadline = ContinuousClock.now + .seconds(15)
                while true {
                    let run = try await ShareCommandTests.run(["status", "--server", url] + arguments,
                                                              removingEnvironment: ["DATABASE_URL", "PGMODEL_TEST_DATABASE_URL"])
                    if run.status == 0 || ContinuousClock.now >= deadline { return (run.status, run.output, run.error) }
                    try await Task.sleep(for: .milliseconds(100))
                }
            }
            let text = try await status([])
            #expect(text.status == 0, "\(text.error)")
            #expect(text.output.contains("server: \(WireProtocol.serverName)"))
            #expect(text.output.contains("ready"))
            #expect(text.output.contains("database: ok"))
            let json = try await status(["--json"])
            #expect(json.status == 0, "\(json.error)")
            let report = try JSONDecoder().decode(HealthReport.self, from: Data(json.output.utf8))
            #expect(report.isReady && report.version == WireProtocol.serverName)
        }
        // Not ready: a readiness endpoint over an unreachable database.
        let probe = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton).bind(host: "127.0.0.1", port: 0).get()
        let closedPort = probe.localAddress?.port ?? 9
        try await probe.close().get()
        var configuration = try PostgresStoreConfiguration.parse("postgres://nobody:nothing@127.0.0.1:\(closedPort)/none")
        configuration.metricsFactory = NOOPMetricsHandler.instance
        let gateway = DatabaseGateway(configuration: configuration, maximumConnections: 1, requestTimeout: .seconds(2),
                                      eventLoopGroup: MultiThreadedEventLoopGroup.singleton, logger: ServerTestHarness.logger)
        let readinessProbe = ReadinessProbe(gateway: gateway, readiness: ServerReadiness(), timeout: .seconds(2), logger: ServerTestHarness.logger)
        let router = MetricsHTTPRouter(version: WireProtocol.serverName, scrape: { [] }, ready: { await readinessProbe.report() })
        let server = MetricsHTTPServer(host: "127.0.0.1", port: 0, router: router, logger: ServerTestHarness.logger)
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try await server.run() }
            let url = "http://127.0.0.1:\(try await server.listeningPort())"
            let result = try await ShareCommandTests.run(["status", "--server", url, "--json"])
            #expect(result.status == 1)
            let report = try JSONDecoder().decode(HealthReport.self, from: Data(result.output.utf8))
            #expect(!report.isReady)
            group.cancelAll()
        }
        await gateway.close()
        // Nothing listening: a coded error, exit non-zero.
        let refused = try await ShareCommandTests.run(["status", "--server", "http://127.0.0.1:\(closedPort)"])
        #expect(refused.status != 0)
        #expect(refused.error.contains("[connection_failed]"), "\(refused.error)")
    }

    @Test("the direct store counts its calls by operation and outcome, times them, and counts conflicts")
    func directStoreMetrics() async throws {
        let registry = PrometheusCollectorRegistry()
        var configuration = try PostgresStoreConfiguration.parse(try TestDatabase.url())
        configuration.metricsFactory = PrometheusMetricsFactory.pgmodel(registry: registry)
        let entity = ServerTestHarness.uniqueEntity("Direct")
        let store = PostgresModelStore(configuration: configuration, eventLoop: MultiThreadedEventLoopGroup.singleton.next())
        do {
            try await store.prepare(ServerRemoteStoreTests.schema(entity))
            let row = ServerRemoteStoreTests.row(entity, "d_\(ServerTestHarness.uniqueSuffix())", rank: 1)
            _ = try await store.save(SaveRequest(inserts: [row]))
            _ = try await store.fetch(FetchRequest(entity: entity))
            var stale = RowValues(entity: entity, id: row.id, values: ["rank": .int(2)])
            stale.ancestor = ["rank": .int(99)]
            await #expect(throws: PGModelError.self) { _ = try await store.save(SaveRequest(updates: [stale])) }
        } catch {
            await store.close()
            throw error
        }
        await store.close()
        var bytes: [UInt8] = []
        registry.emit(into: &bytes)
        let scrape = PrometheusScrape(text: String(decoding: bytes, as: UTF8.self))
        #expect(scrape[StoreMetrics.callsTotal, ["operation": "prepare", "outcome": "ok"]] == 1)
        #expect(scrape[StoreMetrics.callsTotal, ["operation": "save", "outcome": "ok"]] == 1)
        #expect(scrape[StoreMetrics.callsTotal, ["operation": "fetch", "outcome": "ok"]] == 1)
        #expect(scrape[StoreMetrics.callsTotal, ["operation": "save", "outcome": "save_conflict"]] == 1)
        #expect(scrape[StoreMetrics.callDuration + "_count", ["operation": "save"]] == 2)
        #expect(scrape[StoreMetrics.conflictsTotal, ["kind": "save_conflict"]] == 1)
        #expect(scrape[StoreMetrics.poolWait + "_count", ["pool": "data"]] >= 4)
        #expect(scrape[StoreMetrics.poolConnectionsInUse, ["pool": "data"]] == 0, "every connection back in the pool")
    }
}
