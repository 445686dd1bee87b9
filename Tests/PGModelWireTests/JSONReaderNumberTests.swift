import Foundation
@_spi(PGModelInternals) import PGModelCore
import Testing

@_spi(PGModelInternals) @testable import PGModelWire

/// The table reader's own number and UUID parsing against the standard library's, which it replaced on
/// the hot path: any disagreement would change a value on its way from the server.
@Suite("The table reader's numbers and UUIDs")
struct JSONReaderNumberTests {
    private static func exactDouble(_ text: String) -> Double? {
        Array(text.utf8).withUnsafeBytes { JSONReader.exactDouble($0) }
    }

    private static func shortInteger(_ text: String) -> Int64? {
        Array(text.utf8).withUnsafeBytes { JSONReader.shortInteger($0) }
    }

    /// What the reader makes of `text` as a value of a table row.
    private static func readValue(_ text: String) throws -> PGValue {
        try Array(text.utf8).withUnsafeBytes { bytes in
            var reader = JSONReader(bytes)
            return try reader.value()
        }
    }

    @Test("the exact-double path gives strtod's bits whenever it answers", arguments: [
        "0", "-0", "0.0", "-0.0", "1", "0.1", "0.5", "120.5", "-120.5", "3.14159", "1e22", "1e-22", "1.5e-22",
        "9007199254740992", "9007199254740993", "900719925474099.3", "1e23", "1e-23", "4.9e-324", "1.7976931348623157e308",
        "0.30000000000000004", "142.85714285714286", "2.5E3", "2.5e+3", "2.5e-3", "00.5", "12345678901234567890",
        "1.", ".5", "-", "", "1e", "1e+", "e5", "1.2.3", "1e5e5", "--1", "+1", "0x10", "1e99999", "NaN", "inf",
    ])
    func exactDoubleAgrees(_ text: String) {
        guard let fast = Self.exactDouble(text) else { return }
        let reference = Double(text)
        #expect(reference?.bitPattern == fast.bitPattern, "\(text): \(fast) against \(String(describing: reference))")
    }

    @Test("the exact-double path agrees with strtod on 20,000 generated numbers, and takes most of them")
    func exactDoubleAgreesOnGenerated() {
        var generator = SystemRandomNumberGenerator()
        var taken = 0
        var total = 0
        for i in 0..<20_000 {
            let text: String
            switch i % 4 {
            case 0: text = Double.random(in: -1e6...1e6, using: &generator).description
            case 1: text = (Double(Int.random(in: 0..<100_000, using: &generator)) / 7).description
            case 2: text = "\(Int.random(in: -999_999...999_999, using: &generator)).\(Int.random(in: 0...99_999, using: &generator))"
            default: text = "\(Int.random(in: 1...99_999, using: &generator))e\(Int.random(in: -30...30, using: &generator))"
            }
            total += 1
            guard let fast = Self.exactDouble(text) else { continue }
            taken += 1
            guard let reference = Double(text), reference.bitPattern == fast.bitPattern else {
                Issue.record("\(text): \(fast) against \(String(describing: Double(text)))")
                return
            }
        }
        #expect(taken > total / 3)
    }

    @Test("short integers are parsed as Int64 parses them", arguments: [
        "0", "-0", "7", "-7", "007", "123456789012345678", "-123456789012345678", "1234567890123456789", "-", "", "1.0", "+5", "1e3",
    ])
    func shortIntegerAgrees(_ text: String) {
        guard let fast = Self.shortInteger(text) else { return }
        #expect(Int64(text) == fast)
    }

    @Test("numbers keep their kind and value through the reader")
    func numbersThroughTheReader() throws {
        #expect(try Self.readValue("42") == .int(42))
        #expect(try Self.readValue("-9223372036854775808") == .int(.min))
        #expect(try Self.readValue("9223372036854775807") == .int(.max))
        #expect(try Self.readValue("9223372036854775808") == .double(9_223_372_036_854_775_808))
        #expect(try Self.readValue("0.1") == .double(0.1))
        #expect(try Self.readValue("142.85714285714286") == .double(142.85714285714286))
        #expect(try Self.readValue("1e-05") == .double(1e-05))
        #expect(try Self.readValue("1e+20") == .double(1e20))
        guard case .double(let negativeZero) = try Self.readValue("{\"double\":-0}") else {
            Issue.record("a tagged -0 is not a double")
            return
        }
        #expect(negativeZero == 0 && negativeZero.sign == .minus)
        #expect(throws: (any Error).self) { try Self.readValue("1e999") }
    }

    @Test("tagged dates read in place are the dates the general parser makes, escaped or not")
    func dates() throws {
        for text in ["2024-05-01T10:00:00.000Z", "2024-05-01T10:00:00.250001Z", "1940-01-01T00:00:00.5Z", "2024-05-01T10:00:00Z",
                     "0999-12-31T23:59:59.000Z", "9999-12-31T23:59:59.999999Z"] {
            let expected = try #require(PGValue.parseDate(text), "\(text)")
            #expect(try Self.readValue(#"{"date":"\#(text)"}"#) == .date(expected), "\(text)")
        }
        // An escape sends the string through the general reader: the same date.
        let escaped = #"{"date":"2024-05-01T10:00:00\u002e250001Z"}"#
        #expect(try Self.readValue(escaped) == .date(try #require(PGValue.parseDate("2024-05-01T10:00:00.250001Z"))))
        for bad in [#"{"date":"yesterday"}"#, #"{"date":"2024-05-01T10:00:00.000Z"#, #"{"date":"2024-05-01T10:00:00.000Z\"#] {
            #expect(throws: (any Error).self, "\(bad)") { try Self.readValue(bad) }
        }
    }

    @Test("UUIDs are read in either case, and anything else is refused")
    func uuids() throws {
        let id = UUID()
        for text in [id.uuidString.lowercased(), id.uuidString.uppercased()] {
            let read = try Array("\"\(text)\"".utf8).withUnsafeBytes { bytes in
                var reader = JSONReader(bytes)
                return try reader.uuid()
            }
            #expect(read == id)
        }
        let lower = id.uuidString.lowercased()
        var malformed = ["\"\(lower.dropLast())\"", "\"\(lower)x\"", "\"\(lower.replacingOccurrences(of: "-", with: "_"))\"", lower]
        for offset in [0, 7, 9, 35] {
            var bytes = Array(lower.utf8)
            for bad in [UInt8(ascii: "g"), UInt8(ascii: "G"), UInt8(ascii: " "), 0xC3, UInt8(ascii: "/"), UInt8(ascii: ":")] {
                bytes[offset] = bad
                malformed.append("\"" + String(decoding: bytes, as: UTF8.self) + "\"")
            }
        }
        for text in malformed {
            let read = try? Array(text.utf8).withUnsafeBytes { bytes in
                var reader = JSONReader(bytes)
                return try reader.uuid()
            }
            #expect(read == nil, "\(text)")
        }
    }

    @Test("the writer's UUIDs are lowercase and what the reader reads")
    func uuidWriter() throws {
        for _ in 0..<100 {
            let id = UUID()
            var writer = JSONWriter()
            writer.uuidString(id)
            #expect(writer.bytes == Array("\"\(id.uuidString.lowercased())\"".utf8))
        }
    }
}
