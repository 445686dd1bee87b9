@_spi(PGModelInternals) import PGModelCore

// A schema's entities described as SwiftData describes them: attributes and relationships as
// `Schema.Attribute` and `Schema.Relationship` values, by name, inherited or declared, and the class
// hierarchy as entities. Worked out when asked: introspection is rare, and the save and fetch paths
// read `propertyMetadata` instead.
extension Schema.Entity {
    /// Every property of the entity, inherited ones first, in declaration order.
    ///
    /// ```swift
    /// let names = schema.entitiesByName["Trip"]?.properties.map(\.name)
    /// ```
    public var properties: [any SchemaProperty] {
        propertyMetadata.map { describe($0) }
    }

    /// The attributes, `.ephemeral` ones included (their ``Schema/Attribute/isTransient`` is true).
    ///
    /// ```swift
    /// let unique = schema.entitiesByName["Trip"]?.attributes.filter(\.isUnique).map(\.name)
    /// ```
    public var attributes: Set<Schema.Attribute> {
        Set(propertyMetadata.filter { !$0.isRelationship }.map { attribute($0) })
    }

    /// The attributes by name.
    ///
    /// ```swift
    /// let startDate = schema.entitiesByName["Trip"]?.attributesByName["startDate"]
    /// ```
    public var attributesByName: [String: Schema.Attribute] {
        Dictionary(propertyMetadata.filter { !$0.isRelationship }.map { ($0.name, attribute($0)) }) { first, _ in first }
    }

    /// The relationships, with their destinations and inverses.
    ///
    /// ```swift
    /// let cascading = schema.entitiesByName["Trip"]?.relationships.filter { $0.deleteRule == .cascade }
    /// ```
    public var relationships: Set<Schema.Relationship> {
        Set(propertyMetadata.compactMap { relationship($0) })
    }

    /// The relationships by name.
    ///
    /// ```swift
    /// let inverse = schema.entitiesByName["Trip"]?.relationshipsByName["livingAccommodation"]?.inverseName
    /// ```
    public var relationshipsByName: [String: Schema.Relationship] {
        Dictionary(propertyMetadata.compactMap { property in relationship(property).map { (property.name, $0) } }) { first, _ in first }
    }

    /// The properties the entity's own class declares (not those it inherits).
    ///
    /// ```swift
    /// let own = schema.entitiesByName["BusinessTrip"]?.storedProperties.map(\.name)
    /// ```
    public var storedProperties: [any SchemaProperty] {
        let inherited = inheritedNames
        return propertyMetadata.filter { !inherited.contains($0.name) }.map { describe($0) }
    }

    /// ``storedProperties`` by name.
    ///
    /// ```swift
    /// let perDiem = schema.entitiesByName["BusinessTrip"]?.storedPropertiesByName["perDiem"]
    /// ```
    public var storedPropertiesByName: [String: any SchemaProperty] {
        Dictionary(storedProperties.map { ($0.name, $0) }) { first, _ in first }
    }

    /// The properties inherited from the superentities.
    ///
    /// ```swift
    /// let inherited = schema.entitiesByName["BusinessTrip"]?.inheritedProperties.map(\.name)
    /// ```
    public var inheritedProperties: [any SchemaProperty] {
        let inherited = inheritedNames
        return propertyMetadata.filter { inherited.contains($0.name) }.map { describe($0) }
    }

    /// ``inheritedProperties`` by name.
    ///
    /// ```swift
    /// let name = schema.entitiesByName["BusinessTrip"]?.inheritedPropertiesByName["name"]
    /// ```
    public var inheritedPropertiesByName: [String: any SchemaProperty] {
        Dictionary(inheritedProperties.map { ($0.name, $0) }) { first, _ in first }
    }

    /// The entity of the `@Model` class this entity's class inherits from, if any.
    ///
    /// ```swift
    /// schema.entitiesByName["BusinessTrip"]?.superentity?.name   // "Trip"
    /// ```
    public var superentity: Schema.Entity? {
        type._$superentity.map { Schema.Entity($0, subclasses: subclasses) }
    }

    /// The entities of the schema's `@Model` classes that inherit directly from this entity's class.
    /// Empty for an entity made outside a schema.
    ///
    /// ```swift
    /// let kinds = schema.entitiesByName["Trip"]?.subentities.map(\.name)   // ["BusinessTrip", "PersonalTrip"]
    /// ```
    public var subentities: Set<Schema.Entity> {
        Set((subclasses[ObjectIdentifier(type)] ?? []).map { Schema.Entity($0, subclasses: subclasses) })
    }

    /// The groups of properties whose values are unique together among the owner's models: each `#Unique`
    /// group, then each `@Attribute(.unique)` property on its own (a subclass's include its superclass's).
    /// Groups unique across all users are ``globalUniquenessConstraints``.
    ///
    /// ```swift
    /// schema.entitiesByName["Trip"]?.uniquenessConstraints   // [["name", "startDate"], ["code"]]
    /// ```
    public var uniquenessConstraints: [[String]] {
        entityDescription.uniquenessConstraints.filter { $0.scope == .owner }.map(\.attributes)
    }

    /// The groups of properties whose values are unique together among every user's models: each group of
    /// `#Unique(…, scope: .allUsers)`, then each `@Attribute(.globallyUnique)` property on its own.
    ///
    /// ```swift
    /// schema.entitiesByName["Member"]?.globalUniquenessConstraints   // [["handle"]]
    /// ```
    public var globalUniquenessConstraints: [[String]] {
        entityDescription.uniquenessConstraints.filter { $0.scope == .allUsers }.map(\.attributes)
    }

    /// The property names of each index `#Index` declares, in index order.
    ///
    /// ```swift
    /// schema.entitiesByName["Trip"]?.indices   // [["name"], ["latitude", "longitude"]]
    /// ```
    public var indices: [[String]] {
        type._$indexes.map(\.properties)
    }

    /// The names of the properties the superclasses declare.
    private var inheritedNames: Set<String> {
        Set(type._$superentity?.schemaMetadata.map(\.name) ?? [])
    }

    private func describe(_ property: Schema.PropertyMetadata) -> any SchemaProperty {
        if let described = relationship(property) { return described }
        return attribute(property)
    }

    private func attribute(_ property: Schema.PropertyMetadata) -> Schema.Attribute {
        Schema.Attribute(name: property.name, originalName: property.metadata?.declaredOriginalName,
                         options: property.metadata?.options ?? [], valueType: property.valueType,
                         defaultValue: property.swiftDefault(), hashModifier: property.metadata?.hashModifier)
    }

    private func relationship(_ property: Schema.PropertyMetadata) -> Schema.Relationship? {
        guard let metadata = property.relationship, let description = relationshipDescription(named: property.name) else { return nil }
        return Schema.Relationship(name: property.name, keypath: property.keypath, valueType: property.valueType,
                                   declared: metadata.options, description: description)
    }
}
