import Foundation
import Logging
@_spi(PGModelInternals) import PGModel
@_spi(PGModelInternals) import PGModelCore
import PostgresNIO

/// A row as a new user writes one: a unique key (an indexed column to fetch by) and a label.
@Model
final class ScaleRow {
    @Attribute(.unique) var key: Int
    var label: String

    init(key: Int, label: String) {
        self.key = key
        self.label = label
    }
}

/// `--scaling`: many writers and many readers at once, as a new user would try it. For each number of
/// callers (each caller a task of its own, looping for a fixed time): one-row inserts and point reads by an
/// indexed column on raw PostgresNIO (a `PostgresClient` whose pool has one connection per caller), the
/// same as `ModelContext` saves and fetches on a direct container (default settings), and through an
/// in-process service (a non-admin user, default settings). Prints operations per second and each
/// figure's ratio to raw, all from one run.
///
///   PGModelBenchmarks --scaling [--quick] [--callers 1,8,32]
func runScalingBenchmark(databaseURL: URL, callerCounts: [Int], seconds: Double) async throws {
    var callerCounts = callerCounts
    let logger = Logger(label: "bench.scaling")
    let connection = try await PostgresConnection.connect(configuration: try PostgresConnection.Configuration.benchmark(databaseURL), id: 1, logger: logger)
    let schema = "bench_scale_" + UUID().uuidString.lowercased().replacingOccurrences(of: "-", with: "").prefix(8)
    guard var schemaURL = URLComponents(url: databaseURL, resolvingAgainstBaseURL: false) else {
        throw PGModelError(.invalidConfiguration, "DATABASE_URL is not a URL")
    }
    schemaURL.queryItems = [URLQueryItem(name: "schema", value: schema)]
    guard let directURL = schemaURL.url else { throw PGModelError(.invalidConfiguration, "DATABASE_URL is not a URL") }
    let seeded = 1_000

    let direct = try ModelContainer(for: ScaleRow.self, configurations: ModelConfiguration(url: directURL))
    let seed = ModelContext(direct)
    for key in 0..<seeded { seed.insert(ScaleRow(key: key, label: "row \(key)")) }
    try await seed.saveAsync()

    // PGMODEL_BENCH_MAX_CONCURRENT=N sets how many requests of one connection the service runs at once.
    let concurrency = ProcessInfo.processInfo.environment["PGMODEL_BENCH_MAX_CONCURRENT"].flatMap(Int.init)
    let service = try await InProcessService.start(databaseURL: databaseURL, schema: schema, on: connection, logger: logger) {
        if let concurrency { $0.maxConcurrentRequests = concurrency }
    }
    let remote = try ModelContainer(for: ScaleRow.self, configurations: ModelConfiguration(url: service.url))
    let remoteSeed = ModelContext(remote)
    // The service user's own rows: a non-admin reads only what it owns.
    for key in 0..<seeded { remoteSeed.insert(ScaleRow(key: seeded + key, label: "row \(key)")) }
    try await remoteSeed.saveAsync()

    // The raw baseline's table: the same columns, the same unique index on the key.
    _ = try await connection.query(PostgresQuery(unsafeSQL: """
        CREATE TABLE "\(schema)"."raw_row" ("id" uuid PRIMARY KEY, "key" bigint NOT NULL UNIQUE, "label" text NOT NULL)
        """), logger: logger).collect()
    _ = try await connection.query(PostgresQuery(unsafeSQL: """
        INSERT INTO "\(schema)"."raw_row" SELECT gen_random_uuid(), k, 'row ' || k FROM generate_series(0, \(seeded - 1)) k
        """), logger: logger).collect()

    let keys = KeySource()
    print("scaling: \(String(format: "%.0f", seconds)) s per cell, callers \(callerCounts.map(String.init).joined(separator: ", "))")
    print("| callers | raw INSERT/s | direct saves/s | service saves/s | raw point reads/s | direct | service |")
    print("|---:|---:|---:|---:|---:|---:|---:|")
    // PGMODEL_BENCH_SCALING_ONLY=direct-saves (or service-saves, direct-reads, service-reads; several, comma
    // separated, run in turn) runs those cells alone, each for as long as PGMODEL_BENCH_SECONDS says: a steady
    // load to profile, or one cell's effect on the next.
    if let only = ProcessInfo.processInfo.environment["PGMODEL_BENCH_SCALING_ONLY"] {
        let span = ProcessInfo.processInfo.environment["PGMODEL_BENCH_SECONDS"].flatMap(Double.init) ?? 20
        for callers in callerCounts {
            for cell in only.split(separator: ",").map(String.init) {
                let rate: Double
                switch cell {
                case "direct-saves": rate = try await saves(on: direct, callers: callers, seconds: span, keys: keys)
                case "service-saves": rate = try await saves(on: remote, callers: callers, seconds: span, keys: keys)
                case "direct-reads": rate = try await reads(on: direct, callers: callers, seconds: span, keys: 0..<seeded)
                default: rate = try await reads(on: remote, callers: callers, seconds: span, keys: seeded..<(2 * seeded))
                }
                print("\(cell), \(callers) callers: " + String(format: "%.0f/s", rate))
            }
        }
        callerCounts = []
    }
    for callers in callerCounts {
        var rawConfiguration = PostgresClient.Configuration(
            host: directURL.host ?? "127.0.0.1", port: directURL.port ?? 5432, username: directURL.user ?? "postgres",
            password: directURL.password, database: String(directURL.path.dropFirst()), tls: .disable)
        rawConfiguration.options.maximumConnections = callers
        rawConfiguration.options.minimumConnections = 0
        let raw = PostgresClient(configuration: rawConfiguration, backgroundLogger: logger)
        let running = Task { await raw.run() }

        let insertSQL = "INSERT INTO \"\(schema)\".\"raw_row\" (\"id\", \"key\", \"label\") VALUES ($1, $2, $3)"
        let selectSQL = "SELECT \"id\", \"label\" FROM \"\(schema)\".\"raw_row\" WHERE \"key\" = $1"
        // Warm-up: every caller's connection opens before the clock starts.
        try await forEachCaller(callers, seconds: 0.3) { _ in
            _ = try await raw.query(PostgresQuery(unsafeSQL: selectSQL, binds: bindings(Int.random(in: 0..<seeded))), logger: logger).collect()
        }
        let rawInserts = try await forEachCaller(callers, seconds: seconds) { _ in
            let key = keys.next()
            var binds = PostgresBindings()
            binds.append(UUID())
            binds.append(key)
            binds.append("row \(key)")
            _ = try await raw.query(PostgresQuery(unsafeSQL: insertSQL, binds: binds), logger: logger).collect()
        }
        let rawReads = try await forEachCaller(callers, seconds: seconds) { _ in
            let rows = try await raw.query(PostgresQuery(unsafeSQL: selectSQL, binds: bindings(Int.random(in: 0..<seeded))), logger: logger).collect()
            guard rows.count == 1 else { throw PGModelError(.internalError, "a raw point read found \(rows.count) rows") }
        }
        running.cancel()

        let directSaves = try await saves(on: direct, callers: callers, seconds: seconds, keys: keys)
        let remoteSaves = try await saves(on: remote, callers: callers, seconds: seconds, keys: keys)
        let directReads = try await reads(on: direct, callers: callers, seconds: seconds, keys: 0..<seeded)
        let remoteReads = try await reads(on: remote, callers: callers, seconds: seconds, keys: seeded..<(2 * seeded))

        func cell(_ value: Double, _ base: Double) -> String { String(format: "%.0f (%.2f×)", value, value / base) }
        print("| \(callers) | " + String(format: "%.0f", rawInserts) + " | \(cell(directSaves, rawInserts)) | \(cell(remoteSaves, rawInserts)) | "
              + String(format: "%.0f", rawReads) + " | \(cell(directReads, rawReads)) | \(cell(remoteReads, rawReads)) |")
    }

    await direct.close()
    await remote.close()
    await service.stop()
    try await connection.dropBenchmarkSchema(schema, logger: logger)
    try await connection.close()
}

