import Foundation
@_spi(PGModelInternals) import PGModelCore

/// The `table` object through `Codable`, for coders other than ``WireTable``'s (a `Response` encoded
/// with `JSONEncoder`, or a malformed table the general decoder must report). Same JSON as WireTable's.
struct WireTableBody: Codable {
    var table: FetchedTable

    init(_ table: FetchedTable) { self.table = table }

    private enum CodingKeys: String, CodingKey { case rows, shapes, via }

    private struct WireShape: Codable {
        var entity: String
        var keys: [String]
    }

    init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        let hasVia = try c.decodeIfPresent(Bool.self, forKey: .via) ?? false
        var table = FetchedTable(shapes: try c.decode([WireShape].self, forKey: .shapes).map { .init(entity: $0.entity, keys: $0.keys) })
        var rows = try c.nestedUnkeyedContainer(forKey: .rows)
        while !rows.isAtEnd {
            var row = try rows.nestedUnkeyedContainer()
            let shape = try row.decode(Int.self)
            let id = try row.decode(UUID.self)
            var values: [PGValue] = []
            while !row.isAtEnd { values.append(try row.decode(PGValue.self)) }
            var via: UUID?
            if hasVia {
                switch values.popLast() {
                case .string(let text)?: via = UUID(uuidString: text)
                default: via = nil
                }
            }
            guard shape >= 0, shape < table.shapes.count, values.count == table.shapes[shape].keys.count else {
                throw DecodingError.dataCorruptedError(in: row, debugDescription: "a row of the table does not match its shape")
            }
            table.rows.append(FetchedTable.Row(shape: shape, id: id, values: values, via: via))
        }
        self.table = table
    }

    func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        let hasVia = table.rows.contains { $0.via != nil }
        var rows = c.nestedUnkeyedContainer(forKey: .rows)
        for row in table.rows {
            var cells = rows.nestedUnkeyedContainer()
            try cells.encode(row.shape)
            try cells.encode(row.id.uuidString.lowercased())
            for value in row.values { try cells.encode(value) }
            if hasVia {
                if let via = row.via { try cells.encode(via.uuidString.lowercased()) } else { try cells.encodeNil() }
            }
        }
        try c.encode(table.shapes.map { WireShape(entity: $0.entity, keys: $0.keys) }, forKey: .shapes)
        if hasVia { try c.encode(true, forKey: .via) }
    }
}
