import Foundation
@_spi(PGModelInternals) import PGModel
@_spi(PGModelInternals) import PGModelCore
import Testing

// The translator on a real `@Model` class through `Schema.Entity`: `#Predicate`'s key paths must match the
// key paths the macro writes into `schemaMetadata`.

enum TranslatorMood: String, Codable {
    case calm, excited
}

@Model final class TranslatorTrip {
    var name: String
    var destination: String
    var startDate: Date
    var genre: String?
    var mood: TranslatorMood
    var isFavorite: Bool = false
    @Transient var scratch: [String] = []
    var summary: String { "\(name) → \(destination)" }

    init(name: String, destination: String, startDate: Date, genre: String? = nil, mood: TranslatorMood = .calm) {
        self.name = name
        self.destination = destination
        self.startDate = startDate
        self.genre = genre
        self.mood = mood
    }
}

@Suite("PredicateTranslator: @Model classes")
struct PredicateTranslatorModelTests {
    func translator() throws -> PredicateTranslator<TranslatorTrip> {
        let entity = try #require(Schema([TranslatorTrip.self]).entity(for: TranslatorTrip.self))
        return PredicateTranslator<TranslatorTrip>(entity: entity)
    }

    @Test func storedPropertiesTranslateByName() throws {
        let day = Date(timeIntervalSince1970: 86_400)
        let mood = TranslatorMood.excited
        let predicate = #Predicate<TranslatorTrip> {
            $0.destination == "Paris" && $0.startDate < day && $0.genre != nil && $0.mood == mood && $0.isFavorite
        }
        #expect(try translator().translate(predicate) == .and([
            .compare(.equal, .key("destination"), .value(.string("Paris"))),
            .compare(.less, .key("startDate"), .value(.date(day))),
            .compare(.notEqual, .key("genre"), .value(.null)),
            .compare(.equal, .key("mood"), .value(.string("excited"))),
            .key("isFavorite"),
        ]))
        let search = "par"
        #expect(try translator().translate(#Predicate<TranslatorTrip> { $0.name.localizedStandardContains(search) })
            == .string(.localizedStandardContains, .key("name"), .value(.string("par"))))
    }

    @Test func transientAndComputedPropertiesThrow() throws {
        expectUnsupported(#Predicate<TranslatorTrip> { $0.scratch.isEmpty }, naming: "TranslatorTrip",
                          entity: "TranslatorTrip", translator: try translator())
        expectUnsupported(#Predicate<TranslatorTrip> { $0.summary == "x" }, naming: "TranslatorTrip",
                          entity: "TranslatorTrip", translator: try translator())
    }

    @Test func sortDescriptors() throws {
        #expect(try translator().translate([SortDescriptor(\TranslatorTrip.startDate, order: .reverse),
                                            SortDescriptor(\TranslatorTrip.name)])
            == [SortKey("startDate", ascending: false), SortKey("name")])
        let error = #expect(throws: PGModelError.self) {
            try translator().translate([SortDescriptor(\TranslatorTrip.summary)])
        }
        #expect(error?.code == .unsupportedSort)
    }

    @Test func predicatesEvaluateOnUnsavedModels() throws {
        // ModelContext evaluates predicates on unsaved models; the Linux shim must work there too.
        let trip = TranslatorTrip(name: "Zoë's weekend", destination: "Montréal", startDate: Date())
        let search = "ZOE"
        #expect(try #Predicate<TranslatorTrip> { $0.name.localizedStandardContains(search) }.evaluate(trip))
        #expect(try !#Predicate<TranslatorTrip> { $0.destination.localizedStandardContains("paris") }.evaluate(trip))
    }
}
