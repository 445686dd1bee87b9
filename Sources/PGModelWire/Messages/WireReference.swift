import Foundation
@_spi(PGModelInternals) import PGModelCore

/// `{"entity":"Trip","id":"0193…"}`, plus `"ancestor":{…}` (the values the client read) for a save's deletes.
struct WireReference: Codable {
    var reference: RowReference

    init(_ reference: RowReference) { self.reference = reference }

    private enum CodingKeys: String, CodingKey { case entity, id, ancestor }

    init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        reference = RowReference(
            entity: try c.decode(String.self, forKey: .entity), id: try c.decode(UUID.self, forKey: .id),
            ancestor: try c.decodeIfPresent([String: PGValue].self, forKey: .ancestor))
    }

    func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(reference.entity, forKey: .entity)
        try c.encode(reference.id.uuidString.lowercased(), forKey: .id)
        try c.encodeIfPresent(reference.ancestor, forKey: .ancestor)
    }
}
