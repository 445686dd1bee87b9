import Foundation

/// The command line of the side-by-side suite and of its child probes:
///
///   PGModelBenchmarks --compare [--quick] [--rows N] [--rounds N] [--large N] [--save-rows N] [--json PATH] [--psql PATH]
///   PGModelBenchmarks --probe save N | enumerate SCHEMA | fetch SCHEMA     (run by --compare itself)
///
/// `--compare` prints Markdown tables on standard output, progress on standard error, and with `--json`
/// writes every sample for scripts/benchmark.sh's report and plot.
enum SuiteCommand {
    /// Runs the suite or a probe when `arguments` ask for one; false when they ask for neither.
    static func run(arguments: [String], databaseURL: String, quick: Bool) throws -> Bool {
        guard arguments.contains("--compare") || arguments.contains("--probe") else { return false }
        guard let url = URL(string: databaseURL) else { throw SuiteError("DATABASE_URL is not a URL") }
        let table = try SuiteTable(databaseURL: url)
        if let index = arguments.firstIndex(of: "--probe") {
            let probeArguments = Array(arguments[(index + 1)...])
            let probe = try wait { try await MemoryProbe.run(probeArguments, table: table) }
            print(probe.line)
            return true
        }
        var options = quick ? ComparisonSuite.Options.quick : ComparisonSuite.Options()
        func number(_ flag: String) throws -> Int? {
            guard let index = arguments.firstIndex(of: flag) else { return nil }
            guard index + 1 < arguments.count, let value = Int(arguments[index + 1]), value > 0 else {
                throw SuiteError("\(flag) takes a positive number")
            }
            return value
        }
        func text(_ flag: String) -> String? {
            guard let index = arguments.firstIndex(of: flag), index + 1 < arguments.count else { return nil }
            return arguments[index + 1]
        }
        options.rows = try number("--rows") ?? options.rows
        options.rounds = try number("--rounds") ?? options.rounds
        options.largeRows = try number("--large") ?? options.largeRows
        options.saveRows = try number("--save-rows") ?? options.saveRows
        options.pages = min(options.pages, options.rows / options.pageSize)
        let psql = text("--psql") ?? findPSQL()
        let suite = ComparisonSuite(table: table, options: options, psql: psql)
        let report = try wait { try await Box(suite.run()) }.value
        print(report.markdown)
        if let path = text("--json") {
            try report.json.write(to: URL(fileURLWithPath: path))
        }
        return true
    }

    private static func findPSQL() -> String {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin"
        for directory in path.split(separator: ":") where FileManager.default.isExecutableFile(atPath: "\(directory)/psql") {
            return "\(directory)/psql"
        }
        return "/usr/bin/psql"
    }

    /// Runs `body` on a task and waits for it: the benchmark's top level is synchronous, and the PGModel
    /// calls it measures are SwiftData's synchronous ones.
    private static func wait<T: Sendable>(_ body: @escaping @Sendable () async throws -> T) throws -> T {
        let result = ResultBox<T>()
        let done = DispatchSemaphore(value: 0)
        Task.detached {
            do { result.value = .success(try await body()) } catch { result.value = .failure(error) }
            done.signal()
        }
        done.wait()
        return try (result.value ?? .failure(SuiteError("the task ended without a result"))).get()
    }
}

/// Carries a value that is made on one task and read after it ended.
final class Box<T>: @unchecked Sendable {
    // @unchecked: written once before the task ends, read after `wait` returned.
    let value: T
    init(_ value: T) { self.value = value }
}

final class ResultBox<T>: @unchecked Sendable {
    // @unchecked: written by the task before the semaphore is signalled, read after.
    var value: Result<T, any Error>?
}
