import Foundation
@_spi(PGModelInternals) import PGModelCore
import Testing

@_spi(PGModelInternals) @testable import PGModelWire

/// A `save` written and read by hand (the service's bulk saves) must mean what `JSONEncoder` and
/// `JSONDecoder` make of it: where the hand reader answers, its request is the general decoder's; where in
/// doubt, it declines.
@Suite("Request fast coders: saves")
struct RequestFastSaveTests {
    typealias Generator = RequestFastDecoderTests.Generator

    static let texts = ["plain", "", "with \"quote\" and \\ and \n", "ünïcode \u{1F600}", "a/b", "tab\tand\u{1}control", "line\u{2028}sep"]

    static func value(_ g: inout Generator) -> PGValue {
        switch g.next(12) {
        case 0: return .null
        case 1: return .bool(g.next(2) == 0)
        case 2: return .int(Int64(g.next(2_000_000)) - 1_000_000)
        case 3: return .int([Int64.min, Int64.max, 0][g.next(3)])
        case 4: return .string(texts[g.next(texts.count)])
        case 5: return .uuid(UUID())
        case 6: return .date(Date(timeIntervalSince1970: Double(g.next(2_000_000_000)) + 0.125))
        case 7: return .double(Double(g.next(100_000)) / 8 - 5_000)                 // whole ones are tagged
        case 8: return .double([0.1, -2.5e-7, 1e20, 1.7976931348623157e308, -0.0, 1e15 + 0.5][g.next(6)])
        case 9: return .decimal(Decimal(string: ["12.50", "-0.001", "123456789012345678901234567890"][g.next(3)]) ?? 0)
        case 10: return .data(Data((0..<g.next(20)).map { UInt8($0 * 37 % 256) }))
        default: return .string(RequestFastDecoderTests.names[g.next(RequestFastDecoderTests.names.count)])
        }
    }

    static func row(_ g: inout Generator) -> RowValues {
        var values: [String: PGValue] = [:]
        for _ in 0..<g.next(8) { values[RequestFastDecoderTests.names[g.next(RequestFastDecoderTests.names.count)]] = value(&g) }
        return RowValues(entity: ["Trip", "Ünïcode", "a\"b"][g.next(3)], id: UUID(), values: values)
    }

    static func save(_ g: inout Generator, id: Int) -> Request {
        var save = SaveRequest(inserts: (0..<g.next(5)).map { _ in row(&g) }, updates: (0..<g.next(3)).map { _ in row(&g) },
                               deletes: (0..<g.next(3)).map { _ in RowReference(entity: "Trip", id: UUID()) },
                               author: g.next(3) == 0 ? nil : texts[g.next(texts.count)])
        if g.next(10) == 0 {   // declined: links are not in the subset
            save.links = [LinkChange(entity: "Trip", relationship: "stops", source: UUID(), destination: UUID(), isAdded: true)]
        }
        if g.next(10) == 0, !save.inserts.isEmpty { save.inserts[0].via = UUID() }   // declined
        let requestID: RequestID = g.next(4) == 0 ? .string("save-\(id)") : .int(Int64(id))
        return Request(id: requestID, operation: .save(save), timeout: g.next(3) == 0 ? .milliseconds(1 + g.next(86_400_000)) : nil)
    }

    /// The general decoder reads the hand-written line as the request, the hand reader reads both lines as
    /// the general decoder does, and where no string needs an escape the bytes are `JSONEncoder`'s.
    @Test func savesByHandAgreeWithTheGeneralCoders() throws {
        var g = Generator(state: 17)
        var written = 0, read = 0, identical = 0
        for id in 0..<2000 {
            let request = Self.save(&g, id: id)
            let general = try WireJSON.sharedEncoder.encode(request)
            if let fast = RequestFastEncoder.encode(request) {
                written += 1
                #expect(try Request.decodeInGeneral(line: fast).get() == request, "\(String(decoding: fast, as: UTF8.self))")
                if fast == general { identical += 1 }
                if let back = RequestFastDecoder.decode(fast) {
                    read += 1
                    #expect(back == request, "\(String(decoding: fast, as: UTF8.self))")
                }
            }
            if let back = RequestFastDecoder.decode(general) {
                #expect(back == (try Request.decodeInGeneral(line: general).get()), "\(String(decoding: general, as: UTF8.self))")
            }
        }
        #expect(written > 1200 && read > 1000 && identical > 100, "written \(written), read \(read), identical \(identical)")
    }

