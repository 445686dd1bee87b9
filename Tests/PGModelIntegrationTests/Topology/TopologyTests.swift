import Foundation
import PGModelTesting
@_spi(PGModelInternals) import PGModel
@_spi(PGModelInternals) import PGModelClient
@_spi(PGModelInternals) import PGModelCore
@_spi(PGModelInternals) import PGModelPostgres
@_spi(PGModelInternals) import PGModelServer
import Testing

/// The system `scripts/topology.sh` starts (what docker-compose.yml runs): HAProxy in front of two
/// `pgmodel serve` instances, both behind a real PgBouncer in transaction mode, started for one test and
/// stopped after it.
struct Topology {
    /// HAProxy's port: what clients connect to.
    let port: Int
    /// The instances' own ports and their metrics endpoints' ports.
    let instancePorts: [Int]
    let metricsPorts: [Int]
    let directory: String

    static let executable = RepositoryScript.repository.appendingPathComponent(".build/debug/pgmodel").path

    /// HAProxy, PgBouncer, the built `pgmodel` and a test database are all there.
    static var isAvailable: Bool {
        let installed = { (name: String) in
            ["/usr/sbin/", "/usr/bin/", "/usr/local/bin/", "/usr/local/sbin/"].contains { FileManager.default.isExecutableFile(atPath: $0 + name) }
        }
        return installed("haproxy") && installed("pgbouncer") && FileManager.default.isExecutableFile(atPath: executable)
            && ProcessInfo.processInfo.environment["PGMODEL_TEST_DATABASE_URL"]?.isEmpty == false
    }

    /// Whether the topology gets a standby: scripts/standby.sh copies the test database's cluster over its
    /// unix socket, which a database elsewhere (`PGMODEL_TOPOLOGY_STANDBY_PORT=0`, as test.sh sets for one)
    /// does not offer.
    static var hasStandby: Bool {
        Standby.isAvailable && ProcessInfo.processInfo.environment["PGMODEL_TOPOLOGY_STANDBY_PORT"] != "0"
    }

    /// Runs `body` with the topology in front of the test database.
    static func with<T: Sendable>(_ body: (Topology) async throws -> T) async throws -> T {
        let topology = try await start()
        do {
            let result = try await body(topology)
            _ = try? await offCooperativePool { try run(["stop", topology.directory], environment: [:]) }
            return result
        } catch {
            _ = try? await offCooperativePool { try run(["stop", topology.directory], environment: [:]) }
            throw error
        }
    }

    /// Starts the topology on ports free a moment ago. Another program (a test's PgBouncer) may take one
    /// of them before the script binds it: then whatever had started is stopped and other ports are tried.
    static func start() async throws -> Topology {
        var lastError: (any Error)?
        for _ in 0..<5 {
            let suffix = ServerTestHarness.uniqueSuffix()
            let directory = "/tmp/pgt-\(suffix.prefix(12))"
            let base = try await freeBase()
            let environment = [
                "DATABASE_URL": try TestDatabase.url(), "PGMODEL_BIN": executable, "PGMODEL_TOPOLOGY_PORT": String(base),
                "PGMODEL_TOPOLOGY_POOL_SIZE": "3", "PGMODEL_TOPOLOGY_STANDBY_PORT": hasStandby ? String(base + 20) : "0",
            ]
            do {
                _ = try await offCooperativePool { try run(["start", directory], environment: environment) }
                return Topology(port: base, instancePorts: [base + 1, base + 2], metricsPorts: [base + 11, base + 12], directory: directory)
            } catch {
                lastError = error
                _ = try? await offCooperativePool { try run(["stop", directory], environment: [:]) }
            }
        }
        throw lastError ?? PGModelError(.internalError, "scripts/topology.sh did not start")
    }

    /// A base port whose neighbours the script takes are free now (a race with another program is
    /// caught by the script, which refuses busy ports).
    static func freeBase() async throws -> Int {
        for _ in 0..<50 {
            let base = Int.random(in: 20_000..<40_000)
            if [0, 1, 2, 11, 12, 20].allSatisfy({ !isListening(base + $0) }) { return base }
        }
        throw PGModelError(.internalError, "no free ports for the topology")
    }

    static func isListening(_ port: Int) -> Bool {
        let socket = Foundation.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard socket >= 0 else { return true }
        defer { close(socket) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(socket, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0 }
        }
    }

    /// `scripts/topology.sh arguments…` with `environment` added to this process's; its output, trimmed.
    @discardableResult
    static func run(_ arguments: [String], environment: [String: String]) throws -> String {
        try RepositoryScript.run("topology.sh", arguments, environment: environment)
    }

