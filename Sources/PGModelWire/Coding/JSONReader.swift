import Foundation
@_spi(PGModelInternals) import PGModelCore

/// Reads the JSON of a `table` response or a save's answer. Any surprise throws; the caller then leaves
/// the line to the general decoder, which reports precisely what is wrong.
struct JSONReader {
    struct Unexpected: Error {}

    let bytes: UnsafeRawBufferPointer
    var position = 0

    init(_ bytes: UnsafeRawBufferPointer) { self.bytes = bytes }

    mutating func skipSpace() {
        while position < bytes.count {
            switch bytes[position] {
            case 0x20, 0x09, 0x0A, 0x0D: position += 1
            default: return
            }
        }
    }

    mutating func peek() throws -> UInt8 {
        skipSpace()
        guard position < bytes.count else { throw Unexpected() }
        return bytes[position]
    }

    mutating func expect(_ b: UInt8) throws {
        guard try peek() == b else { throw Unexpected() }
        position += 1
    }

    /// Consumes `b` if it comes next.
    mutating func take(_ b: UInt8) throws -> Bool {
        guard try peek() == b else { return false }
        position += 1
        return true
    }

    mutating func literal(_ text: StaticString) throws {
        let count = text.utf8CodeUnitCount
        guard position + count <= bytes.count else { throw Unexpected() }
        let matches = text.withUTF8Buffer { expected in
            (0..<count).allSatisfy { bytes[position + $0] == expected[$0] }
        }
        guard matches else { throw Unexpected() }
        position += count
    }

    /// Calls `body` for each element of an array.
    mutating func array(_ body: (inout JSONReader) throws -> Void) throws {
        try expect(UInt8(ascii: "["))
        if try take(UInt8(ascii: "]")) { return }
        try elements(body)
    }

    /// Calls `body` for each element of a non-empty array whose `[` was read, then reads its `]`.
    mutating func elements(_ body: (inout JSONReader) throws -> Void) throws {
        repeat { try body(&self) } while try take(UInt8(ascii: ","))
        try expect(UInt8(ascii: "]"))
    }

    /// Calls `body` with each key of an object, positioned at its value.
    mutating func object(_ body: (String, inout JSONReader) throws -> Void) throws {
        try expect(UInt8(ascii: "{"))
        if try take(UInt8(ascii: "}")) { return }
        repeat {
            let key = try string()
            try expect(UInt8(ascii: ":"))
            try body(key, &self)
        } while try take(UInt8(ascii: ","))
        try expect(UInt8(ascii: "}"))
    }

