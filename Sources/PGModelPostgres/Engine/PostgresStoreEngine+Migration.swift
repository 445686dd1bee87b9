import Foundation
@_spi(PGModelInternals) import PGModelCore
@_spi(PGModelInternals) import PGModelSQL
import PostgresNIO

/// One row of `pgmodel.schema_versions`: a registration or a migrated version of a store.
///
/// ```swift
/// for record in try await engine.schemaHistory(on: connection) { print(record.version, record.appliedAt) }
/// ```
@_spi(PGModelInternals) public struct SchemaVersionRecord: Codable, Hashable, Sendable {
    /// The version (`major.minor.patch`).
    public var version: String
    /// sha256 of the version's entity descriptions; `nil` for a plain registration.
    public var fingerprint: String?
    /// The entities the row covers.
    public var entities: [String]
    /// The stages that led to this version, as recorded (`[{from, to, kind, milliseconds, rows}]` JSON).
    public var stages: String?
    /// When it was applied.
    public var appliedAt: Date
    /// The database role that applied it.
    public var appliedBy: String?
}

/// What one migration stage did, for the log and `pgmodel.schema_versions.stages`.
@_spi(PGModelInternals) public struct MigrationStageReport: Codable, Hashable, Sendable {
    public var from: String
    public var to: String
    public var kind: String
    public var milliseconds: Int
    /// Rows per entity after the stage.
    public var rows: [String: Int]

    public init(from: String, to: String, kind: String, milliseconds: Int, rows: [String: Int]) {
        self.from = from
        self.to = to
        self.kind = kind
        self.milliseconds = milliseconds
        self.rows = rows
    }
}

@_spi(PGModelInternals) extension PostgresStoreEngine {
    /// This engine for statements inside a transaction the caller holds open (a migration's): its
    /// transactions become savepoints.
    public func enclosed() -> PostgresStoreEngine {
        var copy = self
        copy.isEnclosed = true
        return copy
    }

    /// Opens a migration's transaction: `BEGIN`, then the store's schema lock, which every registration
    /// also takes, so two processes starting a new version one after the other migrate once.
    public func beginMigration(on connection: EngineConnection) async throws {
        try await execute(SQLStatement(sql: "BEGIN"), on: connection)
        do {
            try await execute(SQLStatement(sql: "SELECT pg_advisory_xact_lock(\(Self.bootstrapLock))"), on: connection)
        } catch {
            _ = try? await query(SQLStatement(sql: "ROLLBACK"), on: connection)
            throw error
        }
    }

    /// Commits the migration's transaction.
    public func commitMigration(on connection: EngineConnection) async throws {
        try await execute(SQLStatement(sql: "COMMIT"), on: connection)
    }

    /// Rolls the migration's transaction back: the store is as it was before ``beginMigration(on:)``.
    public func rollbackMigration(on connection: EngineConnection) async {
        _ = try? await query(SQLStatement(sql: "ROLLBACK"), on: connection)
    }

    /// Runs `body` inside a savepoint of the enclosing migration, so a failed call inside `willMigrate`
    /// (which the app may catch with `try?`) does not leave the whole transaction aborted.
    public func withSavepoint<T>(on connection: EngineConnection, _ body: () async throws -> T) async throws -> T {
        try await execute(SQLStatement(sql: "SAVEPOINT pgmodel_call"), on: connection)
        do {
            let result = try await body()
            try await execute(SQLStatement(sql: "RELEASE SAVEPOINT pgmodel_call"), on: connection)
            return result
        } catch {
            _ = try? await query(SQLStatement(sql: "ROLLBACK TO SAVEPOINT pgmodel_call"), on: connection)
            _ = try? await query(SQLStatement(sql: "RELEASE SAVEPOINT pgmodel_call"), on: connection)
            throw error
        }
    }

