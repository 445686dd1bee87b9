import Foundation
import Logging
import NIOConcurrencyHelpers
import NIOCore
@_spi(PGModelInternals) import PGModelCore
@_spi(PGModelInternals) import PGModelIO
@_spi(PGModelInternals) import PGModelSQL
import PostgresNIO
import Tracing

/// The one adapter between PGModel and the store engine, for the direct store and the server alike:
/// one connection pool (``ConnectionPool``), one bootstrapping of the system tables, one schema source
/// (``SchemaRegistry``, the database's registered entities), one deadline rule — and every call says
/// who is asking (``Requester``), from which the SQL's row visibility follows.
///
/// The direct store calls it as ``Requester/trusted``; the server as each logged-in user.
///
/// ```swift
/// let gateway = DatabaseGateway(configuration: configuration, maximumConnections: 10,
///                               requestTimeout: .seconds(30), eventLoopGroup: group, logger: logger)
/// try await gateway.prepare(schema, as: .trusted)
/// let rows = try await gateway.fetch(FetchRequest(entity: "Trip"), as: .trusted)
/// ```
package final class DatabaseGateway: Sendable {
    package let configuration: PostgresStoreConfiguration
    package let engine: PostgresStoreEngine
    package let pool: ConnectionPool
    /// The server's separate connections for password checks, so logins never queue behind data
    /// requests; `nil` (the direct store) checks on ``pool``.
    let loginPool: ConnectionPool?
    /// The streaming standbys fetches, counts and id reads may go to (``ReplicaSet``); `nil` without any.
    package let replicas: ReplicaSet?
    package let registry = SchemaRegistry()
    /// Every call's deadline, waiting for a connection included (shortened by a client's own deadline,
    /// ``RequestBudget/deadline``).
    package let requestTimeout: TimeAmount
    let eventLoopGroup: any EventLoopGroup
    let logger: Logger
    private let isBootstrapped = NIOLockedValueBox(false)
    /// Where store calls' spans go; nil when tracing is off (``DatabaseTracing/activeTracer(_:)``).
    let tracer: (any Tracer)?
    /// `db.namespace` of its spans: the database and the schema.
    let tracingNamespace: String

    package init(configuration: PostgresStoreConfiguration, maximumConnections: Int, maximumLoginConnections: Int = 0,
                 requestTimeout: TimeAmount, statementTimeout: Duration? = nil, eventLoopGroup: any EventLoopGroup,
                 statementLog: StatementLog? = nil, logger: Logger) {
        self.configuration = configuration
        self.engine = PostgresStoreEngine(schemaName: configuration.schemaName, statementTimeout: statementTimeout, logger: logger)
        let tracer = DatabaseTracing.activeTracer(configuration.tracer)
        let tracingNamespace = DatabaseTracing.namespace(database: configuration.database, schema: configuration.schemaName)
        self.tracer = tracer
        self.tracingNamespace = tracingNamespace
        self.pool = ConnectionPool(configuration: configuration, maximumConnections: maximumConnections,
                                   maximumIdleConnections: min(maximumConnections, 4), eventLoopGroup: eventLoopGroup,
                                   statementLog: statementLog,
                                   statementTracing: tracer.map { StatementTracing(tracer: $0, namespace: tracingNamespace) },
                                   logger: logger)
        self.replicas = ReplicaSet(configuration: configuration, maximumConnections: maximumConnections, eventLoopGroup: eventLoopGroup,
                                   statementLog: statementLog,
                                   statementTracing: tracer.map { StatementTracing(tracer: $0, namespace: tracingNamespace) },
                                   logger: logger)
        self.loginPool = maximumLoginConnections > 0
            ? ConnectionPool(configuration: configuration, maximumConnections: maximumLoginConnections,
                             maximumIdleConnections: maximumLoginConnections, eventLoopGroup: eventLoopGroup,
                             metricsName: "login", logger: logger)
            : nil
        self.requestTimeout = requestTimeout
        self.eventLoopGroup = eventLoopGroup
        self.logger = logger
    }

    /// The deadline of schema work, which may take longer than a request: within what is left of the
    /// client's.
    func schemaTimeout(_ budget: RequestBudget) -> TimeAmount {
        budget.timeout(within: ConnectionDeadline.schemaTimeout(for: requestTimeout))
    }

    /// The deadline of a call: ``requestTimeout``, or what is left of the client's when that ends sooner.
    func callTimeout(_ budget: RequestBudget) -> TimeAmount { budget.timeout(within: requestTimeout) }

    /// Applies the system SQL once, then loads the registered entities: what a server does at start.
    @discardableResult
    package func loadRegisteredSchema(budget: RequestBudget = RequestBudget()) async throws -> SchemaDescription {
        try await pool.withConnection(scope: .trusted, deadline: schemaTimeout(budget), operation: "loading the schema") { connection in
            try await self.bootstrapIfNeeded(on: connection)
            let schema = try await self.engine.loadSchema(on: connection)
            self.registry.replace(versions: try await self.engine.recordedVersions(on: connection))
            self.registry.replace(with: schema)
            return schema
        }
    }

    /// Creates or extends the tables of `schema` and returns every registered entity afterwards.
    ///
    /// Only admins (and the direct store) create or change tables. A user's registration succeeds when
    /// everything it names is registered with the same shape, as every client's start-up does, and
    /// otherwise fails with `forbidden` naming the first difference; nothing is altered.
    package func prepare(_ schema: SchemaDescription, as requester: Requester, budget: RequestBudget = RequestBudget()) async throws -> SchemaDescription {
        try await traced("register", entity: nil) {
            try schema.validate()
            return try await pool.withConnection(scope: .trusted, deadline: schemaTimeout(budget), operation: "creating the schema") { connection in
                try await self.bootstrapIfNeeded(on: connection)
                guard requester.isAdmin else {
                    try await self.engine.checkVersion(of: schema, on: connection)
                    let registered = try await self.engine.loadSchema(on: connection)
                    self.registry.replace(with: registered)
                    if let difference = registered.firstDifference(registering: schema) {
                        throw PGModelError(.forbidden, "only an admin may create or change tables: \(difference)", model: difference.entity)
                    }
                    return registered
                }
                try await self.engine.prepare(schema, on: connection)
                let registered = try await self.engine.loadSchema(on: connection)
                self.registry.replace(with: registered)
                return registered
            }
        }
    }

    /// Rows matching `request`. With read replicas configured the read may run on a standby that has
    /// replayed `readAfter` (the caller's last commit; `nil`: none), else on the primary.
    package func fetch(_ request: FetchRequest, as requester: Requester, budget: RequestBudget = RequestBudget(),
                       readAfter: LogSequenceNumber? = nil) async throws -> [FetchedRow] {
        try await traced("fetch", entity: request.entity, rows: { $0.count }) {
            let (schema, templates) = try await registry.schemaAndTemplates(covering: [request.entity]) { [self] in try await loadRegisteredSchema(budget: budget) }
            return try await read(after: readAfter, as: requester, budget: budget, operation: "fetch of \(request.entity)") {
                try await self.engine.fetch(request, in: schema, as: requester, on: $0, templates: templates)
            }
        }
    }

    /// ``fetch(_:as:budget:readAfter:)`` as one table of rows.
    package func fetchTable(_ request: FetchRequest, as requester: Requester, budget: RequestBudget = RequestBudget(),
                            readAfter: LogSequenceNumber? = nil) async throws -> FetchedTable {
        try await traced("fetch", entity: request.entity, rows: { $0.rows.count }) {
            let (schema, templates) = try await registry.schemaAndTemplates(covering: [request.entity]) { [self] in try await loadRegisteredSchema(budget: budget) }
            return try await read(after: readAfter, as: requester, budget: budget, operation: "fetch of \(request.entity)") {
                try await self.engine.fetchTable(request, in: schema, as: requester, on: $0, templates: templates)
            }
        }
    }

    /// How many rows match `request`; on a standby as ``fetch(_:as:budget:readAfter:)``.
    package func count(_ request: FetchRequest, as requester: Requester, budget: RequestBudget = RequestBudget(),
                       readAfter: LogSequenceNumber? = nil) async throws -> Int {
        try await traced("count", entity: request.entity) {
            let schema = try await schema(covering: [request.entity], budget: budget)
            return try await read(after: readAfter, as: requester, budget: budget, operation: "count of \(request.entity)") {
                try await self.engine.count(request, in: schema, as: requester, on: $0)
            }
        }
    }

    /// The ids of the rows matching `request`; on a standby as ``fetch(_:as:budget:readAfter:)``.
    package func fetchIdentifiers(_ request: FetchRequest, as requester: Requester, budget: RequestBudget = RequestBudget(),
                                  readAfter: LogSequenceNumber? = nil) async throws -> [RowReference] {
        try await traced("ids", entity: request.entity, rows: { $0.count }) {
            let schema = try await schema(covering: [request.entity], budget: budget)
            return try await read(after: readAfter, as: requester, budget: budget, operation: "identifiers of \(request.entity)") {
                try await self.engine.fetchIdentifiers(request, in: schema, as: requester, on: $0)
            }
        }
    }

    /// Runs a read on a standby that has replayed `position` (``ReplicaSet``), or on the primary.
    private func read<T: Sendable>(after position: LogSequenceNumber?, as requester: Requester, budget: RequestBudget, operation: String,
                                   _ body: @escaping @Sendable (EngineConnection) async throws -> T) async throws -> T {
        let scope = engine.scope(for: requester)
        let deadline = callTimeout(budget)
        guard let replicas else {
            return try await pool.withConnection(scope: scope, deadline: deadline, budget: budget, operation: operation, body)
        }
        return try await replicas.read(after: position, scope: scope, deadline: deadline, budget: budget, operation: operation,
                                       onPrimary: { try await pool.withConnection(scope: scope, deadline: callTimeout(budget), budget: budget, operation: operation, body) },
                                       body)
    }

    /// The primary's WAL position now (`pg_current_wal_insert_lsn()`): past everything committed so far,
    /// schema work included. A caller that changed the schema reads after it.
    ///
    /// ```swift
    /// let position = try await gateway.currentWALPosition()
    /// ```
    package func currentWALPosition(budget: RequestBudget = RequestBudget()) async throws -> LogSequenceNumber? {
        try await pool.withConnection(scope: .trusted, deadline: callTimeout(budget), operation: "WAL position") { connection in
            let rows = try await self.engine.query(SQLStatement(sql: "SELECT pg_current_wal_insert_lsn()::text"), on: connection)
            return try rows.first?.decode(String?.self).flatMap(LogSequenceNumber.init)
        }
    }

    package func save(_ request: SaveRequest, as requester: Requester, budget: RequestBudget = RequestBudget()) async throws -> SaveResult {
        try await traced("save", entity: nil) {
            let schema = try await schema(covering: request.entityNames, budget: budget)
            return try await pool.withConnection(scope: engine.scope(for: requester), deadline: callTimeout(budget), budget: budget, operation: "save") {
                try await self.engine.save(request, in: schema, as: requester, on: $0)
            }
        }
    }

    /// The shares of `record` the requester may see.
    package func sharing(of record: RowReference, as requester: Requester, budget: RequestBudget = RequestBudget()) async throws -> RecordSharing {
        try await traced("shares", entity: record.entity) {
            let schema = try await schema(covering: [record.entity], budget: budget)
            return try await pool.withConnection(scope: engine.scope(for: requester), deadline: callTimeout(budget), budget: budget, operation: "shares of \(record.entity)") {
                try await self.engine.sharing(of: record, in: schema, as: requester, on: $0)
            }
        }
    }

    /// History transactions matching `request` (``PostgresStoreEngine/fetchHistory(_:as:on:)``).
    ///
    /// With `onStandby` and read replicas configured, the horizon is taken on the primary together with
    /// the primary's WAL position at that moment, and the page is read on a standby that has replayed
    /// that position and `readAfter` (the caller's last commit), else on the primary: the page is the
    /// same gap-free prefix either way. Without `onStandby` (the service's subscription fan-out) all of it
    /// runs on the primary.
    ///
    /// ```swift
    /// let page = try await gateway.fetchHistory(HistoryRequest(limit: 50), as: .trusted, readAfter: lastCommit, onStandby: true)
    /// ```
    package func fetchHistory(_ request: HistoryRequest, as requester: Requester, budget: RequestBudget = RequestBudget(),
                              readAfter: LogSequenceNumber? = nil, onStandby: Bool = false) async throws -> HistoryPage {
        try await traced("history", entity: nil, rows: { $0.transactions.count }) {
            let scope = engine.scope(for: requester)
            guard onStandby, replicas != nil else {
                return try await pool.withConnection(scope: scope, deadline: callTimeout(budget), budget: budget, operation: "history fetch") {
                    try await self.engine.fetchHistory(request, as: requester, on: $0)
                }
            }
            try request.validate()
            // The horizon's lock exists on the primary only; it is one short statement there.
            let (horizon, walPosition) = try await pool.withConnection(scope: scope, deadline: callTimeout(budget), budget: budget,
                                                                      operation: "history horizon") {
                try await self.engine.historyHorizonAndWALPosition(on: $0)
            }
            // Without the primary's position nothing says how far a standby must be: read on the primary.
            guard let walPosition else {
                return try await pool.withConnection(scope: scope, deadline: callTimeout(budget), budget: budget, operation: "history fetch") {
                    try await self.engine.fetchHistory(request, through: horizon, as: requester, on: $0)
                }
            }
            return try await read(after: LogSequenceNumber.latest(walPosition, readAfter), as: requester, budget: budget, operation: "history fetch") {
                try await self.engine.fetchHistory(request, through: horizon, as: requester, on: $0)
            }
        }
    }

    package func deleteHistory(_ request: HistoryRequest, as requester: Requester, budget: RequestBudget = RequestBudget()) async throws -> Int {
        try await traced("deleteHistory", entity: nil) {
            try await pool.withConnection(scope: engine.scope(for: requester), deadline: callTimeout(budget), budget: budget, operation: "history delete") {
                try await self.engine.deleteHistory(request, as: requester, on: $0)
            }
        }
    }

    /// Checks a service user's credentials.
    package func authenticate(user: String, password: String) async throws -> AuthenticatedUser {
        try await (loginPool ?? pool).withConnection(scope: .trusted, deadline: requestTimeout, operation: "login") {
            try await self.engine.authenticate(user: user, password: password, on: $0)
        }
    }

    /// Drops the gateway's PostgreSQL schema and its registered entities (an in-memory store's end).
    package func dropSchema() async throws {
        try await pool.withConnection(scope: .trusted, deadline: schemaTimeout(RequestBudget()), operation: "dropping the schema") {
            try await self.engine.dropSchema(on: $0)
        }
    }

    /// Closes the pool's connections. Later calls throw `connection_failed`.
    package func close() async {
        await replicas?.close()
        await loginPool?.close()
        await pool.close()
    }

    private func bootstrapIfNeeded(on connection: EngineConnection) async throws {
        if isBootstrapped.withLockedValue({ $0 }) { return }
        try await engine.bootstrap(on: connection)
        isBootstrapped.withLockedValue { $0 = true }
    }

    private func schema(covering names: Set<String>, budget: RequestBudget) async throws -> SchemaDescription {
        try await registry.schema(covering: names) { [self] in try await loadRegisteredSchema(budget: budget) }
    }
}
