import Foundation
import Logging
import NIOPosix
@_spi(PGModelInternals) import PGModel
@_spi(PGModelInternals) import PGModelClient
@_spi(PGModelInternals) import PGModelCore
@_spi(PGModelInternals) @testable import PGModelPostgres
@_spi(PGModelInternals) import PGModelServer
@_spi(PGModelInternals) import PGModelSQL
import PGModelTesting
import PostgresNIO
import Testing

/// A real PgBouncer in transaction mode, started by `scripts/pgbouncer.sh` for one test and stopped after it.
struct PgBouncer {
    /// The URL through PgBouncer (`?pgmodel_pooling=transaction`).
    let url: String
    /// Its directory under /tmp (configuration, pid file, unix socket).
    let directory: String

    /// `pgbouncer` is installed, and the test database is a plain `postgres://` URL the script can put it in front of.
    static var isAvailable: Bool {
        let installed = ["/usr/sbin/pgbouncer", "/usr/bin/pgbouncer", "/usr/local/bin/pgbouncer"].contains {
            FileManager.default.isExecutableFile(atPath: $0)
        }
        return installed && ProcessInfo.processInfo.environment["PGMODEL_TEST_DATABASE_URL"]?.isEmpty == false
    }

    /// Runs `body` with a PgBouncer of at most `poolSize` server connections in front of the test database.
    static func with<T: Sendable>(poolSize: Int = 3, _ body: (PgBouncer) async throws -> T) async throws -> T {
        let directory = "/tmp/pgb-\(ServerTestHarness.uniqueSuffix())"
        let upstream = try TestDatabase.url()
        // The script blocks its thread while PgBouncer starts: off Swift's cooperative pool.
        let url = try await offCooperativePool { try run(["start", directory, upstream, String(poolSize)]) }
        let bouncer = PgBouncer(url: url, directory: directory)
        do {
            let result = try await body(bouncer)
            _ = try? await offCooperativePool { try run(["stop", directory]) }
            return result
        } catch {
            _ = try? await offCooperativePool { try run(["stop", directory]) }
            throw error
        }
    }

    /// `scripts/pgbouncer.sh arguments…`; its standard output, trimmed.
    @discardableResult
    static func run(_ arguments: [String]) throws -> String {
        try RepositoryScript.run("pgbouncer.sh", arguments)
    }

    /// Points a service at this PgBouncer, with LISTEN and migrations on the test database directly.
    func configure(_ configuration: inout LineServerConfiguration) {
        configuration.directDatabaseURL = configuration.databaseURL
        configuration.databaseURL = url
    }
}

/// `pgmodel serve` behind PgBouncer in transaction mode: a user's identity lives in each transaction, never
/// in a server connection's session, so many users' requests interleaved on two or three server
/// connections each see exactly what they would on a direct connection.
@Suite("Pooling: the service behind PgBouncer in transaction mode", .enabled(if: PgBouncer.isAvailable, "needs pgbouncer and PGMODEL_TEST_DATABASE_URL"))
struct PgBouncerPoolingTests {
    static let logger: Logger = {
        var logger = Logger(label: "pgmodel.test.pooling")
        logger.logLevel = .warning
        return logger
    }()

    @Test("the permission matrix behind PgBouncer: every operation allowed or refused as on a direct connection",
          arguments: SharingTests.Role.allCases)
    func permissionMatrix(role: SharingTests.Role) async throws {
        try await PgBouncer.with(poolSize: 3) { bouncer in
            try await SharingTests.checkPermissionMatrix(role: role) { bouncer.configure(&$0) }
        }
    }

    @Test("the URL option and the direct endpoint: transaction mode, no session scope vouched, fetches unnamed")
    func configuration() async throws {
        let direct = try TestDatabase.url()
        var pooled = try PostgresStoreConfiguration.parse(direct + (direct.contains("?") ? "&" : "?") + "pgmodel_pooling=transaction")
        #expect(pooled.pooling == .transaction)
        #expect(try PostgresStoreConfiguration.parse(direct).pooling == .session)
        #expect(throws: PGModelError.self) { try PostgresStoreConfiguration.parse(direct + (direct.contains("?") ? "&" : "?") + "pgmodel_pooling=statement") }
        // The direct endpoint may not be a transaction-mode pooler itself.
        #expect(throws: PGModelError.self) { try pooled.setSessionConfiguration(pooled) }
        try pooled.setSessionConfiguration(PostgresStoreConfiguration.parse(direct))
        #expect(pooled.sessionConfiguration.pooling == .session)
    }

    /// Who a transaction runs as, read inside it.
    struct Identity: Equatable {
        var role: String
        var userID: String?
        var backend: Int32
    }

