import Foundation
@_spi(PGModelInternals) import PGModelCore

@_spi(PGModelInternals) extension SQLRenderer {
    /// `INSERT` of every attribute of `row`. For entities with uniqueness constraints it is
    /// `ON CONFLICT DO NOTHING RETURNING id`: no row back means a constraint matched, and the store
    /// then runs ``upsertUpdate(_:owner:)`` (SwiftData's upsert).
    ///
    /// ```swift
    /// let insert = try renderer.insert(RowValues(entity: "Trip", id: id, values: values), owner: nil)
    /// ```
    ///
    /// With `upserting` false it is a plain `INSERT` (a uniqueness conflict is an error): what a user
    /// inserting a child into a record shared with them sends, because the new row belongs to the record's
    /// owner and row-level security does not let them read it back until it is linked.
    public func insert(_ row: RowValues, owner: UUID?, upserting: Bool = true) throws -> SQLStatement {
        let ownerID = owner
        let entity = try self.entity(row.entity)
        try rejectUnknownKeys(row, entity)
        var b = SQLBuilder()
        var columns = ["\"id\"", "\"entity\"", "\"owner_id\""]
        var placeholders = [b.bind(.uuid(row.id)), b.bind(.string(entity.name)), ownerID.map { b.bind(.uuid($0)) } ?? "NULL"]
        for attribute in entity.attributes {
            let value = try coerced(row[attribute.name], attribute, entity, requirePresent: true)
            columns.append(Naming.quoted(attribute.columnName))
            placeholders.append(value.isNull ? "NULL" : attribute.type.bindExpression(b.bind(value)))
        }
        for (relationship, column) in foreignKeys(of: entity) {
            let value = try foreignKeyValue(row[relationship.name], relationship, entity)
            columns.append(Naming.quoted(column))
            placeholders.append(value.isNull ? "NULL" : b.bind(value))
        }
        b.sql = "INSERT INTO \(qualifiedTable(entity)) (\(columns.joined(separator: ", "))) VALUES (\(placeholders.joined(separator: ", ")))"
        guard upserting else { return b.statement }
        if !uniquenessConstraints(of: entity).isEmpty {
            b.sql += " ON CONFLICT DO NOTHING"
        }
        b.sql += " RETURNING \"id\""
        return b.statement
    }

