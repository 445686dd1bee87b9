import Foundation
import PostgresNIO

/// The baseline: PostgresNIO with hand-written SQL on one connection, rows decoded as tuples into plain
/// structs. What PGModel could reach if it added nothing to the driver.
final class RawContender: SuiteContender {
    let key = "raw"
    let title = "raw PostgresNIO"
    let workloads: Set<SuiteWorkload> = [.insert, .fetchAll, .pages, .point]
    private let table: SuiteTable
    private var connection: PostgresConnection?
    private var schema = ""

    init(table: SuiteTable) { self.table = table }

    private var columnList: String { SuiteTable.columns.joined(separator: ", ") }
    private var qualified: String { "\"\(schema)\".\"\(SuiteTable.name)\"" }

    func prepare() async throws {
        let connection = try await table.connect()
        self.connection = connection
        schema = SuiteTable.freshSchema(key)
        try await table.execute(SuiteTable.createStatements(schema: schema), on: connection)
    }

    func insert(_ rows: [RecordRow]) async throws {
        try await table.unnestInsert(rows, schema: schema, on: try live())
    }

    func fetchAll() async throws -> Int {
        try await read("SELECT \(columnList) FROM \(qualified)", PostgresBindings()).count
    }

    func page(lower: Int, upper: Int) async throws -> Int {
        var binds = PostgresBindings()
        binds.append(lower)
        binds.append(upper)
        return try await read("SELECT \(columnList) FROM \(qualified) WHERE rank >= $1 AND rank < $2 ORDER BY rank", binds).count
    }

    func point(rank: Int) async throws -> Int {
        var binds = PostgresBindings()
        binds.append(rank)
        return try await read(pointSQL, binds).count
    }

    /// The point select, whose one parameter is the rank (`PointFloor` runs it too).
    var pointSQL: String { "SELECT \(columnList) FROM \(qualified) WHERE rank = $1 LIMIT 1" }

    func analyze() async throws {
        try await table.execute(["ANALYZE \"\(schema)\".\"\(SuiteTable.name)\""], on: try live())
    }

    func teardown() async throws {
        guard let connection else { return }
        try await table.drop(schema: schema, on: connection)
        try await connection.close()
        self.connection = nil
    }

    private func live() throws -> PostgresConnection {
        guard let connection else { throw CancellationError() }
        return connection
    }

    private func read(_ sql: String, _ binds: PostgresBindings) async throws -> [RecordRow] {
        try await RawContender.read(sql, binds, on: live())
    }

    /// Runs `sql` and decodes its rows (the suite's columns, in order) as tuples into `RecordRow`s.
    static func read(_ sql: String, _ binds: PostgresBindings, on connection: PostgresConnection) async throws -> [RecordRow] {
        let rows = try await connection.query(PostgresQuery(unsafeSQL: sql, binds: binds), logger: SuiteTable.logger)
        var out: [RecordRow] = []
        for try await (id, name, category, price, quantity, created, active, note, score, rank) in rows.decode(
            (UUID, String, String, Double, Int, Date, Bool, String?, Double, Int).self, context: .default)
        {
            out.append(RecordRow(id: id, name: name, category: category, price: price, quantity: quantity, created: created,
                                 active: active, note: note, score: score, rank: rank))
        }
        return out
    }
}
