import Foundation
@_spi(PGModelInternals) import PGModelCore
@_spi(PGModelInternals) import PGModelSQL
import PostgresNIO

@_spi(PGModelInternals) extension PostgresStoreEngine {
    /// Reads a user export (``exportUser(_:includeHistory:write:progress:on:)``'s lines) into this
    /// engine's store, in one transaction: every row is inserted with the owner `targetName` (default:
    /// the exported user's name), which must be a user here. The file is untrusted input: table and
    /// column names come only from this store's registered schema and catalog, every value is a bound
    /// parameter that PostgreSQL converts to the column's type.
    ///
    /// Nothing is written when anything fails: a malformed line (`malformed_message`, naming the line),
    /// an entity not registered here (`unknown_entity`), a value for a column the entity does not have
    /// here (`unknown_attribute`) or has with another type (`type_mismatch`), a column required here that
    /// the file lacks (`invalid_schema`), an id that already exists here, whoever owns it
    /// (`unique_violation`, naming the entity and id), a value PostgreSQL refuses (naming the line).
    /// References to rows neither in the file nor the user's here become `NULL`; foreign keys are
    /// checked at commit, so rows may come in any order. Many-to-many links go into the target's join
    /// table when both rows are in the file. Shares are made again by grantee name, those
    /// whose grantee is no user here (or the user themselves) skipped and counted. History lines are
    /// counted, not imported: history is what saves wrote. Writes no history itself (like an edit by hand).
    ///
    /// ```swift
    /// let lines = try String(contentsOfFile: "alice.jsonl", encoding: .utf8).split(separator: "\n").map(String.init)
    /// let report = try await engine.importUser(lines: lines, as: "alice2", on: connection)
    /// ```
    public func importUser(lines: [String], as targetName: String? = nil, progress: (String) -> Void = { _ in },
                           on connection: EngineConnection) async throws -> UserImportReport {
        let file = try UserImportFile(lines: lines)
        let target = targetName ?? file.header.user.name
        try await execute(SQLStatement(sql: "BEGIN"), on: connection)
        do {
            let report = try await importUserInTransaction(file, as: target, progress: progress, on: connection)
            try await execute(SQLStatement(sql: "COMMIT"), on: connection)
            return report
        } catch let error as PGModelError where error.sqlState == "23503" {
            // A deferred foreign key failed at commit: a reference to a row gone meanwhile.
            await rollback(on: connection)
            throw PGModelError(error.code, "\(error.message); nothing was imported", model: error.model, sqlState: error.sqlState)
        } catch {
            await rollback(on: connection)
            throw error
        }
    }

    private struct ImportTable {
        var root: EntityDescription
        var qualified: String
        /// Registered and present columns here, by name, with their PostgreSQL types.
        var columns: [String: String]
        var rows: [UserImportFile.Row] = []
    }

