import Foundation
import Logging
@_spi(PGModelInternals) import PGModel
@_spi(PGModelInternals) import PGModelClient
@_spi(PGModelInternals) import PGModelCore
@_spi(PGModelInternals) import PGModelServer
import PostgresNIO

/// A row one tenant saves while every other tenant's subscribers listen.
@Model
final class SubscribedRow {
    var label: String

    init(label: String) {
        self.label = label
    }
}

/// `--subscribers`: commit→event latency and the service's cost per commit with many subscribed
/// connections. `users` users each hold `subscribers / users` subscribed connections (a
/// `RemoteModelStore.changeSignals()` stream each) to an in-process service; commits are one-row saves
/// by the users in turn, each seen by its own user's subscribers only, so every commit costs the
/// service the visibility decision for every user listening. Prints, for each subscriber count, the
/// latency from the start of a save to each of its user's subscribers receiving the event (p50, p99),
/// the process's CPU time per commit (service and clients share the process) and the service's
/// visibility reads per commit.
///
///   ulimit -n 20000   # two descriptors per subscriber: its client socket and the service's
///   PGModelBenchmarks --subscribers [--counts 100,1000] [--users 100] [--quick] [--all-at-once]
///
/// With `allAtOnce` every new client connects and logs in at the same moment (a login storm, as after a
/// restart) instead of in batches of 100; either way the time until all are subscribed is printed.
func runSubscribersBenchmark(databaseURL: URL, subscriberCounts: [Int], users: Int, commits: Int, allAtOnce: Bool = false) async throws {
    let logger = Logger(label: "bench.subscribers")
    let connection = try await PostgresConnection.connect(configuration: try PostgresConnection.Configuration.benchmark(databaseURL), id: 1, logger: logger)
    let schema = "bench_subs_" + UUID().uuidString.lowercased().replacingOccurrences(of: "-", with: "").prefix(8)
    let prefix = "bsub_" + UUID().uuidString.lowercased().prefix(6) + "_"
    let names = (0..<users).map { "\(prefix)\($0)" }
    for name in names {
        _ = try await connection.query(PostgresQuery(
            unsafeSQL: "INSERT INTO pgmodel.users (name, password_hash, is_admin) VALUES ($1, crypt('secret', gen_salt('bf', 4)), false)",
            binds: { var b = PostgresBindings(); b.append(name); return b }()), logger: logger).collect()
    }
    var serverURL = URLComponents(url: databaseURL, resolvingAgainstBaseURL: false)
    serverURL?.queryItems = nil
    var configuration = LineServerConfiguration(
        databaseURL: serverURL?.url?.absoluteString ?? databaseURL.absoluteString, host: "127.0.0.1", port: 0, schemaName: schema)
    // Every subscriber is a connection of its own, idle but for events.
    configuration.maxConnections = nil
    configuration.idleTimeout = nil
    var quiet = Logger(label: "bench.server")
    quiet.logLevel = .error
    let server = try LineServer(configuration: configuration, logger: quiet)
    let running = Task { try await server.run() }
    let port = try await server.listeningPort()
    func url(_ user: Int) throws -> URL {
        guard let url = URL(string: "pgmodel://\(names[user]):secret@127.0.0.1:\(port)") else {
            throw PGModelError(.invalidConfiguration, "cannot form the service URL")
        }
        return url
    }
    // The database owner creates the tables (a direct store), as an admin would: users may only use them.
    var direct = URLComponents(url: databaseURL, resolvingAgainstBaseURL: false)
    let items = direct?.queryItems ?? []
    direct?.queryItems = items + [URLQueryItem(name: "schema", value: String(schema))]
    guard let directURL = direct?.url else { throw PGModelError(.invalidConfiguration, "cannot form the direct store's URL") }
    _ = try ModelContainer(for: SubscribedRow.self, configurations: ModelConfiguration(url: directURL))
    // Writers: the first users' containers, one commit each in turn.
    let writerCount = min(users, 10)
    var writers: [ModelContext] = []
    for user in 0..<writerCount {
        writers.append(ModelContext(try ModelContainer(for: SubscribedRow.self, configurations: ModelConfiguration(url: try url(user)))))
    }

    print("subscribers: \(users) users, \(commits) commits per row, each by one of \(writerCount) users")
    print("| subscribers | event p50 ms | event p99 ms | save p50 ms | CPU ms / commit | visibility reads / commit |")
    print("|---:|---:|---:|---:|---:|---:|")
    var stores: [RemoteModelStore] = []
    var listeners: [Task<Void, Never>] = []
    let arrivals = ArrivalLog()
    for count in subscriberCounts {
        // More subscribers, spread evenly over the users: subscriber i is user i % users's.
        let connecting = ContinuousClock.now
        while stores.count < count {
            let index = stores.count
            let store = try RemoteModelStore(url: try url(index % users))
            stores.append(store)
            arrivals.append()
            let signals = store.changeSignals()
            listeners.append(Task {
                for await signal in signals where signal.kind == .committed {
                    let now = ContinuousClock.now
                    arrivals.record(index, now)
                }
            })
            // Clients come in batches of 100, each logged in and subscribed before the next: a thousand
            // logins from one address in the same instant is a login storm, not a subscriber count.
            if !allAtOnce, stores.count % 100 == 0 {
                let settled = ContinuousClock.now + .seconds(60)
                while server.signalForwarderCount < stores.count, ContinuousClock.now < settled { try await Task.sleep(for: .milliseconds(20)) }
            }
        }
        let ready = ContinuousClock.now + .seconds(120)
        while server.signalForwarderCount < count, ContinuousClock.now < ready { try await Task.sleep(for: .milliseconds(20)) }
        guard server.signalForwarderCount >= count else {
            print("| \(count) | only \(server.signalForwarderCount) subscribed within 120 s | | | | |")
            break
        }
        print("(\(count) subscribed \(allAtOnce ? "all at once" : "in batches of 100") in \(subscriberFigure(milliseconds(ContinuousClock.now - connecting) / 1_000)) s)")
        try await Task.sleep(for: .milliseconds(500))   // logins and their first reads settle

        var latencies: [Double] = []
        var saveTimes: [Double] = []
        let reads = server.visibilityReadCount
        let cpu = processCPUSeconds()
        for commit in 0..<commits {
            let writer = commit % writerCount
            let start = ContinuousClock.now
            writers[writer].insert(SubscribedRow(label: "c\(commit)"))
            try await writers[writer].saveAsync()
            saveTimes.append(milliseconds(ContinuousClock.now - start))
            // Wait for every subscriber of the writer's user (with a deadline: a miss shows as a gap).
            let mine = stride(from: writer, to: count, by: users).map { $0 }
            let deadline = ContinuousClock.now + .seconds(10)
            while ContinuousClock.now < deadline {
                let arrived = arrivals.arrivals(of: mine, after: start)
                if arrived.count == mine.count {
                    latencies += arrived.map { milliseconds($0 - start) }
                    break
                }
                try await Task.sleep(for: .milliseconds(1))
            }
        }
        let cpuPerCommit = (processCPUSeconds() - cpu) * 1_000 / Double(commits)
        let readsPerCommit = Double(server.visibilityReadCount - reads) / Double(commits)
        latencies.sort()
        saveTimes.sort()
        let expected = commits * max(1, count / users)
        print("| \(count) | \(subscriberFigure(percentile(latencies, 0.5))) | \(subscriberFigure(percentile(latencies, 0.99))) | "
            + "\(subscriberFigure(percentile(saveTimes, 0.5))) | \(subscriberFigure(cpuPerCommit)) | \(subscriberFigure(readsPerCommit))"
            + "\(latencies.count < expected ? " (\(expected - latencies.count) events missing)" : "") |")
    }
    for listener in listeners { listener.cancel() }
    for store in stores { await store.close() }
    running.cancel()
    _ = try? await running.value
    try await connection.dropBenchmarkSchema(schema, logger: logger)
    _ = try await connection.query(PostgresQuery(unsafeSQL: "DELETE FROM pgmodel.users WHERE name LIKE '\(prefix)%'"), logger: logger).collect()
    try await connection.close()
}

/// This process's user and system CPU time, in seconds.
func processCPUSeconds() -> Double {
    var usage = rusage()
    #if os(Linux)
    getrusage(__rusage_who_t(RUSAGE_SELF.rawValue), &usage)
    #else
    getrusage(RUSAGE_SELF, &usage)
    #endif
    return Double(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) + Double(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1_000_000
}

/// A figure of the table, two decimals.
private func subscriberFigure(_ value: Double) -> String { String(format: "%.2f", value) }

/// When each subscriber last received a `committed` event.
private final class ArrivalLog: @unchecked Sendable {
    private let lock = NSLock()
    private var last: [ContinuousClock.Instant?] = []

    func append() {
        lock.withLock { last.append(nil) }
    }

    func record(_ subscriber: Int, _ instant: ContinuousClock.Instant) {
        lock.withLock { last[subscriber] = instant }
    }

    /// The arrivals of `subscribers` later than `start`.
    func arrivals(of subscribers: [Int], after start: ContinuousClock.Instant) -> [ContinuousClock.Instant] {
        lock.withLock { subscribers.compactMap { last[$0] }.filter { $0 > start } }
    }
}
