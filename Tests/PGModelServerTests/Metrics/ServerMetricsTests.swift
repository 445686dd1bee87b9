import Foundation
import Metrics
@_spi(PGModelInternals) import PGModelCore
@_spi(PGModelInternals) import PGModelPostgres
@_spi(PGModelInternals) @testable import PGModelServer
@_spi(PGModelInternals) import PGModelWire
import Prometheus
import Testing

/// The service's metric objects against a real Prometheus registry: names, labels and what each record adds.
@Suite("Metrics: what the server records")
struct ServerMetricsTests {
    static func text(_ registry: PrometheusCollectorRegistry) -> String {
        var bytes: [UInt8] = []
        registry.emit(into: &bytes)
        return String(decoding: bytes, as: UTF8.self)
    }

    /// The value of the one line starting with `series` (name and labels as swift-prometheus writes them).
    static func value(_ text: String, _ series: String) -> Double? {
        text.split(separator: "\n").first { $0.hasPrefix(series + " ") }.flatMap { Double($0.split(separator: " ").last ?? "") }
    }

    @Test("a request is counted by operation and outcome and timed; a conflict is counted by kind")
    func requests() {
        let registry = PrometheusCollectorRegistry()
        let metrics = ServerMetrics(factory: PrometheusMetricsFactory.pgmodel(registry: registry))
        let started = ContinuousClock.now
        metrics.recordRequest(.fetch, since: started, response: Response(id: 1, .count(3)))
        metrics.recordRequest(.fetch, since: started, response: Response(id: 2, .count(4)))
        metrics.recordRequest(.save, since: started, response: Response(id: 3, error: WireError(.saveConflict, "changed")))
        metrics.recordRequest(.save, since: started, response: Response(id: 4, error: WireError(.uniqueViolation, "taken")))
        let text = Self.text(registry)
        #expect(Self.value(text, #"pgmodel_requests_total{operation="fetch",outcome="ok"}"#) == 2)
        #expect(Self.value(text, #"pgmodel_requests_total{operation="save",outcome="save_conflict"}"#) == 1)
        #expect(Self.value(text, #"pgmodel_request_duration_seconds_count{operation="fetch"}"#) == 2)
        #expect(Self.value(text, #"pgmodel_request_duration_seconds_count{operation="save"}"#) == 2)
        #expect(Self.value(text, #"pgmodel_request_duration_seconds_bucket{operation="fetch",le="0.0005"}"#) != nil, "sub-millisecond buckets")
        #expect(Self.value(text, #"pgmodel_conflicts_total{kind="save_conflict"}"#) == 1)
        #expect(Self.value(text, #"pgmodel_conflicts_total{kind="unique_violation"}"#) == 1)
        #expect(!text.contains("alice"))
    }

    @Test("logins by outcome, throttled apart; history lag from the oldest transaction read; nothing read records nothing")
    func loginsAndLag() {
        let registry = PrometheusCollectorRegistry()
        let metrics = ServerMetrics(factory: PrometheusMetricsFactory.pgmodel(registry: registry))
        let user = SessionUser(id: UUID(), name: "alice", isAdmin: false)
        metrics.recordLogin(.success(user), throttled: false)
        metrics.recordLogin(.failure(WireError(.authenticationFailed, "no")), throttled: false)
        metrics.recordLogin(.failure(WireError(.rateLimited, "later")), throttled: true)
        metrics.recordLogin(.failure(LoginAdmission.busy), throttled: false)
        let now = Date()
        metrics.recordHistoryRead(oldestCommitted: now.addingTimeInterval(-3), now: now)
        metrics.recordHistoryRead(oldestCommitted: nil, now: now)
        let text = Self.text(registry)
        #expect(Self.value(text, #"pgmodel_logins_total{outcome="ok"}"#) == 1)
        #expect(Self.value(text, #"pgmodel_logins_total{outcome="authentication_failed"}"#) == 1)
        #expect(Self.value(text, #"pgmodel_logins_total{outcome="throttled"}"#) == 1)
        #expect(Self.value(text, #"pgmodel_logins_total{outcome="server_busy"}"#) == 1)
        #expect(Self.value(text, "pgmodel_subscriber_history_lag_seconds_count") == 1)
        #expect(Self.value(text, "pgmodel_subscriber_history_lag_seconds_sum") == 3)
        #expect(Self.value(text, #"pgmodel_subscriber_history_lag_seconds_bucket{le="2.0"}"#) == 0)
        #expect(Self.value(text, #"pgmodel_subscriber_history_lag_seconds_bucket{le="5.0"}"#) == 1)
        #expect(!text.contains("alice"), "no user names in labels")
    }

    @Test("held-save bytes follow reservations and releases")
    func heldSaves() {
        let registry = PrometheusCollectorRegistry()
        let metrics = ServerMetrics(factory: PrometheusMetricsFactory.pgmodel(registry: registry))
        let budget = HeldSaveBudget(limit: 1000, perUserLimit: 600, gauge: metrics.heldSaves)
        let user = UUID()
        #expect(budget.reserve(400, for: user))
        #expect(Self.value(Self.text(registry), "pgmodel_held_save_bytes") == 400)
        #expect(!budget.reserve(300, for: user), "past the user's share")
        #expect(Self.value(Self.text(registry), "pgmodel_held_save_bytes") == 400)
        budget.release(400, for: user)
        #expect(Self.value(Self.text(registry), "pgmodel_held_save_bytes") == 0)
    }

    @Test("a metric object is made once per name and labels, then reused")
    func cacheReuses() {
        let cache = MetricsCache(factory: NOOPMetricsHandler.instance)
        let first = cache.counter("pgmodel_x_total", ("operation", "fetch"), ("outcome", "ok"))
        #expect(first === cache.counter("pgmodel_x_total", ("operation", "fetch"), ("outcome", "ok")))
        #expect(first !== cache.counter("pgmodel_x_total", ("operation", "fetch"), ("outcome", "timeout")))
        #expect(cache.timer("pgmodel_y_seconds", ("operation", "save")) === cache.timer("pgmodel_y_seconds", ("operation", "save")))
    }

    @Test("store outcomes: ok, the error's code, or 'error'; only conflicts have a kind")
    func outcomes() {
        #expect(StoreMetrics.outcome(of: nil) == "ok")
        #expect(StoreMetrics.outcome(of: PGModelError(.timeout, "late")) == "timeout")
        #expect(StoreMetrics.outcome(of: CancellationError()) == "cancelled")
        struct Odd: Error {}
        #expect(StoreMetrics.outcome(of: Odd()) == "error")
        #expect(StoreMetrics.conflictKind(of: "save_conflict") == "save_conflict")
        #expect(StoreMetrics.conflictKind(of: "would_deadlock") == "would_deadlock")
        #expect(StoreMetrics.conflictKind(of: "timeout") == nil)
    }

    @Test("a port box hands the bound port to waiters before and after; a failure before binding reaches them")
    func portBox() async throws {
        let box = PortBox()
        async let waited = box.value()
        box.set(9090)
        #expect(try await waited == 9090)
        box.fail(PGModelError(.connectionFailed, "stopped"))
        #expect(try await box.value() == 9090, "a later failure does not take the port back")
        let failing = PortBox()
        failing.fail(PGModelError(.invalidConfiguration, "in use"))
        await #expect(throws: PGModelError.self) { _ = try await failing.value() }
    }
}
