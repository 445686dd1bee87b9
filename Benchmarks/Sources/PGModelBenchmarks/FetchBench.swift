import Foundation
import Logging
@_spi(PGModelInternals) import PGModel
@_spi(PGModelInternals) import PGModelClient
@_spi(PGModelInternals) import PGModelCore
@_spi(PGModelInternals) import PGModelIO
@_spi(PGModelInternals) import PGModelPostgres
@_spi(PGModelInternals) import PGModelServer
@_spi(PGModelInternals) import PGModelWire
import NIOPosix
import PostgresNIO

/// The fetch workloads on one table of ten common columns, against raw PostgresNIO (the same SQL
/// PGModel renders, tuple decoding into a struct): fetch all rows, 100 pages of 100 rows by an indexed
/// range (sorted), and a point fetch by an indexed column; each on the direct store (`postgres://`) and
/// through an in-process service (`pgmodel://`). Rounds interleave the three paths so drift hits all of
/// them alike; figures are medians of the rounds (point: the p50 of every call).
@Model
final class BenchProduct {
    #Index<BenchProduct>([\.rank])
    var name: String
    var category: String
    var price: Double
    var quantity: Int
    var created: Date
    var active: Bool
    var note: String?
    var score: Double
    var rank: Int

    init(name: String, category: String, price: Double, quantity: Int, created: Date, active: Bool, note: String?, score: Double, rank: Int) {
        self.name = name
        self.category = category
        self.price = price
        self.quantity = quantity
        self.created = created
        self.active = active
        self.note = note
        self.score = score
        self.rank = rank
    }
}

/// What the raw baseline decodes each row into.
struct RawProduct {
    var id: UUID
    var entity: String
    var name: String
    var category: String
    var price: Double
    var quantity: Int
    var created: Date
    var active: Bool
    var note: String?
    var score: Double
    var rank: Int
}

struct FetchBenchResult {
    /// Milliseconds per round, by path ("raw", "direct", "service") and workload ("all", "pages").
    var milliseconds: [String: [Double]] = [:]
    /// Microseconds per point call, by path.
    var pointMicroseconds: [String: [Double]] = [:]
    /// Milliseconds of the wire steps for the fetch-all rows (synthetic rows of the same shape).
    var encodeMilliseconds: [Double] = []
    var decodeMilliseconds: [Double] = []
    /// The same rows as one `table` answer (`"format":"table"`).
    var tableEncodeMilliseconds: [Double] = []
    var tableDecodeMilliseconds: [Double] = []
    var rowsLineBytes = 0
    var tableLineBytes = 0
    var rows = 0
}

extension BenchProduct {
    /// Where the sample rows' `created` dates start.
    static let sampleStart = Date(timeIntervalSince1970: 1_700_000_000.123456)

    /// Row `i` of the fetch benchmarks' table.
    static func sample(_ i: Int) -> BenchProduct {
        BenchProduct(name: "product \(i)", category: "category \(i % 20)", price: Double(i) * 0.25 + 0.5,
                     quantity: i % 500, created: sampleStart.addingTimeInterval(Double(i) * 1.5), active: i % 2 == 0,
                     note: i % 3 == 0 ? nil : "note for product \(i)", score: Double(i % 1000) / 7, rank: i)
    }

    /// The same row as the stores return it, without a database: for timing the wire coding alone.
    static func sampleRow(_ i: Int) -> FetchedRow {
        var values: [String: PGValue] = [
            "name": .string("product \(i)"), "category": .string("category \(i % 20)"), "price": .double(Double(i) * 0.25 + 0.5),
            "quantity": .int(Int64(i % 500)), "created": .date(sampleStart.addingTimeInterval(Double(i) * 1.5)), "active": .bool(i % 2 == 0),
            "score": .double(Double(i % 1000) / 7), "rank": .int(Int64(i)),
        ]
        values["note"] = i % 3 == 0 ? .null : .string("note for product \(i)")
        return FetchedRow(entity: "BenchProduct", id: UUID(), values: values)
    }
}

