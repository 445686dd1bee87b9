import Foundation
@_spi(PGModelInternals) @testable import PGModel
import Testing
import PGModelTesting

/// The rows a save inserts are read from the models' storage by the `_$readStoredValues(into:)` that
/// `@Model` generates, not through key paths: the same values the accessors give, for every
/// kind of attribute (transformed ones through their transformer), to-ones kept as foreign keys, and
/// classes of a hierarchy, and what is read is what is stored.
@Suite("Inserted rows read from storage")
struct InsertRowReaderTests {
    typealias Seeds = SampleTrips

    @Test func theStorageReaderReadsWhatTheAccessorsRead() async throws {
        let f = try await StoreFixture.make(.direct, [
            EveryType.self, Excursion.self, Seeds.Trip.self, Seeds.BusinessTrip.self, Seeds.PersonalTrip.self,
            Seeds.RetreatTrip.self, Seeds.BucketListItem.self, Seeds.LivingAccommodation.self, Seeds.TravelPlanner.self,
        ])
        try await offCooperativePool {
            let context = f.newContext()
            let start = Date(timeIntervalSince1970: 1_700_000_000)
            let retreat = Seeds.RetreatTrip(name: "Quiet", destination: "Alps", startDate: start, endDate: start + 86_400, retreatCenter: "Haus")
            let business = Seeds.BusinessTrip(name: "Pitch", destination: "Oslo", startDate: start, endDate: start, perdiem: 120.5)
            let item = Seeds.BucketListItem(title: "Hike", details: "north face", hasReservation: true)
            item.trip = retreat
            let lodging = Seeds.LivingAccommodation(address: "1 Lake Road", placeName: "Chalet")
            retreat.livingAccommodation = lodging
            let planner = Seeds.TravelPlanner(name: "Ana")
            planner.upcomingTrips = [retreat, business]
            let excursion = Excursion(name: "Fjord", location: .init(latitude: 60.1, longitude: 5.3), tags: ["boat"], scores: [3, 4])
            excursion.hue = Hue(degrees: 120)
            excursion.mapItemIdentifier = ExternalIdentifier(rawValue: "poi-7")
            excursion.transport = .flight(number: "SK 4", stops: 1)
            excursion.isSelected = true
            let unset = Excursion(name: "Plain")
            let models: [any PersistentModel] = [EveryType(seed: 3), excursion, unset, retreat, business, item, lodging, planner]
            for model in models { context.insert(model) }

            for model in models {
                let declared = type(of: model).schemaMetadata.count
                var reader = _StoredValueReader(slots: Array(0..<declared), count: declared)
                model._$readStoredValues(into: &reader)
                #expect(reader.position == declared, "\(type(of: model)) read \(reader.position) of \(declared) properties")
                let (row, _) = try context.insertedRow(of: model, in: f.container.schema)
                let accessed = try context.storedValues(of: model, in: f.container.schema, keys: nil)
                #expect(row.values == accessed, "\(type(of: model))")
            }
            try context.save()

            let reader = f.newContext()
            let fetched = try reader.fetch(FetchDescriptor<Excursion>(sortBy: [SortDescriptor(\.name)]))
            #expect(fetched.map(\.name) == ["Fjord", "Plain"])
            #expect(fetched[0].hue?.degrees == 120 && fetched[1].hue == nil)
            #expect(fetched[0].transport == .flight(number: "SK 4", stops: 1) && fetched[0].mapItemIdentifier?.rawValue == "poi-7")
            #expect(fetched[0].isSelected == false)   // ephemeral: not stored
            let items = try reader.fetch(FetchDescriptor<Seeds.BucketListItem>())
            #expect(items.first?.trip?.name == "Quiet")
            let retreats = try reader.fetch(FetchDescriptor<Seeds.RetreatTrip>())
            #expect(retreats.map(\.retreatCenter) == ["Haus"] && retreats.first?.livingAccommodation?.placeName == "Chalet")
            #expect(try reader.fetch(FetchDescriptor<Seeds.BusinessTrip>()).map(\.perdiem) == [120.5])
        }
    }
}
