import PGModelTestSupport
import Testing

@_spi(PGModelInternals) @testable import PGModelWire

/// The request reader's UTF-8 check against the standard library's, which it replaced on the hot path:
/// a disagreement would let a malformed line through the fast reader, or turn a good one
/// over to the general decoder.
@Suite("UTF-8 validation")
struct UTF8ValidationTests {
    private static func agrees(_ bytes: [UInt8]) -> Bool {
        bytes.withUnsafeBytes { UTF8Validation.isValid($0) } == (String(validating: bytes, as: UTF8.self) != nil)
    }

    @Test("the edges of every sequence length, overlong forms, surrogates and code points past U+10FFFF", arguments: [
        [], [0x00], [0x7F], [0x80], [0xBF], [0xC0, 0x80], [0xC1, 0xBF], [0xC2, 0x80], [0xDF, 0xBF], [0xC2], [0xC2, 0x7F], [0xC2, 0xC0],
        [0xE0, 0x80, 0x80], [0xE0, 0x9F, 0xBF], [0xE0, 0xA0, 0x80], [0xE1, 0x80, 0x80], [0xEC, 0xBF, 0xBF], [0xED, 0x80, 0x80],
        [0xED, 0x9F, 0xBF], [0xED, 0xA0, 0x80], [0xED, 0xBF, 0xBF], [0xEE, 0x80, 0x80], [0xEF, 0xBF, 0xBF], [0xEF, 0xBF],
        [0xF0, 0x80, 0x80, 0x80], [0xF0, 0x8F, 0xBF, 0xBF], [0xF0, 0x90, 0x80, 0x80], [0xF3, 0xBF, 0xBF, 0xBF], [0xF4, 0x80, 0x80, 0x80],
        [0xF4, 0x8F, 0xBF, 0xBF], [0xF4, 0x90, 0x80, 0x80], [0xF5, 0x80, 0x80, 0x80], [0xFF], [0xFE], [0xF0, 0x90, 0x80],
        Array("{\"id\":1,\"op\":\"ping\"}".utf8), Array("grüße, 日本, 🎉 and 8 more bytes".utf8),
        Array("12345678".utf8) + [0xC3], Array("1234567".utf8) + [0xC3, 0xA9] + Array("12345678".utf8),
    ] as [[UInt8]])
    func edges(_ bytes: [UInt8]) {
        #expect(Self.agrees(bytes), "\(bytes)")
    }

    @Test("agrees with the standard library on 50,000 generated lines, mostly ASCII with UTF-8 and stray bytes mixed in")
    func generated() {
        var generator = SeededGenerator(state: 15)
        var disagreements: [[UInt8]] = []
        let pieces: [[UInt8]] = [Array("é".utf8), Array("日".utf8), Array("🎉".utf8), [0x80], [0xC3], [0xED, 0xA0, 0x80], [0xF4, 0x90], [0xE0, 0x80]]
        for _ in 0..<50_000 {
            var bytes: [UInt8] = []
            for _ in 0..<Int(generator.next() % 40) {
                if generator.next() % 6 == 0 {
                    bytes += pieces[Int(generator.next() % UInt64(pieces.count))]
                } else {
                    bytes.append(UInt8(generator.next() % 0x80))
                }
            }
            if !Self.agrees(bytes) { disagreements.append(bytes) }
        }
        #expect(disagreements.isEmpty, "\(disagreements.prefix(5))")
    }
}
