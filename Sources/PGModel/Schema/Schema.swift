@_spi(PGModelInternals) import PGModelCore

/// The models a container manages, and what PGModel knows about each one.
///
/// ```swift
/// let schema = Schema([Trip.self, BucketListItem.self])
/// let container = try ModelContainer(for: schema, configurations: ModelConfiguration(url: url))
/// ```
public final class Schema: Sendable, CustomStringConvertible {
    /// The model types, in the order given.
    // nonisolated(unsafe): a `@MainActor` model's metatype is not Sendable (its conformance is isolated),
    // yet a schema is shared by every context; it only names the classes, and their models are used on
    // their own context's isolation.
    nonisolated(unsafe) public let types: [any PersistentModel.Type]
    /// Each type's entity.
    public let entities: [Entity]
    /// The entities by name.
    ///
    /// ```swift
    /// let trip = schema.entitiesByName["Trip"]
    /// ```
    public let entitiesByName: [String: Entity]
    /// The schema version.
    public let version: Version

    /// A schema of `types`. Duplicates are dropped.
    public init(_ types: [any PersistentModel.Type], version: Version = Version(1, 0, 0)) {
        // A model's relationships and superclasses belong to the schema even when not listed, as in SwiftData.
        var seen = Set<ObjectIdentifier>()
        // One class per entity name: the listed types come first, so a versioned schema's nested
        // `SchemaV1.Trip` wins over the top-level `Trip` a shared model's relationship points at.
        var names = Set<String>()
        var unique: [any PersistentModel.Type] = []
        var pending = types
        while !pending.isEmpty {
            let type = pending.removeFirst()
            guard seen.insert(ObjectIdentifier(type)).inserted, names.insert(type._$entityName).inserted else { continue }
            unique.append(type)
            if let parent = type._$superentity { pending.append(parent) }
            pending.append(contentsOf: type.schemaMetadata.compactMap { $0.relationship?.destination })
        }
        self.types = unique
        // Each class's direct subclasses in this schema, so its entity can list its subentities.
        var subclasses: [ObjectIdentifier: [any PersistentModel.Type]] = [:]
        for type in unique {
            if let parent = type._$superentity { subclasses[ObjectIdentifier(parent), default: []].append(type) }
        }
        let entities = unique.map { Entity($0, subclasses: subclasses) }
        self.entities = entities
        self.version = version
        var byName: [String: Int] = [:]
        for (i, entity) in entities.enumerated() where byName[entity.name] == nil { byName[entity.name] = i }
        self.byName = byName
        self.entitiesByName = byName.mapValues { entities[$0] }
        var byType: [ObjectIdentifier: Int] = [:]
        for (i, entity) in entities.enumerated() where byName[entity.name] == i { byType[ObjectIdentifier(entity.type)] = i }
        self.byType = byType
        let description = SchemaDescription(entities: entities.map(\.entityDescription), version: version.description)
        self.schemaDescription = description
        // What a fetch without `propertiesToFetch` reads, worked out once rather than on every fetch.
        self.defaultFetchProperties = entities.map { entity in
            let subtree = description.entityNames(inHierarchyOf: entity.name)
                .compactMap { name in byName[name].map { entities[$0] } }
                .flatMap(\.attributeMetadata)
            // `.externalStorage` attributes are left out of every fetch and load when read.
            guard subtree.contains(where: \.isExternal) else { return nil }
            var seen = Set<String>()
            return subtree.filter { !$0.isExternal && seen.insert($0.name).inserted }.map(\.name)
        }
        self.hasRequiredToOne = entities.contains { entity in
            entity.propertyMetadata.contains { property in
                guard let relationship = property.relationship else { return false }
                return !relationship.isToMany && !relationship.isOptional
            }
        }
    }

    /// The attribute names a fetch of `entity` without `propertiesToFetch` reads: nil (every column) unless
    /// its hierarchy has `.externalStorage` attributes, which wait until read.
    func defaultFetchProperties(of entity: Entity) -> [String]? {
        guard let index = byType[ObjectIdentifier(entity.type)], index < defaultFetchProperties.count else { return nil }
        return defaultFetchProperties[index]
    }

