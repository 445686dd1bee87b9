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
    let logger = Logger(label: "bench.service-table")
    let configuration = try PostgresConnection.Configuration.benchmark(databaseURL)
    let connection = try await PostgresConnection.connect(configuration: configuration, id: 1, logger: logger)
    let schema = "bench_table_" + UUID().uuidString.lowercased().replacingOccurrences(of: "-", with: "").prefix(8)
    guard var schemaURL = URLComponents(url: databaseURL, resolvingAgainstBaseURL: false) else { return }
    schemaURL.queryItems = [URLQueryItem(name: "schema", value: schema)]
    guard let directURL = schemaURL.url else { return }
    let container = try ModelContainer(for: BenchProduct.self, configurations: ModelConfiguration(url: directURL))
    for batch in stride(from: 0, to: rows, by: 5000) {
        let seed = ModelContext(container)
        for i in batch..<min(rows, batch + 5000) { seed.insert(BenchProduct.sample(i)) }
        try await seed.saveAsync()
    }
    let service = try await InProcessService.start(databaseURL: databaseURL, schema: schema, on: connection, logger: logger)
    let (remote, direct, entity) = try await service.storesOverOwnedProducts(
        schema: schema, description: container.schema.schemaDescription, directURL: directURL, on: connection, logger: logger)
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
    try await connection.dropBenchmarkSchema(schema, logger: logger)
    try await connection.close()
}
