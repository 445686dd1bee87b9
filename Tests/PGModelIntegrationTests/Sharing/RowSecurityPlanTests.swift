import Foundation
@_spi(PGModelInternals) import PGModelCore
@_spi(PGModelInternals) import PGModelPostgres
@_spi(PGModelInternals) import PGModelSQL
import PostgresNIO
import Testing

/// Row-level security must not cost a plain user a scan of everyone's rows: their policy is
/// `owner_id = me OR id = ANY (shared)`, which PostgreSQL answers from the `owner_id` and primary-key
/// indexes, and admins have a role and policy of their own (`pgmodel_admin`).
@Suite("Row-level security plans", .serialized)
struct RowSecurityPlanTests {
    static let owners = 50
    static let rowsPerOwner = 400

    @Test("a user's fetch among 50 owners' rows reads through the indexes; admins see all; the admin role shows a non-admin nothing")
    func userFetchUsesIndexes() async throws {
        let alice = try await ServerTestHarness.makeUser("plan_alice")
        let root = try await ServerTestHarness.makeUser("plan_root", admin: true)
        let schemaName = TestDatabase.uniqueSchema("rlsplan")
        let entity = ServerTestHarness.uniqueEntity("Entry")
        let schema = try JSONDecoder().decode(SchemaDescription.self, from: Data(try RawProtocolTests.schemaJSON(entity).utf8))
        let table = "\(Naming.quoted(schemaName)).\(Naming.quoted(try #require(schema.entities.first).tableName))"
        try await ServerTestHarness.withDatabase(schemaName: schemaName) { engine, connection in
            try await engine.prepare(schema, on: connection)
            // 49 other owners (users who cannot log in: no password matches '!') and alice.
            let prefix = "plan_owner_\(ServerTestHarness.uniqueSuffix())_"
            try await Self.run(connection, """
                INSERT INTO pgmodel.users (id, name, password_hash)
                SELECT md5(\(prefix) || i)::uuid, \(prefix) || i, '!' FROM generate_series(1, \(Self.owners - 1)) AS i
                """)
            try await Self.run(connection, """
                INSERT INTO \(unescaped: table) ("id", "entity", "owner_id", "name", "rank")
                SELECT gen_random_uuid(), \(entity), CASE WHEN i % \(Self.owners) = 0 THEN \(alice.id) ELSE md5(\(prefix) || (i % \(Self.owners)))::uuid END,
                       'row ' || i, i
                FROM generate_series(1, \(Self.owners * Self.rowsPerOwner)) AS i
                """)
            try await Self.run(connection, "ANALYZE \(unescaped: table)")

            let plan = try await Self.asUser(alice.id, role: SQLRenderer.applicationRole, on: connection) {
                try await Self.explain("SELECT * FROM \(table) ORDER BY \"rank\" DESC LIMIT 20", on: connection)
            }
            #expect(!plan.contains("Seq Scan"), "a user's fetch scanned the table:\n\(plan)")
            #expect(plan.contains("owner_id_idx"))

            let counts = try await Self.asUser(alice.id, role: SQLRenderer.applicationRole, on: connection) {
                try await Self.count(table, on: connection)
            }
            #expect(counts == Self.rowsPerOwner)
            let all = try await Self.asUser(root.id, role: SQLRenderer.adminRole, on: connection) {
                try await Self.count(table, on: connection)
            }
            #expect(all == Self.owners * Self.rowsPerOwner)
            // The admin role decides nothing by itself: pgmodel.users does.
            let none = try await Self.asUser(alice.id, role: SQLRenderer.adminRole, on: connection) {
                try await Self.count(table, on: connection)
            }
            #expect(none == 0)
            try await engine.dropSchema(on: connection)
        }
    }

