import Foundation
import Logging
import Metrics
@_spi(PGModelInternals) import PGModel
@_spi(PGModelInternals) import PGModelClient
@_spi(PGModelInternals) import PGModelCore
@_spi(PGModelInternals) import PGModelPostgres
@_spi(PGModelInternals) import PGModelServer
import PostgresNIO
import Prometheus

/// How a service under `--observability` reports. Tracing modes go here too (with their setup in
/// ``ObservabilityMode/configure(_:)``), so one run compares them all against `off`.
enum ObservabilityMode: String, CaseIterable {
    /// No backend: the server's factory is the process's unbootstrapped `MetricsSystem` (swift-metrics'
    /// own no-op), as a library user who bootstrapped nothing runs.
    case off
    /// `NOOPMetricsHandler` passed explicitly: the cost of making and calling the metric objects alone.
    case noopMetrics = "noop metrics"
    /// A `PrometheusCollectorRegistry` behind the factory, as `pgmodel serve --metrics-port` runs.
    case prometheus
    // Tracing (spans per request) is to be added here as further cases.

    /// Sets `configuration` up for this mode.
    func configure(_ configuration: inout LineServerConfiguration) {
        switch self {
        case .off:
            configuration.metricsFactory = nil
        case .noopMetrics:
            configuration.metricsFactory = NOOPMetricsHandler.instance
        case .prometheus:
            let registry = PrometheusCollectorRegistry()
            configuration.metricsFactory = PrometheusMetricsFactory.pgmodel(registry: registry)
            configuration.metricsEndpoint = MetricsEndpointConfiguration(port: 0, registry: registry)
        }
    }
}

/// `--observability`: point-fetch latency (p50, p99) and saves per second through an in-process service,
/// one service per ``ObservabilityMode`` on the same rows, all in one run: blocks of calls alternate
/// between the modes, so the machine's drift falls on each alike. Prints a table with each mode's ratio
/// against `off`.
func runObservabilityBenchmark(databaseURL: URL, rows: Int, calls: Int, saves: Int) async throws {
    let logger = Logger(label: "bench.observability")
    let connection = try await PostgresConnection.connect(configuration: try PostgresConnection.Configuration.benchmark(databaseURL), id: 1, logger: logger)
    let schema = "bench_obs_" + UUID().uuidString.lowercased().replacingOccurrences(of: "-", with: "").prefix(8)
    guard var schemaURL = URLComponents(url: databaseURL, resolvingAgainstBaseURL: false) else {
        throw PGModelError(.invalidConfiguration, "DATABASE_URL is not a URL")
    }
    schemaURL.queryItems = [URLQueryItem(name: "schema", value: schema)]
    guard let directURL = schemaURL.url else { throw PGModelError(.invalidConfiguration, "DATABASE_URL is not a URL") }
    let container = try ModelContainer(for: BenchProduct.self, configurations: ModelConfiguration(url: directURL))
    for batch in stride(from: 0, to: rows, by: 5000) {
        let seed = ModelContext(container)
        for i in batch..<min(rows, batch + 5000) { seed.insert(BenchProduct.sample(i)) }
        try await seed.saveAsync()
    }
    let description = container.schema.schemaDescription
    let entity = description.entities.first { $0.name.contains("BenchProduct") }?.name ?? "BenchProduct"

    // One service and one client per mode, all over the same rows; admins see every row.
    var services: [InProcessService] = []
    var stores: [RemoteModelStore] = []
    for mode in ObservabilityMode.allCases {
        let service = try await InProcessService.start(databaseURL: databaseURL, schema: schema, admin: true, on: connection, logger: logger,
                                                       configure: mode.configure)
        let store = try RemoteModelStore(url: service.url)
        try await store.prepare(description)
        services.append(service)
        stores.append(store)
    }

    func point(_ rank: Int) -> FetchRequest {
        FetchRequest(entity: entity, predicate: .compare(.equal, .key("rank"), .value(.int(Int64(rank)))), limit: 1)
    }
    func insert(_ i: Int) -> SaveRequest {
        SaveRequest(inserts: [RowValues(entity: entity, id: UUID.v7(), values: [
            "name": .string("obs \(i)"), "category": .string("c\(i % 10)"), "price": .double(Double(i)), "quantity": .int(Int64(i)),
            "created": .date(Date()), "active": .bool(true), "note": .null, "score": .double(0.5), "rank": .int(Int64(rows + i)),
        ])])
    }

    let clock = ContinuousClock()
    let modes = ObservabilityMode.allCases
    var fetchTimes = Array(repeating: [Double](), count: modes.count)
    var saveSeconds = Array(repeating: 0.0, count: modes.count)
    var saveCounts = Array(repeating: 0, count: modes.count)
    let block = 250
    // Warm-up, unmeasured: connections open, statements prepared, metric objects made.
    for store in stores { for _ in 0..<200 { _ = try await store.fetchTable(point(Int.random(in: 0..<rows))) } }
    var done = 0
    while done < calls {
        for (index, store) in stores.enumerated() {
            for _ in 0..<min(block, calls - done) {
                let began = clock.now
                guard try await store.fetchTable(point(Int.random(in: 0..<rows))).rows.count == 1 else {
                    throw PGModelError(.internalError, "a point fetch found no row")
                }
                fetchTimes[index].append(microseconds(clock.now - began))
            }
        }
        done += block
    }
    var saved = 0
    let saveBlock = 50
    while saved < saves {
        for (index, store) in stores.enumerated() {
            let count = min(saveBlock, saves - saved)
            let began = clock.now
            for i in 0..<count { _ = try await store.save(insert(index * saves + saved + i)) }
            let elapsed = (clock.now - began).components
            saveSeconds[index] += Double(elapsed.seconds) + Double(elapsed.attoseconds) / 1e18
            saveCounts[index] += count
        }
        saved += saveBlock
    }

    print("observability cost through the service (\(calls) point fetches, \(saves) one-row saves per mode, alternating blocks)")
    print("| mode | fetch p50 µs | fetch p99 µs | p50 ratio | saves/s | saves ratio |")
    print("|---|---:|---:|---:|---:|---:|")
    let baseP50 = percentile(fetchTimes[0], 0.5)
    let baseRate = Double(saveCounts[0]) / max(saveSeconds[0], 1e-9)
    for (index, mode) in modes.enumerated() {
        let p50 = percentile(fetchTimes[index], 0.5)
        let p99 = percentile(fetchTimes[index], 0.99)
        let rate = Double(saveCounts[index]) / max(saveSeconds[index], 1e-9)
        print("| \(mode.rawValue) | " + String(format: "%.1f | %.1f | %.3f | %.0f | %.3f |", p50, p99, p50 / baseP50, rate, rate / baseRate))
    }

    for store in stores { await store.close() }
    for service in services { await service.stop() }
    await container.close()
    try await connection.dropBenchmarkSchema(schema, logger: logger)
    try await connection.close()
}
