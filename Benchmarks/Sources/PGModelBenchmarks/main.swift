import Dispatch
import Foundation
import Observation
@_spi(PGModelInternals) import PGModel

// Commit-to-observer latency with 1, 100 and 1000 ResultsObservers, and writer throughput with
// observers on and off. Observers live in one container, the writer in another (as another process
// would: its own connections), so every notification crosses PostgreSQL's LISTEN/NOTIFY and the
// history log. Prints a Markdown table.
//
//   DATABASE_URL=postgres://… swift run -c release PGModelBenchmarks [--quick]
//       [--point | --rls | --isolation | --history [--service] | --fetch | --phases | --migration | --compare | --writes insert|update|delete N
//        | --conflicts | --wire | --service-table [--remote-only]
//        | --service-point [--remote-only | --direct-only] [--models] [--service-binary PATH] | --observability
//        | --scaling [--callers 1,8,32] | --subscribers [--counts 100,1000] [--users 100] [--all-at-once]]
//   env -u DATABASE_URL swift run -c release PGModelBenchmarks --in-memory [N]
//
// --history --service measures the latency with both containers clients of a service run in this process.
// --compare runs the side-by-side suite instead (SuiteCommand.swift); scripts/benchmark.sh runs
// it and writes docs/PERFORMANCE.md. --migration runs the seed's migration plan over 100,000 trips.
// --writes times one save of N inserts, updates or deletes (run it under /usr/bin/time -v for memory).
// --conflicts times one-row updates with 1 and 16 writers, conflict detection on against off.
// --fetch times fetch-all, pages and point fetches, direct and through the service, against raw PostgresNIO;
// --fetch --direct-only leaves the service out (a shorter run, for profiling the direct store).
// --wire times the fetch-all answer's `table` line written and read alone (no sockets, no database);
// --service-table times the stores' 20,000-row table (no models) direct and through the service,
// alternately; with --remote-only only the service's (for `perf record`). --service-point does the same
// for point fetches by an indexed column, call by call; --models makes them `ModelContext.fetch` calls on
// two containers, and --service-binary runs the service as a `pgmodel serve` process (the release binary
// at PATH: `swift build -c release --product pgmodel` in Benchmarks/), as deployed.
// --observability times point fetches and one-row saves through the service with metrics off, with a no-op
// metrics factory and with the Prometheus registry, in one run, with ratios against off (ObservabilityCost.swift).
// --scaling runs one-row saves and point reads with 1, 8 and 32 concurrent callers on raw PostgresNIO, a direct
// container and the service, and prints each against raw.
// --subscribers times commit→event latency, CPU and visibility reads per commit with 100 and 1,000 subscribed
// connections among 100 users (SubscribersBenchmark.swift; raise `ulimit -n` to twice the largest count);
// with --all-at-once every client connects and logs in at the same moment (a login storm) instead of in
// batches of 100, and the time until all are subscribed is printed.
// --isolation times a non-admin user's fetch of all 10,000 of their rows and save of 1,000 new rows through
// the service, with no shares and with another user's records shared with them (IsolationCost.swift).
// PGMODEL_BENCH_ROUNDS=N sets --fetch's rounds (5 by default) and --isolation's (15, 5 with --quick); PGMODEL_BENCH_CALLS=N --service-point's calls; PGMODEL_BENCH_KEEP_SCHEMA=1 keeps
// --service-point's schema and rows afterwards, to measure its select from SQL (pgbench).
// PGMODEL_BENCH_SERVER_STDERR=1 lets a --service-binary server write to this process's standard error.
// PGMODEL_BENCH_SERVICE_DATABASE_URL=URL gives the service's data pool another URL than DATABASE_URL (LISTEN
// stays on DATABASE_URL): PgBouncer's in transaction mode (`scripts/pgbouncer.sh start DIR URL`), or
// DATABASE_URL with `?pgmodel_pooling=transaction`, to price the per-transaction identity without a pooler.
// Compare --service-point's service figure with and without it.

let quick = CommandLine.arguments.contains("--quick")
// In-memory stores on the private cluster: no DATABASE_URL by design (InMemoryBenchmark.swift).
if let mode = CommandLine.arguments.firstIndex(of: "--in-memory") {
    try runInMemoryBenchmark(arguments: Array(CommandLine.arguments[(mode + 1)...]))
    exit(0)
}
guard let base = ProcessInfo.processInfo.environment["DATABASE_URL"] else {
    FileHandle.standardError.write(Data("set DATABASE_URL (scripts/pg.sh env prints it)\n".utf8))
    exit(2)
}

