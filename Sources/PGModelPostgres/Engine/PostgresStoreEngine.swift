import Foundation
import Logging
import NIOConcurrencyHelpers
@_spi(PGModelInternals) import PGModelCore
@_spi(PGModelInternals) import PGModelIO
@_spi(PGModelInternals) import PGModelSQL
import PostgresNIO

/// Executes PGModel's Query IR and saves on a PostgreSQL connection. Stateless and Sendable: the direct
/// store calls it as ``Requester/trusted``; the service as each logged-in user, whose statements run as
/// `pgmodel_app` under row-level security.
///
/// ```swift
/// let engine = PostgresStoreEngine(schemaName: "public")
/// try await engine.bootstrap(on: connection)
/// try await engine.prepare(schema, on: connection)
/// let rows = try await engine.fetch(FetchRequest(entity: "Trip"), in: schema, as: .trusted, on: connection)
/// ```
@_spi(PGModelInternals) public struct PostgresStoreEngine: Sendable {
    /// The PostgreSQL schema holding model tables.
    public let schemaName: String
    /// PostgreSQL's own limit on each statement of a service user's request (`statement_timeout`, part
    /// of the user's ``ConnectionScope``): past it the database cancels the statement and the request fails with
    /// `timeout`, while the connection stays usable. `nil` leaves the database's setting.
    public let statementTimeout: Duration?
    /// ``statementTimeout`` as PostgreSQL's setting (`"30000ms"`), formatted once: every service request
    /// states its scope, some twice.
    private let statementTimeoutSetting: String?
    let logger: Logger
    /// Set for an engine working inside a transaction someone else opened (a migration's): its own
    /// transactions become savepoints, so a save inside `willMigrate` commits or rolls back with the
    /// whole migration.
    var isEnclosed = false

    public init(schemaName: String = "public", statementTimeout: Duration? = nil, logger: Logger = Logger(label: "pgmodel.store")) {
        self.schemaName = schemaName
        self.statementTimeout = statementTimeout
        self.statementTimeoutSetting = statementTimeout.map(ConnectionScope.milliseconds)
        self.logger = logger
    }

    /// Applies the system SQL (schema `pgmodel`, users, entities, extensions). Idempotent; serialised
    /// across processes with an advisory lock so concurrent first starts do not race.
    ///
    /// A database where exactly these files were applied already, and whose roles are as they left them
    /// for the connecting role, costs one read instead (``isBootstrapped(on:)``): every container, CLI
    /// call and in-memory store starts with this, and the full script is some sixty statements.
    public func bootstrap(on connection: EngineConnection) async throws {
        if try await isBootstrapped(on: connection) { return }
        try await transaction(on: connection) {
            try await execute(SQLStatement(sql: "SELECT pg_advisory_xact_lock(\(Self.bootstrapLock))"), on: connection)
            for file in SystemSQL.files {
                for statement in SQLScript.statements(file.sql) {
                    try await execute(SQLStatement(sql: statement), on: connection)
                }
            }
            try await execute(SQLStatement(sql: SystemSQL.markAppliedStatement), on: connection)
        }
    }

    /// Whether the system SQL of this build is in place for the connecting role: the marker the last full
    /// bootstrap left on schema `pgmodel` names these exact files, and the role checks of the files' `DO`
    /// blocks (which depend on who connects, not on the files) would pass without changing anything.
    public func isBootstrapped(on connection: EngineConnection) async throws -> Bool {
        let rows = try await query(SQLStatement(sql: SystemSQL.isAppliedQuery, binds: [.string(SystemSQL.marker)]), on: connection)
        guard let row = rows.first else { return false }
        return try row.decode(Bool?.self) ?? false
    }

