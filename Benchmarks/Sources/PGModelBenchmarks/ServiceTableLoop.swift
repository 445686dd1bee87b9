import Foundation
import Logging
import PGModel
import PGModelCore
import PGModelPostgres
import PGModelStore
import PostgresNIO

/// `--service-table [--remote-only]`: a fetch of every row of a 20,000-row table as the stores' `table`
/// (no models), on the direct store and through an in-process service, alternately, `rounds` times each;
/// medians and minimums. With `--remote-only` only the service's, for profiling what it adds.
func runServiceTableLoop(databaseURL: URL, rows: Int, rounds: Int, remoteOnly: Bool) async throws {
    guard let components = URLComponents(url: databaseURL, resolvingAgainstBaseURL: false), let host = components.host else {
        throw PGModelError(.invalidConfiguration, "DATABASE_URL has no host")
    }
    let logger = Logger(label: "bench.service-table")
    let configuration = PostgresConnection.Configuration(
        host: host, port: components.port ?? 5432, username: components.user ?? "postgres",
        password: components.password, database: String(components.path.dropFirst()), tls: .disable).pgmodelSession()
    let connection = try await PostgresConnection.connect(configuration: configuration, id: 1, logger: logger)
    let schema = "bench_table_" + UUID().uuidString.lowercased().replacingOccurrences(of: "-", with: "").prefix(8)
    guard var schemaURL = URLComponents(url: databaseURL, resolvingAgainstBaseURL: false) else { return }
    schemaURL.queryItems = [URLQueryItem(name: "schema", value: schema)]
    guard let directURL = schemaURL.url else { return }
    let container = try ModelContainer(for: BenchProduct.self, configurations: ModelConfiguration(url: directURL))
    let start = Date(timeIntervalSince1970: 1_700_000_000.123456)
    for batch in stride(from: 0, to: rows, by: 5000) {
        let seed = ModelContext(container)
        for i in batch..<min(rows, batch + 5000) {
            seed.insert(BenchProduct(name: "product \(i)", category: "category \(i % 20)", price: Double(i) * 0.25 + 0.5,
                                     quantity: i % 500, created: start.addingTimeInterval(Double(i) * 1.5), active: i % 2 == 0,
                                     note: i % 3 == 0 ? nil : "note for product \(i)", score: Double(i % 1000) / 7, rank: i))
        }
        try await seed.saveAsync()
    }
    let service = try await InProcessService.start(databaseURL: databaseURL, schema: schema, on: connection, logger: logger)
    _ = try await connection.query(PostgresQuery(
        unsafeSQL: "UPDATE \"\(schema)\".\"bench_product\" SET owner_id = (SELECT id FROM pgmodel.users WHERE name = $1)",
        binds: { var b = PostgresBindings(); b.append(service.userName); return b }()), logger: logger).collect()
    _ = try await connection.query(PostgresQuery(unsafeSQL: "VACUUM ANALYZE \"\(schema)\".\"bench_product\""), logger: logger).collect()
    let remote = try RemoteModelStore(url: service.url)
    let direct = PostgresModelStore(configuration: try PostgresStoreConfiguration.parse(directURL.absoluteString),
                                    eventLoop: MultiThreadedEventLoopGroup.singleton.next())
    let description = container.schema.schemaDescription
    try await direct.prepare(description)
    try await remote.prepare(description)
    let entity = description.entities.first { $0.name.contains("BenchProduct") }?.name ?? "BenchProduct"
    let clock = ContinuousClock()
    var directTimes: [Double] = [], remoteTimes: [Double] = []
    for round in -2..<rounds {
        if !remoteOnly {
            let began = clock.now
            guard try await direct.fetchTable(FetchRequest(entity: entity)).rows.count == rows else { throw PGModelError(.internalError, "direct") }
            if round >= 0 { directTimes.append(microseconds(clock.now - began) / 1000) }
        }
        let began = clock.now
        guard try await remote.fetchTable(FetchRequest(entity: entity)).rows.count == rows else { throw PGModelError(.internalError, "remote") }
        if round >= 0 { remoteTimes.append(microseconds(clock.now - began) / 1000) }
    }
    func summary(_ x: [Double]) -> String {
        guard !x.isEmpty else { return "-" }
        return String(format: "median %.1f ms, min %.1f ms", x.sorted()[x.count / 2], x.min() ?? 0)
    }
    print("table of \(rows) rows: direct store \(summary(directTimes)); service \(summary(remoteTimes))")
    await remote.close()
    await direct.close()
    await service.stop()
    _ = try await connection.query(PostgresQuery(unsafeSQL: "DROP SCHEMA \"\(schema)\" CASCADE"), logger: logger).collect()
    _ = try await connection.query(PostgresQuery(unsafeSQL: "DELETE FROM pgmodel.entities WHERE schema_name = '\(schema)'"), logger: logger).collect()
    try await connection.close()
}
