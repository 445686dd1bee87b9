import Foundation
@_spi(PGModelInternals) import PGModelCore
@_spi(PGModelInternals) import PGModelSQL
import PostgresNIO

@_spi(PGModelInternals) extension PostgresStoreEngine {
    /// Writes one user's data in this engine's store as JSON lines, handing each line (without its
    /// newline) to `write`: a ``UserExportHeader``, then every row the user owns in every registered
    /// entity table (`{"kind":"row","entity":…,"id":…,"values":{column: value}}`), then the many-to-many
    /// links between two of those rows (``UserExportLink``), then the shares they
    /// granted on those rows (grantee by name), then, with `includeHistory`, the history entries of those
    /// rows. Everything is read in one repeatable-read, read-only transaction: one consistent snapshot.
    /// Runs as the tables' owner (the CLI), whom row-level security does not filter. Throws `notFound`
    /// for an unknown user. `progress` hears one line per table.
    ///
    /// Values are JSON that gives back the stored value exactly: numbers for integers and floats
    /// (`"NaN"`, `"Infinity"` as strings), strings for text, uuids, numerics (their digits) and timestamps
    /// (ISO 8601, UTC, microseconds), base64 for bytea, the value itself for jsonb (wrapped as
    /// `{"$jsonb": …}` when it is JSON `null` or an object with a `$jsonb` key, so SQL `NULL` stays
    /// distinct), arrays for arrays, `null` for `NULL`.
    ///
    /// ```swift
    /// var lines: [String] = []
    /// let report = try await engine.exportUser("alice", write: { lines.append($0) }, on: connection)
    /// ```
    public func exportUser(_ name: String, includeHistory: Bool = false, write: (String) throws -> Void,
                           progress: (String) -> Void = { _ in }, on connection: EngineConnection) async throws -> UserExportReport {
        try await execute(SQLStatement(sql: "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY"), on: connection)
        do {
            let report = try await exportUserInTransaction(name, includeHistory: includeHistory, write: write, progress: progress, on: connection)
            try await execute(SQLStatement(sql: "COMMIT"), on: connection)
            return report
        } catch {
            await rollback(on: connection)
            throw error
        }
    }

