@_spi(PGModelInternals) import PGModelCore

extension Schema {
    /// `@Relationship` options of a property: delete rule, inverse, model counts.
    ///
    /// ```swift
    /// @Relationship(deleteRule: .cascade, inverse: \Track.album) var tracks: [Track] = []
    /// ```
    public struct Relationship: @unchecked Sendable, Hashable {
        // @unchecked: `inverseKeyPath` is an immutable key path, safe to share.
        /// Relationship options.
        public struct Option: Hashable, Sendable, CustomStringConvertible {
            let name: String
            public var description: String { name }
            /// Each destination model appears at most once (always true for PGModel's to-many storage).
            public static let unique = Option(name: "unique")
        }

        /// What deleting the owning model does to the models the relationship reaches.
        public typealias DeleteRule = RelationshipDeleteRule

        public var options: [Option]
        public var deleteRule: DeleteRule
        /// The fewest related models a save accepts; `0` or `nil` for no minimum.
        public var minimumModelCount: Int?
        /// The most related models a save accepts; `0` or `nil` for no maximum.
        public var maximumModelCount: Int?
        public var originalName: String?
        /// The inverse property on the destination, e.g. `\Album.tracks`.
        public var inverseKeyPath: AnyKeyPath?
        public var hashModifier: String?

        public init(_ options: Option..., deleteRule: DeleteRule = .nullify, minimumModelCount: Int? = 0, maximumModelCount: Int? = 0,
                    originalName: String? = nil, inverse: AnyKeyPath? = nil, hashModifier: String? = nil) {
            self.options = options
            self.deleteRule = deleteRule
            self.minimumModelCount = minimumModelCount
            self.maximumModelCount = maximumModelCount
            self.originalName = originalName
            self.inverseKeyPath = inverse
            self.hashModifier = hashModifier
        }
    }
}