    private func importUserInTransaction(_ file: UserImportFile, as target: String, progress: (String) -> Void,
                                         on connection: EngineConnection) async throws -> UserImportReport {
        try await execute(SQLStatement(sql: "SET CONSTRAINTS ALL DEFERRED"), on: connection)
        // Locked, so the user cannot be removed while their rows come in.
        let users = try await query(SQLStatement(sql: "SELECT id FROM pgmodel.users WHERE name = $1 FOR SHARE", binds: [.string(target)]), on: connection)
        guard let ownerID = try users.first?.decode(UUID.self) else {
            throw PGModelError(.notFound, "user '\(target)' does not exist in the target database: add them first (pgmodel user add), or name another with --as")
        }
        let registered = try await loadSchema(on: connection)
        var report = UserImportReport(user: target, schema: schemaName, historySkipped: file.history)

        // Every class of the file, checked against this store once: its table, and the columns the file
        // declares for it (type and presence). Keyed by root class.
        var tables: [String: ImportTable] = [:]
        var checkedEntities: [String: (root: String, source: UserExportHeader.Table)] = [:]
        var seen: [String: [UUID: Int]] = [:]
        for row in file.rows {
            let root: String
            let source: UserExportHeader.Table
            if let checked = checkedEntities[row.entity] {
                (root, source) = checked
            } else {
                guard registered.entity(named: row.entity) != nil, let rootEntity = registered.rootEntity(of: row.entity) else {
                    throw PGModelError(.unknownEntity, "line \(row.line): entity '\(row.entity)' is not registered in schema '\(schemaName)' of the target; nothing was imported",
                                       model: row.entity)
                }
                guard let table = file.header.tables.first(where: { $0.entities.contains(row.entity) }) else {
                    throw PGModelError(.malformedMessage, "line \(row.line): entity '\(row.entity)' is in no table of the header")
                }
                if tables[rootEntity.name] == nil {
                    let stored = try await storedColumns(ofTable: rootEntity.tableName, on: connection)
                    guard !stored.isEmpty else {
                        throw PGModelError(.invalidSchema, "the table \(schemaName).\(rootEntity.tableName) of entity \(row.entity) does not exist in the target; nothing was imported",
                                           model: row.entity)
                    }
                    let known = Set(Self.registeredColumns(ofRoot: rootEntity.name, in: registered))
                    let columns = stored.filter { known.contains($0.name) }
                    tables[rootEntity.name] = ImportTable(
                        root: rootEntity, qualified: Naming.quoted(schemaName) + "." + Naming.quoted(rootEntity.tableName),
                        columns: Dictionary(columns.map { ($0.name, $0.type) }, uniquingKeysWith: { a, _ in a }))
                    let declared = Set(table.columns.map(\.name))
                    if let missing = columns.first(where: { $0.isRequired && !declared.contains($0.name) }) {
                        throw PGModelError(.invalidSchema, "entity \(row.entity) needs a value for column '\(missing.name)' in the target, and the file has none; nothing was imported",
                                           model: row.entity, keyPath: missing.name)
                    }
                }
                let here = tables[rootEntity.name]?.columns ?? [:]
                for column in table.columns {
                    if let type = here[column.name], type != column.type {
                        throw PGModelError(.typeMismatch, "column '\(column.name)' of entity \(row.entity) is \(type) in the target and \(column.type) in the file; nothing was imported",
                                           model: row.entity, keyPath: column.name)
                    }
                }
                (root, source) = (rootEntity.name, table)
                checkedEntities[row.entity] = (root, source)
            }
            let declared = source.columns.map(\.name)
            let here = tables[root]?.columns ?? [:]
            for column in row.nonNullColumns + row.nullColumns where !declared.contains(column) {
                throw PGModelError(.malformedMessage, "line \(row.line): column '\(column)' is not among the header's columns of table \(source.table)")
            }
            // A NULL for a column the target lacks loses nothing (a sibling class's column); a value would.
            for column in row.nonNullColumns where here[column] == nil {
                throw PGModelError(.unknownAttribute, "line \(row.line): entity \(row.entity) has no column '\(column)' in schema '\(schemaName)' of the target; nothing was imported",
                                   model: row.entity, keyPath: column)
            }
            if let earlier = seen[root]?[row.id] {
                throw PGModelError(.malformedMessage, "line \(row.line): \(row.entity) \(row.id.uuidString.lowercased()) appears twice (also line \(earlier))")
            }
            seen[root, default: [:]][row.id] = row.line
            tables[root]?.rows.append(row)
        }

        // Never overwrite: an id that exists here, anyone's row, stops the whole import.
        for (_, table) in tables.sorted(by: { $0.key < $1.key }) {
            let existing = try await query(SQLStatement(
                sql: "SELECT t.\"id\" FROM \(table.qualified) t WHERE t.\"id\" = ANY($1) LIMIT 1",
                arrays: [SQLArray(.uuid, table.rows.map { .uuid($0.id) })]), on: connection)
            if let id = try existing.first?.decode(UUID.self), let row = table.rows.first(where: { $0.id == id }) {
                throw Self.existingRow(row)
            }
        }

        for (_, table) in tables.sorted(by: { $0.key < $1.key }) {
            var start = 0
            while start < table.rows.count {
                let chunk = Array(table.rows[start..<min(start + Self.importChunkSize, table.rows.count)])
                try await insert(chunk, into: table, owner: ownerID, on: connection)
                start += chunk.count
            }
            for row in table.rows { report.rows[row.entity, default: 0] += 1 }
            progress("\(schemaName).\(table.root.tableName) (\(registered.entityNames(inHierarchyOf: table.root.name).joined(separator: ", "))): \(table.rows.count) row\(table.rows.count == 1 ? "" : "s") imported")
        }

        // References to rows outside the file stay only when they are the user's own rows here: the file
        // must not link the user's data to anyone else's.
        for (_, table) in tables.sorted(by: { $0.key < $1.key }) {
            let ids = SQLArray(.uuid, table.rows.map { .uuid($0.id) })
            for (relationship, _) in registered.tableForeignKeys(ofRoot: table.root.name) {
                let column = relationship.foreignKeyColumn
                guard table.columns[column] != nil, let destination = registered.rootEntity(of: relationship.destination) else { continue }
                let referenced = Naming.quoted(schemaName) + "." + Naming.quoted(destination.tableName)
                let cleared = try await query(SQLStatement(sql: """
                    WITH cleared AS (UPDATE \(table.qualified) t SET \(Naming.quoted(column)) = NULL \
                    WHERE t."id" = ANY($2) AND t.\(Naming.quoted(column)) IS NOT NULL \
                    AND NOT EXISTS (SELECT 1 FROM \(referenced) d WHERE d."id" = t.\(Naming.quoted(column)) AND d."owner_id" = $1) RETURNING 1) \
                    SELECT count(*) FROM cleared
                    """, binds: [.uuid(ownerID)], arrays: [ids]), on: connection, model: table.root.name)
                report.referencesCleared += Int(try cleared.first?.decode(Int64.self) ?? 0)
            }
        }

        var imported: [String: [UUID: String]] = [:]
        for (root, table) in tables {
            imported[root] = Dictionary(table.rows.map { ($0.id, $0.entity) }, uniquingKeysWith: { a, _ in a })
        }

        // Many-to-many links, only between two rows the file brought in; the join table is the target's.
        for link in file.links {
            guard let entity = registered.entity(named: link.entity) else {
                throw PGModelError(.unknownEntity, "line \(link.line): entity '\(link.entity)' is not registered in schema '\(schemaName)' of the target; nothing was imported",
                                   model: link.entity)
            }
            guard let relationship = entity.relationship(named: link.relationship),
                  let join = Self.joinTable(of: relationship, in: entity, schema: registered) else {
                throw PGModelError(.unknownAttribute, "line \(link.line): \(link.entity).\(link.relationship) is no many-to-many relationship in schema '\(schemaName)' of the target; nothing was imported",
                                   model: link.entity, keyPath: link.relationship)
            }
            guard imported[join.sourceRoot]?[link.id] != nil, imported[join.destinationRoot]?[link.target] != nil else {
                throw PGModelError(.malformedMessage, "line \(link.line): a link of \(link.entity).\(link.relationship) between rows that are not both in the file")
            }
            try await execute(SQLStatement(
                sql: "INSERT INTO \(Naming.quoted(schemaName)).\(Naming.quoted(join.table)) (\(Naming.quoted(join.sourceColumn)), \(Naming.quoted(join.destinationColumn))) VALUES ($1, $2) ON CONFLICT DO NOTHING",
                binds: [.uuid(link.id), .uuid(link.target)]), on: connection, model: link.entity)
            report.links += 1
        }

        // Shares, by grantee name; only of records the file brought in.
        var grantees: [String: UUID?] = [:]
        for share in file.shares {
            guard let root = registered.rootEntity(of: share.entity), let entity = imported[root.name]?[share.id] else {
                throw PGModelError(.malformedMessage, "line \(share.line): a share of \(share.entity) \(share.id.uuidString.lowercased()), which is no row of the file")
            }
            let grantee: UUID?
            if let known = grantees[share.grantee] {
                grantee = known
            } else {
                let rows = try await query(SQLStatement(sql: "SELECT id FROM pgmodel.users WHERE name = $1 FOR SHARE", binds: [.string(share.grantee)]), on: connection)
                grantee = try rows.first?.decode(UUID.self)
                grantees[share.grantee] = .some(grantee)
            }
            guard let grantee, grantee != ownerID else {
                report.sharesSkipped += 1
                continue
            }
            try await execute(SQLStatement(sql: """
                INSERT INTO pgmodel.shares (schema_name, root_entity, entity, row_id, owner_id, grantee_id, permission, granted_by) \
                VALUES ($1, $2, $3, $4, $5, $6, $7, current_user) \
                ON CONFLICT (schema_name, root_entity, row_id, grantee_id) DO UPDATE SET entity = EXCLUDED.entity, owner_id = EXCLUDED.owner_id, \
                permission = EXCLUDED.permission, granted_by = EXCLUDED.granted_by, created_at = now()
                """, binds: [.string(schemaName), .string(root.name), .string(entity), .uuid(share.id), .uuid(ownerID), .uuid(grantee), .string(share.permission)]),
                on: connection)
            report.shares += 1
        }
        progress("shares: \(report.shares) imported, \(report.sharesSkipped) skipped")
        return report
    }

