import Foundation
import Logging
import NIOPosix
@_spi(PGModelInternals) import PGModelClient
@_spi(PGModelInternals) import PGModelCore
@_spi(PGModelInternals) import PGModelIO
@_spi(PGModelInternals) import PGModelSQL
@_spi(PGModelInternals) @testable import PGModelPostgres
import PostgresNIO
import Testing

/// The pool's session scopes: a pooled connection keeps a user's role, id and statement
/// timeout at session level between requests, so a repeat read costs one statement — and still never
/// runs one user's statement in another's scope, nor trusted work in a user's.
@Suite("Scoped pool connections")
struct ScopedPoolTests {
    static let note = EntityDescription(name: "Note", attributes: [AttributeDescription(name: "title", type: .string)])
    let schema = SchemaDescription(entities: [Self.note])

    static let logger: Logger = {
        var logger = Logger(label: "pgmodel.test.scopedpool")
        logger.logLevel = .warning
        return logger
    }()

    /// A gateway of ONE database connection on a fresh schema with `Note` registered, and two users.
    func withGateway(statementTimeout: Duration? = .seconds(20),
                     _ body: (DatabaseGateway, AuthenticatedUser, AuthenticatedUser) async throws -> Void) async throws {
        var configuration = try PostgresStoreConfiguration.parse(try TestDatabase.url())
        configuration.schemaName = TestDatabase.uniqueSchema("scope")
        let gateway = DatabaseGateway(configuration: configuration, maximumConnections: 1, requestTimeout: .seconds(30),
                                      statementTimeout: statementTimeout, eventLoopGroup: MultiThreadedEventLoopGroup.singleton,
                                      statementLog: statementLog, logger: Self.logger)
        let alice = try await ServerTestHarness.makeUser("alice")
        let bob = try await ServerTestHarness.makeUser("bob")
        do {
            _ = try await gateway.prepare(schema, as: .trusted)
            try await body(gateway, alice, bob)
            try await gateway.dropSchema()
            await gateway.close()
        } catch {
            try? await gateway.dropSchema()
            await gateway.close()
            throw error
        }
    }

    func insert(_ gateway: DatabaseGateway, _ titles: [String], as user: AuthenticatedUser) async throws -> [UUID] {
        let rows = titles.map { RowValues(entity: "Note", id: .v7(), values: ["title": .string($0)]) }
        _ = try await gateway.save(SaveRequest(inserts: rows), as: .user(user))
        return rows.map(\.id)
    }

    func titles(_ gateway: DatabaseGateway, as requester: Requester) async throws -> [String] {
        try await gateway.fetch(FetchRequest(entity: "Note"), as: requester).compactMap {
            if case .string(let title) = $0.values["title"] { title } else { nil }
        }.sorted()
    }

    /// Who the pool's connection is when trusted work leases it: role, user id, timeout, backend.
    struct Session: Equatable {
        var user: String
        var userID: String?
        var statementTimeout: String
        var backend: Int32
    }

    func trustedSession(_ gateway: DatabaseGateway) async throws -> Session {
        try await gateway.pool.withConnection(scope: .trusted, deadline: .seconds(10), operation: "test") { connection in
            let rows = try await connection.connection.query(
                "SELECT current_user::text, current_setting('pgmodel.user_id', true), current_setting('statement_timeout'), pg_backend_pid()",
                logger: Self.logger)
            for try await (user, userID, timeout, backend) in rows.decode((String, String?, String, Int32).self) {
                // A new connection has no pgmodel.user_id (NULL), one reset to trusted has '': both NULL to the policies.
                return Session(user: user, userID: userID ?? "", statementTimeout: timeout, backend: backend)
            }
            throw PGModelError(.internalError, "no row")
        }
    }

    /// A new connection's statement timeout, what trusted work must find again.
    func defaultStatementTimeout() async throws -> String {
        try await ServerTestHarness.withDatabase { _, connection in
            for try await timeout in try await connection.connection.query("SELECT current_setting('statement_timeout')", logger: Self.logger).decode(String.self) {
                return timeout
            }
            throw PGModelError(.internalError, "no row")
        }
    }

    /// Every statement the gateway of ``withGateway(statementTimeout:_:)`` sends.
    let statementLog = StatementLog()

