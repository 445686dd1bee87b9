import Foundation
@_spi(PGModelInternals) import PGModel
import PostgresNIO

/// PGModel on the direct store (`postgres://`), through SwiftData's synchronous API as an app calls it:
/// a fresh `ModelContext` per operation, as a request handler would have.
final class PGModelContender: SuiteContender {
    let key = "pgmodel"
    let title = "PGModel (postgres://)"
    let workloads: Set<SuiteWorkload> = [.insert, .fetchAll, .pages, .point]
    private let table: SuiteTable
    private var container: ModelContainer?
    private var admin: PostgresConnection?
    private(set) var schema = ""

    init(table: SuiteTable) { self.table = table }

    func prepare() async throws {
        admin = try await table.connect()
        schema = SuiteTable.freshSchema(key)
        let url = table.storeURL(schema: schema)
        // Creating the container creates the schema and table (untimed, as at deploy time).
        container = try blocking { try ModelContainer(for: BenchRecord.self, configurations: ModelConfiguration(url: url)) }
    }

    func insert(_ rows: [RecordRow]) async throws {
        let container = try live()
        try blocking {
            let context = ModelContext(container)
            for row in rows { context.insert(BenchRecord(row)) }
            try context.save()
        }
    }

    func fetchAll() async throws -> Int {
        let container = try live()
        return try blocking { try ModelContext(container).fetch(FetchDescriptor<BenchRecord>()).count }
    }

    func page(lower: Int, upper: Int) async throws -> Int {
        let container = try live()
        return try blocking {
            let descriptor = FetchDescriptor<BenchRecord>(
                predicate: #Predicate { $0.rank >= lower && $0.rank < upper }, sortBy: [SortDescriptor(\.rank)])
            return try ModelContext(container).fetch(descriptor).count
        }
    }

    func point(rank: Int) async throws -> Int {
        let container = try live()
        return try blocking {
            var descriptor = FetchDescriptor<BenchRecord>(predicate: #Predicate { $0.rank == rank })
            descriptor.fetchLimit = 1
            return try ModelContext(container).fetch(descriptor).count
        }
    }

    func analyze() async throws {
        guard let admin else { throw CancellationError() }
        try await table.execute(["ANALYZE \"\(schema)\".\"\(SuiteTable.name)\""], on: admin)
    }

    func teardown() async throws {
        if let container { await container.close() }
        container = nil
        if let admin {
            try await table.drop(schema: schema, on: admin)
            try await admin.close()
        }
        admin = nil
    }

    private func live() throws -> ModelContainer {
        guard let container else { throw CancellationError() }
        return container
    }
}

/// Runs PGModel's synchronous API from the suite's task. The synchronous calls wait on the event loop
/// (BlockingBridge), which is what an app calling SwiftData's API does; a plain closure keeps that
/// waiting out of the async function's own body.
func blocking<R>(_ body: () throws -> R) rethrows -> R {
    try body()
}
