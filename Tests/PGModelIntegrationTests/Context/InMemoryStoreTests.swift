import Foundation
@_spi(PGModelInternals) import PGModel
@_spi(PGModelInternals) import PGModelPostgres
import PostgresNIO
import Testing
import PGModelTesting

/// `isStoredInMemoryOnly` is a temporary PostgreSQL schema that disappears with the container.
@Suite("In-memory configuration")
struct InMemoryStoreTests {
    func temporarySchemas() async throws -> Set<String> {
        try await ServerTestHarness.withDatabase { _, connection in
            let rows = try await connection.connection.query("SELECT nspname FROM pg_namespace WHERE nspname LIKE 'pgmodel_mem_%'", logger: ServerTestHarness.logger)
            var names = Set<String>()
            for try await name in rows.decode(String.self) { names.insert(name) }
            return names
        }
    }

    @Test func temporarySchemaIsDroppedOnClose() async throws {
        let before = try await temporarySchemas()
        let url = try TestDatabase.url()
        let container = try await offCooperativePool { () throws -> ModelContainer in
            setenv("DATABASE_URL", url, 1)
            let container = try ModelContainer(for: Voyage.self, configurations: ModelConfiguration(isStoredInMemoryOnly: true))
            let context = ModelContext(container)
            let now = Date()
            context.insert(Voyage(name: "mem", destination: "Nowhere", startDate: now, endDate: now))
            try context.save()
            #expect(try ModelContext(container).fetchCount(FetchDescriptor<Voyage>()) == 1)
            return container
        }
        let during = try await temporarySchemas().subtracting(before)
        #expect(during.count == 1)
        await container.close()
        #expect(try await temporarySchemas().intersection(during).isEmpty)
    }
}