    /// Validates `schema` and creates or extends its tables, constraints and indexes; records each entity
    /// in `pgmodel.entities` and a version row when anything changed.
    public func prepare(_ schema: SchemaDescription, on connection: EngineConnection) async throws {
        try schema.validate()
        let renderer = try SQLRenderer(schema: schema, schemaName: schemaName)
        // DDL takes table locks while other clients save; PostgreSQL breaks a deadlock by failing one
        // side, and this side is safe to run again from the start.
        var attempt = 0
        while true {
            do {
                return try await prepareOnce(schema, renderer, on: connection)
            } catch let error as PGModelError where error.sqlState == "40P01" && attempt < 4 {
                attempt += 1
                logger.notice("schema preparation met a deadlock; trying again", metadata: ["attempt": "\(attempt)"])
                try await Task.sleep(for: .milliseconds(20 * attempt))
            }
        }
    }

    private func prepareOnce(_ schema: SchemaDescription, _ renderer: SQLRenderer, on connection: EngineConnection) async throws {
        // Every client's start-up re-registers a schema that is already in place: that costs reads and no
        // lock, so it never queues behind another store's registration or migration.
        if try await registration(of: schema, on: connection).isInPlace { return }
        try await transaction(on: connection) {
            // One registration that changes a store at a time, in the whole database: every new table
            // references pgmodel.users, which takes a lock on it that logins and new users queue behind;
            // one such lock at a time, held for one batch of DDL, keeps them moving.
            try await execute(SQLStatement(sql: "SELECT pg_advisory_xact_lock(\(Self.bootstrapLock))"), on: connection)
            // Again under the lock: another process may have registered it meanwhile. Re-registering a
            // schema that is in place must not run DDL: ALTER TABLE and CREATE OR REPLACE VIEW take
            // exclusive locks that deadlock against other clients' saves.
            let (secured, isInPlace) = try await registration(of: schema, on: connection)
            if isInPlace { return }
            let names = Set(schema.entities.map(\.name))
            try await checkTableShapes(secured, tablesOf: names, on: connection)
            // One round trip for all of it: the lock above, and the one on pgmodel.users the new tables'
            // references take, are held for as short as the DDL itself, however busy this process is.
            try await execute(SQLStatement(sql: SQLScript.batch(renderer.createStatements() + secured.securityStatements(tablesOf: names))),
                              on: connection)
            let entities = try schema.entities.map { String(decoding: try Self.encoder.encode($0), as: UTF8.self) }
            let rows = try await query(SQLStatement(sql: """
                INSERT INTO pgmodel.entities (schema_name, name, table_name, description) \
                SELECT $1, e.name, e.table_name, e.description::jsonb FROM unnest($2::text[], $3::text[], $4::text[]) AS e(name, table_name, description) \
                ON CONFLICT (schema_name, name) DO UPDATE SET table_name = EXCLUDED.table_name, description = EXCLUDED.description, updated_at = now() \
                WHERE pgmodel.entities.description IS DISTINCT FROM EXCLUDED.description RETURNING 1
                """, binds: [.string(schemaName), .string(Self.textArray(schema.entities.map(\.name))),
                             .string(Self.textArray(schema.entities.map(\.tableName))), .string(Self.textArray(entities))]), on: connection)
            if !rows.isEmpty {
                let json = String(decoding: try Self.encoder.encode(schema), as: UTF8.self)
                try await execute(SQLStatement(
                    sql: "INSERT INTO pgmodel.schema_versions (schema_name, version, description) VALUES ($1, $2, $3::jsonb)",
                    binds: [.string(schemaName), .string(schema.version), .string(json)]), on: connection)
            }
        }
    }

