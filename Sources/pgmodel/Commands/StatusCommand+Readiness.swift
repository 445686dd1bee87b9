import ArgumentParser
import Foundation
@_spi(PGModelInternals) import PGModelCore
@_spi(PGModelInternals) import PGModelServer

extension StatusCommand {
    /// Reads `url`'s `/health/ready` (a server's metrics endpoint) and prints its version and checks;
    /// exits 1 when the server is not ready, and fails when the endpoint cannot be reached.
    func showReadiness(_ url: URL) async throws {
        let answer = try await reportingFailures {
            guard let host = url.host, !host.isEmpty else { throw CommandFailure("--server \(url) names no host") }
            let client = MetricsEndpointClient(host: host, port: url.port ?? 80)
            return try await client.get("/health/ready")
        }
        guard let report = try? JSONDecoder().decode(HealthReport.self, from: Data(answer.body)) else {
            throw CommandFailure("\(url) answered \(answer.status) without a readiness report: is it a pgmodel metrics endpoint?")
        }
        if json {
            print(String(decoding: report.encoded(), as: UTF8.self))
        } else {
            print("server: \(report.version) at \(url.host ?? ""):\(url.port ?? 80), \(report.isReady ? "ready" : "not ready")")
            for check in report.checks {
                print("  \(check.name): \(check.ok ? "ok" : "failing")\(check.detail.map { " (\($0))" } ?? "")")
            }
        }
        if !report.isReady { throw ExitCode(1) }
    }
}