    /// A set-based ``insert(_:owner:upserting:)`` of many rows of one hierarchy table: one statement whatever
    /// the number of rows, each column bound as one array parameter and unnested, `NULL` where a row has no
    /// value (or its class no such column, exactly what a one-row insert leaves there). The `entity` and
    /// `owner_id` columns are one scalar each when every row has the same.
    ///
    /// ```swift
    /// try renderer.insert([a, b], owners: [nil, nil])
    /// // INSERT INTO "app"."trip" ("id", "entity", "owner_id", "name") SELECT "v"."c1", $1::text, $2::uuid, "v"."c2"
    /// // FROM unnest($3::uuid[], $4::text[]) WITH ORDINALITY AS "v"("c1", "c2", "n")
    /// // ORDER BY "v"."n" ON CONFLICT DO NOTHING RETURNING "id"   -- Trip has a uniqueness constraint
    /// ```
    ///
    /// When any row's class has uniqueness constraints it is `ON CONFLICT DO NOTHING`, the rows inserted
    /// in their order (so of two rows with the same unique values the first is inserted, as one insert
    /// after the other would): a row missing from `RETURNING "id"` met a constraint, and the store runs
    /// the one-row path for it. Otherwise, and with `upserting` false, it is a plain `INSERT` without
    /// `RETURNING` (see ``insertReturnsIDs(of:upserting:)``).
    /// Returns `nil` when the rows' classes store one column with different types: they need separate statements.
    public func insert(_ rows: [RowValues], owners: [UUID?], upserting: Bool = true) throws -> SQLStatement? {
        guard let first = rows.first else { return nil }
        guard rows.count == owners.count else {
            throw PGModelError(.internalError, "a set-based insert of \(first.entity) needs one owner per row", model: first.entity)
        }
        let table = qualifiedTable(try entity(first.entity))
        // Columns in first-seen order: system columns, attributes, then foreign keys.
        var attributeColumns: [(column: String, type: AttributeType)] = []
        var foreignKeyColumns: [String] = []
        var attributeIndex: [String: Int] = [:]
        var foreignKeyIndex: [String: Int] = [:]
        var entities: [String: EntityDescription] = [:]
        var constrained = false
        var lastEntity: String?
        for row in rows where row.entity != lastEntity {
            // A bulk insert's rows come in runs of one class: its name is hashed once a run.
            lastEntity = row.entity
            guard entities[row.entity] == nil else { continue }
            let entity = try self.entity(row.entity)
            guard qualifiedTable(entity) == table else {
                throw PGModelError(.internalError, "a set-based insert mixes the tables of \(first.entity) and \(entity.name)", model: entity.name)
            }
            entities[entity.name] = entity
            if !uniquenessConstraints(of: entity).isEmpty { constrained = true }
            for attribute in entity.attributes {
                if let i = attributeIndex[attribute.columnName] {
                    guard attributeColumns[i].type == attribute.type else { return nil }
                    continue
                }
                attributeIndex[attribute.columnName] = attributeColumns.count
                attributeColumns.append((attribute.columnName, attribute.type))
            }
            for (_, column) in foreignKeys(of: entity) where foreignKeyIndex[column] == nil {
                foreignKeyIndex[column] = foreignKeyColumns.count
                foreignKeyColumns.append(column)
            }
        }
        // Which column each class fills with which attribute or foreign key (the first of a class's
        // properties stored in one column): worked out once per class, not per row.
        var plans: [String: InsertPlan] = [:]
        for (name, entity) in entities {
            let plan = InsertPlan(entity: entity)
            var filled = Set<Int>()
            for attribute in entity.attributes {
                guard let i = attributeIndex[attribute.columnName], filled.insert(i).inserted else { continue }
                plan.attributes.append((i, attribute))
            }
            plan.unfilledAttributes = attributeColumns.indices.filter { !filled.contains($0) }
            var filledKeys = Set<Int>()
            for (relationship, column) in foreignKeys(of: entity) {
                guard let i = foreignKeyIndex[column], filledKeys.insert(i).inserted else { continue }
                plan.foreignKeys.append((i, relationship))
            }
            plan.unfilledForeignKeys = foreignKeyColumns.indices.filter { !filledKeys.contains($0) }
            plans[name] = plan
        }
        // A bulk insert's rows are usually of one class and one owner: those are one value each, not an
        // array of as many copies as rows to encode, send and unnest.
        let sharedName = plans.count == 1 ? plans.first?.value.storedName : nil
        let sharedOwner: UUID?? = owners.dropFirst().allSatisfy { $0 == owners[0] } ? .some(owners[0]) : .none
        var ids: [PGValue] = [], names: [PGValue] = [], ownerIDs: [PGValue] = []
        var attributeValues = Array(repeating: [PGValue](), count: attributeColumns.count)
        var foreignKeyValues = Array(repeating: [PGValue](), count: foreignKeyColumns.count)
        ids.reserveCapacity(rows.count)
        if sharedName == nil { names.reserveCapacity(rows.count) }
        if sharedOwner == nil { ownerIDs.reserveCapacity(rows.count) }
        for i in attributeValues.indices { attributeValues[i].reserveCapacity(rows.count) }
        for i in foreignKeyValues.indices { foreignKeyValues[i].reserveCapacity(rows.count) }
        // Positional rows of one class share their keys: their names are checked and found once.
        var positions: [PositionsKey: InsertPositions] = [:]
        // The last row's plan and positions: a bulk insert's rows share them, so each row costs no
        // hashing and no copy of a class's description.
        var last: (keys: ObjectIdentifier, plan: InsertPlan, positions: InsertPositions)?
        var lastPlan: InsertPlan?
        for (row, owner) in zip(rows, owners) {
            let plan: InsertPlan
            if let lastPlan, lastPlan.name == row.entity {
                plan = lastPlan
            } else {
                guard let found = plans[row.entity] else { continue }   // every row's class was planned above
                plan = found
                lastPlan = found
            }
            ids.append(.uuid(row.id))
            if sharedName == nil { names.append(plan.storedName) }
            if sharedOwner == nil { ownerIDs.append(owner.map(PGValue.uuid) ?? .null) }
            if let (keys, values) = row.positionalValues {
                let found: InsertPositions
                if let last, last.keys == ObjectIdentifier(keys), last.plan === plan {
                    found = last.positions
                } else {
                    let key = PositionsKey(keys: ObjectIdentifier(keys), entity: plan.name)
                    if let known = positions[key] {
                        found = known
                    } else {
                        try rejectUnknownKeys(row, plan.entity)
                        found = InsertPositions(attributes: plan.attributes.map {
                                                    InsertPositions.Fill(column: $0.column, position: keys.positions[$0.attribute.name],
                                                                         type: $0.attribute.type, isOptional: $0.attribute.isOptional)
                                                },
                                                foreignKeys: plan.foreignKeys.map { keys.positions[$0.relationship.name] })
                        positions[key] = found
                    }
                    last = (ObjectIdentifier(keys), plan, found)
                }
                for (i, fill) in found.attributes.enumerated() {
                    let value = fill.position.map { values[$0] }
                    // What `coerced` does, without copying the attribute's description for every value;
                    // anything it would reject goes through it for its error.
                    if let value, !(value.isNull && !fill.isOptional), let result = fill.type.coerce(value) {
                        attributeValues[fill.column].append(result)
                    } else {
                        attributeValues[fill.column].append(try coerced(value, plan.attributes[i].attribute, plan.entity, requirePresent: true))
                    }
                }
                for ((column, relationship), position) in zip(plan.foreignKeys, found.foreignKeys) {
                    foreignKeyValues[column].append(try foreignKeyValue(position.map { values[$0] }, relationship, plan.entity))
                }
            } else {
                let entity = plan.entity
                try rejectUnknownKeys(row, entity)
                for (column, attribute) in plan.attributes {
                    attributeValues[column].append(try coerced(row[attribute.name], attribute, entity, requirePresent: true))
                }
                for (column, relationship) in plan.foreignKeys {
                    foreignKeyValues[column].append(try foreignKeyValue(row[relationship.name], relationship, entity))
                }
            }
            for column in plan.unfilledAttributes { attributeValues[column].append(.null) }
            for column in plan.unfilledForeignKeys { foreignKeyValues[column].append(.null) }
        }
        var b = SQLBuilder()
        // Scalar binds come before the arrays.
        let nameValue = sharedName.map { "\(b.bind($0))::text" }
        let ownerValue = sharedOwner.map { "\(b.bind($0.map(PGValue.uuid) ?? .null))::uuid" }
        var columns = ["\"id\"", "\"entity\"", "\"owner_id\""]
        var parameters = [b.bind(SQLArray(.uuid, ids))]
        var selected = ["\"v\".\"c1\""]
        /// The next array's column in the unnest, `"v"."cN"`.
        func nextArray() -> String { "\"v\".\"c\(parameters.count)\"" }
        if let nameValue {
            selected.append(nameValue)
        } else {
            parameters.append(b.bind(SQLArray(.text, names)))
            selected.append(nextArray())
        }
        if let ownerValue {
            selected.append(ownerValue)
        } else {
            parameters.append(b.bind(SQLArray(.uuid, ownerIDs)))
            selected.append(nextArray())
        }
        for (i, (column, type)) in attributeColumns.enumerated() {
            columns.append(Naming.quoted(column))
            parameters.append(b.bind(SQLArray(SQLArray.Element(type), attributeValues[i])))
            let value = nextArray()
            switch type {
            case .stringArray, .int64Array, .doubleArray, .boolArray:
                // An array column's expression of a NULL would be an empty array.
                selected.append("CASE WHEN \(value) IS NULL THEN NULL ELSE \(type.bindExpression(value)) END")
            default:
                selected.append(type.bindExpression(value))
            }
        }
        for (i, column) in foreignKeyColumns.enumerated() {
            columns.append(Naming.quoted(column))
            parameters.append(b.bind(SQLArray(.uuid, foreignKeyValues[i])))
            selected.append(nextArray())
        }
        let ordered = insertReturnsIDs(constrained: constrained, upserting: upserting)
        var aliases = (1...parameters.count).map { "\"c\($0)\"" }
        if ordered { aliases.append("\"n\"") }
        b.sql = "INSERT INTO \(table) (\(columns.joined(separator: ", "))) SELECT \(selected.joined(separator: ", ")) "
            + "FROM unnest(\(parameters.joined(separator: ", ")))\(ordered ? " WITH ORDINALITY" : "") AS \"v\"(\(aliases.joined(separator: ", ")))"
        guard ordered else { return b.statement }
        b.sql += " ORDER BY \"v\".\"n\" ON CONFLICT DO NOTHING RETURNING \"id\""
        return b.statement
    }