    /// Where `schema` stands in the store, by reads alone: the renderer of the store's row-level security
    /// with `schema` merged in, and whether `schema` is registered as it is and secured already. Throws
    /// `schema_version_mismatch` for an app older than its store.
    private func registration(of schema: SchemaDescription, on connection: EngineConnection) async throws -> (secured: SQLRenderer, isInPlace: Bool) {
        try await checkVersion(of: schema, on: connection)
        let registered = try await loadSchema(on: connection)
        // Row-level security spans the whole store (the cascade edges a share follows, the shared-ids
        // function): built from every registered entity, so one app's registration never drops
        // another's cascades from the store.
        let secured = try SQLRenderer(schema: registered.merging(schema), schemaName: schemaName)
        guard Self.isRegistered(schema, in: registered) else { return (secured, false) }
        return (secured, try await isSecured(secured, tablesOf: Set(schema.entities.map(\.name)), on: connection))
    }

    /// Whether every entity of `schema` is registered with exactly this description.
    private static func isRegistered(_ schema: SchemaDescription, in registered: SchemaDescription) -> Bool {
        schema.entities.allSatisfy { entity in registered.entity(named: entity.name)?.shape == entity.shape }
    }

    /// Whether the store and the tables of `entities` have the row-level security layout of this
    /// version: the store-wide marker (``SQLRenderer/securityMarker``) is there, and every table is forced
    /// and has the newest per-table policy (`pgmodel_admin_all` with its fingerprint). Tables registered by
    /// an older PGModel (or whose row-level security an admin switched off) get their statements again.
    private func isSecured(_ renderer: SQLRenderer, tablesOf entities: Set<String>, on connection: EngineConnection) async throws -> Bool {
        let tables = renderer.securedTableNames(of: entities)
        let rows = try await query(SQLStatement(sql: """
            SELECT coalesce(obj_description(to_regprocedure($1), 'pg_proc') = $3, false) \
            AND coalesce((SELECT bool_and(c.relrowsecurity AND c.relforcerowsecurity AND EXISTS (SELECT 1 FROM pg_policy p \
            WHERE p.polrelid = c.oid AND p.polname = 'pgmodel_admin_all' AND obj_description(p.oid, 'pg_policy') = $4)) \
            FROM unnest($2::text[]) AS t(name) LEFT JOIN pg_class c ON c.oid = to_regclass(t.name)), true)
            """, binds: [.string(renderer.securityMarkerFunction),
                         .string(PostgresStoreEngine.textArray(tables)),
                         .string(renderer.securityMarker),
                         .string(SQLRenderer.adminPolicyComment)]), on: connection)
        return try rows.first?.decode(Bool?.self) ?? false
    }

