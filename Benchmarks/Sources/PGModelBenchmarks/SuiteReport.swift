import Foundation

/// What one run of the side-by-side suite measured, as Markdown tables (for the terminal and
/// docs/PERFORMANCE.md) and as JSON (for the plot that scripts/benchmark.sh draws).
struct SuiteReport {
    let options: ComparisonSuite.Options
    var contenders: [(key: String, title: String)] = []
    /// contender key → workload → one value per round: milliseconds, or microseconds for `.point`.
    var samples: [String: [SuiteWorkload: [Double]]] = [:]
    var large: LargeTableBenchmark.Result?
    var save: MemoryProbe?

    /// The samples of psql's start-up and login alone (`CopyContender.startUp`), kept under the insert.
    static let psqlStartUpKey = "copy-startup"
    /// The point fetches of ``PointFloor``: raw PostgresNIO's select behind a bare NIO line server.
    static let floorKey = "line-server-floor"
    /// The same select on the floor's connection without the line server (the driver's future API).
    static let floorDriverKey = "line-server-floor-driver"

    mutating func add(_ key: String, _ workload: SuiteWorkload, _ value: Double) {
        samples[key, default: [:]][workload, default: []].append(value)
    }

    func value(_ key: String, _ workload: SuiteWorkload) -> Double? {
        guard let values = samples[key]?[workload], !values.isEmpty else { return nil }
        return median(values)
    }

    static func unit(_ workload: SuiteWorkload) -> String { workload == .point ? "µs" : "ms" }

    static func format(_ value: Double, _ unit: String) -> String {
        let digits = abs(value) < 10 ? 2 : abs(value) < 100 ? 1 : 0
        let text = String(format: "%.\(digits)f", value)
        guard digits == 0 else { return text + " " + unit }
        return grouped(Int(value.rounded())) + " " + unit
    }

    static func ratio(_ value: Double) -> String { String(format: "%.2f×", value) }

    private func rowTitle(_ workload: SuiteWorkload) -> String {
        switch workload {
        case .insert: return "insert \(grouped(options.rows)) models, one save"
        case .fetchAll: return "fetch all \(grouped(options.rows)) into objects"
        case .pages: return "\(options.pages) pages of \(options.pageSize) rows by an indexed range, sorted"
        case .point: return "point fetch by an indexed column (p50 of \(grouped(options.pointCalls)) calls)"
        }
    }

