import Foundation
@_spi(PGModelInternals) import PGModelCore
import PGModelTestSupport
import Testing

@_spi(PGModelInternals) @testable import PGModelWire

/// The hostile inputs that reach the wire layer, each with its documented answer
/// (docs/PROTOCOL.md §7 and §8): streamed through framing, decoding, the session, validation and
/// rendering as the server does (``FuzzDriver``), with no database. Every one is answered with a code and
/// the connection goes on answering.
@Suite("Hostile wire input: every answer is a coded error and the session goes on")
struct HostileWireInputTests {
    static let ping = Array(#"{"id":99,"op":"ping"}"#.utf8) + [0x0A]

    /// The error codes the session answers `lines` with (a final ping included), checking it answered the ping.
    static func codes(_ lines: [[UInt8]], loggedIn: Bool = true, chunk: Int = 16, shortLines: Bool = false,
                      sourceLocation: SourceLocation = #_sourceLocation) -> [String] {
        let stream = lines.flatMap { $0 + [0x0A] } + ping
        let outcome = FuzzDriver.runDetailed([FuzzDriver.control(chunk: chunk, loggedIn: loggedIn, shortLines: shortLines)] + stream)
        #expect(outcome.violations == [], sourceLocation: sourceLocation)
        #expect(outcome.lines == lines.count + 1 - outcome.errors.filter { $0 == "line_too_long" }.count,
                "every line was framed", sourceLocation: sourceLocation)
        return outcome.errors
    }

