/// Inheritance and relationship resolution: which table a class lives in, which classes a fetch of a
/// class returns, and where each relationship's links are stored.
///
/// ```swift
/// schema.rootEntity(of: "BusinessTrip")?.name          // "Trip"
/// schema.entityNames(inHierarchyOf: "Trip")             // ["Trip", "BusinessTrip", "PersonalTrip"]
/// schema.storage(of: track.relationship(named: "album")!, in: track)  // .foreignKey(column: "album_id")
/// ```
@_spi(PGModelInternals) extension SchemaDescription {
    /// The root of `name`'s class hierarchy (itself when it has no superentity); nil for an unknown name
    /// or a cycle.
    public func rootEntity(of name: String) -> EntityDescription? {
        var current = entity(named: name)
        var steps = 0
        while let parent = current?.superentity {
            steps += 1
            guard steps <= entities.count else { return nil }
            current = entity(named: parent)
        }
        return current
    }

    /// `name` and every entity that inherits from it, directly or not, in registration order (`name` first).
    /// A fetch of `name` returns exactly these classes; `$0 is Name` tests for them.
    public func entityNames(inHierarchyOf name: String) -> [String] {
        guard entity(named: name) != nil else { return [] }
        var result = [name]
        var frontier: Set<String> = [name]
        while !frontier.isEmpty {
            let children = entities.filter { $0.superentity.map(frontier.contains) ?? false }.map(\.name)
            let new = children.filter { !result.contains($0) }
            result.append(contentsOf: new)
            frontier = Set(new)
        }
        return result
    }

    /// Whether a fetch of `name` must filter on the `entity` column: true unless `name` and its
    /// descendants are every class stored in the table.
    public func needsEntityFilter(_ name: String) -> Bool {
        guard let root = rootEntity(of: name) else { return false }
        return entityNames(inHierarchyOf: name).count != entityNames(inHierarchyOf: root.name).count
    }

    /// The table of `name`'s hierarchy: the root's table name.
    public func tableName(of name: String) -> String? {
        rootEntity(of: name)?.tableName
    }

    /// Every attribute stored in the table of `root`'s hierarchy, first declaration wins, in hierarchy
    /// order. Subclass columns are nullable in the table, since other classes' rows leave them empty.
    public func tableAttributes(ofRoot root: String) -> [(attribute: AttributeDescription, declaredBy: String)] {
        var seen = Set<String>()
        var result: [(AttributeDescription, String)] = []
        for name in entityNames(inHierarchyOf: root) {
            guard let entity = entity(named: name) else { continue }
            for attribute in entity.attributes where seen.insert(attribute.columnName).inserted {
                result.append((attribute, name))
            }
        }
        return result
    }

    /// The relationships stored as a foreign key in the table of `root`'s hierarchy, first declaration wins.
    public func tableForeignKeys(ofRoot root: String) -> [(relationship: RelationshipDescription, declaredBy: String)] {
        var seen = Set<String>()
        var result: [(RelationshipDescription, String)] = []
        for name in entityNames(inHierarchyOf: root) {
            guard let entity = entity(named: name) else { continue }
            for relationship in entity.relationships {
                guard case .foreignKey(let column) = storage(of: relationship, in: entity), seen.insert(column).inserted else { continue }
                result.append((relationship, name))
            }
        }
        return result
    }

    /// The inverse of `relationship` (declared on `entity`), if it has one.
    public func inverse(of relationship: RelationshipDescription) -> RelationshipDescription? {
        guard let inverseName = relationship.inverse, let destination = entity(named: relationship.destination) else { return nil }
        return destination.relationship(named: inverseName)
    }

    /// The class that declares `relationship` for `entity`: the topmost ancestor of `entity` (itself
    /// included) that has a relationship of that name. A subclass inherits its superclass's
    /// relationships, and their storage must not depend on which class of the hierarchy asks.
    public func declaringEntity(of relationship: String, in entity: EntityDescription) -> EntityDescription {
        var result = entity
        var current = entity
        var steps = 0
        while let parentName = current.superentity, let parent = self.entity(named: parentName), steps <= entities.count {
            steps += 1
            if parent.relationship(named: relationship) != nil { result = parent }
            current = parent
        }
        return result
    }

    /// Where `relationship` of `entity` keeps its links.
    ///
    /// - to-one without inverse, or whose inverse is to-many: a foreign key here (`<name>_id`).
    /// - to-many whose inverse is to-one: the inverse's foreign key on the destination.
    /// - one-to-one: the side whose `Entity.property` sorts first holds the key.
    /// - to-many without inverse, and many-to-many: a join table `<table>_<relationship>` named after the
    ///   owning side (the one that sorts first), with columns `<table>_id` and `<relationship>_id`.
    ///
    /// Sides are named by the class that *declares* the relationship (``declaringEntity(of:in:)``), so a
    /// subclass and its superclass agree on the storage of an inherited relationship.
    public func storage(of relationship: RelationshipDescription, in entity: EntityDescription) -> RelationshipStorage {
        let inverse = self.inverse(of: relationship)
        let declaring = declaringEntity(of: relationship.name, in: entity)
        let destinationName: String
        if let inverse, let destination = self.entity(named: relationship.destination) {
            destinationName = declaringEntity(of: inverse.name, in: destination).name
        } else {
            destinationName = relationship.destination
        }
        // The inverse is bound in the patterns that have one, so no case needs to unwrap it.
        switch (relationship.isToMany, inverse) {
        case (false, nil):
            return .foreignKey(column: relationship.foreignKeyColumn)
        case (false, let inverse?) where inverse.isToMany:
            return .foreignKey(column: relationship.foreignKeyColumn)
        case (true, let inverse?) where !inverse.isToMany:
            return .inverseForeignKey(column: inverse.foreignKeyColumn)
        case (false, let inverse?):
            return (declaring.name, relationship.name) <= (destinationName, inverse.name)
                ? .foreignKey(column: relationship.foreignKeyColumn)
                : .inverseForeignKey(column: inverse.foreignKeyColumn)
        case (true, nil):
            return Self.joinTable(owner: declaring, relationship: relationship, reversed: false)
        case (true, let inverse?):
            if (declaring.name, relationship.name) <= (destinationName, inverse.name) {
                return Self.joinTable(owner: declaring, relationship: relationship, reversed: false)
            }
            let owner = self.entity(named: destinationName) ?? entity
            return Self.joinTable(owner: owner, relationship: inverse, reversed: true)
        }
    }

