import Foundation
@_spi(PGModelInternals) import PGModel
@_spi(PGModelInternals) import PGModelCore
import Testing

// The translator is tested on a plain struct with a hand-written key path table: no macros, no database.

enum TripKind: String, Codable, Sendable, Equatable {
    case business, personal
}

enum TripLevel: Int, Codable, Sendable, Equatable {
    case low = 1, high = 3
}

struct TripAlbum: Codable, Sendable, Equatable {
    var title: String
}

/// One row of every attribute type PGModel stores, plus non-attributes (`tags`, `album`, `nameLength`) that
/// the key path table leaves out, as the schema would.
struct TripRow: Codable, Sendable, Equatable {
    var name = ""
    var destination = ""
    var genre: String? = nil
    var isFavorite = false
    var flag: Bool? = nil
    var count = 0
    var i8: Int8 = 0
    var i16: Int16 = 0
    var i32: Int32 = 0
    var i64: Int64 = 0
    var u8: UInt8 = 0
    var u16: UInt16 = 0
    var u32: UInt32 = 0
    var u64: UInt64 = 0
    var rating = 0.0
    var score: Float = 0
    var price: Decimal = 0
    var startDate = Date(timeIntervalSince1970: 0)
    var endDate: Date? = nil
    var uuid = UUID(uuidString: "00000000-0000-0000-0000-000000000000") ?? UUID()
    var blob = Data()
    var website = URL(fileURLWithPath: "/")
    var kind = TripKind.business
    var level = TripLevel.low
    var optionalKind: TripKind? = nil
    var tags: [String] = []
    var album: TripAlbum? = nil
    var nameLength: Int { name.count }

    /// The stored attributes by key path, as `Schema.Entity.property(for:)` would name them.
    static func attributeName(_ keyPath: AnyKeyPath) -> String? {
        let table: [AnyKeyPath: String] = [
            \TripRow.name: "name", \TripRow.destination: "destination", \TripRow.genre: "genre",
            \TripRow.isFavorite: "isFavorite", \TripRow.flag: "flag", \TripRow.count: "count",
            \TripRow.i8: "i8", \TripRow.i16: "i16", \TripRow.i32: "i32", \TripRow.i64: "i64",
            \TripRow.u8: "u8", \TripRow.u16: "u16", \TripRow.u32: "u32", \TripRow.u64: "u64",
            \TripRow.rating: "rating", \TripRow.score: "score", \TripRow.price: "price",
            \TripRow.startDate: "startDate", \TripRow.endDate: "endDate", \TripRow.uuid: "uuid",
            \TripRow.blob: "blob", \TripRow.website: "website", \TripRow.kind: "kind", \TripRow.level: "level",
            \TripRow.optionalKind: "optionalKind",
        ]
        return table[keyPath]
    }

    /// The row as the database would hold it: what the reference evaluator reads.
    var storedValues: [String: PGValue] {
        [
            "name": name.pgValue, "destination": destination.pgValue, "genre": genre.pgValue,
            "isFavorite": isFavorite.pgValue, "flag": flag.pgValue, "count": count.pgValue,
            "i8": i8.pgValue, "i16": i16.pgValue, "i32": i32.pgValue, "i64": i64.pgValue,
            "u8": u8.pgValue, "u16": u16.pgValue, "u32": u32.pgValue, "u64": .int(Int64(u64)),
            "rating": rating.pgValue, "score": score.pgValue, "price": price.pgValue,
            "startDate": startDate.pgValue, "endDate": endDate.pgValue, "uuid": uuid.pgValue,
            "blob": blob.pgValue, "website": website.pgValue, "kind": kind.rawValue.pgValue,
            "level": level.rawValue.pgValue, "optionalKind": optionalKind?.rawValue.pgValue ?? .null,
        ]
    }
}

