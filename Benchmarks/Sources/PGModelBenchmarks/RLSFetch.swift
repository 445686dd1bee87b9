import Foundation
import Logging
@_spi(PGModelInternals) import PGModel
@_spi(PGModelInternals) import PGModelServer
import PostgresNIO

/// What row-level security costs a large fetch through the service: one user fetches 10,000 of their
/// rows through an in-process `pgmodel serve`, with the table's policies on, and with row-level
/// security disabled on the table (the same rows come back: the table holds only that user's rows).
/// Runs alternate on/off so drift hits both equally; the figure is the ratio of the medians.
@Model
final class BenchRow {
    var name: String
    var amount: Double
    var createdAt: Date
    var note: String?

    init(name: String, amount: Double, createdAt: Date, note: String?) {
        self.name = name
        self.amount = amount
        self.createdAt = createdAt
        self.note = note
    }
}

struct RLSFetchResult {
    var rows: Int
    var onMilliseconds: [Double]
    var offMilliseconds: [Double]
    var rawMilliseconds: [Double]
}

func measureRLSFetch(databaseURL: URL, rows: Int, rounds: Int) async throws -> RLSFetchResult {
    let schema = "bench_rls_" + UUID().uuidString.lowercased().replacingOccurrences(of: "-", with: "").prefix(8)
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
    let service = try await InProcessService.start(databaseURL: databaseURL, schema: schema, on: connection, logger: logger)
    let remoteURL = service.url
    let remote = try ModelContainer(for: BenchRow.self, configurations: ModelConfiguration(url: remoteURL))
    let start = Date(timeIntervalSince1970: 1_700_000_000)
    // In saves of 1,000, so the seeding holds few models at a time.
    for batch in stride(from: 0, to: rows, by: 1000) {
        let seed = ModelContext(remote)
        for i in batch..<min(rows, batch + 1000) {
            seed.insert(BenchRow(name: "row \(i)", amount: Double(i) * 1.5, createdAt: start.addingTimeInterval(Double(i)), note: i % 3 == 0 ? nil : "note \(i)"))
        }
        try await seed.saveAsync()
    }

    let clock = ContinuousClock()
    func fetchThroughService() async throws -> Double {
        let context = ModelContext(remote)
        let began = clock.now
        let fetched = try await context.fetchAsync(FetchDescriptor<BenchRow>())
        let elapsed = clock.now - began
        guard fetched.count == rows else {
            throw PGModelError(.internalError, "the service returned \(fetched.count) rows, not \(rows)")
        }
        return microseconds(elapsed) / 1000
    }
    let table = "\"\(schema)\".\"bench_row\""
    let rawSQL = "SELECT \"id\", \"entity\", \"name\", \"amount\", \"created_at\", \"note\" FROM \(table) ORDER BY \"id\""
    func fetchRaw() async throws -> Double {
        let began = clock.now
        var count = 0
        for try await _ in try await connection.query(PostgresQuery(unsafeSQL: rawSQL), logger: logger) { count += 1 }
        return microseconds(clock.now - began) / 1000
    }
    func setRowSecurity(_ on: Bool) async throws {
        _ = try await connection.query(PostgresQuery(unsafeSQL: "ALTER TABLE \(table) \(on ? "ENABLE" : "DISABLE") ROW LEVEL SECURITY"), logger: logger).collect()
    }
    _ = try await fetchThroughService()   // warm up both paths
    _ = try await fetchRaw()
    var result = RLSFetchResult(rows: rows, onMilliseconds: [], offMilliseconds: [], rawMilliseconds: [])
    for _ in 0..<rounds {
        try await setRowSecurity(true)
        result.onMilliseconds.append(try await fetchThroughService())
        try await setRowSecurity(false)
        result.offMilliseconds.append(try await fetchThroughService())
        result.rawMilliseconds.append(try await fetchRaw())
    }
    try await setRowSecurity(true)
    await remote.close()
    await direct.close()
    await service.stop()
    try await connection.dropBenchmarkSchema(schema, logger: logger)
    try await connection.close()
    return result
}

func median(_ values: [Double]) -> Double {
    let sorted = values.sorted()
    guard !sorted.isEmpty else { return .nan }
    return sorted.count % 2 == 1 ? sorted[sorted.count / 2] : (sorted[sorted.count / 2 - 1] + sorted[sorted.count / 2]) / 2
}
