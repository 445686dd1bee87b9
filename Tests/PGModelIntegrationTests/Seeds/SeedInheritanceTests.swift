import Foundation
@_spi(PGModelInternals) import PGModel
import Testing

/// "SwiftData: Dive into inheritance and schema migration" declares its subclasses without initializers:
/// `BusinessTrip` gives its property a default, `PersonalTrip` does not (`var reason: Reason`). Both inherit
/// `Trip`'s initializer, as in SwiftData; `reason` has no value until it is assigned, and a save before that
/// throws `type_mismatch` instead of storing a row without it.
@Suite("Seed inheritance: subclasses without initializers")
struct SeedInheritanceTests {
    @Model
    class Trip {
        var name: String
        var destination: String
        var startDate: Date
        var endDate: Date

        init(name: String, destination: String, startDate: Date, endDate: Date) {
            self.name = name
            self.destination = destination
            self.startDate = startDate
            self.endDate = endDate
        }
    }

    // The seed's two subclasses, as written (the seed's `@available(iOS 26, *)` aside).
    @Model
    class BusinessTrip: Trip {
        var perdiem: Double = 0.0
    }

    @Model
    class PersonalTrip: Trip {
        enum Reason: String, CaseIterable, Codable {
            case family
            case reunion
            case wellness
        }

        var reason: Reason
    }

    private func makeContainer() throws -> ModelContainer {
        try ModelContainer(for: Trip.self, BusinessTrip.self, PersonalTrip.self,
                           configurations: ModelConfiguration(url: TestDatabase.schemaURL()))
    }

    @Test("a subclass without a default value inherits Trip's initializer, saves and fetches back")
    func inheritedInitializer() throws {
        let container = try makeContainer()
        let context = ModelContext(container)
        let day = Date(timeIntervalSince1970: 1_800_000_000)
        let reunion = PersonalTrip(name: "Reunion", destination: "Lyon", startDate: day, endDate: day)
        reunion.reason = .reunion
        context.insert(reunion)
        context.insert(BusinessTrip(name: "Summit", destination: "Oslo", startDate: day, endDate: day))
        try context.save()

        let fresh = ModelContext(container)
        let personal = try fresh.fetch(FetchDescriptor<PersonalTrip>())
        #expect(personal.map(\.reason) == [.reunion])
        #expect(personal.map(\.name) == ["Reunion"])
        let deep = try fresh.fetch(FetchDescriptor<Trip>(predicate: #Predicate { $0 is PersonalTrip }))
        #expect(deep.count == 1)
        #expect((deep.first as? PersonalTrip)?.reason == .reunion)
        #expect(try fresh.fetch(FetchDescriptor<BusinessTrip>()).map(\.perdiem) == [0.0])

        // A change of the property is saved like any other.
        personal.first?.reason = .wellness
        try fresh.save()
        #expect(try ModelContext(container).fetch(FetchDescriptor<PersonalTrip>()).map(\.reason) == [.wellness])
    }

    @Test("saving the subclass before its property is assigned throws type_mismatch naming it, and saves nothing")
    func unassignedPropertyIsATypedError() throws {
        let container = try makeContainer()
        let context = ModelContext(container)
        let trip = PersonalTrip(name: "Someday", destination: "Rome", startDate: .now, endDate: .now)
        context.insert(trip)
        var thrown: PGModelError?
        do { try context.save() } catch let error as PGModelError { thrown = error }
        #expect(thrown?.code == .typeMismatch)
        #expect(thrown?.keyPath == "reason")
        #expect(thrown?.model == "PersonalTrip")
        #expect(try ModelContext(container).fetchCount(FetchDescriptor<Trip>()) == 0)

        // Assigned, the same model saves.
        trip.reason = .family
        try context.save()
        #expect(try ModelContext(container).fetch(FetchDescriptor<PersonalTrip>()).map(\.reason) == [.family])
    }
}
