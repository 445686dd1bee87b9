import Foundation
import Logging
@_spi(PGModelInternals) import PGModel
@_spi(PGModelInternals) import PGModelServer
import PostgresNIO

/// What the service's isolation checks (row-level security policies, their share functions and the row
/// triggers) cost a non-admin user's large reads and writes: through an in-process `pgmodel serve`, the
/// user fetches all of their 10,000 rows (a fresh `ModelContext` each round) and saves 1,000 new rows (a
/// fresh batch each round). Each is timed in two situations of the same store:
/// - no shares: nothing is shared with the user, so the policies' share functions find nothing;
/// - shares: another user has shared some of their rows with the user, read-write, so the share
///   functions return rows, the fetch returns those rows too, and inserts consult the sharers.
///
/// The situations alternate round by round (in the order none, shared, shared, none, …), the share
/// being granted or revoked between rounds and outside the timing, so drift hits both alike. All fetch
/// rounds run before the save rounds: the saved rows would otherwise grow what the fetch returns.
/// Run the same source against two builds of the library to compare them.
struct IsolationCostResult {
    var rows: Int
    var saveRows: Int
    var sharedRecords: Int
    var rounds: Int
    var fetchNone: [Double] = []
    var fetchShared: [Double] = []
    var saveNone: [Double] = []
    var saveShared: [Double] = []
}

func measureIsolationCost(databaseURL: URL, rows: Int, saveRows: Int, sharedRecords: Int, rounds: Int) async throws -> IsolationCostResult {
    let schema = "bench_iso_" + UUID().uuidString.lowercased().replacingOccurrences(of: "-", with: "").prefix(8)
    guard var components = URLComponents(url: databaseURL, resolvingAgainstBaseURL: false), let host = components.host else {
        throw PGModelError(.invalidConfiguration, "DATABASE_URL has no host")
    }
    components.queryItems = [URLQueryItem(name: "schema", value: schema)]
    guard let directURL = components.url else { throw PGModelError(.invalidConfiguration, "DATABASE_URL cannot take a schema") }
    // The tables exist before users come: created by the direct store, as at deploy time.
    let direct = try ModelContainer(for: BenchRow.self, configurations: ModelConfiguration(url: directURL))

    let logger = Logger(label: "bench")
    let configuration = PostgresConnection.Configuration(
        host: host, port: components.port ?? 5432, username: components.user ?? "postgres",
        password: components.password, database: String(components.path.dropFirst()), tls: .disable).pgmodelSession()
    let connection = try await PostgresConnection.connect(configuration: configuration, id: 1, logger: logger)
    // The measuring user is the service's own (not an admin); the sharer is a second user of the same service.
    let service = try await InProcessService.start(databaseURL: databaseURL, schema: schema, on: connection, logger: logger)
    let sharerURL = try await service.addUser(on: connection, logger: logger)
    let remote = try ModelContainer(for: BenchRow.self, configurations: ModelConfiguration(url: service.url))
    let sharerContainer = try ModelContainer(for: BenchRow.self, configurations: ModelConfiguration(url: sharerURL))

    let start = Date(timeIntervalSince1970: 1_700_000_000)
    func makeRow(_ i: Int, _ prefix: String) -> BenchRow {
        BenchRow(name: "\(prefix) \(i)", amount: Double(i) * 1.5, createdAt: start.addingTimeInterval(Double(i)), note: i % 3 == 0 ? nil : "note \(i)")
    }
    // In saves of 1,000, so the seeding holds few models at a time.
    for batch in stride(from: 0, to: rows, by: 1000) {
        let seed = ModelContext(remote)
        for i in batch..<min(rows, batch + 1000) { seed.insert(makeRow(i, "row")) }
        try await seed.saveAsync()
    }
    // The sharer's records, kept in one context: sharing and revoking name the models it inserted.
    let sharing = ModelContext(sharerContainer)
    let sharedRows = (0..<sharedRecords).map { makeRow($0, "shared") }
    for row in sharedRows { sharing.insert(row) }
    try await sharing.saveAsync()
    let table = "\"\(schema)\".\"bench_row\""
    _ = try await connection.query(PostgresQuery(unsafeSQL: "VACUUM ANALYZE \(table)"), logger: logger).collect()

    var shared = false
    func setShared(_ on: Bool) async throws {
        guard on != shared else { return }
        for row in sharedRows {
            if on {
                try sharing.share(row, with: service.userName, permission: .readWrite)
            } else {
                try sharing.unshare(row, with: service.userName)
            }
        }
        try await sharing.saveAsync()
        shared = on
    }

    let clock = ContinuousClock()
    func fetchAll() async throws -> Double {
        let context = ModelContext(remote)
        let began = clock.now
        let fetched = try await context.fetchAsync(FetchDescriptor<BenchRow>())
        let elapsed = clock.now - began
        let expected = rows + (shared ? sharedRecords : 0)
        guard fetched.count == expected else {
            throw PGModelError(.internalError, "the service returned \(fetched.count) rows, not \(expected)")
        }
        return microseconds(elapsed) / 1000
    }
    var saved = 0
    // The models are made and inserted before the clock starts: the figure is the save alone.
    func saveBatch() async throws -> Double {
        let context = ModelContext(remote)
        for i in saved..<(saved + saveRows) { context.insert(makeRow(i, "saved")) }
        saved += saveRows
        let began = clock.now
        try await context.saveAsync()
        return microseconds(clock.now - began) / 1000
    }

    var result = IsolationCostResult(rows: rows, saveRows: saveRows, sharedRecords: sharedRecords, rounds: rounds)
    // Which situation comes first alternates with the round: none, shared | shared, none | none, shared …
    let order = (0..<rounds).flatMap { $0 % 2 == 0 ? [false, true] : [true, false] }
    for situation in [false, true] {   // warm up both paths in both situations
        try await setShared(situation)
        _ = try await fetchAll()
    }
    for situation in order {
        try await setShared(situation)
        let milliseconds = try await fetchAll()
        if situation { result.fetchShared.append(milliseconds) } else { result.fetchNone.append(milliseconds) }
    }
    for situation in [false, true] {
        try await setShared(situation)
        _ = try await saveBatch()
    }
    for situation in order {
        try await setShared(situation)
        let milliseconds = try await saveBatch()
        if situation { result.saveShared.append(milliseconds) } else { result.saveNone.append(milliseconds) }
    }

    await remote.close()
    await sharerContainer.close()
    await direct.close()
    await service.stop()
    try await connection.dropBenchmarkSchema(schema, logger: logger)
    try await connection.close()
    return result
}

