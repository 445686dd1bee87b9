import Foundation
import Logging
import NIOPosix
@_spi(PGModelInternals) import PGModelCore
@_spi(PGModelInternals) import PGModelPostgres
import PostgresNIO

/// A fresh PostgreSQL schema with `schema` prepared in it for one engine-level test, dropped afterwards.
enum EngineTestStore {
    static func connect(id: Int = 1, logger: Logger) async throws -> PostgresConnection {
        let configuration = try PostgresStoreConfiguration.parse(try TestDatabase.url())
        return try await PostgresConnection.connect(on: MultiThreadedEventLoopGroup.singleton.next(),
                                                    configuration: configuration.connection, id: id, logger: logger)
    }

    static func with(_ schema: SchemaDescription, prefix: String, logger: Logger,
                     _ body: (PostgresStoreEngine, EngineConnection, String) async throws -> Void) async throws {
        let postgres = try await connect(logger: logger)
        let connection = EngineConnection(postgres)
        let name = TestDatabase.uniqueSchema(prefix)
        let engine = PostgresStoreEngine(schemaName: name, logger: logger)
        do {
            try await engine.bootstrap(on: connection)
            try await engine.prepare(schema, on: connection)
            try await body(engine, connection, name)
            try await engine.dropSchema(on: connection)
            try await postgres.close()
        } catch {
            try? await engine.dropSchema(on: connection)
            try? await postgres.close()
            throw error
        }
    }
}
