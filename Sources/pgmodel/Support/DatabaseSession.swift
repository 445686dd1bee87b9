import Logging
import NIOPosix
@_spi(PGModelInternals) import PGModelClient
@_spi(PGModelInternals) import PGModelCore
@_spi(PGModelInternals) import PGModelIO
@_spi(PGModelInternals) import PGModelPostgres
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
        _ body: (PostgresStoreEngine, EngineConnection) async throws -> T
    ) async throws -> T {
        let logger = Logger(label: "pgmodel.cli")
        let connection: PostgresConnection
        do {
            connection = try await PostgresConnection.connect(
                on: MultiThreadedEventLoopGroup.singleton.next(), configuration: configuration.connection, id: 1, logger: logger)
        } catch {
            throw CommandFailure(connectionFailure(error, configuration) + " [\(PGModelError.Code.connectionFailed.rawValue)]")
        }
        let engine = PostgresStoreEngine(schemaName: configuration.schemaName, logger: logger)
        do {
            if bootstrap { try await engine.bootstrap(on: EngineConnection(connection)) }
            let result = try await body(engine, EngineConnection(connection))
            try? await connection.close()
            return result
        } catch {
            try? await connection.close()
            throw error
        }
    }
}

/// What went wrong connecting to PostgreSQL, in words: a refused password and an unknown role or
/// database say so (SQLSTATE 28P01, 28000, 3D000), anything else names PostgreSQL's message.
func connectionFailure(_ error: any Error, _ configuration: PostgresStoreConfiguration) -> String {
    let mapped = PostgresErrorMapping.map(error)
    let place = "PostgreSQL at \(configuration.host):\(configuration.port)"
    switch mapped.sqlState {
    case "28P01":
        return "\(place) refused the password of user \(configuration.username): check the password in --database-url or DATABASE_URL"
    case "28000":
        return "\(place) does not let user \(configuration.username) in (no such role, or pg_hba.conf refuses it)"
    case "3D000":
        return "\(place) has no database \(configuration.database)"
    default:
        if let error = error as? PSQLError, error.code == .connectionError {
            return "cannot connect to \(place): \(PostgresFailureText.describe(error))"
        }
        return "cannot connect to \(place) as \(configuration.username): \(mapped.message)"
    }
}
