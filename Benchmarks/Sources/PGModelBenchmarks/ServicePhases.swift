import Foundation
import Logging
@_spi(PGModelInternals) import PGModel
@_spi(PGModelInternals) import PGModelClient
@_spi(PGModelInternals) import PGModelCore
@_spi(PGModelInternals) import PGModelIO
@_spi(PGModelInternals) import PGModelPostgres
@_spi(PGModelInternals) import PGModelWire
import PostgresNIO

/// Where a service point fetch's time goes, step by step, each timed alone (p50 of `calls`, µs): one
/// PostgreSQL round trip, the wire coding of the request and of a one-row `table` answer on both sides,
/// the request deadline, one hop to a new task; then whole requests below the models: the
/// service's `ping`, and a point `fetchTable` on the direct store and through an in-process service.
/// `--phases` prints them.
func measureServicePhases(databaseURL: URL, calls: Int) async throws {
    let logger = Logger(label: "bench.phases")
    let configuration = try PostgresConnection.Configuration.benchmark(databaseURL)
    let connection = try await PostgresConnection.connect(configuration: configuration, id: 1, logger: logger)
    let clock = ContinuousClock()
    func p50(_ label: String, _ body: () async throws -> Void) async throws {
        var samples: [Double] = []
        for _ in 0..<100 { try await body() }
        for _ in 0..<calls {
            let began = clock.now
            try await body()
            samples.append(microseconds(clock.now - began))
        }
        print("| \(label) | \(String(format: "%.1f", percentile(samples, 0.5))) |")
    }
    let request = Request(id: .int(42), operation: .fetchTable(FetchRequest(
        entity: "BenchProduct", predicate: .compare(.equal, .key("rank"), .value(.int(4711))), limit: 1)))
    let requestLine = try request.encodedLine()
    let row = FetchedTable(shapes: [.init(entity: "BenchProduct", keys: ["name", "category", "price", "quantity", "created", "active", "note", "score", "rank"])],
                           rows: [.init(shape: 0, id: UUID(), values: [.string("product 4711"), .string("category 11"), .double(1178.25), .int(211),
                                                                        .date(Date()), .bool(false), .string("note for product 4711"), .double(101.57), .int(4711)])])
    let response = Response(id: .int(42), .table(row))
    let responseLine = try response.encodedLine()
    print("| step (one point fetch) | p50 µs |")
    print("|---|---:|")
    try await p50("PostgreSQL round trip (`SELECT 1`, raw PostgresNIO)") {
        _ = try await connection.query("SELECT 1", logger: logger).collect()
    }
    try await p50("client: encode the request (\(requestLine.count) bytes)") { _ = try request.encodedLine() }
    try await p50("server: decode the request") {
        guard case .success = Request.decode(line: requestLine.dropLast()) else { throw PGModelError(.internalError, "decode") }
    }
    try await p50("server: encode the one-row table answer (\(responseLine.count) bytes)") { _ = try response.encodedLine() }
    try await p50("client: decode the answer") {
        guard case .response = try ServerMessage.decode(line: responseLine.dropLast()) else { throw PGModelError(.internalError, "decode") }
    }
    // A bulk save's line: what a service save of 1,000 models codes on each side.
    func benchRow(_ i: Int) -> RowValues {
        var values: [String: PGValue] = [:]
        values["name"] = .string("product \(i)")
        values["category"] = .string("category \(i % 20)")
        values["price"] = .double(Double(i) + 0.25)
        values["quantity"] = .int(Int64(i))
        values["created"] = .date(Date())
        values["active"] = .bool(i % 2 == 0)
        values["note"] = .null
        values["score"] = .double(1.5)
        values["rank"] = .int(Int64(i))
        return RowValues(entity: "BenchProduct", id: UUID.v7(), values: values)
    }
    let saveRequest = Request(id: .int(43), operation: .save(SaveRequest(inserts: (0..<1_000).map(benchRow))))
    let saveLine = try saveRequest.encodedLine()
    try await p50("client: encode a save of 1,000 models (\(saveLine.count) bytes)") { _ = try saveRequest.encodedLine() }
    try await p50("server: decode that save") {
        guard case .success = Request.decode(line: saveLine.dropLast()) else { throw PGModelError(.internalError, "decode") }
    }
    try await p50("server: the request deadline (`Deadline.run`: the work's task and the shared timer thread)") {
        _ = try await Deadline(.seconds(30), operation: "'fetch'").run { 1 }
    }
    try await p50("one hop to a new task and back (`await Task { }.value`)") { _ = await Task { 1 }.value }
    let loop = MultiThreadedEventLoopGroup.singleton.next()
    try await p50("one hop to an event loop and back (`eventLoop.submit`)") { _ = try await loop.submit { 1 }.get() }
    let echo = try await LoopbackEcho.start(group: MultiThreadedEventLoopGroup.singleton)
    try await p50("NIO loopback echo, awaited from a task (no async channel, no JSON)") { try await echo.roundTrip() }
    try await p50("NIO loopback echo, awaited on the client's event loop") { try await echo.roundTripOnLoop() }
    await echo.close()

    // The same point fetch whole, below the models: the direct store's and the service's `fetchTable`,
    // and the service's `ping` (a round trip that never reaches PostgreSQL), all awaited from a task.
    let schema = "bench_phases_" + UUID().uuidString.lowercased().replacingOccurrences(of: "-", with: "").prefix(8)
    guard var schemaURL = URLComponents(url: databaseURL, resolvingAgainstBaseURL: false) else { return }
    schemaURL.queryItems = [URLQueryItem(name: "schema", value: schema)]
    guard let directURL = schemaURL.url else { return }
    let container = try ModelContainer(for: BenchProduct.self, configurations: ModelConfiguration(url: directURL))
    let seed = ModelContext(container)
    for i in 0..<2000 {
        seed.insert(BenchProduct(name: "product \(i)", category: "category \(i % 20)", price: Double(i), quantity: i, created: Date(),
                                 active: true, note: nil, score: 1, rank: i))
    }
    try seed.save()
    // A user fetching their own rows, as the suite's service contender does (an admin's policy differs).
    // `--service-binary <path to pgmodel>`: the service in a process of its own, as deployed.
    let binary = InProcessService.binaryArgument
    let service = try await InProcessService.start(binary: binary, databaseURL: databaseURL, schema: schema, on: connection, logger: logger)
    let (remote, direct, entity) = try await service.storesOverOwnedProducts(
        schema: schema, description: container.schema.schemaDescription, directURL: directURL, on: connection, logger: logger)
    var key = 0
    func point() -> FetchRequest {
        key = (key + 7919) % 2000
        return FetchRequest(entity: entity, predicate: .compare(.equal, .key("rank"), .value(.int(Int64(key)))), limit: 1)
    }
    let place = binary == nil ? "in-process server" : "`pgmodel serve` process"
    try await p50("service `ping` round trip (\(place), loopback TCP)") { try await remote.ping() }
    let bare = try await LoopbackEcho.client(to: "127.0.0.1", port: service.url.port ?? 0, group: MultiThreadedEventLoopGroup.singleton)
    try await p50("service `ping` from a bare NIO client (handler and promise)") { try await bare.roundTrip() }
    try await p50("service `ping` from a bare NIO client, awaited on its loop") { try await bare.roundTripOnLoop() }
    // The two pings again, call by call, so the machine's drift between the rows above cannot tell them
    // apart: what the Swift client adds to a bare one.
    do {
        var storeSamples: [Double] = [], bareSamples: [Double] = []
        for _ in 0..<calls {
            var began = clock.now
            try await remote.ping()
            storeSamples.append(microseconds(clock.now - began))
            began = clock.now
            try await bare.roundTrip()
            bareSamples.append(microseconds(clock.now - began))
        }
        print("| service `ping`, alternating with the bare client's: the store's | \(String(format: "%.1f", percentile(storeSamples, 0.5))) |")
        print("| service `ping`, alternating with the store's: the bare client's | \(String(format: "%.1f", percentile(bareSamples, 0.5))) |")
    }
    await bare.close()
    try await p50("direct store `fetchTable`, point by an indexed column") {
        guard try await direct.fetchTable(point()).rows.count == 1 else { throw PGModelError(.internalError, "direct point") }
    }
    try await p50("service `fetchTable`, point by an indexed column") {
        guard try await remote.fetchTable(point()).rows.count == 1 else { throw PGModelError(.internalError, "service point") }
    }
    // The same point fetch as an app makes it: a new ModelContext's fetch of one model, on each store,
    // awaited (`fetchAsync`) and synchronous (`fetch`, the calling thread blocked on BlockingBridge).
    let remoteContainer = try ModelContainer(for: BenchProduct.self, configurations: ModelConfiguration(url: service.url))
    var modelKey = 0
    func modelPoint() -> FetchDescriptor<BenchProduct> {
        modelKey = (modelKey + 7919) % 2000
        let wanted = modelKey
        var descriptor = FetchDescriptor<BenchProduct>(predicate: #Predicate { $0.rank == wanted })
        descriptor.fetchLimit = 1
        return descriptor
    }
    for (name, store) in [("direct store", container), ("service", remoteContainer)] {
        try await p50("\(name): `ModelContext.fetchAsync` of one model by an indexed column") {
            guard try await ModelContext(store).fetchAsync(modelPoint()).count == 1 else { throw PGModelError(.internalError, "model point") }
        }
        try await p50("\(name): `ModelContext.fetch` (synchronous) of one model by an indexed column") {
            guard try ModelContext(store).fetch(modelPoint()).count == 1 else { throw PGModelError(.internalError, "model point") }
        }
    }
    // The floor: the same select by the driver alone, then through a line server that runs it on its
    // own loop's connection (PointFloor); the difference is what any service must add here.
    let pointSQL = "SELECT id, name, category, price, quantity, created, active, note, score, rank FROM \"\(schema)\".\"bench_product\" WHERE rank = $1 LIMIT 1"
    var rawKey = 0
    try await p50("raw PostgresNIO: the point select from a task (unnamed statement)") {
        rawKey = (rawKey + 7919) % 2000
        var binds = PostgresBindings()
        binds.append(Int64(rawKey))
        guard try await connection.query(PostgresQuery(unsafeSQL: pointSQL, binds: binds), logger: logger).collect().count == 1 else {
            throw PGModelError(.internalError, "raw point")
        }
    }
    let floor = try await PointFloor.start(configuration: configuration, sql: pointSQL, logger: logger)
    let floorClient = try await PointFloorClient.connect(port: floor.port, group: MultiThreadedEventLoopGroup.singleton)
    var floorKey = 0
    try await p50("floor: that select through a NIO line server on the connection's own loop (bare client)") {
        floorKey = (floorKey + 7919) % 2000
        guard try await floorClient.rows(key: floorKey) == 1 else { throw PGModelError(.internalError, "floor point") }
    }
    await floorClient.close()
    await floor.close()
    await remote.close()
    await remoteContainer.close()
    await direct.close()
    await container.close()
    await service.stop()
    // The schema goes with the run, as the other benchmarks' do.
    try await connection.dropBenchmarkSchema(schema, logger: logger)
    try await connection.close()
}
