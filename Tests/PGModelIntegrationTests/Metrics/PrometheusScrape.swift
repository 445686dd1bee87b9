import Foundation
@_spi(PGModelInternals) import PGModelServer

/// One scrape of Prometheus's text format, as series → value, read through a real TCP connection.
///
/// ```swift
/// let scrape = try await PrometheusScrape.read(port: port)
/// scrape["pgmodel_requests_total", ["operation": "fetch", "outcome": "ok"]]   // 2.0
/// ```
struct PrometheusScrape: Sendable {
    /// Each sample by its name and its labels, sorted (`name{a="1",b="2"}`).
    var samples: [String: Double] = [:]

    static func read(port: Int) async throws -> PrometheusScrape {
        let answer = try await MetricsEndpointClient(host: "127.0.0.1", port: port).get("/metrics")
        guard answer.status == 200 else { throw ScrapeFailure(description: "GET /metrics answered \(answer.status)") }
        return PrometheusScrape(text: answer.text)
    }

    init(text: String) {
        for line in text.split(separator: "\n") where !line.hasPrefix("#") {
            guard let space = line.lastIndex(of: " "), let value = Double(line[line.index(after: space)...]) else { continue }
            let series = line[..<space]
            guard let brace = series.firstIndex(of: "{") else {
                samples[String(series)] = value
                continue
            }
            let name = String(series[..<brace])
            let body = series[series.index(after: brace)...].dropLast()   // without the closing brace
            var labels: [String: String] = [:]
            for pair in body.split(separator: ",") {
                let parts = pair.split(separator: "=", maxSplits: 1)
                guard parts.count == 2 else { continue }
                labels[String(parts[0])] = String(parts[1]).trimmingCharacters(in: CharacterSet(charactersIn: "\""))
            }
            samples[Self.key(name, labels)] = value
        }
    }

    static func key(_ name: String, _ labels: [String: String]) -> String {
        guard !labels.isEmpty else { return name }
        return name + "{" + labels.sorted { $0.key < $1.key }.map { "\($0.key)=\"\($0.value)\"" }.joined(separator: ",") + "}"
    }

    /// The sample's value; 0 when the series does not exist (yet).
    subscript(_ name: String, _ labels: [String: String] = [:]) -> Double {
        samples[Self.key(name, labels)] ?? 0
    }

    /// Whether the series exists.
    func has(_ name: String, _ labels: [String: String] = [:]) -> Bool {
        samples[Self.key(name, labels)] != nil
    }
}

struct ScrapeFailure: Error, CustomStringConvertible {
    var description: String
}
