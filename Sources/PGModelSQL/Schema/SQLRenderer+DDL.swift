@_spi(PGModelInternals) import PGModelCore

@_spi(PGModelInternals) extension SQLRenderer {
    /// Idempotent DDL for the whole schema, in dependency order: every hierarchy table (columns, checks,
    /// uniqueness constraints, indexes, comments), then foreign keys, then join tables, then one view per
    /// subclass. Running it again on an existing database changes nothing; a grown schema adds what is new.
    ///
    /// ```swift
    /// for sql in renderer.createStatements() { try await execute(sql) }
    /// ```
    public func createStatements() -> [String] {
        let roots = schema.entities.filter { $0.superentity == nil }
        var statements = ["CREATE SCHEMA IF NOT EXISTS \(Naming.quoted(schemaName))"]
        if needsBTreeGist(schema.entities) { statements.append(Self.btreeGistStatement) }
        for root in roots { statements += tableStatements(root) }
        for root in roots { statements += foreignKeyStatements(root) }
        statements += joinTableStatements()
        for entity in schema.entities where entity.superentity != nil {
            statements += viewStatements(entity)
        }
        return statements
    }

    /// Idempotent DDL of one entity: for a hierarchy's root, its table (every class's columns, foreign-key
    /// columns without their constraints); for a subclass, its view. ``createStatements()`` adds the
    /// constraints that need other tables; use it for a whole schema.
    ///
    /// ```swift
    /// for sql in renderer.createStatements(for: try renderer.entity("Trip")) { … }
    /// ```
    public func createStatements(for entity: EntityDescription) -> [String] {
        if entity.superentity != nil, schema.entity(named: entity.name) != nil { return viewStatements(entity) }
        let hierarchy = [entity] + schema.entityNames(inHierarchyOf: entity.name).compactMap { schema.entity(named: $0) }
        let extensions = needsBTreeGist(hierarchy) ? [Self.btreeGistStatement] : []
        return ["CREATE SCHEMA IF NOT EXISTS \(Naming.quoted(schemaName))"] + extensions + tableStatements(entity)
    }

