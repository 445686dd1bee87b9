import Metrics
@_spi(PGModelInternals) import PGModelCore

/// The direct store's and the database pool's metrics (OPERATIONS.md, Metrics): calls by operation and
/// outcome with their duration, conflicts by kind, and each pool's size, connections in use and wait
/// for a connection. Labels come from fixed sets only (operation names, error codes, pool names).
///
/// ```swift
/// let metrics = StoreMetrics(factory: MetricsSystem.factory)
/// let started = ContinuousClock.now
/// metrics.recordCall("fetch", since: started, error: nil)
/// ```
package final class StoreMetrics: Sendable {
    package static let callsTotal = "pgmodel_store_calls_total"
    package static let callDuration = "pgmodel_store_call_duration_seconds"
    package static let conflictsTotal = "pgmodel_store_conflicts_total"
    package static let poolConnections = "pgmodel_db_pool_connections"
    package static let poolConnectionsInUse = "pgmodel_db_pool_connections_in_use"
    package static let poolWait = "pgmodel_db_pool_wait_duration_seconds"

    package let cache: MetricsCache

    package init(factory: any MetricsFactory) {
        cache = MetricsCache(factory: factory)
    }

    /// The metrics of `configuration`'s factory, else of the process's `MetricsSystem`.
    package convenience init(configuration: PostgresStoreConfiguration) {
        self.init(factory: configuration.metricsFactory ?? MetricsSystem.factory)
    }

    /// Counts one store call of `operation` that began at `started` and ended with `error` (nil: ok).
    package func recordCall(_ operation: String, since started: ContinuousClock.Instant, error: (any Error)?) {
        let outcome = Self.outcome(of: error)
        cache.counter(Self.callsTotal, ("operation", operation), ("outcome", outcome)).increment()
        cache.timer(Self.callDuration, ("operation", operation)).record(duration: ContinuousClock.now - started)
        if let kind = Self.conflictKind(of: outcome) { cache.counter(Self.conflictsTotal, ("kind", kind)).increment() }
    }

    /// The metrics of one pool (`data` or `login`), made once.
    package func pool(_ name: String) -> PoolMetrics {
        PoolMetrics(connections: cache.gauge(Self.poolConnections, ("pool", name)),
                    inUse: cache.gauge(Self.poolConnectionsInUse, ("pool", name)),
                    wait: cache.timer(Self.poolWait, ("pool", name)))
    }

    /// An outcome label: `ok`, or the error's stable code (a small fixed set), or `error` for any other failure.
    package static func outcome(of error: (any Error)?) -> String {
        guard let error else { return "ok" }
        if let error = error as? PGModelError { return error.code.rawValue }
        if error is CancellationError { return "cancelled" }
        return "error"
    }

    /// The conflict kind an outcome is, if it is one: another writer's change won (`save_conflict`), a
    /// unique value was taken (`unique_violation`), or PostgreSQL chose this transaction to undo
    /// (`would_deadlock`, for deadlocks and serialization failures).
    package static func conflictKind(of outcome: String) -> String? {
        switch outcome {
        case PGModelError.Code.saveConflict.rawValue, PGModelError.Code.uniqueViolation.rawValue,
             PGModelError.Code.wouldDeadlock.rawValue:
            outcome
        default:
            nil
        }
    }
}

/// One connection pool's gauges and wait timer, made once when the pool is.
package struct PoolMetrics: Sendable {
    let connections: Gauge
    let inUse: Gauge
    let wait: Timer

    /// Records the pool's open connections and those leased out.
    func record(open: Int, inUse leased: Int) {
        connections.record(open)
        inUse.record(leased)
    }
}
