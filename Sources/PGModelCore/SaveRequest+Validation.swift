import Foundation

extension SaveRequest {
    /// Checks every change against `schema` before any SQL is rendered: entities exist, row values name
    /// stored attributes or foreign-key relationships and fit their types and PostgreSQL's ranges, links
    /// name join-table relationships, batch deletes are valid fetches, shares name a user. The store calls
    /// it before opening the transaction; errors carry the renderer's codes and name the key path.
    ///
    /// ```swift
    /// try SaveRequest(inserts: [RowValues(entity: "Trip", id: id, values: ["name": .string("Paris")])]).validate(against: schema)
    /// ```
    public func validate(against schema: SchemaDescription) throws {
        for row in inserts { try row.validate(against: schema) }
        for row in updates { try row.validate(against: schema) }
        for reference in deletes { _ = try schema.requireEntity(reference.entity) }
        for change in links {
            let entity = try schema.requireEntity(change.entity)
            guard let relationship = entity.relationship(named: change.relationship) else {
                throw PGModelError(.unknownAttribute, "\(entity.name) has no relationship '\(change.relationship)'", model: entity.name, keyPath: change.relationship)
            }
            guard case .joinTable = schema.storage(of: relationship, in: entity) else {
                throw PGModelError(.invalidField, "\(entity.name).\(relationship.name) is not stored in a join table: set the to-one side in the row's values",
                                   model: entity.name, keyPath: relationship.name)
            }
        }
        for request in batchDeletes { try request.validate(against: schema) }
        for share in shares {
            let entity = try schema.requireEntity(share.record.entity)
            guard (1...128).contains(share.user.count) else {
                throw PGModelError(.invalidField, "a share of \(entity.name) must name a user of 1 to 128 characters", model: entity.name, keyPath: "user")
            }
            try PGValue.string(share.user).validateBindable(model: entity.name, keyPath: "user")
        }
        if let author { try PGValue.string(author).validateBindable(model: nil, keyPath: "author") }
    }
}

extension RowValues {
    /// Every key is a stored attribute (whose value fits its type) or a to-one relationship kept as a
    /// foreign key in this row's table (whose value is a uuid or null).
    func validate(against schema: SchemaDescription) throws {
        let entity = try schema.requireEntity(self.entity)
        // In any order first (no sorted copy of every row); only a row with an error is checked again
        // in its keys' order, so the error reported is the one of its first key, as always.
        do {
            try forEachValue { key, value in try Self.validate(key, value, entity, schema) }
        } catch {
            for (key, value) in values.sorted(by: { $0.key < $1.key }) { try Self.validate(key, value, entity, schema) }
            throw error
        }
    }

    /// Checks one value of a row of `entity`.
    private static func validate(_ key: String, _ value: PGValue, _ entity: EntityDescription, _ schema: SchemaDescription) throws {
        if let attribute = entity.attribute(named: key) {
            if value.isNull && !attribute.isOptional {
                throw PGModelError(.typeMismatch, "\(entity.name).\(key) is not optional but the value is nil", model: entity.name, keyPath: key)
            }
            guard let coerced = attribute.type.coerce(value) else {
                throw PGModelError(.typeMismatch, "\(entity.name).\(key) stores \(attribute.type.rawValue) but the value is a \(value.kindName)",
                                   model: entity.name, keyPath: key)
            }
            try coerced.validateBindable(model: entity.name, keyPath: key)
            return
        }
        guard let relationship = entity.relationship(named: key) else {
            throw PGModelError(.unknownAttribute, "\(entity.name) has no stored property '\(key)'", model: entity.name, keyPath: key)
        }
        guard case .foreignKey = schema.storage(of: relationship, in: entity) else {
            throw PGModelError(.invalidField, "\(entity.name).\(key) is not stored in this row: set its inverse, or send links",
                               model: entity.name, keyPath: key)
        }
        switch value {
        case .null, .uuid: return
        case .string(let text) where UUID(uuidString: text) != nil: return
        default:
            throw PGModelError(.typeMismatch, "\(entity.name).\(key) is a reference to \(relationship.destination) (a uuid or null) but the value is a \(value.kindName)",
                               model: entity.name, keyPath: key)
        }
    }
}
