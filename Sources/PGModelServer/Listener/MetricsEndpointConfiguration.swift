import Prometheus

/// Where a ``LineServer`` serves `/metrics`, `/health/live` and `/health/ready` over HTTP, and which
/// Prometheus registry `/metrics` renders (the one the process's `MetricsSystem` was bootstrapped with,
/// or the one behind ``LineServerConfiguration/metricsFactory``).
///
/// ```swift
/// let registry = PrometheusCollectorRegistry()
/// configuration.metricsFactory = PrometheusMetricsFactory(registry: registry)
/// configuration.metricsEndpoint = MetricsEndpointConfiguration(port: 9090, registry: registry)
/// ```
public struct MetricsEndpointConfiguration: Sendable {
    /// The address to listen on; `127.0.0.1` (the default) keeps it local.
    public var host: String
    /// The TCP port; `0` picks a free one (``LineServer/metricsPort()`` tells which).
    public var port: Int
    /// What `/metrics` renders.
    public var registry: PrometheusCollectorRegistry

    public init(host: String = "127.0.0.1", port: Int, registry: PrometheusCollectorRegistry) {
        self.host = host
        self.port = port
        self.registry = registry
    }
}
