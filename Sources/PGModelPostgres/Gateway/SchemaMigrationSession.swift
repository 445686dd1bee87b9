import Foundation
import Logging
import NIOCore
@_spi(PGModelInternals) import PGModelCore
@_spi(PGModelInternals) import PGModelIO
import PostgresNIO

/// One migration's transaction on a connection of its own, outside the pool: every stage, every
/// `willMigrate`/`didMigrate` save and the version record commit together or not at all.
///
/// ```swift
/// let session = try await gateway.openMigrationSession()
/// do {
///     try await session.apply(from: v1, to: v2)
///     try await session.record(v2, entities: plan.entityNames, stages: reports)
///     try await session.commit()
/// } catch { await session.rollback(); throw error }
/// ```
package final class SchemaMigrationSession: Sendable {
    let connection: EngineConnection
    /// The gateway's engine in savepoint mode (see `PostgresStoreEngine.enclosed()`).
    package let engine: PostgresStoreEngine
    let gateway: DatabaseGateway

    init(connection: PostgresConnection, gateway: DatabaseGateway) {
        self.connection = EngineConnection(connection)
        self.engine = gateway.engine.enclosed()
        self.gateway = gateway
    }

    /// Every registered entity, as the open transaction sees them.
    package func registered() async throws -> SchemaDescription {
        try await engine.loadSchema(on: connection)
    }

    /// The version last recorded for any of `entities`.
    package func recordedVersion(of entities: Set<String>) async throws -> String? {
        try await engine.recordedVersion(of: entities, on: connection)
    }

    /// One lightweight step (the DDL part of any stage); returns the rows per entity afterwards.
    @discardableResult
    package func apply(from old: SchemaDescription, to new: SchemaDescription) async throws -> [String: Int] {
        try await engine.applyMigration(from: old, to: new, on: connection)
    }

    /// The SQL ``apply(from:to:)`` would run, run nothing.
    package func statements(from old: SchemaDescription, to new: SchemaDescription) async throws -> [String] {
        let registered = try await engine.loadSchema(on: connection)
        return try engine.migrationStatements(from: old, to: new, registered: registered).map(\.sql)
    }

    /// Records the version the plan's entities are at now.
    package func record(_ schema: SchemaDescription, entities: Set<String>, stages: [MigrationStageReport]) async throws {
        try await engine.recordVersion(schema, entities: entities, stages: stages, on: connection)
    }

    /// A store whose calls run inside this transaction, on `schema` (a stage's old or new version).
    package func store(for schema: SchemaDescription) -> any ModelStore {
        MigrationModelStore(session: self, schema: schema)
    }

    /// Commits the migration, closes its connection and refreshes the gateway's registered schema.
    package func commit() async throws {
        do {
            try await engine.commitMigration(on: connection)
        } catch {
            try? await connection.connection.close()
            throw error
        }
        try? await connection.connection.close()
        try await gateway.loadRegisteredSchema()
    }

    /// Rolls everything back and closes the connection. Safe after a failed commit.
    package func rollback() async {
        await engine.rollbackMigration(on: connection)
        try? await connection.connection.close()
    }

    /// Runs `body` on the session's connection inside a savepoint.
    func call<T: Sendable>(_ body: @Sendable (PostgresStoreEngine, EngineConnection) async throws -> T) async throws -> T {
        try await engine.withSavepoint(on: connection) { try await body(engine, connection) }
    }
}

extension DatabaseGateway {
    /// Opens a migration: a connection of its own (a long migration must not hold a pooled one against
    /// a request deadline), `BEGIN`, and the store's schema lock. Behind a pooler in transaction mode it
    /// goes to the direct endpoint (``PostgresStoreConfiguration/sessionConfiguration``): its DDL and long
    /// transaction should not hold one of the pooler's few server connections.
    package func openMigrationSession(budget: RequestBudget = RequestBudget()) async throws -> SchemaMigrationSession {
        try await loadRegisteredSchema(budget: budget)
        let connection: PostgresConnection
        let configuration = configuration.sessionConfiguration
        do {
            connection = try await PostgresConnection.connect(
                on: eventLoopGroup.any(), configuration: configuration.connection, id: Int.random(in: 1_000_000...9_999_999), logger: logger)
        } catch {
            var mapped = PostgresErrorMapping.map(error)
            if mapped.sqlState == nil, mapped.code == .connectionFailed { mapped.message = PostgresFailureText.describe(error) }
            throw PGModelError(mapped.code == .tlsFailed ? .tlsFailed : .connectionFailed,
                "cannot connect to PostgreSQL at \(configuration.host):\(configuration.port) to migrate: \(mapped.message)", sqlState: mapped.sqlState)
        }
        do {
            try await engine.beginMigration(on: EngineConnection(connection))
        } catch {
            try? await connection.close()
            throw error
        }
        return SchemaMigrationSession(connection: connection, gateway: self)
    }
}
