import Foundation

/// The first way a registration differs from what is registered: what a user without schema rights is
/// told when their `register` would create or change a table.
///
/// ```swift
/// if let difference = registered.firstDifference(registering: schema) { print(difference) }
/// // Trip.startDate is registered as date, not string
/// ```
@_spi(PGModelInternals) public struct SchemaDifference: Sendable, Hashable, CustomStringConvertible {
    /// The entity that differs.
    public var entity: String
    /// What differs, in words that name the entity and property, never a value.
    public var description: String

    public init(entity: String, description: String) {
        self.entity = entity
        self.description = description
    }
}

@_spi(PGModelInternals) extension SchemaDescription {
    /// The first difference between `schema` and this registered schema, or `nil` when every entity of
    /// `schema` is registered with exactly the same shape (extra registered entities do not matter).
    ///
    /// ```swift
    /// registered.firstDifference(registering: schema)   // nil: nothing would change
    /// ```
    public func firstDifference(registering schema: SchemaDescription) -> SchemaDifference? {
        for wanted in schema.entities {
            guard let have = entity(named: wanted.name) else {
                return SchemaDifference(entity: wanted.name, description: "\(wanted.name) is not registered")
            }
            if have.shape == wanted.shape { continue }
            func differ(_ what: String) -> SchemaDifference {
                SchemaDifference(entity: wanted.name, description: "\(wanted.name)\(what)")
            }
            if have.tableName != wanted.tableName { return differ(" is registered with another table") }
            if have.superentity != wanted.superentity { return differ(" is registered with another superclass") }
            for attribute in wanted.attributes {
                guard let registered = have.attribute(named: attribute.name) else { return differ(".\(attribute.name) is not registered") }
                if registered.type != attribute.type {
                    return differ(".\(attribute.name) is registered as \(registered.type.rawValue), not \(attribute.type.rawValue)")
                }
                if registered.shape != attribute.shape { return differ(".\(attribute.name) is registered with other options") }
            }
            for attribute in have.attributes where wanted.attribute(named: attribute.name) == nil {
                return differ(".\(attribute.name) is registered but not in this schema")
            }
            for relationship in wanted.relationships {
                guard let registered = have.relationship(named: relationship.name) else {
                    return differ(".\(relationship.name) is not registered")
                }
                if registered.deleteRule != relationship.deleteRule {
                    return differ(".\(relationship.name) is registered with deleteRule .\(registered.deleteRule.rawValue), not .\(relationship.deleteRule.rawValue)")
                }
                if registered != relationship { return differ(".\(relationship.name) is registered with another destination, inverse or count") }
            }
            for relationship in have.relationships where wanted.relationship(named: relationship.name) == nil {
                return differ(".\(relationship.name) is registered but not in this schema")
            }
            if have.uniquenessConstraints != wanted.uniquenessConstraints { return differ(" is registered with other uniqueness constraints") }
            if have.indexes != wanted.indexes {
                // The same groups of another kind (.binary ↔ .rtree) are other PostgreSQL indexes too.
                if have.indexes.map(\.attributes) == wanted.indexes.map(\.attributes) {
                    return differ(" is registered with other index kinds")
                }
                return differ(" is registered with other indexes")
            }
            return differ(" is registered differently")
        }
        return nil
    }
}

@_spi(PGModelInternals) extension SchemaDescription {
    /// This registered schema with `schema`'s entities registered over it: what the store holds after the
    /// registration. Entities are ordered by name, so the same store always renders the same SQL.
    ///
    /// ```swift
    /// registered.merging(schema).entities.map(\.name)   // ["Note", "Trip"]: Note was there, Trip is new
    /// ```
    public func merging(_ schema: SchemaDescription) -> SchemaDescription {
        let replaced = Set(schema.entities.map(\.name))
        let kept = entities.filter { !replaced.contains($0.name) }
        return SchemaDescription(entities: (kept + schema.entities).sorted { $0.name < $1.name }, version: schema.version)
    }
}

@_spi(PGModelInternals) extension EntityDescription {
    /// This entity without what does not change its storage (attribute defaults): what registrations and
    /// migrations compare, so a changed default value alone never counts as another schema.
    ///
    /// ```swift
    /// registered.shape == declared.shape   // true when only a default value changed
    /// ```
    public var shape: EntityDescription {
        var copy = self
        copy.attributes = attributes.map(\.shape)
        return copy
    }
}

@_spi(PGModelInternals) extension AttributeDescription {
    /// This attribute without its default value (see ``EntityDescription/shape``).
    public var shape: AttributeDescription {
        var copy = self
        copy.defaultValue = nil
        return copy
    }
}