    private static func joinTable(owner: EntityDescription, relationship: RelationshipDescription, reversed: Bool) -> RelationshipStorage {
        let ownerName = Naming.snakeCase(owner.name)
        let table = Naming.shortened(ownerName + "_" + Naming.snakeCase(relationship.name))
        var source = ownerName + "_id"
        let destination = Naming.snakeCase(relationship.name) + "_id"
        if source == destination { source = "source_" + source }
        source = Naming.shortened(source)
        return reversed
            ? .joinTable(table: table, sourceColumn: Naming.shortened(destination), destinationColumn: source)
            : .joinTable(table: table, sourceColumn: source, destinationColumn: Naming.shortened(destination))
    }

    /// Checks the class hierarchy and every relationship: superentities and destinations exist, no cycle,
    /// inverses point back at their relationship with a compatible destination, names and columns do not
    /// collide within a table. `validate()` calls it.
    public func validateGraph() throws {
        for entity in entities {
            if let parent = entity.superentity {
                guard self.entity(named: parent) != nil else {
                    throw PGModelError(.invalidSchema, "\(entity.name) inherits from \(parent), which is not in the schema", model: entity.name)
                }
                guard rootEntity(of: entity.name) != nil else {
                    throw PGModelError(.invalidSchema, "the class hierarchy of \(entity.name) has a cycle", model: entity.name)
                }
            }
            var names = Set(entity.attributes.map(\.name))
            for relationship in entity.relationships {
                guard Naming.isValidIdentifier(relationship.name) else {
                    throw PGModelError(.invalidSchema, "relationship name '\(relationship.name)' of \(entity.name) is not a valid identifier", model: entity.name)
                }
                guard names.insert(relationship.name).inserted else {
                    throw PGModelError(.invalidSchema, "'\(relationship.name)' of \(entity.name) is declared twice", model: entity.name, keyPath: relationship.name)
                }
                guard self.entity(named: relationship.destination) != nil else {
                    throw PGModelError(.invalidSchema, "relationship '\(relationship.name)' of \(entity.name) points to \(relationship.destination), which is not in the schema; add it to the ModelContainer", model: entity.name, keyPath: relationship.name)
                }
                if let inverseName = relationship.inverse {
                    guard let inverse = inverse(of: relationship) else {
                        throw PGModelError(.invalidSchema, "the inverse '\(inverseName)' of \(entity.name).\(relationship.name) is not a relationship of \(relationship.destination)", model: entity.name, keyPath: relationship.name)
                    }
                    let related = entityNames(inHierarchyOf: inverse.destination)
                    guard inverse.inverse == relationship.name, related.contains(entity.name) else {
                        throw PGModelError(.invalidSchema, "\(entity.name).\(relationship.name) and \(relationship.destination).\(inverse.name) are not each other's inverse", model: entity.name, keyPath: relationship.name)
                    }
                }
                for bound in [relationship.minimumModelCount, relationship.maximumModelCount] {
                    if let bound, bound < 0 {
                        throw PGModelError(.invalidSchema, "model counts of \(entity.name).\(relationship.name) must not be negative", model: entity.name, keyPath: relationship.name)
                    }
                }
            }
        }
        // Columns of one table come from every class of its hierarchy: the same name must mean the same thing.
        for root in entities where root.superentity == nil {
            var columns: [String: (type: String, owner: String)] = [:]
            for name in entityNames(inHierarchyOf: root.name) {
                guard let entity = entity(named: name) else { continue }
                var own: [(String, String)] = entity.attributes.map { ($0.columnName, $0.type.rawValue) }
                for relationship in entity.relationships {
                    if case .foreignKey(let column) = storage(of: relationship, in: entity) {
                        own.append((column, "uuid→" + relationship.destination))
                    }
                }
                for (column, type) in own {
                    guard !EntityDescription.reservedColumns.contains(column) else {
                        throw PGModelError(.invalidSchema, "\(entity.name) uses the reserved column name '\(column)'", model: entity.name)
                    }
                    if let existing = columns[column], existing.type != type {
                        throw PGModelError(.invalidSchema, "\(entity.name) and \(existing.owner) both store column '\(column)' in table \(root.tableName) with different types", model: entity.name)
                    }
                    columns[column] = columns[column] ?? (type, entity.name)
                }
            }
        }
    }
}