    /// Whether ``insert(_:owners:upserting:)`` of rows of `entities` returns the ids it inserted: only
    /// when it may skip a row (`ON CONFLICT DO NOTHING`, where a class has uniqueness constraints).
    /// Otherwise every row is inserted or the statement fails (an id that exists is an error either
    /// way), and sending 100,000 ids back would only cost time.
    ///
    /// ```swift
    /// renderer.insertReturnsIDs(of: ["Trip"], upserting: true)   // false: Trip has no uniqueness constraint
    /// ```
    public func insertReturnsIDs(of entities: Set<String>, upserting: Bool) -> Bool {
        insertReturnsIDs(constrained: entities.contains { name in
            schema.entity(named: name).map { !uniquenessConstraints(of: $0).isEmpty } ?? false
        }, upserting: upserting)
    }

    private func insertReturnsIDs(constrained: Bool, upserting: Bool) -> Bool {
        upserting && constrained
    }

    /// After an insert met a uniqueness constraint: updates the row of the same owner that holds the same
    /// unique values with all of `row`'s attributes, returning its id and then the values it replaced, in
    /// the order of ``storedColumns(of:)`` (the row is locked by the sub-select that finds it), for history.
    /// Only the owner's own rows are upserted into, whatever a constraint's scope: a row of another user
    /// that holds a value unique across all users is not the inserting user's to change (the store then
    /// reports the value taken). Only groups whose values are all non-nil can match, because PostgreSQL
    /// treats NULLs as distinct in UNIQUE constraints. Returns `nil` if no group can match.
    public func upsertUpdate(_ row: RowValues, owner: UUID?) throws -> SQLStatement? {
        let entity = try self.entity(row.entity)
        var b = SQLBuilder()
        var assignments: [String] = []
        for attribute in entity.attributes {
            let value = try coerced(row[attribute.name], attribute, entity, requirePresent: true)
            assignments.append("\(Naming.quoted(attribute.columnName)) = \(value.isNull ? "NULL" : attribute.type.bindExpression(b.bind(value)))")
        }
        for (relationship, column) in foreignKeys(of: entity) {
            let value = try foreignKeyValue(row[relationship.name], relationship, entity)
            assignments.append("\(Naming.quoted(column)) = \(value.isNull ? "NULL" : b.bind(value))")
        }
        var matches: [String] = []
        // Groups naming a relationship are enforced by the database but not matched here.
        for group in uniquenessConstraints(of: entity) where group.attributes.allSatisfy({ entity.attribute(named: $0) != nil }) {
            var pairs: [(column: String, value: PGValue)] = []
            for name in group.attributes {
                let attribute = try self.attribute(name, of: entity)
                pairs.append((attribute.columnName, try coerced(row[name], attribute, entity, requirePresent: true)))
            }
            // Bind only complete groups, so no placeholder is left unused.
            guard !pairs.isEmpty, !pairs.contains(where: { $0.value.isNull }) else { continue }
            matches.append("(" + pairs.map { "\(Naming.quoted($0.column)) = \(b.bind($0.value))" }.joined(separator: " AND ") + ")")
        }
        guard !matches.isEmpty else { return nil }
        let table = qualifiedTable(entity)
        let columns = storedColumnList(of: entity)
        // The row as it was, locked: what the upsert replaces, returned for history.
        let selected = (["\"id\""] + columns.map { Naming.quoted($0.column) }).joined(separator: ", ")
        var target = "SELECT \(selected) FROM \(table) WHERE (\(matches.joined(separator: " OR ")))"
        target += owner.map { " AND \"owner_id\" = \(b.bind(.uuid($0)))" } ?? " AND \"owner_id\" IS NULL"
        // One row only, locked: two constraints could match two different rows.
        target += " ORDER BY \"id\" LIMIT 1 FOR UPDATE"
        b.sql = "UPDATE \(table) SET \(assignments.joined(separator: ", ")) FROM (\(target)) AS \"replaced\""
        b.sql += " WHERE \(table).\"id\" = \"replaced\".\"id\" RETURNING \(table).\"id\""
        b.sql += columns.map { ", " + Self.readExpression("\"replaced\".\(Naming.quoted($0.column))", $0.type) }.joined()
        return b.statement
    }

