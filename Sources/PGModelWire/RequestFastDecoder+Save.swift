import Foundation
import PGModelCore

/// A `save`'s rows and references, read by hand: `JSONDecoder` spent ~43 ms on a 1,000-model save's
/// 250 KB line (its keyed containers and a `PGValue` tried as five types in turn), most of what a bulk
/// save through the service cost beyond the direct store's.
///
/// The subset: rows `{"entity":…,"id":…,"values":{…}}` (no `via`, no other or repeated key, in any order),
/// references `{"entity":…,"id":…}`, strings with escapes (valid UTF-8), values as PROTOCOL.md §5 writes
/// them. A number is taken when the general decoder cannot read it otherwise: an integer literal within
/// Int64, or a literal with a fraction or an exponent whose value is finite and not whole (a whole one,
/// `1.0` or `1e3`, is left to the general decoder, which may read it as an integer). Anything else declines
/// the whole line.
extension JSONReader {
    /// `[row, …]`.
    mutating func saveRows() throws -> [RowValues] {
        var rows: [RowValues] = []
        try expect(UInt8(ascii: "["))
        if try take(UInt8(ascii: "]")) { return rows }
        repeat { rows.append(try saveRow()) } while try take(UInt8(ascii: ","))
        try expect(UInt8(ascii: "]"))
        return rows
    }

    /// `[{"entity":…,"id":…}, …]`.
    mutating func saveReferences() throws -> [RowReference] {
        var references: [RowReference] = []
        try expect(UInt8(ascii: "["))
        if try take(UInt8(ascii: "]")) { return references }
        repeat {
            var entity: String?
            var id: UUID?
            try expect(UInt8(ascii: "{"))
            repeat {
                let key = try plainString()
                try expect(UInt8(ascii: ":"))
                switch key {
                case "entity" where entity == nil: entity = try saveString()
                case "id" where id == nil: id = try saveUUID()
                default: throw Unexpected()
                }
            } while try take(UInt8(ascii: ","))
            try expect(UInt8(ascii: "}"))
            guard let entity, let id else { throw Unexpected() }
            references.append(RowReference(entity: entity, id: id))
        } while try take(UInt8(ascii: ","))
        try expect(UInt8(ascii: "]"))
        return references
    }

    private mutating func saveRow() throws -> RowValues {
        var entity: String?
        var id: UUID?
        var values: [String: PGValue]?
        try expect(UInt8(ascii: "{"))
        repeat {
            let key = try plainString()
            try expect(UInt8(ascii: ":"))
            switch key {
            case "entity" where entity == nil: entity = try saveString()
            case "id" where id == nil: id = try saveUUID()
            case "values" where values == nil:
                var read: [String: PGValue] = [:]
                try expect(UInt8(ascii: "{"))
                if !(try take(UInt8(ascii: "}"))) {
                    repeat {
                        let name = try saveString()
                        try expect(UInt8(ascii: ":"))
                        // A repeated name: which one the general decoder keeps is its business.
                        guard read.updateValue(try saveValue(), forKey: name) == nil else { throw Unexpected() }
                    } while try take(UInt8(ascii: ","))
                    try expect(UInt8(ascii: "}"))
                }
                values = read
            default:
                throw Unexpected()
            }
        } while try take(UInt8(ascii: ","))
        try expect(UInt8(ascii: "}"))
        guard let entity, let id, let values else { throw Unexpected() }
        return RowValues(entity: entity, id: id, values: values)
    }

    /// A string, escapes included, whose bytes are valid UTF-8 (``string()`` alone would repair them).
    mutating func saveString() throws -> String {
        skipSpace()
        let start = position
        let text = try string()
        guard String(validating: UnsafeRawBufferPointer(rebasing: bytes[start..<position]), as: UTF8.self) != nil else {
            throw Unexpected()
        }
        return text
    }

    /// The canonical form only (36 characters, no escapes), read by hand: `UUID(uuidString:)` goes through
    /// `sscanf`. Every such string is one `UUID(uuidString:)` reads the same; any other form declines.
    private mutating func saveUUID() throws -> UUID {
        try uuid()
    }

    /// A value as PROTOCOL.md §5 writes it, within the subset above.
    private mutating func saveValue() throws -> PGValue {
        switch try peek() {
        case UInt8(ascii: "n"): try literal("null"); return .null
        case UInt8(ascii: "t"): try literal("true"); return .bool(true)
        case UInt8(ascii: "f"): try literal("false"); return .bool(false)
        case UInt8(ascii: "\""): return .string(try saveString())
        case UInt8(ascii: "{"):
            return try taggedValue(string: { try $0.saveString() }, double: { reader in
                guard let double = Double(try reader.jsonNumber().text), double.isFinite else { throw Unexpected() }
                return double
            })
        default:
            let (text, isInteger) = try jsonNumber()
            if isInteger {
                guard let integer = Int64(text) else { throw Unexpected() }
                return .int(integer)
            }
            guard let double = Double(text), double.isFinite, double.rounded() != double else { throw Unexpected() }
            return .double(double)
        }
    }

    /// A number literal exactly as JSON's grammar has it, `-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?`,
    /// and whether it is an integer literal (no fraction, no exponent).
    fileprivate mutating func jsonNumber() throws -> (text: String, isInteger: Bool) {
        skipSpace()
        let start = position
        func digits() -> Int {
            let first = position
            while position < bytes.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[position]) { position += 1 }
            return position - first
        }
        if position < bytes.count, bytes[position] == UInt8(ascii: "-") { position += 1 }
        let integerStart = position
        let integerDigits = digits()
        guard integerDigits > 0, integerDigits == 1 || bytes[integerStart] != UInt8(ascii: "0") else { throw Unexpected() }
        var isInteger = true
        if position < bytes.count, bytes[position] == UInt8(ascii: ".") {
            position += 1
            guard digits() > 0 else { throw Unexpected() }
            isInteger = false
        }
        if position < bytes.count, bytes[position] == UInt8(ascii: "e") || bytes[position] == UInt8(ascii: "E") {
            position += 1
            if position < bytes.count, bytes[position] == UInt8(ascii: "+") || bytes[position] == UInt8(ascii: "-") { position += 1 }
            guard digits() > 0 else { throw Unexpected() }
            isInteger = false
        }
        return (String(decoding: UnsafeRawBufferPointer(rebasing: bytes[start..<position]), as: UTF8.self), isInteger)
    }
}
