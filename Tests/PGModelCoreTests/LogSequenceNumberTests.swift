import Foundation
@_spi(PGModelInternals) import PGModelCore
import Testing

/// WAL positions in PostgreSQL's text form: parsed strictly, ordered by position, written back the same.
@Suite("LogSequenceNumber: PostgreSQL's LSN text form")
struct LogSequenceNumberTests {
    @Test("parses and prints PostgreSQL's form, and orders by position")
    func roundTrip() throws {
        let lsn = try #require(LogSequenceNumber("0/16B3748"))
        #expect(lsn.rawValue == 0x16B3748)
        #expect(lsn.description == "0/16B3748")
        #expect(LogSequenceNumber("16/b374d848")?.rawValue == 0x16_B374_D848)
        #expect(LogSequenceNumber("16/B374D848")?.description == "16/B374D848")
        #expect(LogSequenceNumber("FFFFFFFF/FFFFFFFF")?.rawValue == UInt64.max)
        #expect(try #require(LogSequenceNumber("0/FFFFFFFF")) < LogSequenceNumber(rawValue: 0x1_0000_0000))
        #expect(try #require(LogSequenceNumber("1/0")) > LogSequenceNumber(rawValue: 0xFFFF_FFFF))
        #expect(LogSequenceNumber.latest(nil, lsn) == lsn)
        #expect(LogSequenceNumber.latest(LogSequenceNumber(rawValue: 1), LogSequenceNumber(rawValue: 2))?.rawValue == 2)
        #expect(LogSequenceNumber.latest(nil, nil) == nil)
    }

    @Test("refuses anything else", arguments: ["", "/", "0/", "/0", "0x1/2", "1/2/3", "-1/2", "1 /2", "123456789/0", "0/123456789", "g/1", "1/+2", "１/2"])
    func refused(_ text: String) {
        #expect(LogSequenceNumber(text) == nil)
        #expect(throws: PGModelError.self) { try LogSequenceNumber(parsing: text, field: "readAfter") }
    }

    @Test("a typed error names the field")
    func typedError() {
        do {
            _ = try LogSequenceNumber(parsing: "nope", field: "readAfter")
            Issue.record("parsed nonsense")
        } catch let error as PGModelError {
            #expect(error.code == .invalidField)
            #expect(error.message.contains("readAfter"))
        } catch {
            Issue.record("untyped error \(error)")
        }
    }

    @Test("Codable as its text; SaveResult carries it as commitLSN")
    func coding() throws {
        var result = SaveResult()
        result.commitLSN = LogSequenceNumber("A/1F")
        let json = String(decoding: try JSONEncoder().encode(result), as: UTF8.self)
        #expect(json.contains("\"commitLSN\":\"A\\/1F\"") || json.contains("\"commitLSN\":\"A/1F\""))
        #expect(try JSONDecoder().decode(SaveResult.self, from: Data(json.utf8)).commitLSN == result.commitLSN)
        #expect(try JSONDecoder().decode(SaveResult.self, from: Data(#"{"remappedIdentifiers":[],"deleted":[]}"#.utf8)).commitLSN == nil)
        #expect(throws: DecodingError.self) { try JSONDecoder().decode(LogSequenceNumber.self, from: Data(#""0x1""#.utf8)) }
    }
}
