@_spi(PGModelInternals) import PGModelCore

extension Schema {
    /// One `#Index` group as `@Model` records it in `_$indexes`: the kind and the property names.
    /// Plumbing the macro generates; you write `#Index` instead.
    ///
    /// ```swift
    /// // #Index<Trip>(.binary([\.name]), .rtree([\.latitude, \.longitude])) becomes
    /// static var _$indexes: [PGModel.Schema.IndexMetadata] { [.binary(["name"]), .rtree(["latitude", "longitude"])] }
    /// ```
    public struct IndexMetadata: Hashable, Sendable {
        /// `.binary` (B-tree) or `.rtree` (GiST).
        public typealias Kind = IndexKind

        /// The index kind.
        public let kind: Kind
        /// The property names, in index order.
        public let properties: [String]

        public init(_ properties: [String], kind: Kind) {
            self.properties = properties
            self.kind = kind
        }

        /// A binary (B-tree) index on `properties`.
        ///
        /// ```swift
        /// Schema.IndexMetadata.binary(["name", "startDate"])
        /// ```
        public static func binary(_ properties: [String]) -> IndexMetadata {
            IndexMetadata(properties, kind: .binary)
        }

        /// An rtree (GiST) index on `properties`.
        ///
        /// ```swift
        /// Schema.IndexMetadata.rtree(["latitude", "longitude"])
        /// ```
        public static func rtree(_ properties: [String]) -> IndexMetadata {
            IndexMetadata(properties, kind: .rtree)
        }

        /// What the stores create the index from.
        var indexDescription: IndexDescription {
            IndexDescription(properties, kind: kind)
        }
    }
}