    /// A schema of `types`.
    public convenience init(_ types: any PersistentModel.Type..., version: Version = Version(1, 0, 0)) {
        self.init(types, version: version)
    }

    /// The entity of `type`, if the schema has it.
    public func entity(for type: any PersistentModel.Type) -> Entity? {
        // By class, not by `_$entityName`: every fetch asks, and the name is `String(describing:)` of the type.
        byType[ObjectIdentifier(type)].map { entities[$0] }
    }

    /// The entity name of a model type: its class name, as history changes and `PersistentIdentifier`s carry it.
    ///
    /// ```swift
    /// let names = [Schema.entityName(for: Trip.self), Schema.entityName(for: LivingAccommodation.self)]
    /// ```
    public static func entityName(for type: any PersistentModel.Type) -> String {
        type._$entityName
    }

    /// The entity named `name`, if the schema has it.
    public func entity(named name: String) -> Entity? {
        byName[name].map { entities[$0] }
    }

    /// The entities whose classes are `entity`'s class or inherit from it.
    func entities(inHierarchyOf entity: Entity) -> [Entity] {
        schemaDescription.entityNames(inHierarchyOf: entity.name).compactMap { self.entity(named: $0) }
    }

    /// The Codable description the stores create tables from.
    @_spi(PGModelInternals) public let schemaDescription: SchemaDescription
    private let byName: [String: Int]
    private let byType: [ObjectIdentifier: Int]
    /// ``defaultFetchProperties(of:)`` of each entity, by index in ``entities``.
    private let defaultFetchProperties: [[String]?]
    /// Whether a class has a non-optional to-one, whose partners a fetch loads before building its models.
    let hasRequiredToOne: Bool

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
    /// One model type: its name, attributes, relationships and constraints.
    public struct Entity: Sendable, Hashable {
        /// The class name.
        public let name: String
        /// The model type.
        // nonisolated(unsafe): as `Schema.types`.
        nonisolated(unsafe) public let type: any PersistentModel.Type
        /// What `@Model` declares for each stored property (attributes and relationships), inherited
        /// ones first, in declaration order: how PGModel reads and writes them. ``properties`` describes
        /// the same properties as SwiftData does.
        public let propertyMetadata: [PropertyMetadata]
        /// The parent class's entity name for a `@Model` subclass.
        public let superentityName: String?
        /// The direct subclasses of every class of the schema this entity belongs to, by class
        /// (``subentities``); empty for an entity made outside a schema.
        // nonisolated(unsafe): as `type`.
        nonisolated(unsafe) let subclasses: [ObjectIdentifier: [any PersistentModel.Type]]
        /// What the SQL renderer sees.
        @_spi(PGModelInternals) public let entityDescription: EntityDescription
        private let propertyIndex: [String: Int]

        init(_ type: any PersistentModel.Type, subclasses: [ObjectIdentifier: [any PersistentModel.Type]] = [:]) {
            self.name = type._$entityName
            self.type = type
            self.subclasses = subclasses
            // A subclass's metadata repeats what it inherits; the first declaration wins.
            var seen = Set<String>()
            let properties = type.schemaMetadata.filter { seen.insert($0.name).inserted }
            self.propertyMetadata = properties
            let attributes = properties.filter { !$0.isRelationship && !$0.isEphemeral }
            self.attributeMetadata = attributes
            self.relationshipMetadata = properties.filter(\.isRelationship)
            var rules: [String: MergeRule] = [:]
            for property in attributes { if let rule = property.mergeRule { rules[property.name] = rule } }
            self.mergeRules = rules
            self.superentityName = type._$superentity?._$entityName
            var index: [String: Int] = [:]
            for (i, property) in properties.enumerated() { index[property.name] = i }
            self.propertyIndex = index
            self.entityDescription = EntityDescription(
                name: name,
                attributes: attributes.map(\.attributeDescription),
                uniquenessConstraints: type._$uniquenessConstraints.map { UniquenessConstraintDescription($0) }
                    + type._$globalUniquenessConstraints.map { UniquenessConstraintDescription($0, scope: .allUsers) },
                indexes: type._$indexes.map(\.indexDescription),
                relationships: properties.compactMap { property in
                    guard let relationship = property.relationship else { return nil }
                    // An inherited relationship is the one its declaring class describes: its inverse
                    // points at that class, so describing it from the subclass would miss the inverse
                    // and give the subclass other storage (another column, a join table) than its parent.
                    if let parent = type._$superentity,
                       let inherited = ModelGraph.entity(for: parent).relationshipDescription(named: property.name) {
                        return inherited
                    }
                    return Self.describe(property.name, relationship, keypath: property.keypath, in: type)
                },
                superentity: superentityName
            )
        }