    /// The newest version recorded with a fingerprint for any of `entities`: the version a migration
    /// (or a versioned container) last left them at.
    public func recordedVersion(of entities: Set<String>, on connection: EngineConnection) async throws -> String? {
        let rows = try await query(SQLStatement(sql: """
            SELECT version FROM pgmodel.schema_versions \
            WHERE schema_name = $1 AND fingerprint IS NOT NULL AND entities && $2::text[] ORDER BY id DESC LIMIT 1
            """, binds: [.string(schemaName), .string(Self.textArray(entities.sorted()))]), on: connection)
        return try rows.first?.decode(String.self)
    }

    /// The newest version recorded with a fingerprint for each entity of this engine's schema.
    public func recordedVersions(on connection: EngineConnection) async throws -> [String: String] {
        let rows = try await query(SQLStatement(sql: """
            SELECT DISTINCT ON (e) e, version FROM pgmodel.schema_versions, unnest(entities) AS e \
            WHERE schema_name = $1 AND fingerprint IS NOT NULL ORDER BY e, id DESC
            """, binds: [.string(schemaName)]), on: connection)
        var versions: [String: String] = [:]
        for row in rows {
            let (entity, version) = try row.decode((String, String).self)
            versions[entity] = version
        }
        return versions
    }

    /// Throws `schema_version_mismatch` when `schema`'s entities were migrated to a newer version than
    /// `schema.version`: an app older than its store gets an error, not wrong data.
    public func checkVersion(of schema: SchemaDescription, on connection: EngineConnection) async throws {
        let names = Set(schema.entities.map(\.name))
        guard let recorded = try await recordedVersion(of: names, on: connection),
              SchemaVersionOrder.less(schema.version, recorded) else { return }
        throw PGModelError(.schemaVersionMismatch,
            "the store's \(names.sorted().joined(separator: ", ")) are at schema version \(recorded), newer than this app's \(schema.version); update the app",
            model: schema.entities.first?.name)
    }

    /// The statements one lightweight step from `old` to `new` runs, without running them (a dry run).
    public func migrationStatements(from old: SchemaDescription, to new: SchemaDescription,
                                    registered: SchemaDescription) throws -> [SQLStatement] {
        let renderer = try SQLRenderer(schema: new, schemaName: schemaName)
        let names = Set(new.entities.map(\.name))
        let secured = try SQLRenderer(schema: Self.afterMigration(registered, from: old, to: new), schemaName: schemaName)
        return try renderer.migrationStatements(from: old) + secured.securityStatements(tablesOf: names).map { SQLStatement(sql: $0) }
    }

    /// Moves the store's tables from `old` to `new` inside the open migration transaction: the DDL and
    /// data moves of ``SQLRenderer/migrationStatements(from:)``, row-level security for the new tables,
    /// and the registered entities. Returns the rows per entity afterwards.
    @discardableResult
    public func applyMigration(from old: SchemaDescription, to new: SchemaDescription, on connection: EngineConnection) async throws -> [String: Int] {
        try new.validate()
        let registered = try await loadSchema(on: connection)
        // A `willMigrate` save leaves its foreign keys' checks pending until commit, and PostgreSQL alters
        // no table with pending trigger events: check them now, and defer them again for `didMigrate`.
        try await execute(SQLStatement(sql: "SET CONSTRAINTS ALL IMMEDIATE"), on: connection)
        for statement in try migrationStatements(from: old, to: new, registered: registered) {
            try await execute(statement, on: connection)
        }
        try await execute(SQLStatement(sql: "SET CONSTRAINTS ALL DEFERRED"), on: connection)
        let removed = Set(old.entities.map(\.name)).subtracting(new.entities.map(\.name))
        if !removed.isEmpty {
            try await execute(SQLStatement(sql: "DELETE FROM pgmodel.entities WHERE schema_name = $1 AND name = ANY($2::text[])",
                                           binds: [.string(schemaName), .string(Self.textArray(removed.sorted()))]), on: connection)
        }
        for entity in new.entities {
            let json = String(decoding: try Self.encoder.encode(entity), as: UTF8.self)
            try await execute(SQLStatement(sql: """
                INSERT INTO pgmodel.entities (schema_name, name, table_name, description) VALUES ($1, $2, $3, $4::jsonb) \
                ON CONFLICT (schema_name, name) DO UPDATE SET table_name = EXCLUDED.table_name, description = EXCLUDED.description, updated_at = now() \
                WHERE pgmodel.entities.description IS DISTINCT FROM EXCLUDED.description
                """, binds: [.string(schemaName), .string(entity.name), .string(entity.tableName), .string(json)]), on: connection)
        }
        return try await rowCounts(of: new, on: connection)
    }

