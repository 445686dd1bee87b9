import Foundation
import Logging
import NIOConcurrencyHelpers
import NIOCore
import PGModelCore
import PGModelPostgres
import PostgresNIO

/// The direct store: the container's own PostgreSQL connections, every row visible
/// (``AccessScope/unrestricted``).
///
/// Connections are kept in a small lock-protected pool, not an actor: its methods run on the
/// container's event loop (see ``BlockingBridge``), and an actor would hop to the cooperative pool
/// that blocked callers may be occupying.
///
/// ```swift
/// let store = try PostgresModelStore(url: "postgres://pgmodel:pgmodel@127.0.0.1:55432/pgmodel", eventLoop: loop)
/// ```
public final class PostgresModelStore: ModelStore {
    private struct State {
        var idle: [PostgresConnection] = []
        var schema = SchemaDescription(entities: [])
        var nextConnectionID = 1
        var isClosed = false
        var isBootstrapped = false
    }

    let configuration: PostgresStoreConfiguration
    let engine: PostgresStoreEngine
    let eventLoop: any EventLoop
    let logger: Logger
    /// Drop the schema on close: the store of an `isStoredInMemoryOnly` configuration.
    let dropsSchemaOnClose: Bool
    private let state = NIOLockedValueBox(State())
    /// The doorbell's one LISTEN connection, opened when the first observer starts.
    let changeListener: ChangeListener
    /// The deadline of each call; past it the call's connection is closed and the call throws `timeout`.
    let requestTimeout: TimeAmount
    private static let maximumIdleConnections = 4

    public init(configuration: PostgresStoreConfiguration, eventLoop: any EventLoop, dropsSchemaOnClose: Bool = false,
                requestTimeout: TimeAmount = .seconds(30), logger: Logger = Logger(label: "pgmodel.store")) {
        self.configuration = configuration
        self.requestTimeout = requestTimeout
        self.engine = PostgresStoreEngine(schemaName: configuration.schemaName, logger: logger)
        self.eventLoop = eventLoop
        self.logger = logger
        self.dropsSchemaOnClose = dropsSchemaOnClose
        self.changeListener = ChangeListener(configuration: configuration.connection, schemaName: configuration.schemaName,
                                             eventLoop: eventLoop, logger: logger)
    }

    public func prepare(_ schema: SchemaDescription) async throws {
        let timeout = ConnectionDeadline.schemaTimeout(for: requestTimeout)
        try await withConnection(timeout: timeout, operation: "creating the schema") { connection in
            if !self.state.withLockedValue({ $0.isBootstrapped }) {
                try await self.engine.bootstrap(on: connection)
                self.state.withLockedValue { $0.isBootstrapped = true }
            }
            try await self.engine.prepare(schema, on: connection)
        }
        state.withLockedValue { $0.schema = schema }
    }

    public func fetch(_ request: FetchRequest) async throws -> [FetchedRow] {
        let schema = currentSchema
        return try await withConnection(operation: "fetch of \(request.entity)") {
            try await self.engine.fetch(request, in: schema, scope: .unrestricted, on: $0)
        }
    }

    public func count(_ request: FetchRequest) async throws -> Int {
        let schema = currentSchema
        return try await withConnection(operation: "count of \(request.entity)") {
            try await self.engine.count(request, in: schema, scope: .unrestricted, on: $0)
        }
    }

    public func fetchIdentifiers(_ request: FetchRequest) async throws -> [RowReference] {
        let schema = currentSchema
        return try await withConnection(operation: "identifiers of \(request.entity)") {
            try await self.engine.fetchIdentifiers(request, in: schema, scope: .unrestricted, on: $0)
        }
    }

    public func save(_ request: SaveRequest) async throws -> SaveResult {
        let schema = currentSchema
        return try await withConnection(operation: "save") {
            try await self.engine.save(request, in: schema, scope: .unrestricted, on: $0)
        }
    }

    public func close() async {
        // Idempotent: `ModelContainer.close()` and the container's deinit both call it.
        let (connections, wasClosed) = state.withLockedValue { state -> ([PostgresConnection], Bool) in
            defer { state.isClosed = true; state.idle = [] }
            return (state.idle, state.isClosed)
        }
        if wasClosed { return }
        await changeListener.close()
        // A temporary schema is dropped even when no connection is idle: otherwise it would outlive the container.
        if dropsSchemaOnClose {
            var connection = connections.first
            if connection == nil { connection = try? await connect(id: 0) }
            if let connection {
                try? await engine.dropSchema(on: connection)
                if connections.isEmpty { try? await connection.close() }
            }
        }
        for connection in connections {
            try? await connection.close()
        }
    }

    private var currentSchema: SchemaDescription { state.withLockedValue { $0.schema } }

    /// Runs `body` on a pooled connection within the request deadline (`timeout`, or ``requestTimeout``).
    /// Past it the connection is closed, which fails the statement in flight, and the call throws `timeout`.
    func withConnection<T: Sendable>(timeout: TimeAmount? = nil, operation: String,
                                     _ body: @Sendable (PostgresConnection) async throws -> T) async throws -> T {
        let connection = try await acquire()
        let deadline = ConnectionDeadline(timeout ?? requestTimeout, operation: operation)
        do {
            let result = try await deadline.run(on: connection, body)
            release(connection)
            return result
        } catch {
            release(connection)
            throw error
        }
    }

    private func acquire() async throws -> PostgresConnection {
        let (reused, id, closed) = state.withLockedValue { state -> (PostgresConnection?, Int, Bool) in
            while let connection = state.idle.popLast() {
                if !connection.isClosed { return (connection, 0, state.isClosed) }
            }
            state.nextConnectionID += 1
            return (nil, state.nextConnectionID, state.isClosed)
        }
        if closed { throw PGModelError(.connectionFailed, "the model container's store is closed") }
        if let reused { return reused }
        return try await connect(id: id)
    }

    private func connect(id: Int) async throws -> PostgresConnection {
        do {
            var connection = configuration.connection
            connection.options.connectTimeout = min(connection.options.connectTimeout, requestTimeout)
            return try await PostgresConnection.connect(on: eventLoop, configuration: connection, id: id, logger: logger)
        } catch {
            let mapped = PostgresErrorMapping.map(error)
            throw PGModelError(.connectionFailed,
                "cannot connect to PostgreSQL at \(configuration.host):\(configuration.port) as \(configuration.username): \(mapped.message)",
                sqlState: mapped.sqlState)
        }
    }

    private func release(_ connection: PostgresConnection) {
        let keep = state.withLockedValue { state -> Bool in
            guard !state.isClosed, !connection.isClosed, state.idle.count < Self.maximumIdleConnections else { return false }
            state.idle.append(connection)
            return true
        }
        if !keep, !connection.isClosed {
            connection.close().whenComplete { _ in }
        }
    }
}