    @Test("many users' requests interleaved on two server connections: each runs as its own user, trusted work as the login role")
    func noIdentityLeaks() async throws {
        try await PgBouncer.with(poolSize: 2) { bouncer in
            var configuration = try PostgresStoreConfiguration.parse(bouncer.url)
            configuration.schemaName = TestDatabase.uniqueSchema("pool")
            let note = EntityDescription(name: "Note", attributes: [AttributeDescription(name: "title", type: .string)])
            let gateway = DatabaseGateway(configuration: configuration, maximumConnections: 12, requestTimeout: .seconds(60),
                                          statementTimeout: .seconds(30), eventLoopGroup: MultiThreadedEventLoopGroup.singleton,
                                          logger: Self.logger)
            var users: [AuthenticatedUser] = []
            for index in 0..<6 { users.append(try await ServerTestHarness.makeUser("pool\(index)")) }
            do {
                _ = try await gateway.prepare(SchemaDescription(entities: [note]), as: .trusted)
                for user in users {
                    let rows = (0..<3).map { RowValues(entity: "Note", id: .v7(), values: ["title": .string("\(user.name)-\($0)")]) }
                    _ = try await gateway.save(SaveRequest(inserts: rows), as: .user(user))
                }
                let engine = gateway.engine
                let backends = try await withThrowingTaskGroup(of: Set<Int32>.self) { group in
                    for (index, user) in users.enumerated() {
                        group.addTask {
                            var seen: Set<Int32> = []
                            for round in 0..<25 {
                                // Rows: exactly this user's three, whatever ran on the server connection before.
                                let titles = try await gateway.fetch(FetchRequest(entity: "Note"), as: .user(user)).compactMap {
                                    if case .string(let title) = $0.values["title"] { title } else { nil }
                                }
                                #expect(titles.sorted() == (0..<3).map { "\(user.name)-\($0)" })
                                // Who the transaction runs as, asked inside it.
                                let identity = try await gateway.pool.withConnection(scope: engine.scope(for: .user(user)), deadline: .seconds(30),
                                                                                     operation: "identity") { connection in
                                    try await engine.transaction(as: .user(user), on: connection) {
                                        try await Self.identity(on: connection)
                                    }
                                }
                                #expect(identity.role == SQLRenderer.applicationRole)
                                #expect(identity.userID == user.id.uuidString.lowercased())
                                seen.insert(identity.backend)
                                // Trusted work between them: the login role, no user id, on any of the same server connections.
                                if (round + index) % 3 == 0 {
                                    let trusted = try await gateway.pool.withConnection(scope: .trusted, deadline: .seconds(30), operation: "trusted") {
                                        try await Self.identity(on: $0)
                                    }
                                    #expect(trusted.role != SQLRenderer.applicationRole && trusted.role != SQLRenderer.adminRole)
                                    #expect(trusted.userID == nil)
                                    seen.insert(trusted.backend)
                                }
                            }
                            return seen
                        }
                    }
                    var all: Set<Int32> = []
                    for try await seen in group { all.formUnion(seen) }
                    return all
                }
                // Twelve client connections, two server connections: every request shared them.
                #expect(backends.count <= 2)
                try await gateway.dropSchema()
                await gateway.close()
            } catch {
                try? await gateway.dropSchema()
                await gateway.close()
                throw error
            }
        }
    }

    /// `current_user`, `pgmodel.user_id` and the backend of the statement's server connection.
    static func identity(on connection: EngineConnection) async throws -> Identity {
        let rows = try await connection.connection.query(
            "SELECT current_user::text, nullif(current_setting('pgmodel.user_id', true), ''), pg_backend_pid()", logger: logger)
        for try await (role, userID, backend) in rows.decode((String, String?, Int32).self) {
            return Identity(role: role, userID: userID, backend: backend)
        }
        throw PGModelError(.internalError, "no row")
    }

    @Test("many users through the service behind PgBouncer at once: each sees only their own rows")
    func concurrentServiceUsers() async throws {
        try await PgBouncer.with(poolSize: 2) { bouncer in
            try await SharingTests.withService(configure: { bouncer.configure(&$0) }) { port, _ in
                var people: [(AuthenticatedUser, RemoteModelStore)] = []
                for index in 0..<5 {
                    let user = try await ServerTestHarness.makeUser("svc\(index)")
                    people.append((user, try await SharingTests.store(user, port)))
                }
                let token = "p" + ServerTestHarness.uniqueSuffix()
                for (user, store) in people {
                    _ = try await store.save(SaveRequest(inserts: (0..<2).map {
                        RowValues(entity: "Expedition", id: .v7(), values: ["code": .string("\(token)-\(user.name)-\($0)"), "title": .string(user.name)])
                    }))
                }
                try await withThrowingTaskGroup(of: Void.self) { group in
                    for (user, store) in people {
                        group.addTask {
                            for _ in 0..<20 {
                                let rows = try await store.fetch(FetchRequest(entity: "Expedition",
                                                                              predicate: .string(.startsWith, .key("code"), .value(.string(token)))))
                                #expect(rows.count == 2)
                                #expect(rows.allSatisfy { $0.values["title"] == .string(user.name) })
                            }
                        }
                    }
                    try await group.waitForAll()
                }
                for (_, store) in people { await store.close() }
            }
        }
    }

