import Foundation
import Logging
import PGModelCore
import PGModelWire
import PostgresNIO

/// Where a service point fetch's time goes, step by step, each timed alone (p50 of `calls`, µs): one
/// PostgreSQL round trip, the wire coding of the request and of a one-row `table` answer on both sides,
/// the request deadline's tasks, and one hop to a new task. `--phases` prints them.
func measureServicePhases(databaseURL: URL, calls: Int) async throws {
    guard let components = URLComponents(url: databaseURL, resolvingAgainstBaseURL: false), let host = components.host else {
        throw PGModelError(.invalidConfiguration, "DATABASE_URL has no host")
    }
    let logger = Logger(label: "bench.phases")
    let connection = try await PostgresConnection.connect(configuration: PostgresConnection.Configuration(
        host: host, port: components.port ?? 5432, username: components.user ?? "postgres",
        password: components.password, database: String(components.path.dropFirst()), tls: .disable).pgmodelSession(), id: 1, logger: logger)
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
    try await p50("server: the request deadline (`Deadline.run`: a work task and a timer task)") {
        _ = try await Deadline(.seconds(30), operation: "'fetch'").run { 1 }
    }
    try await p50("one hop to a new task and back (`await Task { }.value`)") { _ = await Task { 1 }.value }
    try await connection.close()
}
