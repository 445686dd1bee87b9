@_spi(PGModelInternals) import PGModelCore

extension Schema {
    /// A relationship of a model: where it leads, its inverse, its delete rule and model counts.
    ///
    /// `@Relationship(...)` on a property makes one of these with the declared options only; the
    /// relationships a schema's entities list (``Schema/Entity/relationships``) also carry the name,
    /// destination entity and inverse, found from either side's `inverse:` or inferred.
    ///
    /// ```swift
    /// @Relationship(deleteRule: .cascade, inverse: \Track.album) var tracks: [Track] = []
    ///
    /// let tracks = schema.entitiesByName["Album"]?.relationshipsByName["tracks"]
    /// tracks?.destination           // "Track"
    /// tracks?.inverseName           // "album"
    /// tracks?.isToOneRelationship   // false
    /// ```
    ///
    /// Unlike SwiftData's, its properties are read-only: a schema is made from the `@Model` classes.
    public final class Relationship: SchemaProperty, CustomStringConvertible, @unchecked Sendable {
        // @unchecked: every stored property is immutable; key paths and metatypes are safe to share.

        /// Relationship options.
        public struct Option: Hashable, Sendable, CustomStringConvertible {
            let name: String
            public var description: String { name }
            /// Each destination model appears at most once (always true for PGModel's to-many storage).
            public static let unique = Option(name: "unique")
        }

        /// What deleting the owning model does to the models the relationship reaches.
        public typealias DeleteRule = RelationshipDeleteRule

        /// The Swift property name (empty for the options `@Relationship(...)` writes).
        public let name: String
        /// The property's key path on the model, if known.
        public let keypath: AnyKeyPath?
        /// The entity name of the related models.
        public let destination: String
        /// The name of the inverse relationship on the destination, if there is one.
        public let inverseName: String?
        /// The inverse property on the destination, e.g. `\Album.tracks`, when it was given as `inverse:`.
        public let inverseKeyPath: AnyKeyPath?
        /// The declared options.
        public let options: [Option]
        /// What deleting the owning model does to the related ones.
        public let deleteRule: DeleteRule
        /// The fewest related models a save accepts; `0` or `nil` for no minimum.
        public let minimumModelCount: Int?
        /// The most related models a save accepts; `0` or `nil` for no maximum.
        public let maximumModelCount: Int?
        /// Changes the property's version hash without changing its name.
        public let hashModifier: String?
        /// The declared Swift type, `Optional` or `Array` included.
        public let valueType: any Any.Type
        /// Whether the property holds at most one model (not an array).
        public let isToOneRelationship: Bool
        /// The previous name given as `originalName:`, if any.
        let declaredOriginalName: String?

        /// The options of `@Relationship(...)`.
        ///
        /// ```swift
        /// let options = Schema.Relationship(deleteRule: .cascade, inverse: \Track.album)
        /// ```
        public init(_ options: Option..., deleteRule: DeleteRule = .nullify, minimumModelCount: Int? = 0, maximumModelCount: Int? = 0,
                    originalName: String? = nil, inverse: AnyKeyPath? = nil, hashModifier: String? = nil) {
            self.name = ""
            self.keypath = nil
            self.destination = ""
            self.inverseName = nil
            self.options = options
            self.deleteRule = deleteRule
            self.minimumModelCount = minimumModelCount
            self.maximumModelCount = maximumModelCount
            self.declaredOriginalName = originalName
            self.inverseKeyPath = inverse
            self.hashModifier = hashModifier
            self.valueType = Any.self
            self.isToOneRelationship = true
        }

        /// A relationship as a schema's entity describes it: `declared`'s options completed with what
        /// the property and its resolved description say.
        init(name: String, keypath: AnyKeyPath, valueType: any Any.Type, declared: Relationship?, description: RelationshipDescription) {
            self.name = name
            self.keypath = keypath
            self.destination = description.destination
            self.inverseName = description.inverse
            self.options = declared?.options ?? []
            self.deleteRule = description.deleteRule
            self.minimumModelCount = declared?.minimumModelCount ?? 0
            self.maximumModelCount = declared?.maximumModelCount ?? 0
            self.declaredOriginalName = declared?.declaredOriginalName
            self.inverseKeyPath = declared?.inverseKeyPath
            self.hashModifier = declared?.hashModifier
            self.valueType = valueType
            self.isToOneRelationship = !description.isToMany
        }

        /// The previous name (`originalName:`), or ``name`` when the property was never renamed.
        public var originalName: String { declaredOriginalName ?? name }
        /// Always false.
        public var isAttribute: Bool { false }
        /// Always true.
        public var isRelationship: Bool { true }
        /// Always false: relationships are stored.
        public var isTransient: Bool { false }
        /// Whether the declared type is an `Optional`.
        public var isOptional: Bool { valueType is any OptionalValueType.Type }
        /// Whether the relationship has the `.unique` option.
        public var isUnique: Bool { options.contains(.unique) }

        public var description: String {
            "Relationship(name: \(name), destination: \(destination), inverseName: \(inverseName ?? "nil"), deleteRule: \(deleteRule))"
        }

        public static func == (l: Relationship, r: Relationship) -> Bool {
            l.name == r.name && l.keypath == r.keypath && l.destination == r.destination && l.inverseName == r.inverseName
                && l.inverseKeyPath == r.inverseKeyPath && l.options == r.options && l.deleteRule == r.deleteRule
                && l.minimumModelCount == r.minimumModelCount && l.maximumModelCount == r.maximumModelCount
                && l.declaredOriginalName == r.declaredOriginalName && l.hashModifier == r.hashModifier
                && l.isToOneRelationship == r.isToOneRelationship
        }

        public func hash(into h: inout Hasher) {
            h.combine(name)
            h.combine(destination)
            h.combine(inverseName)
            h.combine(options)
            h.combine(deleteRule)
            h.combine(declaredOriginalName)
        }
    }
}
