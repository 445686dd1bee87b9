import NIOHTTP1

/// Answers the metrics endpoint's requests, apart from any socket: `GET /metrics` (Prometheus text),
/// `GET /health/live`, `GET /health/ready` (200 or 503), `HEAD` of each; 405 for another method on those
/// paths, 404 for any other path. The query string is ignored.
///
/// ```swift
/// let router = MetricsHTTPRouter(version: "pgmodel/0.1", scrape: { registryBytes() }, ready: { await probe.report() })
/// let answer = await router.answer(method: .GET, uri: "/health/ready")
/// ```
package struct MetricsHTTPRouter: Sendable {
    /// One HTTP answer.
    package struct Answer: Sendable, Equatable {
        package var status: HTTPResponseStatus
        package var contentType: String
        package var body: [UInt8]
        /// The `Allow` header of a 405.
        package var allow: String?

        package init(status: HTTPResponseStatus, contentType: String = "text/plain; charset=utf-8", body: [UInt8], allow: String? = nil) {
            self.status = status
            self.contentType = contentType
            self.body = body
            self.allow = allow
        }
    }

    /// Prometheus's text exposition format, version 0.0.4.
    package static let prometheusContentType = "text/plain; version=0.0.4; charset=utf-8"
    package static let paths = ["/metrics", "/health/live", "/health/ready"]

    let version: String
    let scrape: @Sendable () -> [UInt8]
    let ready: @Sendable () async -> HealthReport

    package init(version: String, scrape: @escaping @Sendable () -> [UInt8], ready: @escaping @Sendable () async -> HealthReport) {
        self.version = version
        self.scrape = scrape
        self.ready = ready
    }

    package func answer(method: HTTPMethod, uri: String) async -> Answer {
        let path = uri.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false).first.map(String.init) ?? uri
        guard Self.paths.contains(path) else {
            return Answer(status: .notFound, body: Array("not found; try /metrics, /health/live or /health/ready\n".utf8))
        }
        guard method == .GET || method == .HEAD else {
            return Answer(status: .methodNotAllowed, body: Array("method not allowed\n".utf8), allow: "GET, HEAD")
        }
        var answer: Answer
        switch path {
        case "/metrics":
            answer = Answer(status: .ok, contentType: Self.prometheusContentType, body: scrape())
        case "/health/live":
            answer = Answer(status: .ok, contentType: "application/json", body: HealthReport.live(version: version).encoded())
        default:
            let report = await ready()
            answer = Answer(status: report.isReady ? .ok : .serviceUnavailable, contentType: "application/json", body: report.encoded())
        }
        // HEAD: the same status and type, no body.
        if method == .HEAD { answer.body = [] }
        return answer
    }
}
