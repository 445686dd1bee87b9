import PGModelCore

extension SQLRenderer {
    /// Idempotent DDL that creates `entity`'s table, adds missing columns, constraints and indexes, and
    /// comments naming the Swift type and properties. Statements run in order in one transaction.
    ///
    /// ```swift
    /// for sql in renderer.createStatements(for: try renderer.entity("Trip")) { … }
    /// ```
    public func createStatements(for entity: EntityDescription) -> [String] {
        let table = qualifiedTable(entity)
        var statements: [String] = []
        statements.append("CREATE SCHEMA IF NOT EXISTS \(Naming.quoted(schemaName))")
        statements.append("""
            CREATE TABLE IF NOT EXISTS \(table) (\
            "id" uuid PRIMARY KEY, \
            "entity" text NOT NULL, \
            "owner_id" uuid REFERENCES pgmodel.users ("id"))
            """)
        for attribute in entity.attributes {
            let null = attribute.isOptional ? "" : " NOT NULL"
            statements.append("ALTER TABLE \(table) ADD COLUMN IF NOT EXISTS \(Naming.quoted(attribute.columnName)) \(attribute.type.postgresType)\(null)")
        }
        statements.append("CREATE INDEX IF NOT EXISTS \(Naming.quoted(objectName(entity.tableName, ["owner_id"], suffix: "idx"))) ON \(table) (\"owner_id\")")
        for group in entity.uniquenessConstraints {
            let columns = group.compactMap { entity.attribute(named: $0)?.columnName }
            let name = objectName(entity.tableName, columns, suffix: "key")
            // ADD CONSTRAINT has no IF NOT EXISTS; a real constraint (not just a unique index) is what
            // admins expect to see in \d.
            statements.append("""
                DO $pgmodel$ BEGIN \
                IF NOT EXISTS (SELECT 1 FROM pg_constraint WHERE conname = \(literal(name)) AND conrelid = \(literal(table))::regclass) THEN \
                ALTER TABLE \(table) ADD CONSTRAINT \(Naming.quoted(name)) UNIQUE (\(columns.map(Naming.quoted).joined(separator: ", "))); \
                END IF; END $pgmodel$
                """)
        }
        for group in entity.indexes {
            let columns = group.compactMap { entity.attribute(named: $0)?.columnName }
            let name = objectName(entity.tableName, columns, suffix: "idx")
            statements.append("CREATE INDEX IF NOT EXISTS \(Naming.quoted(name)) ON \(table) (\(columns.map(Naming.quoted).joined(separator: ", ")))")
        }
        statements.append("COMMENT ON TABLE \(table) IS \(literal("PGModel entity \(entity.name)"))")
        statements.append("COMMENT ON COLUMN \(table).\"id\" IS \(literal("persistentModelID of \(entity.name) (UUIDv7)"))")
        statements.append("COMMENT ON COLUMN \(table).\"entity\" IS \(literal("concrete Swift class of the row"))")
        statements.append("COMMENT ON COLUMN \(table).\"owner_id\" IS \(literal("pgmodel.users id of the user who created the row"))")
        for attribute in entity.attributes {
            let optional = attribute.isOptional ? "?" : ""
            statements.append("COMMENT ON COLUMN \(table).\(Naming.quoted(attribute.columnName)) IS \(literal("\(entity.name).\(attribute.name): \(attribute.type.rawValue)\(optional)"))")
        }
        return statements
    }

    /// A constraint or index name within PostgreSQL's 63-byte limit, stable for the same inputs.
    func objectName(_ table: String, _ columns: [String], suffix: String) -> String {
        let full = ([table] + columns + [suffix]).joined(separator: "_")
        guard full.utf8.count > 63 else { return full }
        // FNV-1a: a short, deterministic disambiguator (Hasher is seeded per process).
        var hash: UInt32 = 2166136261
        for byte in full.utf8 { hash = (hash ^ UInt32(byte)) &* 16777619 }
        let tag = String(hash, radix: 16)
        return String(full.utf8.prefix(63 - tag.count - 1).map { Character(UnicodeScalar($0)) }) + "_" + tag
    }

    /// A SQL string literal. Used only for names from the validated schema (comments, catalog lookups).
    func literal(_ text: String) -> String {
        "'" + text.replacingOccurrences(of: "'", with: "''") + "'"
    }
}