    /// Rows per insert statement of an import.
    static let importChunkSize = 500

    /// Inserts `rows` (one class hierarchy) with one statement; when PostgreSQL refuses it, finds the
    /// row it refused, so the error names its line.
    private func insert(_ rows: [UserImportFile.Row], into table: ImportTable, owner: UUID, on connection: EngineConnection) async throws {
        let statement = insertStatement(rows, into: table, owner: owner)
        guard rows.count > 1 else {
            do {
                try await execute(statement, on: connection, model: table.root.name)
            } catch let error as PGModelError {
                guard let row = rows.first else { throw error }
                if error.sqlState == "23505", error.constraint?.hasSuffix("pkey") ?? error.message.contains("pkey") { throw Self.existingRow(row) }
                throw PGModelError(error.code, "line \(row.line): \(row.entity) \(row.id.uuidString.lowercased()): \(error.message); nothing was imported",
                                   model: row.entity, keyPath: error.keyPath, sqlState: error.sqlState)
            }
            return
        }
        try await execute(SQLStatement(sql: "SAVEPOINT pgmodel_user_import"), on: connection)
        do {
            try await execute(statement, on: connection, model: table.root.name)
            try await execute(SQLStatement(sql: "RELEASE SAVEPOINT pgmodel_user_import"), on: connection)
        } catch let error as PGModelError {
            try await execute(SQLStatement(sql: "ROLLBACK TO SAVEPOINT pgmodel_user_import"), on: connection)
            // Row by row, the first one refused throws with its line; the rest are undone with the transaction.
            for row in rows { try await insert([row], into: table, owner: owner, on: connection) }
            throw error
        }
    }