    /// `UPDATE` of the attributes present in `row` (the changed ones). Returns the id and owner when a row
    /// was updated, so zero rows means missing or not writable by the caller (row-level security).
    public func update(_ row: RowValues) throws -> SQLStatement {
        let entity = try self.entity(row.entity)
        try rejectUnknownKeys(row, entity)
        var b = SQLBuilder()
        var assignments: [String] = []
        for attribute in entity.attributes {
            guard let raw = row[attribute.name] else { continue }
            let value = try coerced(raw, attribute, entity, requirePresent: true)
            assignments.append("\(Naming.quoted(attribute.columnName)) = \(value.isNull ? "NULL" : attribute.type.bindExpression(b.bind(value)))")
        }
        for (relationship, column) in foreignKeys(of: entity) {
            guard let raw = row[relationship.name] else { continue }
            let value = try foreignKeyValue(raw, relationship, entity)
            assignments.append("\(Naming.quoted(column)) = \(value.isNull ? "NULL" : b.bind(value))")
        }
        guard !assignments.isEmpty else {
            throw PGModelError(.missingField, "an update of \(entity.name) changes no attribute", model: entity.name)
        }
        b.sql = "UPDATE \(qualifiedTable(entity)) SET \(assignments.joined(separator: ", ")) WHERE \"id\" = \(b.bind(.uuid(row.id)))"
        b.sql += " RETURNING \"id\", \"owner_id\""
        return b.statement
    }

