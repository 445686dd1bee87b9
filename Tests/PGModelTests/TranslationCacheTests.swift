import Foundation
@_spi(PGModelInternals) @testable import PGModel
@_spi(PGModelInternals) import PGModelCore
import Testing

/// The per-container translation cache: whatever it keeps, each predicate's IR is exactly what
/// the translator gives for that predicate.
@Suite("Translation cache")
struct TranslationCacheTests {
    let translator: PredicateTranslator<TranslatorTrip>

    init() throws {
        let entity = try #require(Schema([TranslatorTrip.self]).entity(for: TranslatorTrip.self))
        translator = PredicateTranslator<TranslatorTrip>(entity: entity)
    }

    /// One call site: the same expression type, key paths and operators every call.
    static func destination(_ name: String, after day: Date) -> Predicate<TranslatorTrip> {
        #Predicate<TranslatorTrip> { $0.destination == name && $0.startDate > day }
    }

    static func searching(_ text: String) -> Predicate<TranslatorTrip> {
        #Predicate<TranslatorTrip> { $0.name.localizedStandardContains(text) }
    }

    static func genre(_ genre: String?) -> Predicate<TranslatorTrip> {
        #Predicate<TranslatorTrip> { $0.genre == genre }
    }

    static func favorite(_ flag: Bool, _ name: String) -> Predicate<TranslatorTrip> {
        #Predicate<TranslatorTrip> { flag ? $0.isFavorite : $0.name == name }
    }

    func expectSame(_ cache: TranslationCache, _ predicate: Predicate<TranslatorTrip>) throws {
        #expect(try cache.translate(predicate, with: translator) == translator.translate(predicate))
    }

    @Test func aCallSiteGetsItsOwnValuesEachTime() throws {
        let cache = TranslationCache()
        for (name, seconds) in [("Paris", 0.0), ("Rome", 86_400.5), ("Paris", 1), ("", 2), ("Oslo", 3)] {
            try expectSame(cache, Self.destination(name, after: Date(timeIntervalSince1970: seconds)))
        }
        let filled = try cache.translate(Self.destination("Lima", after: Date(timeIntervalSince1970: 7)), with: translator)
        #expect(filled == .and([.compare(.equal, .key("destination"), .value(.string("Lima"))),
                                .compare(.greater, .key("startDate"), .value(.date(Date(timeIntervalSince1970: 7))))]))
    }

    @Test func valuesTheTranslatorFoldsAreTheirOwnShape() throws {
        let cache = TranslationCache()
        // "" is folded to FALSE; nil becomes IS NULL; a captured Bool picks a branch.
        for text in ["par", "", "is", ""] { try expectSame(cache, Self.searching(text)) }
        #expect(try cache.translate(Self.searching(""), with: translator) == .false)
        for genre in ["jazz", nil, "folk", nil] { try expectSame(cache, Self.genre(genre)) }
        for (flag, name) in [(true, "a"), (false, "b"), (false, "c"), (true, "d")] { try expectSame(cache, Self.favorite(flag, name)) }
    }

    @Test func otherKeyPathsOperatorsAndSortsDoNotShare() throws {
        let cache = TranslationCache()
        let day = Date(timeIntervalSince1970: 0)
        let shapes: [Predicate<TranslatorTrip>] = [
            #Predicate { $0.name == "x" }, #Predicate { $0.destination == "x" },
            #Predicate { $0.startDate < day }, #Predicate { $0.startDate >= day }, #Predicate { $0.startDate > day },
        ]
        for _ in 0..<2 {
            for predicate in shapes { try expectSame(cache, predicate) }
        }
        for _ in 0..<2 {
            #expect(try cache.translate([SortDescriptor(\TranslatorTrip.name)], with: translator) == [SortKey("name")])
            #expect(try cache.translate([SortDescriptor(\TranslatorTrip.name, order: .reverse)], with: translator)
                == [SortKey("name", ascending: false)])
            #expect(try cache.translate([SortDescriptor(\TranslatorTrip.startDate), SortDescriptor(\TranslatorTrip.name)], with: translator)
                == [SortKey("startDate"), SortKey("name")])
        }
    }

    @Test func equalCapturedValuesStillTranslateRight() throws {
        let cache = TranslationCache()
        func range(_ lo: String, _ hi: String) -> Predicate<TranslatorTrip> {
            #Predicate<TranslatorTrip> { $0.name >= lo && $0.name < hi }
        }
        // The first call cannot tell its two values apart; later ones build the template.
        for (lo, hi) in [("a", "a"), ("a", "m"), ("m", "m"), ("b", "c")] { try expectSame(cache, range(lo, hi)) }
    }

    @Test func untranslatableShapesStillThrow() throws {
        let cache = TranslationCache()
        for _ in 0..<2 {
            #expect(throws: PGModelError.self) { _ = try cache.translate(#Predicate<TranslatorTrip> { $0.summary == "x" }, with: translator) }
        }
    }
}
