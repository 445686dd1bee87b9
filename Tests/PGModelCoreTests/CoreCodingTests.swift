import Foundation
@_spi(PGModelInternals) import PGModelCore
import Testing

/// The IR and values travel as JSON between client and server; these pin their encoding.
@Suite("Core JSON coding")
struct CoreCodingTests {
    func json<T: Encodable>(_ value: T) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return String(decoding: try encoder.encode(value), as: UTF8.self)
    }

    @Test func positionalRowValuesReadAndCodeAsTheirDictionary() throws {
        let id = UUID(uuidString: "0193A1B2-0000-7000-8000-000000000002")!
        let keys = RowKeys(["name", "note", "score"])
        let positional = RowValues(entity: "Trip", id: id, keys: keys, values: [.string("Zoë 🚀"), .null, .double(-.greatestFiniteMagnitude)])
        let named = RowValues(entity: "Trip", id: id, values: ["name": .string("Zoë 🚀"), "note": .null, "score": .double(-.greatestFiniteMagnitude)])
        #expect(positional["name"] == .string("Zoë 🚀"))
        #expect(positional["note"] == .null)
        #expect(positional["missing"] == nil)
        #expect(positional.values == named.values)
        #expect(positional == named && named == positional)
        #expect(positional.hashValue == named.hashValue)
        #expect(positional.positionalValues?.keys === keys)
        #expect(named.positionalValues == nil)
        #expect(try json(positional) == json(named))
        #expect(try JSONDecoder().decode(RowValues.self, from: JSONEncoder().encode(positional)) == named)
        var seen: [String: PGValue] = [:]
        positional.forEachValue { seen[$0] = $1 }
        #expect(seen == named.values)
        // Another value: a row kept by name from then on.
        var changed = positional
        changed.values["note"] = .string("n")
        #expect(changed["note"] == .string("n") && changed["name"] == .string("Zoë 🚀"))
        #expect(changed != positional)
        #expect(changed.positionalValues == nil)
        // Counts that differ keep what pairs up, by name.
        let short = RowValues(entity: "Trip", id: id, keys: keys, values: [.string("a")])
        #expect(short.values == ["name": .string("a")])
        #expect(RowValues(entity: "Trip", id: id, keys: RowKeys([]), values: []).isEmpty)
    }

    @Test func briefExampleFetchRequestDecodes() throws {
        let line = #"{"entity":"Trip","where":{"eq":[{"key":"destination"},{"value":"Paris"}]},"sort":[{"key":"startDate"}],"limit":10}"#
        let request = try JSONDecoder().decode(FetchRequest.self, from: Data(line.utf8))
        #expect(request == FetchRequest(entity: "Trip", predicate: .compare(.equal, .key("destination"), .value(.string("Paris"))),
                                        sort: [SortKey("startDate")], limit: 10))
        #expect(try json(request) == #"{"entity":"Trip","limit":10,"sort":[{"key":"startDate"}],"where":{"eq":[{"key":"destination"},{"value":"Paris"}]}}"#)
    }

    @Test(arguments: [
        PGValue.null, .bool(true), .int(-42), .double(2.5), .double(3), .string("Zoë"),
        .decimal(Decimal(string: "12.50")!), .date(Date(timeIntervalSince1970: 1_700_000_000.25)),
        .uuid(UUID(uuidString: "0193A1B2-0000-7000-8000-000000000001")!), .data(Data([0, 255])),
    ])
    func valuesRoundTrip(value: PGValue) throws {
        let data = try JSONEncoder().encode([value])
        #expect(try JSONDecoder().decode([PGValue].self, from: data) == [value])
    }

    @Test func taggedValuesAreReadable() throws {
        #expect(try json(PGValue.uuid(UUID(uuidString: "0193A1B2-0000-7000-8000-000000000001")!)) == #"{"uuid":"0193a1b2-0000-7000-8000-000000000001"}"#)
        #expect(try json(PGValue.double(3)) == #"{"double":3}"#)
        #expect(try json(PGValue.decimal(Decimal(string: "12.5")!)) == #"{"decimal":"12.5"}"#)
    }

    @Test func everyExpressionRoundTrips() throws {
        let e: QueryExpression = .and([
            .or([.not(.key("a")), .compare(.lessOrEqual, .arithmetic(.remainder, .key("n"), .value(.int(3))), .negate(.value(.int(1))))]),
            .string(.localizedStandardContains, .key("s"), .value(.string("x"))),
            .in(.key("s"), [.string("a"), .null]),
            .conditional(.key("b"), .true, .false),
            .compare(.equal, .coalesce(.key("o"), .value(.string("d"))), .value(.string("d"))),
        ])
        let data = try JSONEncoder().encode(e)
        #expect(try JSONDecoder().decode(QueryExpression.self, from: data) == e)
    }

    @Test func malformedExpressionsAreRejected() {
        for bad in [#"{"eq":[{"key":"a"}]}"#, #"{"bogus":1}"#, #"{"key":"a","value":1}"#, #"{"if":[]}"#] {
            #expect(throws: DecodingError.self) { try JSONDecoder().decode(QueryExpression.self, from: Data(bad.utf8)) }
        }
    }

    @Test func coercionFollowsColumnTypes() {
        #expect(AttributeType.double.coerce(.int(3)) == .double(3))
        #expect(AttributeType.int16.coerce(.int(70_000)) == nil)
        #expect(AttributeType.uuid.coerce(.string("nope")) == nil)
        #expect(AttributeType.string.coerce(.int(1)) == nil)
        #expect(AttributeType.decimal.coerce(.string("1.25")) == .decimal(Decimal(string: "1.25")!))
    }

    @Test func uuidV7IsTimeOrderedAndVersioned() {
        let a = UUID.v7(now: Date(timeIntervalSince1970: 1_000))
        let b = UUID.v7(now: Date(timeIntervalSince1970: 2_000))
        #expect(a.uuidString < b.uuidString)
        #expect(Array(a.uuidString)[14] == "7")
    }
}
