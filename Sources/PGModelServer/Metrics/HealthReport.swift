import Foundation

/// What `/health/live` and `/health/ready` answer, as small JSON: overall status, the server's version
/// and each check with whether it passed and a short word on why not.
///
/// ```swift
/// let report = HealthReport(version: "pgmodel/0.1", checks: [.init(name: "database", ok: true)])
/// report.isReady    // true
/// ```
public struct HealthReport: Codable, Sendable, Equatable {
    /// One check of readiness.
    ///
    /// ```swift
    /// let check = HealthReport.Check(name: "listener", ok: true, detail: "idle")
    /// ```
    public struct Check: Codable, Sendable, Equatable {
        /// `database`, `schema` or `listener`.
        public var name: String
        /// Whether it passed.
        public var ok: Bool
        /// A short word on its state (`listening`, `unreachable`, …); no secrets, no user data.
        public var detail: String?

        public init(name: String, ok: Bool, detail: String? = nil) {
            self.name = name
            self.ok = ok
            self.detail = detail
        }
    }

    /// `live`, `ready` or `not_ready`.
    public var status: String
    /// The server's name and version (`pgmodel/0.1`).
    public var version: String
    /// The checks made; empty for liveness.
    public var checks: [Check]

    /// A readiness report: `ready` when every check passed.
    public init(version: String, checks: [Check]) {
        self.version = version
        self.checks = checks
        self.status = checks.allSatisfy(\.ok) ? "ready" : "not_ready"
    }

    /// A liveness report: the process answers.
    public static func live(version: String) -> HealthReport {
        var report = HealthReport(version: version, checks: [])
        report.status = "live"
        return report
    }

    /// Whether every check passed.
    public var isReady: Bool { status == "ready" }

    /// The JSON body, keys sorted so answers compare byte for byte.
    public func encoded() -> [UInt8] {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return (try? Array(encoder.encode(self))) ?? Array(#"{"status":"not_ready"}"#.utf8)
    }
}