    @Test("invalid UTF-8 anywhere in a line is malformed_message, and the next line is served")
    func invalidUTF8() {
        let lines: [[UInt8]] = [
            [0xFF, 0xFE, 0xFD],
            line(#"{"id":1,"op":"pi"#) + [0xC3, 0x28] + line(#"ng"}"#),              // an invalid two-byte sequence in a value
            line(#"{"id":"#) + [0x22, 0xC0, 0xAF, 0x22] + line(#","op":"ping"}"#),     // an over-long encoding of "/"
            line(#"{"id":1,"op":"fetch","entity":""#) + [0xED, 0xA0, 0x80] + line(#""}"#),  // a UTF-16 surrogate
            line(#"{"id":1,"op":"ping","x":""#) + [0xE2, 0x82],                            // cut inside a character
        ]
        #expect(Self.codes(lines) == Array(repeating: "malformed_message", count: lines.count))
    }

    @Test("JSON nested past the parser's 512 levels is malformed_message; a predicate past 128 is invalid_field")
    func deepNesting() throws {
        let deepArray = line(#"{"id":1,"op":"ping","x":"#) + Array(repeating: UInt8(ascii: "["), count: 100_000)
            + Array(repeating: UInt8(ascii: "]"), count: 100_000) + line("}")
        let deepPredicate = line(#"{"id":2,"op":"fetch","entity":"Trip","where":"# + String(repeating: #"{"not":"#, count: 200)
            + #"{"value":true}"# + String(repeating: "}", count: 200) + "}")
        #expect(Self.codes([deepArray, deepPredicate]) == ["malformed_message", "invalid_field"])

        // An IR built in-process (the direct store) is held to the same depth before the renderer recurses.
        var expression = QueryExpression.true
        for _ in 0..<5_000 { expression = .not(expression) }
        let error = #expect(throws: PGModelError.self) {
            try expression.validate(against: FuzzSchema.schema, entity: "Trip")
        }
        #expect(error?.code == .invalidField)
    }

    @Test("huge arrays: captured arrays, ids, operands and binds beyond the limits are coded errors")
    func hugeArrays() {
        let many = RequestLimits.maximumListCount + 1
        let numbers = (0..<many).map(String.init).joined(separator: ",")
        let id = #""0193a7c4-5e6f-7a8b-9c0d-1e2f3a4b5c6d""#
        let leaves = Array(repeating: #"{"value":true}"#, count: many).joined(separator: ",")
        let third = (0..<25_000).map(String.init).joined(separator: ",")
        let binds = (0..<3).map { _ in #"{"in":{"lhs":{"key":"distance"},"values":[\#(third)]}}"# }.joined(separator: ",")
        let lines = [
            line(#"{"id":1,"op":"fetch","entity":"Trip","where":{"in":{"lhs":{"key":"distance"},"values":[\#(numbers)]}}}"#),
            // 30,001 ids do not fit a 1 MiB line; 20,000 do, and pass.
            line(#"{"id":2,"op":"ids","entity":"Trip","ids":[\#(Array(repeating: id, count: 20_000).joined(separator: ","))]}"#),
            line(#"{"id":3,"op":"count","entity":"Trip","where":{"and":[\#(leaves)]}}"#),
            line(#"{"id":4,"op":"count","entity":"Trip","where":{"or":[\#(binds)]}}"#),
            line(#"{"id":5,"op":"history","history":{"where":{"authorIn":[\#(Array(repeating: #""a""#, count: many).joined(separator: ","))]}}}"#),
        ]
        #expect(Self.codes(lines) == ["unsupported_predicate", "invalid_field", "invalid_field", "invalid_field"])

        // Built in-process, a list can be longer than a line: the same limit holds.
        let ids = Array(repeating: WireTest.tripID, count: many)
        let error = #expect(throws: PGModelError.self) {
            try FetchRequest(entity: "Trip", identifiers: ids).validate(against: FuzzSchema.schema)
        }
        #expect(error?.code == .invalidField)
        #expect(error?.keyPath == "ids")
    }

    @Test("unknown ops are unknown_op naming the op; the session goes on")
    func unknownOps() {
        let lines = ["nonsense", "FETCH", "", "drop table", String(repeating: "x", count: 5_000)].map {
            line(#"{"id":1,"op":"\#($0)"}"#)
        }
        #expect(Self.codes(lines) == Array(repeating: "unknown_op", count: lines.count))
    }

    @Test("every op but hello, ping and bye is not_authenticated before a login", arguments: [
        "register", "fetch", "count", "ids", "save-insert", "history", "deleteHistory", "subscribe", "unsubscribe",
        "share", "unshare", "shares",
    ])
    func beforeLogin(seed: String) throws {
        // The seeds are valid requests: logged in, each is rendered; before a login, each is refused unread.
        let request = try #require(Self.seed(seed))
        let outcome = FuzzDriver.runDetailed([FuzzDriver.control(loggedIn: false)] + request + Self.ping)
        #expect(outcome.violations == [])
        #expect(outcome.errors == ["not_authenticated"])
        #expect(outcome.rendered == 0)
    }

    @Test("bytes one at a time (slow-loris) are framed and answered exactly as one read", arguments: [1, 3, 16])
    func slowLoris(chunk: Int) throws {
        let stream = try #require(Self.seed("expressions")) + line(#"{"id":2,"op":"nonsense"}"#) + [0x0A]
        let whole = FuzzDriver.runDetailed([FuzzDriver.control(chunk: 16)] + stream)
        let trickled = FuzzDriver.runDetailed([FuzzDriver.control(chunk: chunk)] + stream)
        #expect(trickled.violations == [])
        #expect(trickled.lines == 2)
        #expect(trickled.errors == whole.errors)
        #expect(trickled.errors == ["unknown_op"])
        #expect(trickled.rendered == whole.rendered && whole.rendered > 0)
    }

    @Test("an over-long line is line_too_long once, and the next line is served")
    func oversizedLine() {
        let long = line(#"{"id":1,"op":"fetch","entity":""# + String(repeating: "x", count: 1_000) + #""}"#)
        #expect(Self.codes([long, line(#"{"id":2,"op":"count","entity":"Stay"}"#)], chunk: 5, shortLines: true) == ["line_too_long"])
    }

    @Test("numbers out of range and values PostgreSQL cannot take are invalid_field or type_mismatch")
    func numericRanges() {
        let row = #"{"entity":"Trip","id":"0193a7c4-5e6f-7a8b-9c0d-1e2f3a4b5c6d","values":{"name":"x","#
        let lines = [
            line(#"{"id":1,"op":"fetch","entity":"Trip","limit":1e300}"#),
            line(#"{"id":2,"op":"fetch","entity":"Trip","offset":-1}"#),
            line(#"{"id":3,"op":"history","history":{"limit":-5}}"#),
            line(#"{"id":4,"op":"save","inserts":[\#(row)"stars":70000}}]}"#),
            line(#"{"id":5,"op":"save","inserts":[\#(row)"budget":{"decimal":"NaN"}}}]}"#),
            line(#"{"id":6,"op":"save","updates":[\#(row)"website":"a\u0000b"}}]}"#),
            line(#"{"id":7,"op":"fetch","entity":"Trip","where":{"eq":[{"key":"name"},{"value":"\u0000"}]}}"#),
            line(#"{"id":8,"op":"fetch","entity":"Trip","where":{"lt":[{"key":"startDate"},{"value":{"date":"2024-13-45T99:00:00Z"}}]}}"#),
            line(#"{"id":9,"op":"history","history":{"where":{"token":{"op":"gt","value":18446744073709551616}}}}"#),
        ]
        #expect(Self.codes(lines) == ["invalid_field", "invalid_field", "invalid_field", "type_mismatch", "invalid_field",
                                       "invalid_field", "invalid_field", "invalid_field", "invalid_field"])
    }

    @Test("key paths, casts, document fields and relationships the schema lacks are coded errors naming them")
    func schemaValidation() throws {
        let schema = FuzzSchema.schema
        func code(_ request: FetchRequest) -> PGModelError.Code? {
            #expect(throws: PGModelError.self) { try request.validate(against: schema) }
            do { try request.validate(against: schema) } catch let error as PGModelError { return error.code } catch {}
            return nil
        }
        func filter(_ e: QueryExpression) -> FetchRequest { FetchRequest(entity: "Trip", predicate: e) }
        let one = QueryExpression.value(.int(1))
        #expect(code(filter(.compare(.equal, .key(""), one))) == .unknownAttribute)
        #expect(code(filter(.compare(.equal, .key("owner..name"), one))) == .unknownAttribute)
        #expect(code(filter(.compare(.equal, .key(Array(repeating: "owner", count: 40).joined(separator: ".")), one))) == .invalidField)
        #expect(code(filter(.compare(.equal, .key("stays.hotel"), one))) == .unsupportedPredicate)
        #expect(code(filter(.compare(.equal, .key("name.first"), one))) == .unsupportedPredicate)
        #expect(code(filter(.compare(.equal, .key("blob"), one))) == .unsupportedPredicate)
        #expect(code(filter(.compare(.equal, .field(.key("name"), ["a"], .string), one))) == .unsupportedPredicate)
        #expect(code(filter(.compare(.equal, .field(.key("location"), ["a"], .date), one))) == .unsupportedPredicate)
        #expect(code(filter(.compare(.equal, .field(.value(.null), ["a"], .string), one))) == .unsupportedPredicate)
        #expect(code(filter(.arrayContains(.key("name"), one))) == .unsupportedPredicate)
        #expect(code(filter(.aggregate(Aggregate(.count, relationship: "owner")))) == .unsupportedPredicate)
        #expect(code(filter(.aggregate(Aggregate(.sum, relationship: "stays")))) == .unsupportedPredicate)
        #expect(code(filter(.aggregate(Aggregate(.any, relationship: "nope")))) == .unknownAttribute)
        #expect(code(filter(.aggregate(Aggregate(.any, relationship: "stays", predicate: .key("nope"))))) == .unknownAttribute)
        #expect(code(filter(.isKind("Nope"))) == .unknownEntity)
        #expect(code(FetchRequest(entity: "Nope")) == .unknownEntity)
        #expect(code(FetchRequest(entity: "Trip", sort: [SortKey("..", field: .double)])) == .unsupportedSort)
        #expect(code(FetchRequest(entity: "Trip", sort: [SortKey("name.x", field: .double)])) == .unsupportedSort)
        #expect(code(FetchRequest(entity: "Trip", sort: [SortKey("stays")])) == .unsupportedSort)
        #expect(code(FetchRequest(entity: "Trip", sort: Array(repeating: SortKey("name"), count: 65))) == .invalidField)
        #expect(code(FetchRequest(entity: "Trip", properties: ["nope"])) == .unknownAttribute)
        #expect(code(FetchRequest(entity: "Stay", related: RelatedScope(entity: "Trip", relationship: "owner", ids: []))) == .invalidField)
        #expect(code(FetchRequest(entity: "Stay", related: RelatedScope(entity: "Trip", relationship: "nope", ids: []))) == .unknownAttribute)

        // What every seed of the corpus asks is valid: the checks refuse nothing the renderer handles.
        #expect(throws: Never.self) {
            try FetchRequest(entity: "Trip", predicate: .compare(.equal, .key("visa.trip.owner.name"), one),
                             sort: [SortKey("location.a.b", field: .int64), SortKey("client"), SortKey("owner")]).validate(against: schema)
        }
    }

    @Test("saves naming what the schema lacks are coded errors before any SQL")
    func saveValidation() {
        let schema = FuzzSchema.schema
        let id = WireTest.tripID
        func code(_ save: SaveRequest) -> PGModelError.Code? {
            do { try save.validate(against: schema) } catch let error as PGModelError { return error.code } catch {}
            return nil
        }
        func insert(_ values: [String: PGValue], entity: String = "Trip") -> SaveRequest {
            SaveRequest(inserts: [RowValues(entity: entity, id: id, values: values)])
        }
        #expect(code(insert(["name": .string("x")])) == nil)
        #expect(code(insert(["nope": .string("x")])) == .unknownAttribute)
        #expect(code(insert(["name": .null])) == .typeMismatch)
        #expect(code(insert(["perdiem": .double(.infinity)])) == .invalidField)
        #expect(code(insert(["startDate": .date(Date(timeIntervalSince1970: 1e15))])) == .invalidField)
        #expect(code(insert(["owner": .string("not a uuid")])) == .typeMismatch)
        #expect(code(insert(["stays": .null])) == .invalidField)
        #expect(code(insert([:], entity: "Nope")) == .unknownEntity)
        #expect(code(SaveRequest(deletes: [RowReference(entity: "Nope", id: id)])) == .unknownEntity)
        #expect(code(SaveRequest(links: [LinkChange(entity: "Trip", relationship: "owner", source: id, destination: id, isAdded: true)])) == .invalidField)
        #expect(code(SaveRequest(links: [LinkChange(entity: "Trip", relationship: "nope", source: id, destination: id, isAdded: true)])) == .unknownAttribute)
        #expect(code(SaveRequest(batchDeletes: [FetchRequest(entity: "Trip", sort: [SortKey(".", field: .string)])])) == .unsupportedSort)
        #expect(code(SaveRequest(shares: [ShareChange(record: RowReference(entity: "Trip", id: id), user: "", permission: .readOnly)])) == .invalidField)
        #expect(code(SaveRequest(author: "a\u{0}b")) == .invalidField)
    }

    static func seed(_ name: String) -> [UInt8]? {
        guard let url = Bundle.module.url(forResource: "FuzzCorpus", withExtension: nil)?
            .appendingPathComponent("seeds").appendingPathComponent(name),
            let data = try? Data(contentsOf: url) else { return nil }
        return Array(data.dropFirst())   // without its control byte
    }
}

/// The bytes of a request line, without its newline.
private func line(_ text: String) -> [UInt8] { Array(text.utf8) }