    /// A PostgreSQL text array literal of `values`.
    static func textArray(_ values: [String]) -> String {
        "{" + values.map { "\"" + $0.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"") + "\"" }.joined(separator: ",") + "}"
    }

    /// Every entity registered in this engine's PostgreSQL schema.
    public func loadSchema(on connection: EngineConnection) async throws -> SchemaDescription {
        let rows = try await query(SQLStatement(
            sql: "SELECT description::text FROM pgmodel.entities WHERE schema_name = $1 ORDER BY name",
            binds: [.string(schemaName)]), on: connection)
        var entities: [EntityDescription] = []
        for row in rows {
            let text = try row.decode(String.self)
            do {
                entities.append(try JSONDecoder().decode(EntityDescription.self, from: Data(text.utf8)))
            } catch {
                throw PGModelError(.invalidSchema, "a registered entity in pgmodel.entities cannot be decoded")
            }
        }
        return SchemaDescription(entities: entities)
    }

    /// Drops this engine's PostgreSQL schema with every model table in it and forgets its registered
    /// entities: the end of an `isStoredInMemoryOnly` container.
    public func dropSchema(on connection: EngineConnection) async throws {
        try await transaction(on: connection) {
            try await execute(SQLStatement(sql: "DROP SCHEMA IF EXISTS \(Naming.quoted(schemaName)) CASCADE"), on: connection)
            try await execute(SQLStatement(sql: "DELETE FROM pgmodel.entities WHERE schema_name = $1", binds: [.string(schemaName)]), on: connection)
        }
    }

    static let bootstrapLock: Int64 = 0x7067_6d6f_6465_6c   // "pgmodel"

    static let encoder: JSONEncoder = {
        let e = JSONEncoder()
        e.outputFormatting = [.sortedKeys]
        return e
    }()

    // MARK: Execution

    func query(_ statement: SQLStatement, on connection: EngineConnection, model: String? = nil) async throws -> [PostgresRow] {
        connection.statementLog?.record(statement.sql)
        if let tracing = connection.statementTracing {
            return try await tracing.run(statement.sql, rows: { $0.count }) { try await untracedQuery(statement, on: connection, model: model) }
        }
        return try await untracedQuery(statement, on: connection, model: model)
    }

    /// ``query(_:on:model:)`` without its span.
    private func untracedQuery(_ statement: SQLStatement, on connection: EngineConnection, model: String?) async throws -> [PostgresRow] {
        do {
            let query = try PostgresValueCoding.query(statement)
            if let budget = connection.budget.maxResultBytes {
                // Counted row by row as they arrive, so a result past the budget is never read whole.
                let logger = logger
                let postgres = connection.connection
                let read: @Sendable () async throws -> [PostgresRow] = {
                    var rows: [PostgresRow] = []
                    var bytes = 0
                    for try await row in try await postgres.query(query, logger: logger) {
                        try Self.append(row, to: &rows, bytes: &bytes, budget: budget, model: model)
                    }
                    return rows
                }
                guard let watch = connection.watch else { return try await read() }
                // Under a deadline: awaited through its watch, as every statement (see StatementWatch).
                let promise = connection.eventLoop.makePromise(of: [PostgresRow].self)
                Task(executorPreference: EventLoopTaskExecutor(eventLoop: connection.eventLoop)) {
                    do { promise.succeed(try await read()) } catch { promise.fail(error) }
                }
                return try await watch.await(promise.futureResult)
            }
            guard let watch = connection.watch else {
                let sequence = try await connection.connection.query(query, logger: logger)
                var rows: [PostgresRow] = []
                for try await row in sequence { rows.append(row) }
                return rows
            }
            // Under a deadline: awaited through its watch, so a statement lost with a closed
            // connection still ends (see StatementWatch).
            return try await watch.await(connection.connection.query(query, logger: logger)).rows
        } catch {
            throw PostgresErrorMapping.map(error, model: model)
        }
    }

    /// Runs a fetch's select as a named prepared statement (``PreparedSelectRegistry``), parsed once per
    /// connection instead of on every call; unnamed, as ``query(_:on:model:)``, inside an enclosing
    /// transaction or once every slot is taken.
    func select(_ statement: SQLStatement, on connection: EngineConnection, model: String? = nil) async throws -> [PostgresRow] {
        guard Self.usesPreparedSelects, connection.usesNamedStatements, !isEnclosed,
              let slot = PreparedSelectRegistry.shared.slot(sql: statement.sql, types: PostgresValueCoding.bindTypes(statement)) else {
            return try await query(statement, on: connection, model: model)
        }
        connection.statementLog?.record(statement.sql)
        if let tracing = connection.statementTracing {
            return try await tracing.run(statement.sql, rows: { $0.count }) { try await preparedSelect(statement, slot: slot, on: connection, model: model) }
        }
        return try await preparedSelect(statement, slot: slot, on: connection, model: model)
    }

    /// ``select(_:on:model:)`` of a statement prepared in `slot`, without its span.
    private func preparedSelect(_ statement: SQLStatement, slot: Int, on connection: EngineConnection, model: String?) async throws -> [PostgresRow] {
        let registry = PreparedSelectRegistry.shared
        let wasPrepared = registry.isPrepared(slot, on: connection.connection)
        do {
            let bindings = try PostgresValueCoding.query(statement).binds
            let rows: [PostgresRow]
            if let watch = connection.watch {
                // Under a deadline: awaited through its watch, as every statement (see StatementWatch).
                rows = try await watch.await(PreparedSelectSlots.start(slot: slot, bindings: bindings, budget: connection.budget.maxResultBytes, on: connection.connection, logger: logger))
            } else {
                rows = try await PreparedSelectSlots.rows(slot: slot, bindings: bindings, budget: connection.budget.maxResultBytes, on: connection.connection, logger: logger)
            }
            if !wasPrepared { registry.markPrepared(slot, on: connection.connection) }
            return rows
        } catch {
            let mapped = PostgresErrorMapping.map(error, model: model)
            if Self.leavesStatementUnusable(mapped, wasPrepared: wasPrepared) { try? await connection.connection.close() }
            throw mapped
        }
    }

    /// Whether fetches run as named prepared statements: yes unless `PGMODEL_PREPARED_STATEMENTS=off`
    /// (for a connection pooler in transaction mode, such as PgBouncer's, where a session's statements
    /// do not follow it from one transaction to the next).
    static let usesPreparedSelects = ProcessInfo.processInfo.environment["PGMODEL_PREPARED_STATEMENTS"] != "off"

    /// Whether a failed prepared select leaves its statement unusable on its connection, which must then
    /// be closed (the pool replaces it; a new connection prepares the statement afresh). PostgresNIO keeps
    /// a failed preparation failed for good (its table did not exist yet, or a lock held it past the
    /// statement timeout while it was parsed); PostgreSQL keeps a prepared plan whose result type a
    /// migration changed (0A000) or that someone deallocated (26000) failing.
    static func leavesStatementUnusable(_ error: PGModelError, wasPrepared: Bool) -> Bool {
        !wasPrepared || error.sqlState == nil || error.sqlState == "0A000" || error.sqlState?.hasPrefix("26") == true
    }

    /// The session scope `requester`'s statements need (see ``ConnectionScope``).
    ///
    /// ```swift
    /// try await pool.withConnection(scope: engine.scope(for: requester), deadline: .seconds(30), operation: "fetch") { … }
    /// ```
    public func scope(for requester: Requester) -> ConnectionScope {
        guard case .user(let user) = requester else { return .trusted }
        return ConnectionScope(userID: user.id, isAdmin: user.isAdmin, statementTimeoutSetting: statementTimeoutSetting)
    }

    /// Runs `body` (reads) as `requester`. The direct store's statements and a service user's on a
    /// pooled connection the pool vouches is already in their scope (``EngineConnection``) run as they are: under READ COMMITTED
    /// a transaction adds nothing to reads. On any other connection a service user's statements run inside
    /// a transaction of their own that takes on their identity with `set_config(…, true)`, which ends with it.
    func scoped<T>(_ requester: Requester, on connection: EngineConnection, _ body: () async throws -> T) async throws -> T {
        guard case .user = requester, !connection.holds(scope(for: requester)) else { return try await body() }
        return try await transaction(as: requester, on: connection, body)
    }

    /// Inside an open transaction: takes on `requester`'s identity for the rest of it — `set_config('role',
    /// 'pgmodel_app', true)` (`pgmodel_admin` for an admin), `pgmodel.user_id` and `statement_timeout` for a
    /// service user, whatever role the service logged in as (a superuser included); nothing for the direct
    /// store, nor on a pooled connection whose session is already in the requester's scope.
    func enterScope(of requester: Requester, on connection: EngineConnection) async throws {
        guard let statement = scopeStatement(of: requester, on: connection) else { return }
        try await execute(statement, on: connection)
    }

    /// The statement ``enterScope(of:on:)`` sends, `nil` when it sends none.
    private func scopeStatement(of requester: Requester, on connection: EngineConnection) -> SQLStatement? {
        let scope = scope(for: requester)
        guard let userID = scope.userID, let role = scope.role, !connection.holds(scope) else { return nil }
        var sql = "SELECT set_config('role', $1, true), set_config('pgmodel.user_id', $2, true)"
        var binds: [PGValue] = [.string(role), .string(userID.uuidString.lowercased())]
        if let timeout = scope.statementTimeout {
            sql += ", set_config('statement_timeout', $3, true)"
            binds.append(.string(timeout))
        }
        return SQLStatement(sql: sql, binds: binds)
    }

    /// `BEGIN`, then `requester`'s identity for the transaction (``enterScope(of:on:)``). The two are sent
    /// back to back: PostgresNIO writes the second the moment the first completes, so a read that must
    /// take on its user's identity in a transaction of its own (behind a pooler in transaction mode) does
    /// not wake its task between them. Should `BEGIN` fail, the identity statement ran outside any
    /// transaction, where a local setting ends with the statement itself; the caller rolls back.
    private func begin(as requester: Requester, on connection: EngineConnection) async throws {
        guard let identity = scopeStatement(of: requester, on: connection) else {
            try await execute(SQLStatement(sql: "BEGIN"), on: connection)
            return
        }
        let begun = try start(SQLStatement(sql: "BEGIN"), on: connection)
        do {
            try await execute(identity, on: connection)
        } catch {
            try? await Self.finish(begun, watch: connection.watch, model: nil)
            throw error
        }
        try await Self.finish(begun, watch: connection.watch, model: nil)
    }

    /// Sends `statement` without waiting for it (``StatementPipeline``); ``finish(_:watch:model:)`` awaits it.
    func start(_ statement: SQLStatement, on connection: EngineConnection, model: String? = nil) throws -> EventLoopFuture<PostgresQueryResult> {
        connection.statementLog?.record(statement.sql)
        do {
            return connection.connection.query(try PostgresValueCoding.query(statement), logger: logger)
        } catch {
            throw PostgresErrorMapping.map(error, model: model)
        }
    }

    /// Awaits a statement ``start(_:on:model:)`` sent: through the deadline's watch when there is one, as
    /// ``query(_:on:model:)`` does.
    static func finish(_ result: EventLoopFuture<PostgresQueryResult>, watch: StatementWatch?, model: String?) async throws {
        do {
            if let watch {
                _ = try await watch.await(result)
            } else {
                _ = try await result.get()
            }
        } catch {
            throw PostgresErrorMapping.map(error, model: model)
        }
    }

    /// ``finish(_:watch:model:)`` that returns the statement's rows.
    static func finishRows(_ result: EventLoopFuture<PostgresQueryResult>, watch: StatementWatch?, model: String?) async throws -> [PostgresRow] {
        do {
            if let watch { return try await watch.await(result).rows }
            return try await result.get().rows
        } catch {
            throw PostgresErrorMapping.map(error, model: model)
        }
    }

    func execute(_ statement: SQLStatement, on connection: EngineConnection, model: String? = nil) async throws {
        _ = try await query(statement, on: connection, model: model)
    }

    /// Runs `body` between BEGIN and COMMIT; any error rolls back and is rethrown as PGModelError, and so
    /// does a task cancelled by the time `body` is done (`timeout`: the service's deadline gave up on it).
    /// For a service user the transaction first takes on their identity (``enterScope(of:on:)``).
    ///
    /// Without an identity to take on (the direct store, a connection already in the requester's scope)
    /// BEGIN is sent without waiting for it: PostgresNIO sends the body's first statement the moment BEGIN
    /// completes, so the transaction's start costs no wake-up of this task. (A BEGIN that fails leaves
    /// the connection broken or its transaction aborted, so the body's statements fail too.) `afterCommit`,
    /// asked once the body is done, may name a statement sent right behind COMMIT, outside the transaction
    /// (a save's doorbell): it runs as soon as the commit is done, and its failure is logged, not thrown.
    /// `committed` gets the follow-up's rows (none when it failed).
    func transaction<T>(as requester: Requester = .trusted, on connection: EngineConnection,
                        outstanding: () -> [StatementPipeline.Outstanding] = { [] },
                        afterCommit: () -> SQLStatement? = { nil },
                        committed: ([PostgresRow]) -> Void = { _ in },
                        _ body: () async throws -> T) async throws -> T {
        if isEnclosed {
            try await execute(SQLStatement(sql: "SAVEPOINT pgmodel_enclosed"), on: connection)
            do {
                let result = try await body()
                try await execute(SQLStatement(sql: "RELEASE SAVEPOINT pgmodel_enclosed"), on: connection)
                return result
            } catch {
                _ = try? await query(SQLStatement(sql: "ROLLBACK TO SAVEPOINT pgmodel_enclosed"), on: connection)
                throw PostgresErrorMapping.map(error)
            }
        }
        // Without an identity to take on, BEGIN is not waited for before the body. With one, BEGIN and
        // the identity are both done before the body runs: none of its statements may run as the login role.
        let unawaitedBegin = scopeStatement(of: requester, on: connection) == nil
            ? try start(SQLStatement(sql: "BEGIN"), on: connection) : nil
        do {
            if unawaitedBegin == nil { try await begin(as: requester, on: connection) }
            let result = try await body()
            // BEGIN and the statements the body sent ahead are awaited with COMMIT, which PostgreSQL
            // runs after them: a small transaction wakes its task once. Should one of them have failed,
            // PostgreSQL ends the transaction at COMMIT with a rollback, and that failure is thrown.
            var pending = outstanding()
            if let unawaitedBegin { pending.insert(StatementPipeline.Outstanding(result: unawaitedBegin, watch: connection.watch, model: nil), at: 0) }
            // The service's request deadline cancels the work it gives up on: its client was told
            // `timeout`, so the transaction must not commit after all.
            if Task.isCancelled {
                try? await StatementPipeline.finish(pending)
                throw PGModelError(.timeout, "the transaction was rolled back before COMMIT: its request was cancelled at its deadline")
            }
            let commit = try start(SQLStatement(sql: "COMMIT"), on: connection)
            let next = afterCommit().flatMap { try? start($0, on: connection) }
            // The statement queued last is answered last: once it is, so is everything before it, and
            // awaiting those does not suspend the task again. (After a failed statement, COMMIT rolls back
            // and the doorbell rings for nothing: listeners find no new history.)
            var followUp: Result<[PostgresRow], any Error>?
            if let next {
                do {
                    followUp = .success(try await Self.finishRows(next, watch: connection.watch, model: nil))
                } catch {
                    followUp = .failure(error)
                }
            }
            var commitFailure: (any Error)?
            do {
                try await Self.finish(commit, watch: connection.watch, model: nil)
            } catch {
                commitFailure = error
            }
            try await StatementPipeline.finish(pending)
            if let commitFailure { throw commitFailure }
            switch followUp {
            case .success(let rows): committed(rows)
            case .failure(let error):
                logger.warning("the statement after a commit failed", metadata: ["schema": "\(schemaName)", "error": "\(error)"])
            case nil: break
            }
            return result
        } catch {
            // BEGIN's own failure, when it failed, is what broke the statements after it.
            var reported = error
            if let unawaitedBegin {
                do {
                    try await Self.finish(unawaitedBegin, watch: nil, model: nil)
                } catch let beginFailure {
                    reported = beginFailure
                }
            }
            await rollback(on: connection)
            throw PostgresErrorMapping.map(reported)
        }
    }

    /// Ends a failed transaction. A connection whose ROLLBACK fails is in an unknown state (perhaps still
    /// inside the transaction, where a later session-level `set_config` would be undone with it), so it
    /// is closed and the pool never hands it out again.
    func rollback(on connection: EngineConnection) async {
        do {
            try await execute(SQLStatement(sql: "ROLLBACK"), on: connection)
        } catch {
            try? await connection.connection.close()
        }
    }
}