    @Test("policies made by an older PGModel are replaced when the schema is prepared again")
    func olderPoliciesAreReplaced() async throws {
        let schemaName = TestDatabase.uniqueSchema("rlsold")
        let entity = ServerTestHarness.uniqueEntity("Entry")
        let schema = try JSONDecoder().decode(SchemaDescription.self, from: Data(try RawProtocolTests.schemaJSON(entity).utf8))
        let tableName = try #require(schema.entities.first).tableName
        let table = "\(Naming.quoted(schemaName)).\(Naming.quoted(tableName))"
        try await ServerTestHarness.withDatabase(schemaName: schemaName) { engine, connection in
            try await engine.prepare(schema, on: connection)
            // What PGModel before the admin role left: the admin arm in the user's policy, no comments.
            for statement in [
                "DROP POLICY \"pgmodel_app_select\" ON \(table)",
                "CREATE POLICY \"pgmodel_app_select\" ON \(table) FOR SELECT TO pgmodel_app USING (current_user = 'pgmodel_app' AND (\"owner_id\" = (SELECT \"pgmodel\".\"current_user_id\"()) OR (SELECT \"pgmodel\".\"current_user_is_admin\"())))",
                "DROP POLICY \"pgmodel_admin_all\" ON \(table)",
                "COMMENT ON FUNCTION \(Naming.quoted(schemaName)).pgmodel_share_audience(text[], uuid[]) IS NULL",
            ] {
                try await Self.run(connection, PostgresQuery(unsafeSQL: statement))
            }
            try await engine.prepare(schema, on: connection)
            let rows = try await Self.run(connection, """
                SELECT polname, pg_get_expr(polqual, polrelid) FROM pg_policy
                WHERE polrelid = \(table)::regclass AND polname IN ('pgmodel_app_select', 'pgmodel_admin_all') ORDER BY polname
                """)
            var policies: [String: String] = [:]
            for try await (name, qual) in rows.decode((String, String).self) { policies[name] = qual }
            #expect(policies.keys.sorted() == ["pgmodel_admin_all", "pgmodel_app_select"])
            #expect(policies["pgmodel_app_select"].map { !$0.contains("current_user_is_admin") } == true)
            try await engine.dropSchema(on: connection)
        }
    }

    /// Runs `body` in a transaction as `role` with `pgmodel.user_id` set, as the service does; rolled back.
    static func asUser<T>(_ user: UUID, role: String, on connection: EngineConnection, _ body: () async throws -> T) async throws -> T {
        try await Self.run(connection, "BEGIN")
        do {
            try await Self.run(connection,
                "SELECT set_config('role', \(role), true), set_config('pgmodel.user_id', \(user.uuidString.lowercased()), true)")
            let result = try await body()
            try await Self.run(connection, "ROLLBACK")
            return result
        } catch {
            _ = try? await connection.connection.query("ROLLBACK", logger: ServerTestHarness.logger)
            throw error
        }
    }

    /// The plan PostgreSQL picks for `sql` as a prepared statement's generic plan (what the service's
    /// repeated statements get), as text.
    static func explain(_ sql: String, on connection: EngineConnection) async throws -> String {
        try await Self.run(connection, "SET LOCAL plan_cache_mode = force_generic_plan")
        let rows = try await Self.run(connection, "EXPLAIN \(unescaped: sql)")
        var lines: [String] = []
        for try await line in rows.decode(String.self) { lines.append(line) }
        return lines.joined(separator: "\n")
    }

    struct QueryFailed: Error, CustomStringConvertible { var description: String }

    /// `query` on `connection`; a failure names PostgreSQL's message (PSQLError hides it by default).
    @discardableResult
    static func run(_ connection: EngineConnection, _ query: PostgresQuery) async throws -> PostgresRowSequence {
        do {
            return try await connection.connection.query(query, logger: ServerTestHarness.logger)
        } catch let error as PSQLError {
            throw QueryFailed(description: "\(error.serverInfo?[.sqlState] ?? "") \(error.serverInfo?[.message] ?? String(reflecting: error))")
        }
    }

    static func count(_ table: String, on connection: EngineConnection) async throws -> Int {
        let rows = try await Self.run(connection, "SELECT count(*)::int8 FROM \(unescaped: table)")
        for try await n in rows.decode(Int64.self) { return Int(n) }
        return -1
    }
}