    /// `INSERT … SELECT` of `rows` from three array parameters (ids, classes, the lines' text): values
    /// are read by PostgreSQL from each line's `values` object, for the registered columns the rows name.
    private func insertStatement(_ rows: [UserImportFile.Row], into table: ImportTable, owner: UUID) -> SQLStatement {
        var names = Set<String>()
        for row in rows { names.formUnion(row.nonNullColumns); names.formUnion(row.nullColumns) }
        let columns = names.sorted().compactMap { name in table.columns[name].map { (name: name, type: $0) } }
        let targets = (["id", "entity", "owner_id"] + columns.map(\.name)).map(Naming.quoted).joined(separator: ", ")
        let values = (["r.id", "r.entity", "$1"] + columns.map { UserExportSQL.importExpression(values: "j.v", key: $0.name, type: $0.type) }).joined(separator: ", ")
        return SQLStatement(
            sql: """
                INSERT INTO \(table.qualified) (\(targets)) SELECT \(values) \
                FROM unnest($2::uuid[], $3::text[], $4::text[]) AS r(id, entity, doc) CROSS JOIN LATERAL (SELECT r.doc::jsonb -> 'values' AS v) j
                """,
            binds: [.uuid(owner)],
            arrays: [SQLArray(.uuid, rows.map { .uuid($0.id) }), SQLArray(.text, rows.map { .string($0.entity) }), SQLArray(.text, rows.map { .string($0.text) })])
    }

    private static func existingRow(_ row: UserImportFile.Row) -> PGModelError {
        PGModelError(.uniqueViolation, "line \(row.line): \(row.entity) \(row.id.uuidString.lowercased()) already exists in the target (an id is never overwritten); nothing was imported",
                     model: row.entity)
    }
}