    private func exportUserInTransaction(_ name: String, includeHistory: Bool, write: (String) throws -> Void,
                                         progress: (String) -> Void, on connection: EngineConnection) async throws -> UserExportReport {
        // Timestamps print in UTC and floats in their shortest exact form whatever the role's settings are.
        try await execute(SQLStatement(sql: "SET LOCAL TimeZone = 'UTC'"), on: connection)
        try await execute(SQLStatement(sql: "SET LOCAL extra_float_digits = 3"), on: connection)
        let users = try await query(SQLStatement(sql: "SELECT id FROM pgmodel.users WHERE name = $1", binds: [.string(name)]), on: connection)
        guard let userID = try users.first?.decode(UUID.self) else {
            throw PGModelError(.notFound, "user '\(name)' does not exist")
        }
        let registered = try await loadSchema(on: connection)
        var tables: [(root: EntityDescription, header: UserExportHeader.Table)] = []
        for root in registered.entities where root.superentity == nil {
            let stored = try await storedColumns(ofTable: root.tableName, on: connection)
            // A table dropped by hand has no rows to export.
            guard !stored.isEmpty else { continue }
            let known = Set(Self.registeredColumns(ofRoot: root.name, in: registered))
            let columns = stored.filter { known.contains($0.name) }.map { UserExportHeader.Column(name: $0.name, type: $0.type) }
            tables.append((root, UserExportHeader.Table(table: root.tableName, entities: registered.entityNames(inHierarchyOf: root.name), columns: columns)))
        }

        var report = UserExportReport(user: name, schema: schemaName)
        func emit(_ line: String) throws {
            try write(line)
            report.bytes += line.utf8.count + 1
        }
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        formatter.timeZone = TimeZone(identifier: "UTC")
        let header = UserExportHeader(schema: schemaName, user: .init(name: name, id: userID), exportedAt: formatter.string(from: Date()),
                                      entities: registered.entities, tables: tables.map(\.header))
        try emit(String(decoding: try Self.encoder.encode(header), as: UTF8.self))

        // The ids written, by root class: shares and history name a record by its root and id.
        var exported: [String: Set<UUID>] = [:]
        for (root, table) in tables {
            let qualified = Naming.quoted(schemaName) + "." + Naming.quoted(root.tableName)
            let line = "jsonb_build_object('kind', 'row', 'entity', t.\"entity\", 'id', t.\"id\", 'values', \(UserExportSQL.valuesObject(table.columns)))::text"
            // Keyset pages keep memory bounded for a user with many rows; the snapshot keeps them consistent.
            var after: UUID?
            var count = 0
            var ids = Set<UUID>()
            while true {
                let page: [PostgresRow]
                if let after {
                    page = try await query(SQLStatement(
                        sql: "SELECT t.\"id\", t.\"entity\", \(line) FROM \(qualified) t WHERE t.\"owner_id\" = $1 AND t.\"id\" > $2 ORDER BY t.\"id\" LIMIT \(Self.exportPageSize)",
                        binds: [.uuid(userID), .uuid(after)]), on: connection, model: root.name)
                } else {
                    page = try await query(SQLStatement(
                        sql: "SELECT t.\"id\", t.\"entity\", \(line) FROM \(qualified) t WHERE t.\"owner_id\" = $1 ORDER BY t.\"id\" LIMIT \(Self.exportPageSize)",
                        binds: [.uuid(userID)]), on: connection, model: root.name)
                }
                for row in page {
                    let (id, entity, text) = try row.decode((UUID, String, String).self)
                    try emit(text)
                    ids.insert(id)
                    report.rows[entity, default: 0] += 1
                    after = id
                }
                count += page.count
                if page.count < Self.exportPageSize { break }
            }
            exported[root.name] = ids
            progress("\(schemaName).\(root.tableName) (\(table.entities.joined(separator: ", "))): \(count) row\(count == 1 ? "" : "s")")
        }

        // Many-to-many links (join tables) whose two rows are both in the export.
        for join in Self.joinTables(in: registered) {
            guard let sources = exported[join.sourceRoot], let destinations = exported[join.destinationRoot], !sources.isEmpty, !destinations.isEmpty,
                  try await !storedColumns(ofTable: join.table, on: connection).isEmpty else { continue }
            let source = Naming.quoted(join.sourceColumn), destination = Naming.quoted(join.destinationColumn)
            let links = try await query(SQLStatement(
                sql: "SELECT j.\(source), j.\(destination) FROM \(Naming.quoted(schemaName)).\(Naming.quoted(join.table)) j WHERE j.\(source) = ANY($1) AND j.\(destination) = ANY($2) ORDER BY 1, 2",
                arrays: [SQLArray(.uuid, sources.map(PGValue.uuid)), SQLArray(.uuid, destinations.map(PGValue.uuid))]), on: connection, model: join.entity)
            for row in links {
                let (id, target) = try row.decode((UUID, UUID).self)
                let line = UserExportLink(entity: join.entity, relationship: join.relationship, id: id.uuidString.lowercased(), target: target.uuidString.lowercased())
                try emit(String(decoding: try Self.encoder.encode(line), as: UTF8.self))
                report.links += 1
            }
        }

        let shares = try await query(SQLStatement(sql: """
            SELECT s.root_entity, s.row_id, jsonb_build_object('kind', 'share', 'entity', s.entity, 'rootEntity', s.root_entity, 'id', s.row_id, \
            'grantee', g.name, 'permission', s.permission, 'grantedBy', s.granted_by, 'createdAt', s.created_at)::text \
            FROM pgmodel.shares s JOIN pgmodel.users g ON g.id = s.grantee_id \
            WHERE s.schema_name = $1 AND s.owner_id = $2 ORDER BY s.root_entity, s.row_id, g.name
            """, binds: [.string(schemaName), .uuid(userID)]), on: connection)
        for row in shares {
            let (root, id, text) = try row.decode((String, UUID, String).self)
            // A share whose record is no longer the user's covers nothing: it is not theirs to export.
            guard exported[root]?.contains(id) == true else { continue }
            try emit(text)
            report.shares += 1
        }
        progress("shares: \(report.shares)")

        if includeHistory {
            let allIDs = exported.values.flatMap { $0 }
            let history = try await query(SQLStatement(sql: """
                SELECT c.entity, c.row_id, jsonb_build_object('kind', 'history', 'entity', c.entity, 'id', c.row_id, 'change', c.id, \
                'transaction', c.transaction_id, 'position', t.position::text, 'changeKind', c.kind, 'updatedAttributes', c.updated_attributes, \
                'newValues', c.new_values, 'tombstone', c.tombstone, 'author', t.author, 'userName', t.user_name, 'createdAt', t.created_at)::text \
                FROM pgmodel.change_rows c JOIN pgmodel.transactions t ON t.id = c.transaction_id \
                WHERE t.schema_name = $1 AND c.owner_id = $2 AND c.row_id = ANY($3) ORDER BY c.id
                """, binds: [.string(schemaName), .uuid(userID)], arrays: [SQLArray(.uuid, allIDs.map(PGValue.uuid))]), on: connection)
            for row in history {
                let (entity, id, text) = try row.decode((String, UUID, String).self)
                // Ids may repeat across class hierarchies: keep the entries of the exported record only.
                guard let root = registered.rootEntity(of: entity), exported[root.name]?.contains(id) == true else { continue }
                try emit(text)
                report.history += 1
            }
            progress("history: \(report.history) entr\(report.history == 1 ? "y" : "ies")")
        }
        return report
    }