    /// ``update(_:)`` that also returns, after the id and owner, the values the update replaced, one
    /// column per attribute or foreign key it sets, in the order of ``replacedColumns(of:)``: the row is
    /// read and locked by a sub-select in the same statement (under READ COMMITTED its lock waits for a
    /// concurrent writer and reads the newest version), so comparing them with the values the saving
    /// context read tells, attribute by attribute and without another round trip, whether someone else
    /// changed what this update overwrites. Zero rows: the row is gone or not writable by the caller.
    ///
    /// ```swift
    /// let statement = try renderer.updateReturningReplaced(RowValues(entity: "Trip", id: id, values: ["name": .string("Oslo")]))
    /// // UPDATE … SET "name" = $1 FROM (SELECT "id", "name" FROM … WHERE "id" = $2 FOR UPDATE) AS "replaced"
    /// //   WHERE … "id" = "replaced"."id" RETURNING …"id", …"owner_id", "replaced"."name"
    /// ```
    ///
    /// With `returningStored`, every stored column's new value follows (``storedColumns(of:)``'s order):
    /// the whole row as the update leaves it, so the saving context shows what others changed too.
    public func updateReturningReplaced(_ row: RowValues, returningStored: Bool = false) throws -> SQLStatement {
        let entity = try self.entity(row.entity)
        try rejectUnknownKeys(row, entity)
        var b = SQLBuilder()
        var assignments: [String] = []
        var columns: [String] = []
        // What the row held, as a fetch reads it (JSON and arrays as JSON text).
        var returned: [String] = []
        for attribute in entity.attributes {
            guard let raw = row[attribute.name] else { continue }
            let value = try coerced(raw, attribute, entity, requirePresent: true)
            assignments.append("\(Naming.quoted(attribute.columnName)) = \(value.isNull ? "NULL" : attribute.type.bindExpression(b.bind(value)))")
            columns.append(Naming.quoted(attribute.columnName))
            returned.append(attribute.type.selectExpression("\"replaced\".\(Naming.quoted(attribute.columnName))"))
        }
        for (relationship, column) in foreignKeys(of: entity) {
            guard let raw = row[relationship.name] else { continue }
            let value = try foreignKeyValue(raw, relationship, entity)
            assignments.append("\(Naming.quoted(column)) = \(value.isNull ? "NULL" : b.bind(value))")
            columns.append(Naming.quoted(column))
            returned.append("\"replaced\".\(Naming.quoted(column))")
        }
        guard !assignments.isEmpty else {
            throw PGModelError(.missingField, "an update of \(entity.name) changes no attribute", model: entity.name)
        }
        let table = qualifiedTable(entity)
        let replaced = (["\"id\""] + columns).joined(separator: ", ")
        b.sql = "UPDATE \(table) SET \(assignments.joined(separator: ", "))"
        b.sql += " FROM (SELECT \(replaced) FROM \(table) WHERE \"id\" = \(b.bind(.uuid(row.id))) FOR UPDATE) AS \"replaced\""
        b.sql += " WHERE \(table).\"id\" = \"replaced\".\"id\""
        b.sql += " RETURNING \(table).\"id\", \(table).\"owner_id\"" + returned.map { ", " + $0 }.joined()
        if returningStored {
            b.sql += storedColumnList(of: entity).map { ", " + Self.readExpression("\(table).\(Naming.quoted($0.column))", $0.type) }.joined()
        }
        return b.statement
    }

    /// The names and types of what ``updateReturningReplaced(_:)`` returns after the id and owner for
    /// `row`: its attributes, then its to-one relationships held as foreign keys (as `uuid`), as the update
    /// sets them.
    public func replacedColumns(of row: RowValues) throws -> [(name: String, type: AttributeType)] {
        storedColumns(of: try self.entity(row.entity)) { row[$0] != nil }
    }

