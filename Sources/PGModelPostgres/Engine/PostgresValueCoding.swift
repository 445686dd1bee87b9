import Foundation
@_spi(PGModelInternals) import PGModelCore
import PostgresNIO

/// PGValue ⇄ PostgresNIO: binds out, typed cells back.
enum PostgresValueCoding {
    /// PostgreSQL's timestamp epoch, 2000-01-01 00:00:00 UTC.
    static let postgresEpoch = Date(timeIntervalSince1970: 946_684_800)

    static func query(_ statement: SQLStatementLike) throws -> PostgresQuery {
        var bindings = PostgresBindings(capacity: statement.binds.count)
        for value in statement.binds {
            switch value {
            case .null: bindings.appendNull()
            case .bool(let v): bindings.append(v)
            case .int(let v): bindings.append(v)
            case .double(let v): bindings.append(v)
            case .string(let v): bindings.append(v)
            case .decimal(let v):
                // PostgresNIO's numeric encoder traps on NaN.
                guard v.isFinite else { throw PGModelError(.typeMismatch, "a decimal value must be a finite number") }
                try bindings.append(v)
            case .date(let v): bindings.append(try Timestamp(v))
            case .uuid(let v): bindings.append(v)
            case .data(let v): try bindings.append(v)
            }
        }
        for array in statement.arrays {
            try bindings.append(BinaryArray(array: array))
        }
        return PostgresQuery(unsafeSQL: statement.sql, binds: bindings)
    }

    /// The PostgreSQL types ``query(_:)`` binds `statement`'s values as, in order: a prepared statement
    /// is parsed with them, so a select run with other types is another statement.
    static func bindTypes(_ statement: SQLStatementLike) -> [PostgresDataType] {
        var types: [PostgresDataType] = []
        types.reserveCapacity(statement.binds.count + statement.arrays.count)
        for value in statement.binds {
            switch value {
            case .null: types.append(.null)
            case .bool: types.append(.bool)
            case .int: types.append(.int8)
            case .double: types.append(.float8)
            case .string: types.append(.text)
            case .decimal: types.append(.numeric)
            case .date: types.append(Timestamp.psqlType)
            case .uuid: types.append(.uuid)
            case .data: types.append(.bytea)
            }
        }
        for array in statement.arrays { types.append(BinaryArray(array: array).psqlType) }
        return types
    }

    /// An ``SQLArray`` in PostgreSQL's binary array format: one dimension, `NULL`s allowed, each element
    /// encoded by PostgresNIO exactly as a scalar bind of its kind is (and checked the same way first).
    struct BinaryArray: PostgresThrowingDynamicTypeEncodable {
        let array: SQLArray

        var psqlFormat: PostgresFormat { .binary }

        var psqlType: PostgresDataType {
            switch array.element {
            case .bool: return .boolArray
            case .int8: return .int8Array
            case .float8: return .float8Array
            case .text: return .textArray
            case .numeric: return .numericArray
            case .timestamptz: return .timestamptzArray
            case .uuid: return .uuidArray
            case .bytea: return .byteaArray
            }
        }

        var elementType: PostgresDataType {
            switch array.element {
            case .bool: return .bool
            case .int8: return .int8
            case .float8: return .float8
            case .text: return .text
            case .numeric: return .numeric
            case .timestamptz: return .timestamptz
            case .uuid: return .uuid
            case .bytea: return .bytea
            }
        }

        func encode<JSONEncoder: PostgresJSONEncoder>(into buffer: inout ByteBuffer, context: PostgresEncodingContext<JSONEncoder>) throws {
            let values = array.values
            buffer.writeInteger(Int32(values.isEmpty ? 0 : 1))                          // dimensions
            buffer.writeInteger(Int32(values.contains { if case .null = $0 { true } else { false } } ? 1 : 0))   // has NULLs
            buffer.writeInteger(elementType.rawValue)
            guard !values.isEmpty else { return }
            buffer.writeInteger(Int32(values.count))                                    // length
            buffer.writeInteger(Int32(1))                                               // lower bound
            // A bulk insert's arrays are most of its client work : fixed-size elements are
            // stored straight into the buffer in one pass, text with its length known up front.
            switch array.element {
            case .bool: try Self.writeFixedSize(values, element: array.element, size: 1, into: &buffer)
            case .int8, .float8, .timestamptz: try Self.writeFixedSize(values, element: array.element, size: 8, into: &buffer)
            case .uuid: try Self.writeFixedSize(values, element: array.element, size: 16, into: &buffer)
            case .text: try Self.writeText(values, into: &buffer)
            case .numeric, .bytea: try encodeElementsOneByOne(values, into: &buffer, context: context)
            }
        }

