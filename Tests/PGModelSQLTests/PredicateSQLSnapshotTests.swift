import Foundation
@_spi(PGModelInternals) import PGModelCore
@_spi(PGModelInternals) import PGModelSQL
import Testing

/// Snapshot tests of the predicate compiler: Query IR → exact SQL text and binds, for every operator. The IR
/// here is what `PredicateTranslator` produces for the `#Predicate` in each comment. No database.
@Suite("Predicate SQL snapshots")
struct PredicateSQLSnapshotTests {
    static let schema = SchemaDescription(entities: [
        EntityDescription(name: "Trip", attributes: [
            AttributeDescription(name: "name", type: .string),
            AttributeDescription(name: "destination", type: .string),
            AttributeDescription(name: "genre", type: .string, isOptional: true),
            AttributeDescription(name: "isFavorite", type: .bool),
            AttributeDescription(name: "flag", type: .bool, isOptional: true),
            AttributeDescription(name: "count", type: .int64),
            AttributeDescription(name: "rating", type: .double),
            AttributeDescription(name: "price", type: .decimal),
            AttributeDescription(name: "startDate", type: .date),
            AttributeDescription(name: "endDate", type: .date, isOptional: true),
            AttributeDescription(name: "uuid", type: .uuid),
            AttributeDescription(name: "blob", type: .data),
            AttributeDescription(name: "website", type: .url),
            AttributeDescription(name: "kind", type: .string),
        ]),
    ])

    func render(_ expression: QueryExpression) throws -> SQLStatement {
        try SQLRenderer(schema: Self.schema, schemaName: "public").renderPredicate(expression, entity: "Trip")
    }

    func expectSQL(_ expression: QueryExpression, _ sql: String, _ binds: [PGValue] = [],
                   sourceLocation: SourceLocation = #_sourceLocation) throws {
        let statement = try render(expression)
        #expect(statement.sql == sql, sourceLocation: sourceLocation)
        #expect(statement.binds == binds, sourceLocation: sourceLocation)
    }

    // MARK: comparisons

