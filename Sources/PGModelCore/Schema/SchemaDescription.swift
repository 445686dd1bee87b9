/// A Codable description of an application's models: what a client registers with the service and
/// what the SQL renderer creates tables from. It never mentions Swift types, only names.
///
/// ```swift
/// let schema = SchemaDescription(entities: [
///     EntityDescription(name: "Trip", attributes: [
///         AttributeDescription(name: "destination", type: .string),
///     ]),
/// ])
/// ```
@_spi(PGModelInternals) public struct SchemaDescription: Codable, Hashable, Sendable {
    /// The entities, in registration order.
    public var entities: [EntityDescription]
    /// An application-defined version label; migrations compare it.
    public var version: String

    public init(entities: [EntityDescription], version: String = "1.0.0") {
        self.entities = entities
        self.version = version
    }

    /// The entity named `name` (the Swift class name).
    public func entity(named name: String) -> EntityDescription? {
        entities.first { $0.name == name }
    }

    /// Checks names and constraints: every name a valid identifier, no duplicate entity or attribute,
    /// every constraint naming existing attributes. The server runs it on every registration.
    public func validate() throws {
        var seen = Set<String>()
        // A root's table and a subclass's view share PostgreSQL's namespace: two classes naming one
        // relation would fail in DDL with a database error, so it is a schema error here.
        var relations: [String: String] = [:]
        for entity in entities {
            if let other = relations[entity.tableName], other != entity.name {
                throw PGModelError(.invalidSchema, "\(entity.name) and \(other) both use the table name '\(entity.tableName)': each class needs its own (a subclass's is the name of its view)",
                                   model: entity.name)
            }
            relations[entity.tableName] = entity.name
        }
        for entity in entities {
            guard Naming.isValidIdentifier(entity.name) else {
                throw PGModelError(.invalidSchema, "entity name '\(entity.name)' is not a valid identifier", model: entity.name)
            }
            guard seen.insert(entity.name).inserted else {
                throw PGModelError(.invalidSchema, "entity '\(entity.name)' is registered twice", model: entity.name)
            }
            var names = Set<String>()
            for attribute in entity.attributes {
                guard Naming.isValidIdentifier(attribute.name) else {
                    throw PGModelError(.invalidSchema, "attribute name '\(attribute.name)' of \(entity.name) is not a valid identifier", model: entity.name)
                }
                guard !EntityDescription.reservedColumns.contains(attribute.columnName) else {
                    throw PGModelError(.invalidSchema, "attribute '\(attribute.name)' of \(entity.name) uses the reserved column name '\(attribute.columnName)'", model: entity.name, keyPath: attribute.name)
                }
                guard names.insert(attribute.name).inserted else {
                    throw PGModelError(.invalidSchema, "attribute '\(attribute.name)' of \(entity.name) is declared twice", model: entity.name, keyPath: attribute.name)
                }
            }
            for group in entity.uniquenessConstraints.map(\.attributes) + entity.indexes.map(\.attributes) {
                for name in group where entity.attribute(named: name) == nil && entity.relationship(named: name) == nil {
                    throw PGModelError(.invalidSchema, "constraint on \(entity.name) names unknown attribute '\(name)'", model: entity.name, keyPath: name)
                }
            }
            try entity.validateIndexes()
        }
        try validateGraph()
    }
}

/// One model class: its table, attributes, uniqueness constraints and indexes.
@_spi(PGModelInternals) public struct EntityDescription: Codable, Hashable, Sendable {
    /// The Swift class name, e.g. `BucketListItem`.
    public var name: String
    /// The table name, snake_case of ``name`` unless given.
    public var tableName: String
    /// Stored attributes, in declaration order.
    public var attributes: [AttributeDescription]
    /// Groups of attribute names that are unique together, each per owner (`#Unique`, `@Attribute(.unique)`
    /// as a group of one) or across all users (`scope: .allUsers`, `@Attribute(.globallyUnique)`).
    public var uniquenessConstraints: [UniquenessConstraintDescription]
    /// The indexes to create (`#Index`), each a group of attribute names and a kind.
    public var indexes: [IndexDescription]
    /// Relationships, inherited ones included, in declaration order.
    public var relationships: [RelationshipDescription]
    /// The parent entity for a `@Model` subclass (`BusinessTrip` → `Trip`); `nil` for a hierarchy's root.
    /// A hierarchy shares its root's table (single-table inheritance); the `entity` column names the class.
    public var superentity: String?