// The side-by-side suite (and the child processes that measure its peak memory).
if try SuiteCommand.run(arguments: CommandLine.arguments, databaseURL: base, quick: quick) { exit(0) }

func freshURL() -> URL {
    let schema = "bench_" + UUID().uuidString.lowercased().replacingOccurrences(of: "-", with: "").prefix(10)
    return URL(string: base + (base.contains("?") ? "&" : "?") + "schema=" + schema)!
}

// The cost of conflict detection on one-row updates (ConflictDetectionBenchmark.swift).
if CommandLine.arguments.contains("--conflicts") {
    try runConflictDetectionBenchmark(url: freshURL(), quick: quick)
    exit(0)
}

// Bulk writes: one workload per process, so its peak RSS is its own.
if let writes = CommandLine.arguments.firstIndex(of: "--writes") {
    try runWriteBenchmark(arguments: Array(CommandLine.arguments[(writes + 1)...]), url: freshURL())
    exit(0)
}

func percentile(_ values: [Double], _ p: Double) -> Double {
    guard !values.isEmpty else { return .nan }
    let sorted = values.sorted()
    return sorted[min(sorted.count - 1, Int((Double(sorted.count - 1) * p).rounded()))]
}

func ms(_ seconds: Double) -> String { String(format: "%.2f ms", seconds * 1000) }

/// Counts notifications of one commit across all observers.
final class Arrivals: @unchecked Sendable {
    private let lock = NSLock()
    private var times: [Double] = []
    private let done = DispatchSemaphore(value: 0)
    private let expected: Int

    init(expected: Int) { self.expected = expected }

    func arrive() {
        let now = ProcessInfo.processInfo.systemUptime
        lock.lock()
        times.append(now)
        let complete = times.count == expected
        lock.unlock()
        if complete { done.signal() }
    }

    func wait() -> [Double]? {
        guard done.wait(timeout: .now() + 30) == .success else { return nil }
        lock.lock(); defer { lock.unlock() }
        return times
    }
}

struct LatencyResult {
    var observers: Int
    var commits: Int
    var commitToNotified: [Double] = []
    var saveToNotified: [Double] = []
    var saveDurations: [Double] = []
}

func measureLatency(observers count: Int, commits: Int) throws -> LatencyResult {
    let url = freshURL()
    let observing = try ModelContainer(for: BenchNote.self, configurations: ModelConfiguration(url: url))
    let writing = try ModelContainer(for: BenchNote.self, configurations: ModelConfiguration(url: url))
    return try measureLatency(observers: count, commits: commits, observing: observing, writing: writing)
}

/// The latency of `commits` saves of `writing`'s context as seen by `count` ResultsObservers of `observing`.
func measureLatency(observers count: Int, commits: Int, observing: ModelContainer, writing: ModelContainer) throws -> LatencyResult {
    let context = ModelContext(observing)
    let observers = try (0..<count).map { _ in try ResultsObserver<BenchNote, Never>(modelContext: context) }
    let writer = ModelContext(writing)
    var result = LatencyResult(observers: count, commits: commits)
    for i in 0..<commits {
        let arrivals = Arrivals(expected: count)
        for observer in observers {
            // Reading re-queries a stale observer: that cost is outside the timed window.
            withObservationTracking({ _ = observer.results }, onChange: { arrivals.arrive() })
        }
        writer.insert(BenchNote(title: "note \(i)", topic: "bench"))
        let start = ProcessInfo.processInfo.systemUptime
        try writer.save()
        let committed = ProcessInfo.processInfo.systemUptime
        guard let times = arrivals.wait() else {
            throw PGModelError(.internalError, "observers were not notified within 30 s (commit \(i))")
        }
        result.saveDurations.append(committed - start)
        for t in times {
            result.commitToNotified.append(max(0, t - committed))
            result.saveToNotified.append(t - start)
        }
    }
    _ = observers
    return result
}

