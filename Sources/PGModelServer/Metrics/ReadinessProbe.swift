import Logging
@_spi(PGModelInternals) import PGModelCore
@_spi(PGModelInternals) import PGModelIO
@_spi(PGModelInternals) import PGModelPostgres
@_spi(PGModelInternals) import PGModelWire
import PostgresNIO

/// Decides readiness from real components: a bounded `SELECT 1` through the server's pool (the database
/// is reachable and the pool can lend a connection), the schema loaded, and the change listener listening
/// (the server starts it: change events and session revocations ride on it).
///
/// ```swift
/// let probe = ReadinessProbe(gateway: gateway, readiness: readiness, timeout: .seconds(2), logger: logger)
/// let report = await probe.report()
/// ```
package struct ReadinessProbe: Sendable {
    let gateway: DatabaseGateway
    let readiness: ServerReadiness
    /// The longest the database check may take; past it the database counts as unreachable.
    let timeout: Duration
    let logger: Logger

    package init(gateway: DatabaseGateway, readiness: ServerReadiness, timeout: Duration = .seconds(2), logger: Logger) {
        self.gateway = gateway
        self.readiness = readiness
        self.timeout = timeout
        self.logger = logger
    }

    /// Runs every check.
    package func report() async -> HealthReport {
        let database = await checkDatabase()
        let schema = HealthReport.Check(name: "schema", ok: readiness.isSchemaLoaded,
                                        detail: readiness.isSchemaLoaded ? "loaded" : "not_loaded")
        let status = readiness.listenerStatus
        let listenerOK = status == .listening
        let listener = HealthReport.Check(name: "listener", ok: listenerOK, detail: status?.rawValue ?? "not_started")
        var checks = [database, schema, listener]
        // Only while it drains: a running server's report keeps its three checks.
        if readiness.isDraining { checks.append(HealthReport.Check(name: "shutdown", ok: false, detail: "draining")) }
        return HealthReport(version: WireProtocol.serverName, checks: checks)
    }

    private func checkDatabase() async -> HealthReport.Check {
        let gateway = gateway
        let logger = logger
        let timeout = timeout
        do {
            // The whole check is bounded, opening a connection included: a probe must answer in time.
            try await Deadline(timeout, operation: "the readiness check").run {
                try await gateway.pool.withConnection(scope: .trusted, deadline: ConnectionDeadline.timeAmount(timeout),
                                                      operation: "readiness check") { connection in
                    _ = try await connection.connection.query("SELECT 1", logger: logger).collect()
                }
            }
            return HealthReport.Check(name: "database", ok: true, detail: "reachable")
        } catch let error as PGModelError where error.code == .timeout {
            return HealthReport.Check(name: "database", ok: false, detail: "timeout")
        } catch {
            logger.debug("readiness check: database unreachable", metadata: ["error": "\(type(of: error))"])
            return HealthReport.Check(name: "database", ok: false, detail: "unreachable")
        }
    }
}