    mutating func string() throws -> String {
        try expect(UInt8(ascii: "\""))
        let start = position
        // Fast path: no escapes.
        while position < bytes.count {
            let b = bytes[position]
            if b == UInt8(ascii: "\"") {
                let text = String(decoding: UnsafeRawBufferPointer(rebasing: bytes[start..<position]), as: UTF8.self)
                position += 1
                return text
            }
            if b == UInt8(ascii: "\\") { break }
            guard b >= 0x20 else { throw Unexpected() }
            position += 1
        }
        var utf8 = Array(bytes[start..<position])
        while position < bytes.count {
            let b = bytes[position]
            position += 1
            switch b {
            case UInt8(ascii: "\""):
                return String(decoding: utf8, as: UTF8.self)
            case UInt8(ascii: "\\"):
                guard position < bytes.count else { throw Unexpected() }
                let escaped = bytes[position]
                position += 1
                switch escaped {
                case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): utf8.append(escaped)
                case UInt8(ascii: "n"): utf8.append(0x0A)
                case UInt8(ascii: "r"): utf8.append(0x0D)
                case UInt8(ascii: "t"): utf8.append(0x09)
                case UInt8(ascii: "b"): utf8.append(0x08)
                case UInt8(ascii: "f"): utf8.append(0x0C)
                case UInt8(ascii: "u"):
                    var scalar = try hex4()
                    if (0xD800..<0xDC00).contains(scalar) {
                        // A high surrogate must be followed by an escaped low one.
                        try literal("\\u")
                        let low = try hex4()
                        guard (0xDC00..<0xE000).contains(low) else { throw Unexpected() }
                        scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
                    }
                    guard let unicode = Unicode.Scalar(scalar) else { throw Unexpected() }
                    utf8.append(contentsOf: String(Character(unicode)).utf8)
                default:
                    throw Unexpected()
                }
            default:
                guard b >= 0x20 else { throw Unexpected() }
                utf8.append(b)
            }
        }
        throw Unexpected()
    }

    /// The bytes of the string that comes next, consumed, when it has no escapes and is short (a
    /// date's length); nil, consuming nothing, otherwise.
    mutating func plainStringBytes() throws -> UnsafeRawBufferPointer? {
        guard try peek() == UInt8(ascii: "\"") else { throw Unexpected() }
        let start = position + 1
        var end = start
        while end < bytes.count, end - start <= 40 {
            let b = bytes[end]
            if b == UInt8(ascii: "\"") {
                position = end + 1
                return UnsafeRawBufferPointer(rebasing: bytes[start..<end])
            }
            guard b != UInt8(ascii: "\\"), b >= 0x20 else { return nil }
            end += 1
        }
        return nil
    }

    private mutating func hex4() throws -> UInt32 {
        guard position + 4 <= bytes.count else { throw Unexpected() }
        var value: UInt32 = 0
        for _ in 0..<4 {
            let b = bytes[position]
            position += 1
            let digit: UInt8
            switch b {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = b - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = b - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = b - UInt8(ascii: "A") + 10
            default: throw Unexpected()
            }
            value = value << 4 | UInt32(digit)
        }
        return value
    }

    /// A JSON number: an integer when it has no fraction or exponent and fits, else a double. `asDouble`
    /// reads it as a double whatever its form: a tagged double's `-0` is negative zero, not the integer 0.
    private mutating func number(asDouble: Bool = false) throws -> PGValue {
        skipSpace()
        let start = position
        var isInteger = true
        while position < bytes.count, Self.isNumberByte(bytes[position]) {
            switch bytes[position] {
            case UInt8(ascii: "."), UInt8(ascii: "e"), UInt8(ascii: "E"): isInteger = false
            default: break
            }
            position += 1
        }
        guard position > start else { throw Unexpected() }
        let span = UnsafeRawBufferPointer(rebasing: bytes[start..<position])
        if isInteger, !asDouble, let integer = Self.shortInteger(span) { return .int(integer) }
        if let double = Self.exactDouble(span) { return .double(double) }
        let text = String(decoding: span, as: UTF8.self)
        if isInteger, !asDouble, let integer = Int64(text) { return .int(integer) }
        guard let double = Double(text), double.isFinite else { throw Unexpected() }
        return .double(double)
    }

    /// `-?[0-9]{1,18}`, which cannot overflow Int64; nil for anything else (the caller then parses the text).
    static func shortInteger(_ span: UnsafeRawBufferPointer) -> Int64? {
        var index = 0
        let negative = span.first == UInt8(ascii: "-")
        if negative { index = 1 }
        let digits = span.count - index
        guard digits > 0, digits <= 18 else { return nil }
        var value: Int64 = 0
        while index < span.count {
            let digit = span[index] &- UInt8(ascii: "0")
            guard digit < 10 else { return nil }
            value = value &* 10 &+ Int64(digit)
            index += 1
        }
        return negative ? -value : value
    }

    /// Exact powers of ten a Double holds: 10^22 is the largest.
    private static let exactPowersOfTen: [Double] = [
        1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11,
        1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22,
    ]

    /// `-?digits(.digits)?([eE][+-]?digits)?` as a Double, when its digits form an integer of at most 2^53
    /// and its power of ten is within ±22: then both are exact Doubles and one multiplication or division,
    /// which IEEE 754 rounds correctly, gives the correctly rounded value (Clinger's fast path), as
    /// `strtod` would. Nil otherwise (longer mantissas, larger exponents, anything malformed): the caller
    /// then parses the text. Values with short decimal forms (prices, measurements) take this path; the
    /// 17-digit shortest forms of arbitrary doubles mostly do not.
    static func exactDouble(_ span: UnsafeRawBufferPointer) -> Double? {
        var index = 0
        let count = span.count
        let negative = count > 0 && span[0] == UInt8(ascii: "-")
        if negative { index = 1 }
        var mantissa: UInt64 = 0
        var digits = 0
        var fractionDigits = 0
        var seenPoint = false
        let limit: UInt64 = 1 << 53
        while index < count {
            let byte = span[index]
            let digit = byte &- UInt8(ascii: "0")
            if digit < 10 {
                // Past 2^53 the mantissa would not be exact; stop well before UInt64 could overflow.
                mantissa = mantissa &* 10 &+ UInt64(digit)
                guard mantissa <= limit else { return nil }
                digits += 1
                if seenPoint { fractionDigits += 1 }
            } else if byte == UInt8(ascii: "."), !seenPoint {
                seenPoint = true
                guard digits > 0 else { return nil }
            } else {
                break
            }
            index += 1
        }
        guard digits > 0, !seenPoint || fractionDigits > 0 else { return nil }
        var exponent = 0
        if index < count {
            guard span[index] == UInt8(ascii: "e") || span[index] == UInt8(ascii: "E") else { return nil }
            index += 1
            var exponentNegative = false
            if index < count, span[index] == UInt8(ascii: "+") || span[index] == UInt8(ascii: "-") {
                exponentNegative = span[index] == UInt8(ascii: "-")
                index += 1
            }
            var exponentDigits = 0
            while index < count {
                let digit = span[index] &- UInt8(ascii: "0")
                guard digit < 10, exponentDigits < 4 else { return nil }
                exponent = exponent * 10 + Int(digit)
                exponentDigits += 1
                index += 1
            }
            guard exponentDigits > 0 else { return nil }
            if exponentNegative { exponent = -exponent }
        }
        let power = exponent - fractionDigits
        guard power >= -22, power <= 22 else { return nil }
        var value = Double(mantissa)
        value = power < 0 ? value / exactPowersOfTen[-power] : value * exactPowersOfTen[power]
        return negative ? -value : value
    }

    private static func isNumberByte(_ b: UInt8) -> Bool {
        switch b {
        case UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "+"), UInt8(ascii: "."), UInt8(ascii: "e"), UInt8(ascii: "E"): return true
        default: return false
        }
    }

    /// A value as §5 of PROTOCOL.md writes it. `strict` reads numbers as ``RequestFastDecoder`` must:
    /// only those the general decoder could not read otherwise (`RequestFastDecoder+Save.swift`).
    mutating func value(strict: Bool = false) throws -> PGValue {
        switch try peek() {
        case UInt8(ascii: "n"): try literal("null"); return .null
        case UInt8(ascii: "t"): try literal("true"); return .bool(true)
        case UInt8(ascii: "f"): try literal("false"); return .bool(false)
        case UInt8(ascii: "\""): return .string(try string())
        case UInt8(ascii: "{"):
            return try taggedValue(double: { reader in
                if strict { return try reader.strictTaggedDouble() }
                guard case .double(let d) = try reader.number(asDouble: true) else { throw Unexpected() }
                return d
            })
        default:
            return strict ? try strictNumber() : try number()
        }
    }

    /// A tagged value, `{"double"|"date"|"uuid"|"decimal"|"data": …}`, its double read with the caller's
    /// reader (the save reader's is stricter than a response's).
    mutating func taggedValue(double readDouble: (inout JSONReader) throws -> Double) throws -> PGValue {
        try expect(UInt8(ascii: "{"))
        let tag = try string()
        try expect(UInt8(ascii: ":"))
        let value: PGValue
        switch tag {
        case "double":
            value = .double(try readDouble(&self))
        case "date":
            // Read where it lies when it has no escapes (§5's dates never have): no String per date.
            let date: Date?
            if let plain = try plainStringBytes() {
                date = plain.withMemoryRebound(to: UInt8.self) { PGValue.fastParseDate(utf8: $0) }
                    ?? PGValue.parseDate(String(decoding: plain, as: UTF8.self))
            } else {
                date = PGValue.parseDate(try string())
            }
            guard let date else { throw Unexpected() }
            value = .date(date)
        case "uuid":
            guard let uuid = UUID(uuidString: try string()) else { throw Unexpected() }
            value = .uuid(uuid)
        case "decimal":
            guard let decimal = Decimal(string: try string(), locale: Locale(identifier: "en_US_POSIX")) else { throw Unexpected() }
            value = .decimal(decimal)
        case "data":
            guard let data = Data(base64Encoded: try string()) else { throw Unexpected() }
            value = .data(data)
        default:
            throw Unexpected()
        }
        try expect(UInt8(ascii: "}"))
        return value
    }

    /// A quoted UUID, read by hand: `UUID(uuidString:)` goes through `sscanf`, a microsecond a row.
    mutating func uuid() throws -> UUID {
        try expect(UInt8(ascii: "\""))
        let start = position
        guard start + 37 <= bytes.count, bytes[start + 36] == UInt8(ascii: "\""),
              bytes[start + 8] == UInt8(ascii: "-"), bytes[start + 13] == UInt8(ascii: "-"),
              bytes[start + 18] == UInt8(ascii: "-"), bytes[start + 23] == UInt8(ascii: "-") else { throw Unexpected() }
        var raw: uuid_t = (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
        // Any byte that is not a hex digit reads as 0xFF: one check of all of them at the end.
        var invalid: UInt8 = 0
        withUnsafeMutableBytes(of: &raw) { out in
            var i = start
            for n in 0..<16 {
                if n == 4 || n == 6 || n == 8 || n == 10 { i += 1 }
                let high = Self.hexValue(bytes[i])
                let low = Self.hexValue(bytes[i + 1])
                invalid |= high | low
                out[n] = high << 4 | low
                i += 2
            }
        }
        guard invalid & 0xF0 == 0 else { throw Unexpected() }
        position = start + 37
        return UUID(uuid: raw)
    }

    /// The value of hex digit `b` (either case), or 0xFF.
    @inline(__always)
    static func hexValue(_ b: UInt8) -> UInt8 {
        let digit = b &- UInt8(ascii: "0")
        if digit < 10 { return digit }
        let letter = (b | 0x20) &- UInt8(ascii: "a")
        return letter < 6 ? letter &+ 10 : 0xFF
    }

    private mutating func table() throws -> FetchedTable {
        var table = FetchedTable()
        var hasVia = false
        try object { key, reader in
            switch key {
            case "rows":
                table.rows = try reader.tableRows()
            case "shapes":
                try reader.array { reader in
                    var entity: String?
                    var keys: [String]?
                    try reader.object { key, reader in
                        switch key {
                        case "entity": entity = try reader.string()
                        case "keys":
                            var list: [String] = []
                            // One allocation for the usual model instead of five growing ones.
                            list.reserveCapacity(16)
                            try reader.array { list.append(try $0.string()) }
                            keys = list
                        default: throw Unexpected()
                        }
                    }
                    guard let entity, let keys else { throw Unexpected() }
                    table.shapes.append(FetchedTable.Shape(entity: entity, keys: keys))
                }
            case "via":
                guard case .bool(let flag) = try reader.value() else { throw Unexpected() }
                hasVia = flag
            default:
                throw Unexpected()
            }
        }
        // The shapes come after the rows (keys are sorted), so rows are checked against them once all is
        // read, in place: the rows were read into their final array, and are not copied again.
        let keyCounts = table.shapes.map(\.keys.count)
        for index in table.rows.indices {
            if hasVia {
                switch table.rows[index].values.popLast() {
                case .string(let text)?:
                    guard let id = UUID(uuidString: text) else { throw Unexpected() }
                    table.rows[index].via = id
                case .null?: break
                default: throw Unexpected()
                }
            }
            let shape = table.rows[index].shape
            guard shape >= 0, shape < keyCounts.count, table.rows[index].values.count == keyCounts[shape] else {
                throw Unexpected()
            }
        }
        return table
    }

    /// The fewest bytes after `"rows":` for the rows to be read in two halves at once.
    static let parallelRowBytes = 1 << 19

    /// The `rows` array of a table: in two halves at once when the line is large (see ``rowSplit()``).
    mutating func tableRows() throws -> [FetchedTable.Row] {
        guard let split = try rowSplit() else {
            var rows: [FetchedTable.Row] = []
            var width = Self.firstRowWidth
            try array { rows.append(try $0.tableRow(width: &width)) }
            return rows
        }
        let bytes = bytes
        let start = position + 1
        let (first, second) = try ParallelPair.run(
            { try Self.tableRows(in: bytes, from: start, upTo: split) },
            { () throws -> ([FetchedTable.Row], Int) in
                var reader = JSONReader(bytes)
                reader.position = split + 1
                var rows: [FetchedTable.Row] = []
                var width = Self.firstRowWidth
                try reader.elements { rows.append(try $0.tableRow(width: &width)) }
                return (rows, reader.position)
            })
        position = second.1
        // The first half's buffer is unique, so it grows by moving its rows, not copying them.
        var rows = first
        rows.append(contentsOf: second.0)
        return rows
    }

    /// The rows from `start` that end exactly at the comma at `end`.
    private static func tableRows(in bytes: UnsafeRawBufferPointer, from start: Int, upTo end: Int) throws -> [FetchedTable.Row] {
        var reader = JSONReader(bytes)
        reader.position = start
        var rows: [FetchedTable.Row] = []
        var width = Self.firstRowWidth
        while true {
            rows.append(try reader.tableRow(width: &width))
            reader.skipSpace()
            if reader.position == end { return rows }
            guard reader.position < end, try reader.take(UInt8(ascii: ",")) else { throw Unexpected() }
        }
    }

    /// Where a large `rows` array (the reader at its `[`) can be cut in two: the first comma between two
    /// rows past the middle of what is left of the line; nil for a small array, or one that ends first.
    ///
    /// The scan knows only brackets, braces and strings (a backslash escapes the next byte, a quote
    /// ends), which is how the strict reader delimits them, so a string holding `],[` cannot move the
    /// cut: and each half must then read as whole rows ending exactly at the cut, or the line is refused.
    mutating func rowSplit() throws -> Int? {
        guard try peek() == UInt8(ascii: "["), bytes.count - position >= Self.parallelRowBytes else { return nil }
        let middle = position + (bytes.count - position) / 2
        var index = position + 1
        var depth = 1
        while index < bytes.count {
            let b = bytes[index]
            switch b {
            case UInt8(ascii: "\""):
                // To the quote that ends the string: the next one not escaped, that is not after an odd
                // run of backslashes inside the string. memchr finds quotes many bytes at a time.
                guard let base = bytes.baseAddress else { return nil }
                let opened = index + 1
                var from = opened
                while true {
                    guard let found = memchr(base + from, Int32(UInt8(ascii: "\"")), bytes.count - from) else { return nil }
                    let quote = UnsafeRawPointer(found) - base
                    var backslashes = 0
                    while quote - backslashes - 1 >= opened, bytes[quote - backslashes - 1] == UInt8(ascii: "\\") { backslashes += 1 }
                    if backslashes % 2 == 0 {
                        index = quote
                        break
                    }
                    from = quote + 1
                }
            case UInt8(ascii: "["), UInt8(ascii: "{"):
                depth += 1
            case UInt8(ascii: "]"), UInt8(ascii: "}"):
                depth -= 1
                if depth == 0 { return nil }
            case UInt8(ascii: ",") where depth == 1 && index >= middle:
                return index
            default:
                break
            }
            index += 1
        }
        return nil
    }

    /// How many values the first row's array holds at once: the row's shape comes after the rows, and
    /// growing from empty to a usual model's ten values takes five allocations (a point fetch's only row).
    static let firstRowWidth = 16

    /// One row of a table: `[shape, "id", value…]`, checked against its shape by the caller. `width` is
    /// the previous row's number of values (``firstRowWidth`` for the first): the next one's array is
    /// made that large at once, instead of growing through five allocations to hold ten values.
    mutating func tableRow(width: inout Int) throws -> FetchedTable.Row {
        try expect(UInt8(ascii: "["))
        guard let shape = Int(exactly: try integer()) else { throw Unexpected() }
        try expect(UInt8(ascii: ","))
        let id = try uuid()
        var values: [PGValue] = []
        values.reserveCapacity(width)
        while try take(UInt8(ascii: ",")) {
            values.append(try value())
        }
        try expect(UInt8(ascii: "]"))
        width = values.count
        return FetchedTable.Row(shape: shape, id: id, values: values)
    }

    /// `{"id":…,"ok":true,"table":{…}}` (a fetch's table) or `{"id":…,"ok":true,"remapped":{…}, …}` (a save's
    /// answer, as ``WireSaveAnswer`` writes it), keys in any order, each once, nothing else.
    mutating func response() throws -> Response {
        var id: RequestID?
        var ok = false
        var table: FetchedTable?
        var remapped: [UUID: UUID]?
        var save = SaveResult()
        var seen = Set<String>()
        try object { key, reader in
            guard seen.insert(key).inserted else { throw Unexpected() }
            switch key {
            case "id":
                switch try reader.peek() {
                case UInt8(ascii: "n"): try reader.literal("null"); id = nil
                case UInt8(ascii: "\""):
                    let text = try reader.string()
                    guard text.utf8.count <= WireProtocol.maxStringIDBytes else { throw Unexpected() }
                    id = .string(text)
                default:
                    guard case .int(let number) = try reader.number() else { throw Unexpected() }
                    id = .int(number)
                }
            case "ok":
                guard case .bool(true) = try reader.value() else { throw Unexpected() }
                ok = true
            case "table":
                table = try reader.table()
            case "remapped":
                var map: [UUID: UUID] = [:]
                try reader.object { old, reader in
                    guard let oldID = UUID(uuidString: old), map[oldID] == nil else { throw Unexpected() }
                    map[oldID] = try reader.uuid()
                }
                remapped = map
            case "deleted":
                save.deleted = try reader.references()
            case "dropped":
                save.dropped = try reader.references()
            case "merged":
                try reader.array { reader in save.merged.append(try reader.namedRow()) }
            case "stored":
                save.stored = try reader.table()
            case "commitLSN":
                guard let position = LogSequenceNumber(try reader.string()) else { throw Unexpected() }
                save.commitLSN = position
            default:
                throw Unexpected()
            }
        }
        skipSpace()
        guard ok, position == bytes.count else { throw Unexpected() }
        let isSave = !seen.isDisjoint(with: ["remapped", "deleted", "dropped", "merged", "stored", "commitLSN"])
        if let table, !isSave { return Response(id: id, .table(table)) }
        guard table == nil, let remapped else { throw Unexpected() }
        save.remappedIdentifiers = remapped
        return Response(id: id, .saved(save))
    }

    /// `[{"entity":…,"id":…}, …]`: a save answer's `deleted` or `dropped`.
    private mutating func references() throws -> [RowReference] {
        var references: [RowReference] = []
        try array { reader in
            var entity: String?
            var id: UUID?
            try reader.object { key, reader in
                switch key {
                case "entity" where entity == nil: entity = try reader.string()
                case "id" where id == nil: id = try reader.uuid()
                default: throw Unexpected()
                }
            }
            guard let entity, let id else { throw Unexpected() }
            references.append(RowReference(entity: entity, id: id))
        }
        return references
    }

    /// `{"entity":…,"id":…,"values":{…}}`: a save answer's `merged` row.
    private mutating func namedRow() throws -> RowValues {
        var entity: String?
        var id: UUID?
        var values: [String: PGValue]?
        try object { key, reader in
            switch key {
            case "entity" where entity == nil: entity = try reader.string()
            case "id" where id == nil: id = try reader.uuid()
            case "values" where values == nil:
                var read: [String: PGValue] = [:]
                try reader.object { name, reader in
                    guard read[name] == nil else { throw Unexpected() }
                    read[name] = try reader.value()
                }
                values = read
            default: throw Unexpected()
            }
        }
        guard let entity, let id, let values else { throw Unexpected() }
        return RowValues(entity: entity, id: id, values: values)
    }
}
