import Foundation
import PGModelCore

/// Reads the JSON of a `table` response. Any surprise throws; the caller then leaves the line to the
/// general decoder, which reports precisely what is wrong.
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
        let text = String(decoding: UnsafeRawBufferPointer(rebasing: bytes[start..<position]), as: UTF8.self)
        if isInteger, !asDouble, let integer = Int64(text) { return .int(integer) }
        guard let double = Double(text), double.isFinite else { throw Unexpected() }
        return .double(double)
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
            guard let date = PGValue.parseDate(try string()) else { throw Unexpected() }
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
        guard position + 37 <= bytes.count, bytes[position + 36] == UInt8(ascii: "\"") else { throw Unexpected() }
        var raw: uuid_t = (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
        try withUnsafeMutableBytes(of: &raw) { out in
            var i = position
            for n in 0..<16 {
                if n == 4 || n == 6 || n == 8 || n == 10 {
                    guard bytes[i] == UInt8(ascii: "-") else { throw Unexpected() }
                    i += 1
                }
                out[n] = try Self.hexDigit(bytes[i]) << 4 | Self.hexDigit(bytes[i + 1])
                i += 2
            }
        }
        position += 37
        return UUID(uuid: raw)
    }

    private static func hexDigit(_ b: UInt8) throws -> UInt8 {
        switch b {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return b - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): return b - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): return b - UInt8(ascii: "A") + 10
        default: throw Unexpected()
        }
    }

    private mutating func table() throws -> FetchedTable {
        var table = FetchedTable()
        var hasVia = false
        var raw: [TableRow] = []
        try object { key, reader in
            switch key {
            case "rows":
                raw = try reader.tableRows()
            case "shapes":
                try reader.array { reader in
                    var entity: String?
                    var keys: [String]?
                    try reader.object { key, reader in
                        switch key {
                        case "entity": entity = try reader.string()
                        case "keys":
                            var list: [String] = []
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
        table.rows.reserveCapacity(raw.count)
        for var row in raw {
            var via: UUID?
            if hasVia {
                switch row.values.popLast() {
                case .string(let text)?:
                    guard let id = UUID(uuidString: text) else { throw Unexpected() }
                    via = id
                case .null?: via = nil
                default: throw Unexpected()
                }
            }
            guard row.shape >= 0, row.shape < table.shapes.count, row.values.count == table.shapes[row.shape].keys.count else {
                throw Unexpected()
            }
            table.rows.append(FetchedTable.Row(shape: row.shape, id: row.id, values: row.values, via: via))
        }
        return table
    }

    typealias TableRow = (shape: Int, id: UUID, values: [PGValue])

    /// The fewest bytes after `"rows":` for the rows to be read in two halves at once.
    static let parallelRowBytes = 1 << 19

    /// The `rows` array of a table: in two halves at once when the line is large (see ``rowSplit()``).
    mutating func tableRows() throws -> [TableRow] {
        guard let split = try rowSplit() else {
            var rows: [TableRow] = []
            try array { rows.append(try $0.tableRow()) }
            return rows
        }
        let bytes = bytes
        let start = position + 1
        let (first, second) = try ParallelPair.run(
            { try Self.tableRows(in: bytes, from: start, upTo: split) },
            { () throws -> ([TableRow], Int) in
                var reader = JSONReader(bytes)
                reader.position = split + 1
                var rows: [TableRow] = []
                try reader.elements { rows.append(try $0.tableRow()) }
                return (rows, reader.position)
            })
        position = second.1
        return first + second.0
    }

    /// The rows from `start` that end exactly at the comma at `end`.
    private static func tableRows(in bytes: UnsafeRawBufferPointer, from start: Int, upTo end: Int) throws -> [TableRow] {
        var reader = JSONReader(bytes)
        reader.position = start
        var rows: [TableRow] = []
        while true {
            rows.append(try reader.tableRow())
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

    /// One row of a table: `[shape, "id", value…]`.
    mutating func tableRow() throws -> TableRow {
        var shape = -1
        var id: UUID?
        var values: [PGValue] = []
        var index = 0
        try array { reader in
            switch index {
            case 0:
                guard case .int(let number) = try reader.number(), let position = Int(exactly: number) else { throw Unexpected() }
                shape = position
            case 1:
                id = try reader.uuid()
            default:
                values.append(try reader.value())
            }
            index += 1
        }
        guard let id else { throw Unexpected() }
        return (shape, id, values)
    }

    /// `{"id":…,"ok":true,"table":{…}}`, keys in any order, nothing else.
    mutating func response() throws -> Response {
        var id: RequestID?
        var ok = false
        var table: FetchedTable?
        try object { key, reader in
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
            default:
                throw Unexpected()
            }
        }
        skipSpace()
        guard ok, let table, position == bytes.count else { throw Unexpected() }
        return Response(id: id, .table(table))
    }
}
