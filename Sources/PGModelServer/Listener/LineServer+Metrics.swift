import Logging
import NIOCore
@_spi(PGModelInternals) import PGModelCore
@_spi(PGModelInternals) import PGModelPostgres
@_spi(PGModelInternals) import PGModelWire
import Prometheus

extension LineServer {
    /// The port of the metrics and health endpoint, once it listens (useful with port `0`). Throws when
    /// no endpoint is configured, it could not bind, or the server has stopped.
    ///
    /// ```swift
    /// let port = try await server.metricsPort()   // GET http://127.0.0.1:\(port)/metrics
    /// ```
    public func metricsPort() async throws -> Int {
        guard let metricsServer else {
            throw PGModelError(.invalidConfiguration, "the server has no metrics endpoint (LineServerConfiguration.metricsEndpoint)")
        }
        return try await metricsServer.listeningPort()
    }

    static func makeMetricsServer(_ configuration: LineServerConfiguration, gateway: DatabaseGateway, readiness: ServerReadiness,
                                  eventLoopGroup: any EventLoopGroup, logger: Logger) throws -> MetricsHTTPServer? {
        guard let endpoint = configuration.metricsEndpoint else { return nil }
        guard (0...65535).contains(endpoint.port) else {
            throw PGModelError(.invalidConfiguration, "the metrics port \(endpoint.port) is not between 0 and 65535")
        }
        let registry = endpoint.registry
        let probe = ReadinessProbe(gateway: gateway, readiness: readiness, logger: logger)
        let router = MetricsHTTPRouter(version: WireProtocol.serverName, scrape: {
            var bytes: [UInt8] = []
            registry.emit(into: &bytes)
            return bytes
        }, ready: { await probe.report() })
        return MetricsHTTPServer(host: endpoint.host, port: endpoint.port, router: router, logger: logger, eventLoopGroup: eventLoopGroup)
    }

    /// Runs `body` (the line listener) with the metrics endpoint beside it: the endpoint starts first, so
    /// health answers `not_ready` while the database is being prepared, serves through the listener's
    /// graceful drain, and stops when the listener has. A failure of either ends both.
    func withMetricsEndpoint(_ body: @escaping @Sendable () async throws -> Void) async throws {
        guard let metricsServer else { return try await body() }
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try await metricsServer.run() }
            group.addTask { try await body() }
            // The endpoint runs until cancelled: the first task to end is the listener, or a failure.
            _ = try await group.next()
            group.cancelAll()
            // The cancelled endpoint may end with its channel's error: the shutdown is still a clean one.
            while !group.isEmpty { _ = try? await group.next() }
        }
    }
}