    var markdown: String {
        var out = "### Side by side: \(grouped(options.rows)) rows, medians of \(options.rounds) interleaved rounds\n\n"
        out += "| workload | " + contenders.map(\.title).joined(separator: " | ") + " |\n"
        out += "|---|" + contenders.map { _ in "---:|" }.joined() + "\n"
        for workload in SuiteWorkload.allCases {
            out += "| \(rowTitle(workload)) | "
            out += contenders.map { c in value(c.key, workload).map { SuiteReport.format($0, SuiteReport.unit(workload)) } ?? "" }
                .joined(separator: " | ") + " |\n"
        }
        out += "\nThe service column's insert is one save, sent in parts of at most 1 MiB (the service's request-line limit) "
        out += "and run by the server as one transaction; Fluent's is one transaction of "
        out += "`create(on:)` calls of \(grouped(FluentContender.rowsPerStatement)) rows (PostgreSQL's 65,535-parameter limit); "
        out += "raw PostgresNIO's is one `INSERT … SELECT FROM unnest(…)`; `\\copy` is the psql process from launch to exit"
        if let startUp = value(SuiteReport.psqlStartUpKey, .insert) {
            out += ", of which \(SuiteReport.format(startUp, "ms")) is psql's start-up and login alone (`psql -c 'SELECT 1'`)"
        }
        out += ".\n"

        out += "\n### Ratios to raw PostgresNIO (lower is better; 1.00× is the driver's own cost)\n\n"
        let others = contenders.filter { $0.key != "raw" }
        out += "| workload | " + others.map(\.title).joined(separator: " | ") + " | service ÷ direct |\n"
        out += "|---|" + others.map { _ in "---:|" }.joined() + "---:|\n"
        for workload in SuiteWorkload.allCases {
            guard let raw = value("raw", workload) else { continue }
            out += "| \(rowTitle(workload)) | "
            out += others.map { c in value(c.key, workload).map { SuiteReport.ratio($0 / raw) } ?? "" }.joined(separator: " | ")
            let serviceOverDirect = value("service", workload).flatMap { s in value("pgmodel", workload).map { s / $0 } }
            out += " | " + (serviceOverDirect.map(SuiteReport.ratio) ?? "") + " |\n"
        }
        if let copy = value("copy", .insert) {
            out += "\n### Inserts against `psql \\copy`\n\n| contender | rows/s | × `\\copy`'s time | % of `\\copy`'s rows/s |\n|---|---:|---:|---:|\n"
            for c in contenders {
                guard let time = value(c.key, .insert) else { continue }
                let rate = Double(options.rows) / (time / 1000)
                out += "| \(c.title) | \(grouped(Int(rate))) | \(SuiteReport.ratio(time / copy)) | \(String(format: "%.0f%%", copy / time * 100)) |\n"
            }
        }
        if let service = value("service", .point), let direct = value("pgmodel", .point) {
            out += "\nA point fetch through the service takes \(service >= direct ? "+" : "")\(SuiteReport.format(service - direct, "µs")) over the direct store (p50).\n"
        }
        if let floor = value(SuiteReport.floorKey, .point), let driver = value(SuiteReport.floorDriverKey, .point) {
            out += "\nThe floor under any service here: raw PostgresNIO's point select behind a bare NIO line server that runs it "
            out += "on its own event loop's connection (no task, JSON, pool, deadline or row-level security; `PointFloor`) takes "
            out += "\(SuiteReport.format(floor, "µs")) (p50), \(floor >= driver ? "+" : "")\(SuiteReport.format(floor - driver, "µs")) over the same select "
            out += "on that connection without the server (\(SuiteReport.format(driver, "µs")), the driver's future API, which collects the rows on its "
            out += "loop; the raw contender's async row sequence costs more).\n"
        }
        if let large {
            out += "\n### `enumerate` over \(grouped(large.rows)) rows (PGModel, direct store, batch 1,000)\n\n"
            out += "| path | time (median of \(large.enumerateMilliseconds.count)) | × one fetch | peak RSS (VmHWM) | its baseline |\n|---|---:|---:|---:|---:|\n"
            let fetch = median(large.fetchMilliseconds)
            out += "| `enumerate(_:batchSize: 1000)` | \(SuiteReport.format(median(large.enumerateMilliseconds), "ms")) | "
            out += "\(SuiteReport.ratio(median(large.enumerateMilliseconds) / fetch)) | \(megabytes(large.enumeratePeak?.peakKB)) | \(megabytes(large.enumeratePeak?.baselineKB)) |\n"
            out += "| one `fetch` of the same rows | \(SuiteReport.format(fetch, "ms")) | 1.00× | \(megabytes(large.fetchPeak?.peakKB)) | \(megabytes(large.fetchPeak?.baselineKB)) |\n"
            out += "| raw PostgresNIO, one SELECT into structs | \(SuiteReport.format(median(large.rawMilliseconds), "ms")) | "
            out += "\(SuiteReport.ratio(median(large.rawMilliseconds) / fetch)) | | |\n"
            out += "\nPeak RSS is the child process's high-water mark (its whole process: runtime, connections and the models); "
            out += "the baseline is the same mark once the container was open.\n"
        }
        if let save {
            out += "\n### One `save()` of \(grouped(save.rows)) new models (PGModel, direct store, child process)\n\n"
            out += "| time | rows/s | peak RSS (VmHWM) | baseline before the models were made |\n|---:|---:|---:|---:|\n"
            out += "| \(SuiteReport.format(save.seconds * 1000, "ms")) | \(grouped(Int(Double(save.rows) / save.seconds))) | "
            out += "\(megabytes(save.peakKB)) | \(megabytes(save.baselineKB)) |\n"
        }
        return out
    }

    private func megabytes(_ kilobytes: Int?) -> String {
        guard let kilobytes, kilobytes > 0 else { return "" }
        return String(format: "%.0f MB", Double(kilobytes) / 1024)
    }

    /// Medians and every sample, for the plot and for later comparison with the figures after the work.
    var json: Data {
        var medians: [String: [String: Double]] = [:]
        var all: [String: [String: [Double]]] = [:]
        for (key, workloads) in samples {
            for (workload, values) in workloads {
                medians[key, default: [:]][workload.rawValue] = median(values)
                all[key, default: [:]][workload.rawValue] = values
            }
        }
        var object: [String: Any] = [
            "rows": options.rows, "rounds": options.rounds, "pages": options.pages, "page_size": options.pageSize,
            "point_calls": options.pointCalls,
            "contenders": contenders.map { ["key": $0.key, "title": $0.title] },
            "workloads": SuiteWorkload.allCases.map { ["key": $0.rawValue, "title": rowTitle($0), "unit": SuiteReport.unit($0)] },
            "medians": medians, "samples": all,
        ]
        if let large {
            object["enumerate"] = [
                "rows": large.rows, "enumerate_ms": large.enumerateMilliseconds, "fetch_ms": large.fetchMilliseconds,
                "raw_ms": large.rawMilliseconds, "enumerate_peak_kb": large.enumeratePeak?.peakKB ?? 0,
                "fetch_peak_kb": large.fetchPeak?.peakKB ?? 0,
            ] as [String: Any]
        }
        if let save {
            object["save"] = ["rows": save.rows, "seconds": save.seconds, "peak_kb": save.peakKB, "baseline_kb": save.baselineKB] as [String: Any]
        }
        return (try? JSONSerialization.data(withJSONObject: object, options: [.prettyPrinted, .sortedKeys])) ?? Data()
    }
}

/// `20000` as `20,000`, whatever the locale: the tables go into a document.
func grouped(_ value: Int) -> String {
    let digits = String(value.magnitude)
    var out = ""
    for (i, character) in digits.enumerated() {
        if i > 0 && (digits.count - i) % 3 == 0 { out.append(",") }
        out.append(character)
    }
    return (value < 0 ? "-" : "") + out
}
