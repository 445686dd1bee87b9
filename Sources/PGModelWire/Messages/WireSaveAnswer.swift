import Foundation
import NIOCore
@_spi(PGModelInternals) import PGModelCore

/// The answer to a `save`, written by hand rather than through `JSONEncoder`: a save of many updates
/// answers with every updated row whole (`stored`, a `table` object), a line as large as a fetch's, and
/// the generic coders cost several times the save's own work there. ``JSONReader`` reads it back
/// (`response()`), and declines to the general decoder anything it does not write.
///
/// ```
/// {"deleted":[{"entity":"Track","id":"…"}],"id":9,"ok":true,"remapped":{},"stored":{"rows":[[0,"…","Paris",{"double":950}]],"shapes":[{"entity":"Trip","keys":["name","budget"]}]}}
/// ```
///
/// Keys are sorted and values written as §5 of PROTOCOL.md says, so the line is what `JSONEncoder`
/// writes for ``Response``'s `Codable` form of the same answer.
///
/// ```swift
/// let line = try WireSaveAnswer.encodeLine(id: 9, result: result)
/// ```
@_spi(PGModelInternals) public enum WireSaveAnswer {
    /// The response line (with its `"\n"`) answering request `id` with `result`. Throws for values JSON
    /// cannot carry (NaN, infinity), as `JSONEncoder` does.
    public static func encodeLine(id: RequestID?, result: SaveResult) throws -> Data {
        try writeLine(id: id, result: result).data
    }

    /// ``encodeLine(id:result:)`` as the buffer a channel writes, copied once from the writer's bytes.
    public static func encodeLineBuffer(id: RequestID?, result: SaveResult) throws -> ByteBuffer {
        ByteBuffer(bytes: try writeLine(id: id, result: result).bytes)
    }

    /// The keys in `JSONEncoder`'s sorted order: commitLSN, deleted, dropped, id, merged, ok, remapped, stored.
    private static func writeLine(id: RequestID?, result: SaveResult) throws -> JSONWriter {
        var writer = JSONWriter()
        writer.reserve(96 + (result.deleted.count + result.dropped.count + result.remappedIdentifiers.count) * 80
            + result.merged.count * 128 + (result.stored.rows.isEmpty ? 0 : WireTable.estimatedBytes(result.stored)))
        writer.byte(UInt8(ascii: "{"))
        if let commitLSN = result.commitLSN {
            writer.raw("\"commitLSN\":")
            writer.string(commitLSN.description)
            writer.byte(UInt8(ascii: ","))
        }
        if !result.deleted.isEmpty {
            writer.raw("\"deleted\":")
            try references(result.deleted, into: &writer)
            writer.byte(UInt8(ascii: ","))
        }
        if !result.dropped.isEmpty {
            writer.raw("\"dropped\":")
            try references(result.dropped, into: &writer)
            writer.byte(UInt8(ascii: ","))
        }
        writer.raw("\"id\":")
        WireTable.write(id, into: &writer)
        if !result.merged.isEmpty {
            writer.raw(",\"merged\":")
            try rows(result.merged, into: &writer)
        }
        writer.raw(",\"ok\":true,\"remapped\":{")
        let remapped = result.remappedIdentifiers.map { (old: $0.key.uuidString.lowercased(), new: $0.value) }.sorted { $0.old < $1.old }
        for (index, pair) in remapped.enumerated() {
            if index > 0 { writer.byte(UInt8(ascii: ",")) }
            writer.string(pair.old)
            writer.byte(UInt8(ascii: ":"))
            writer.uuidString(pair.new)
        }
        writer.byte(UInt8(ascii: "}"))
        if !result.stored.rows.isEmpty {
            writer.raw(",\"stored\":")
            try WireTable.writeBody(result.stored, into: &writer)
        }
        writer.raw("}\n")
        return writer
    }

    /// `[{"entity":…,"id":…}, …]`, with `"ancestor"` first where a reference has one (as ``WireReference``).
    private static func references(_ references: [RowReference], into writer: inout JSONWriter) throws {
        writer.byte(UInt8(ascii: "["))
        for (index, reference) in references.enumerated() {
            if index > 0 { writer.byte(UInt8(ascii: ",")) }
            writer.byte(UInt8(ascii: "{"))
            if let ancestor = reference.ancestor {
                try values(ancestor, key: "ancestor", into: &writer)
                writer.byte(UInt8(ascii: ","))
            }
            writer.raw("\"entity\":")
            writer.string(reference.entity)
            writer.raw(",\"id\":")
            writer.uuidString(reference.id)
            writer.byte(UInt8(ascii: "}"))
        }
        writer.byte(UInt8(ascii: "]"))
    }

    /// `[{"entity":…,"id":…,"values":{…}}, …]`, with `"ancestor"` and `"via"` where a row has them (as
    /// ``WireRow``).
    private static func rows(_ rows: [RowValues], into writer: inout JSONWriter) throws {
        writer.byte(UInt8(ascii: "["))
        for (index, row) in rows.enumerated() {
            if index > 0 { writer.byte(UInt8(ascii: ",")) }
            writer.byte(UInt8(ascii: "{"))
            if let ancestor = row.ancestor {
                try values(ancestor, key: "ancestor", into: &writer)
                writer.byte(UInt8(ascii: ","))
            }
            writer.raw("\"entity\":")
            writer.string(row.entity)
            writer.raw(",\"id\":")
            writer.uuidString(row.id)
            writer.byte(UInt8(ascii: ","))
            try values(row.values, key: "values", into: &writer)
            if let via = row.via {
                writer.raw(",\"via\":")
                writer.uuidString(via)
            }
            writer.byte(UInt8(ascii: "}"))
        }
        writer.byte(UInt8(ascii: "]"))
    }

    /// `"key":{…}`, the values in sorted key order.
    private static func values(_ values: [String: PGValue], key: StaticString, into writer: inout JSONWriter) throws {
        writer.byte(UInt8(ascii: "\""))
        writer.raw(key)
        writer.raw("\":{")
        for (position, entry) in values.sorted(by: { $0.key < $1.key }).enumerated() {
            if position > 0 { writer.byte(UInt8(ascii: ",")) }
            writer.string(entry.key)
            writer.byte(UInt8(ascii: ":"))
            try writer.value(entry.value)
        }
        writer.byte(UInt8(ascii: "}"))
    }
}
