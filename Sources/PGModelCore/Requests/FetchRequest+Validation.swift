@_spi(PGModelInternals) extension FetchRequest {
    /// Checks the whole fetch against `schema` before any SQL is rendered: the entity, the predicate
    /// (``QueryExpression/validate(against:entity:)``), every sort key and its cast, property names, the
    /// related scope, list sizes and the page's range. The renderer calls it first, so no request it
    /// cannot render reaches it; errors carry the renderer's codes and name the key path.
    ///
    /// ```swift
    /// try FetchRequest(entity: "Trip", sort: [SortKey("location.latitude", field: .double)]).validate(against: schema)
    /// ```
    public func validate(against schema: SchemaDescription) throws {
        let root = try schema.requireEntity(entity)
        let validator = ExpressionValidator(schema: schema, model: root.name)
        for (name, value) in [("limit", limit), ("offset", offset)] {
            if let value, value < 0 {
                throw PGModelError(.invalidField, "\(name) of a fetch of \(root.name) must not be negative", model: root.name, keyPath: name)
            }
        }
        try Self.checkCount(identifiers?.count, "ids", root.name)
        try Self.checkCount(properties?.count, "properties", root.name)
        guard sort.count <= RequestLimits.maximumSortKeys else {
            throw PGModelError(.invalidField, "a fetch of \(root.name) has more than \(RequestLimits.maximumSortKeys) sort keys", model: root.name, keyPath: "sort")
        }
        if let properties {
            let classes = schema.entityNames(inHierarchyOf: root.name).compactMap { schema.entity(named: $0) }
            for name in properties where !classes.contains(where: { $0.attribute(named: name) != nil || $0.relationship(named: name) != nil }) {
                throw PGModelError(.unknownAttribute, "\(root.name) has no stored property '\(name)'", model: root.name, keyPath: name)
            }
        }
        if let related { try related.validate(against: schema, destination: root) }
        if let predicate { try validator.check(predicate, in: root, depth: 1) }
        if let after {
            guard after.values.count == sort.count else {
                throw PGModelError(.invalidField, "'after' of a fetch of \(root.name) has \(after.values.count) values for \(sort.count) sort keys",
                                   model: root.name, keyPath: "after")
            }
            guard related == nil else {
                throw PGModelError(.invalidField, "'after' cannot page a related fetch of \(root.name)", model: root.name, keyPath: "after")
            }
            for (key, value) in zip(sort, after.values) { try value.validateBindable(model: root.name, keyPath: key.key) }
        }
        for key in sort {
            do {
                try key.validate(validator, in: root)
            } catch let error as PGModelError where error.code == .unsupportedPredicate {
                throw PGModelError(.unsupportedSort, error.message, model: error.model, keyPath: error.keyPath)
            }
        }
    }

    static func checkCount(_ count: Int?, _ field: String, _ model: String) throws {
        guard let count, count > RequestLimits.maximumListCount else { return }
        throw PGModelError(.invalidField, "'\(field)' of a request for \(model) has more than \(RequestLimits.maximumListCount) elements",
                           model: model, keyPath: field)
    }
}

extension SortKey {
    /// A plain key resolves to an attribute or to-one relationship; a key with a cast (`as`) is a stored
    /// Codable attribute followed by a field path.
    func validate(_ validator: ExpressionValidator, in root: EntityDescription) throws {
        guard let type = field else {
            if case .toMany = try validator.resolve(key, from: root) {
                throw PGModelError(.unsupportedSort, "sort key '\(key)' of \(root.name) is a to-many relationship", model: root.name, keyPath: key)
            }
            return
        }
        let parts = key.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        guard let first = parts.first, !parts.contains(where: \.isEmpty) else {
            throw PGModelError(.unsupportedSort, "sort key '\(key.prefix(200))' of \(root.name) is not a key path", model: root.name, keyPath: key)
        }
        try validator.checkField(.key(first), Array(parts.dropFirst()), type, in: root)
    }
}

extension RelatedScope {
    /// The source entity declares the relationship, it leads to `destination`'s hierarchy, and the id list is bounded.
    func validate(against schema: SchemaDescription, destination: EntityDescription) throws {
        let source = try schema.requireEntity(entity)
        guard let relationship = source.relationship(named: self.relationship) else {
            throw PGModelError(.unknownAttribute, "\(source.name) has no relationship '\(self.relationship)'", model: source.name, keyPath: self.relationship)
        }
        guard schema.rootEntity(of: relationship.destination)?.name == schema.rootEntity(of: destination.name)?.name else {
            throw PGModelError(.invalidField, "\(source.name).\(relationship.name) leads to \(relationship.destination), not \(destination.name)",
                               model: destination.name, keyPath: relationship.name)
        }
        try FetchRequest.checkCount(ids.count, "related.ids", destination.name)
    }
}
