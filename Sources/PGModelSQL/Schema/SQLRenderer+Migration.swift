@_spi(PGModelInternals) import PGModelCore

@_spi(PGModelInternals) extension SQLRenderer {
    /// The statements of a lightweight migration from `old` (what the store holds) to this renderer's
    /// schema, in the order they must run inside the migration's transaction:
    ///
    /// 1. subclass views dropped (they are recreated last); renamed attributes (`originalName`) renamed in
    ///    place; constraints and indexes that no longer exist dropped (an index whose kind changed, and a
    ///    uniqueness constraint whose scope changed, has another name, so it is dropped too); column types changed; columns that
    ///    became optional lose `NOT NULL`; a new non-optional column with a default is added with
    ///    `DEFAULT` (PostgreSQL keeps it in the catalog: no table rewrite);
    /// 2. ``createStatements()``: new tables, columns, join tables, constraints (a new uniqueness
    ///    constraint over duplicates fails here) and indexes;
    /// 3. relationship data moved where its storage changed (a foreign key becoming a join table when a
    ///    to-many becomes many-to-many, a renamed relationship's column, and back);
    /// 4. rows filled with the default where a column became required, then `SET NOT NULL`;
    /// 5. columns, join tables and tables that no longer exist dropped, rows of removed subclasses deleted;
    /// 6. ``createStatements()`` again, recreating the views.
    ///
    /// Entities are matched by name; a class that moves into another class hierarchy is not a lightweight
    /// change and throws.
    ///
    /// ```swift
    /// let renderer = try SQLRenderer(schema: v2, schemaName: "public")
    /// for statement in try renderer.migrationStatements(from: v1) { try await execute(statement) }
    /// ```
    public func migrationStatements(from old: SchemaDescription) throws -> [SQLStatement] {
        let new = schema
        let previous = try SQLRenderer(schema: old, schemaName: schemaName)
        for entity in new.entities {
            guard old.entity(named: entity.name) != nil, let oldRoot = old.rootEntity(of: entity.name),
                  let newRoot = new.rootEntity(of: entity.name) else { continue }
            if oldRoot.name != newRoot.name || oldRoot.tableName != newRoot.tableName {
                throw PGModelError(.invalidSchema,
                    "\(entity.name) moves from the class hierarchy of \(oldRoot.name) to that of \(newRoot.name); a lightweight migration cannot move rows between tables (use a custom stage that copies them into new models)",
                    model: entity.name)
            }
        }
        var before: [SQLStatement] = []
        var moves: [SQLStatement] = []
        var required: [SQLStatement] = []
        var drops: [SQLStatement] = []

        for entity in old.entities where entity.superentity != nil {
            before.append(SQLStatement(sql: "DROP VIEW IF EXISTS \(qualifiedTable(named: entity.tableName)) CASCADE"))
        }

        for oldRoot in old.entities where oldRoot.superentity == nil {
            let table = qualifiedTable(named: oldRoot.tableName)
            guard let newRoot = new.entity(named: oldRoot.name), newRoot.superentity == nil else {
                drops.append(SQLStatement(sql: "DROP TABLE IF EXISTS \(table) CASCADE"))
                continue
            }
            let plan = ColumnPlan(old: old, new: new, root: oldRoot.name)
            for (from, to) in plan.renames {
                before.append(SQLStatement(sql: "ALTER TABLE \(table) RENAME COLUMN \(Naming.quoted(from)) TO \(Naming.quoted(to))"))
            }
            let oldObjects = previous.objectNames(ofRoot: oldRoot.name)
            let newObjects = objectNames(ofRoot: newRoot.name)
            for name in oldObjects.constraints.subtracting(newObjects.constraints).sorted() {
                before.append(SQLStatement(sql: "ALTER TABLE \(table) DROP CONSTRAINT IF EXISTS \(Naming.quoted(name))"))
            }
            for name in oldObjects.indexes.subtracting(newObjects.indexes).sorted() {
                before.append(SQLStatement(sql: "DROP INDEX IF EXISTS \(Naming.quoted(schemaName)).\(Naming.quoted(name))"))
            }
            // Class checks are recreated from the new hierarchy: which classes must fill a column may change.
            for name in oldObjects.checks.sorted() {
                before.append(SQLStatement(sql: "ALTER TABLE \(table) DROP CONSTRAINT IF EXISTS \(Naming.quoted(name))"))
            }
            for change in plan.kept {
                let column = Naming.quoted(change.new.columnName)
                if change.old.type != change.new.type {
                    let type = change.new.type.postgresType
                    before.append(SQLStatement(sql: "ALTER TABLE \(table) ALTER COLUMN \(column) TYPE \(type) USING \(column)::\(type)"))
                }
                if change.wasNotNull && !change.isNotNull {
                    before.append(SQLStatement(sql: "ALTER TABLE \(table) ALTER COLUMN \(column) DROP NOT NULL"))
                }
                if change.old.isExternal && !change.new.isExternal {
                    before.append(SQLStatement(sql: "ALTER TABLE \(table) ALTER COLUMN \(column) SET STORAGE EXTENDED"))
                }
                if !change.newlyRequired.isEmpty, let value = change.new.defaultValue {
                    required.append(fill(table, change.new, with: value, classes: change.isNotNull ? nil : change.newlyRequired))
                }
                if change.isNotNull && !change.wasNotNull {
                    required.append(SQLStatement(sql: "ALTER TABLE \(table) ALTER COLUMN \(column) SET NOT NULL"))
                }
            }
            for (attribute, isNotNull, classes) in plan.added {
                guard let value = attribute.defaultValue else { continue }
                if isNotNull {
                    before += addColumn(table, attribute, default: value)
                } else if !classes.isEmpty {
                    // A subclass's new column: its CHECK needs the existing rows of that class filled first.
                    required.append(fill(table, attribute, with: value, classes: classes))
                }
            }
            for column in plan.droppedColumns.sorted() {
                drops.append(SQLStatement(sql: "ALTER TABLE \(table) DROP COLUMN IF EXISTS \(Naming.quoted(column)) CASCADE"))
            }
            let removedClasses = old.entityNames(inHierarchyOf: oldRoot.name).filter { new.entity(named: $0) == nil }
            if !removedClasses.isEmpty {
                drops.insert(SQLStatement(sql: "DELETE FROM \(table) WHERE \"entity\" IN (\(removedClasses.map(literal).joined(separator: ", ")))"), at: 0)
            }
        }

        let (relationshipMoves, oldJoinTables) = try relationshipMoves(from: old, previous: previous)
        moves += relationshipMoves
        let newJoinTables = Set(joinTableNames(of: new))
        for table in oldJoinTables.subtracting(newJoinTables).sorted() {
            drops.append(SQLStatement(sql: "DROP TABLE IF EXISTS \(qualifiedTable(named: table)) CASCADE"))
        }
        let create = createStatements().map { SQLStatement(sql: $0) }
        return before + create + moves + required + drops + create
    }

