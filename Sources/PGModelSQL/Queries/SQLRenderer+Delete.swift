import Foundation
@_spi(PGModelInternals) import PGModelCore

/// Set-based deletes with SwiftData's delete rules. The store gathers the rows to delete (locking them),
/// follows `.cascade` relationships with ``relatedRows(_:of:ids:)`` until nothing new is reached,
/// checks every `.deny` relationship with ``countRelated(_:of:ids:excluding:)``, and only then
/// deletes with ``deleteRows(of:ids:)``. `.nullify` and `.noAction` need no statement: foreign keys
/// are `ON DELETE SET NULL` and join-table rows `ON DELETE CASCADE`.
@_spi(PGModelInternals) extension SQLRenderer {
    /// `SELECT id, entity … FOR UPDATE` of the rows of `entity`'s hierarchy table with these ids
    ///: the rows a save deletes, with their concrete classes.
    ///
    /// ```swift
    /// try renderer.lockRows(of: "Album", ids: [a, b])
    /// // SELECT "id", "entity" FROM "app"."album" WHERE "id" IN (SELECT unnest($1::uuid[])) ORDER BY "id" FOR UPDATE
    /// ```
    public func lockRows(of entity: String, ids: [UUID]) throws -> SQLStatement {
        let entity = try self.entity(entity)
        var b = SQLBuilder()
        b.sql = "SELECT \"id\", \"entity\" FROM \(qualifiedTable(entity)) WHERE \"id\" IN \(b.bindIDSet(ids))"
        // Locks in id order, so two saves deleting overlapping rows cannot deadlock each other.
        b.sql += " ORDER BY \"id\" FOR UPDATE"
        return b.statement
    }

    /// `SELECT id, entity` of the rows that rows `ids` (of class `entity`) reach through `relationship`:
    /// the next wave of a cascade.
    public func relatedRows(_ relationship: String, of entity: String, ids: [UUID]) throws -> SQLStatement {
        var b = SQLBuilder()
        let (from, conditions) = try relatedFrom(relationship, of: entity, ids: ids, &b)
        // In id order, so a cascade reaches rows (and writes their history) in the same order every run.
        b.sql = "SELECT \"d\".\"id\", \"d\".\"entity\" FROM \(from) WHERE \(conditions.joined(separator: " AND ")) ORDER BY \"d\".\"id\""
        return b.statement
    }

    /// `SELECT count(*)` of the rows that rows `ids` reach through `relationship`, leaving out `excluding`
    /// (rows deleted by the same save): what a `.deny` rule checks.
    public func countRelated(_ relationship: String, of entity: String, ids: [UUID], excluding: [UUID]) throws -> SQLStatement {
        var b = SQLBuilder()
        var (from, conditions) = try relatedFrom(relationship, of: entity, ids: ids, &b)
        if !excluding.isEmpty { conditions.append("\"d\".\"id\" NOT IN \(b.bindIDSet(excluding))") }
        b.sql = "SELECT count(*) FROM \(from) WHERE \(conditions.joined(separator: " AND "))"
        return b.statement
    }

    /// `DELETE … RETURNING id, entity, owner_id` of the rows of `entity`'s hierarchy table with these ids,
    /// followed by the columns of ``preservedAttributes(ofRoot:)`` in that order: history's tombstones.
    public func deleteRows(of entity: String, ids: [UUID]) throws -> SQLStatement {
        let entity = try self.entity(entity)
        var b = SQLBuilder()
        b.sql = "DELETE FROM \(qualifiedTable(entity)) WHERE \"id\" IN \(b.bindIDSet(ids))"
        let root = schema.rootEntity(of: entity.name)?.name ?? entity.name
        let preserved = preservedAttributes(ofRoot: root).map { $0.type.selectExpression(Naming.quoted($0.columnName)) }
        b.sql += " RETURNING " + (["\"id\"", "\"entity\"", "\"owner_id\""] + preserved).joined(separator: ", ")
        return b.statement
    }

    /// One `SELECT id, entity, owner_id, target` per foreign key that can point into `entity`'s hierarchy
    /// table, of the rows pointing at `ids` (`target`: the one each points at): the references a delete
    /// sets to NULL, which history records as updates of the relationship that replaced `target`.
    public func referencingRows(to entity: String, ids: [UUID]) throws -> [(statement: SQLStatement, relationship: String)] {
        let target = try self.entity(entity)
        let targetRoot = schema.rootEntity(of: target.name)?.name ?? target.name
        let targetRootTable = schema.entity(named: targetRoot)?.tableName ?? target.tableName
        var result: [(SQLStatement, String)] = []
        for root in schema.entities where root.superentity == nil {
            for (relationship, _) in schema.tableForeignKeys(ofRoot: root.name)
            where schema.rootEntity(of: relationship.destination)?.name == targetRoot {
                // Through a SECURITY DEFINER function: the deleting user may not see a row that references
                // theirs, and its owner's history must still record the change.
                var b = SQLBuilder()
                let target = b.bind(.string(qualifiedTable(named: targetRootTable)))
                let rootName = b.bind(.string(targetRoot))
                let list = b.bindIDs(ids)
                let table = b.bind(.string(qualifiedTable(named: root.tableName)))
                let column = b.bind(.string(relationship.foreignKeyColumn))
                b.sql = "SELECT \"id\", \"entity\", \"owner_id\", \"target\" FROM \"pgmodel\".\"nullified_reference_targets\"(\(target)::text::regclass, \(rootName)::text, \(list), \(table)::text::regclass, \(column))"
                result.append((b.statement, relationship.name))
            }
        }
        return result
    }