    /// The table of `root`'s hierarchy: system columns, every class's attributes (a column only some classes
    /// store is nullable, with a CHECK that those classes fill it), foreign-key columns, constraints, comments.
    private func tableStatements(_ root: EntityDescription) -> [String] {
        let table = qualifiedTable(named: root.tableName)
        let (hierarchy, classes, attributes) = tableContents(ofRoot: root)
        var statements: [String] = []
        statements.append("""
            CREATE TABLE IF NOT EXISTS \(table) (\
            "id" uuid PRIMARY KEY, \
            "entity" text NOT NULL, \
            "owner_id" uuid REFERENCES pgmodel.users ("id"))
            """)
        var checks: [(column: String, classes: [String])] = []
        for (attribute, _) in attributes {
            let required = self.classes(requiring: attribute.columnName, among: classes)
            let notNull = required.count == classes.count
            statements.append("ALTER TABLE \(table) ADD COLUMN IF NOT EXISTS \(Naming.quoted(attribute.columnName)) \(attribute.type.postgresType)\(notNull ? " NOT NULL" : "")")
            if !notNull && !required.isEmpty { checks.append((attribute.columnName, required)) }
            if attribute.isExternal {
                // Out of line and uncompressed: the main row stays small, and reads that skip the column
                // never touch the large value.
                statements.append("ALTER TABLE \(table) ALTER COLUMN \(Naming.quoted(attribute.columnName)) SET STORAGE EXTERNAL")
            }
        }
        let foreignKeys = hierarchy.isEmpty ? [] : schema.tableForeignKeys(ofRoot: root.name)
        for (relationship, _) in foreignKeys {
            statements.append("ALTER TABLE \(table) ADD COLUMN IF NOT EXISTS \(Naming.quoted(relationship.foreignKeyColumn)) uuid")
        }
        for (column, required) in checks {
            let name = objectName(root.tableName, [column], suffix: "check")
            let list = required.map(literal).joined(separator: ", ")
            statements.append(addConstraint(name, on: table,
                "CHECK (\"entity\" NOT IN (\(list)) OR \(Naming.quoted(column)) IS NOT NULL)"))
        }
        statements.append("CREATE INDEX IF NOT EXISTS \(Naming.quoted(objectName(root.tableName, ["owner_id"], suffix: "idx"))) ON \(table) (\"owner_id\")")
        var seenGroups: [UniquenessConstraintDescription] = []
        for c in classes {
            for group in c.uniquenessConstraints where !seenGroups.contains(group) {
                seenGroups.append(group)
                let columns = group.attributes.compactMap { constraintColumn($0, of: c) }
                switch group.scope {
                case .owner: statements += uniquenessStatements(root.tableName, columns)
                case .allUsers: statements += globalUniquenessStatements(root.tableName, columns)
                }
            }
        }
        statements += indexStatements(root, classes: classes)
        let names = classes.map(\.name)
        let description = names.count == 1 ? "PGModel entity \(root.name)" : "PGModel entities \(names.joined(separator: ", ")) (column entity names the class)"
        statements.append("COMMENT ON TABLE \(table) IS \(literal(description))")
        statements.append("COMMENT ON COLUMN \(table).\"id\" IS \(literal("persistentModelID of \(root.name) (UUIDv7)"))")
        statements.append("COMMENT ON COLUMN \(table).\"entity\" IS \(literal("concrete Swift class of the row"))")
        statements.append("COMMENT ON COLUMN \(table).\"owner_id\" IS \(literal("pgmodel.users id of the user who created the row"))")
        for (attribute, declaredBy) in attributes {
            let optional = attribute.isOptional ? "?" : ""
            statements.append("COMMENT ON COLUMN \(table).\(Naming.quoted(attribute.columnName)) IS \(literal("\(declaredBy).\(attribute.name): \(attribute.type.rawValue)\(optional)"))")
        }
        for (relationship, declaredBy) in foreignKeys {
            let inverse = relationship.inverse.map { " (inverse \(relationship.destination).\($0))" } ?? ""
            statements.append("COMMENT ON COLUMN \(table).\(Naming.quoted(relationship.foreignKeyColumn)) IS \(literal("\(declaredBy).\(relationship.name): \(relationship.destination)?\(inverse), deleteRule \(relationship.deleteRule.rawValue)"))")
        }
        return statements
    }

    /// The classes stored in `root`'s table (the root alone when it has no subclasses), and each attribute
    /// column of the table once, with the class that declares it. `hierarchy` is empty for a root
    /// without subclasses.
    func tableContents(ofRoot root: EntityDescription)
        -> (hierarchy: [EntityDescription], classes: [EntityDescription], attributes: [(attribute: AttributeDescription, declaredBy: String)]) {
        let hierarchy = schema.entityNames(inHierarchyOf: root.name).compactMap { schema.entity(named: $0) }
        let classes = hierarchy.isEmpty ? [root] : hierarchy
        let attributes = hierarchy.isEmpty ? root.attributes.map { ($0, root.name) } : schema.tableAttributes(ofRoot: root.name)
        return (hierarchy, classes, attributes)
    }

    /// The names of the classes among `classes` that store `column` as non-optional (subclasses inherit
    /// it, so they are included). The column is `NOT NULL` when that is every class of its table.
    func classes(requiring column: String, among classes: [EntityDescription]) -> [String] {
        classes.filter { c in c.attributes.contains { $0.columnName == column && !$0.isOptional } }.map(\.name)
    }

    /// Foreign-key constraints (deferred to commit, so insert order inside a save never matters; `ON DELETE
    /// SET NULL`, so a reference never dangles) and an index on each foreign-key column of `root`'s table.
    private func foreignKeyStatements(_ root: EntityDescription) -> [String] {
        let table = qualifiedTable(named: root.tableName)
        var statements: [String] = []
        for (relationship, _) in schema.tableForeignKeys(ofRoot: root.name) {
            guard let destination = schema.rootEntity(of: relationship.destination) else { continue }
            let column = relationship.foreignKeyColumn
            statements.append(addConstraint(objectName(root.tableName, [column], suffix: "fkey"), on: table,
                "FOREIGN KEY (\(Naming.quoted(column))) REFERENCES \(qualifiedTable(named: destination.tableName)) (\"id\") ON DELETE SET NULL DEFERRABLE INITIALLY DEFERRED"))
            statements.append("CREATE INDEX IF NOT EXISTS \(Naming.quoted(objectName(root.tableName, [column], suffix: "idx"))) ON \(table) (\(Naming.quoted(column)))")
        }
        return statements
    }