/// `directOnly` leaves out the service's workloads and the wire steps (`--fetch --direct-only`): a shorter
/// run that profiles the direct store alone. The synchronous API (`fetch`, through `BlockingBridge`) is
/// measured beside `fetchAsync` on the direct store.
func measureFetch(databaseURL: URL, rows: Int, rounds: Int, pointCalls: Int, directOnly: Bool = false) async throws -> FetchBenchResult {
    let schema = "bench_fetch_" + UUID().uuidString.lowercased().replacingOccurrences(of: "-", with: "").prefix(8)
    guard var components = URLComponents(url: databaseURL, resolvingAgainstBaseURL: false), components.host != nil else {
        throw PGModelError(.invalidConfiguration, "DATABASE_URL has no host")
    }
    components.queryItems = [URLQueryItem(name: "schema", value: schema)]
    guard let directURL = components.url else { throw PGModelError(.invalidConfiguration, "DATABASE_URL cannot take a schema") }
    let direct = try ModelContainer(for: BenchProduct.self, configurations: ModelConfiguration(url: directURL))

    let logger = Logger(label: "bench")
    let configuration = try PostgresConnection.Configuration.benchmark(databaseURL)
    let connection = try await PostgresConnection.connect(configuration: configuration, id: 1, logger: logger)
    let service = try await InProcessService.start(databaseURL: databaseURL, schema: schema, on: connection, logger: logger)
    let remoteURL = service.url
    let remote = try ModelContainer(for: BenchProduct.self, configurations: ModelConfiguration(url: remoteURL))
    // Seeded through the service, so the rows are the user's and both paths see all of them.
    for batch in stride(from: 0, to: rows, by: 1000) {
        let seed = ModelContext(remote)
        for i in batch..<min(rows, batch + 1000) {
            seed.insert(BenchProduct.sample(i))
        }
        try await seed.saveAsync()
    }
    _ = try await connection.query(PostgresQuery(unsafeSQL: "ANALYZE \"\(schema)\".\"bench_product\""), logger: logger).collect()

    let clock = ContinuousClock()
    let table = "\"\(schema)\".\"bench_product\""
    let columns = "\"id\", \"entity\", \"name\", \"category\", \"price\", \"quantity\", \"created\", \"active\", \"note\", \"score\", \"rank\""
    func rawRows(_ sql: String, _ binds: [Int]) async throws -> [RawProduct] {
        var bindings = PostgresBindings()
        for b in binds { bindings.append(b) }
        var result: [RawProduct] = []
        let sequence = try await connection.query(PostgresQuery(unsafeSQL: sql, binds: bindings), logger: logger)
        for try await row in sequence {
            let (id, entity, name, category, price, quantity, created, active, note, score, rank) =
                try row.decode((UUID, String, String, String, Double, Int, Date, Bool, String?, Double, Int).self)
            result.append(RawProduct(id: id, entity: entity, name: name, category: category, price: price, quantity: quantity,
                                     created: created, active: active, note: note, score: score, rank: rank))
        }
        return result
    }
    let allSQL = "SELECT \(columns) FROM \(table) ORDER BY \"id\" ASC"
    let pageSQL = "SELECT \(columns) FROM \(table) WHERE \"rank\" >= $1 AND \"rank\" < $2 ORDER BY \"rank\" ASC NULLS FIRST, \"id\" ASC"
    let pointSQL = "SELECT \(columns) FROM \(table) WHERE \"rank\" = $1 ORDER BY \"id\" ASC LIMIT 1"
    let pageStarts = (0..<100).map { ($0 * 197) % max(1, rows - 100) }

    func time(_ body: () async throws -> Void) async throws -> Double {
        let began = clock.now
        try await body()
        return microseconds(clock.now - began) / 1000
    }
    func modelsAll(_ container: ModelContainer) async throws {
        let fetched = try await ModelContext(container).fetchAsync(FetchDescriptor<BenchProduct>())
        guard fetched.count == rows else { throw PGModelError(.internalError, "fetched \(fetched.count) rows, not \(rows)") }
    }
    func modelsPages(_ container: ModelContainer) async throws {
        for lo in pageStarts {
            let hi = lo + 100
            let context = ModelContext(container)
            let page = try await context.fetchAsync(FetchDescriptor<BenchProduct>(
                predicate: #Predicate { $0.rank >= lo && $0.rank < hi }, sortBy: [SortDescriptor(\.rank)]))
            guard page.count == 100 else { throw PGModelError(.internalError, "a page had \(page.count) rows") }
        }
    }
    func modelPoint(_ container: ModelContainer, _ key: Int) async throws {
        var descriptor = FetchDescriptor<BenchProduct>(predicate: #Predicate { $0.rank == key })
        descriptor.fetchLimit = 1
        guard try await ModelContext(container).fetchAsync(descriptor).first?.rank == key else {
            throw PGModelError(.internalError, "point fetch missed")
        }
    }
    // The synchronous API, as an app calls it: the thread blocks while BlockingBridge runs the store call.
    func syncAll(_ container: ModelContainer) throws {
        let fetched = try ModelContext(container).fetch(FetchDescriptor<BenchProduct>())
        guard fetched.count == rows else { throw PGModelError(.internalError, "fetched \(fetched.count) rows, not \(rows)") }
    }
    func syncPages(_ container: ModelContainer) throws {
        for lo in pageStarts {
            let hi = lo + 100
            let page = try ModelContext(container).fetch(FetchDescriptor<BenchProduct>(
                predicate: #Predicate { $0.rank >= lo && $0.rank < hi }, sortBy: [SortDescriptor(\.rank)]))
            guard page.count == 100 else { throw PGModelError(.internalError, "a page had \(page.count) rows") }
        }
    }
    func syncPoint(_ container: ModelContainer, _ key: Int) throws {
        var descriptor = FetchDescriptor<BenchProduct>(predicate: #Predicate { $0.rank == key })
        descriptor.fetchLimit = 1
        guard try ModelContext(container).fetch(descriptor).first?.rank == key else {
            throw PGModelError(.internalError, "point fetch missed")
        }
    }
    func timeSync(_ body: () throws -> Void) throws -> Double {
        let began = clock.now
        try body()
        return microseconds(clock.now - began) / 1000
    }
    // The split of a sync fetch-all: the store's table alone (no models), and the models built but
    // freed after the clock stops.
    let store = PostgresModelStore(configuration: try PostgresStoreConfiguration.parse(directURL.absoluteString),
                                   eventLoop: MultiThreadedEventLoopGroup.singleton.next())
    try await store.prepare(direct.schema.schemaDescription)
    let entityName = direct.schema.schemaDescription.entities.first { $0.name.contains("BenchProduct") }?.name ?? "BenchProduct"
    func storeAll() async throws {
        guard try await store.fetchTable(FetchRequest(entity: entityName)).rows.count == rows else {
            throw PGModelError(.internalError, "store count")
        }
    }
    // The same split through the service: the remote store's table alone (the server's fetch and
    // encoding, the transport and the client's decoding; no models).
    let remoteStore = directOnly ? nil : try RemoteModelStore(url: remoteURL)
    if let remoteStore { try await remoteStore.prepare(direct.schema.schemaDescription) }
    func remoteStoreAll() async throws {
        guard let remoteStore, try await remoteStore.fetchTable(FetchRequest(entity: entityName)).rows.count == rows else {
            throw PGModelError(.internalError, "remote store count")
        }
    }
    var kept: [BenchProduct] = []
    func syncAllKept(_ container: ModelContainer) throws {
        kept = try ModelContext(container).fetch(FetchDescriptor<BenchProduct>())
        guard kept.count == rows else { throw PGModelError(.internalError, "fetched \(kept.count) rows, not \(rows)") }
    }
    func rawAll() async throws { guard try await rawRows(allSQL, []).count == rows else { throw PGModelError(.internalError, "raw count") } }
    func rawPages() async throws {
        for lo in pageStarts { guard try await rawRows(pageSQL, [lo, lo + 100]).count == 100 else { throw PGModelError(.internalError, "raw page") } }
    }

    // Warm up every path.
    try await rawAll(); try await modelsAll(direct); try syncAll(direct)
    try await rawPages(); try await modelsPages(direct); try syncPages(direct)
    if !directOnly { try await modelsAll(remote); try await modelsPages(remote) }

    var result = FetchBenchResult(rows: rows)
    for _ in 0..<rounds {
        result.milliseconds["raw all", default: []].append(try await time { try await rawAll() })
        result.milliseconds["direct all", default: []].append(try await time { try await modelsAll(direct) })
        result.milliseconds["sync all", default: []].append(try timeSync { try syncAll(direct) })
        result.milliseconds["store all", default: []].append(try await time { try await storeAll() })
        result.milliseconds["sync all kept", default: []].append(try timeSync { try syncAllKept(direct) })
        kept = []
        if !directOnly {
            result.milliseconds["service all", default: []].append(try await time { try await modelsAll(remote) })
            result.milliseconds["service store all", default: []].append(try await time { try await remoteStoreAll() })
        }
        result.milliseconds["raw pages", default: []].append(try await time { try await rawPages() })
        result.milliseconds["direct pages", default: []].append(try await time { try await modelsPages(direct) })
        result.milliseconds["sync pages", default: []].append(try timeSync { try syncPages(direct) })
        if !directOnly { result.milliseconds["service pages", default: []].append(try await time { try await modelsPages(remote) }) }
        for i in 0..<(pointCalls / rounds) {
            let key = (i * 7919) % rows
            result.pointMicroseconds["raw", default: []].append(1000 * (try await time {
                guard try await rawRows(pointSQL, [key]).count == 1 else { throw PGModelError(.internalError, "raw point") }
            }))
            result.pointMicroseconds["direct", default: []].append(1000 * (try await time { try await modelPoint(direct, key) }))
            result.pointMicroseconds["sync", default: []].append(1000 * (try timeSync { try syncPoint(direct, key) }))
            if !directOnly {
                result.pointMicroseconds["service", default: []].append(1000 * (try await time { try await modelPoint(remote, key) }))
            }
        }
    }

    // Where the service's time goes on the wire: one response line of `rows` rows of this shape encoded
    // (the server's step) and decoded (the client's), without sockets or the database.
    let synthetic = (0..<(directOnly ? 0 : rows)).map(BenchProduct.sampleRow)
    for _ in 0..<(directOnly ? 0 : rounds) {
        var line = Data()
        result.encodeMilliseconds.append(try await time { line = try Response(id: 1, .rows(synthetic)).encodedLine() })
        result.decodeMilliseconds.append(try await time {
            guard case .response(let response) = try ServerMessage.decode(line: line.dropLast()), case .success(.rows(let back)) = response.result,
                  back.count == rows else { throw PGModelError(.internalError, "wire round trip") }
        })
        result.rowsLineBytes = line.count
        let table = FetchedTable(rows: synthetic)
        result.tableEncodeMilliseconds.append(try await time { line = try Response(id: 1, .table(table)).encodedLine() })
        result.tableDecodeMilliseconds.append(try await time {
            guard case .response(let response) = try ServerMessage.decode(line: line.dropLast()), case .success(.table(let back)) = response.result,
                  back.rows.count == rows else { throw PGModelError(.internalError, "wire round trip") }
        })
        result.tableLineBytes = line.count
    }

    await store.close()
    await remoteStore?.close()
    await remote.close()
    await direct.close()
    await service.stop()
    try await connection.dropBenchmarkSchema(schema, logger: logger)
    try await connection.close()
    return result
}

func printFetchResult(_ r: FetchBenchResult, rounds: Int) {
    func m(_ key: String) -> Double { median(r.milliseconds[key] ?? []) }
    func f(_ v: Double) -> String { String(format: "%.2f", v) }
    print("## Fetch: \(r.rows) rows of ten columns (\(rounds) interleaved rounds, medians)\n")
    print("| workload | raw PostgresNIO | direct store | × raw | service | × direct |")
    print("|---|---:|---:|---:|---:|---:|")
    for (label, key) in [("fetch all \(r.rows) (ms)", "all"), ("100 pages of 100, indexed range, sorted (ms)", "pages")] {
        let raw = m("raw \(key)"), direct = m("direct \(key)"), service = m("service \(key)")
        print("| \(label) | \(f(raw)) | \(f(direct)) | \(f(direct / raw)) | \(f(service)) | \(f(service / direct)) |")
    }
    let raw = percentile(r.pointMicroseconds["raw"] ?? [], 0.5)
    let direct = percentile(r.pointMicroseconds["direct"] ?? [], 0.5)
    let service = percentile(r.pointMicroseconds["service"] ?? [], 0.5)
    print("| point fetch by indexed column, p50 (µs) | \(String(format: "%.0f", raw)) | \(String(format: "%.0f", direct)) | \(f(direct / raw)) | \(String(format: "%.0f", service)) | +\(String(format: "%.0f", service - direct)) µs |")
    // The same direct workloads through the synchronous API (`fetch`, BlockingBridge), in the same rounds.
    let syncPoint = percentile(r.pointMicroseconds["sync"] ?? [], 0.5)
    print("\nFetch all on the direct store, split: the store's table alone (`fetchTable`, no models) \(f(m("store all"))) ms "
          + "(\(f(m("store all") / m("raw all"))) × raw); sync `fetch` with the models freed after the clock \(f(m("sync all kept"))) ms "
          + "(\(f(m("sync all kept") / m("raw all"))) × raw)")
    if r.milliseconds["service store all"] != nil {
        print("\nFetch all through the service, split: the remote store's table alone (`fetchTable`, no models) \(f(m("service store all"))) ms "
              + "(\(f(m("service store all") / m("store all"))) × the direct store's table)")
    }
    print("\nSynchronous `fetch` on the direct store (BlockingBridge), same rounds: fetch all \(f(m("sync all"))) ms (\(f(m("sync all") / m("raw all"))) × raw), "
        + "pages \(f(m("sync pages"))) ms (\(f(m("sync pages") / m("raw pages"))) × raw), point p50 \(String(format: "%.0f", syncPoint)) µs (\(f(syncPoint / raw)) × raw)")
    guard !r.encodeMilliseconds.isEmpty else { return }
    print("\nWire steps for the fetch-all response (synthetic rows of the same shape, no sockets):")
    print("- `rows` (JSONEncoder/JSONDecoder, \(r.rowsLineBytes) bytes): encode \(f(median(r.encodeMilliseconds))) ms, decode \(f(median(r.decodeMilliseconds))) ms")
    if !r.tableEncodeMilliseconds.isEmpty {
        print("- `table` (hand-written, \(r.tableLineBytes) bytes): encode \(f(median(r.tableEncodeMilliseconds))) ms, decode \(f(median(r.tableDecodeMilliseconds))) ms")
    }
}
