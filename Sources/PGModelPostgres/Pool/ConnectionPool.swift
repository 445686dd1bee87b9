import Logging
import NIOConcurrencyHelpers
import NIOCore
@_spi(PGModelInternals) import PGModelCore
@_spi(PGModelInternals) import PGModelIO
import PostgresNIO

/// The one connection pool of PGModel: the direct store's and the server's.
///
/// A bounded set of PostgreSQL connections (``ConnectionPoolStateMachine`` decides; this class opens,
/// hands out and closes). It has no background task: connections are opened by the lease that needs
/// one, on that lease's own task, so a pool never waits for a thread of Swift's cooperative pool — which
/// synchronous callers may be blocking — and a database that is down fails the call at once with
/// `connection_failed`. A lease that must wait for a busy pool gives up with `timeout` at its deadline.
///
/// Every lease states its ``ConnectionScope`` (whose statements it runs). The pool remembers the scope each
/// connection's session is in, prefers an idle connection already in the wanted one, and otherwise sets
/// it with one statement before the lease's body runs — so a connection in one user's scope never runs
/// anyone else's statement, and a user's repeated requests cost no extra round trip. While a lease runs,
/// or after it failed, the remembered scope is forgotten, so it is set again rather than trusted.
///
/// Behind a pooler in transaction mode (``PostgresStoreConfiguration/pooling``) a connection's session is
/// not its own between transactions, so the pool sets no scope and vouches for none: the engine then
/// takes on a user's identity inside each transaction, and runs fetches unnamed.
///
/// ```swift
/// let pool = ConnectionPool(configuration: configuration, maximumConnections: 8, eventLoopGroup: group)
/// let rows = try await pool.withConnection(scope: engine.scope(for: requester), deadline: .seconds(30),
///                                          operation: "fetch of Trip") { connection in
///     try await engine.fetch(request, in: schema, as: requester, on: connection)
/// }
/// ```
package final class ConnectionPool: Sendable {
    private typealias Machine = ConnectionPoolStateMachine<ObjectIdentifier>

    /// How a waiting lease ends.
    private enum WakeUp: Sendable {
        case machine(Machine.WaiterWakeUp)
        case timedOut
        case cancelled
    }

    private struct State: Sendable {
        var machine: Machine
        var connections: [ObjectIdentifier: PostgresConnection] = [:]
        var waiting: [Int: CheckedContinuation<WakeUp, Never>] = [:]
        /// Wake-ups that came before their lease stored its continuation.
        var early: [Int: WakeUp] = [:]
        var nextID = 1
        /// What each leased connection is doing, for the notice a starved lease logs.
        var inFlight: [ObjectIdentifier: String] = [:]
        /// The session scope of each connection known to be in one: idle connections, and new ones
        /// (``ConnectionScope/trusted``). A leased connection has none until it comes back from a lease
        /// that succeeded.
        var scopes: [ObjectIdentifier: ConnectionScope] = [:]

        /// Resumes waiter `id` with `wakeUp` now (returned, to resume outside the lock) or when it starts waiting.
        mutating func deliver(_ wakeUp: WakeUp, to id: Int) -> CheckedContinuation<WakeUp, Never>? {
            if let continuation = waiting.removeValue(forKey: id) { return continuation }
            early[id] = wakeUp
            return nil
        }
    }

    package let configuration: PostgresStoreConfiguration
    private let eventLoopGroup: any EventLoopGroup
    /// While fewer connections than this are open, a lease from an event loop without an idle connection
    /// of its own opens one there (``ConnectionPoolStateMachine``): one per loop at most, within the idle
    /// maximum, so the pool does not grow past what it keeps.
    private let localLimit: Int
    private let logger: Logger
    private let state: NIOLockedValueBox<State>
    /// Given to every lease's ``EngineConnection``: the statements tests count.
    private let statementLog: StatementLog?
    /// Given to every lease's ``EngineConnection``: where statements' spans go; nil when tracing is off.
    private let statementTracing: StatementTracing?
    /// Size, leased connections and waits for a connection (``StoreMetrics``), made once.
    private let metrics: PoolMetrics
    /// Whether a connection keeps its session between leases: not behind a pooler in transaction mode,
    /// where the pool must neither set a session-level scope nor vouch for one.
    private let keepsSessions: Bool

    package init(configuration: PostgresStoreConfiguration, maximumConnections: Int, maximumIdleConnections: Int? = nil,
                 eventLoopGroup: any EventLoopGroup, statementLog: StatementLog? = nil, statementTracing: StatementTracing? = nil,
                 metricsName: String = "data", logger: Logger) {
        self.configuration = configuration
        self.keepsSessions = configuration.pooling == .session
        self.metrics = StoreMetrics(configuration: configuration).pool(metricsName)
        self.statementLog = statementLog
        self.statementTracing = statementTracing
        self.eventLoopGroup = eventLoopGroup
        self.logger = logger
        let machine = ConnectionPoolStateMachine<ObjectIdentifier>(
            maximum: maximumConnections, maximumIdle: maximumIdleConnections ?? maximumConnections)
        var loops = 0
        for _ in eventLoopGroup.makeIterator() { loops += 1 }
        self.localLimit = min(loops, machine.maximumIdle)
        self.state = NIOLockedValueBox(State(machine: machine))
    }

    /// Runs `body` on a pooled connection in `scope` within `deadline`: waiting for a connection counts
    /// against it, and past it the connection is closed (failing the statement in flight) and the call
    /// throws `timeout`. `body` gets the connection with the scope vouched for, the deadline's watch and
    /// `budget`.
    package func withConnection<T: Sendable>(scope: ConnectionScope, deadline timeout: TimeAmount,
                                             budget: RequestBudget = RequestBudget(), operation: String,
                                             _ body: @Sendable (EngineConnection) async throws -> T) async throws -> T {
        let started = NIODeadline.now()
        let connection = try await lease(scope: scope, until: started + timeout, operation: operation)
        metrics.wait.recordNanoseconds((NIODeadline.now() - started).nanoseconds)
        let key = ObjectIdentifier(connection)
        let (current, open, leased) = state.withLockedValue { state -> (ConnectionScope?, Int, Int) in
            state.inFlight[key] = operation
            return (state.scopes.removeValue(forKey: key), state.connections.count, state.inFlight.count)
        }
        metrics.record(open: open, inUse: leased)
        let remaining = max(.milliseconds(1), (started + timeout) - NIODeadline.now())
        let logger = logger
        do {
            let statementLog = statementLog
            let statementTracing = statementTracing
            let keepsSessions = keepsSessions
            let result = try await ConnectionDeadline(remaining, operation: operation).run(on: connection) { watch in
                if keepsSessions, current != scope {
                    do {
                        try await scope.apply(on: EngineConnection(connection, sessionScope: nil, watch: watch, budget: RequestBudget(),
                                                                   statementLog: statementLog), logger: logger)
                    } catch {
                        throw ScopeNotSet(underlying: error)
                    }
                }
                var leased = EngineConnection(connection, sessionScope: keepsSessions ? scope : nil, watch: watch, budget: budget,
                                              statementLog: statementLog)
                leased.usesNamedStatements = keepsSessions
                leased.statementTracing = statementTracing
                return try await body(leased)
            }
            release(connection, scope: scope, isUsable: !connection.isClosed)
            return result
        } catch let error as PGModelError where error.code == .timeout && error.sqlState == nil {
            // The deadline closed the connection; its channel may still be closing. (A timeout with a
            // SQLSTATE is PostgreSQL's statement_timeout: the connection is fine and the error says so.)
            release(connection, scope: nil, isUsable: false)
            throw ConnectionDeadline(timeout, operation: operation).timeoutError
        } catch let failure as ScopeNotSet {
            // The session's role and settings are unknown now: nobody may use this connection again.
            release(connection, scope: nil, isUsable: false)
            throw failure.underlying
        } catch {
            // Scope forgotten (`nil`): the next lease sets it again rather than trust it.
            release(connection, scope: nil, isUsable: !connection.isClosed)
            throw error
        }
    }

    /// The scope statement of a lease failed.
    private struct ScopeNotSet: Error {
        var underlying: any Error
    }

    /// Callers waiting for a connection now.
    ///
    /// ```swift
    /// if pool.waitingCount > 100 { logger.warning("the pool is saturated") }
    /// ```
    package var waitingCount: Int { state.withLockedValue { $0.machine.waiters.count } }

    /// Closes every idle connection and wakes every waiter with `connection_failed`; connections still
    /// leased are closed when they come back. Idempotent.
    package func close() async {
        let (idle, waiters) = state.withLockedValue { state -> ([PostgresConnection], [CheckedContinuation<WakeUp, Never>]) in
            let (idleIDs, waiterIDs) = state.machine.close()
            let idle = idleIDs.compactMap { state.connections.removeValue(forKey: $0) }
            for key in idleIDs { state.scopes[key] = nil }
            let waiters = waiterIDs.compactMap { state.deliver(.machine(.closed), to: $0) }
            return (idle, waiters)
        }
        for waiter in waiters { waiter.resume(returning: .machine(.closed)) }
        for connection in idle { try? await connection.close() }
    }

    // MARK: Leasing

    private func lease(scope: ConnectionScope, until deadline: NIODeadline, operation: String) async throws -> PostgresConnection {
        // The caller's own event loop when it runs on one of the group's (the service's short requests,
        // the direct store's calls), else any.
        let here = eventLoopGroup.any()
        let (action, waiterID) = state.withLockedValue { state -> (Machine.LeaseAction, Int) in
            let id = state.nextID
            state.nextID += 1
            let connections = state.connections
            let scopes = keepsSessions ? state.scopes : [:]
            let isLocal = { (key: ObjectIdentifier) in connections[key]?.eventLoop.inEventLoop == true }
            var dropped: [ObjectIdentifier] = []
            let action = state.machine.lease(waiterID: id, isUsable: { key in
                if let connection = connections[key], !connection.isClosed { return true }
                dropped.append(key)
                return false
            }, rank: { key in
                // A scope change costs a round trip; another event loop costs two thread wake-ups.
                (scopes[key] == scope ? 2 : 0) + (isLocal(key) ? 1 : 0)
            }, isLocal: isLocal, localLimit: here.inEventLoop ? localLimit : 0)
            for key in dropped {
                state.connections[key] = nil
                state.scopes[key] = nil
            }
            return (action, id)
        }
        switch action {
        case .use(let key):
            return try leased(key)
        case .connect:
            return try await connect(operation: operation, on: here)
        case .closed:
            throw Self.closedError
        case .wait:
            return try await wait(waiterID, until: deadline, operation: operation)
        }
    }

    private func leased(_ key: ObjectIdentifier) throws -> PostgresConnection {
        if let connection = state.withLockedValue({ $0.connections[key] }) { return connection }
        throw PGModelError(.internalError, "the connection pool lost a connection it handed out")
    }

    private func wait(_ waiterID: Int, until deadline: NIODeadline, operation: String) async throws -> PostgresConnection {
        let timer = eventLoopGroup.any().scheduleTask(deadline: deadline) { [state] in
            let waiter = state.withLockedValue { state -> CheckedContinuation<WakeUp, Never>? in
                guard state.machine.cancel(waiterID: waiterID) else { return nil }
                return state.deliver(.timedOut, to: waiterID)
            }
            waiter?.resume(returning: .timedOut)
        }
        // A caller that gives up (its client went away, its request was cancelled) leaves the queue at
        // once: otherwise it keeps its place until its deadline, and a freed connection goes to nobody.
        let wakeUp = await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<WakeUp, Never>) in
                let early = state.withLockedValue { state -> WakeUp? in
                    if let wakeUp = state.early.removeValue(forKey: waiterID) { return wakeUp }
                    state.waiting[waiterID] = continuation
                    return nil
                }
                if let early { continuation.resume(returning: early) }
            }
        } onCancel: { [state] in
            let waiter = state.withLockedValue { state -> CheckedContinuation<WakeUp, Never>? in
                guard state.machine.cancel(waiterID: waiterID) else { return nil }
                return state.deliver(.cancelled, to: waiterID)
            }
            waiter?.resume(returning: .cancelled)
        }
        timer.cancel()
        switch wakeUp {
        case .machine(.use(let key)):
            return try leased(key)
        case .machine(.connect):
            return try await connect(operation: operation)
        case .machine(.closed):
            throw Self.closedError
        case .timedOut:
            let (open, idle, waiters, busy) = state.withLockedValue {
                ($0.machine.open, $0.machine.idle.count, $0.machine.waiters.count, $0.inFlight.values.sorted())
            }
            logger.notice("no database connection became free before the deadline",
                          metadata: ["operation": "\(operation)", "open": "\(open)", "idle": "\(idle)", "waiting": "\(waiters)",
                                     "busy": "\(busy)"])
            throw PGModelError(.timeout, "\(operation) waited for a database connection until its deadline; every one of the pool's connections was busy")
        case .cancelled:
            throw CancellationError()
        }
    }

    private func connect(operation: String, on eventLoop: (any EventLoop)? = nil) async throws -> PostgresConnection {
        let id = state.withLockedValue { state -> Int in
            state.nextID += 1
            return state.nextID
        }
        do {
            let connection = try await PostgresConnection.connect(
                on: eventLoop ?? eventLoopGroup.any(), configuration: configuration.connection, id: id, logger: logger)
            state.withLockedValue { state in
                state.connections[ObjectIdentifier(connection)] = connection
                state.scopes[ObjectIdentifier(connection)] = .trusted
                state.machine.connected()
            }
            return connection
        } catch {
            let next = state.withLockedValue { state in
                state.machine.connectFailed().flatMap { state.deliver(.machine(.connect), to: $0) }
            }
            next?.resume(returning: .machine(.connect))
            var mapped = PostgresErrorMapping.map(error)
            if mapped.sqlState == nil, mapped.code == .connectionFailed { mapped.message = PostgresFailureText.describe(error) }
            // A TLS failure keeps its own code: retrying cannot fix a certificate.
            throw PGModelError(mapped.code == .tlsFailed ? .tlsFailed : .connectionFailed,
                "cannot connect to PostgreSQL at \(configuration.host):\(configuration.port) as \(configuration.username): \(mapped.message)",
                sqlState: mapped.sqlState)
        }
    }

    /// Gives `connection` back, in `scope` (`nil`: unknown, to be set again by the next lease).
    private func release(_ connection: PostgresConnection, scope: ConnectionScope?, isUsable: Bool) {
        let key = ObjectIdentifier(connection)
        let (action, waiter) = state.withLockedValue { state -> (Machine.ReleaseAction, CheckedContinuation<WakeUp, Never>?) in
            state.inFlight[key] = nil
            defer { metrics.record(open: state.connections.count, inUse: state.inFlight.count) }
            state.scopes[key] = scope
            let action = state.machine.release(key, isUsable: isUsable)
            switch action {
            case .keep:
                return (action, nil)
            case .handOff(_, let waiterID):
                return (action, state.deliver(.machine(.use(key)), to: waiterID))
            case .wakeToConnect(let waiterID):
                state.connections[key] = nil
                state.scopes[key] = nil
                return (action, state.deliver(.machine(.connect), to: waiterID))
            case .close, .discard:
                state.connections[key] = nil
                state.scopes[key] = nil
                return (action, nil)
            }
        }
        switch action {
        case .keep:
            break
        case .close, .discard:
            Self.closeAndRelease(connection)
        case .handOff:
            waiter?.resume(returning: .machine(.use(key)))
        case .wakeToConnect:
            Self.closeAndRelease(connection)
            waiter?.resume(returning: .machine(.connect))
        }
    }

    /// Closes `connection` (again, if a deadline already started closing it) and keeps it alive until
    /// its channel is closed: PostgresNIO traps on a connection deallocated while still open.
    private static func closeAndRelease(_ connection: PostgresConnection) {
        connection.close().whenComplete { _ in withExtendedLifetime(connection) {} }
    }

    private static var closedError: PGModelError {
        PGModelError(.connectionFailed, "the store's connection pool is closed")
    }
}
