import Foundation
@_spi(PGModelInternals) import PGModel

/// The bulk-write workloads, one per process so each peak RSS is its own:
///
///   PGModelBenchmarks --writes insert 100000   one save() of N new rows
///   PGModelBenchmarks --writes update 20000    one save() changing two columns of N rows
///   PGModelBenchmarks --writes delete 20000    one save() deleting N rows
///   PGModelBenchmarks --writes fetch 20000     30 fetches of N rows, fresh contexts (profiling the fetch path)
///
/// Prints the timed save and the process's peak RSS (VmHWM); run under `/usr/bin/time -v` for a second opinion.
@Model
final class WriteBenchRow {
    #Index<WriteBenchRow>([\.rank])
    var name: String
    var category: String
    var price: Double
    var quantity: Int
    var created: Date
    var active: Bool
    var note: String?
    var score: Double
    var rank: Int

    init(_ i: Int) {
        name = "row \(i)"
        category = "category \(i % 17)"
        price = Double(i) * 0.25
        quantity = i % 1000
        created = Date(timeIntervalSince1970: 1_700_000_000 + Double(i))
        active = i % 2 == 0
        note = i % 3 == 0 ? nil : "note \(i)"
        score = Double(i % 97) / 7
        rank = i
    }
}

/// The process's peak resident set (or, with `field` "VmRSS:", the current one), from /proc (Linux); nil elsewhere.
func peakResidentMegabytes(_ field: String = "VmHWM:") -> Double? {
    guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8),
          let line = status.split(separator: "\n").first(where: { $0.hasPrefix(field) }),
          let kilobytes = Double(line.split(separator: " ").dropFirst().first ?? "") else { return nil }
    return kilobytes / 1024
}

func runWriteBenchmark(arguments: [String], url: URL) throws {
    let mode = arguments.first ?? "insert"
    let count = arguments.dropFirst().first.flatMap { Int($0) } ?? 20_000
    var configuration = ModelConfiguration(url: url)
    configuration.requestTimeout = .seconds(600)   // the baseline's 20,000-row delete took longer than the default 30 s
    let container = try ModelContainer(for: WriteBenchRow.self, configurations: configuration)
    if mode != "insert" {
        let seed = ModelContext(container)
        for i in 0..<count { seed.insert(WriteBenchRow(i)) }
        try seed.save()
    }
    if mode == "fetch" {
        // For profiling the direct fetch path alone: 30 fetches of every row, each with a fresh context.
        var times: [Double] = []
        for _ in 0..<30 {
            let start = ContinuousClock.now
            let fetched = try ModelContext(container).fetch(FetchDescriptor<WriteBenchRow>()).count
            times.append(durationSeconds(ContinuousClock.now - start) * 1000)
            guard fetched == count else { throw PGModelError(.internalError, "fetched \(fetched) of \(count) rows") }
        }
        print("| fetch | \(count) | median \(String(format: "%.1f", percentile(times, 0.5))) ms | min \(String(format: "%.1f", times.min() ?? 0)) ms |")
        return
    }
    let context = ModelContext(container)
    let start: ContinuousClock.Instant
    // The models' creation and `insert` calls, which an import pays too (the suite times them with the save).
    var preparation = ""
    switch mode {
    case "insert":
        let began = ContinuousClock.now
        for i in 0..<count { context.insert(WriteBenchRow(i)) }
        start = .now
        preparation = String(format: " (creating and inserting the models before it: %.0f ms)", durationSeconds(start - began) * 1000)
    case "update":
        let rows = try context.fetch(FetchDescriptor<WriteBenchRow>())
        for row in rows {
            row.score += 1
            row.note = "changed \(row.rank)"
        }
        start = .now
    case "delete":
        let rows = try context.fetch(FetchDescriptor<WriteBenchRow>())
        for row in rows { context.delete(row) }
        start = .now
    default:
        throw PGModelError(.invalidField, "--writes takes insert, update or delete, not \(mode)")
    }
    let before = peakResidentMegabytes("VmRSS:")
    try context.save()
    let elapsed = ContinuousClock.now - start
    let after = peakResidentMegabytes("VmRSS:")
    let check = ModelContext(container)
    let remaining = try check.fetchCount(FetchDescriptor<WriteBenchRow>())
    let milliseconds = Double(elapsed.components.seconds) * 1000 + Double(elapsed.components.attoseconds) / 1e15
    print("| \(mode) | \(count) | \(String(format: "%.0f", milliseconds)) ms\(preparation) | \(String(format: "%.0f", Double(count) / milliseconds * 1000)) rows/s | "
        + "peak RSS \(peakResidentMegabytes().map { String(format: "%.0f MB", $0) } ?? "?") (RSS before the save \(before.map { String(format: "%.0f MB", $0) } ?? "?"), after \(after.map { String(format: "%.0f MB", $0) } ?? "?")) | rows after: \(remaining) |")
}
