import Foundation
import NIOCore
@_spi(PGModelInternals) import PGModelCore
@_spi(PGModelInternals) import PGModelSQL
import PostgresNIO
import Testing
@_spi(PGModelInternals) @testable import PGModelPostgres

/// The bind arrays of set-based writes are stored straight into the buffer for the fixed-size types and
/// text; the bytes must be exactly what each element's PostgresNIO encoder writes.
@Suite("Binary array binds")
struct BinaryArrayEncodingTests {
    /// `array` encoded as sent, and as each element's own encoder writes it after the same header.
    static func bytes(_ array: SQLArray) throws -> (sent: [UInt8], reference: [UInt8]) {
        let binary = PostgresValueCoding.BinaryArray(array: array)
        var sent = ByteBuffer()
        try binary.encode(into: &sent, context: .default)
        var reference = ByteBuffer()
        reference.writeInteger(Int32(array.values.isEmpty ? 0 : 1))
        reference.writeInteger(Int32(array.values.contains(where: \.isNull) ? 1 : 0))
        reference.writeInteger(binary.elementType.rawValue)
        if !array.values.isEmpty {
            reference.writeInteger(Int32(array.values.count))
            reference.writeInteger(Int32(1))
            try binary.encodeElementsOneByOne(array.values, into: &reference, context: .default)
        }
        return (Array(sent.readableBytesView), Array(reference.readableBytesView))
    }

    @Test func everyElementTypeIsWhatItsEncoderWrites() throws {
        let arrays: [SQLArray] = [
            SQLArray(.bool, [.bool(true), .null, .bool(false)]),
            SQLArray(.int8, [.int(0), .int(-1), .int(.max), .int(.min), .null, .int(4711)]),
            SQLArray(.float8, [.double(0.1), .double(-0.0), .double(.infinity), .null, .double(.greatestFiniteMagnitude)]),
            SQLArray(.timestamptz, [.date(Date(timeIntervalSince1970: 0)), .null, .date(Date(timeIntervalSince1970: 1_700_000_000.123456)),
                                    .date(Date(timeIntervalSinceReferenceDate: -1e10))]),
            SQLArray(.uuid, [.uuid(UUID()), .null, .uuid(UUID(uuidString: "00112233-4455-6677-8899-AABBCCDDEEFF") ?? UUID())]),
            SQLArray(.text, [.string(""), .string("é 日本 🙂"), .null, .string(String(repeating: "x", count: 5000))]),
            SQLArray(.numeric, [.decimal(Decimal(string: "12.50") ?? 0), .null]),
            SQLArray(.bytea, [.data(Data([0, 1, 255])), .null]),
            SQLArray(.uuid, []),
            SQLArray(.text, [.null, .null]),
            SQLArray(.int8, (0..<10_000).map { .int(Int64($0) * 7919) }),
        ]
        for array in arrays {
            let (sent, reference) = try Self.bytes(array)
            #expect(sent == reference, "\(array.element) of \(array.values.count)")
        }
    }

    @Test func aValueOfAnotherKindOrAnUnencodableDateThrows() throws {
        for array in [SQLArray(.uuid, [.uuid(UUID()), .string("no")]), SQLArray(.int8, [.double(1)]), SQLArray(.text, [.int(1)]),
                      SQLArray(.bool, [.null, .int(1)])] {
            var buffer = ByteBuffer()
            #expect(throws: PGModelError.self) { try PostgresValueCoding.BinaryArray(array: array).encode(into: &buffer, context: .default) }
        }
        var buffer = ByteBuffer()
        let error = #expect(throws: PGModelError.self) {
            try PostgresValueCoding.BinaryArray(array: SQLArray(.timestamptz, [.date(Date(timeIntervalSince1970: 1e300))]))
                .encode(into: &buffer, context: .default)
        }
        #expect(error?.code == .typeMismatch)
    }
}