    /// One join table per many-to-many pair or inverse-less to-many relationship: two cascading foreign
    /// keys, the pair as primary key, an index on the destination column, a comment naming the relationship.
    private func joinTableStatements() -> [String] {
        struct JoinTable { var table, source, sourceTable, destination, destinationTable, comment: String; var canonical: Bool }
        var tables: [JoinTable] = []
        for entity in schema.entities {
            for relationship in entity.relationships where schema.declaringEntity(of: relationship.name, in: entity).name == entity.name {
                guard case .joinTable(let table, let source, let destination) = schema.storage(of: relationship, in: entity),
                      let sourceRoot = schema.rootEntity(of: entity.name), let destinationRoot = schema.rootEntity(of: relationship.destination) else { continue }
                let canonical = destination == Naming.shortened(Naming.snakeCase(relationship.name) + "_id")
                let inverse = relationship.inverse.map { " (inverse \(relationship.destination).\($0))" } ?? ""
                let entry = JoinTable(table: table, source: source, sourceTable: sourceRoot.tableName, destination: destination,
                                      destinationTable: destinationRoot.tableName,
                                      comment: "PGModel relationship \(entity.name).\(relationship.name)\(inverse): \(source) → \(destination)",
                                      canonical: canonical)
                if let i = tables.firstIndex(where: { $0.table == table }) {
                    if canonical && !tables[i].canonical { tables[i] = entry }
                } else {
                    tables.append(entry)
                }
            }
        }
        var statements: [String] = []
        for t in tables {
            let table = qualifiedTable(named: t.table)
            statements.append("""
                CREATE TABLE IF NOT EXISTS \(table) (\
                \(Naming.quoted(t.source)) uuid NOT NULL CONSTRAINT \(Naming.quoted(objectName(t.table, [t.source], suffix: "fkey"))) \
                REFERENCES \(qualifiedTable(named: t.sourceTable)) ("id") ON DELETE CASCADE, \
                \(Naming.quoted(t.destination)) uuid NOT NULL CONSTRAINT \(Naming.quoted(objectName(t.table, [t.destination], suffix: "fkey"))) \
                REFERENCES \(qualifiedTable(named: t.destinationTable)) ("id") ON DELETE CASCADE, \
                CONSTRAINT \(Naming.quoted(objectName(t.table, [], suffix: "pkey"))) PRIMARY KEY (\(Naming.quoted(t.source)), \(Naming.quoted(t.destination))))
                """)
            statements.append("CREATE INDEX IF NOT EXISTS \(Naming.quoted(objectName(t.table, [t.destination], suffix: "idx"))) ON \(table) (\(Naming.quoted(t.destination)))")
            statements.append("COMMENT ON TABLE \(table) IS \(literal(t.comment))")
        }
        return statements
    }

    /// `CREATE OR REPLACE VIEW <subclass>`: the rows of that class and its subclasses, with its columns.
    /// When the column list changed in a way PostgreSQL cannot replace in place, the view is recreated.
    private func viewStatements(_ entity: EntityDescription) -> [String] {
        guard let root = schema.rootEntity(of: entity.name), root.name != entity.name else { return [] }
        let view = qualifiedTable(named: entity.tableName)
        var columns = ["id", "entity", "owner_id"] + entity.attributes.map(\.columnName)
        for (_, column) in foreignKeys(of: entity) where !columns.contains(column) { columns.append(column) }
        let classes = schema.entityNames(inHierarchyOf: entity.name).map(literal).joined(separator: ", ")
        let select = "SELECT \(columns.map(Naming.quoted).joined(separator: ", ")) FROM \(qualifiedTable(named: root.tableName)) WHERE \"entity\" IN (\(classes))"
        return [
            """
            DO $pgmodel$ BEGIN \
            CREATE OR REPLACE VIEW \(view) WITH (security_invoker = true) AS \(select); \
            EXCEPTION WHEN invalid_table_definition THEN \
            DROP VIEW \(view); CREATE VIEW \(view) WITH (security_invoker = true) AS \(select); \
            END $pgmodel$
            """,
            "COMMENT ON VIEW \(view) IS \(literal("PGModel entity \(entity.name): rows of \(root.tableName) whose entity is \(schema.entityNames(inHierarchyOf: entity.name).joined(separator: ", "))"))",
        ]
    }