    /// `ADD COLUMN … NOT NULL DEFAULT value`. DDL takes no parameters, so the value travels through a
    /// transaction-local setting and `format('%L')` quotes it inside PostgreSQL: no value is ever spliced
    /// into SQL text here.
    private func addColumn(_ table: String, _ attribute: AttributeDescription, default value: PGValue) -> [SQLStatement] {
        let type = attribute.type.postgresType
        let column = Naming.quoted(attribute.columnName)
        let ddl = "ALTER TABLE \(table) ADD COLUMN IF NOT EXISTS \(column) \(type) NOT NULL DEFAULT %L::\(type)"
        return [
            SQLStatement(sql: "SELECT set_config('pgmodel.migration_default', (\(attribute.type.bindExpression("$1"))::\(type))::text, true)",
                         binds: [value]),
            SQLStatement(sql: """
                DO $pgmodel$ BEGIN \
                EXECUTE format(\(literal(ddl)), current_setting('pgmodel.migration_default')); \
                END $pgmodel$
                """),
        ]
    }

    /// Fills the rows (of `classes`, or all) whose `attribute` is NULL with `value`.
    private func fill(_ table: String, _ attribute: AttributeDescription, with value: PGValue, classes: [String]?) -> SQLStatement {
        let column = Naming.quoted(attribute.columnName)
        var sql = "UPDATE \(table) SET \(column) = \(attribute.type.bindExpression("$1")) WHERE \(column) IS NULL"
        if let classes { sql += " AND \"entity\" IN (\(classes.map(literal).joined(separator: ", ")))" }
        return SQLStatement(sql: sql, binds: [value])
    }

