import Foundation
@_spi(PGModelInternals) import PGModel
@_spi(PGModelInternals) import PGModelCore
import Testing

/// Captured values become exactly the stored form `PersistableAttribute` gives the same Swift value.
@Suite("PredicateTranslator: captured values")
struct PredicateTranslatorValueTests {
    @Test func strings() throws {
        let s = "Zoë"
        #expect(try ir(#Predicate { $0.name == s }) == .compare(.equal, .key("name"), .value(.string("Zoë"))))
        let optional: String? = "Rock"
        #expect(try ir(#Predicate { $0.genre == optional }) == .compare(.equal, .key("genre"), .value(.string("Rock"))))
    }

    @Test func booleans() throws {
        let b = true
        #expect(try ir(#Predicate { $0.isFavorite == b }) == .compare(.equal, .key("isFavorite"), .value(.bool(true))))
        let optional: Bool? = false
        #expect(try ir(#Predicate { $0.flag == optional }) == .compare(.equal, .key("flag"), .value(.bool(false))))
        let none: Bool? = nil
        #expect(try ir(#Predicate { $0.flag == none }) == .compare(.equal, .key("flag"), .value(.null)))
    }

    @Test func integersOfEveryWidth() throws {
        let i = Int.max, i8 = Int8.min, i16 = Int16.max, i32 = Int32.min, i64 = Int64.max
        let u8 = UInt8.max, u16 = UInt16.max, u32 = UInt32.max
        #expect(try ir(#Predicate { $0.count == i }) == .compare(.equal, .key("count"), .value(.int(Int64(Int.max)))))
        #expect(try ir(#Predicate { $0.i8 == i8 }) == .compare(.equal, .key("i8"), .value(.int(-128))))
        #expect(try ir(#Predicate { $0.i16 == i16 }) == .compare(.equal, .key("i16"), .value(.int(32767))))
        #expect(try ir(#Predicate { $0.i32 == i32 }) == .compare(.equal, .key("i32"), .value(.int(-2_147_483_648))))
        #expect(try ir(#Predicate { $0.i64 == i64 }) == .compare(.equal, .key("i64"), .value(.int(.max))))
        #expect(try ir(#Predicate { $0.u8 == u8 }) == .compare(.equal, .key("u8"), .value(.int(255))))
        #expect(try ir(#Predicate { $0.u16 == u16 }) == .compare(.equal, .key("u16"), .value(.int(65535))))
        #expect(try ir(#Predicate { $0.u32 == u32 }) == .compare(.equal, .key("u32"), .value(.int(4_294_967_295))))
    }

    @Test func floatingPointAndDecimal() throws {
        let d = 2.5, f: Float = 0.5
        let price = Decimal(string: "12.50", locale: Locale(identifier: "en_US_POSIX")) ?? 0
        #expect(try ir(#Predicate { $0.rating > d }) == .compare(.greater, .key("rating"), .value(.double(2.5))))
        #expect(try ir(#Predicate { $0.score > f }) == .compare(.greater, .key("score"), .value(.double(0.5))))
        #expect(try ir(#Predicate { $0.price == price }) == .compare(.equal, .key("price"), .value(.decimal(price))))
    }

    @Test func datesUUIDsDataURLs() throws {
        let date = Date(timeIntervalSince1970: 1_700_000_000.25)
        let uuid = UUID(uuidString: "0193A1B2-0000-7000-8000-000000000001") ?? UUID()
        let data = Data([0, 1, 2, 255])
        let url = URL(string: "https://example.com/a?b=c") ?? URL(fileURLWithPath: "/")
        #expect(try ir(#Predicate { $0.startDate < date }) == .compare(.less, .key("startDate"), .value(.date(date))))
        #expect(try ir(#Predicate { $0.endDate == date }) == .compare(.equal, .key("endDate"), .value(.date(date))))
        #expect(try ir(#Predicate { $0.uuid == uuid }) == .compare(.equal, .key("uuid"), .value(.uuid(uuid))))
        #expect(try ir(#Predicate { $0.blob == data }) == .compare(.equal, .key("blob"), .value(.data(data))))
        #expect(try ir(#Predicate { $0.website == url })
            == .compare(.equal, .key("website"), .value(.string("https://example.com/a?b=c"))))
    }

    @Test func enumsByRawValue() throws {
        let kind = TripKind.personal, level = TripLevel.high
        #expect(try ir(#Predicate { $0.kind == kind }) == .compare(.equal, .key("kind"), .value(.string("personal"))))
        #expect(try ir(#Predicate { $0.level == level }) == .compare(.equal, .key("level"), .value(.int(3))))
        let optionalKind: TripKind? = .business
        #expect(try ir(#Predicate { $0.optionalKind == optionalKind })
            == .compare(.equal, .key("optionalKind"), .value(.string("business"))))
        let noKind: TripKind? = nil
        #expect(try ir(#Predicate { $0.optionalKind == noKind })
            == .compare(.equal, .key("optionalKind"), .value(.null)))
        #expect(try ir(#Predicate { $0.optionalKind != nil })
            == .compare(.notEqual, .key("optionalKind"), .value(.null)))
    }

    @Test func storedFormMatchesPersistableAttribute() throws {
        // The same Swift value must compare equal to its column, so both paths must agree.
        let date = Date(timeIntervalSince1970: 42)
        #expect(try ir(#Predicate { $0.startDate == date }) == .compare(.equal, .key("startDate"), .value(date.pgValue)))
        let f: Float = 0.1
        #expect(try ir(#Predicate { $0.score == f }) == .compare(.equal, .key("score"), .value(f.pgValue)))
    }
}
