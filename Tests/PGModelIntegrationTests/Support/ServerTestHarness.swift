import Foundation
import Logging
import NIOPosix
@_spi(PGModelInternals) import PGModelCore
@_spi(PGModelInternals) import PGModelPostgres
@_spi(PGModelInternals) import PGModelServer
import PostgresNIO
import ServiceLifecycle
import Testing

/// Runs a real ``LineServer`` in-process on 127.0.0.1 and an ephemeral port, against the database of
/// `PGMODEL_TEST_DATABASE_URL` (or PGModelTesting's private cluster), and creates users for tests directly through the store engine.
enum ServerTestHarness {
    /// The test database's URL (``TestDatabase/url()``).
    static func databaseURL() throws -> String {
        try TestDatabase.url()
    }

    /// A server for the duration of `body`, shut down gracefully afterwards (and the shutdown checked).
    static func withServer<T: Sendable>(
        port: Int = 0,
        schemaName: String? = nil,
        maxLineBytes: Int = 1 << 20,
        maxConnections: Int? = nil,
        configure: (inout LineServerConfiguration) -> Void = { _ in },
        _ body: @Sendable (_ port: Int) async throws -> T
    ) async throws -> T {
        try await withRunningServer(
            port: port, schemaName: schemaName, maxLineBytes: maxLineBytes, maxConnections: maxConnections, configure: configure
        ) { _, port in try await body(port) }
    }

    /// ``withServer(port:schemaName:maxLineBytes:maxConnections:_:)`` that also hands `body` the server,
    /// for tests that check its counters.
    static func withRunningServer<T: Sendable>(
        port: Int = 0,
        schemaName: String? = nil,
        maxLineBytes: Int = 1 << 20,
        maxConnections: Int? = nil,
        requestTimeout: Duration = .seconds(30),
        loginTimeout: Duration = .seconds(10),
        configure: (inout LineServerConfiguration) -> Void = { _ in },
        logger serverLogger: Logger? = nil,
        _ body: @Sendable (_ server: LineServer, _ port: Int) async throws -> T
    ) async throws -> T {
        var configuration = LineServerConfiguration(
            databaseURL: try ServerTestHarness.databaseURL(), host: "127.0.0.1", port: port, schemaName: schemaName,
            maxLineBytes: maxLineBytes, maxConnections: maxConnections, maxDatabaseConnections: 4)
        configuration.requestTimeout = requestTimeout
        configuration.loginTimeout = loginTimeout
        configure(&configuration)
        return try await withServer(configuration: configuration, logger: serverLogger ?? logger, body)
    }

    /// A server with exactly `configuration` (TLS, say) for the duration of `body`, shut down
    /// gracefully afterwards.
    static func withServer<T: Sendable>(
        configuration: LineServerConfiguration,
        logger serverLogger: Logger? = nil,
        _ body: @Sendable (_ server: LineServer, _ port: Int) async throws -> T
    ) async throws -> T {
        let server = try LineServer(configuration: configuration, logger: serverLogger ?? logger)
        let group = ServiceGroup(services: [server], logger: logger)
        return try await withThrowingTaskGroup(of: Void.self) { tasks in
            tasks.addTask { try await group.run() }
            do {
                let bound = try await server.listeningPort()
                let result = try await body(server, bound)
                await group.triggerGracefulShutdown()
                try await tasks.next()
                return result
            } catch {
                await group.triggerGracefulShutdown()
                _ = try? await tasks.next()
                throw error
            }
        }
    }

    /// A fresh user with a random name; returns the name and id.
    static func makeUser(_ prefix: String = "u", password: String = "secret", admin: Bool = false) async throws -> AuthenticatedUser {
        let name = "\(prefix)_\(uniqueSuffix())"
        return try await withDatabase { engine, connection in
            try await engine.createUser(name: name, password: password, isAdmin: admin, on: connection)
        }
    }

    /// Creates the tables of `schema` as the database owner, as an admin does at deploy time: service
    /// users may only register what exists.
    static func register(_ schema: SchemaDescription, schemaName: String = "public") async throws {
        try await withDatabase(schemaName: schemaName) { engine, connection in
            try await engine.prepare(schema, on: connection)
        }
    }

    /// ``register(_:schemaName:)`` for a schema in its JSON form, as raw protocol tests send it.
    static func register(json: String, schemaName: String = "public") async throws {
        try await register(try JSONDecoder().decode(SchemaDescription.self, from: Data(json.utf8)), schemaName: schemaName)
    }

    /// Runs `body` on a connection of its own, after bootstrapping the system tables.
    static func withDatabase<T: Sendable>(
        schemaName: String = "public", _ body: (PostgresStoreEngine, EngineConnection) async throws -> T
    ) async throws -> T {
        let configuration = try PostgresStoreConfiguration.parse(try ServerTestHarness.databaseURL())
        let postgres = try await PostgresConnection.connect(
            on: MultiThreadedEventLoopGroup.singleton.next(), configuration: configuration.connection, id: 1, logger: logger)
        let connection = EngineConnection(postgres)
        let engine = PostgresStoreEngine(schemaName: schemaName, logger: logger)
        do {
            try await engine.bootstrap(on: connection)
            let result = try await body(engine, connection)
            try await postgres.close()
            return result
        } catch {
            try? await postgres.close()
            throw error
        }
    }

    /// Lowercase letters and digits, unique enough for names shared by parallel and repeated runs.
    static func uniqueSuffix() -> String {
        String(UUID().uuidString.lowercased().replacingOccurrences(of: "-", with: "").prefix(10))
    }

    /// A unique entity name, e.g. `Note_3fa2…`.
    static func uniqueEntity(_ base: String = "Note") -> String {
        "\(base)_\(uniqueSuffix())"
    }

    /// Logs at warning and above only, so test output stays readable.
    static let logger: Logger = {
        var logger = Logger(label: "pgmodel.test.server")
        logger.logLevel = .warning
        return logger
    }()
}