    /// Names PostgreSQL knows this schema's constraints and indexes of one table by. They are built from
    /// column names, so an old constraint whose column was renamed differs from its new one: it is
    /// dropped and the new one created.
    func objectNames(ofRoot root: String) -> (constraints: Set<String>, indexes: Set<String>, checks: Set<String>) {
        guard let rootEntity = schema.entity(named: root) else { return ([], [], []) }
        let tableName = rootEntity.tableName
        var constraints = Set<String>()
        var indexes = Set<String>([objectName(tableName, ["owner_id"], suffix: "idx")])
        var checks = Set<String>()
        let classes = schema.entityNames(inHierarchyOf: root).compactMap { schema.entity(named: $0) }
        for (attribute, _) in schema.tableAttributes(ofRoot: root) {
            checks.insert(objectName(tableName, [attribute.columnName], suffix: "check"))
        }
        for c in classes {
            for group in c.uniquenessConstraints {
                // A scope is part of the name: a constraint whose scope changed is dropped and created anew.
                let columns = group.attributes.compactMap { constraintColumn($0, of: c) }
                switch group.scope {
                case .owner:
                    constraints.insert(objectName(tableName, columns, suffix: "key"))
                    indexes.insert(objectName(tableName, columns, suffix: "unowned_key"))
                case .allUsers:
                    constraints.insert(globalUniquenessConstraintName(tableName, columns))
                }
            }
            for index in c.indexes {
                // A kind is part of the name: an index whose kind changed is dropped and created anew.
                indexes.insert(indexColumns(index, of: c, tableName: tableName).name)
            }
        }
        for (relationship, _) in schema.tableForeignKeys(ofRoot: root) {
            let column = relationship.foreignKeyColumn
            constraints.insert(objectName(tableName, [column], suffix: "fkey"))
            indexes.insert(objectName(tableName, [column], suffix: "idx"))
        }
        return (constraints, indexes, checks)
    }

    /// The join tables `schema` stores relationships in.
    private func joinTableNames(of schema: SchemaDescription) -> [String] {
        var names: [String] = []
        for entity in schema.entities {
            for relationship in entity.relationships {
                if case .joinTable(let table, _, _) = schema.storage(of: relationship, in: entity) { names.append(table) }
            }
        }
        return names
    }

    /// Copies the pairs of every relationship whose storage changed (matched by name or `originalName`)
    /// into its new storage; returns those statements and the old schema's join tables.
    private func relationshipMoves(from old: SchemaDescription, previous: SQLRenderer) throws -> ([SQLStatement], Set<String>) {
        var statements: [SQLStatement] = []
        var done = Set<String>()
        for entity in schema.entities {
            for relationship in entity.relationships where schema.declaringEntity(of: relationship.name, in: entity).name == entity.name {
                guard let oldEntity = old.entity(named: entity.name),
                      let oldRelationship = oldEntity.relationship(named: relationship.name)
                        ?? relationship.originalName.flatMap(oldEntity.relationship(named:)),
                      old.entity(named: oldRelationship.destination) != nil else { continue }
                let before = old.storage(of: oldRelationship, in: oldEntity)
                let after = schema.storage(of: relationship, in: entity)
                guard let source = previous.pairs(before, entity: oldEntity.name, destination: oldRelationship.destination, in: old),
                      let target = storageIdentity(after, entity: entity.name, destination: relationship.destination, in: schema),
                      let origin = storageIdentity(before, entity: oldEntity.name, destination: oldRelationship.destination, in: old),
                      origin != target, done.insert(target).inserted else { continue }
                if let statement = write(after, pairs: source, entity: entity.name, destination: relationship.destination) {
                    statements.append(statement)
                }
            }
        }
        return (statements, Set(joinTableNames(of: old)))
    }

    /// What identifies where a relationship's pairs live: a foreign-key column of a table, or a join table.
    private func storageIdentity(_ storage: RelationshipStorage, entity: String, destination: String, in schema: SchemaDescription) -> String? {
        switch storage {
        case .foreignKey(let column):
            return schema.tableName(of: entity).map { "fk \($0).\(column)" }
        case .inverseForeignKey(let column):
            return schema.tableName(of: destination).map { "fk \($0).\(column)" }
        case .joinTable(let table, _, _):
            return "join \(table)"
        }
    }

    /// A `SELECT s, d` of the (source id, destination id) pairs stored in `storage`.
    private func pairs(_ storage: RelationshipStorage, entity: String, destination: String, in schema: SchemaDescription) -> String? {
        switch storage {
        case .foreignKey(let column):
            guard let table = schema.tableName(of: entity) else { return nil }
            let c = Naming.quoted(column)
            return "SELECT \"id\" AS s, \(c) AS d FROM \(qualifiedTable(named: table)) WHERE \(c) IS NOT NULL"
        case .inverseForeignKey(let column):
            guard let table = schema.tableName(of: destination) else { return nil }
            let c = Naming.quoted(column)
            return "SELECT \(c) AS s, \"id\" AS d FROM \(qualifiedTable(named: table)) WHERE \(c) IS NOT NULL"
        case .joinTable(let table, let source, let target):
            return "SELECT \(Naming.quoted(source)) AS s, \(Naming.quoted(target)) AS d FROM \(qualifiedTable(named: table))"
        }
    }

