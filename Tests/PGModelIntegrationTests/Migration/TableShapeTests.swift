import Foundation
@_spi(PGModelInternals) import PGModel
import Testing
import PGModelTesting

/// Two apps whose `Trip` classes differ, as the README's tour and the SampleTrips example do.
enum TourShapeModels {
    @Model final class Trip {
        var name: String
        var destination: String
        var endDate: Date
        init(name: String, destination: String, endDate: Date) {
            self.name = name
            self.destination = destination
            self.endDate = endDate
        }
    }
}

enum SampleShapeModels {
    @Model final class Trip {
        var name: String
        var startDate: Date?
        init(name: String, startDate: Date? = nil) {
            self.name = name
            self.startDate = startDate
        }
    }
}

/// A direct-store container opened on tables another app made with another shape fails when it is
/// created, naming the table and every difference, and changes nothing; in a schema of its own it works.
@Suite("Containers on tables of another shape")
struct TableShapeTests {
    @Test func anotherAppsTableIsRefusedAtCreation() async throws {
        let url = try TestDatabase.schemaURL()
        try await offCooperativePool {
            let tour = try ModelContainer(for: TourShapeModels.Trip.self, configurations: ModelConfiguration(url: url))
            let context = ModelContext(tour)
            context.insert(TourShapeModels.Trip(name: "Oslo in spring", destination: "Oslo", endDate: .now))
            try context.save()

            var thrown: PGModelError?
            do {
                _ = try ModelContainer(for: SampleShapeModels.Trip.self, configurations: ModelConfiguration(url: url))
            } catch let error as PGModelError {
                thrown = error
            }
            let error = try #require(thrown, "a container whose Trip cannot use the tour's table must not open")
            #expect(error.code == .invalidSchema)
            #expect(error.message.contains("\"trip\""))
            #expect(error.message.contains("\"end_date\" is NOT NULL, has no default, and no property stores it"))
            #expect(error.message.contains("\"destination\" is NOT NULL"))
            #expect(error.message.contains("\"start_date\"") == false, "a new optional column is no difference")
            #expect(!error.message.contains("Oslo"), "differences name columns, never values")

            // Nothing changed: the tour's app still opens its store, with its row.
            let again = ModelContext(try ModelContainer(for: TourShapeModels.Trip.self, configurations: ModelConfiguration(url: url)))
            #expect(try again.fetch(FetchDescriptor<TourShapeModels.Trip>()).map(\.name) == ["Oslo in spring"])
        }
    }

    @Test func aSchemaOfItsOwnKeepsAppsApart() async throws {
        try await offCooperativePool {
            _ = try ModelContainer(for: TourShapeModels.Trip.self, configurations: ModelConfiguration(url: try TestDatabase.schemaURL()))
            let sample = try ModelContainer(for: SampleShapeModels.Trip.self, configurations: ModelConfiguration(url: try TestDatabase.schemaURL()))
            let context = ModelContext(sample)
            context.insert(SampleShapeModels.Trip(name: "Rome"))
            try context.save()
            #expect(try context.fetchCount(FetchDescriptor<SampleShapeModels.Trip>()) == 1)
        }
    }
}