    @Test func equality() throws {
        // $0.destination == "Paris"
        try expectSQL(.compare(.equal, .key("destination"), .value(.string("Paris"))),
                      #"("destination" = $1)"#, [.string("Paris")])
        // $0.destination != "Paris"
        try expectSQL(.compare(.notEqual, .key("destination"), .value(.string("Paris"))),
                      #"("destination" <> $1)"#, [.string("Paris")])
        // "Paris" == $0.destination
        try expectSQL(.compare(.equal, .value(.string("Paris")), .key("destination")),
                      #"($1 = "destination")"#, [.string("Paris")])
        // $0.name == $0.destination
        try expectSQL(.compare(.equal, .key("name"), .key("destination")), #"("name" = "destination")"#)
    }

    @Test func equalityOnOptionalsTreatsNilAsAValue() throws {
        // $0.genre == "Rock": nil == "Rock" is false, never unknown.
        try expectSQL(.compare(.equal, .key("genre"), .value(.string("Rock"))),
                      #"("genre" IS NOT DISTINCT FROM $1)"#, [.string("Rock")])
        // $0.genre != "Rock": nil != "Rock" is true.
        try expectSQL(.compare(.notEqual, .key("genre"), .value(.string("Rock"))),
                      #"("genre" IS DISTINCT FROM $1)"#, [.string("Rock")])
        // $0.flag == true
        try expectSQL(.compare(.equal, .key("flag"), .value(.bool(true))),
                      #"("flag" IS NOT DISTINCT FROM $1)"#, [.bool(true)])
        // $0.genre == $0.name
        try expectSQL(.compare(.equal, .key("genre"), .key("name")), #"("genre" IS NOT DISTINCT FROM "name")"#)
    }

    @Test func nilComparisons() throws {
        // $0.genre == nil
        try expectSQL(.compare(.equal, .key("genre"), .value(.null)), #"("genre" IS NULL)"#)
        // $0.genre != nil
        try expectSQL(.compare(.notEqual, .key("genre"), .value(.null)), #"("genre" IS NOT NULL)"#)
        // nil == $0.endDate
        try expectSQL(.compare(.equal, .value(.null), .key("endDate")), #"("end_date" IS NULL)"#)
        try expectSQL(.value(.null), "NULL")
    }

    @Test func orderingComparisons() throws {
        // $0.count < 3, <= 3, > 3, >= 3
        try expectSQL(.compare(.less, .key("count"), .value(.int(3))), #"("count" < $1)"#, [.int(3)])
        try expectSQL(.compare(.lessOrEqual, .key("count"), .value(.int(3))), #"("count" <= $1)"#, [.int(3)])
        try expectSQL(.compare(.greater, .key("count"), .value(.int(3))), #"("count" > $1)"#, [.int(3)])
        try expectSQL(.compare(.greaterOrEqual, .key("count"), .value(.int(3))), #"("count" >= $1)"#, [.int(3)])
        // $0.startDate < date
        let date = Date(timeIntervalSince1970: 1_700_000_000)
        try expectSQL(.compare(.less, .key("startDate"), .value(.date(date))), #"("start_date" < $1)"#, [.date(date)])
    }

    // MARK: logic

    @Test func logic() throws {
        // $0.count > 1 && $0.isFavorite
        try expectSQL(.and([.compare(.greater, .key("count"), .value(.int(1))), .key("isFavorite")]),
                      #"(("count" > $1) AND "is_favorite")"#, [.int(1)])
        // $0.count > 1 || $0.isFavorite || $0.genre == nil
        try expectSQL(.or([.compare(.greater, .key("count"), .value(.int(1))), .key("isFavorite"),
                           .compare(.equal, .key("genre"), .value(.null))]),
                      #"(("count" > $1) OR "is_favorite" OR ("genre" IS NULL))"#, [.int(1)])
        // !$0.isFavorite
        try expectSQL(.not(.key("isFavorite")), #"(NOT "is_favorite")"#)
        // ($0.count == 1 || $0.count == 2) && !$0.isFavorite
        try expectSQL(.and([.or([.compare(.equal, .key("count"), .value(.int(1))),
                                 .compare(.equal, .key("count"), .value(.int(2)))]),
                            .not(.key("isFavorite"))]),
                      #"((("count" = $1) OR ("count" = $2)) AND (NOT "is_favorite"))"#, [.int(1), .int(2)])
        try expectSQL(.and([]), "TRUE")
        try expectSQL(.or([]), "FALSE")
        // #Predicate { _ in true }
        try expectSQL(.true, "$1", [.bool(true)])
    }

    // MARK: arithmetic

    @Test func arithmetic() throws {
        let cases: [(ArithmeticOperator, String)] = [(.add, "+"), (.subtract, "-"), (.multiply, "*"),
                                                      (.divide, "/"), (.remainder, "%")]
        for (op, symbol) in cases {
            // $0.count + 1 > 2, …
            try expectSQL(.compare(.greater, .arithmetic(op, .key("count"), .value(.int(1))), .value(.int(2))),
                          "((\"count\" \(symbol) $1) > $2)", [.int(1), .int(2)])
        }
        // $0.rating / 2.0 > 1.5
        try expectSQL(.compare(.greater, .arithmetic(.divide, .key("rating"), .value(.double(2))), .value(.double(1.5))),
                      #"(("rating" / $1) > $2)"#, [.double(2), .double(1.5)])
        // $0.price * 2 >= 10
        try expectSQL(.compare(.greaterOrEqual, .arithmetic(.multiply, .key("price"), .value(.decimal(2))),
                               .value(.decimal(10))),
                      #"(("price" * $1) >= $2)"#, [.decimal(2), .decimal(10)])
        // -$0.count < 0
        try expectSQL(.compare(.less, .negate(.key("count")), .value(.int(0))), #"((- "count") < $1)"#, [.int(0)])
    }

    // MARK: conditionals and nil-coalescing

    @Test func conditionals() throws {
        // $0.isFavorite ? $0.count > 1 : $0.count > 5
        try expectSQL(.conditional(.key("isFavorite"), .compare(.greater, .key("count"), .value(.int(1))),
                                   .compare(.greater, .key("count"), .value(.int(5)))),
                      #"(CASE WHEN "is_favorite" THEN ("count" > $1) ELSE ("count" > $2) END)"#, [.int(1), .int(5)])
        // ($0.isFavorite ? 1 : 5) < $0.count
        try expectSQL(.compare(.less, .conditional(.key("isFavorite"), .value(.int(1)), .value(.int(5))), .key("count")),
                      #"((CASE WHEN "is_favorite" THEN $1 ELSE $2 END) < "count")"#, [.int(1), .int(5)])
    }

    @Test func nilCoalescing() throws {
        // ($0.genre ?? "none") == "Rock": the coalesced value is never NULL, so plain `=`.
        try expectSQL(.compare(.equal, .coalesce(.key("genre"), .value(.string("none"))), .value(.string("Rock"))),
                      #"(COALESCE("genre", $1) = $2)"#, [.string("none"), .string("Rock")])
        // $0.flag ?? false
        try expectSQL(.coalesce(.key("flag"), .value(.bool(false))), #"COALESCE("flag", $1)"#, [.bool(false)])
        // ($0.endDate ?? $0.startDate) >= date
        let date = Date(timeIntervalSince1970: 0)
        try expectSQL(.compare(.greaterOrEqual, .coalesce(.key("endDate"), .key("startDate")), .value(.date(date))),
                      #"(COALESCE("end_date", "start_date") >= $1)"#, [.date(date)])
    }

    // MARK: strings

    @Test func stringOperations() throws {
        // $0.name.contains("ar"): strpos, so % and _ in the needle are not wildcards.
        try expectSQL(.string(.contains, .key("name"), .value(.string("a%_r"))),
                      #"(strpos("name", $1) > 0)"#, [.string("a%_r")])
        // $0.name.starts(with: "P")
        try expectSQL(.string(.startsWith, .key("name"), .value(.string("P"))),
                      #"starts_with("name", $1)"#, [.string("P")])
        // $0.name.localizedStandardContains("zoe")
        try expectSQL(.string(.localizedStandardContains, .key("name"), .value(.string("zoe"))),
                      #"(strpos(pgmodel.fold("name"), pgmodel.fold($1)) > 0)"#, [.string("zoe")])
        // "Paris, France".contains($0.destination)
        try expectSQL(.string(.contains, .value(.string("Paris, France")), .key("destination")),
                      #"(strpos($1, "destination") > 0)"#, [.string("Paris, France")])
        // ($0.genre ?? "").contains("o")
        try expectSQL(.string(.contains, .coalesce(.key("genre"), .value(.string(""))), .value(.string("o"))),
                      #"(strpos(COALESCE("genre", $1), $2) > 0)"#, [.string(""), .string("o")])
    }

    @Test func caseInsensitiveCompare() throws {
        // $0.name.caseInsensitiveCompare("paris") == ComparisonResult.orderedSame
        let compare = #"(CASE WHEN lower("name") COLLATE "C" < lower($1) COLLATE "C" THEN -1 WHEN lower("name") COLLATE "C" > lower($1) COLLATE "C" THEN 1 ELSE 0 END)"#
        try expectSQL(.compare(.equal, .string(.caseInsensitiveCompare, .key("name"), .value(.string("paris"))),
                               .value(.int(0))),
                      "(\(compare) = $2)", [.string("paris"), .int(0)])
        // … != ComparisonResult.orderedDescending
        try expectSQL(.compare(.notEqual, .string(.caseInsensitiveCompare, .key("name"), .value(.string("paris"))),
                               .value(.int(1))),
                      "(\(compare) <> $2)", [.string("paris"), .int(1)])
    }

    /// The 003 seed's search predicate for a non-empty search text.
    @Test func seedSearchPredicate() throws {
        try expectSQL(.or([.string(.localizedStandardContains, .key("name"), .value(.string("zoe"))),
                           .string(.localizedStandardContains, .key("destination"), .value(.string("zoe")))]),
                      #"((strpos(pgmodel.fold("name"), pgmodel.fold($1)) > 0) OR (strpos(pgmodel.fold("destination"), pgmodel.fold($2)) > 0))"#,
                      [.string("zoe"), .string("zoe")])
    }

    // MARK: membership and ranges

    @Test func capturedArrays() throws {
        // ["Paris", "Rome"].contains($0.destination)
        try expectSQL(.in(.key("destination"), [.string("Paris"), .string("Rome")]),
                      #"COALESCE("destination" IN ($1, $2), FALSE)"#, [.string("Paris"), .string("Rome")])
        // ["Rock", nil].contains($0.genre), as the translator spells it
        try expectSQL(.or([.in(.key("genre"), [.string("Rock")]), .compare(.equal, .key("genre"), .value(.null))]),
                      #"(COALESCE("genre" IN ($1), FALSE) OR ("genre" IS NULL))"#, [.string("Rock")])
        // The same, if an IR producer leaves nil in the list.
        try expectSQL(.in(.key("genre"), [.string("Rock"), .null]),
                      #"(COALESCE("genre" IN ($1), FALSE) OR ("genre" IS NULL))"#, [.string("Rock")])
        try expectSQL(.in(.key("genre"), []), "FALSE")
        // !names.contains($0.destination): the COALESCE keeps NOT from turning unknown into "excluded".
        try expectSQL(.not(.in(.key("genre"), [.string("Rock")])),
                      #"(NOT COALESCE("genre" IN ($1), FALSE))"#, [.string("Rock")])
    }

    @Test func ranges() throws {
        // (1...5).contains($0.count)
        try expectSQL(.and([.compare(.greaterOrEqual, .key("count"), .value(.int(1))),
                            .compare(.lessOrEqual, .key("count"), .value(.int(5)))]),
                      #"(("count" >= $1) AND ("count" <= $2))"#, [.int(1), .int(5)])
    }

    // MARK: values

    @Test func everyValueKindIsABind() throws {
        let date = Date(timeIntervalSince1970: 1_700_000_000.5)
        let uuid = UUID(uuidString: "0193A1B2-0000-7000-8000-000000000001") ?? UUID()
        let data = Data([0, 1, 255])
        let price = Decimal(string: "12.50", locale: Locale(identifier: "en_US_POSIX")) ?? 0
        let cases: [(String, String, PGValue)] = [
            ("name", "name", .string("O'Brien\"; DROP TABLE trip; --")),
            ("isFavorite", "is_favorite", .bool(false)),
            ("count", "count", .int(.min)),
            ("rating", "rating", .double(-0.5)),
            ("price", "price", .decimal(price)),
            ("startDate", "start_date", .date(date)),
            ("uuid", "uuid", .uuid(uuid)),
            ("blob", "blob", .data(data)),
            ("website", "website", .string("https://example.com/?q=a&b=c")),
            ("kind", "kind", .string("personal")),
        ]
        for (key, column, value) in cases {
            try expectSQL(.compare(.equal, .key(key), .value(value)), "(\"\(column)\" = $1)", [value])
        }
    }

    @Test func bindsAreNumberedInTextOrder() throws {
        let statement = try render(.and([
            .compare(.equal, .key("name"), .value(.string("a"))),
            .or([.compare(.greater, .key("count"), .value(.int(1))), .string(.startsWith, .key("destination"), .value(.string("b")))]),
            .in(.key("kind"), [.string("c"), .string("d")]),
        ]))
        #expect(statement.sql
            == #"(("name" = $1) AND (("count" > $2) OR starts_with("destination", $3)) AND COALESCE("kind" IN ($4, $5), FALSE))"#)
        #expect(statement.binds == [.string("a"), .int(1), .string("b"), .string("c"), .string("d")])
    }

    // MARK: errors

    @Test func unknownAttributesAndEntitiesThrow() throws {
        let attribute = #expect(throws: PGModelError.self) {
            try render(.compare(.equal, .key("nope"), .value(.int(1))))
        }
        #expect(attribute?.code == .unknownAttribute)
        let renderer = try SQLRenderer(schema: Self.schema, schemaName: "public")
        let entity = #expect(throws: PGModelError.self) { try renderer.renderPredicate(.true, entity: "Nope") }
        #expect(entity?.code == .unknownEntity)
    }

    @Test func oversizedArraysThrow() throws {
        let values = (0...SQLRenderer.maximumInListCount).map { PGValue.int(Int64($0)) }
        let error = #expect(throws: PGModelError.self) { try render(.in(.key("count"), values)) }
        #expect(error?.code == .unsupportedPredicate)
    }
}
