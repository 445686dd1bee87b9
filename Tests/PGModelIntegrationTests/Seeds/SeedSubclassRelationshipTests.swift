import Foundation
@_spi(PGModelInternals) import PGModel
import Testing

/// The SwiftData skill document's inheritance sample: a relationship declared on the subclass
/// (`BusinessTrip.businessMeals`), one on the root that the subclass inherits (`Trip.accommodation`), and a
/// to-many of the root class holding both kinds (`TravelPlanner.upcomingTrips`). The seed names
/// `Accommodation` and `BusinessMeal` without declaring them; they are the smallest models its inverses need.
@Suite("Seed inheritance: relationships declared on a subclass")
struct SeedSubclassRelationshipTests {
    @Model
    class Trip {
        @Attribute(.preserveValueOnDeletion)
        var name: String
        var destination: String
        var startDate: Date
        var endDate: Date

        @Relationship(deleteRule: .cascade, inverse: \Accommodation.trip)
        var accommodation: Accommodation?

        init(name: String, destination: String, startDate: Date, endDate: Date) {
            self.name = name
            self.destination = destination
            self.startDate = startDate
            self.endDate = endDate
        }
    }

    @Model
    class BusinessTrip: Trip {
        var purpose: String
        var expenseCode: String

        @Relationship(deleteRule: .cascade, inverse: \BusinessMeal.trip)
        var businessMeals: [BusinessMeal] = []

        init(name: String, destination: String, startDate: Date, endDate: Date, purpose: String, expenseCode: String) {
            self.purpose = purpose
            self.expenseCode = expenseCode
            super.init(name: name, destination: destination, startDate: startDate, endDate: endDate)
        }
    }

    @Model
    class TravelPlanner {
        var name: String
        @Relationship(deleteRule: .cascade) var upcomingTrips: [Trip] = [] // Can contain BusinessTrip and PersonalTrip

        init(name: String) {
            self.name = name
        }
    }

    @Model
    final class Accommodation {
        var name: String
        var trip: Trip?

        init(name: String) { self.name = name }
    }

    @Model
    final class BusinessMeal {
        var place: String
        var trip: BusinessTrip?

        init(place: String) { self.place = place }
    }

    @Test("a subclass's own relationship, an inherited one and a polymorphic to-many save, fetch, and cascade")
    func subclassRelationships() throws {
        let container = try ModelContainer(for: TravelPlanner.self, Trip.self, BusinessTrip.self, Accommodation.self, BusinessMeal.self,
                                           configurations: ModelConfiguration(url: TestDatabase.schemaURL()))
        let day = Date(timeIntervalSince1970: 1_800_000_000)
        let context = ModelContext(container)
        let planner = TravelPlanner(name: "Q3")
        let summit = BusinessTrip(name: "Summit", destination: "Oslo", startDate: day, endDate: day, purpose: "keynote", expenseCode: "X-1")
        let holiday = Trip(name: "Holiday", destination: "Lisbon", startDate: day, endDate: day)
        context.insert(planner)
        planner.upcomingTrips = [summit, holiday]
        summit.businessMeals.append(BusinessMeal(place: "Maaemo"))
        summit.businessMeals.append(BusinessMeal(place: "Kontrast"))
        summit.accommodation = Accommodation(name: "Grand")
        try context.save()

        let fresh = ModelContext(container)
        let trips = try fresh.fetch(FetchDescriptor<Trip>(sortBy: [SortDescriptor(\.name)]))
        #expect(trips.map(\.name) == ["Holiday", "Summit"])
        let business = try #require(trips.compactMap { $0 as? BusinessTrip }.first)
        #expect(business.expenseCode == "X-1")
        #expect(Set(business.businessMeals.map(\.place)) == ["Maaemo", "Kontrast"])
        #expect(business.businessMeals.allSatisfy { $0.trip === business })
        #expect(business.accommodation?.name == "Grand")
        #expect(business.accommodation?.trip === business)
        #expect(try fresh.fetch(FetchDescriptor<Trip>(predicate: #Predicate { $0 is BusinessTrip })).count == 1)
        let loadedPlanner = try #require(try fresh.fetch(FetchDescriptor<TravelPlanner>()).first)
        #expect(Set(loadedPlanner.upcomingTrips.map(\.name)) == ["Holiday", "Summit"])
        #expect(loadedPlanner.upcomingTrips.contains { $0 is BusinessTrip })
        let meals = try fresh.fetch(FetchDescriptor<BusinessMeal>(predicate: #Predicate { $0.trip?.expenseCode == "X-1" }))
        #expect(meals.count == 2)

        // Deleting the business trip cascades to its meals (declared on the subclass) and its
        // accommodation (inherited from Trip).
        fresh.delete(business)
        try fresh.save()
        let after = ModelContext(container)
        #expect(try after.fetchCount(FetchDescriptor<BusinessMeal>()) == 0)
        #expect(try after.fetchCount(FetchDescriptor<Accommodation>()) == 0)
        #expect(try after.fetch(FetchDescriptor<Trip>()).map(\.name) == ["Holiday"])
    }
}