        /// The metadata of the stored attributes (not relationships, not `.ephemeral`). Kept, not
        /// filtered on each read: the save path reads them once per model, and filtering copied every
        /// property each time.
        public let attributeMetadata: [PropertyMetadata]
        /// The metadata of the relationship properties (kept, as ``attributeMetadata``).
        public let relationshipMetadata: [PropertyMetadata]
        /// The attributes declared with `@Attribute(.merge(…))`, by name: how each merges when two saves
        /// change it at once.
        public let mergeRules: [String: MergeRule]

        /// The stored property whose key path is `keyPath`.
        public func property(for keyPath: AnyKeyPath) -> PropertyMetadata? {
            propertyMetadata.first { $0.keypath == keyPath || $0.declaredKeypath == keyPath }
        }

        /// The stored property named `name`.
        public func property(named name: String) -> PropertyMetadata? {
            propertyIndex[name].map { propertyMetadata[$0] }
        }

        /// The description of relationship `name`, with its inverse resolved.
        @_spi(PGModelInternals) public func relationshipDescription(named name: String) -> RelationshipDescription? {
            entityDescription.relationship(named: name)
        }

        public static func == (l: Entity, r: Entity) -> Bool { l.type == r.type }
        public func hash(into h: inout Hasher) { h.combine(ObjectIdentifier(type)) }

        /// The relationship's description, its inverse found from either side's `inverse:` key path or,
        /// failing that, inferred when exactly one relationship on each side connects the two classes.
        private static func describe(_ name: String, _ r: RelationshipMetadata, keypath: AnyKeyPath,
                                     in type: any PersistentModel.Type) -> RelationshipDescription {
            let destination = r.destination
            let destinationProperties = destination.schemaMetadata
            var inverse: String?
            if let declared = r.options?.inverseKeyPath {
                inverse = destinationProperties.first { $0.keypath == declared }?.name
            }
            if inverse == nil {
                inverse = destinationProperties.first { $0.relationship?.options?.inverseKeyPath == keypath }?.name
            }
            if inverse == nil, destination != type {
                let mine = type.schemaMetadata.filter { $0.relationship.map { $0.destination == destination } ?? false }
                let theirs = destinationProperties.filter { $0.relationship.map { $0.destination == type } ?? false }
                if mine.count == 1, theirs.count == 1, let candidate = theirs.first,
                   candidate.relationship?.options?.inverseKeyPath == nil {
                    inverse = candidate.name
                }
            }
            func count(_ n: Int?) -> Int? { n.flatMap { $0 > 0 ? $0 : nil } }
            return RelationshipDescription(
                name: name, destination: destination._$entityName, isToMany: r.isToMany, isOptional: r.isOptional,
                inverse: inverse, deleteRule: r.options?.deleteRule ?? .nullify,
                minimumModelCount: count(r.options?.minimumModelCount), maximumModelCount: count(r.options?.maximumModelCount),
                originalName: r.options?.declaredOriginalName)
        }
    }
}