    /// The statements `body` sends.
    func statements(_ body: () async throws -> Void) async throws -> [String] {
        let before = statementLog.count
        try await body()
        return Array(statementLog.statements.dropFirst(before))
    }

    @Test("two users alternating on a pool of one connection each see only their own rows; trusted work then sees all as the login role")
    func alternatingUsersAreIsolated() async throws {
        let defaultTimeout = try await defaultStatementTimeout()
        try await withGateway { gateway, alice, bob in
            let before = try await trustedSession(gateway)
            _ = try await insert(gateway, ["a1", "a2", "a3"], as: alice)
            _ = try await insert(gateway, ["b1", "b2"], as: bob)
            for _ in 0..<5 {
                #expect(try await titles(gateway, as: .user(alice)) == ["a1", "a2", "a3"])
                #expect(try await titles(gateway, as: .user(alice)) == ["a1", "a2", "a3"])
                #expect(try await titles(gateway, as: .user(bob)) == ["b1", "b2"])
                #expect(try await gateway.count(FetchRequest(entity: "Note"), as: .user(bob)) == 2)
                #expect(try await gateway.fetchIdentifiers(FetchRequest(entity: "Note"), as: .user(alice)).count == 3)
            }
            #expect(try await titles(gateway, as: .user(bob)) == ["b1", "b2"])
            // Trusted work right after a user's request: every row, as the login role, no user id.
            #expect(try await titles(gateway, as: .trusted) == ["a1", "a2", "a3", "b1", "b2"])
            let after = try await trustedSession(gateway)
            #expect(after.user == gateway.configuration.username)
            #expect(after.userID == "")
            #expect(after.statementTimeout == defaultTimeout)
            #expect(after == before, "one connection throughout, back in the trusted scope")
        }
    }

