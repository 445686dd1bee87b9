@_spi(PGModelInternals) extension QueryExpression {
    /// Checks this expression against `schema` as a filter of `entity`, before any SQL is rendered: every
    /// key path, cast, document field path, relationship and aggregate operand resolves; nesting, lists
    /// and values stay within ``RequestLimits``. Throws the code the renderer would (`unknown_entity`,
    /// `unknown_attribute`, `unsupported_predicate`) or `invalid_field` for a limit, naming the key path.
    ///
    /// ```swift
    /// try QueryExpression.compare(.equal, .key("album.title"), .value(.string("x"))).validate(against: schema, entity: "Track")
    /// ```
    public func validate(against schema: SchemaDescription, entity: String) throws {
        let root = try schema.requireEntity(entity)
        try ExpressionValidator(schema: schema, model: root.name).check(self, in: root, depth: 1)
    }
}

/// What a key path names, resolved as the renderer resolves it.
enum KeyPathTarget {
    case attribute(AttributeDescription)
    case toOne(RelationshipDescription)
    case toMany(RelationshipDescription)
}

/// Walks an expression tree once, with the fetched entity's name for every error.
struct ExpressionValidator {
    let schema: SchemaDescription
    /// The fetched entity: errors name it, as the renderer's do.
    let model: String

    /// Document fields can be compared as these types (`#>>` yields text, cast to the type).
    static let documentFieldTypes: Set<AttributeType> = [.string, .url, .bool, .int16, .int32, .int64, .float, .double, .decimal]

    func check(_ expression: QueryExpression, in entity: EntityDescription, depth: Int) throws {
        // The renderer recurses once per level, so depth is what bounds its stack.
        guard depth <= RequestLimits.maximumExpressionDepth else {
            throw PGModelError(.invalidField, "an expression may nest at most \(RequestLimits.maximumExpressionDepth) levels deep", model: model)
        }
        let next = depth + 1
        switch expression {
        case .key(let path):
            if case .toMany = try resolve(path, from: entity) {
                throw PGModelError(.unsupportedPredicate,
                    "'\(path)' is a to-many relationship; use count, contains(where:) or allSatisfy on it", model: model, keyPath: path)
            }
        case .isKind(let name):
            guard schema.entity(named: name) != nil else {
                throw PGModelError(.unknownEntity, "`is \(name)` names an entity that is not registered in the schema", model: model)
            }
        case .field(let document, let path, let type):
            try checkField(document, path, type, in: entity)
        case .arrayContains(let array, let element):
            guard case .key(let name) = array else {
                throw PGModelError(.unsupportedPredicate, "contains(_:) needs a stored array attribute", model: model)
            }
            guard case .attribute(let attribute) = try resolve(name, from: entity), attribute.type.arrayElementType != nil else {
                throw PGModelError(.unsupportedPredicate, "'\(name)' is not an array attribute of scalars", model: model, keyPath: name)
            }
            try check(element, in: entity, depth: next)
        case .arrayElement(let array, let index):
            try checkArrayAttribute(array, in: entity, "an index subscript")
            guard index >= 0, index < Int(Int32.max) else {
                throw PGModelError(.invalidField, "an array index must be between 0 and \(Int32.max - 1), not \(index)", model: model)
            }
        case .arrayFold(let fold, let array):
            try checkArrayAttribute(array, in: entity, fold.swiftName)
        case .aggregate(let aggregate):
            let destination = try resolveToMany(aggregate, from: entity)
            if [.min, .max, .sum].contains(aggregate.function), aggregate.value == nil {
                throw PGModelError(.unsupportedPredicate, "\(aggregate.function.rawValue) of '\(aggregate.relationship)' needs a value to fold",
                                   model: model, keyPath: aggregate.relationship)
            }
            if let predicate = aggregate.predicate { try check(predicate, in: destination, depth: next) }
            if let value = aggregate.value { try check(value, in: destination, depth: next) }
        case .value(let value):
            try value.validateBindable(model: model, keyPath: nil)
        case .compare(_, let l, let r), .arithmetic(_, let l, let r), .string(_, let l, let r), .coalesce(let l, let r):
            try check(l, in: entity, depth: next)
            try check(r, in: entity, depth: next)
        case .and(let operands), .or(let operands):
            guard operands.count <= RequestLimits.maximumListCount else {
                throw PGModelError(.invalidField, "an and/or has more than \(RequestLimits.maximumListCount) operands", model: model)
            }
            for operand in operands { try check(operand, in: entity, depth: next) }
        case .not(let operand), .negate(let operand):
            try check(operand, in: entity, depth: next)
        case .conditional(let test, let then, let otherwise):
            for operand in [test, then, otherwise] { try check(operand, in: entity, depth: next) }
        case .in(let needle, let values):
            guard values.count <= RequestLimits.maximumListCount else {
                throw PGModelError(.unsupportedPredicate,
                    "a captured array of \(values.count) elements exceeds the \(RequestLimits.maximumListCount) PGModel renders in `contains`", model: model)
            }
            for value in values { try value.validateBindable(model: model, keyPath: nil) }
            try check(needle, in: entity, depth: next)
        }
    }

    /// `array` is a stored array attribute of scalars of `entity`.
    ///
    /// ```swift
    /// try validator.checkArrayAttribute(.key("tags"), in: entity, "count")
    /// ```
    func checkArrayAttribute(_ array: QueryExpression, in entity: EntityDescription, _ what: String) throws {
        guard case .key(let name) = array else {
            throw PGModelError(.unsupportedPredicate, "\(what) needs a stored array attribute", model: model)
        }
        guard case .attribute(let attribute) = try resolve(name, from: entity), attribute.type.arrayElementType != nil else {
            throw PGModelError(.unsupportedPredicate, "'\(name)' is not an array attribute of scalars, so \(what) cannot read it", model: model, keyPath: name)
        }
    }

