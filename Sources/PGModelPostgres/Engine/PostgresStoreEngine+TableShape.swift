@_spi(PGModelInternals) import PGModelCore
@_spi(PGModelInternals) import PGModelSQL
import PostgresNIO

extension PostgresStoreEngine {
    /// Refuses a registration whose tables already exist with a shape the models cannot use (another app's
    /// `Trip` in the same schema, a hand-made table), naming each table and how it differs, before any
    /// DDL runs: otherwise the container opens and the first insert fails on a constraint's name.
    func checkTableShapes(_ renderer: SQLRenderer, tablesOf entities: Set<String>, on connection: EngineConnection) async throws {
        let needed = renderer.requiredColumns(ofTablesOf: entities)
        let tables = Array(Set(needed.map(\.table))).sorted()
        guard !tables.isEmpty else { return }
        let rows = try await query(SQLStatement(sql: """
            SELECT c.relname::text, a.attname::text, a.atttypid::regtype::text, a.attnotnull, a.atthasdef \
            FROM pg_class c JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped \
            WHERE c.relnamespace = to_regnamespace($1) AND c.relkind IN ('r', 'p') AND c.relname = ANY ($2::text[])
            """, binds: [.string(Naming.quoted(schemaName)), .string(Self.textArray(tables))]), on: connection)
        guard !rows.isEmpty else { return }
        var existing: [CatalogColumn] = []
        for row in rows {
            let (table, column, type, notNull, hasDefault) = try row.decode((String, String, String, Bool, Bool).self)
            existing.append(CatalogColumn(table: table, column: column, type: type, isNotNull: notNull, hasDefault: hasDefault))
        }
        let types = Array(Set(needed.map(\.type))).sorted()
        var canonical: [String: String] = [:]
        for row in try await query(SQLStatement(sql: "SELECT t, t::regtype::text FROM unnest($1::text[]) AS t",
                                                binds: [.string(Self.textArray(types))]), on: connection) {
            let (name, printed) = try row.decode((String, String).self)
            canonical[name] = printed
        }
        // A required column that is missing can only be added to an empty table.
        let existingTables = Set(existing.map(\.table))
        var tablesWithRows = Set<String>()
        for table in existingTables where needed.contains(where: { column in
            column.table == table && column.isRequired && !existing.contains { $0.table == table && $0.column == column.column }
        }) {
            let hasRows = try await query(SQLStatement(sql: "SELECT EXISTS (SELECT 1 FROM \(renderer.qualifiedTable(named: table)))"),
                                          on: connection)
            if try hasRows.first?.decode(Bool.self) == true { tablesWithRows.insert(table) }
        }
        let differences = SQLRenderer.shapeDifferences(needed: needed, existing: existing,
                                                       canonicalType: { canonical[$0] ?? $0 }, tablesWithRows: tablesWithRows)
        guard let first = differences.first else { return }
        let text = differences.map { "\(Naming.quoted(schemaName)).\(Naming.quoted($0.table)): \($0.differences.joined(separator: "; "))" }
        let model = renderer.schema.entities.first { $0.superentity == nil && $0.tableName == first.table }?.name
        throw PGModelError(.invalidSchema, """
            the models cannot use the existing tables as they are: \(text.joined(separator: "; ")). \
            Give these models a PostgreSQL schema of their own (?schema=name on a postgres:// URL, --schema \
            for pgmodel serve), or move the tables to them with a migration plan (docs/MIGRATIONS.md)
            """, model: model)
    }
}