/// Saves per second of `writers` concurrent writers (threads, one context each) making `saves` one-row
/// saves in all, with `count` history observers (and one results observer) watching.
func measureThroughput(observers count: Int, saves: Int, writers: Int = 1) throws -> Double {
    let url = freshURL()
    let observing = try ModelContainer(for: BenchNote.self, configurations: ModelConfiguration(url: url))
    let writing = try ModelContainer(for: BenchNote.self, configurations: ModelConfiguration(url: url))
    let context = ModelContext(observing)
    let observers = try (0..<count).map { _ in try HistoryObserver(observedModels: [BenchNote.self], modelContainer: observing) }
    let resultsObserver = count > 0 ? try ResultsObserver<BenchNote, Never>(modelContext: context) : nil
    let failures = FailureBox()
    let done = DispatchGroup()
    let start = ProcessInfo.processInfo.systemUptime
    for w in 0..<writers {
        done.enter()
        let thread = Thread {
            defer { done.leave() }
            let writer = ModelContext(writing)
            for i in stride(from: w, to: saves, by: writers) {
                writer.insert(BenchNote(title: "note \(i)", topic: "bench"))
                do { try writer.save() } catch { failures.record(error) }
            }
        }
        thread.start()
    }
    done.wait()
    let elapsed = ProcessInfo.processInfo.systemUptime - start
    if let error = failures.first { throw error }
    if count > 0 {
        // Every observer must have seen every save, or the "on" figure would flatter.
        let deadline = Date().addingTimeInterval(60)
        while observers.contains(where: { $0.eventCounter < saves }) && Date() < deadline { Thread.sleep(forTimeInterval: 0.01) }
        guard !observers.contains(where: { $0.eventCounter != saves }) else {
            throw PGModelError(.internalError, "an observer missed or repeated a save")
        }
        _ = resultsObserver?.results.count
    }
    return Double(saves) / elapsed
}

if CommandLine.arguments.contains("--wire") {
    try runWireBench(rows: 20_000, rounds: quick ? 10 : 40)
    try runSaveWireBench(rows: 20_000, rounds: quick ? 5 : 15)
    exit(0)
}

if CommandLine.arguments.contains("--service-table") {
    guard let databaseURL = URL(string: base) else { exit(2) }
    runDetached("service-table") {
        try await runServiceTableLoop(databaseURL: databaseURL, rows: 20_000, rounds: quick ? 10 : 30,
                                      remoteOnly: CommandLine.arguments.contains("--remote-only"))
    }
    exit(0)
}

if CommandLine.arguments.contains("--service-point") {
    guard let databaseURL = URL(string: base) else { exit(2) }
    runDetached("service-point") {
        try await runServicePointLoop(databaseURL: databaseURL, rows: 20_000,
                                      calls: ProcessInfo.processInfo.environment["PGMODEL_BENCH_CALLS"].flatMap(Int.init) ?? (quick ? 2_000 : 20_000),
                                      remoteOnly: CommandLine.arguments.contains("--remote-only"),
                                      directOnly: CommandLine.arguments.contains("--direct-only"),
                                      models: CommandLine.arguments.contains("--models"),
                                      binary: InProcessService.binaryArgument)
    }
    exit(0)
}

// The cost of metrics (and later tracing) on the service's point fetches and saves (ObservabilityCost.swift).
if CommandLine.arguments.contains("--observability") {
    guard let databaseURL = URL(string: base) else { exit(2) }
    runDetached("observability") {
        try await runObservabilityBenchmark(databaseURL: databaseURL, rows: 20_000,
                                            calls: ProcessInfo.processInfo.environment["PGMODEL_BENCH_CALLS"].flatMap(Int.init) ?? (quick ? 3_000 : 30_000),
                                            saves: quick ? 300 : 3_000)
    }
    exit(0)
}

// Many writers and readers at once against raw PostgresNIO (ScalingBenchmark.swift).
if CommandLine.arguments.contains("--scaling") {
    guard let databaseURL = URL(string: base) else { exit(2) }
    var callers = [1, 8, 32]
    if let flag = CommandLine.arguments.firstIndex(of: "--callers"), flag + 1 < CommandLine.arguments.count {
        callers = CommandLine.arguments[flag + 1].split(separator: ",").compactMap { Int($0) }.filter { $0 > 0 }
    }
    let callerCounts = callers
    runDetached("scaling") {
        try await runScalingBenchmark(databaseURL: databaseURL, callerCounts: callerCounts, seconds: quick ? 2 : 5)
    }
    exit(0)
}

// Many subscribed connections of many users, one commit at a time (SubscribersBenchmark.swift).
if CommandLine.arguments.contains("--subscribers") {
    guard let databaseURL = URL(string: base) else { exit(2) }
    func listed(_ flag: String, _ fallback: [Int]) -> [Int] {
        guard let index = CommandLine.arguments.firstIndex(of: flag), index + 1 < CommandLine.arguments.count else { return fallback }
        return CommandLine.arguments[index + 1].split(separator: ",").compactMap { Int($0) }.filter { $0 > 0 }
    }
    let counts = listed("--counts", [100, 1_000])
    let users = listed("--users", [100]).first ?? 100
    runDetached("subscribers") {
        try await runSubscribersBenchmark(databaseURL: databaseURL, subscriberCounts: counts, users: users, commits: quick ? 50 : 200,
                                          allAtOnce: CommandLine.arguments.contains("--all-at-once"))
    }
    exit(0)
}