    /// Uniqueness per owner: each user's rows are like their own SwiftData store, so no user can detect
    /// or reserve another's values. A real constraint `UNIQUE (owner_id, …)` (what admins expect in \\d)
    /// covers owned rows; a partial unique index covers the direct store's rows, which have no owner
    /// (UNIQUE treats NULL owners as distinct). A constraint of the same name without `owner_id`, from
    /// before uniqueness was per owner, is replaced.
    private func uniquenessStatements(_ tableName: String, _ columns: [String]) -> [String] {
        let table = qualifiedTable(named: tableName)
        let name = objectName(tableName, columns, suffix: "key")
        let list = columns.map(Naming.quoted).joined(separator: ", ")
        return [
            """
            DO $pgmodel$ BEGIN \
            IF EXISTS (SELECT 1 FROM pg_constraint c WHERE c.conname = \(literal(name)) AND c.conrelid = \(literal(table))::regclass \
            AND NOT EXISTS (SELECT 1 FROM pg_attribute a WHERE a.attrelid = c.conrelid AND a.attname = 'owner_id' AND a.attnum = ANY (c.conkey))) THEN \
            ALTER TABLE \(table) DROP CONSTRAINT \(Naming.quoted(name)); \
            END IF; END $pgmodel$
            """,
            addConstraint(name, on: table, "UNIQUE (\"owner_id\", \(list))"),
            "CREATE UNIQUE INDEX IF NOT EXISTS \(Naming.quoted(objectName(tableName, columns, suffix: "unowned_key"))) ON \(table) (\(list)) WHERE \"owner_id\" IS NULL",
        ]
    }

    /// Uniqueness across all users (`@Attribute(.globallyUnique)`, `#Unique(…, scope: .allUsers)`): a real
    /// constraint `UNIQUE (…)` without `owner_id`, named `<table>_<columns>_all_users_key`, over every row
    /// whoever owns it (the direct store's rows, which have no owner, included).
    private func globalUniquenessStatements(_ tableName: String, _ columns: [String]) -> [String] {
        let name = globalUniquenessConstraintName(tableName, columns)
        let list = columns.map(Naming.quoted).joined(separator: ", ")
        return [addConstraint(name, on: qualifiedTable(named: tableName), "UNIQUE (\(list))")]
    }

    /// The column of a uniqueness or index group member: an attribute's column or a foreign key's.
    func constraintColumn(_ name: String, of entity: EntityDescription) -> String? {
        if let attribute = entity.attribute(named: name) { return attribute.columnName }
        if let relationship = entity.relationship(named: name), case .foreignKey(let column) = schema.storage(of: relationship, in: entity) { return column }
        return nil
    }

    /// `ALTER TABLE … ADD CONSTRAINT` unless a constraint of that name exists (ADD CONSTRAINT has no IF NOT EXISTS).
    private func addConstraint(_ name: String, on table: String, _ definition: String) -> String {
        """
        DO $pgmodel$ BEGIN \
        IF NOT EXISTS (SELECT 1 FROM pg_constraint WHERE conname = \(literal(name)) AND conrelid = \(literal(table))::regclass) THEN \
        ALTER TABLE \(table) ADD CONSTRAINT \(Naming.quoted(name)) \(definition); \
        END IF; END $pgmodel$
        """
    }

    /// A constraint or index name within PostgreSQL's 63-byte limit, stable for the same inputs.
    func objectName(_ table: String, _ columns: [String], suffix: String) -> String {
        Naming.shortened(([table] + columns + [suffix]).joined(separator: "_"))
    }

    /// A SQL string literal. Used only for names from the validated schema (comments, catalog lookups).
    func literal(_ text: String) -> String {
        "'" + text.replacingOccurrences(of: "'", with: "''") + "'"
    }
}