extension InProcessService {
    /// Adds another non-admin user (password `secret`), as ``start(databaseURL:schema:admin:on:logger:)``
    /// adds its own, and returns the URL that logs in as them at this service.
    func addUser(on connection: PostgresConnection, logger: Logger) async throws -> URL {
        let name = "bench_" + UUID().uuidString.lowercased().prefix(8)
        _ = try await connection.query(PostgresQuery(
            unsafeSQL: "INSERT INTO pgmodel.users (name, password_hash, is_admin) VALUES ($1, crypt('secret', gen_salt('bf', 4)), false)",
            binds: { var b = PostgresBindings(); b.append(name); return b }()), logger: logger).collect()
        guard var components = URLComponents(url: url, resolvingAgainstBaseURL: false) else {
            throw PGModelError(.invalidConfiguration, "cannot read the service URL")
        }
        components.user = name
        guard let other = components.url else { throw PGModelError(.invalidConfiguration, "cannot form the second user's URL") }
        return other
    }
}

func printIsolationCost(_ result: IsolationCostResult) {
    func cells(_ values: [Double]) -> String {
        String(format: "%.1f | %.1f | %.1f", median(values), values.min() ?? .nan, values.max() ?? .nan)
    }
    print("## Isolation checks through the service: a non-admin user, \(result.rounds) alternating rounds per situation\n")
    print("| operation | situation | rows | median ms | min | max |")
    print("|---|---|---:|---:|---:|---:|")
    let none = "no shares"
    let shared = "\(result.sharedRecords) records shared with the user (read-write)"
    print("| fetch all, fresh context | \(none) | \(result.rows) | \(cells(result.fetchNone)) |")
    print("| fetch all, fresh context | \(shared) | \(result.rows + result.sharedRecords) | \(cells(result.fetchShared)) |")
    print("| save of new rows | \(none) | \(result.saveRows) | \(cells(result.saveNone)) |")
    print("| save of new rows | \(shared) | \(result.saveRows) | \(cells(result.saveShared)) |")
}
