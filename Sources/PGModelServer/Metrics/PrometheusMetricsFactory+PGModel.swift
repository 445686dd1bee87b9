@_spi(PGModelInternals) import PGModelPostgres
import Prometheus

extension PrometheusMetricsFactory {
    /// A Prometheus factory on `registry` with duration buckets fit for PGModel: requests and store calls
    /// from half a millisecond (a point fetch on a local database takes about that) to 30 s, subscribers'
    /// history lag from 10 ms to 5 minutes. Other timers keep swift-prometheus's defaults.
    ///
    /// ```swift
    /// let registry = PrometheusCollectorRegistry()
    /// MetricsSystem.bootstrap(PrometheusMetricsFactory.pgmodel(registry: registry))
    /// ```
    public static func pgmodel(registry: PrometheusCollectorRegistry) -> PrometheusMetricsFactory {
        var factory = PrometheusMetricsFactory(registry: registry)
        let requests: [Duration] = [
            .microseconds(500), .milliseconds(1), .microseconds(2500), .milliseconds(5), .milliseconds(10), .milliseconds(25),
            .milliseconds(50), .milliseconds(100), .milliseconds(250), .milliseconds(500), .seconds(1), .milliseconds(2500),
            .seconds(5), .seconds(10), .seconds(30),
        ]
        for label in [ServerMetrics.requestDuration, StoreMetrics.callDuration, StoreMetrics.poolWait] {
            factory.durationHistogramBuckets[label] = requests
        }
        factory.durationHistogramBuckets[ServerMetrics.historyLag] = [
            .milliseconds(10), .milliseconds(50), .milliseconds(100), .milliseconds(250), .milliseconds(500), .seconds(1),
            .seconds(2), .seconds(5), .seconds(10), .seconds(30), .seconds(60), .seconds(300),
        ]
        return factory
    }
}
