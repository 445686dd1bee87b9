import Foundation
import Logging
import NIOCore
@_spi(PGModelInternals) import PGModelCore
@_spi(PGModelInternals) import PGModelIO
@_spi(PGModelInternals) import PGModelPostgres
@_spi(PGModelInternals) import PGModelWire
import PostgresNIO
import Tracing

/// Runs logged-in requests through the ``DatabaseGateway``, each as its user (``Requester/user(_:)``), and turns
/// every outcome into exactly one ``Response``. Never throws: errors become error responses.
///
/// ```swift
/// let response = await dispatcher.execute(request, as: user)
/// ```
package struct RequestDispatcher: Sendable {
    let gateway: DatabaseGateway
    let logger: Logger
    /// Every request's deadline: past it the request is answered `timeout` and the gateway closes its
    /// database connection (PostgreSQL stalled, vanished mid-statement, or the pool had no connection to
    /// give). Writes and schema work are answered then whatever happens below (``Deadline``); reads
    /// when their bounded waits end (``isBoundedBelow(_:)``).
    var requestTimeout: Duration = .seconds(30)
    /// The most rows one `fetch` or `ids` answers with.
    var maxResponseRows = 100_000
    /// The most transactions one `history` answers with.
    var maxHistoryTransactions = 10_000
    /// The most bytes of rows a read may bring in from PostgreSQL (the response line's limit): counted
    /// while the rows arrive, so a large result stops there instead of being read whole first.
    var maxResponseBytes = 64 << 20
    /// Where requests' server spans go (``traced(_:requestID:_:)``); nil when tracing is off.
    var tracer: (any Tracer)?

    /// Checks `hello`'s credentials.
    func authenticate(_ hello: HelloPayload) async -> Result<SessionUser, WireError> {
        do {
            let gateway = gateway
            let user = try await Deadline(requestTimeout, operation: "'hello'").run {
                try await gateway.authenticate(user: hello.user, password: hello.password)
            }
            logger.info("user logged in", metadata: ["user": "\(LogText(user.name))", "admin": "\(user.isAdmin)"])
            return .success(SessionUser(id: user.id, name: user.name, isAdmin: user.isAdmin, sessionEpoch: user.sessionEpoch))
        } catch {
            let wire = wireError(error, operation: .hello)
            logger.notice("login failed", metadata: ["user": "\(LogText(hello.user))", "code": "\(wire.code)"])
            return .failure(wire)
        }
    }

    /// Runs `request` as `user`. With `versions` (the connection's), a request about an entity migrated
    /// past the version the connection registered is refused, and registrations are remembered. A client
    /// deadline (`timeoutMs`) counts from `received`, when the server read the line. With `executor`
    /// (the connection's event loop, for a short request) the request runs there, and a large fetched
    /// result is decoded on the global executor (``RequestWeight``). `requestID` (the server's name for
    /// the request, ``RequestIDSource``) goes into the request's log line and its error answer.
    func execute(_ request: Request, as user: SessionUser, versions: SessionSchemaVersions? = nil, commitPosition: SessionCommitPosition? = nil,
                 received: NIODeadline = .now(), executor: EventLoopTaskExecutor? = nil, requestID: ServerRequestID? = nil) async -> Response {
        let requester = Requester.user(AuthenticatedUser(id: user.id, name: user.name, isAdmin: user.isAdmin))
        let started = ContinuousClock.now
        let result: Result<ResponseResult, WireError>
        do {
            let operation = request.operation
            let clientDeadline = Self.clientDeadline(of: request, received: received)
            if let clientDeadline, clientDeadline <= .now() {
                // It waited behind the connection's earlier requests until its client stopped waiting.
                throw PGModelError(.timeout, "'\(operation.name.rawValue)' was not started: its client's deadline (timeoutMs) passed while it waited behind earlier requests")
            }
            let timeout = Self.timeout(of: request, serverTimeout: requestTimeout, clientDeadline: clientDeadline)
            if let versions { try Self.checkVersions(of: operation, versions, against: gateway.registry.recordedVersions) }
            // The gateway's connection waits and transactions end by the client's deadline too: a request
            // answered `timeout` must not commit afterwards, when its client has moved on. A read runs in
            // the request's own task, every wait of it bounded by the budget (the pool's lease, each
            // statement's ConnectionDeadline, the schema's loading), which is then the request's own deadline
            // when the client gave none; the rest keeps the backstop, whose second task and hand-off cost a
            // short read about a tenth of its time.
            let isRead = Self.isBoundedBelow(operation)
            let bound = isRead ? clientDeadline ?? .now() + ConnectionDeadline.timeAmount(timeout) : clientDeadline
            let budget = RequestBudget(deadline: bound, largeResultExecutor: executor == nil ? nil : globalConcurrentExecutor)
            // A client's readAfter only ever makes its own reads wait (up to the replica wait) for a
            // standby, or go to the primary: it reaches nothing of anyone else's.
            let readAfter = commitPosition?.readAfter(request.readAfter) ?? request.readAfter
            if isRead {
                result = .success(try await run(operation, as: requester, budget: budget, readAfter: readAfter, commitPosition: commitPosition))
            } else {
                result = .success(try await Deadline(timeout, operation: "'\(operation.name.rawValue)'", executor: executor).run { [self] in
                    try await run(operation, as: requester, budget: budget, readAfter: readAfter, commitPosition: commitPosition)
                })
            }
            if case .success(.saved(let saved)) = result { commitPosition?.record(saved.commitLSN) }
            switch operation {
            case .register(let schema), .migrate(let schema, _): versions?.record(schema)
            default: break
            }
        } catch {
            var wire = wireError(error, operation: request.operation.name)
            wire.requestID = requestID?.description
            result = .failure(wire)
        }
        logRequest(request, as: user, requestID: requestID, result: result, started: started)
        return Response(id: request.id, result: result)
    }

    /// The request's one access line (``RequestLog``): `request` at `info`; `audited operation` at `notice`
    /// for operations that change tables, access or history, which an operator keeps with who did them.
    private func logRequest(_ request: Request, as user: SessionUser, requestID: ServerRequestID?,
                            result: Result<ResponseResult, WireError>, started: ContinuousClock.Instant) {
        let level = RequestLog.level(of: request.operation.name)
        // Built only when written: its strings cost a short read a few microseconds.
        guard logger.logLevel <= level else { return }
        let code = switch result {
        case .success: "ok"
        case .failure(let error): error.code.rawValue
        }
        var metadata = RequestLog.metadata(requestID: requestID, clientID: request.id, user: user.name, operation: request.operation.name,
                                           code: code, elapsed: ContinuousClock.now - started)
        guard level == .notice else { return logger.log(level: level, "request", metadata: metadata) }
        metadata["admin"] = "\(user.isAdmin)"
        logger.log(level: level, "audited operation", metadata: metadata)
    }

    /// When `request`'s client stops waiting: its `timeoutMs` after the line was read; nil without one.
    static func clientDeadline(of request: Request, received: NIODeadline) -> NIODeadline? {
        request.timeout.map { received + ConnectionDeadline.timeAmount($0) }
    }

    /// How long `request` may run from now: the server's deadline (at least
    /// ``ConnectionDeadline/minimumSchemaDuration`` for `register` and `migrate`, which create tables and
    /// indexes), or what is left of the client's when that ends sooner.
    static func timeout(of request: Request, serverTimeout: Duration, clientDeadline: NIODeadline?, now: NIODeadline = .now()) -> Duration {
        let name = request.operation.name
        let own = name == .register || name == .migrate ? max(serverTimeout, ConnectionDeadline.minimumSchemaDuration) : serverTimeout
        guard let clientDeadline else { return own }
        let left = Duration.nanoseconds(max(1_000_000, (clientDeadline - now).nanoseconds))
        return min(own, left)
    }

    /// Whether `operation` only reads, so that every wait it makes is bounded by the request's budget
    /// below the dispatcher and nothing of it can commit after its client was answered `timeout`: the
    /// reads run without the ``Deadline`` backstop, which writes and schema work keep.
    package static func isBoundedBelow(_ operation: Request.Operation) -> Bool {
        switch operation {
        case .fetch, .fetchTable, .count, .ids, .shares: true
        default: false
        }
    }

    /// The entities a request reads or writes.
    /// Throws when a migration moved an entity `operation` touches past the version `versions` registered.
    static func checkVersions(of operation: Request.Operation, _ versions: SessionSchemaVersions, against recorded: [String: String]) throws {
        switch operation {
        case .fetch(let request), .fetchTable(let request), .count(let request), .ids(let request):
            try versions.check(request.entity, against: recorded)
        default:
            try versions.check(entities(of: operation), against: recorded)
        }
    }

    static func entities(of operation: Request.Operation) -> Set<String> {
        switch operation {
        case .fetch(let request), .fetchTable(let request), .count(let request), .ids(let request):
            return [request.entity]
        case .save(let request):
            return request.entityNames
        case .share(let change), .unshare(let change):
            return [change.record.entity]
        case .shares(let record):
            return [record.entity]
        default:
            return []
        }
    }

    private func run(_ operation: Request.Operation, as requester: Requester, budget: RequestBudget,
                     readAfter: LogSequenceNumber? = nil, commitPosition: SessionCommitPosition? = nil) async throws -> ResponseResult {
        // What a read may bring back: counted row by row as PostgreSQL sends them, so an answer past the
        // response limit is refused before it is read whole.
        var readBudget = budget
        readBudget.maxResultBytes = maxResponseBytes
        switch operation {
        case .register(let schema):
            _ = try await gateway.prepare(schema, as: requester, budget: budget)
            return .registered(entities: schema.entities.map(\.name))
        case .migrate(let schema, let plan):
            try await gateway.migrate(to: schema, plan: plan, as: requester, budget: budget)
            _ = try await gateway.prepare(schema, as: requester, budget: budget)
            return .registered(entities: schema.entities.map(\.name))
        case .fetch(let request):
            return .rows(try await capped(request) { try await gateway.fetch($0, as: requester, budget: readBudget, readAfter: readAfter) })
        case .fetchTable(let request):
            let gateway = gateway
            let fetched = try await capped(request) { request in
                let fetched = try await gateway.fetchTable(request, as: requester, budget: readBudget, readAfter: readAfter)
                return [fetched]
            } count: { $0.first?.rows.count ?? 0 }
            return .table(fetched.first ?? FetchedTable())
        case .count(let request):
            return .count(try await gateway.count(request, as: requester, budget: budget, readAfter: readAfter))
        case .ids(let request):
            return .ids(try await capped(request) { try await gateway.fetchIdentifiers($0, as: requester, budget: readBudget, readAfter: readAfter) })
        case .save(let request):
            return .saved(try await gateway.save(request, as: requester, budget: budget))
        case .history(let request):
            // Row-level security filters: a user gets only changes of rows they may see. As a fetch, at
            // most one transaction more than the cap is read: its presence is the refusal.
            var capped = request
            let cap = maxHistoryTransactions
            if (request.limit ?? .max) > cap { capped.limit = cap + 1 }
            let page = try await gateway.fetchHistory(capped, as: requester, budget: readBudget, readAfter: readAfter, onStandby: true)
            guard page.transactions.count <= cap else {
                throw PGModelError(.resultTooLarge,
                                   "more than \(cap) history transactions match; page with 'limit' (at most \(cap)) and a token condition (token greater than the last one read)")
            }
            return .history(page)
        case .share(let change), .unshare(let change):
            let saved = try await gateway.save(SaveRequest(shares: [change]), as: requester, budget: budget)
            // The share is a commit like a save's: this connection's later reads on a standby wait for it.
            commitPosition?.record(saved.commitLSN)
            return .acknowledged
        case .shares(let record):
            return .shares(try await gateway.sharing(of: record, as: requester, budget: budget))
        case .deleteHistory(let request):
            // History is shared by every user of the schema: a transaction may hold several users'
            // changes, so no per-user delete leaves the log consistent for the others. Admins only.
            guard requester.isAdmin else {
                throw PGModelError(.forbidden, "only an admin may delete history")
            }
            return .count(try await gateway.deleteHistory(request, as: requester, budget: budget))
        case .hello, .ping, .bye, .subscribe, .unsubscribe:
            // The session (state machine and subscriptions) answers these itself.
            throw PGModelError(.internalError, "'\(operation.name.rawValue)' reached the store dispatcher")
        }
    }

    /// Runs `request` asking for at most one row more than ``maxResponseRows``: that row's presence is
    /// the refusal, and the database never produces the rest. The rows' bytes are counted as they are
    /// read (`run` passes ``RequestBudget/maxResultBytes``): past ``maxResponseBytes`` the read stops with
    /// `result_too_large`.
    private func capped<Row>(_ request: FetchRequest, _ run: (FetchRequest) async throws -> [Row],
                             count: ([Row]) -> Int = { $0.count }) async throws -> [Row] {
        var bounded = request
        let cap = maxResponseRows
        if (request.limit ?? .max) > cap { bounded.limit = cap + 1 }
        let rows = try await run(bounded)
        guard count(rows) <= cap else {
            throw PGModelError(.resultTooLarge,
                               "more than \(cap) \(request.entity) rows match; page with 'limit' and 'offset'", model: request.entity)
        }
        return rows
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
