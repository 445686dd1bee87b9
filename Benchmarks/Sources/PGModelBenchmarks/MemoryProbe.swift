import Foundation
@_spi(PGModelInternals) import PGModel
import PostgresNIO

/// Peak memory of one PGModel operation, measured in a child process of this binary: the kernel's
/// high-water mark of resident memory (VmHWM in /proc/self/status) only ever rises, so each operation
/// needs a process of its own, started fresh, doing nothing else first.
///
///   PGModelBenchmarks --probe save N            one save() of N new models into a fresh schema
///   PGModelBenchmarks --probe enumerate SCHEMA  enumerate (batch 1,000) over an existing table
///   PGModelBenchmarks --probe fetch SCHEMA      one fetch of the same table
///
/// The child prints one line, `probe seconds=S baseline_kb=B peak_kb=P rows=R`: B is VmHWM after the
/// container is open (the runtime, the connections), P at the end.
struct MemoryProbe: Sendable {
    var seconds: Double
    var baselineKB: Int
    var peakKB: Int
    var rows: Int

    static func highWaterMarkKB() -> Int {
        guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) else { return 0 }
        for line in status.split(separator: "\n") where line.hasPrefix("VmHWM:") {
            return Int(line.split(separator: " ").dropFirst().first { !$0.isEmpty } ?? "") ?? 0
        }
        return 0
    }

    var line: String { "probe seconds=\(seconds) baseline_kb=\(baselineKB) peak_kb=\(peakKB) rows=\(rows)" }

    /// The child's side: runs the probe named by `arguments` (what follows `--probe`).
    static func run(_ arguments: [String], table: SuiteTable) async throws -> MemoryProbe {
        guard arguments.count == 2 else { throw SuiteError("usage: --probe save N | enumerate SCHEMA | fetch SCHEMA") }
        let clock = ContinuousClock()
        switch arguments[0] {
        case "save":
            guard let count = Int(arguments[1]), count > 0 else { throw SuiteError("--probe save takes a row count") }
            let rows = RecordRow.make(count: count)
            let schema = SuiteTable.freshSchema("save")
            let url = table.storeURL(schema: schema)
            let container = try blocking { try ModelContainer(for: BenchRecord.self, configurations: SuiteTable.configuration(url)) }
            let baseline = highWaterMarkKB()
            let start = clock.now
            try blocking {
                let context = ModelContext(container)
                for row in rows { context.insert(BenchRecord(row)) }
                try context.save()
            }
            let elapsed = clock.now - start
            let peak = highWaterMarkKB()
            await container.close()
            let admin = try await table.connect()
            try await table.drop(schema: schema, on: admin)
            try await admin.close()
            return MemoryProbe(seconds: durationSeconds(elapsed), baselineKB: baseline, peakKB: peak, rows: count)
        case "enumerate", "fetch":
            let url = table.storeURL(schema: arguments[1])
            let container = try blocking { try ModelContainer(for: BenchRecord.self, configurations: SuiteTable.configuration(url)) }
            let baseline = highWaterMarkKB()
            let start = clock.now
            let count = try blocking {
                if arguments[0] == "fetch" { return try ModelContext(container).fetch(FetchDescriptor<BenchRecord>()).count }
                return try LargeTableBenchmark.enumerateAll(container)
            }
            let elapsed = clock.now - start
            let peak = highWaterMarkKB()
            await container.close()
            return MemoryProbe(seconds: durationSeconds(elapsed), baselineKB: baseline, peakKB: peak, rows: count)
        default:
            throw SuiteError("unknown probe \(arguments[0])")
        }
    }

    /// The parent's side: runs this binary with `--probe arguments…` and reads its line.
    static func spawn(_ arguments: [String]) throws -> MemoryProbe {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: try FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe"))
        process.arguments = ["--probe"] + arguments
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        let text = String(decoding: data, as: UTF8.self)
        guard process.terminationStatus == 0,
              let line = text.split(separator: "\n").last(where: { $0.hasPrefix("probe ") }) else {
            throw SuiteError("probe \(arguments.joined(separator: " ")) failed (exit \(process.terminationStatus)): \(text)")
        }
        var fields: [String: String] = [:]
        for pair in line.split(separator: " ").dropFirst() {
            let parts = pair.split(separator: "=", maxSplits: 1)
            if parts.count == 2 { fields[String(parts[0])] = String(parts[1]) }
        }
        guard let seconds = fields["seconds"].flatMap(Double.init), let baseline = fields["baseline_kb"].flatMap(Int.init),
              let peak = fields["peak_kb"].flatMap(Int.init), let rows = fields["rows"].flatMap(Int.init) else {
            throw SuiteError("probe printed an unreadable line: \(line)")
        }
        return MemoryProbe(seconds: seconds, baselineKB: baseline, peakKB: peak, rows: rows)
    }
}

func durationSeconds(_ duration: Duration) -> Double {
    let (whole, attoseconds) = duration.components
    return Double(whole) + Double(attoseconds) / 1e18
}