    /// Writes `pairs` into `storage` of this schema.
    private func write(_ storage: RelationshipStorage, pairs: String, entity: String, destination: String) -> SQLStatement? {
        switch storage {
        case .foreignKey(let column):
            guard let table = schema.tableName(of: entity) else { return nil }
            let t = qualifiedTable(named: table)
            return SQLStatement(sql: "UPDATE \(t) SET \(Naming.quoted(column)) = p.d FROM (\(pairs)) AS p WHERE \(t).\"id\" = p.s")
        case .inverseForeignKey(let column):
            guard let table = schema.tableName(of: destination) else { return nil }
            let t = qualifiedTable(named: table)
            return SQLStatement(sql: "UPDATE \(t) SET \(Naming.quoted(column)) = p.s FROM (\(pairs)) AS p WHERE \(t).\"id\" = p.d")
        case .joinTable(let table, let source, let target):
            return SQLStatement(sql: "INSERT INTO \(qualifiedTable(named: table)) (\(Naming.quoted(source)), \(Naming.quoted(target))) SELECT p.s, p.d FROM (\(pairs)) AS p ON CONFLICT DO NOTHING")
        }
    }
}

/// How the attribute columns of one hierarchy table change between two schemas.
struct ColumnPlan {
    struct Kept {
        var old: AttributeDescription
        var new: AttributeDescription
        var wasNotNull: Bool
        var isNotNull: Bool
        /// Classes that must fill the column now and did not have to before.
        var newlyRequired: [String]
    }
    /// Old column name → new column name, for attributes renamed with `originalName`.
    var renames: [String: String] = [:]
    var kept: [Kept] = []
    /// New columns: the attribute, whether every class fills it (NOT NULL), and the classes that must.
    var added: [(AttributeDescription, Bool, [String])] = []
    var droppedColumns: Set<String> = []

    init(old: SchemaDescription, new: SchemaDescription, root: String) {
        let oldAttributes = old.tableAttributes(ofRoot: root)
        let newAttributes = new.tableAttributes(ofRoot: root)
        let oldClasses = old.entityNames(inHierarchyOf: root)
        let newClasses = new.entityNames(inHierarchyOf: root)
        func requiring(_ column: String, in schema: SchemaDescription, classes: [String]) -> [String] {
            classes.filter { name in
                schema.entity(named: name)?.attributes.contains { $0.columnName == column && !$0.isOptional } ?? false
            }
        }
        var matchedOld = Set<String>()
        for (attribute, declaredBy) in newAttributes {
            // Same property name in the same hierarchy first; then the name it had (`originalName`).
            let declaring = old.entity(named: declaredBy)
            let match = declaring?.attribute(named: attribute.name)
                ?? oldAttributes.first { $0.attribute.name == attribute.name }?.attribute
                ?? attribute.originalName.flatMap { original in
                    declaring?.attribute(named: original) ?? oldAttributes.first { $0.attribute.name == original }?.attribute
                }
                ?? oldAttributes.first { $0.attribute.columnName == attribute.columnName }?.attribute
            let newRequired = requiring(attribute.columnName, in: new, classes: newClasses)
            let isNotNull = newRequired.count == newClasses.count
            guard let match, !matchedOld.contains(match.columnName) else {
                added.append((attribute, isNotNull, newRequired))
                continue
            }
            matchedOld.insert(match.columnName)
            if match.columnName != attribute.columnName { renames[match.columnName] = attribute.columnName }
            let oldRequired = requiring(match.columnName, in: old, classes: oldClasses)
            kept.append(Kept(old: match, new: attribute, wasNotNull: oldRequired.count == oldClasses.count && !oldClasses.isEmpty,
                             isNotNull: isNotNull, newlyRequired: newRequired.filter { !oldRequired.contains($0) }))
        }
        let newColumns = Set(newAttributes.map(\.attribute.columnName))
            .union(new.tableForeignKeys(ofRoot: root).map(\.relationship.foreignKeyColumn))
        for (attribute, _) in oldAttributes where !matchedOld.contains(attribute.columnName) && !newColumns.contains(attribute.columnName) {
            droppedColumns.insert(attribute.columnName)
        }
        for (relationship, _) in old.tableForeignKeys(ofRoot: root) where !newColumns.contains(relationship.foreignKeyColumn) {
            droppedColumns.insert(relationship.foreignKeyColumn)
        }
    }
}