private func bindings(_ key: Int) -> PostgresBindings {
    var binds = PostgresBindings()
    binds.append(key)
    return binds
}

/// Unique keys for inserted rows, shared by every caller of every cell.
private final class KeySource: @unchecked Sendable {
    // @unchecked: guarded by `lock`.
    private let lock = NSLock()
    private var value = 10_000_000

    func next() -> Int {
        lock.lock(); defer { lock.unlock() }
        value += 1
        return value
    }
}

/// One-row `ModelContext` saves per second: each caller inserts a row and saves, in a loop. A caller
/// starts a new context every hundred saves, as a request handler's would be short-lived.
private func saves(on container: ModelContainer, callers: Int, seconds: Double, keys: KeySource) async throws -> Double {
    try await forEachCaller(callers, seconds: 0.3) { _ in
        let context = ModelContext(container)
        let key = keys.next()
        context.insert(ScaleRow(key: key, label: "warm \(key)"))
        try await context.saveAsync()
    }
    return try await forEachCaller(callers, seconds: seconds, state: { ModelContext(container) }) { context, done in
        if done % 100 == 99 { context = ModelContext(container) }
        let key = keys.next()
        context.insert(ScaleRow(key: key, label: "row \(key)"))
        try await context.saveAsync()
    }
}

/// Point fetches per second by the unique key, each caller with a context of its own.
private func reads(on container: ModelContainer, callers: Int, seconds: Double, keys: Range<Int>) async throws -> Double {
    try await forEachCaller(callers, seconds: 0.3, state: { ModelContext(container) }) { context, _ in
        _ = try await fetchOne(context, Int.random(in: keys))
    }
    return try await forEachCaller(callers, seconds: seconds, state: { ModelContext(container) }) { context, done in
        if done % 100 == 99 { context = ModelContext(container) }
        guard try await fetchOne(context, Int.random(in: keys)) else {
            throw PGModelError(.internalError, "a point fetch found no row")
        }
    }
}

private func fetchOne(_ context: ModelContext, _ key: Int) async throws -> Bool {
    var descriptor = FetchDescriptor<ScaleRow>(predicate: #Predicate { $0.key == key })
    descriptor.fetchLimit = 1
    return try await context.fetchAsync(descriptor).first?.label != nil
}

/// Runs `body` in `callers` tasks, each looping until `seconds` have passed since they all started;
/// returns completed calls per second.
@discardableResult
private func forEachCaller(_ callers: Int, seconds: Double,
                           _ body: @escaping @Sendable (Int) async throws -> Void) async throws -> Double {
    try await forEachCaller(callers, seconds: seconds, state: { () }) { _, done in try await body(done) }
}

private func forEachCaller<State>(_ callers: Int, seconds: Double, state: @escaping @Sendable () -> State,
                                  _ body: @escaping @Sendable (inout State, Int) async throws -> Void) async throws -> Double {
    let clock = ContinuousClock()
    let start = clock.now
    let end = start + .milliseconds(Int(seconds * 1000))
    let total = try await withThrowingTaskGroup(of: Int.self) { group in
        for _ in 0..<callers {
            group.addTask {
                var local = state()
                var done = 0
                while clock.now < end {
                    try await body(&local, done)
                    done += 1
                }
                return done
            }
        }
        return try await group.reduce(0, +)
    }
    let elapsed = clock.now - start
    return Double(total) / (Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18)
}
