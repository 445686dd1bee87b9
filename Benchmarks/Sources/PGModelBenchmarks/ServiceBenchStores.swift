import Foundation
import Logging
@_spi(PGModelInternals) import PGModel
@_spi(PGModelInternals) import PGModelClient
@_spi(PGModelInternals) import PGModelCore
@_spi(PGModelInternals) import PGModelIO
@_spi(PGModelInternals) import PGModelPostgres
import PostgresNIO

/// A fresh schema of `rows` sample products, an in-process service over it, and the two stores a user's
/// fetch is compared on: the service's remote store and a direct store that see the same rows. For the
/// profiling loops (`--service-table`, `--service-point`).
///
/// ```swift
/// let stores = try await ServiceBenchStores.open(databaseURL: url, rows: 20_000, label: "point")
/// _ = try await stores.remote.fetchTable(FetchRequest(entity: stores.entity))
/// try await stores.close()
/// ```
struct ServiceBenchStores {
    let remote: RemoteModelStore
    let direct: PostgresModelStore
    let entity: String
    /// The direct store's URL (the benchmark schema's) and the service's.
    let directURL: URL
    var serviceURL: URL { service.url }
    private let service: InProcessService
    private let connection: PostgresConnection
    private let schema: String
    private let logger: Logger

    /// With `binary` (a release `pgmodel`), the service runs as a `pgmodel serve` process, as deployed.
    static func open(databaseURL: URL, rows: Int, label: String, binary: String? = nil) async throws -> ServiceBenchStores {
        let logger = Logger(label: "bench.service-\(label)")
        let configuration = try PostgresConnection.Configuration.benchmark(databaseURL)
        let connection = try await PostgresConnection.connect(configuration: configuration, id: 1, logger: logger)
        let schema = "bench_\(label)_" + UUID().uuidString.lowercased().replacingOccurrences(of: "-", with: "").prefix(8)
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
        let service = try await InProcessService.start(binary: binary, databaseURL: databaseURL, schema: schema, on: connection, logger: logger)
        let (remote, direct, entity) = try await service.storesOverOwnedProducts(
            schema: schema, description: container.schema.schemaDescription, directURL: directURL, on: connection, logger: logger)
        return ServiceBenchStores(remote: remote, direct: direct, entity: entity, directURL: directURL, service: service, connection: connection,
                                  schema: schema, logger: logger)
    }

    func close() async throws {
        await remote.close()
        await direct.close()
        await service.stop()
        // PGMODEL_BENCH_KEEP_SCHEMA=1 keeps the schema and its rows for measuring them from SQL (pgbench).
        if ProcessInfo.processInfo.environment["PGMODEL_BENCH_KEEP_SCHEMA"] == "1" {
            print("kept schema \(schema), its rows owned by service user \(service.userName)")
        } else {
            try await connection.dropBenchmarkSchema(schema, logger: logger)
        }
        try await connection.close()
    }
}

/// Runs `body` on a detached task and waits for it: the benchmark's modes start from top-level code.
func runDetached(_ name: String, _ body: @escaping @Sendable () async throws -> Void) {
    let done = DispatchSemaphore(value: 0)
    Task.detached {
        do { try await body() } catch { print("\(name) failed: \(error)") }
        done.signal()
    }
    done.wait()
}