    /// The names and types of what the set-based ``update(_:returningReplaced:)`` returns after the id and
    /// owner: every attribute or foreign key any of `rows` sets, in the class's order.
    public func replacedColumns(of rows: [RowValues]) throws -> [(name: String, type: AttributeType)] {
        guard let first = rows.first else { return [] }
        var changed = Set<String>()
        for row in rows { row.forEachValue { key, _ in changed.insert(key) } }
        return storedColumns(of: try self.entity(first.entity)) { changed.contains($0) }
    }

    /// Every stored property of `entity`, attributes then to-one relationships held as foreign keys (as
    /// `uuid`), in the class's order: what ``updateReturningReplaced(_:returningStored:)`` and the set-based
    /// ``update(_:returningReplaced:returningStored:)`` return last with `returningStored`, and what ``upsertUpdate(_:owner:)``
    /// returns after the id.
    ///
    /// ```swift
    /// try renderer.storedColumns(of: "Track").map(\.name)   // ["title", "duration", "album"]
    /// ```
    public func storedColumns(of entity: String) throws -> [(name: String, type: AttributeType)] {
        storedColumns(of: try self.entity(entity)) { _ in true }
    }

    /// The attributes, then the to-one relationships held as foreign keys (as `uuid`), of `entity` whose
    /// names `include` takes, in the class's order: the columns a row of it stores, by property name.
    func storedColumns(of entity: EntityDescription, where include: (String) -> Bool) -> [(name: String, type: AttributeType)] {
        storedColumnList(of: entity, where: include).map { (name: $0.name, type: $0.type ?? .uuid) }
    }

    /// ``storedColumns(of:where:)`` with each property's column, and its attribute type (nil for a foreign key).
    func storedColumnList(of entity: EntityDescription, where include: (String) -> Bool = { _ in true })
        -> [(name: String, column: String, type: AttributeType?)] {
        var columns = entity.attributes.filter { include($0.name) }.map { (name: $0.name, column: $0.columnName, type: Optional($0.type)) }
        columns += foreignKeys(of: entity).filter { include($0.0.name) }.map { (name: $0.0.name, column: $0.1, type: AttributeType?.none) }
        return columns
    }

    /// `cell` as a fetch reads it: an attribute through its type's select expression (JSON and arrays as
    /// JSON text), a foreign key as it is.
    static func readExpression(_ cell: String, _ type: AttributeType?) -> String {
        type.map { $0.selectExpression(cell) } ?? cell
    }

    /// `DELETE` of one row. Returns the id when a row was deleted.
    public func delete(_ reference: RowReference) throws -> SQLStatement {
        let entity = try self.entity(reference.entity)
        var b = SQLBuilder()
        b.sql = "DELETE FROM \(qualifiedTable(entity)) WHERE \"id\" = \(b.bind(.uuid(reference.id)))"
        b.sql += " RETURNING \"id\""
        return b.statement
    }

    /// Whether a row with this id exists for the connection (a service user: whether they may see it):
    /// tells `forbidden` (visible, not writable) from `notFound`.
    public func exists(_ reference: RowReference) throws -> SQLStatement {
        let entity = try self.entity(reference.entity)
        var b = SQLBuilder()
        b.sql = "SELECT 1 FROM \(qualifiedTable(entity)) WHERE \"id\" = \(b.bind(.uuid(reference.id)))"
        return b.statement
    }

    func rejectUnknownKeys(_ row: RowValues, _ entity: EntityDescription) throws {
        // Only the keys that are not attributes, sorted (the error is the first one's): no sorted copy
        // of every key of every row.
        var others: [String] = []
        row.forEachValue { key, _ in if entity.attribute(named: key) == nil { others.append(key) } }
        for key in others.sorted() {
            guard let relationship = entity.relationship(named: key) else {
                throw PGModelError(.unknownAttribute, "\(entity.name) has no stored property '\(key)'", model: entity.name, keyPath: key)
            }
            switch schema.storage(of: relationship, in: entity) {
            case .foreignKey: continue
            case .inverseForeignKey(let column):
                throw PGModelError(.invalidField,
                    "\(entity.name).\(key) is stored as \(column) on \(relationship.destination): set \(relationship.destination).\(relationship.inverse ?? "?") instead",
                    model: entity.name, keyPath: key)
            case .joinTable:
                throw PGModelError(.invalidField, "\(entity.name).\(key) is stored in a join table: send its changes as links", model: entity.name, keyPath: key)
            }
        }
    }

