import PGModelCore

/// The models a container manages, and what PGModel knows about each one.
///
/// ```swift
/// let schema = Schema([Trip.self, BucketListItem.self])
/// let container = try ModelContainer(for: schema, configurations: ModelConfiguration(url: url))
/// ```
public final class Schema: Sendable, CustomStringConvertible {
    /// The model types, in the order given.
    public let types: [any PersistentModel.Type]
    /// Each type's entity.
    public let entities: [Entity]
    /// The schema version.
    public let version: Version

    /// A schema of `types`. Duplicates are dropped.
    public init(_ types: [any PersistentModel.Type], version: Version = Version(1, 0, 0)) {
        var seen = Set<ObjectIdentifier>()
        let unique = types.filter { seen.insert(ObjectIdentifier($0)).inserted }
        self.types = unique
        self.entities = unique.map { Entity($0) }
        self.version = version
    }

    /// A schema of `types`.
    public convenience init(_ types: any PersistentModel.Type..., version: Version = Version(1, 0, 0)) {
        self.init(types, version: version)
    }

    /// The entity of `type`, if the schema has it.
    public func entity(for type: any PersistentModel.Type) -> Entity? {
        entities.first { $0.type == type }
    }

    /// The entity named `name`, if the schema has it.
    public func entity(named name: String) -> Entity? {
        entities.first { $0.name == name }
    }

    /// The Codable description the stores create tables from.
    public var schemaDescription: SchemaDescription {
        SchemaDescription(entities: entities.map(\.entityDescription), version: version.description)
    }

    public var description: String { "Schema(\(entities.map(\.name).joined(separator: ", ")))" }

    /// A semantic version, as `VersionedSchema.versionIdentifier` uses.
    public struct Version: Hashable, Comparable, Codable, Sendable, CustomStringConvertible {
        public var major: Int
        public var minor: Int
        public var patch: Int
        public init(_ major: Int, _ minor: Int, _ patch: Int) {
            self.major = major
            self.minor = minor
            self.patch = patch
        }
        public static func < (l: Self, r: Self) -> Bool { (l.major, l.minor, l.patch) < (r.major, r.minor, r.patch) }
        public var description: String { "\(major).\(minor).\(patch)" }
    }
}

extension Schema {
    /// One model type: its name, attributes and constraints.
    public struct Entity: Sendable, Hashable {
        /// The class name.
        public let name: String
        /// The model type.
        public let type: any PersistentModel.Type
        /// The stored properties, in declaration order.
        public let properties: [PropertyMetadata]
        /// What the SQL renderer sees.
        public let entityDescription: EntityDescription

        init(_ type: any PersistentModel.Type) {
            self.name = type._$entityName
            self.type = type
            self.properties = type.schemaMetadata
            self.entityDescription = EntityDescription(
                name: name,
                attributes: properties.map(\.attributeDescription),
                uniquenessConstraints: type._$uniquenessConstraints,
                indexes: type._$indexes
            )
        }

        /// The stored property whose key path is `keyPath`.
        public func property(for keyPath: AnyKeyPath) -> PropertyMetadata? {
            properties.first { $0.keypath == keyPath }
        }

        /// The stored property named `name`.
        public func property(named name: String) -> PropertyMetadata? {
            properties.first { $0.name == name }
        }

        public static func == (l: Entity, r: Entity) -> Bool { l.type == r.type }
        public func hash(into h: inout Hasher) { h.combine(ObjectIdentifier(type)) }
    }
}
