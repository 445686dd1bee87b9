/// One `#Index` group: the attributes it covers, in order, and the kind of index PostgreSQL builds.
///
/// A binary index is written as an array literal, as before index kinds existed:
///
/// ```swift
/// EntityDescription(name: "Trip", attributes: attributes, indexes: [
///     ["startDate"],                                                    // binary: a B-tree
///     IndexDescription(["latitude", "longitude"], kind: .rtree),        // rtree: GiST
/// ])
/// ```
///
/// On the wire a binary index stays a plain array of names (`["startDate"]`), so schemas written before
/// index kinds existed, and their recorded fingerprints, are unchanged; any other kind is an object,
/// `{"kind":"rtree","attributes":["latitude","longitude"]}`. Both forms decode.
@_spi(PGModelInternals) public struct IndexDescription: Codable, Hashable, Sendable, ExpressibleByArrayLiteral {
    /// The attribute (or to-one relationship) names, in index order.
    public var attributes: [String]
    /// How PostgreSQL indexes them.
    public var kind: Kind

    /// The index kinds of SwiftData's `Schema.Index.Types`.
    public typealias Kind = IndexKind

    public init(_ attributes: [String], kind: Kind = .binary) {
        self.attributes = attributes
        self.kind = kind
    }

    public init(arrayLiteral attributes: String...) {
        self.init(attributes)
    }

    /// Attribute types an rtree (GiST) index can cover: those `btree_gist` orders and PGModel does not
    /// refuse for another reason (strings, booleans and UUIDs are better served by a B-tree).
    public static func rtreeSupports(_ type: AttributeType) -> Bool {
        switch type {
        case .int16, .int32, .int64, .float, .double, .decimal, .date: return true
        default: return false
        }
    }

    private enum CodingKeys: String, CodingKey {
        case kind, attributes
    }

    public init(from decoder: any Decoder) throws {
        // The original form: an array of names is a binary index.
        if let names = try? decoder.singleValueContainer().decode([String].self) {
            self.init(names)
            return
        }
        let c = try decoder.container(keyedBy: CodingKeys.self)
        self.init(try c.decode([String].self, forKey: .attributes),
                  kind: try c.decodeIfPresent(Kind.self, forKey: .kind) ?? .binary)
    }

    public func encode(to encoder: any Encoder) throws {
        // Binary indexes keep the original form, so an unchanged schema encodes (and fingerprints) as it did.
        if kind == .binary {
            var c = encoder.singleValueContainer()
            try c.encode(attributes)
            return
        }
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(kind, forKey: .kind)
        try c.encode(attributes, forKey: .attributes)
    }
}

/// The index kinds of SwiftData's `Schema.Index.Types`, as `#Index` expansions spell them.
///
/// ```swift
/// #Index<Trip>([\.name], [\.latitude, \.longitude])   // .binary indexes
/// ```
public enum IndexKind: String, Codable, Hashable, Sendable, CaseIterable {
    /// A B-tree (`CREATE INDEX … (a, b)`): equality, ranges and sorts on a leading prefix of the columns.
    case binary
    /// An R-tree, in PostgreSQL a GiST index (`CREATE INDEX … USING gist (a, b)`, through `btree_gist`):
    /// ranges on any of the columns at once, e.g. a latitude and longitude box. Numeric and date
    /// attributes only.
    case rtree
}