    @Test("a failed save in one user's scope, then another user's fetch on the same connection: still isolated")
    func failedSaveKeepsIsolation() async throws {
        try await withGateway { gateway, alice, bob in
            let aliceIDs = try await insert(gateway, ["a1"], as: alice)
            let bobIDs = try await insert(gateway, ["b1"], as: bob)
            let backend = try await trustedSession(gateway).backend
            // Fails inside the transaction (bob's row is invisible to alice: not found, rolled back)…
            await #expect(throws: PGModelError.self) {
                _ = try await gateway.save(SaveRequest(updates: [RowValues(entity: "Note", id: bobIDs[0], values: ["title": .string("x")])]),
                                           as: .user(alice))
            }
            #expect(try await titles(gateway, as: .user(bob)) == ["b1"])
            // …and in PostgreSQL itself (bob's id is taken: the primary key refuses alice's row).
            await #expect(throws: PGModelError.self) {
                _ = try await gateway.save(SaveRequest(inserts: [RowValues(entity: "Note", id: bobIDs[0], values: ["title": .string("y")])]),
                                           as: .user(alice))
            }
            #expect(try await titles(gateway, as: .user(bob)) == ["b1"])
            #expect(try await titles(gateway, as: .user(alice)) == ["a1"])
            await #expect(throws: PGModelError.self) {
                _ = try await gateway.save(SaveRequest(inserts: [RowValues(entity: "Note", id: aliceIDs[0], values: ["title": .string("z")])]),
                                           as: .user(bob))
            }
            #expect(try await titles(gateway, as: .user(alice)) == ["a1"])
            #expect(try await titles(gateway, as: .trusted) == ["a1", "b1"])
            let session = try await trustedSession(gateway)
            #expect(session.user == gateway.configuration.username && session.userID == "")
            #expect(session.backend == backend, "the failed saves did not cost the connection")
        }
    }

    @Test("a repeat point fetch by the same user is one statement; another user's first costs one more; saves skip set_config")
    func repeatReadIsOneStatement() async throws {
        try await withGateway { gateway, alice, bob in
            _ = try await insert(gateway, ["a1", "a2"], as: alice)
            _ = try await insert(gateway, ["b1"], as: bob)
            let point = FetchRequest(entity: "Note", predicate: .compare(.equal, .key("title"), .value(.string("a2"))), limit: 1)
            #expect(try await gateway.fetch(point, as: .user(alice)).count == 1)
            var found = 0
            let repeated = try await statements { found = try await gateway.fetch(point, as: .user(alice)).count }
            #expect(found == 1)
            #expect(repeated.count == 1, "\(repeated)")
            #expect(repeated.first?.hasPrefix("SELECT") == true)
            let switched = try await statements { found = try await gateway.fetch(point, as: .user(bob)).count }
            #expect(found == 0, "alice's note is not bob's")
            #expect(switched.count == 2, "\(switched)")
            #expect(switched.first?.contains("set_config('role', $1, false)") == true)
            let saved = try await statements { _ = try await insert(gateway, ["b2"], as: bob) }
            // The doorbell goes right behind COMMIT, outside the transaction.
            #expect(saved.first == "BEGIN" && saved.dropLast().last == "COMMIT" && saved.last?.hasPrefix("SELECT pg_notify") == true, "\(saved)")
            #expect(!saved.contains { $0.contains("set_config") }, "\(saved)")
            let trusted = try await statements { _ = try await titles(gateway, as: .trusted) }
            #expect(trusted.count == 2 && trusted.first?.contains("set_config('role', $1, false)") == true, "\(trusted)")
            #expect(try await titles(gateway, as: .user(bob)) == ["b1", "b2"])
        }
    }

    @Test("the statement timeout is part of a user's scope: PostgreSQL cancels a slow statement, and trusted work gets its own timeout back")
    func statementTimeoutStaysPerScope() async throws {
        let defaultTimeout = try await defaultStatementTimeout()
        try await withGateway(statementTimeout: .milliseconds(300)) { gateway, alice, _ in
            _ = try await insert(gateway, ["a1"], as: alice)
            let scope = gateway.engine.scope(for: .user(alice))
            let error = await #expect(throws: PGModelError.self) {
                try await gateway.pool.withConnection(scope: scope, deadline: .seconds(20), operation: "test") { connection in
                    try await gateway.engine.execute(SQLStatement(sql: "SELECT pg_sleep(5)"), on: connection)
                }
            }
            #expect(error?.code == .timeout && error?.sqlState == "57014", "PostgreSQL's own cancel: \(String(describing: error))")
            #expect(try await titles(gateway, as: .user(alice)) == ["a1"])
            let session = try await trustedSession(gateway)
            #expect(session.statementTimeout == defaultTimeout)
            let slept = try await gateway.pool.withConnection(scope: .trusted, deadline: .seconds(20), operation: "test") { connection in
                try await connection.connection.query("SELECT pg_sleep(0.5)", logger: Self.logger).collect().count
            }
            #expect(slept == 1, "trusted work is not held to the user's 300 ms")
        }
    }

    @Test("a lease from an event loop gets a connection of that loop, one opened per loop; a lease from elsewhere opens none")
    func leasesSettleOnTheirOwnLoop() async throws {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 2)
        let loops = Array(group.makeIterator())
        let configuration = try PostgresStoreConfiguration.parse(try TestDatabase.url())
        let pool = ConnectionPool(configuration: configuration, maximumConnections: 4, maximumIdleConnections: 4,
                                  eventLoopGroup: group, logger: Self.logger)
        /// The connection a lease made from `loop` (or from no loop) got, and whether it lives on that loop.
        func lease(on loop: (any EventLoop)?) async throws -> (connection: ObjectIdentifier, isLocal: Bool) {
            try await withTaskExecutorPreference(loop.map { EventLoopTaskExecutor(eventLoop: $0) }) {
                try await pool.withConnection(scope: .trusted, deadline: .seconds(10), operation: "test") { connection in
                    (ObjectIdentifier(connection.connection), loop.map { connection.eventLoop === $0 } ?? false)
                }
            }
        }
        do {
            let first = try await lease(on: loops[0])
            let second = try await lease(on: loops[1])
            #expect(first.isLocal)
            #expect(second.isLocal)
            #expect(first.connection != second.connection)
            // Each loop keeps getting its own, whichever was used last.
            #expect(try await lease(on: loops[0]).connection == first.connection)
            #expect(try await lease(on: loops[1]).connection == second.connection)
            #expect(try await lease(on: loops[0]).connection == first.connection)
            // A caller on no loop takes an idle one rather than opening a third.
            #expect([first.connection, second.connection].contains(try await lease(on: nil).connection))
        } catch {
            await pool.close()
            try await group.shutdownGracefully()
            throw error
        }
        await pool.close()
        try await group.shutdownGracefully()
    }
}