    /// The to-one relationships of `entity` stored as a foreign key in its table, with their columns.
    func foreignKeys(of entity: EntityDescription) -> [(RelationshipDescription, String)] {
        entity.relationships.compactMap { relationship in
            if case .foreignKey(let column) = schema.storage(of: relationship, in: entity) { return (relationship, column) }
            return nil
        }
    }

    /// The uniqueness constraints that apply to rows of `entity`, of either scope: its own and its superclasses'.
    public func uniquenessConstraints(of entity: EntityDescription) -> [UniquenessConstraintDescription] {
        var groups: [UniquenessConstraintDescription] = []
        var current: EntityDescription? = entity
        var steps = 0
        while let e = current, steps <= schema.entities.count {
            for group in e.uniquenessConstraints where !groups.contains(group) {
                groups.append(group)
            }
            current = e.superentity.flatMap { schema.entity(named: $0) }
            steps += 1
        }
        return groups
    }

    func foreignKeyValue(_ value: PGValue?, _ relationship: RelationshipDescription, _ entity: EntityDescription) throws -> PGValue {
        switch value {
        case nil, .null?: return .null
        case .uuid(let id)?: return .uuid(id)
        case .string(let text)?:
            if let id = UUID(uuidString: text) { return .uuid(id) }
        default: break
        }
        throw PGModelError(.typeMismatch,
            "\(entity.name).\(relationship.name) is a reference to \(relationship.destination) (a uuid or null) but the value is a \(value?.kindName ?? "null")",
            model: entity.name, keyPath: relationship.name)
    }

    // MARK: Links

    /// Adds (`INSERT … ON CONFLICT DO NOTHING`) or removes (`DELETE`) one link of a join-table relationship;
    /// either side of a many-to-many pair may name it. A row comes back when a link was added or removed.
    ///
    /// ```swift
    /// try renderer.link(LinkChange(entity: "User", relationship: "following", source: a, destination: b, isAdded: true))
    /// // INSERT INTO "app"."user_followers" ("followers_id", "user_id") VALUES ($1, $2) ON CONFLICT DO NOTHING RETURNING 1
    /// ```
    public func link(_ change: LinkChange) throws -> SQLStatement {
        let (table, sourceColumn, destinationColumn) = try joinTable(of: change)
        var b = SQLBuilder()
        let s = b.bind(.uuid(change.source))
        let d = b.bind(.uuid(change.destination))
        if change.isAdded {
            b.sql = "INSERT INTO \(qualifiedTable(named: table)) (\(Naming.quoted(sourceColumn)), \(Naming.quoted(destinationColumn))) VALUES (\(s), \(d)) ON CONFLICT DO NOTHING RETURNING 1"
        } else {
            b.sql = "DELETE FROM \(qualifiedTable(named: table)) WHERE \(Naming.quoted(sourceColumn)) = \(s) AND \(Naming.quoted(destinationColumn)) = \(d) RETURNING 1"
        }
        return b.statement
    }

    /// The rows a share of `root` (of root class `rootEntity`, owned by `owner`) covers besides the root,
    /// with their classes.
    public func shareMembers(of root: UUID, rootEntity: String, owner: UUID?) -> SQLStatement {
        var b = SQLBuilder()
        let entityBind = b.bind(.string(rootEntity))
        let rootBind = b.bind(.uuid(root))
        let ownerBind = b.bind(owner.map(PGValue.uuid) ?? .null)
        b.sql = "SELECT \"id\", \"entity\" FROM \(Naming.quoted(schemaName)).\"pgmodel_share_members\"(\(entityBind)::text, \(rootBind), \(ownerBind)::uuid)"
        return b.statement
    }