    /// A join table of the store: the relationship it stores (named from the side whose rows
    /// `sourceColumn` holds) and the root classes of both sides.
    struct JoinTable: Sendable, Hashable {
        var entity: String
        var relationship: String
        var table: String
        var sourceColumn: String
        var destinationColumn: String
        var sourceRoot: String
        var destinationRoot: String
    }

    /// Every join table of `schema`, once each.
    static func joinTables(in schema: SchemaDescription) -> [JoinTable] {
        var result: [JoinTable] = []
        for entity in schema.entities {
            for relationship in entity.relationships where schema.declaringEntity(of: relationship.name, in: entity).name == entity.name {
                guard let join = joinTable(of: relationship, in: entity, schema: schema), !result.contains(where: { $0.table == join.table }) else { continue }
                result.append(join)
            }
        }
        return result
    }

    /// The join table of `relationship` of `entity`, if it is stored in one.
    static func joinTable(of relationship: RelationshipDescription, in entity: EntityDescription, schema: SchemaDescription) -> JoinTable? {
        guard case .joinTable(let table, let source, let destination) = schema.storage(of: relationship, in: entity),
              let sourceRoot = schema.rootEntity(of: entity.name), let destinationRoot = schema.rootEntity(of: relationship.destination),
              [table, source, destination].allSatisfy(Naming.isValidIdentifier) else { return nil }
        return JoinTable(entity: entity.name, relationship: relationship.name, table: table, sourceColumn: source, destinationColumn: destination,
                         sourceRoot: sourceRoot.name, destinationRoot: destinationRoot.name)
    }

    /// Rows per page of an export's reads.
    static let exportPageSize = 1000

    /// One column of a model table as PostgreSQL's catalog has it.
    struct StoredColumn: Sendable, Hashable {
        var name: String
        var type: String
        var isRequired: Bool
    }

    /// The columns of `table` in this engine's schema besides `id`, `entity` and `owner_id`, in table
    /// order; empty when there is no such table. `isRequired`: `NOT NULL` without a default.
    func storedColumns(ofTable table: String, on connection: EngineConnection) async throws -> [StoredColumn] {
        let rows = try await query(SQLStatement(sql: """
            SELECT a.attname::text, format_type(a.atttypid, a.atttypmod), a.attnotnull AND NOT a.atthasdef \
            FROM pg_attribute a WHERE a.attrelid = to_regclass($1) AND a.attnum > 0 AND NOT a.attisdropped ORDER BY a.attnum
            """, binds: [.string(Naming.quoted(schemaName) + "." + Naming.quoted(table))]), on: connection)
        return try rows.compactMap { row in
            let (name, type, required) = try row.decode((String, String, Bool).self)
            return EntityDescription.reservedColumns.contains(name) ? nil : StoredColumn(name: name, type: type, isRequired: required)
        }
    }