if CommandLine.arguments.contains("--migration") {
    try runMigrationBenchmark(url: freshURL(), rows: quick ? 10_000 : 100_000)
    exit(0)
}

// Where a service point fetch's time goes, step by step (ServicePhases.swift).
if CommandLine.arguments.contains("--phases") {
    guard let databaseURL = URL(string: base) else { exit(2) }
    let done = DispatchSemaphore(value: 0)
    Task.detached {
        do { try await measureServicePhases(databaseURL: databaseURL, calls: quick ? 500 : 3000) } catch { print("phases failed: \(error)") }
        done.signal()
    }
    done.wait()
    exit(0)
}

// The fetch workloads (FetchBench.swift): direct store and service against raw PostgresNIO.
if CommandLine.arguments.contains("--fetch") {
    final class FetchBox: @unchecked Sendable {
        // @unchecked: written by the task before `done` is signalled, read after.
        var result: Result<FetchBenchResult, any Error>?
    }
    guard let databaseURL = URL(string: base) else {
        FileHandle.standardError.write(Data("DATABASE_URL is not a URL\n".utf8))
        exit(2)
    }
    let fetchRounds = Int(ProcessInfo.processInfo.environment["PGMODEL_BENCH_ROUNDS"] ?? "") ?? (quick ? 3 : 5)
    let box = FetchBox()
    let done = DispatchSemaphore(value: 0)
    Task.detached {
        do { box.result = .success(try await measureFetch(databaseURL: databaseURL, rows: 20_000, rounds: fetchRounds, pointCalls: quick ? 500 : 2000,
                                                                   directOnly: CommandLine.arguments.contains("--direct-only"))) } catch { box.result = .failure(error) }
        done.signal()
    }
    done.wait()
    printFetchResult(try (box.result ?? .failure(PGModelError(.internalError, "no result"))).get(), rounds: fetchRounds)
    exit(0)
}

// The isolation checks through the service: fetch and save, without and with shares (IsolationCost.swift).
if CommandLine.arguments.contains("--isolation") {
    guard let databaseURL = URL(string: base) else {
        FileHandle.standardError.write(Data("DATABASE_URL is not a URL\n".utf8))
        exit(2)
    }
    let isolationRounds = Int(ProcessInfo.processInfo.environment["PGMODEL_BENCH_ROUNDS"] ?? "") ?? (quick ? 5 : 15)
    runDetached("isolation") {
        do {
            printIsolationCost(try await measureIsolationCost(databaseURL: databaseURL, rows: 10_000, saveRows: 1_000,
                                                              sharedRecords: 50, rounds: isolationRounds))
        } catch {
            FileHandle.standardError.write(Data("isolation failed: \(error)\n".utf8))
            exit(1)
        }
    }
    exit(0)
}

let pointOnly = CommandLine.arguments.contains("--point")
let rlsOnly = CommandLine.arguments.contains("--rls")
let historyOnly = CommandLine.arguments.contains("--history")
if !pointOnly && !rlsOnly {
let configurations = quick ? [(1, 20), (100, 10), (1000, 3)] : [(1, 200), (100, 100), (1000, 20)]
let throughService = CommandLine.arguments.contains("--service")
print("## Commit-to-observer latency (ResultsObserver, writer in another container\(throughService ? ", both through the service" : ""))\n")
print("| observers | commits | commit→notified p50 | p99 | save start→notified p50 | p99 | save p50 |")
print("|---:|---:|---:|---:|---:|---:|---:|")
for (observers, commits) in configurations {
    let r: LatencyResult
    if throughService, let databaseURL = URL(string: base) {
        let (observing, writing, service) = try serviceContainers(databaseURL: databaseURL)
        r = try measureLatency(observers: observers, commits: commits, observing: observing, writing: writing)
        runDetached("service stop") {
            await observing.close()
            await writing.close()
            await service.stop()
        }
    } else {
        r = try measureLatency(observers: observers, commits: commits)
    }
    print("| \(observers) | \(commits) | \(ms(percentile(r.commitToNotified, 0.5))) | \(ms(percentile(r.commitToNotified, 0.99))) | "
        + "\(ms(percentile(r.saveToNotified, 0.5))) | \(ms(percentile(r.saveToNotified, 0.99))) | \(ms(percentile(r.saveDurations, 0.5))) |")
}

if throughService { exit(0) }
let saves = quick ? 100 : 1000
print("\n## Writer throughput (\(saves) one-row saves, each with its history and NOTIFY)\n")
print("| writers | observers | saves/s |")
print("|---:|---:|---:|")
for writers in [1, 8] {
    for observers in [0, 100] {
        let rate = try measureThroughput(observers: observers, saves: saves, writers: writers)
        print("| \(writers) | \(observers == 0 ? "off (none)" : "on: \(observers) HistoryObservers + 1 ResultsObserver") | \(String(format: "%.0f", rate)) |")
    }
}
}

