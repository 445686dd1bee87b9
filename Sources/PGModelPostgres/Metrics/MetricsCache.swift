import Metrics
import NIOConcurrencyHelpers

/// Metric objects made once per name and label values, then reused: a request looks its counter up in a
/// dictionary instead of asking the metrics backend (which takes its own lock and builds label strings)
/// every time. Label values must come from small fixed sets (operation names, error codes), never from
/// users or ids, so the cache stays small.
///
/// ```swift
/// let cache = MetricsCache(factory: MetricsSystem.factory)
/// cache.counter("pgmodel_store_calls_total", ("operation", "fetch"), ("outcome", "ok")).increment()
/// ```
package final class MetricsCache: Sendable {
    private struct Key: Hashable {
        var name: String
        var first: String
        var second: String
    }

    /// Where the metric objects come from: the one the process bootstrapped, or a test's own.
    package let factory: any MetricsFactory
    private let counters = NIOLockedValueBox<[Key: Counter]>([:])
    private let timers = NIOLockedValueBox<[Key: Timer]>([:])
    private let gauges = NIOLockedValueBox<[Key: Gauge]>([:])

    package init(factory: any MetricsFactory) {
        self.factory = factory
    }

    /// The counter `name` with up to two labels (name, value).
    package func counter(_ name: String, _ first: (String, String)? = nil, _ second: (String, String)? = nil) -> Counter {
        let key = Key(name: name, first: first?.1 ?? "", second: second?.1 ?? "")
        if let counter = counters.withLockedValue({ $0[key] }) { return counter }
        let made = Counter(label: name, dimensions: Self.dimensions(first, second), factory: factory)
        return counters.withLockedValue { counters in
            if let existing = counters[key] { return existing }
            counters[key] = made
            return made
        }
    }

    /// The timer (a histogram of durations) `name` with up to two labels.
    package func timer(_ name: String, _ first: (String, String)? = nil, _ second: (String, String)? = nil) -> Timer {
        let key = Key(name: name, first: first?.1 ?? "", second: second?.1 ?? "")
        if let timer = timers.withLockedValue({ $0[key] }) { return timer }
        let made = Timer(label: name, dimensions: Self.dimensions(first, second), factory: factory)
        return timers.withLockedValue { timers in
            if let existing = timers[key] { return existing }
            timers[key] = made
            return made
        }
    }

    /// The gauge `name` with up to two labels.
    package func gauge(_ name: String, _ first: (String, String)? = nil, _ second: (String, String)? = nil) -> Gauge {
        let key = Key(name: name, first: first?.1 ?? "", second: second?.1 ?? "")
        if let gauge = gauges.withLockedValue({ $0[key] }) { return gauge }
        let made = Gauge(label: name, dimensions: Self.dimensions(first, second), factory: factory)
        return gauges.withLockedValue { gauges in
            if let existing = gauges[key] { return existing }
            gauges[key] = made
            return made
        }
    }

    private static func dimensions(_ first: (String, String)?, _ second: (String, String)?) -> [(String, String)] {
        var dimensions: [(String, String)] = []
        if let first { dimensions.append(first) }
        if let second { dimensions.append(second) }
        return dimensions
    }
}