    /// Columns every model table has besides its attributes.
    public static let reservedColumns: Set<String> = ["id", "entity", "owner_id"]

    public init(
        name: String,
        tableName: String? = nil,
        attributes: [AttributeDescription],
        uniquenessConstraints: [UniquenessConstraintDescription] = [],
        indexes: [IndexDescription] = [],
        relationships: [RelationshipDescription] = [],
        superentity: String? = nil
    ) {
        self.name = name
        self.relationships = relationships
        self.superentity = superentity
        self.tableName = tableName ?? Naming.snakeCase(name)
        self.attributes = attributes
        // `.unique` and `.globallyUnique` attributes are uniqueness constraints of one.
        var groups = uniquenessConstraints
        for attribute in attributes where attribute.isUnique && !groups.contains([attribute.name]) {
            groups.append([attribute.name])
        }
        for attribute in attributes where attribute.isGloballyUnique {
            let group = UniquenessConstraintDescription([attribute.name], scope: .allUsers)
            if !groups.contains(group) { groups.append(group) }
        }
        self.uniquenessConstraints = groups
        self.indexes = indexes
    }

    /// The attribute whose Swift property name is `name`.
    public func attribute(named name: String) -> AttributeDescription? {
        attributes.first { $0.name == name }
    }

    /// The relationship whose Swift property name is `name`.
    public func relationship(named name: String) -> RelationshipDescription? {
        relationships.first { $0.name == name }
    }

    private enum CodingKeys: String, CodingKey {
        case name, tableName, attributes, uniquenessConstraints, indexes, relationships, superentity
    }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        name = try c.decode(String.self, forKey: .name)
        tableName = try c.decode(String.self, forKey: .tableName)
        attributes = try c.decode([AttributeDescription].self, forKey: .attributes)
        // Each constraint is an array of names (per owner, the original form) or an object with a scope.
        uniquenessConstraints = try c.decodeIfPresent([UniquenessConstraintDescription].self, forKey: .uniquenessConstraints) ?? []
        // Each index is an array of names (binary, the original form) or an object with a kind.
        indexes = try c.decodeIfPresent([IndexDescription].self, forKey: .indexes) ?? []
        relationships = try c.decodeIfPresent([RelationshipDescription].self, forKey: .relationships) ?? []
        superentity = try c.decodeIfPresent(String.self, forKey: .superentity)
    }
}

/// One stored property.
@_spi(PGModelInternals) public struct AttributeDescription: Codable, Hashable, Sendable {
    /// The Swift property name, e.g. `startDate`.
    public var name: String
    /// The column name, snake_case of ``name`` unless given.
    public var columnName: String
    /// The storage type.
    public var type: AttributeType
    /// Whether the Swift type is optional (the column is nullable).
    public var isOptional: Bool
    /// `@Attribute(.unique)`: unique among its owner's rows.
    public var isUnique: Bool
    /// `@Attribute(.globallyUnique)`: unique among every user's rows.
    public var isGloballyUnique: Bool
    /// `@Attribute(originalName:)`, for migrations.
    public var originalName: String?
    /// `@Attribute(.codable)`: stored as the type's own encoding and opaque — no predicates or sorts on it.
    public var isOpaque: Bool
    /// `@Attribute(.externalStorage)`: kept out of line (`STORAGE EXTERNAL`) and read only when accessed.
    public var isExternal: Bool
    /// `@Attribute(.preserveValueOnDeletion)`: history keeps the value in the deletion's tombstone.
    public var preservesValueOnDeletion: Bool
    /// `@Attribute(hashModifier:)`, for migrations.
    public var hashModifier: String?
    /// The property's default value as written in the class (`var perdiem: Double = 0.0`), stored form:
    /// what a migration fills existing rows with when the attribute is added or becomes non-optional.
    /// Not part of the shape: a changed default alone needs no migration.
    public var defaultValue: PGValue?