if historyOnly { exit(0) }

// Row-level security: a 10,000-row fetch through the service, policies on against policies off.
if !pointOnly {
    let rlsRows = 10_000
    let rlsRounds = quick ? 5 : 21
    guard let databaseURL = URL(string: base) else {
        FileHandle.standardError.write(Data("DATABASE_URL is not a URL\n".utf8))
        exit(2)
    }
    let rlsBox = RLSBox()
    let rlsDone = DispatchSemaphore(value: 0)
    Task.detached {
        do { rlsBox.result = .success(try await measureRLSFetch(databaseURL: databaseURL, rows: rlsRows, rounds: rlsRounds)) } catch { rlsBox.result = .failure(error) }
        rlsDone.signal()
    }
    rlsDone.wait()
    let rls = try (rlsBox.result ?? .failure(PGModelError(.internalError, "the RLS benchmark ended without a result"))).get()
    print("\n## Row-level security: fetch of \(rls.rows) rows through the service (\(rlsRounds) alternating rounds, median)\n")
    print("| | ms | × policies off |")
    print("|---|---:|---:|")
    let off = median(rls.offMilliseconds)
    print("| PostgresNIO, same SELECT, one connection (reference) | \(String(format: "%.2f", median(rls.rawMilliseconds))) | \(String(format: "%.2f", median(rls.rawMilliseconds) / off)) |")
    print("| service fetch, row-level security disabled on the table | \(String(format: "%.2f", off)) | 1.00 |")
    print("| service fetch, policies on (as shipped) | \(String(format: "%.2f", median(rls.onMilliseconds))) | \(String(format: "%.2f", median(rls.onMilliseconds) / off)) |")
}

final class FailureBox: @unchecked Sendable {
    // @unchecked: guarded by the lock.
    private let lock = NSLock()
    private var errors: [any Error] = []
    func record(_ error: any Error) { lock.lock(); errors.append(error); lock.unlock() }
    var first: (any Error)? { lock.lock(); defer { lock.unlock() }; return errors.first }
}

final class RLSBox: @unchecked Sendable {
    // @unchecked: written by the task before `done` is signalled, read after.
    var result: Result<RLSFetchResult, any Error>?
}

// Point fetch: the store layer's cost per call over the raw driver, measured in this run.
if rlsOnly { exit(0) }
let pointCalls = quick ? 2000 : 20000
final class PointBox: @unchecked Sendable {
    // @unchecked: written by the task before `done` is signalled, read after.
    var result: Result<PointFetchResult, any Error>?
}
let pointBox = PointBox()
let pointDone = DispatchSemaphore(value: 0)
let pointURL = freshURL()
Task.detached {
    do { pointBox.result = .success(try await measurePointFetch(url: pointURL, calls: pointCalls)) } catch { pointBox.result = .failure(error) }
    pointDone.signal()
}
pointDone.wait()
let point = try (pointBox.result ?? .failure(PGModelError(.internalError, "the point-fetch benchmark ended without a result"))).get()
print("\n## Point fetch by key (\(pointCalls) calls, one of 100 rows, a fresh ModelContext per call)\n")
print("| path | µs per call | × raw driver |")
print("|---|---:|---:|")
print("| PostgresNIO, one connection (baseline) | \(String(format: "%.1f", point.rawMicroseconds)) | 1.00 |")
print("| PGModel `fetch` (synchronous, BlockingBridge) | \(String(format: "%.1f", point.syncMicroseconds)) | \(String(format: "%.2f", point.syncMicroseconds / point.rawMicroseconds)) |")
if let asyncMicroseconds = point.asyncMicroseconds {
    print("| PGModel `fetchAsync` | \(String(format: "%.1f", asyncMicroseconds)) | \(String(format: "%.2f", asyncMicroseconds / point.rawMicroseconds)) |")
}
