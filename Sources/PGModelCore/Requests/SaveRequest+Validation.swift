import Foundation

@_spi(PGModelInternals) extension SaveRequest {
    /// Checks every change against `schema` before any SQL is rendered: entities exist, row values name
    /// stored attributes or foreign-key relationships and fit their types and PostgreSQL's ranges, links
    /// name join-table relationships, batch deletes are valid fetches, shares name a user. The store calls
    /// it before opening the transaction; errors carry the renderer's codes and name the key path.
    ///
    /// ```swift
    /// try SaveRequest(inserts: [RowValues(entity: "Trip", id: id, values: ["name": .string("Paris")])]).validate(against: schema)
    /// ```
    public func validate(against schema: SchemaDescription) throws {
        // Inserted rows of one class share their names (``RowKeys``): each name is looked up once per
        // class, not once per row (a large save would look every name up once per row).
        var plans: [RowValues.KeysPlan.Key: RowValues.KeysPlan] = [:]
        for row in inserts { try row.validate(against: schema, plans: &plans) }
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
        for (value, field) in [(bundleIdentifier, "bundleIdentifier"), (processIdentifier, "processIdentifier")] {
            guard let value else { continue }
            guard value.count <= ProcessIdentity.maximumLength else {
                throw PGModelError(.invalidField, "\(field) of a save must be at most \(ProcessIdentity.maximumLength) characters", keyPath: field)
            }
            try PGValue.string(value).validateBindable(model: nil, keyPath: field)
        }
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

    /// What each position of a ``RowKeys`` names in one class: resolved once, then every row of the
    /// class with those keys checks only its values.
    struct KeysPlan {
        struct Key: Hashable {
            var keys: ObjectIdentifier
            var entity: String
        }
        enum Position {
            /// Only what the check of a value reads: copying an ``AttributeDescription`` (its strings)
            /// for every value cost more than the check.
            case attribute(AttributeType, isOptional: Bool)
            case foreignKey
            /// A repeated name: ``forEachValue(_:)`` skips it.
            case skipped
        }
        /// Nil when a name is not stored in this row: the row takes the full check, which reports it.
        var positions: [Position]?
    }

    /// ``validate(against:)``, with the names of a positional row resolved once per keys and class.
    /// Any error is reported by the full check, so it is the one ``validate(against:)`` reports.
    func validate(against schema: SchemaDescription, plans: inout [KeysPlan.Key: KeysPlan]) throws {
        guard let (keys, values) = positionalValues else { return try validate(against: schema) }
        let key = KeysPlan.Key(keys: ObjectIdentifier(keys), entity: entity)
        let plan: KeysPlan
        if let known = plans[key] {
            plan = known
        } else {
            plan = Self.plan(keys, entity, schema)
            plans[key] = plan
        }
        guard let positions = plan.positions, positions.count == values.count else { return try validate(against: schema) }
        for (position, value) in zip(positions, values) {
            switch position {
            case .skipped: continue
            case .attribute(let type, let isOptional):
                if value.isNull && !isOptional { return try validate(against: schema) }
                guard let coerced = type.coerce(value), (try? coerced.validateBindable(model: nil, keyPath: nil)) != nil else {
                    return try validate(against: schema)
                }
            case .foreignKey:
                switch value {
                case .null, .uuid: continue
                case .string(let text) where UUID(uuidString: text) != nil: continue
                default: return try validate(against: schema)
                }
            }
        }
    }

    private static func plan(_ keys: RowKeys, _ entityName: String, _ schema: SchemaDescription) -> KeysPlan {
        guard let entity = schema.entity(named: entityName) else { return KeysPlan(positions: nil) }
        var positions: [KeysPlan.Position] = []
        for (i, name) in keys.names.enumerated() {
            if keys.positions[name] != i {
                positions.append(.skipped)
            } else if let attribute = entity.attribute(named: name) {
                positions.append(.attribute(attribute.type, isOptional: attribute.isOptional))
            } else if let relationship = entity.relationship(named: name), case .foreignKey = schema.storage(of: relationship, in: entity) {
                positions.append(.foreignKey)
            } else {
                return KeysPlan(positions: nil)
            }
        }
        return KeysPlan(positions: positions)
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
