import Logging
import NIOPosix
import PGModelPostgres
import PostgresNIO

/// One PostgreSQL connection for a CLI command, with the store engine for its schema.
///
/// ```swift
/// let users = try await DatabaseSession.run(configuration) { engine, connection in
///     try await engine.listUsers(on: connection)
/// }
/// ```
enum DatabaseSession {
    static func run<T: Sendable>(
        _ configuration: PostgresStoreConfiguration, bootstrap: Bool = true,
        _ body: (PostgresStoreEngine, PostgresConnection) async throws -> T
    ) async throws -> T {
        let logger = Logger(label: "pgmodel.cli")
        let connection: PostgresConnection
        do {
            connection = try await PostgresConnection.connect(
                on: MultiThreadedEventLoopGroup.singleton.next(), configuration: configuration.connection, id: 1, logger: logger)
        } catch {
            let reason = (error as? PSQLError).map { "\($0.code)" } ?? "\(type(of: error))"
            throw CommandFailure(
                "cannot connect to PostgreSQL at \(configuration.host):\(configuration.port) as \(configuration.username) (\(reason))")
        }
        let engine = PostgresStoreEngine(schemaName: configuration.schemaName, logger: logger)
        do {
            if bootstrap { try await engine.bootstrap(on: connection) }
            let result = try await body(engine, connection)
            try? await connection.close()
            return result
        } catch {
            try? await connection.close()
            throw error
        }
    }
}
