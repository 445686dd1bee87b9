import Foundation
import Logging
import NIOPosix
@_spi(PGModelInternals) import PGModelCore
@_spi(PGModelInternals) @testable import PGModelPostgres
import PostgresNIO
import Testing

/// Registrations that change a store, and migrations, take turns under one lock; a start-up that finds its
/// store in place takes none, and one that changes it sends its DDL in one batch.
///
/// Each test in a scratch database (advisory locks are per database), with a second session holding the
/// locks and `lock_timeout` on the first, so a wait that should not happen fails the test instead of
/// hanging it.
@Suite("Schema locks")
struct SchemaLockTests {
    static let logger: Logger = {
        var logger = Logger(label: "pgmodel.test.schema-lock")
        logger.logLevel = .warning
        return logger
    }()

    static func schema(_ entity: String, withNote: Bool = false) -> SchemaDescription {
        var attributes = [AttributeDescription(name: "name", type: .string)]
        if withNote { attributes.append(AttributeDescription(name: "note", type: .string, isOptional: true)) }
        return SchemaDescription(entities: [EntityDescription(name: entity, attributes: attributes)])
    }

    /// A bootstrapped scratch database: a connection with a two-second `lock_timeout` for the code under
    /// test, and a second session that holds locks.
    func withTwoSessions(_ body: (EngineConnection, PostgresConnection) async throws -> Void) async throws {
        try await ScratchDatabase.with(label: "pgmodel.test.schema-lock") { connection, logger in
            let database = try #require(try await connection.query("SELECT current_database()", logger: logger).collect().first?.decode(String.self))
            var configuration = try PostgresStoreConfiguration.parse(try TestDatabase.url()).connection
            configuration.database = database
            let holder = try await PostgresConnection.connect(on: MultiThreadedEventLoopGroup.singleton.next(),
                                                              configuration: configuration, id: 32, logger: logger)
            do {
                try await PostgresStoreEngine(logger: logger).bootstrap(on: EngineConnection(connection))
                _ = try await connection.query("SET lock_timeout = '2s'", logger: logger).collect()
                try await body(EngineConnection(connection), holder)
                try await holder.close()
            } catch {
                try? await holder.close()
                throw error
            }
        }
    }

    @Test("a start-up that finds its store in place takes no lock: it finishes while a migration holds the lock")
    func inPlaceRegistrationTakesNoLock() async throws {
        try await withTwoSessions { connection, holder in
            let engine = PostgresStoreEngine(schemaName: "lock_a", logger: Self.logger)
            let schema = Self.schema("LockItem")
            try await engine.prepare(schema, on: connection)
            // The lock a registration that changes something (or a migration) takes, held.
            _ = try await holder.query("SELECT pg_advisory_lock(\(unescaped: "\(PostgresStoreEngine.bootstrapLock)"))", logger: Self.logger).collect()
            let statements = try await EngineTestStore.statements(on: connection) { try await engine.prepare(schema, on: $0) }
            #expect(!statements.contains { $0.contains("pg_advisory") }, "\(statements)")
            #expect(!statements.contains { $0.hasPrefix("BEGIN") }, "\(statements)")
            _ = try await holder.query("SELECT pg_advisory_unlock_all()", logger: Self.logger).collect()
        }
    }

    @Test("a registration that changes a store waits for a migration, then applies its change in one batch")
    func aChangeWaitsForItsStore() async throws {
        try await withTwoSessions { connection, holder in
            let engine = PostgresStoreEngine(schemaName: "lock_a", logger: Self.logger)
            try await engine.prepare(Self.schema("LockItem"), on: connection)
            try await engine.beginMigration(on: EngineConnection(holder))
            let waited = await #expect(throws: PGModelError.self) { try await engine.prepare(Self.schema("LockItem", withNote: true), on: connection) }
            #expect(waited?.sqlState == "55P03", "lock_timeout while the migration holds the store: \(String(describing: waited))")
            #expect(try await engine.loadSchema(on: connection).entity(named: "LockItem")?.attributes.contains { $0.name == "note" } == false)
            await engine.rollbackMigration(on: EngineConnection(holder))
            let statements = try await EngineTestStore.statements(on: connection) { try await engine.prepare(Self.schema("LockItem", withNote: true), on: $0) }
            #expect(statements.filter { $0.hasPrefix("DO $pgmodel_batch$") }.count == 1, "\(statements)")
            #expect(!statements.contains { $0.hasPrefix("ALTER TABLE") || $0.hasPrefix("CREATE") }, "DDL only inside the batch: \(statements)")
            #expect(try await engine.loadSchema(on: connection).entity(named: "LockItem")?.attributes.contains { $0.name == "note" } == true)
        }
    }
}