    /// For rows about to be deleted (`roots[i]` is the root class of `ids[i]`), the users whose shares cover them.
    public func shareAudience(of ids: [UUID], roots: [String]) -> SQLStatement {
        var b = SQLBuilder()
        let quoted = roots.map { "\"" + $0.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"") + "\"" }
        let rootList = b.bind(.string("{" + quoted.joined(separator: ",") + "}"))
        let list = b.bindIDs(ids)
        b.sql = "SELECT \"root\", \"id\", \"grantees\" FROM \(Naming.quoted(schemaName)).\"pgmodel_share_audience\"(\(rootList)::text[], \(list))"
        return b.statement
    }

    /// `SELECT 1` when the link of `change` exists (and the connection may see it): tells a removal the
    /// user may not make from one of a link that is already gone.
    public func linkExists(_ change: LinkChange) throws -> SQLStatement {
        let (table, sourceColumn, destinationColumn) = try joinTable(of: change)
        var b = SQLBuilder()
        let s = b.bind(.uuid(change.source))
        let d = b.bind(.uuid(change.destination))
        b.sql = "SELECT 1 FROM \(qualifiedTable(named: table)) WHERE \(Naming.quoted(sourceColumn)) = \(s) AND \(Naming.quoted(destinationColumn)) = \(d)"
        return b.statement
    }

    /// `SELECT id, owner_id, entity` of the rows of `entity`'s hierarchy table with these ids that the
    /// connection sees.
    /// The name of the user who owns row `id` of `entity`'s table (NULL for a row without an owner); no
    /// row when the row is not visible.
    public func ownerName(of entity: String, id: UUID) throws -> SQLStatement {
        let entity = try self.entity(entity)
        var b = SQLBuilder()
        b.sql = "SELECT u.\"name\" FROM \(qualifiedTable(entity)) AS t LEFT JOIN \"pgmodel\".\"users\" AS u ON u.\"id\" = t.\"owner_id\" "
            + "WHERE t.\"id\" = \(b.bind(.uuid(id)))"
        return b.statement
    }

    public func owners(of entity: String, ids: [UUID]) throws -> SQLStatement {
        let entity = try self.entity(entity)
        var b = SQLBuilder()
        b.sql = "SELECT \"id\", \"owner_id\", \"entity\" FROM \(qualifiedTable(entity)) WHERE \"id\" IN \(b.bindIDSet(ids))"
        return b.statement
    }

    func joinTable(of change: LinkChange) throws -> (String, String, String) {
        let entity = try self.entity(change.entity)
        guard let relationship = entity.relationship(named: change.relationship) else {
            throw PGModelError(.unknownAttribute, "\(entity.name) has no relationship '\(change.relationship)'", model: entity.name, keyPath: change.relationship)
        }
        guard case .joinTable(let table, let sourceColumn, let destinationColumn) = schema.storage(of: relationship, in: entity) else {
            throw PGModelError(.invalidField,
                "\(entity.name).\(relationship.name) is stored as a foreign key, not a join table: set the to-one side in the row's values",
                model: entity.name, keyPath: relationship.name)
        }
        return (table, sourceColumn, destinationColumn)
    }

    func coerced(_ value: PGValue?, _ attribute: AttributeDescription, _ entity: EntityDescription, requirePresent: Bool) throws -> PGValue {
        guard let value else {
            if attribute.isOptional { return .null }
            throw PGModelError(.missingField, "a value for \(entity.name).\(attribute.name) is missing", model: entity.name, keyPath: attribute.name)
        }
        if value.isNull && !attribute.isOptional {
            throw PGModelError(.typeMismatch, "\(entity.name).\(attribute.name) is not optional but the value is nil", model: entity.name, keyPath: attribute.name)
        }
        guard let result = attribute.type.coerce(value) else {
            throw PGModelError(.typeMismatch,
                "\(entity.name).\(attribute.name) stores \(attribute.type.rawValue) but the value is a \(value.kindName)",
                model: entity.name, keyPath: attribute.name)
        }
        return result
    }
}

/// What ``SQLRenderer/insert(_:owners:upserting:)`` fills for rows of one class: the columns of its
/// attributes and foreign keys, and the columns of the statement it has no property for (`NULL`).
final class InsertPlan {
    // A class: each row of a bulk insert takes its class's plan, which as a struct copied its arrays.
    let entity: EntityDescription
    /// The class's name, and as the `entity` column's value.
    let name: String
    let storedName: PGValue
    var attributes: [(column: Int, attribute: AttributeDescription)] = []
    var unfilledAttributes: [Int] = []
    var foreignKeys: [(column: Int, relationship: RelationshipDescription)] = []
    var unfilledForeignKeys: [Int] = []

    init(entity: EntityDescription) {
        self.entity = entity
        self.name = entity.name
        self.storedName = .string(entity.name)
    }
}

/// Positional rows' keys, for one class.
struct PositionsKey: Hashable {
    let keys: ObjectIdentifier
    let entity: String
}

/// Where each of an ``InsertPlan``'s properties is in rows with one ``RowKeys`` (nil: the rows have no such value).
/// A class for the reason ``InsertPlan`` is.
final class InsertPositions {
    /// An attribute of the plan (at the same index), with what coercing its value needs.
    struct Fill {
        let column: Int
        let position: Int?
        let type: AttributeType
        let isOptional: Bool
    }
    let attributes: [Fill]
    let foreignKeys: [Int?]

    init(attributes: [Fill], foreignKeys: [Int?]) {
        self.attributes = attributes
        self.foreignKeys = foreignKeys
    }
}
