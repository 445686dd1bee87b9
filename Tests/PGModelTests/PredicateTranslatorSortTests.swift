import Foundation
@_spi(PGModelInternals) import PGModel
@_spi(PGModelInternals) import PGModelCore
import Testing

@Suite("PredicateTranslator: sort descriptors")
struct PredicateTranslatorSortTests {
    @Test func orderMapsToAscending() throws {
        #expect(try tripTranslator.translate([SortDescriptor(\TripRow.startDate)]) == [SortKey("startDate")])
        #expect(try tripTranslator.translate([SortDescriptor(\TripRow.startDate, order: .forward)])
            == [SortKey("startDate", ascending: true)])
        #expect(try tripTranslator.translate([SortDescriptor(\TripRow.startDate, order: .reverse)])
            == [SortKey("startDate", ascending: false)])
    }

    @Test func severalKeysKeepTheirOrder() throws {
        let sort = [SortDescriptor(\TripRow.destination), SortDescriptor(\TripRow.count, order: .reverse),
                    SortDescriptor(\TripRow.name)]
        #expect(try tripTranslator.translate(sort)
            == [SortKey("destination"), SortKey("count", ascending: false), SortKey("name")])
        #expect(try tripTranslator.translate([SortDescriptor<TripRow>]()) == [])
    }

    @Test func optionalAndStringComparatorKeys() throws {
        #expect(try tripTranslator.translate([SortDescriptor(\TripRow.endDate, order: .reverse)])
            == [SortKey("endDate", ascending: false)])
        #expect(try tripTranslator.translate([SortDescriptor(\TripRow.genre)]) == [SortKey("genre")])
        // Linux's Foundation has only `.lexical`; Apple's `.localizedStandard` and `.localized` translate alike.
        #expect(try tripTranslator.translate([SortDescriptor(\TripRow.name, comparator: .lexical)])
            == [SortKey("name")])
        #expect(try tripTranslator.translate([SortDescriptor(\TripRow.name, comparator: .lexical, order: .reverse)])
            == [SortKey("name", ascending: false)])
        #expect(try tripTranslator.translate([SortDescriptor(\TripRow.genre, comparator: .lexical, order: .reverse)])
            == [SortKey("genre", ascending: false)])
    }

    @Test func nonAttributesThrowUnsupportedSort() {
        let computed = #expect(throws: PGModelError.self) {
            try tripTranslator.translate([SortDescriptor(\TripRow.name), SortDescriptor(\TripRow.nameLength)])
        }
        #expect(computed?.code == .unsupportedSort)
        #expect(computed?.message.contains("cannot sort Trip by") == true, "\(computed?.message ?? "")")
        #expect(computed?.message.contains("TripRow") == true, "\(computed?.message ?? "")")
        #expect(computed?.model == "Trip")

        let nested = #expect(throws: PGModelError.self) {
            try tripTranslator.translate([SortDescriptor(\TripRow.album?.title)])
        }
        #expect(nested?.code == .unsupportedSort)
        #expect(nested?.message.contains("TripRow") == true, "\(nested?.message ?? "")")
    }
}