    /// The `.preserveValueOnDeletion` attributes of a hierarchy table, in column order.
    public func preservedAttributes(ofRoot root: String) -> [AttributeDescription] {
        var seen = Set<String>()
        return schema.tableAttributes(ofRoot: root).map(\.attribute)
            .filter { $0.preservesValueOnDeletion && seen.insert($0.columnName).inserted }
    }

    /// The destination table as `d`, restricted to the rows the source rows reach.
    private func relatedFrom(_ name: String, of entityName: String, ids: [UUID],
                             _ b: inout SQLBuilder) throws -> (String, [String]) {
        let source = try self.entity(entityName)
        guard let relationship = source.relationship(named: name) else {
            throw PGModelError(.unknownAttribute, "\(source.name) has no relationship '\(name)'", model: source.name, keyPath: name)
        }
        let destination = try self.entity(relationship.destination)
        let from = "\(qualifiedTable(destination)) AS \"d\""
        var conditions: [String]
        switch schema.storage(of: relationship, in: source) {
        case .foreignKey(let column):
            conditions = ["\"d\".\"id\" IN (SELECT \"s\".\(Naming.quoted(column)) FROM \(qualifiedTable(source)) AS \"s\" WHERE \"s\".\"id\" IN \(b.bindIDSet(ids)))"]
        case .inverseForeignKey(let column):
            conditions = ["\"d\".\(Naming.quoted(column)) IN \(b.bindIDSet(ids))"]
        case .joinTable(let table, let sourceColumn, let destinationColumn):
            conditions = ["\"d\".\"id\" IN (SELECT \"j\".\(Naming.quoted(destinationColumn)) FROM \(qualifiedTable(named: table)) AS \"j\" WHERE \"j\".\(Naming.quoted(sourceColumn)) IN \(b.bindIDSet(ids)))"]
        }
        if schema.needsEntityFilter(destination.name) {
            conditions.append(entityFilter(destination.name, alias: "d", &b))
        }
        return (from, conditions)
    }
}

@_spi(PGModelInternals) extension SQLRenderer {
    /// `SELECT id, …` of the rows `ids` of class `entity`, locked in id order, with the attributes and
    /// foreign keys named in `keys` as a fetch reads them: what a delete compares with the values its
    /// context read, to tell whether someone else changed the row since. Names that are not stored in
    /// the row are left out; ``lockedValueColumns(of:keys:)`` lists what comes back after the id.
    ///
    /// ```swift
    /// try renderer.lockedValues(of: "Trip", ids: [id], keys: ["name"])
    /// // SELECT "id", "name" FROM "app"."trip" WHERE "id" IN ($1) ORDER BY "id" FOR UPDATE
    /// ```
    public func lockedValues(of entity: String, ids: [UUID], keys: Set<String>) throws -> SQLStatement {
        let description = try self.entity(entity)
        var b = SQLBuilder()
        var columns = ["\"id\""]
        for attribute in description.attributes where keys.contains(attribute.name) {
            columns.append(attribute.type.selectExpression(Naming.quoted(attribute.columnName)))
        }
        for (relationship, column) in foreignKeys(of: description) where keys.contains(relationship.name) {
            columns.append(Naming.quoted(column))
        }
        b.sql = "SELECT \(columns.joined(separator: ", ")) FROM \(qualifiedTable(description)) WHERE \"id\" IN \(b.bindIDSet(ids)) ORDER BY \"id\" FOR UPDATE"
        return b.statement
    }

    /// The names and types of what ``lockedValues(of:ids:keys:)`` returns after the id.
    public func lockedValueColumns(of entity: String, keys: Set<String>) throws -> [(name: String, type: AttributeType)] {
        storedColumns(of: try self.entity(entity)) { keys.contains($0) }
    }

    /// The type of property `key` of `entity` as a row holds it: the attribute's type, `uuid` for a to-one
    /// relationship's foreign key, nil for anything else.
    public func storedType(of key: String, in entity: String) -> AttributeType? {
        guard let description = schema.entity(named: entity) else { return nil }
        if let attribute = description.attribute(named: key) { return attribute.type }
        return foreignKeys(of: description).contains { $0.0.name == key } ? .uuid : nil
    }
}