    /// The columns the registered schema stores in the table of `root`'s hierarchy: attributes and
    /// foreign keys. Only these are read or written by name, so an identifier never comes from elsewhere.
    static func registeredColumns(ofRoot root: String, in schema: SchemaDescription) -> [String] {
        let columns = schema.tableAttributes(ofRoot: root).map(\.attribute.columnName)
            + schema.tableForeignKeys(ofRoot: root).map(\.relationship.foreignKeyColumn)
        return columns.filter(Naming.isValidIdentifier)
    }
}

/// The SQL that turns stored values into the export's JSON and back. Column names and types come from
/// the store's catalog and registered schema only; values are never part of the SQL text.
enum UserExportSQL {
    /// A string literal: names are valid identifiers already, doubling quotes keeps that true regardless.
    static func literal(_ text: String) -> String {
        "'" + text.replacingOccurrences(of: "'", with: "''") + "'"
    }

    /// `jsonb_build_object(…) || …` of every column of `t`, in chunks: a function takes at most 100 arguments.
    static func valuesObject(_ columns: [UserExportHeader.Column]) -> String {
        guard !columns.isEmpty else { return "'{}'::jsonb" }
        var chunks: [String] = []
        var index = 0
        while index < columns.count {
            let chunk = columns[index..<min(index + 40, columns.count)]
            chunks.append("jsonb_build_object(" + chunk.map { literal($0.name) + ", " + exportExpression(column: "t." + Naming.quoted($0.name), type: $0.type) }.joined(separator: ", ") + ")")
            index += 40
        }
        return chunks.joined(separator: " || ")
    }

    /// The JSON form of `column`, a column of PostgreSQL type `type`, that gives the value back exactly.
    static func exportExpression(column: String, type: String) -> String {
        switch type {
        case "boolean", "smallint", "integer", "bigint", "real", "double precision",
             "text", "uuid", "timestamp with time zone",
             "text[]", "bigint[]", "double precision[]", "boolean[]":
            // Floats print as their shortest exact digits (extra_float_digits), NaN and infinities as strings.
            return "to_jsonb(\(column))"
        case "bytea":
            return "to_jsonb(translate(encode(\(column), 'base64'), E'\\n', ''))"
        case "jsonb":
            return "CASE WHEN jsonb_typeof(\(column)) = 'null' OR (jsonb_typeof(\(column)) = 'object' AND \(column) ? '$jsonb') THEN jsonb_build_object('$jsonb', \(column)) ELSE \(column) END"
        default:
            // numeric (exact digits, beyond what JSON readers keep of a number) and anything else: the text form.
            return "to_jsonb(\(column)::text)"
        }
    }

    /// The value of `key` in the JSON object `values` as a column of PostgreSQL type `type`: the inverse
    /// of ``exportExpression(column:type:)``. A missing key or JSON `null` is `NULL`.
    static func importExpression(values: String, key: String, type: String) -> String {
        let json = "(\(values) -> \(literal(key)))"
        let text = "(\(values) ->> \(literal(key)))"
        switch type {
        case "bytea":
            return "decode(\(text), 'base64')"
        case "jsonb":
            return "CASE WHEN jsonb_typeof(\(json)) = 'null' THEN NULL WHEN jsonb_typeof(\(json)) = 'object' AND \(json) ? '$jsonb' THEN \(json) -> '$jsonb' ELSE \(json) END"
        case _ where type.hasSuffix("[]"):
            return "CASE WHEN \(json) IS NULL OR jsonb_typeof(\(json)) = 'null' THEN NULL ELSE ARRAY(SELECT e FROM jsonb_array_elements_text(\(json)) WITH ORDINALITY AS a(e, n) ORDER BY n)::\(type) END"
        default:
            return "\(text)::\(type)"
        }
    }
}