        /// Each element through its PostgresNIO encoder, its length written after it: for the variable-size
        /// types, and the reference the faster paths are tested against.
        func encodeElementsOneByOne<JSONEncoder: PostgresJSONEncoder>(_ values: [PGValue], into buffer: inout ByteBuffer,
                                                                       context: PostgresEncodingContext<JSONEncoder>) throws {
            let fixedSize: Int32?
            switch array.element {
            case .bool: fixedSize = 1
            case .int8, .float8, .timestamptz: fixedSize = 8
            case .uuid: fixedSize = 16
            case .text, .numeric, .bytea: fixedSize = nil
            }
            buffer.reserveCapacity(minimumWritableBytes: values.count * (4 + Int(fixedSize ?? 12)))
            for value in values {
                if value.isNull {
                    buffer.writeInteger(Int32(-1))
                    continue
                }
                let lengthIndex = buffer.writerIndex
                buffer.writeInteger(fixedSize ?? 0)
                let start = buffer.writerIndex
                switch (array.element, value) {
                case (.bool, .bool(let v)): v.encode(into: &buffer, context: context)
                case (.int8, .int(let v)): v.encode(into: &buffer, context: context)
                case (.float8, .double(let v)): v.encode(into: &buffer, context: context)
                case (.text, .string(let v)): v.encode(into: &buffer, context: context)
                case (.numeric, .decimal(let v)):
                    guard v.isFinite else { throw PGModelError(.typeMismatch, "a decimal value must be a finite number") }
                    v.encode(into: &buffer, context: context)
                case (.timestamptz, .date(let v)): try Timestamp(v).encode(into: &buffer, context: context)
                case (.uuid, .uuid(let v)): v.encode(into: &buffer, context: context)
                case (.bytea, .data(let v)): v.encode(into: &buffer, context: context)
                default:
                    throw Self.mismatch(value, array.element)
                }
                if fixedSize == nil || buffer.writerIndex - start != Int(fixedSize ?? 0) {
                    buffer.setInteger(Int32(buffer.writerIndex - start), at: lengthIndex)
                }
            }
        }

        /// Elements of `size` bytes (bool, int8, float8, timestamptz, uuid), each with its length or -1
        /// for NULL, stored in one pass over memory reserved for all of them.
        private static func writeFixedSize(_ values: [PGValue], element: SQLArray.Element, size: Int, into buffer: inout ByteBuffer) throws {
            var failure: (any Error)?
            buffer.writeWithUnsafeMutableBytes(minimumWritableBytes: values.count * (4 + size)) { raw in
                var offset = 0
                for value in values {
                    if case .null = value {
                        raw.storeBytes(of: Int32(-1).bigEndian, toByteOffset: offset, as: Int32.self)
                        offset += 4
                        continue
                    }
                    raw.storeBytes(of: Int32(size).bigEndian, toByteOffset: offset, as: Int32.self)
                    switch (element, value) {
                    case (.bool, .bool(let v)): raw.storeBytes(of: v ? 1 : 0, toByteOffset: offset + 4, as: UInt8.self)
                    case (.int8, .int(let v)): raw.storeBytes(of: v.bigEndian, toByteOffset: offset + 4, as: Int64.self)
                    case (.float8, .double(let v)): raw.storeBytes(of: v.bitPattern.bigEndian, toByteOffset: offset + 4, as: UInt64.self)
                    case (.uuid, .uuid(let v)): raw.storeBytes(of: v.uuid, toByteOffset: offset + 4, as: uuid_t.self)
                    case (.timestamptz, .date(let v)):
                        do {
                            raw.storeBytes(of: try Timestamp(v).microseconds.bigEndian, toByteOffset: offset + 4, as: Int64.self)
                        } catch {
                            failure = error
                            return offset
                        }
                    default:
                        failure = mismatch(value, element)
                        return offset
                    }
                    offset += 4 + size
                }
                return offset
            }
            if let failure { throw failure }
        }

        /// Text elements, each with its UTF-8 length (known before it is written) or -1 for NULL.
        private static func writeText(_ values: [PGValue], into buffer: inout ByteBuffer) throws {
            buffer.reserveCapacity(minimumWritableBytes: values.count * 16)
            for value in values {
                switch value {
                case .null:
                    buffer.writeInteger(Int32(-1))
                case .string(let v):
                    buffer.writeInteger(Int32(v.utf8.count))
                    buffer.writeString(v)
                default:
                    throw mismatch(value, .text)
                }
            }
        }

        private static func mismatch(_ value: PGValue, _ element: SQLArray.Element) -> PGModelError {
            PGModelError(.internalError, "a \(value.kindName) value in an array of \(element.rawValue)")
        }
    }

    /// ``decode(_:as:)``, reading the binary form of the usual columns (`text`, `int8`, `float8`, `bool`,
    /// `timestamptz`, `uuid`) in place, as the driver would read it: the driver's own `decode` first copies
    /// the cell's buffer, a reference-count increment and decrement on storage that every row of a result
    /// shares — half of decoding a 20,000-row fetch, and contended when its two halves decode at once on two
    /// threads. Anything else, or a cell whose size is not the type's, goes to ``decode(_:as:)``,
    /// which accepts the other forms and throws the driver's errors.
    static func decodeInPlace(_ cell: borrowing PostgresCell, as type: AttributeType) throws -> PGValue {
        guard cell.bytes != nil else { return .null }
        guard cell.format == .binary else { return try decode(copy cell, as: type) }
        let dataType = cell.dataType
        // Read through the borrowed buffer: binding it (`if let bytes = cell.bytes`) would copy it.
        if let value = cell.bytes?.withUnsafeReadableBytes({ binaryValue($0, of: type, from: dataType) }) { return value }
        return try decode(copy cell, as: type)
    }