    /// Creates `schema` in a store that holds none of its entities yet (a new store of a versioned app).
    public func createVersion(_ schema: SchemaDescription, on connection: EngineConnection) async throws {
        try await applyMigration(from: SchemaDescription(entities: []), to: schema, on: connection)
    }

    /// Rows per entity of `schema` (each class counted on its own).
    public func rowCounts(of schema: SchemaDescription, on connection: EngineConnection) async throws -> [String: Int] {
        var counts: [String: Int] = [:]
        let renderer = try SQLRenderer(schema: schema, schemaName: schemaName)
        for root in schema.entities where root.superentity == nil {
            let rows = try await query(SQLStatement(sql: "SELECT \"entity\", count(*) FROM \(renderer.qualifiedTable(named: root.tableName)) GROUP BY \"entity\""), on: connection)
            for row in rows {
                let (entity, count) = try row.decode((String, Int64).self)
                counts[entity] = Int(count)
            }
        }
        for entity in schema.entities where counts[entity.name] == nil { counts[entity.name] = 0 }
        return counts
    }

    /// Records that the plan's entities now have `schema`'s shape at `schema.version`.
    public func recordVersion(_ schema: SchemaDescription, entities: Set<String>, stages: [MigrationStageReport],
                              on connection: EngineConnection) async throws {
        let description = String(decoding: try Self.encoder.encode(schema), as: UTF8.self)
        let shape = String(decoding: try Self.encoder.encode(schema.entities.map(\.shape).sorted { $0.name < $1.name }), as: UTF8.self)
        let stageJSON = String(decoding: try Self.encoder.encode(stages), as: UTF8.self)
        try await execute(SQLStatement(sql: """
            INSERT INTO pgmodel.schema_versions (schema_name, version, description, fingerprint, entities, stages) \
            VALUES ($1, $2, $3::jsonb, encode(sha256(convert_to($4, 'UTF8')), 'hex'), $5::text[], $6::jsonb)
            """, binds: [.string(schemaName), .string(schema.version), .string(description), .string(shape),
                         .string(Self.textArray(entities.sorted())), .string(stageJSON)]), on: connection)
    }

    /// Every version row of this engine's schema, oldest first: what `pgmodel schema` shows.
    public func schemaHistory(on connection: EngineConnection) async throws -> [SchemaVersionRecord] {
        let rows = try await query(SQLStatement(sql: """
            SELECT version, fingerprint, coalesce(entities, ARRAY(SELECT jsonb_array_elements(description->'entities')->>'name')), \
            stages::text, applied_at, applied_by FROM pgmodel.schema_versions WHERE schema_name = $1 ORDER BY id
            """, binds: [.string(schemaName)]), on: connection)
        return try rows.map { row in
            let (version, fingerprint, entities, stages, appliedAt, appliedBy) = try row.decode((String, String?, [String], String?, Date, String?).self)
            return SchemaVersionRecord(version: version, fingerprint: fingerprint, entities: entities, stages: stages,
                                       appliedAt: appliedAt, appliedBy: appliedBy)
        }
    }

    /// The registered schema after a migration from `old` to `new`: `old`'s entities that `new` dropped
    /// are gone, `new`'s are in.
    static func afterMigration(_ registered: SchemaDescription, from old: SchemaDescription, to new: SchemaDescription) -> SchemaDescription {
        let removed = Set(old.entities.map(\.name)).subtracting(new.entities.map(\.name))
        return SchemaDescription(entities: registered.entities.filter { !removed.contains($0.name) }, version: registered.version).merging(new)
    }
}