    /// `.field(document, path, type)`: a stored Codable attribute, a bounded path, a type a document field can be read as.
    func checkField(_ document: QueryExpression, _ path: [String], _ type: AttributeType, in entity: EntityDescription) throws {
        guard case .key(let name) = document else {
            throw PGModelError(.unsupportedPredicate, "a field can only be read from a stored Codable attribute", model: model)
        }
        guard case .attribute(let attribute) = try resolve(name, from: entity), attribute.type == .json else {
            throw PGModelError(.unsupportedPredicate, "'\(name)' is not a Codable (jsonb) attribute, so it has no fields", model: model, keyPath: name)
        }
        guard path.count <= RequestLimits.maximumPathSteps else {
            throw PGModelError(.invalidField, "a field path inside '\(name)' has more than \(RequestLimits.maximumPathSteps) steps", model: model, keyPath: name)
        }
        for step in path { try PGValue.string(step).validateBindable(model: model, keyPath: name) }
        guard path.isEmpty || Self.documentFieldTypes.contains(type) else {
            throw PGModelError(.unsupportedPredicate, "a field of '\(name)' cannot be compared as \(type.rawValue) inside a document",
                               model: model, keyPath: name)
        }
    }

    /// Follows `path` through to-one relationships from `entity`, as the renderer's joins do; the last step
    /// may also name an attribute or relationship of a subclass (an `as?` cast).
    func resolve(_ path: String, from entity: EntityDescription) throws -> KeyPathTarget {
        let (owner, last) = try walkToOne(path, from: entity)
        if let attribute = owner.attribute(named: last) ?? inSubclasses(of: owner, { $0.attribute(named: last) }) {
            guard !attribute.isOpaque else {
                throw PGModelError(.unsupportedPredicate,
                    "'\(last)' of \(owner.name) is stored with @Attribute(.codable): opaque, so predicates and sorts cannot use it",
                    model: model, keyPath: path)
            }
            return .attribute(attribute)
        }
        guard let relationship = owner.relationship(named: last) ?? inSubclasses(of: owner, { $0.relationship(named: last) }) else {
            throw PGModelError(.unknownAttribute, "\(owner.name) has no stored property '\(last)'", model: model, keyPath: path)
        }
        return relationship.isToMany ? .toMany(relationship) : .toOne(relationship)
    }

    /// The destination entity of an aggregate's to-many relationship.
    func resolveToMany(_ aggregate: Aggregate, from entity: EntityDescription) throws -> EntityDescription {
        let path = aggregate.relationship
        let (owner, last) = try walkToOne(path, from: entity)
        guard let relationship = owner.relationship(named: last) else {
            throw PGModelError(.unknownAttribute, "\(owner.name) has no relationship '\(last)'", model: model, keyPath: path)
        }
        guard relationship.isToMany else {
            throw PGModelError(.unsupportedPredicate, "'\(path)' is a to-one relationship; \(aggregate.function.rawValue) needs a to-many one",
                               model: model, keyPath: path)
        }
        return try schema.requireEntity(relationship.destination)
    }

    /// The entity owning the last step of `path` and that step's name; every earlier step is a to-one relationship.
    private func walkToOne(_ path: String, from entity: EntityDescription) throws -> (EntityDescription, String) {
        let steps = path.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        guard steps.count <= RequestLimits.maximumPathSteps else {
            throw PGModelError(.invalidField, "key path '\(path.prefix(200))' has more than \(RequestLimits.maximumPathSteps) steps", model: model)
        }
        guard let last = steps.last, !steps.contains(where: \.isEmpty) else {
            throw PGModelError(.unknownAttribute, "'\(path)' is not a key path of \(entity.name)", model: model, keyPath: path)
        }
        var current = entity
        for step in steps.dropLast() {
            guard let relationship = current.relationship(named: step) else {
                let code: PGModelError.Code = current.attribute(named: step) == nil ? .unknownAttribute : .unsupportedPredicate
                throw PGModelError(code, "'\(step)' in key path '\(path)' is not a relationship of \(current.name)", model: model, keyPath: path)
            }
            guard !relationship.isToMany else {
                throw PGModelError(.unsupportedPredicate,
                    "key path '\(path)' goes through the to-many relationship '\(step)' of \(current.name); only to-one relationships can be followed with dots",
                    model: model, keyPath: path)
            }
            current = try schema.requireEntity(relationship.destination)
        }
        return (current, last)
    }

    private func inSubclasses<T>(of entity: EntityDescription, _ find: (EntityDescription) -> T?) -> T? {
        for name in schema.entityNames(inHierarchyOf: entity.name).dropFirst() {
            if let subclass = schema.entity(named: name), let found = find(subclass) { return found }
        }
        return nil
    }
}

@_spi(PGModelInternals) extension SchemaDescription {
    /// The entity named `name`, or `unknown_entity`.
    ///
    /// ```swift
    /// let trip = try schema.requireEntity("Trip")
    /// ```
    public func requireEntity(_ name: String) throws -> EntityDescription {
        guard let entity = entity(named: name) else {
            throw PGModelError(.unknownEntity, "entity '\(name.prefix(200))' is not registered in the schema", model: name)
        }
        return entity
    }
}

extension ArrayFold {
    /// How Swift spells the fold, for messages.
    var swiftName: String {
        switch self {
        case .min: return "min()"
        case .max: return "max()"
        case .count: return "count"
        }
    }
}