    public init(
        name: String,
        columnName: String? = nil,
        type: AttributeType,
        isOptional: Bool = false,
        isUnique: Bool = false,
        isGloballyUnique: Bool = false,
        originalName: String? = nil,
        isOpaque: Bool = false,
        isExternal: Bool = false,
        preservesValueOnDeletion: Bool = false,
        hashModifier: String? = nil,
        defaultValue: PGValue? = nil
    ) {
        self.name = name
        self.defaultValue = defaultValue
        self.isOpaque = isOpaque
        self.isExternal = isExternal
        self.preservesValueOnDeletion = preservesValueOnDeletion
        self.hashModifier = hashModifier
        // `id`, `entity` and `owner_id` are system columns; an attribute of that name (Track's
        // `@Attribute(.unique) var id: String`) gets an `attr_` prefix instead of colliding.
        let snake = Naming.snakeCase(name)
        self.columnName = columnName ?? (EntityDescription.reservedColumns.contains(snake) ? "attr_" + snake : snake)
        self.type = type
        self.isOptional = isOptional
        self.isUnique = isUnique
        self.isGloballyUnique = isGloballyUnique
        self.originalName = originalName
    }

    private enum CodingKeys: String, CodingKey {
        case name, columnName, type, isOptional, isUnique, isGloballyUnique, originalName, isOpaque, isExternal, preservesValueOnDeletion, hashModifier, defaultValue
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(name, forKey: .name)
        try c.encode(columnName, forKey: .columnName)
        try c.encode(type, forKey: .type)
        try c.encode(isOptional, forKey: .isOptional)
        try c.encode(isUnique, forKey: .isUnique)
        // Only when set: an attribute without it encodes (and fingerprints) as it did before scopes.
        if isGloballyUnique { try c.encode(true, forKey: .isGloballyUnique) }
        try c.encodeIfPresent(originalName, forKey: .originalName)
        try c.encode(isOpaque, forKey: .isOpaque)
        try c.encode(isExternal, forKey: .isExternal)
        try c.encode(preservesValueOnDeletion, forKey: .preservesValueOnDeletion)
        try c.encodeIfPresent(hashModifier, forKey: .hashModifier)
        try c.encodeIfPresent(defaultValue, forKey: .defaultValue)
    }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        name = try c.decode(String.self, forKey: .name)
        columnName = try c.decode(String.self, forKey: .columnName)
        type = try c.decode(AttributeType.self, forKey: .type)
        isOptional = try c.decodeIfPresent(Bool.self, forKey: .isOptional) ?? false
        isUnique = try c.decodeIfPresent(Bool.self, forKey: .isUnique) ?? false
        isGloballyUnique = try c.decodeIfPresent(Bool.self, forKey: .isGloballyUnique) ?? false
        originalName = try c.decodeIfPresent(String.self, forKey: .originalName)
        isOpaque = try c.decodeIfPresent(Bool.self, forKey: .isOpaque) ?? false
        isExternal = try c.decodeIfPresent(Bool.self, forKey: .isExternal) ?? false
        preservesValueOnDeletion = try c.decodeIfPresent(Bool.self, forKey: .preservesValueOnDeletion) ?? false
        hashModifier = try c.decodeIfPresent(String.self, forKey: .hashModifier)
        defaultValue = try c.decodeIfPresent(PGValue.self, forKey: .defaultValue)
    }
}