    @Test("observers behind PgBouncer: the doorbell's LISTEN goes to the direct URL and a grantee's observer follows a share")
    func observersWork() async throws {
        let alice = try await ServerTestHarness.makeUser("pobs_alice")
        let bob = try await ServerTestHarness.makeUser("pobs_bob")
        try await PgBouncer.with(poolSize: 2) { bouncer in
            try await SharingTests.withService(configure: { bouncer.configure(&$0) }) { port, _ in
                let aliceContainer = try await SharingContextTests.container(alice, port)
                let bobContainer = try await SharingContextTests.container(bob, port)
                try await offCooperativePool {
                    let bobContext = ModelContext(bobContainer)
                    let observer = try ResultsObserver<SharingModels.Waypoint, Never>(modelContext: bobContext)
                    #expect(observer.results.isEmpty)
                    let context = ModelContext(aliceContainer)
                    let trip = SharingModels.Expedition(code: "pobs-\(UUID().uuidString)", title: "Coast")
                    context.insert(trip)
                    trip.waypoints.append(SharingModels.Waypoint(name: "Cape"))
                    try context.save()
                    try context.share(trip, with: bob.name, permission: .readOnly)
                    try context.save()
                    #expect(waitUntil(reading: { _ = observer.results }, seconds: 15) { observer.results.map(\.name) == ["Cape"] })
                    trip.waypoints.append(SharingModels.Waypoint(name: "Bay"))
                    try context.save()
                    #expect(waitUntil(reading: { _ = observer.results }, seconds: 15) { Set(observer.results.map(\.name)) == ["Cape", "Bay"] })
                }
            }
        }
    }

    /// Point fetches through the service, one client, call by call: the p50 of each way to reach PostgreSQL.
    /// A debug build's figures, only to compare the three; run with `PGMODEL_POOLING_MEASURE=1`.
    @Test("point fetch cost: session scope on a direct connection, per-transaction identity direct, and through PgBouncer",
          .enabled(if: ProcessInfo.processInfo.environment["PGMODEL_POOLING_MEASURE"] == "1"))
    func measurePointFetches() async throws {
        let calls = Int(ProcessInfo.processInfo.environment["PGMODEL_POOLING_CALLS"] ?? "") ?? 2_000
        try await PgBouncer.with(poolSize: 3) { bouncer in
            let direct = try TestDatabase.url()
            let perTransaction = direct + (direct.contains("?") ? "&" : "?") + "pgmodel_pooling=transaction"
            let ways: [(String, (inout LineServerConfiguration) -> Void)] = [
                ("direct, session scope", { _ in }),
                ("direct, pgmodel_pooling=transaction", { $0.directDatabaseURL = $0.databaseURL; $0.databaseURL = perTransaction }),
                ("PgBouncer transaction mode", { bouncer.configure(&$0) }),
            ]
            let user = try await ServerTestHarness.makeUser("pmeasure")
            for round in 0..<2 {
                for (name, configure) in ways {
                    let p50 = try await SharingTests.withService(configure: configure) { port, _ in
                        let store = try await SharingTests.store(user, port)
                        let token = "m" + ServerTestHarness.uniqueSuffix()
                        _ = try await store.save(SaveRequest(inserts: (0..<100).map {
                            RowValues(entity: "Expedition", id: .v7(), values: ["code": .string("\(token)-\($0)"), "title": .string("t")])
                        }))
                        let clock = ContinuousClock()
                        var samples: [Double] = []
                        for call in -200..<calls {
                            let request = FetchRequest(entity: "Expedition", predicate: .compare(.equal, .key("code"), .value(.string("\(token)-\(abs(call) % 100)"))),
                                                       limit: 1)
                            let began = clock.now
                            let rows = try await store.fetch(request)
                            let elapsed = clock.now - began
                            #expect(rows.count == 1)
                            if call >= 0 {
                                let (seconds, attoseconds) = elapsed.components
                                samples.append(Double(seconds) * 1e6 + Double(attoseconds) / 1e12)
                            }
                        }
                        await store.close()
                        samples.sort()
                        return samples[samples.count / 2]
                    }
                    print("pooling point fetch, round \(round + 1), \(name): p50 \(String(format: "%.1f", p50)) µs over \(calls) calls")
                }
            }
        }
    }
}
