import Foundation
@_spi(PGModelInternals) import PGModelCore

/// A `save`'s rows and references, read by hand: `JSONDecoder` on a bulk save's line (its keyed
/// containers and a `PGValue` tried as five types in turn) was most of what a bulk save through the
/// service cost beyond the direct store's.
///
/// The subset: rows `{"entity":…,"id":…,"values":{…}}` (no `via`, no other or repeated key, in any order),
/// references `{"entity":…,"id":…}`, strings with escapes (the line is valid UTF-8), values as PROTOCOL.md
/// §5 writes them. A number is taken when the general decoder cannot read it otherwise: an integer literal within
/// Int64, or a literal with a fraction or an exponent whose value is finite and not whole (a whole one,
/// `1.0` or `1e3`, is left to the general decoder, which may read it as an integer). Anything else declines
/// the whole line.
extension JSONReader {
    /// `[row, …]`.
    ///
    /// Rows are positional, and consecutive rows with the same value names in the same order (a bulk save's
    /// rows, written by one client) share one ``RowKeys``: no dictionary per row here, and the store
    /// checks and places each class's names once (`SaveRequest.validate`, the set-based insert).
    mutating func saveRows() throws -> [RowValues] {
        var rows: [RowValues] = []
        var keys: RowKeys?
        try array { rows.append(try $0.saveRow(sharing: &keys)) }
        return rows
    }

    /// `[{"entity":…,"id":…}, …]`, each with an optional `"ancestor":{…}`.
    mutating func saveReferences() throws -> [RowReference] {
        var references: [RowReference] = []
        try array { reader in
            var entity: String?
            var id: UUID?
            var ancestor: [String: PGValue]?
            try reader.object { key, reader in
                switch key {
                case "entity" where entity == nil: entity = try reader.string()
                case "id" where id == nil: id = try reader.uuid()
                case "ancestor" where ancestor == nil: ancestor = try reader.ancestorValues()
                default: throw Unexpected()
                }
            }
            guard let entity, let id else { throw Unexpected() }
            references.append(RowReference(entity: entity, id: id, ancestor: ancestor))
        }
        return references
    }

    /// A row; its id in the canonical form only (36 characters, no escapes), which ``uuid()`` reads as
    /// `UUID(uuidString:)` would, without its `sscanf`.
    private mutating func saveRow(sharing keys: inout RowKeys?) throws -> RowValues {
        var entity: String?
        var id: UUID?
        var values: [PGValue]?
        var rowKeys: RowKeys?
        var ancestor: [String: PGValue]?
        try object { key, reader in
            switch key {
            case "ancestor" where ancestor == nil: ancestor = try reader.ancestorValues()
            case "entity" where entity == nil: entity = try reader.string()
            case "id" where id == nil: id = try reader.uuid()
            case "values" where values == nil:
                let expected = keys?.names.count ?? 0
                var names: [String] = []
                var read: [PGValue] = []
                names.reserveCapacity(expected)
                read.reserveCapacity(expected)
                try reader.object { name, reader in
                    names.append(name)
                    read.append(try reader.value(strict: true))
                }
                if let shared = keys, shared.names == names {
                    rowKeys = shared
                } else {
                    let fresh = RowKeys(names)
                    // A repeated name: which one the general decoder keeps is its business.
                    guard fresh.positions.count == names.count else { throw Unexpected() }
                    keys = fresh
                    rowKeys = fresh
                }
                values = read
            default:
                throw Unexpected()
            }
        }
        guard let entity, let id, let values, let rowKeys else { throw Unexpected() }
        var row = RowValues(entity: entity, id: id, keys: rowKeys, values: values)
        row.ancestor = ancestor
        return row
    }

    /// `{"name": value, …}`: the values a client read, each name once.
    private mutating func ancestorValues() throws -> [String: PGValue] {
        var values: [String: PGValue] = [:]
        try object { name, reader in
            guard values[name] == nil else { throw Unexpected() }
            values[name] = try reader.value(strict: true)
        }
        return values
    }

    /// A tagged double's number: any finite literal in JSON's grammar.
    mutating func strictTaggedDouble() throws -> Double {
        guard let double = Self.double(try jsonNumber().span), double.isFinite else { throw Unexpected() }
        return double
    }

    /// An untagged number: an integer literal within Int64, or a finite value that is not whole.
    mutating func strictNumber() throws -> PGValue {
        let (span, isInteger) = try jsonNumber()
        if isInteger {
            guard let integer = Self.integer(span) else { throw Unexpected() }
            return .int(integer)
        }
        guard let double = Self.double(span), double.isFinite, double.rounded() != double else { throw Unexpected() }
        return .double(double)
    }

    /// An integer literal's Int64, nil when out of range (``JSONReader/shortInteger(_:)`` when that answers).
    static func integer(_ span: UnsafeRawBufferPointer) -> Int64? {
        shortInteger(span) ?? Int64(String(decoding: span, as: UTF8.self))
    }

    /// A number literal's Double, as `strtod` reads it (``JSONReader/exactDouble(_:)`` when that answers).
    private static func double(_ span: UnsafeRawBufferPointer) -> Double? {
        exactDouble(span) ?? Double(String(decoding: span, as: UTF8.self))
    }

    /// A number literal exactly as JSON's grammar has it, `-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?`,
    /// and whether it is an integer literal (no fraction, no exponent).
    private mutating func jsonNumber() throws -> (span: UnsafeRawBufferPointer, isInteger: Bool) {
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
        return (UnsafeRawBufferPointer(rebasing: bytes[start..<position]), isInteger)
    }
}