    /// The body of `http://127.0.0.1:port/path`.
    static func get(_ path: String, port: Int) async throws -> String {
        var client = MetricsEndpointClient(host: "127.0.0.1", port: port)
        client.timeout = .seconds(15)
        return try await client.get(path).text
    }

    /// The value of an unlabelled sample in a Prometheus text page.
    static func sample(_ name: String, in page: String) -> Double? {
        page.split(separator: "\n").first { $0.hasPrefix(name + " ") }.flatMap { Double($0.split(separator: " ").last ?? "") }
    }
}

/// The scaled-out system end to end: clients reach two instances through HAProxy (which tells them the
/// clients' addresses with the PROXY protocol), every request's transaction goes through PgBouncer in
/// transaction mode, reads go to a streaming standby once it has replayed the caller's last save, and each
/// instance LISTENs on PostgreSQL itself, so a save through one instance is announced to subscribers of the
/// other.
@Suite("Topology: HAProxy, two instances, PgBouncer and a standby, from scripts/topology.sh",
       .enabled(if: Topology.isAvailable, "needs haproxy, pgbouncer, .build/debug/pgmodel and PGMODEL_TEST_DATABASE_URL"))
struct TopologyTests {
    @Test("through HAProxy: connections spread over both instances, each user sees only their rows, and a save through one instance is announced on the other")
    func endToEnd() async throws {
        let entity = ServerTestHarness.uniqueEntity("Topo")
        let schema = ServerRemoteStoreTests.schema(entity)
        try await ServerTestHarness.register(schema)
        let alice = try await ServerTestHarness.makeUser("topo")
        let bob = try await ServerTestHarness.makeUser("topo")
        try await Topology.with { topology in
            // Both instances ready, as HAProxy's health check asks.
            for port in topology.metricsPorts {
                #expect(try await Topology.get("/health/ready", port: port).contains("\"status\":\"ready\""))
            }
            // A watcher on each instance directly, then saves through the load balancer.
            var watchers: [RemoteModelStore] = []
            var streams: [AsyncStream<ChangeSignal>] = []
            for port in topology.instancePorts {
                let watcher = try RemoteModelStore(url: try ServerRemoteStoreTests.url(alice, port: port))
                try await watcher.prepare(schema)
                streams.append(watcher.changeSignals())
                watchers.append(watcher)
            }
            var clients: [(AuthenticatedUser, RemoteModelStore)] = []
            for index in 0..<6 {
                let user = index.isMultiple(of: 2) ? alice : bob
                let store = try RemoteModelStore(url: try ServerRemoteStoreTests.url(user, port: topology.port))
                try await store.prepare(schema)
                clients.append((user, store))
            }
            // leastconn put the six open connections on both instances.
            for port in topology.metricsPorts {
                let page = try await Topology.get("/metrics", port: port)
                #expect((Topology.sample("pgmodel_sessions_logged_in", in: page) ?? 0) >= 3, "\(port): \(page.prefix(200))")
            }
            var saved: [String: [String]] = [:]
            for (index, (user, store)) in clients.enumerated() {
                let code = "\(user.name)-\(index)"
                _ = try await store.save(SaveRequest(inserts: [ServerRemoteStoreTests.row(entity, code, rank: Int64(index))], author: "topology"))
                saved[user.name, default: []].append(code)
            }
            // Every client reads exactly its user's rows, whichever instance and pooled connection served it.
            for (user, store) in clients {
                let codes = try await store.fetch(FetchRequest(entity: entity)).compactMap {
                    if case .string(let code) = $0.values["code"] { code } else { nil }
                }
                #expect(codes.sorted() == (saved[user.name] ?? []).sorted(), "\(user.name)")
            }
            // Alice's watchers on both instances heard of her saves, made through either instance.
            for stream in streams {
                _ = try await ServerHistoryTests.firstSignal(stream) { $0.kind == .committed && ($0.entities.isEmpty || $0.entities.contains(entity)) }
            }
            // With the standby, reads went there once it had replayed each client's last save.
            if Topology.hasStandby {
                var onStandby = 0.0
                for port in topology.metricsPorts {
                    let page = try await Topology.get("/metrics", port: port)
                    onStandby += Topology.sample("pgmodel_replica_reads_total{served_by=\"replica\"}", in: page) ?? 0
                }
                #expect(onStandby > 0, "no read was served by the standby")
            }
            for (_, store) in clients { await store.close() }
            for watcher in watchers { await watcher.close() }
        }
    }
}
