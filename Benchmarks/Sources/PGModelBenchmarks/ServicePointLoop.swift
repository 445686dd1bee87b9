import Foundation
import Logging
import PGModel
import PGModelCore
import PGModelPostgres
import PGModelStore
import PostgresNIO

/// `--service-point [--remote-only | --direct-only]`: point fetches by an indexed column as the stores'
/// `table` (no models), on the direct store and through an in-process service, call by call; p50s. With
/// `--remote-only` or `--direct-only` only one of them, for `perf stat` / `perf record` of each per call.
func runServicePointLoop(databaseURL: URL, rows: Int, calls: Int, remoteOnly: Bool, directOnly: Bool) async throws {
    let logger = Logger(label: "bench.service-point")
    let configuration = try PostgresConnection.Configuration.benchmark(databaseURL)
    let connection = try await PostgresConnection.connect(configuration: configuration, id: 1, logger: logger)
    let schema = "bench_point_" + UUID().uuidString.lowercased().replacingOccurrences(of: "-", with: "").prefix(8)
    guard var schemaURL = URLComponents(url: databaseURL, resolvingAgainstBaseURL: false) else { return }
    schemaURL.queryItems = [URLQueryItem(name: "schema", value: schema)]
    guard let directURL = schemaURL.url else { return }
    let container = try ModelContainer(for: BenchProduct.self, configurations: ModelConfiguration(url: directURL))
    let seed = ModelContext(container)
    for i in 0..<rows { seed.insert(BenchProduct.sample(i)) }
    try await seed.saveAsync()
    let service = try await InProcessService.start(databaseURL: databaseURL, schema: schema, on: connection, logger: logger)
    let (remote, direct, entity) = try await service.storesOverOwnedProducts(
        schema: schema, description: container.schema.schemaDescription, directURL: directURL, on: connection, logger: logger)
    func point(_ rank: Int) -> FetchRequest {
        FetchRequest(entity: entity, predicate: .compare(.equal, .key("rank"), .value(.int(Int64(rank)))), limit: 1)
    }
    let clock = ContinuousClock()
    var directTimes: [Double] = [], remoteTimes: [Double] = []
    for call in -200..<calls {
        let rank = Int.random(in: 0..<rows)
        if !remoteOnly {
            let began = clock.now
            guard try await direct.fetchTable(point(rank)).rows.count == 1 else { throw PGModelError(.internalError, "direct") }
            if call >= 0 { directTimes.append(microseconds(clock.now - began)) }
        }
        if !directOnly {
            let began = clock.now
            guard try await remote.fetchTable(point(rank)).rows.count == 1 else { throw PGModelError(.internalError, "remote") }
            if call >= 0 { remoteTimes.append(microseconds(clock.now - began)) }
        }
    }
    func p50(_ x: [Double]) -> String { x.isEmpty ? "-" : String(format: "%.1f µs", percentile(x, 0.5)) }
    print("point fetch (table, \(calls) calls): direct store \(p50(directTimes)); service \(p50(remoteTimes))")
    await remote.close()
    await direct.close()
    await service.stop()
    try await connection.dropBenchmarkSchema(schema, logger: logger)
    try await connection.close()
}
