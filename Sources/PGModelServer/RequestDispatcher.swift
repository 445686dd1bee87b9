import Foundation
import Logging
import PGModelCore
import PGModelPostgres
import PGModelWire
import PostgresNIO

/// Runs logged-in requests against the store engine, each under its user's ``AccessScope``, and turns
/// every outcome into exactly one ``Response``. Never throws: errors become error responses.
///
/// ```swift
/// let response = await dispatcher.execute(request, as: user)
/// ```
struct RequestDispatcher: Sendable {
    let engine: PostgresStoreEngine
    let client: PostgresClient
    let registry: SchemaRegistry
    let logger: Logger
    /// Every request's deadline: past it the request is answered `timeout` and its database connection
    /// closed, whether PostgreSQL stalled, vanished mid-statement or the pool has no connection to give.
    var requestTimeout: Duration = .seconds(30)

    /// Checks `hello`'s credentials.
    func authenticate(_ hello: HelloPayload) async -> Result<SessionUser, WireError> {
        do {
            let user = try await withDeadline("hello", requestTimeout) { connection in
                try await engine.authenticate(user: hello.user, password: hello.password, on: connection)
            }
            logger.info("user logged in", metadata: ["user": "\(user.name)", "admin": "\(user.isAdmin)"])
            return .success(SessionUser(id: user.id, name: user.name, isAdmin: user.isAdmin))
        } catch {
            let wire = wireError(error, operation: .hello)
            logger.notice("login failed", metadata: ["user": "\(hello.user)", "code": "\(wire.code)"])
            return .failure(wire)
        }
    }

    /// Runs `request` as `user`.
    func execute(_ request: Request, as user: SessionUser) async -> Response {
        let scope = AccessScope(userID: user.id, isAdmin: user.isAdmin, userName: user.name)
        let started = ContinuousClock.now
        let result: Result<ResponseResult, WireError>
        do {
            // Registration creates tables and indexes: it may take longer than a request.
            let timeout = request.operation.name == .register ? max(requestTimeout, ConnectionDeadline.minimumSchemaDuration) : requestTimeout
            let operation = request.operation
            result = .success(try await Deadline(timeout, operation: "'\(operation.name.rawValue)'").run { [self] in
                try await run(operation, scope: scope, timeout: timeout)
            })
        } catch {
            result = .failure(wireError(error, operation: request.operation.name))
        }
        let elapsed = (ContinuousClock.now - started).components
        let milliseconds = elapsed.seconds * 1000 + elapsed.attoseconds / 1_000_000_000_000_000
        var metadata: Logger.Metadata = [
            "op": "\(request.operation.name.rawValue)", "id": "\(request.id)", "user": "\(user.name)",
            "ms": "\(milliseconds)",
        ]
        if case .failure(let error) = result { metadata["code"] = "\(error.code)" }
        logger.debug("request", metadata: metadata)
        return Response(id: request.id, result: result)
    }

    private func run(_ operation: Request.Operation, scope: AccessScope, timeout: Duration) async throws -> ResponseResult {
        let name = "'\(operation.name.rawValue)'"
        func withConnection<T: Sendable>(_ body: @Sendable (PostgresConnection) async throws -> T) async throws -> T {
            try await withDeadline(name, timeout, body)
        }
        switch operation {
        case .register(let schema):
            try schema.validate()
            let registered = try await withConnection { connection in
                try await engine.prepare(schema, on: connection)
                return try await engine.loadSchema(on: connection)
            }
            await registry.replace(with: registered)
            return .registered(entities: schema.entities.map(\.name))
        case .fetch(let request):
            let schema = try await schema(covering: [request.entity])
            return .rows(try await withConnection { connection in
                try await engine.fetch(request, in: schema, scope: scope, on: connection)
            })
        case .count(let request):
            let schema = try await schema(covering: [request.entity])
            return .count(try await withConnection { connection in
                try await engine.count(request, in: schema, scope: scope, on: connection)
            })
        case .ids(let request):
            let schema = try await schema(covering: [request.entity])
            return .ids(try await withConnection { connection in
                try await engine.fetchIdentifiers(request, in: schema, scope: scope, on: connection)
            })
        case .save(let request):
            let names = Set(request.inserts.map(\.entity) + request.updates.map(\.entity) + request.deletes.map(\.entity))
            let schema = try await schema(covering: names)
            return .saved(try await withConnection { connection in
                try await engine.save(request, in: schema, scope: scope, on: connection)
            })
        case .history(let request):
            // The engine filters by the scope: a non-admin gets only the changes of their own rows.
            return .history(try await withConnection { connection in
                try await engine.fetchHistory(request, scope: scope, on: connection)
            })
        case .deleteHistory(let request):
            // History is shared by every user of the schema: a transaction may hold several users'
            // changes, so no per-user delete leaves the log consistent for the others. Admins only.
            guard scope.isAdmin else {
                throw PGModelError(.forbidden, "only an admin may delete history")
            }
            return .count(try await withConnection { connection in
                try await engine.deleteHistory(request, scope: scope, on: connection)
            })
        case .hello, .ping, .bye, .subscribe, .unsubscribe:
            // The session (state machine and subscriptions) answers these itself.
            throw PGModelError(.internalError, "'\(operation.name.rawValue)' reached the store dispatcher")
        }
    }

    private func schema(covering names: Set<String>) async throws -> SchemaDescription {
        try await registry.schema(covering: names) { [self] in
            try await withDeadline("loading the schema", requestTimeout) { connection in try await engine.loadSchema(on: connection) }
        }
    }

    /// Runs `body` on a pooled connection; past `timeout` the connection is closed (failing its statement,
    /// and the pool drops it) and the call throws `timeout`.
    private func withDeadline<T: Sendable>(_ operation: String, _ timeout: Duration,
                                           _ body: @Sendable (PostgresConnection) async throws -> T) async throws -> T {
        let deadline = ConnectionDeadline(ConnectionDeadline.timeAmount(timeout), operation: operation)
        return try await client.withConnection { connection in try await deadline.run(on: connection, body) }
    }

    /// The wire form of any error; errors that are not PGModelError are logged and reported without detail.
    private func wireError(_ error: any Error, operation: Request.Operation.Name) -> WireError {
        if let error = error as? PGModelError { return WireError(error) }
        if let error = error as? WireError { return error }
        if error is CancellationError {
            return WireError(.shuttingDown, "the server stopped before '\(operation.rawValue)' finished")
        }
        // The engine reports its own failures as PGModelError, so anything else came from the connection
        // pool: the database is unreachable or the pool gave up (circuit breaker).
        logger.error("database unavailable", metadata: ["op": "\(operation.rawValue)", "error": "\(type(of: error))"])
        return WireError(.connectionFailed, "the server could not reach its database")
    }
}
