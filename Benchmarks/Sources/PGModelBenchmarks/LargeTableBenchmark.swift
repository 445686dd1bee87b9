import Foundation
@_spi(PGModelInternals) import PGModel
import PostgresNIO

/// `enumerate` (batches of 1,000) over a table larger than the suite's, against one `fetch` of the same
/// rows and the raw driver's read of them, alternating each round; then each PGModel path's peak memory
/// in a child process of its own (`MemoryProbe`).
///
/// The table is PGModel's own (created by its container), filled by the raw driver's unnest insert:
/// a PGModel save of a million rows would take longer than the whole suite, and the reads do not care
/// how the rows got there (they carry no history, which no read looks at).
struct LargeTableBenchmark {
    struct Result: Sendable {
        var rows: Int
        var enumerateMilliseconds: [Double] = []
        var fetchMilliseconds: [Double] = []
        var rawMilliseconds: [Double] = []
        var enumeratePeak: MemoryProbe?
        var fetchPeak: MemoryProbe?
    }

    let table: SuiteTable
    let rows: Int
    let rounds: Int

    /// Enumerates every row in batches of 1,000, touching one attribute of each.
    static func enumerateAll(_ container: ModelContainer) throws -> Int {
        var count = 0
        var rankSum = 0
        try ModelContext(container).enumerate(FetchDescriptor<BenchRecord>(), batchSize: 1000) { record in
            count += 1
            rankSum &+= record.rank
        }
        return rankSum >= 0 ? count : 0
    }

    func run() async throws -> Result {
        let admin = try await table.connect()
        let schema = SuiteTable.freshSchema("large")
        let url = table.storeURL(schema: schema)
        let container = try blocking { try ModelContainer(for: BenchRecord.self, configurations: SuiteTable.configuration(url)) }
        var result = Result(rows: rows)
        do {
            let entity = try await entityName(container: container, schema: schema, admin: admin)
            let all = RecordRow.make(count: rows)
            for start in stride(from: 0, to: rows, by: 50_000) {
                try await table.unnestInsert(Array(all[start..<min(rows, start + 50_000)]), schema: schema, entity: entity, on: admin)
            }
            try await table.execute(["VACUUM ANALYZE \"\(schema)\".\"\(SuiteTable.name)\""], on: admin)
            let clock = ContinuousClock()
            let rawSQL = "SELECT \(SuiteTable.columns.joined(separator: ", ")) FROM \"\(schema)\".\"\(SuiteTable.name)\""
            for round in 0..<rounds {
                // Each path takes each position in turn, so drift and warm caches favour none.
                for step in 0..<3 {
                    switch (step + round) % 3 {
                    case 0:
                        let start = clock.now
                        let count = try blocking { try LargeTableBenchmark.enumerateAll(container) }
                        result.enumerateMilliseconds.append(durationSeconds(clock.now - start) * 1000)
                        try expect(count, "enumerate")
                    case 1:
                        let start = clock.now
                        let count = try blocking { try ModelContext(container).fetch(FetchDescriptor<BenchRecord>()).count }
                        result.fetchMilliseconds.append(durationSeconds(clock.now - start) * 1000)
                        try expect(count, "fetch")
                    default:
                        let start = clock.now
                        let count = try await RawContender.read(rawSQL, PostgresBindings(), on: admin).count
                        result.rawMilliseconds.append(durationSeconds(clock.now - start) * 1000)
                        try expect(count, "raw read")
                    }
                }
            }
            result.enumeratePeak = try MemoryProbe.spawn(["enumerate", schema])
            result.fetchPeak = try MemoryProbe.spawn(["fetch", schema])
        } catch {
            await container.close()
            try? await table.drop(schema: schema, on: admin)
            try? await admin.close()
            throw error
        }
        await container.close()
        try await table.drop(schema: schema, on: admin)
        try await admin.close()
        return result
    }

    private func expect(_ count: Int, _ what: String) throws {
        guard count == rows else { throw SuiteError("\(what) of the large table saw \(count) rows, not \(rows)") }
    }

    /// The `entity` value PGModel writes for `BenchRecord`, read back from one saved model rather than
    /// assumed, so the raw-filled rows are ones PGModel fetches.
    private func entityName(container: ModelContainer, schema: String, admin: PostgresConnection) async throws -> String {
        try blocking {
            let context = ModelContext(container)
            context.insert(BenchRecord(RecordRow.make(count: 1)[0]))
            try context.save()
        }
        let rows = try await admin.query(PostgresQuery(unsafeSQL: "SELECT entity FROM \"\(schema)\".\"\(SuiteTable.name)\" LIMIT 1"),
                                         logger: SuiteTable.logger)
        var entity: String?
        for try await (name) in rows.decode(String.self, context: .default) { entity = name }
        guard let entity else { throw SuiteError("the probe model was not saved") }
        try await table.execute(["DELETE FROM \"\(schema)\".\"\(SuiteTable.name)\""], on: admin)
        return entity
    }
}
