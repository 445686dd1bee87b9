import Foundation
@_spi(PGModelInternals) import PGModelCore
import PGModelTestSupport
import Testing

@_spi(PGModelInternals) @testable import PGModelWire

@Suite("The answer to a save, written and read by hand")
struct WireSaveAnswerTests {
    static let third = UUID(uuidString: "0193A7C4-5E6F-7A8B-9C0D-000000000003") ?? UUID()

    /// Every field of a save's answer, each with awkward values (escapes, tagged doubles and dates).
    static let results: [SaveResult] = [
        SaveResult(),
        {
            var result = SaveResult(deleted: [RowReference(entity: "Album", id: WireTest.tripID)])
            result.commitLSN = LogSequenceNumber("1A/B374D848")
            return result
        }(),
        SaveResult(remappedIdentifiers: [WireTest.tripID: WireTest.otherID, third: WireTest.userID]),
        SaveResult(deleted: [RowReference(entity: "Album", id: WireTest.tripID), RowReference(entity: "Track", id: WireTest.otherID)]),
        SaveResult(merged: [RowValues(entity: "Trip", id: WireTest.tripID,
                                      values: ["budget": .double(950), "name": .string("quote \" and \\ and \n"), "tags": .string(#"["a"]"#)])],
                   dropped: [RowReference(entity: "Trip", id: WireTest.otherID)]),
        SaveResult(stored: FetchedTable(
            shapes: [.init(entity: "Trip", keys: ["name", "budget", "start", "guide"]), .init(entity: "Guide", keys: ["name"])],
            rows: [.init(shape: 0, id: WireTest.tripID, values: [.string("Zürich ✈︎"), .double(1000), .date(Date(timeIntervalSince1970: 1_714_557_600.250001)),
                                                                 .uuid(WireTest.otherID)]),
                   .init(shape: 1, id: WireTest.otherID, values: [.string("Ann")]),
                   .init(shape: 0, id: third, values: [.string("Oslo"), .double(0.5), .date(Date(timeIntervalSince1970: 0)), .null])])),
    ]

    @Test("the hand-written line is JSONEncoder's, and both readers read either line back", arguments: results.indices)
    func agreesWithCodable(index: Int) throws {
        var all = Self.results[index]
        // And every field at once.
        if index == 0 {
            for result in Self.results {
                all.remappedIdentifiers.merge(result.remappedIdentifiers) { first, _ in first }
                all.deleted += result.deleted
                all.merged += result.merged
                all.dropped += result.dropped
                if !result.stored.rows.isEmpty { all.stored = result.stored }
            }
        }
        for id: RequestID? in [9, "save-1", nil] {
            let response = Response(id: id, .saved(all))
            let fast = try response.encodedLine()
            let slow = try WireJSON.encodeLine(response)
            #expect(String(decoding: fast, as: UTF8.self) == String(decoding: slow, as: UTF8.self))
            #expect(WireTable.decodeLine(fast.dropLast()) == response, "the hand-written reader reads the line")
            #expect(try WireJSON.makeDecoder().decode(Response.self, from: fast) == response, "and so does the general decoder")
            #expect(try ServerMessage.decode(line: fast.dropLast()) == .response(response))
        }
    }

    @Test("exact line of a save that updated a row others had changed")
    func snapshot() throws {
        let result = SaveResult(stored: FetchedTable(shapes: [.init(entity: "Trip", keys: ["name", "budget"])],
                                                     rows: [.init(shape: 0, id: WireTest.tripID, values: [.string("Paris (renamed by bob)"), .double(1000)])]))
        #expect(try WireTest.text(Response(id: 13, .saved(result)).encodedLine())
            == #"{"id":13,"ok":true,"remapped":{},"stored":{"rows":[[0,"0193a7c4-5e6f-7a8b-9c0d-1e2f3a4b5c6d","Paris (renamed by bob)",{"double":1000}]],"shapes":[{"entity":"Trip","keys":["name","budget"]}]}}"#)
    }

    @Test("an older server's answer, without stored, reads as one with no stored rows")
    func withoutStored() throws {
        let line = #"{"id":3,"merged":[{"entity":"Trip","id":"0193a7c4-5e6f-7a8b-9c0d-1e2f3a4b5c6d","values":{"budget":950}}],"ok":true,"remapped":{}}"#
        let expected = Response(id: 3, .saved(SaveResult(merged: [RowValues(entity: "Trip", id: WireTest.tripID, values: ["budget": .int(950)])])))
        #expect(try ServerMessage.decode(line: Data(line.utf8)) == .response(expected))
        #expect(WireTable.decodeLine(Data(line.utf8)) == expected)
    }

    @Test("stored rows that do not match their shapes make the answer invalid", arguments: [
        #"{"id":1,"ok":true,"remapped":{},"stored":{"rows":[[0,"0193a7c4-5e6f-7a8b-9c0d-1e2f3a4b5c6d","a","b"]],"shapes":[{"entity":"Trip","keys":["name"]}]}}"#,
        #"{"id":1,"ok":true,"remapped":{},"stored":{"rows":[[1,"0193a7c4-5e6f-7a8b-9c0d-1e2f3a4b5c6d","a"]],"shapes":[{"entity":"Trip","keys":["name"]}]}}"#,
    ])
    func mismatchedStoredRow(line: String) {
        #expect(WireTable.decodeLine(Data(line.utf8)) == nil)
        #expect(throws: PGModelError.self) { try ServerMessage.decode(line: Data(line.utf8)) }
    }

    @Test("what the hand-written reader does not write is left to the general decoder", arguments: [
        // A merged row with an ancestor, a reference with an unknown key, a table beside a save's fields,
        // a key twice, an uppercase remapped id.
        #"{"id":1,"merged":[{"ancestor":{},"entity":"Trip","id":"0193a7c4-5e6f-7a8b-9c0d-1e2f3a4b5c6d","values":{}}],"ok":true,"remapped":{}}"#,
        #"{"deleted":[{"entity":"Trip","id":"0193a7c4-5e6f-7a8b-9c0d-1e2f3a4b5c6d","x":1}],"id":1,"ok":true,"remapped":{}}"#,
        #"{"id":1,"ok":true,"remapped":{},"table":{"rows":[],"shapes":[]}}"#,
        #"{"id":1,"ok":true,"remapped":{},"remapped":{}}"#,
        #"{"deleted":[],"id":1,"ok":true}"#,
    ])
    func declined(line: String) throws {
        #expect(WireTable.decodeLine(Data(line.utf8)) == nil)
        _ = try? ServerMessage.decode(line: Data(line.utf8))
    }

    @Test("a large stored table is written and read in halves like a fetch's")
    func largeStored() throws {
        let table = WireTableTests.largeTable()
        let response = Response(id: 4, .saved(SaveResult(stored: table)))
        let line = try response.encodedLine()
        #expect(line == (try WireJSON.encodeLine(response)))
        #expect(WireTable.decodeLine(line.dropLast()) == response)
    }
}
