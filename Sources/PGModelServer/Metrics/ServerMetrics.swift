import Foundation
import Metrics
@_spi(PGModelInternals) import PGModelCore
@_spi(PGModelInternals) import PGModelPostgres
@_spi(PGModelInternals) import PGModelWire

/// The line service's metrics (OPERATIONS.md, Metrics), made once per server: requests by operation and
/// outcome and their durations, open connections and logged-in sessions, logins by outcome, change
/// events sent, how far behind subscribers' history reads are, held-save bytes and conflicts by kind.
/// Labels come from fixed sets only (operation names, error codes): never user names or ids.
///
/// ```swift
/// let metrics = ServerMetrics(factory: MetricsSystem.factory)
/// metrics.recordRequest(.fetch, since: started, response: response)
/// ```
package final class ServerMetrics: Sendable {
    package static let requestsTotal = "pgmodel_requests_total"
    package static let requestDuration = "pgmodel_request_duration_seconds"
    package static let connectionsOpen = "pgmodel_connections_open"
    package static let sessionsLoggedIn = "pgmodel_sessions_logged_in"
    package static let loginsTotal = "pgmodel_logins_total"
    package static let eventsSent = "pgmodel_change_events_sent_total"
    package static let historyLag = "pgmodel_subscriber_history_lag_seconds"
    package static let heldSaveBytes = "pgmodel_held_save_bytes"
    package static let conflictsTotal = "pgmodel_conflicts_total"
    package static let historyPrunedChanges = "pgmodel_history_pruned_changes_total"

    package let cache: MetricsCache
    /// One timer per operation, made up front: the hot path reads a constant dictionary.
    private let durations: [Request.Operation.Name: Timer]
    package let connections: Meter
    package let sessions: Meter
    package let events: Counter
    package let lag: Timer
    package let heldSaves: Gauge
    package let prunedChanges: Counter

    package init(factory: any MetricsFactory) {
        let cache = MetricsCache(factory: factory)
        self.cache = cache
        var durations: [Request.Operation.Name: Timer] = [:]
        for name in Request.Operation.Name.allCases {
            durations[name] = cache.timer(Self.requestDuration, ("operation", name.rawValue))
        }
        self.durations = durations
        connections = Meter(label: Self.connectionsOpen, factory: factory)
        sessions = Meter(label: Self.sessionsLoggedIn, factory: factory)
        events = Counter(label: Self.eventsSent, factory: factory)
        lag = Timer(label: Self.historyLag, factory: factory)
        heldSaves = Gauge(label: Self.heldSaveBytes, factory: factory)
        prunedChanges = Counter(label: Self.historyPrunedChanges, factory: factory)
    }

    /// Counts and times one logged-in request answered with `response`.
    package func recordRequest(_ operation: Request.Operation.Name, since started: ContinuousClock.Instant, response: Response) {
        let outcome = switch response.result {
        case .success: "ok"
        case .failure(let error): error.code.rawValue
        }
        cache.counter(Self.requestsTotal, ("operation", operation.rawValue), ("outcome", outcome)).increment()
        durations[operation]?.record(duration: ContinuousClock.now - started)
        if let kind = StoreMetrics.conflictKind(of: outcome) {
            cache.counter(Self.conflictsTotal, ("kind", kind)).increment()
        }
    }

    /// Counts one `hello`: `ok`, `throttled` (refused by the login throttle before any password check)
    /// or the error code it failed with. The session gauge is the connection's to keep (``sessions``).
    package func recordLogin(_ outcome: Result<SessionUser, WireError>, throttled: Bool) {
        let label = switch outcome {
        case .success: "ok"
        case .failure(let error): throttled ? "throttled" : error.code.rawValue
        }
        cache.counter(Self.loginsTotal, ("outcome", label)).increment()
    }

    /// Records a change-event history read: how long the oldest transaction it brought to a subscriber
    /// had been committed when the read returned (by the database's commit time), so subscribers falling
    /// behind a burst of saves show as a growing lag. A read that brought nobody anything records nothing.
    package func recordHistoryRead(oldestCommitted: Date?, now: Date = Date()) {
        guard let oldestCommitted else { return }
        let seconds = max(0, now.timeIntervalSince(oldestCommitted))
        lag.recordNanoseconds(Int64((min(seconds, 1e9) * 1e9).rounded()))
    }

    /// Counts the changes one retention prune removed (no store label: store names are not a fixed set).
    package func recordHistoryPrune(_ report: HistoryPruneReport) {
        guard report.changes > 0 else { return }
        prunedChanges.increment(by: report.changes)
    }
}
