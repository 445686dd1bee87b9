import Foundation
import PGModel
import PGModelTesting
import Testing
import TripsAPI

/// `TripsAPIExample migrate`: a store of the API's first release (no budgets) moves to today's schema,
/// and the server's container then opens it with nothing left to do.
@Suite("TripsAPI migrate")
struct TripsAPIMigrationTests {
    @Test("migrate --dry-run changes nothing; migrate moves a V1 store to V2 with budgets of 0; a second run has nothing to do")
    func migrateV1Store() async throws {
        let url = try PGModelTestDatabase.url(schemaName: PGModelTestDatabase.uniqueSchemaName("tripsapimig"))
        let environment = ["TRIPSAPI_STORE": url.absoluteString]
        try await offCooperativePool {
            let v1 = try ModelContainer(for: Schema(versionedSchema: TripsAPISchemaV1.self), migrationPlan: TripsAPIMigrationPlan.self,
                                        configurations: ModelConfiguration(url: url))
            let context = ModelContext(v1)
            context.insert(TripsAPISchemaV1.Trip(name: "Oslo", destination: "Oslo", startDate: .now, endDate: .now))
            try context.save()
        }
        #expect(try await offCooperativePool { TripsAPIApp.migrate(arguments: ["--dry-run"], environment: environment) } == 0)
        let dryRun = try await offCooperativePool {
            try ModelContainer.migrationDryRun(for: TripsAPIApp.schema, migrationPlan: TripsAPIMigrationPlan.self,
                                               configurations: [ModelConfiguration(url: url)])
        }
        #expect(dryRun.storeVersion == Schema.Version(1, 0, 0))
        #expect(try await offCooperativePool { TripsAPIApp.migrate(arguments: [], environment: environment) } == 0)
        let report = try await offCooperativePool {
            try ModelContainer.migrate(for: TripsAPIApp.schema, migrationPlan: TripsAPIMigrationPlan.self, configurations: [ModelConfiguration(url: url)])
        }
        #expect(report.outcome == .upToDate)
        let container = try await offCooperativePool { try TripsAPIApp.makeContainer(url: url) }
        let budgets = try await ModelContext(container).fetchAsync(FetchDescriptor<Trip>()).map(\.budget)
        #expect(budgets == [0])
        await container.close()
        #expect(try await offCooperativePool { TripsAPIApp.migrate(arguments: ["--frobnicate"], environment: environment) } == 2)
    }
}