/// A fresh translator per use: translators are cheap, and not `Sendable` (the key path namer may capture anything).
var tripTranslator: PredicateTranslator<TripRow> {
    PredicateTranslator<TripRow>(entityName: "Trip", keyPathName: TripRow.attributeName)
}

func ir(_ predicate: Predicate<TripRow>) throws -> QueryExpression {
    try tripTranslator.translate(predicate)
}

@Suite("PredicateTranslator: operators")
struct PredicateTranslatorTests {
    @Test func equalityAndInequality() throws {
        let paris = "Paris"
        #expect(try ir(#Predicate { $0.destination == paris })
            == .compare(.equal, .key("destination"), .value(.string("Paris"))))
        #expect(try ir(#Predicate { $0.destination != paris })
            == .compare(.notEqual, .key("destination"), .value(.string("Paris"))))
        // Operands keep their side.
        #expect(try ir(#Predicate { paris == $0.destination })
            == .compare(.equal, .value(.string("Paris")), .key("destination")))
        #expect(try ir(#Predicate { $0.name == $0.destination })
            == .compare(.equal, .key("name"), .key("destination")))
    }

    @Test func orderingComparisons() throws {
        #expect(try ir(#Predicate { $0.count < 3 }) == .compare(.less, .key("count"), .value(.int(3))))
        #expect(try ir(#Predicate { $0.count <= 3 }) == .compare(.lessOrEqual, .key("count"), .value(.int(3))))
        #expect(try ir(#Predicate { $0.count > 3 }) == .compare(.greater, .key("count"), .value(.int(3))))
        #expect(try ir(#Predicate { $0.count >= 3 }) == .compare(.greaterOrEqual, .key("count"), .value(.int(3))))
        #expect(try ir(#Predicate { $0.name < "m" }) == .compare(.less, .key("name"), .value(.string("m"))))
    }

    @Test func conjunctionDisjunctionNegation() throws {
        #expect(try ir(#Predicate { $0.count > 1 && $0.isFavorite })
            == .and([.compare(.greater, .key("count"), .value(.int(1))), .key("isFavorite")]))
        #expect(try ir(#Predicate { $0.count > 1 || $0.isFavorite })
            == .or([.compare(.greater, .key("count"), .value(.int(1))), .key("isFavorite")]))
        #expect(try ir(#Predicate { !$0.isFavorite }) == .not(.key("isFavorite")))
        #expect(try ir(#Predicate { !($0.count == 1) }) == .not(.compare(.equal, .key("count"), .value(.int(1)))))
        // Chains flatten; mixed chains keep their grouping.
        #expect(try ir(#Predicate { $0.count == 1 && $0.count == 2 && $0.count == 3 })
            == .and([1, 2, 3].map { .compare(.equal, .key("count"), .value(.int($0))) }))
        #expect(try ir(#Predicate { $0.count == 1 || $0.count == 2 || $0.count == 3 })
            == .or([1, 2, 3].map { .compare(.equal, .key("count"), .value(.int($0))) }))
        #expect(try ir(#Predicate { ($0.count == 1 || $0.count == 2) && $0.isFavorite })
            == .and([.or([.compare(.equal, .key("count"), .value(.int(1))),
                          .compare(.equal, .key("count"), .value(.int(2)))]),
                     .key("isFavorite")]))
    }

    @Test func boolKeyPathsAsConditions() throws {
        #expect(try ir(#Predicate { $0.isFavorite }) == .key("isFavorite"))
        #expect(try ir(#Predicate { $0.isFavorite == true })
            == .compare(.equal, .key("isFavorite"), .value(.bool(true))))
        #expect(try ir(#Predicate { $0.flag == true }) == .compare(.equal, .key("flag"), .value(.bool(true))))
    }

    @Test func constantsFold() throws {
        #expect(try ir(#Predicate { _ in true }) == .true)
        #expect(try ir(#Predicate { _ in false }) == .false)
        let on = true, off = false
        #expect(try ir(#Predicate { on && $0.isFavorite }) == .key("isFavorite"))
        #expect(try ir(#Predicate { off && $0.isFavorite }) == .false)
        #expect(try ir(#Predicate { on || $0.isFavorite }) == .true)
        #expect(try ir(#Predicate { off || $0.isFavorite }) == .key("isFavorite"))
        #expect(try ir(#Predicate { _ in !on }) == .false)
        #expect(try ir(#Predicate { on ? $0.isFavorite : $0.count == 1 }) == .key("isFavorite"))
        #expect(try ir(#Predicate { off ? $0.isFavorite : $0.count == 1 })
            == .compare(.equal, .key("count"), .value(.int(1))))
    }

    @Test func nilComparisons() throws {
        #expect(try ir(#Predicate { $0.genre == nil }) == .compare(.equal, .key("genre"), .value(.null)))
        #expect(try ir(#Predicate { $0.genre != nil }) == .compare(.notEqual, .key("genre"), .value(.null)))
        #expect(try ir(#Predicate { $0.endDate == nil }) == .compare(.equal, .key("endDate"), .value(.null)))
        let none: String? = nil
        #expect(try ir(#Predicate { $0.genre == none }) == .compare(.equal, .key("genre"), .value(.null)))
        #expect(try ir(#Predicate { $0.genre == "Rock" })
            == .compare(.equal, .key("genre"), .value(.string("Rock"))))
    }

    @Test func nilCoalescing() throws {
        #expect(try ir(#Predicate { ($0.genre ?? "none") == "Rock" })
            == .compare(.equal, .coalesce(.key("genre"), .value(.string("none"))), .value(.string("Rock"))))
        #expect(try ir(#Predicate { ($0.flag ?? false) })
            == .coalesce(.key("flag"), .value(.bool(false))))
    }

    @Test func arithmetic() throws {
        #expect(try ir(#Predicate { $0.count + 1 > 2 })
            == .compare(.greater, .arithmetic(.add, .key("count"), .value(.int(1))), .value(.int(2))))
        #expect(try ir(#Predicate { $0.count - 1 > 2 })
            == .compare(.greater, .arithmetic(.subtract, .key("count"), .value(.int(1))), .value(.int(2))))
        #expect(try ir(#Predicate { $0.count * 2 > 2 })
            == .compare(.greater, .arithmetic(.multiply, .key("count"), .value(.int(2))), .value(.int(2))))
        #expect(try ir(#Predicate { $0.count / 2 > 2 })
            == .compare(.greater, .arithmetic(.divide, .key("count"), .value(.int(2))), .value(.int(2))))
        #expect(try ir(#Predicate { $0.count % 2 == 0 })
            == .compare(.equal, .arithmetic(.remainder, .key("count"), .value(.int(2))), .value(.int(0))))
        #expect(try ir(#Predicate { $0.rating / 2.0 > 1.5 })
            == .compare(.greater, .arithmetic(.divide, .key("rating"), .value(.double(2))), .value(.double(1.5))))
        #expect(try ir(#Predicate { -$0.count < 0 })
            == .compare(.less, .negate(.key("count")), .value(.int(0))))
        #expect(try ir(#Predicate { $0.price * 2 >= 10 })
            == .compare(.greaterOrEqual, .arithmetic(.multiply, .key("price"), .value(.decimal(2))),
                        .value(.decimal(10))))
    }

    @Test func ternaries() throws {
        #expect(try ir(#Predicate { $0.isFavorite ? $0.count > 1 : $0.count > 5 })
            == .conditional(.key("isFavorite"),
                            .compare(.greater, .key("count"), .value(.int(1))),
                            .compare(.greater, .key("count"), .value(.int(5)))))
        #expect(try ir(#Predicate { ($0.isFavorite ? 1 : 5) < $0.count })
            == .compare(.less, .conditional(.key("isFavorite"), .value(.int(1)), .value(.int(5))), .key("count")))
    }

    @Test func stringOperations() throws {
        let text = "ar"
        #expect(try ir(#Predicate { $0.name.contains(text) })
            == .string(.contains, .key("name"), .value(.string("ar"))))
        #expect(try ir(#Predicate { $0.name.starts(with: "P") })
            == .string(.startsWith, .key("name"), .value(.string("P"))))
        #expect(try ir(#Predicate { $0.name.localizedStandardContains(text) })
            == .string(.localizedStandardContains, .key("name"), .value(.string("ar"))))
        // Foundation finds no empty string here; SQL would find it everywhere.
        let empty = ""
        #expect(try ir(#Predicate { $0.name.localizedStandardContains(empty) }) == .false)
        #expect(try ir(#Predicate { $0.name.contains(empty) }) == .string(.contains, .key("name"), .value(.string(""))))
        // A captured string searched for an attribute keeps its side.
        #expect(try ir(#Predicate { "Paris, France".contains($0.destination) })
            == .string(.contains, .value(.string("Paris, France")), .key("destination")))
        #expect(try ir(#Predicate { ($0.genre ?? "").contains("o") })
            == .string(.contains, .coalesce(.key("genre"), .value(.string(""))), .value(.string("o"))))
    }

    @Test func caseInsensitiveCompare() throws {
        let same = ComparisonResult.orderedSame, before = ComparisonResult.orderedAscending
        let after = ComparisonResult.orderedDescending
        #expect(try ir(#Predicate { $0.name.caseInsensitiveCompare("paris") == same })
            == .compare(.equal, .string(.caseInsensitiveCompare, .key("name"), .value(.string("paris"))),
                        .value(.int(0))))
        #expect(try ir(#Predicate { $0.name.caseInsensitiveCompare("paris") == before })
            == .compare(.equal, .string(.caseInsensitiveCompare, .key("name"), .value(.string("paris"))),
                        .value(.int(-1))))
        #expect(try ir(#Predicate { $0.name.caseInsensitiveCompare("paris") != after })
            == .compare(.notEqual, .string(.caseInsensitiveCompare, .key("name"), .value(.string("paris"))),
                        .value(.int(1))))
    }

    @Test func capturedSetsRenderTheSameInEveryProcess() throws {
        // A Set iterates in a per-process hash order; the IR (and so the SQL's binds) must not.
        let names: Set<String> = Set((0..<40).map { "city-\($0)" })
        let expected = QueryExpression.in(.key("destination"), names.sorted().map { .string($0) })
        #expect(try ir(#Predicate { names.contains($0.destination) }) == expected)
        let shuffled = Set(names.shuffled())
        #expect(try ir(#Predicate { shuffled.contains($0.destination) }) == expected)
    }

    @Test func capturedArrays() throws {
        let names = ["Paris", "Rome", "Paris"]
        #expect(try ir(#Predicate { names.contains($0.destination) })
            == .in(.key("destination"), [.string("Paris"), .string("Rome")]))
        let kinds: [TripKind] = [.personal]
        #expect(try ir(#Predicate { kinds.contains($0.kind) }) == .in(.key("kind"), [.string("personal")]))
        let levels: [TripLevel] = [.low, .high]
        #expect(try ir(#Predicate { levels.contains($0.level) }) == .in(.key("level"), [.int(1), .int(3)]))
        let none: [String] = []
        #expect(try ir(#Predicate { none.contains($0.name) }) == .false)
        // `[nil].contains(x)` matches nil in Swift; SQL's IN never matches NULL, so it is spelled out.
        let genres: [String?] = ["Rock", nil]
        #expect(try ir(#Predicate { genres.contains($0.genre) })
            == .or([.in(.key("genre"), [.string("Rock")]), .compare(.equal, .key("genre"), .value(.null))]))
        let onlyNil: [String?] = [nil]
        #expect(try ir(#Predicate { onlyNil.contains($0.genre) }) == .compare(.equal, .key("genre"), .value(.null)))
        // Large captured arrays stay linear (the renderer caps the list, not the translator).
        let many = Array(0..<20_000) + Array(0..<20_000)
        #expect(try ir(#Predicate { many.contains($0.count) }) == .in(.key("count"), (0..<20_000).map { .int(Int64($0)) }))
        let ids = [UUID(uuidString: "00000000-0000-0000-0000-000000000001") ?? UUID()]
        #expect(try ir(#Predicate { ids.contains($0.uuid) }) == .in(.key("uuid"), ids.map(PGValue.uuid)))
    }

    @Test func ranges() throws {
        #expect(try ir(#Predicate { (1...5).contains($0.count) })
            == .and([.compare(.greaterOrEqual, .key("count"), .value(.int(1))),
                     .compare(.lessOrEqual, .key("count"), .value(.int(5)))]))
        #expect(try ir(#Predicate { (1..<5).contains($0.count) })
            == .and([.compare(.greaterOrEqual, .key("count"), .value(.int(1))),
                     .compare(.less, .key("count"), .value(.int(5)))]))
        let start = Date(timeIntervalSince1970: 100), end = Date(timeIntervalSince1970: 200)
        let window = start...end
        #expect(try ir(#Predicate { window.contains($0.startDate) })
            == .and([.compare(.greaterOrEqual, .key("startDate"), .value(.date(start))),
                     .compare(.lessOrEqual, .key("startDate"), .value(.date(end)))]))
        let open = 1..<1_000_000_000
        #expect(try ir(#Predicate { open.contains($0.count) })
            == .and([.compare(.greaterOrEqual, .key("count"), .value(.int(1))),
                     .compare(.less, .key("count"), .value(.int(1_000_000_000)))]))
        let from = 3...
        #expect(try ir(#Predicate { from.contains($0.count) })
            == .compare(.greaterOrEqual, .key("count"), .value(.int(3))))
        let through = ...3
        #expect(try ir(#Predicate { through.contains($0.count) })
            == .compare(.lessOrEqual, .key("count"), .value(.int(3))))
        let upTo = ..<3
        #expect(try ir(#Predicate { upTo.contains($0.count) }) == .compare(.less, .key("count"), .value(.int(3))))
    }

    @Test func propertiesOfCapturedValues() throws {
        let search = ""
        let album = TripAlbum(title: "Summer")
        #expect(try ir(#Predicate { _ in search.isEmpty }) == .true)
        #expect(try ir(#Predicate { $0.name == album.title })
            == .compare(.equal, .key("name"), .value(.string("Summer"))))
        let names = ["a", "b"]
        #expect(try ir(#Predicate { $0.count < names.count }) == .compare(.less, .key("count"), .value(.int(2))))
    }

    /// The 003 seed's search predicate, as written there.
    @Test func seedSearchPredicate() throws {
        func searchPredicate(_ searchText: String) -> Predicate<TripRow> {
            #Predicate<TripRow> {
                searchText.isEmpty ? true :
                    $0.name.localizedStandardContains(searchText) ||
                    $0.destination.localizedStandardContains(searchText)
            }
        }
        #expect(try ir(searchPredicate("")) == .true)
        #expect(try ir(searchPredicate("zoe"))
            == .or([.string(.localizedStandardContains, .key("name"), .value(.string("zoe"))),
                    .string(.localizedStandardContains, .key("destination"), .value(.string("zoe")))]))
    }

    @Test func entityInitializerIsUsableWithATable() throws {
        // The table-based initializer is what the schema-based one wraps.
        let translator = PredicateTranslator<TripRow>(entityName: "Trip", keyPathName: { $0 == \TripRow.name ? "title" : nil })
        #expect(try translator.translate(#Predicate { $0.name == "x" })
            == .compare(.equal, .key("title"), .value(.string("x"))))
        #expect(translator.entityName == "Trip")
    }
}
