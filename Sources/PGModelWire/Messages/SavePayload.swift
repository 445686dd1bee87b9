import Foundation
@_spi(PGModelInternals) import PGModelCore

/// The wire form of a save: absent lists mean empty, ids are lowercase.
struct SavePayload: Codable {
    var request: SaveRequest

    init(_ request: SaveRequest) { self.request = request }

    private enum CodingKeys: String, CodingKey {
        case inserts, updates, deletes, links, batchDeletes, shares, author, bundleIdentifier, processIdentifier, mergePolicy, mergeRules
    }

    init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        let inserts = try c.decodeIfPresent([WireRow].self, forKey: .inserts) ?? []
        let updates = try c.decodeIfPresent([WireRow].self, forKey: .updates) ?? []
        let deletes = try c.decodeIfPresent([WireReference].self, forKey: .deletes) ?? []
        request = SaveRequest(
            inserts: inserts.map(\.row), updates: updates.map(\.row), deletes: deletes.map(\.reference),
            links: try c.decodeIfPresent([LinkChange].self, forKey: .links) ?? [],
            batchDeletes: try c.decodeIfPresent([FetchRequest].self, forKey: .batchDeletes) ?? [],
            shares: try c.decodeIfPresent([ShareChange].self, forKey: .shares) ?? [],
            author: try c.decodeIfPresent(String.self, forKey: .author),
            bundleIdentifier: try c.decodeIfPresent(String.self, forKey: .bundleIdentifier),
            processIdentifier: try c.decodeIfPresent(String.self, forKey: .processIdentifier),
            mergePolicy: try c.decodeIfPresent(MergePolicy.self, forKey: .mergePolicy) ?? .error,
            mergeRules: try c.decodeIfPresent([String: [String: MergeRule]].self, forKey: .mergeRules) ?? [:])
    }

    func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(request.inserts.map(WireRow.init), forKey: .inserts)
        try c.encode(request.updates.map(WireRow.init), forKey: .updates)
        try c.encode(request.deletes.map(WireReference.init), forKey: .deletes)
        if !request.links.isEmpty { try c.encode(request.links, forKey: .links) }
        if !request.batchDeletes.isEmpty { try c.encode(request.batchDeletes, forKey: .batchDeletes) }
        if !request.shares.isEmpty { try c.encode(request.shares, forKey: .shares) }
        try c.encodeIfPresent(request.author, forKey: .author)
        try c.encodeIfPresent(request.bundleIdentifier, forKey: .bundleIdentifier)
        try c.encodeIfPresent(request.processIdentifier, forKey: .processIdentifier)
        if request.mergePolicy != .error { try c.encode(request.mergePolicy, forKey: .mergePolicy) }
        if !request.mergeRules.isEmpty { try c.encode(request.mergeRules, forKey: .mergeRules) }
    }
}
