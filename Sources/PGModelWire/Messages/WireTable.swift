import Foundation
import NIOCore
@_spi(PGModelInternals) import PGModelCore

/// The `table` answer of a `fetch` with `"format":"table"`, written and read by hand rather than through
/// `JSONEncoder`/`JSONDecoder` and `Codable`: it is the one line that can hold millions of values, and
/// there the generic coders cost several times the database's own work.
///
/// ```
/// {"id":4,"ok":true,"table":{"rows":[[0,"0193…","Paris",120.5,{"date":"2024-05-01T10:00:00.000Z"}]],"shapes":[{"entity":"Trip","keys":["name","perdiem","startDate"]}]}}
/// ```
///
/// Values are written exactly as §5 of PROTOCOL.md says (the encoding of ``PGValue``), keys sorted,
/// so the line is what `JSONEncoder` would have written for the same structure.
///
/// ```swift
/// let line = try WireTable.encodeLine(id: 4, table: table)
/// let response = WireTable.decodeLine(line.dropLast())   // Response(id: 4, .table(table))
/// ```
@_spi(PGModelInternals) public enum WireTable {
    /// The response line (with its `"\n"`) answering request `id` with `table`. Throws for values JSON
    /// cannot carry (NaN, infinity), as `JSONEncoder` does.
    public static func encodeLine(id: RequestID?, table: FetchedTable) throws -> Data {
        try writeLine(id: id, table: table).data
    }

    /// ``encodeLine(id:table:)`` as the buffer a channel writes, copied once from the writer's bytes.
    public static func encodeLineBuffer(id: RequestID?, table: FetchedTable) throws -> ByteBuffer {
        ByteBuffer(bytes: try writeLine(id: id, table: table).bytes)
    }

    private static func writeLine(id: RequestID?, table: FetchedTable) throws -> JSONWriter {
        var writer = JSONWriter()
        writer.reserve(64 + estimatedBytes(table))
        writer.raw("{\"id\":")
        write(id, into: &writer)
        writer.raw(",\"ok\":true,\"table\":")
        try writeBody(table, into: &writer)
        writer.raw("}\n")
        return writer
    }

    /// A response's `id`, or `null`.
    static func write(_ id: RequestID?, into writer: inout JSONWriter) {
        switch id {
        case nil: writer.raw("null")
        case .int(let number)?: writer.integer(number)
        case .string(let text)?: writer.string(text)
        }
    }

    /// About how many bytes `table`'s object takes: its rows, and its shapes (a point fetch's line is
    /// mostly its one shape, and growing the buffer copies it).
    static func estimatedBytes(_ table: FetchedTable) -> Int {
        table.shapes.reduce(0) { $0 + 32 + $1.entity.utf8.count + 24 * $1.keys.count } + table.rows.count * estimatedRowBytes(table)
    }

    /// The `table` object, `{"rows":[…],"shapes":[…]}` (and `"via":true` when a row has one), as
    /// ``WireTableBody`` encodes it: a fetch's `table` answer, and a save's `stored` rows.
    static func writeBody(_ table: FetchedTable, into writer: inout JSONWriter) throws {
        let rowBytes = estimatedRowBytes(table)
        writer.raw("{\"rows\":[")
        let hasVia = table.rows.contains { $0.via != nil }
        if table.rows.count >= parallelRows {
            // Two halves written at once; each is valid JSON elements, joined by a comma.
            let middle = table.rows.count / 2
            let (first, second) = try ParallelPair.run(
                { try rowsJSON(table.rows[..<middle], hasVia: hasVia, rowBytes: rowBytes) },
                { try rowsJSON(table.rows[middle...], hasVia: hasVia, rowBytes: rowBytes) })
            writer.append(first)
            writer.byte(UInt8(ascii: ","))
            writer.append(second)
        } else {
            try writeRows(table.rows[...], hasVia: hasVia, into: &writer)
        }
        writer.raw("],\"shapes\":[")
        for (n, shape) in table.shapes.enumerated() {
            if n > 0 { writer.byte(UInt8(ascii: ",")) }
            writer.raw("{\"entity\":")
            writer.string(shape.entity)
            writer.raw(",\"keys\":[")
            for (k, key) in shape.keys.enumerated() {
                if k > 0 { writer.byte(UInt8(ascii: ",")) }
                writer.string(key)
            }
            writer.raw("]}")
        }
        writer.raw(hasVia ? "],\"via\":true}" : "]}")
    }

    /// The fewest rows a table needs for its line to be written, and read, in two halves at once: a large
    /// answer written or read on one thread leaves the other cores idle.
    static let parallelRows = 8_192

    /// A generous guess at a row's bytes (its id and brackets, then 16 per value), so a writer seldom
    /// grows, and copies what it wrote, while it writes.
    private static func estimatedRowBytes(_ table: FetchedTable) -> Int {
        24 + 48 + 16 * (table.shapes.first?.keys.count ?? 4)
    }

    private static func rowsJSON(_ rows: ArraySlice<FetchedTable.Row>, hasVia: Bool, rowBytes: Int) throws -> JSONWriter {
        var writer = JSONWriter()
        writer.reserve(rows.count * rowBytes)
        try writeRows(rows, hasVia: hasVia, into: &writer)
        return writer
    }

    /// `rows` as comma-separated JSON arrays (no brackets around them).
    private static func writeRows(_ rows: ArraySlice<FetchedTable.Row>, hasVia: Bool, into writer: inout JSONWriter) throws {
        var first = true
        for row in rows {
            if !first { writer.byte(UInt8(ascii: ",")) }
            first = false
            writer.byte(UInt8(ascii: "["))
            writer.integer(Int64(row.shape))
            writer.byte(UInt8(ascii: ","))
            writer.uuidString(row.id)
            for value in row.values {
                writer.byte(UInt8(ascii: ","))
                try writer.value(value)
            }
            if hasVia {
                writer.byte(UInt8(ascii: ","))
                if let via = row.via { writer.uuidString(via) } else { writer.raw("null") }
            }
            writer.byte(UInt8(ascii: "]"))
        }
    }

    /// The response in `line` (without its `"\n"`) when it is a successful `table` answer of exactly the
    /// form ``encodeLine(id:table:)`` writes, or a save's answer of the form ``WireSaveAnswer`` writes
    /// (keys in any order); `nil` for any other line, which the general decoder then reads. A `table`
    /// whose rows do not match their shapes is `nil` too, so the general decoder reports it.
    public static func decodeLine(_ line: Data) -> Response? {
        line.withUnsafeBytes { decodeLine(bytes: $0) }
    }

    /// ``decodeLine(_:)`` of the line in `bytes` (without its `"\n"`), wherever they are.
    public static func decodeLine(bytes: UnsafeRawBufferPointer) -> Response? {
        var reader = JSONReader(bytes)
        return try? reader.response()
    }
}
