import Foundation
@_spi(PGModelInternals) import PGModelCore

/// `{"entity":"Trip","id":"0193…","values":{…}}`, plus `"via":"0192…"` for rows of a related fetch and
/// `"ancestor":{…}` (the values the client read) for a save's updates.
struct WireRow: Codable {
    var row: RowValues

    init(_ row: RowValues) { self.row = row }

    private enum CodingKeys: String, CodingKey { case entity, id, values, via, ancestor }

    init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        row = RowValues(
            entity: try c.decode(String.self, forKey: .entity),
            id: try c.decode(UUID.self, forKey: .id),
            values: try c.decode([String: PGValue].self, forKey: .values),
            via: try c.decodeIfPresent(UUID.self, forKey: .via))
        row.ancestor = try c.decodeIfPresent([String: PGValue].self, forKey: .ancestor)
    }

    func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(row.entity, forKey: .entity)
        try c.encode(row.id.uuidString.lowercased(), forKey: .id)
        try c.encode(row.values, forKey: .values)
        try c.encodeIfPresent(row.via?.uuidString.lowercased(), forKey: .via)
        try c.encodeIfPresent(row.ancestor, forKey: .ancestor)
    }
}
