@_spi(PGModelInternals) extension SchemaDescription {
    /// The class hierarchies (by root entity name) whose changes can change the result of `request`:
    /// the fetched entity's, and every hierarchy its predicate and sort reach through relationships.
    /// Observers re-query only when a committed change touches one of them.
    ///
    /// ```swift
    /// schema.dependencies(of: FetchRequest(entity: "Track", predicate: .compare(.equal, .key("album.title"), .value(.string("X")))))
    /// // ["Track", "Album"]
    /// ```
    public func dependencies(of request: FetchRequest) -> Set<String> {
        var roots: Set<String> = []
        addRoot(of: request.entity, to: &roots)
        if let predicate = request.predicate { collect(predicate, from: request.entity, into: &roots) }
        for key in request.sort { follow(key.key, from: request.entity, into: &roots) }
        return roots
    }

    private func addRoot(of entity: String, to roots: inout Set<String>) {
        roots.insert(rootEntity(of: entity)?.name ?? entity)
    }

    /// A relationship named `name` declared anywhere in `entity`'s hierarchy (a subclass's too, which
    /// `as?` casts in predicates reach).
    private func relationship(named name: String, inHierarchyOf entity: String) -> RelationshipDescription? {
        let root = rootEntity(of: entity)?.name ?? entity
        for member in entityNames(inHierarchyOf: root) {
            if let relationship = self.entity(named: member)?.relationship(named: name) { return relationship }
        }
        return nil
    }

    /// Follows a dotted key (`album.artist.name`) through relationships; returns the last entity reached.
    @discardableResult
    private func follow(_ key: String, from entity: String, into roots: inout Set<String>) -> String {
        var current = entity
        for component in key.split(separator: ".").map(String.init) {
            guard let relationship = relationship(named: component, inHierarchyOf: current) else { break }
            current = relationship.destination
            addRoot(of: current, to: &roots)
        }
        return current
    }

    private func collect(_ expression: QueryExpression, from entity: String, into roots: inout Set<String>) {
        switch expression {
        case .key(let key):
            follow(key, from: entity, into: &roots)
        case .isKind, .value:
            break
        case .field(let base, _, _), .negate(let base), .not(let base), .arrayElement(let base, _), .arrayFold(_, let base):
            collect(base, from: entity, into: &roots)
        case .arrayContains(let a, let b), .compare(_, let a, let b), .arithmetic(_, let a, let b),
             .string(_, let a, let b), .coalesce(let a, let b):
            collect(a, from: entity, into: &roots)
            collect(b, from: entity, into: &roots)
        case .aggregate(let aggregate):
            let destination = follow(aggregate.relationship, from: entity, into: &roots)
            if let predicate = aggregate.predicate { collect(predicate, from: destination, into: &roots) }
            if let value = aggregate.value { collect(value, from: destination, into: &roots) }
        case .and(let parts), .or(let parts):
            for part in parts { collect(part, from: entity, into: &roots) }
        case .conditional(let a, let b, let c):
            for part in [a, b, c] { collect(part, from: entity, into: &roots) }
        case .in(let base, _):
            collect(base, from: entity, into: &roots)
        }
    }
}