    /// The value of the binary form `raw` of a `dataType` column of `type`, as the driver reads it; nil
    /// when the pair is not one of the usual ones or `raw` is not that type's size.
    private static func binaryValue(_ raw: UnsafeRawBufferPointer, of type: AttributeType, from dataType: PostgresDataType) -> PGValue? {
        switch (type, dataType) {
        case (.string, .text), (.string, .varchar), (.url, .text), (.url, .varchar):
            return .string(String(decoding: raw, as: UTF8.self))
        case (.int64, .int8) where raw.count == 8:
            return .int(Int64(bigEndian: raw.loadUnaligned(as: Int64.self)))
        case (.double, .float8) where raw.count == 8:
            return .double(Double(bitPattern: UInt64(bigEndian: raw.loadUnaligned(as: UInt64.self))))
        case (.bool, .bool) where raw.count == 1 && raw[0] <= 1:
            return .bool(raw[0] == 1)
        case (.date, .timestamptz) where raw.count == 8:
            // As the driver reads it: Double seconds since 2000, so the same Date comes back either way.
            let microseconds = Int64(bigEndian: raw.loadUnaligned(as: Int64.self))
            return .date(Date(timeInterval: Double(microseconds) / 1_000_000, since: postgresEpoch))
        case (.uuid, .uuid) where raw.count == 16:
            return .uuid(UUID(uuid: (raw[0], raw[1], raw[2], raw[3], raw[4], raw[5], raw[6], raw[7],
                                     raw[8], raw[9], raw[10], raw[11], raw[12], raw[13], raw[14], raw[15])))
        default:
            return nil
        }
    }

    /// A non-null `uuid` cell, read as ``decodeInPlace(_:as:)`` reads it.
    static func uuid(of cell: borrowing PostgresCell) throws -> UUID {
        if case .uuid(let id) = try decodeInPlace(cell, as: .uuid) { return id }
        return try (copy cell).decode(UUID.self)   // NULL: the driver's error
    }

    /// A non-null `text` cell, read as ``decodeInPlace(_:as:)`` reads it.
    static func string(of cell: borrowing PostgresCell) throws -> String {
        if case .string(let text) = try decodeInPlace(cell, as: .string) { return text }
        return try (copy cell).decode(String.self)   // NULL: the driver's error
    }

    /// Decodes a cell of an attribute column of `type`.
    static func decode(_ cell: PostgresCell, as type: AttributeType) throws -> PGValue {
        guard cell.bytes != nil else { return .null }
        switch type {
        case .string, .url, .json, .stringArray, .int64Array, .doubleArray, .boolArray: return .string(try cell.decode(String.self))
        case .bool: return .bool(try cell.decode(Bool.self))
        case .int16: return .int(Int64(try cell.decode(Int16.self)))
        case .int32: return .int(Int64(try cell.decode(Int32.self)))
        case .int64: return .int(try cell.decode(Int64.self))
        case .float: return .double(Double(try cell.decode(Float.self)))
        case .double: return .double(try cell.decode(Double.self))
        case .decimal: return .decimal(try cell.decode(Decimal.self))
        case .date: return .date(try cell.decode(Date.self))
        case .uuid: return .uuid(try cell.decode(UUID.self))
        case .data: return .data(try cell.decode(Data.self))
        }
    }
}

/// A `timestamptz` bind of whole microseconds since 2000-01-01 UTC.
struct Timestamp: PostgresNonThrowingEncodable {
    static var psqlType: PostgresDataType { .timestamptz }
    static var psqlFormat: PostgresFormat { .binary }
    var microseconds: Int64

    /// `date` in whole microseconds, rounded, not truncated as PostgresNIO's encoder does: a date read
    /// back from a timestamptz (microseconds → Double seconds) then binds as the very same microseconds,
    /// in a scalar bind and in an array alike. Throws where PostgresNIO's encoder would trap (an Int64
    /// overflow).
    init(_ date: Date) throws {
        let micros = date.timeIntervalSince(PostgresValueCoding.postgresEpoch) * 1_000_000
        guard micros.isFinite, abs(micros) < 9.2e18 else {
            throw PGModelError(.typeMismatch, "a date must lie within 290,000 years of 2000")
        }
        self.microseconds = Int64(micros.rounded())
    }

    func encode<JSONEncoder: PostgresJSONEncoder>(into byteBuffer: inout ByteBuffer, context: PostgresEncodingContext<JSONEncoder>) {
        byteBuffer.writeInteger(microseconds)
    }
}

/// What the coder needs of a statement; `PGModelSQL.SQLStatement` conforms.
protocol SQLStatementLike {
    var sql: String { get }
    var binds: [PGValue] { get }
    var arrays: [SQLArray] { get }
}

@_spi(PGModelInternals) import PGModelSQL
extension SQLStatement: SQLStatementLike {}