    @Test func aPlainSaveIsJSONEncodersBytes() throws {
        let plain = Request(id: 9, operation: .save(SaveRequest(
            inserts: [RowValues(entity: "Trip", id: try #require(UUID(uuidString: "0193a1b2-0000-7000-8000-000000000001")),
                                values: ["b": .double(2), "a": .double(0.5), "n": .null])],
            deletes: [RowReference(entity: "Stop", id: try #require(UUID(uuidString: "0193a1b2-0000-7000-8000-000000000002")))],
            author: "me")))
        let expected = #"{"author":"me","deletes":[{"entity":"Stop","id":"0193a1b2-0000-7000-8000-000000000002"}],"id":9,"#
            + #""inserts":[{"entity":"Trip","id":"0193a1b2-0000-7000-8000-000000000001","values":{"a":0.5,"b":{"double":2},"n":null}}],"#
            + #""op":"save","updates":[]}"#
        #expect(try plain.encodedLine() == Data((expected + "\n").utf8))
        #expect(try WireJSON.sharedEncoder.encode(plain) == Data(expected.utf8))
        #expect(RequestFastDecoder.decode(Data(expected.utf8)) == plain)
    }

    /// A bulk save's rows are positional with shared keys: written in sorted order as `JSONEncoder` writes
    /// their dictionaries (a repeated name once, its first value), and read back positional, consecutive
    /// rows with the same names sharing one ``RowKeys``.
    @Test func positionalRowsAreWrittenAndReadWithSharedKeys() throws {
        let keys = RowKeys(["rank", "name", "note", "name"])
        let other = RowKeys(["b", "a"])
        var rows = (0..<5).map { i in
            RowValues(entity: "Trip", id: UUID(), keys: keys, values: [.int(Int64(i)), .string("n\(i)"), i % 2 == 0 ? .null : .string("x"), .string("ignored")])
        }
        rows.append(RowValues(entity: "Stop", id: UUID(), keys: other, values: [.bool(true), .double(0.5)]))
        rows.append(RowValues(entity: "Trip", id: UUID(), keys: keys, values: [.int(9), .string("last"), .null, .null]))
        let request = Request(id: 3, operation: .save(SaveRequest(inserts: rows, updates: [rows[1]])))
        let fast = try #require(RequestFastEncoder.encode(request))
        #expect(fast == (try WireJSON.sharedEncoder.encode(request)))
        #expect(RequestFastEncoder.sortedPositions(keys) == [1, 2, 0])

        let back = try #require(RequestFastDecoder.decode(fast))
        #expect(back == request)
        guard case .save(let save) = back.operation else {
            Issue.record("not a save")
            return
        }
        let shared = save.inserts.map { $0.positionalValues?.keys }
        #expect(shared.allSatisfy { $0 != nil })
        #expect(Set(shared.prefix(5).map { ObjectIdentifier($0!) }).count == 1, "the first five rows share their keys")
        #expect(shared[4]! !== shared[5]!)
        #expect(shared[5]! !== shared[6]!)
        #expect(save.inserts[0]["note"] == .null)
        #expect(save.inserts[1]["name"] == .string("n1"))
    }

    @Test func doubtfulSavesAreLeftToTheGeneralDecoder() throws {
        let id = #""id":"0193a1b2-0000-7000-8000-000000000001""#
        func insert(_ values: String) -> String { #"{"id":1,"op":"save","inserts":[{"entity":"T","# + id + #","values":"# + values + "}]}" }
        #expect(RequestFastDecoder.decode(Data(insert(#"{"a":1,"b":-0.5,"c":{"double":3},"d":"\"é\"\n"}"#).utf8)) != nil,
                "the control line is read by hand")
        let lines = [
            insert(#"{"a":1,"a":2}"#),                            // a repeated name: which one wins is the general decoder's business
            insert(#"{"a":1.0}"#),                                // a whole number with a fraction: maybe an integer there
            insert(#"{"a":1e3}"#),
            insert(#"{"a":+1}"#),                                 // not JSON
            insert(#"{"a":01}"#),
            insert(#"{"a":1.}"#),
            insert(#"{"a":-}"#),
            insert(#"{"a":99999999999999999999}"#),               // beyond Int64
            insert(#"{"a":1e999}"#),                              // not finite
            insert(#"{"a":{"double":1,"x":2}}"#),                 // a tag and an extra key
            insert(#"{"a":{"float":1}}"#),
            insert(#"{"a":{"uuid":"nope"}}"#),
            insert(#"{"a":"\ud800"}"#),                           // a lone surrogate
            insert("{\"a\":\"tab\tinside\"}"),                  // a raw control character
            #"{"id":1,"op":"save","inserts":[{"entity":"T","entity":"U","# + id + #","values":{}}]}"#,
            #"{"id":1,"op":"save","inserts":[{"entity":"T","# + id + #","values":{},"via":"0193a1b2-0000-7000-8000-000000000001"}]}"#,
            #"{"id":1,"op":"save","inserts":[{"entity":"T","# + id + #","values":{},"x":1}]}"#,
            #"{"id":1,"op":"save","inserts":[{"entity":"T","# + id + "}]}",                   // no values
            #"{"id":1,"op":"save","inserts":[{"entity":"T","id":"nope","values":{}}]}"#,
            #"{"id":1,"op":"save","deletes":[{"entity":"T"}]}"#,
            #"{"id":1,"op":"save","inserts":null}"#,
            #"{"id":1,"op":"save","inserts":[],"links":[]}"#,                                // not in the subset
            #"{"id":1,"op":"save","inserts":[],"entity":"T"}"#,
            #"{"id":1,"op":"fetch","entity":"T","inserts":[]}"#,                             // save keys on a fetch
            #"{"id":1,"op":"ping","author":"x"}"#,
            #"{"id":1,"op":"save","inserts":[],"inserts":[]}"#,
            #"{"id":1,"op":"save","author":7}"#,
            #"{"id":1,"op":"save"}"#,
        ]
        for line in lines {
            #expect(RequestFastDecoder.decode(Data(line.utf8)) == nil, "\(line)")
        }
        var invalidUTF8 = Data(insert(#"{"a":""#).utf8.dropLast(3))
        invalidUTF8.append(contentsOf: [0xC3, 0x28])
        invalidUTF8.append(contentsOf: Data(#""}}]}"#.utf8))
        #expect(RequestFastDecoder.decode(invalidUTF8) == nil)
        guard case .failure(let failure) = Request.decode(line: invalidUTF8) else {
            Issue.record("invalid UTF-8 decoded")
            return
        }
        #expect(failure.error.code == .malformedMessage)
    }
}
