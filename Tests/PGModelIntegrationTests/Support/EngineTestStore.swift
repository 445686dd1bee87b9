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

    /// The statements `body` sends on `connection` (given to it with a log).
    static func statements(on connection: EngineConnection, _ body: (EngineConnection) async throws -> Void) async throws -> [String] {
        var logged = connection
        logged.statementLog = StatementLog()
        try await body(logged)
        return logged.statementLog?.statements ?? []
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

/// An engine-level suite on one schema: each test gets a fresh PostgreSQL schema with it prepared
/// (``withStore(_:)``), and the calls its tests make, as the trusted requester unless they say otherwise.
///
/// ```swift
/// struct BulkSaveTests: EngineTestSuite {
///     static let storePrefix = "b"
///     let schema = GraphTestSchema.schema
///     @Test func saves() async throws {
///         try await withStore { engine, c, _ in _ = try await save(engine, c, SaveRequest(inserts: rows)) }
///     }
/// }
/// ```
protocol EngineTestSuite {
    /// The schema every test's store has.
    var schema: SchemaDescription { get }
    /// The start of the suite's schema names (short: PostgreSQL keeps 63 bytes of a name).
    static var storePrefix: String { get }
}

extension EngineTestSuite {
    /// A fresh PostgreSQL schema with ``schema`` prepared in it, dropped afterwards.
    func withStore(_ body: (PostgresStoreEngine, EngineConnection, String) async throws -> Void) async throws {
        var logger = Logger(label: "pgmodel.test.\(Self.storePrefix)")
        logger.logLevel = .warning
        try await EngineTestStore.with(schema, prefix: Self.storePrefix, logger: logger, body)
    }

    @discardableResult
    func save(_ engine: PostgresStoreEngine, _ c: EngineConnection, _ request: SaveRequest, as requester: Requester = .trusted) async throws -> SaveResult {
        try await engine.save(request, in: schema, as: requester, on: c)
    }

    func fetch(_ engine: PostgresStoreEngine, _ c: EngineConnection, _ request: FetchRequest, as requester: Requester = .trusted) async throws -> [RowValues] {
        try await engine.fetch(request, in: schema, as: requester, on: c)
    }

    /// The statements `body` sends on `connection` (see ``EngineTestStore/statements(on:_:)``).
    func statements(on connection: EngineConnection, _ body: (EngineConnection) async throws -> Void) async throws -> [String] {
        try await EngineTestStore.statements(on: connection, body)
    }
}
