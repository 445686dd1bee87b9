import Foundation
import Logging
@_spi(PGModelInternals) import PGModel
import PostgresNIO

/// A small row fetched by its key, again and again: what one call of the store layer costs beyond the
/// database round trip. The baseline is the same SQL on one raw PostgresNIO connection, measured in the
/// same run; PGModel's figure is a synchronous `fetch` (through `BlockingBridge`) and, where built
/// with them, the async form.
@Model
final class BenchItem {
    @Attribute(.unique) var key: Int
    var label: String

    init(key: Int, label: String) {
        self.key = key
        self.label = label
    }
}

struct PointFetchResult {
    var rawMicroseconds: Double
    var syncMicroseconds: Double
    var asyncMicroseconds: Double?
}

func microseconds(_ duration: Duration) -> Double {
    let (seconds, attoseconds) = duration.components
    return Double(seconds) * 1e6 + Double(attoseconds) / 1e12
}

func measurePointFetch(url: URL, calls: Int) async throws -> PointFetchResult {
    let container = try ModelContainer(for: BenchItem.self, configurations: ModelConfiguration(url: url))
    let seed = ModelContext(container)
    for key in 0..<100 { seed.insert(BenchItem(key: key, label: "item \(key)")) }
    try seed.save()
    let schema = URLComponents(url: url, resolvingAgainstBaseURL: false)?.queryItems?.first { $0.name == "schema" }?.value ?? "public"

    // Raw driver: one connection, the same statement with one bind.
    guard let components = URLComponents(url: url, resolvingAgainstBaseURL: false), let host = components.host else {
        throw PGModelError(.invalidConfiguration, "DATABASE_URL has no host")
    }
    let configuration = PostgresConnection.Configuration(
        host: host, port: components.port ?? 5432, username: components.user ?? "postgres",
        password: components.password, database: String(components.path.dropFirst()), tls: .disable).pgmodelSession()
    let logger = Logger(label: "bench")
    let connection = try await PostgresConnection.connect(configuration: configuration, id: 1, logger: logger)
    let sql = "SELECT \"id\", \"entity\", \"key\", \"label\" FROM \"\(schema)\".\"bench_item\" WHERE \"key\" = $1 LIMIT 1"
    let clock = ContinuousClock()
    func raw(_ key: Int) async throws {
        var bindings = PostgresBindings()
        bindings.append(key)
        let rows = try await connection.query(PostgresQuery(unsafeSQL: sql, binds: bindings), logger: logger)
        for try await (id, label) in rows.decode((UUID, String).self, context: .default).map({ ($0.0, $0.1) }) {
            _ = (id, label)
        }
    }
    for key in 0..<100 { try await raw(key) }   // warm up
    let rawStart = clock.now
    for i in 0..<calls { try await raw(i % 100) }
    let rawTime = clock.now - rawStart
    try await connection.close()

    // PGModel, synchronous: a fresh context per call, as a request handler would have.
    let syncTime: Duration = try await Task.detached {
        func fetch(_ key: Int) throws {
            let context = ModelContext(container)
            var descriptor = FetchDescriptor<BenchItem>(predicate: #Predicate { $0.key == key })
            descriptor.fetchLimit = 1
            _ = try context.fetch(descriptor).first?.label
        }
        for key in 0..<100 { try fetch(key) }
        let start = clock.now
        for i in 0..<calls { try fetch(i % 100) }
        return clock.now - start
    }.value

    var asyncTime: Duration?
    #if PGMODEL_ASYNC_FORMS
    func fetchAsync(_ key: Int) async throws {
        let context = ModelContext(container)
        var descriptor = FetchDescriptor<BenchItem>(predicate: #Predicate { $0.key == key })
        descriptor.fetchLimit = 1
        _ = try await context.fetchAsync(descriptor).first?.label
    }
    for key in 0..<100 { try await fetchAsync(key) }
    let asyncStart = clock.now
    for i in 0..<calls { try await fetchAsync(i % 100) }
    asyncTime = clock.now - asyncStart
    #endif
    await container.close()
    return PointFetchResult(rawMicroseconds: microseconds(rawTime) / Double(calls),
                            syncMicroseconds: microseconds(syncTime) / Double(calls),
                            asyncMicroseconds: asyncTime.map { microseconds($0) / Double(calls) })
}
