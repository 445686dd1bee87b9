import Foundation
import NIOCore
@_spi(PGModelInternals) import PGModelCore
import PostgresNIO
import Testing
@_spi(PGModelInternals) @testable import PGModelPostgres

/// A fetch's cells are read in place for the usual binary columns; every value must be the
/// one the driver's own decoding gives, and every other cell must still go the driver's way.
@Suite("Cells read in place")
struct InPlaceCellDecodingTests {
    static func cell(_ bytes: ByteBuffer?, _ type: PostgresDataType, _ format: PostgresFormat = .binary) -> PostgresCell {
        PostgresCell(bytes: bytes, dataType: type, format: format, columnName: "c", columnIndex: 0)
    }

    /// `value` as PostgresNIO encodes it for a bind: the binary form PostgreSQL sends back.
    static func encoded<T: PostgresEncodable>(_ value: T) throws -> ByteBuffer {
        var buffer = ByteBuffer()
        try value.encode(into: &buffer, context: .default)
        return buffer
    }

    static func same(_ cell: PostgresCell, _ type: AttributeType) throws {
        let inPlace = try PostgresValueCoding.decodeInPlace(cell, as: type)
        let driver = try PostgresValueCoding.decode(cell, as: type)
        #expect(inPlace == driver, "\(type) from \(cell.dataType): \(inPlace) against \(driver)")
    }

    @Test func everyUsualBinaryValueIsTheDriversOwn() throws {
        for text in ["", "plain", "ünïcödé ✓ 🚀", String(repeating: "long text ", count: 40), "a\u{0}b"] {
            try Self.same(Self.cell(try Self.encoded(text), .text), .string)
            try Self.same(Self.cell(try Self.encoded(text), .varchar), .url)
        }
        // Invalid UTF-8 is repaired the same way.
        try Self.same(Self.cell(ByteBuffer(bytes: [0x61, 0xFF, 0xFE, 0x62]), .text), .string)
        for number in [Int64.min, -1, 0, 1, 42, Int64.max] {
            try Self.same(Self.cell(try Self.encoded(number), .int8), .int64)
        }
        for double in [0.0, -0.0, 1.5, -3.25e300, .infinity, -.infinity, .leastNonzeroMagnitude, .greatestFiniteMagnitude] {
            try Self.same(Self.cell(try Self.encoded(double), .float8), .double)
        }
        let nan = try PostgresValueCoding.decodeInPlace(Self.cell(try Self.encoded(Double.nan), .float8), as: .double)
        guard case .double(let read) = nan else { Issue.record("NaN read as \(nan)"); return }
        #expect(read.isNaN)
        for flag in [true, false] {
            try Self.same(Self.cell(try Self.encoded(flag), .bool), .bool)
        }
        for micros: Int64 in [0, 1, -1, 1_700_000_000_123_456, -946_684_800_000_000, 253_402_300_799_999_999] {
            var buffer = ByteBuffer()
            buffer.writeInteger(micros)
            try Self.same(Self.cell(buffer, .timestamptz), .date)
        }
        for id in [UUID(), UUID(uuidString: "00000000-0000-0000-0000-000000000000"), UUID(uuidString: "FFFFFFFF-FFFF-FFFF-FFFF-FFFFFFFFFFFF")] {
            try Self.same(Self.cell(try Self.encoded(try #require(id)), .uuid), .uuid)
        }
    }

    @Test func nullIsNullAndIdentityCellsReadTheSame() throws {
        for type in [AttributeType.string, .int64, .double, .bool, .date, .uuid, .data, .decimal] {
            #expect(try PostgresValueCoding.decodeInPlace(Self.cell(nil, .text), as: type) == .null)
        }
        let id = UUID()
        #expect(try PostgresValueCoding.uuid(of: Self.cell(try Self.encoded(id), .uuid)) == id)
        #expect(try PostgresValueCoding.string(of: Self.cell(try Self.encoded("Trip"), .text)) == "Trip")
        // A NULL where a value must be: the driver's error, not a made-up value.
        #expect(throws: (any Error).self) { try PostgresValueCoding.uuid(of: Self.cell(nil, .uuid)) }
        #expect(throws: (any Error).self) { try PostgresValueCoding.string(of: Self.cell(nil, .text)) }
    }

    @Test func otherFormsAndWrongSizesGoTheDriversWay() throws {
        // Text format, other column types, other sizes: the same values, or the same errors, as the driver's.
        try Self.same(Self.cell(ByteBuffer(string: "123"), .int8, .text), .int64)
        try Self.same(Self.cell(ByteBuffer(string: "t"), .bool, .text), .bool)
        try Self.same(Self.cell(try Self.encoded(Int32(7)), .int4), .int64)
        try Self.same(Self.cell(try Self.encoded(Float(2.5)), .float4), .double)
        try Self.same(Self.cell(try Self.encoded("name"), .name), .string)
        var date = ByteBuffer()
        date.writeInteger(Int32(9_000))
        try Self.same(Self.cell(date, .date), .date)
        for (bytes, type, attribute) in [([UInt8](repeating: 1, count: 7), PostgresDataType.int8, AttributeType.int64),
                                         ([2], .bool, .bool), ([0, 0], .bool, .bool),
                                         ([UInt8](repeating: 0, count: 15), .uuid, .uuid),
                                         ([UInt8](repeating: 0, count: 9), .timestamptz, .date),
                                         ([UInt8](repeating: 0, count: 4), .float8, .double)] {
            let cell = Self.cell(ByteBuffer(bytes: bytes), type)
            #expect(throws: (any Error).self, "\(bytes.count) bytes of \(type)") { try PostgresValueCoding.decodeInPlace(cell, as: attribute) }
            #expect(throws: (any Error).self) { try PostgresValueCoding.decode(cell, as: attribute) }
        }
    }
}
