import Foundation
@_spi(PGModelInternals) import PGModelCore
@_spi(PGModelInternals) import PGModelSQL
import PostgresNIO

@_spi(PGModelInternals) extension PostgresStoreEngine {
    /// Removes a user in one transaction: the rows they own in every registered entity table (every
    /// store of `pgmodel.entities`) are deleted, or handed over to another user together with the shares
    /// the removed user granted on them; shares granted to the removed user go away; then their
    /// `pgmodel.users` row, whose trigger makes every instance close their sessions. Throws `notFound`
    /// for an unknown user, `invalidField` for handing over to oneself, and `uniqueViolation` naming the
    /// entity when the rows collide with the other user's on a value unique per owner; then nothing has
    /// changed. `progress` hears one line per table as it is done. Runs as the tables' owner (the CLI),
    /// writes no history (like a hand edit) and does not run delete rules: foreign keys set references to
    /// the deleted rows to NULL.
    ///
    /// ```swift
    /// let report = try await engine.removeUser("alice", .handOver(to: "bob"), progress: { print($0) }, on: connection)
    /// ```
    public func removeUser(_ name: String, _ removal: UserRemoval, progress: (String) -> Void = { _ in },
                           on connection: EngineConnection) async throws -> UserRemovalReport {
        // It locks every model table of the database: DDL running meanwhile (a store dropped or migrated)
        // can deadlock with it, and PostgreSQL then undoes one side. The whole removal is safe to run
        // again, so a deadlock or serialization failure starts it over, a few times.
        var attempt = 0
        while true {
            attempt += 1
            try await execute(SQLStatement(sql: "BEGIN"), on: connection)
            do {
                let report = try await removeUserInTransaction(name, removal, progress: progress, on: connection)
                try await execute(SQLStatement(sql: "COMMIT"), on: connection)
                return report
            } catch let error as PGModelError where (error.sqlState == "40P01" || error.sqlState == "40001") && attempt < 5 {
                await rollback(on: connection)
                try await Task.sleep(for: .milliseconds(50 * attempt))
            } catch {
                await rollback(on: connection)
                throw error
            }
        }
    }

    private func removeUserInTransaction(_ name: String, _ removal: UserRemoval, progress: (String) -> Void,
                                         on connection: EngineConnection) async throws -> UserRemovalReport {
        guard let userID = try await lockedUserID(named: name, on: connection) else {
            throw PGModelError(.notFound, "user '\(name)' does not exist")
        }
        var heirID: UUID?
        var heirName: String?
        if case .handOver(let other) = removal {
            guard other != name else {
                throw PGModelError(.invalidField, "user '\(name)' cannot hand their rows over to themselves")
            }
            guard let id = try await lockedUserID(named: other, on: connection) else {
                throw PGModelError(.notFound, "user '\(other)' does not exist")
            }
            heirID = id
            heirName = other
        }
        let tableRows = try await query(SQLStatement(sql: """
            SELECT e.schema_name, e.table_name, array_agg(e.name ORDER BY e.name)
            FROM pgmodel.entities e
            WHERE to_regclass(format('%I.%I', e.schema_name, e.table_name)) IS NOT NULL
            GROUP BY e.schema_name, e.table_name ORDER BY e.schema_name, e.table_name
            """), on: connection)
        var tables: [UserRemovalReport.Table] = []
        for row in tableRows {
            let (schema, table, entities) = try row.decode((String, String, [String]).self)
            let qualified = Naming.quoted(schema) + "." + Naming.quoted(table)
            // A store dropped since the listing (its tables are gone) has no rows left to move: skip it.
            try await execute(SQLStatement(sql: "SAVEPOINT pgmodel_user_removal"), on: connection)
            let rows: [PostgresRow]
            do {
                if let heirID {
                    rows = try await query(SQLStatement(
                        sql: "WITH moved AS (UPDATE \(qualified) SET \"owner_id\" = $2 WHERE \"owner_id\" = $1 RETURNING 1) SELECT count(*) FROM moved",
                        binds: [.uuid(userID), .uuid(heirID)]), on: connection)
                } else {
                    rows = try await query(SQLStatement(
                        sql: "WITH gone AS (DELETE FROM \(qualified) WHERE \"owner_id\" = $1 RETURNING 1) SELECT count(*) FROM gone",
                        binds: [.uuid(userID)]), on: connection)
                }
                try await execute(SQLStatement(sql: "RELEASE SAVEPOINT pgmodel_user_removal"), on: connection)
            } catch let error as PGModelError where error.sqlState == "42P01" || error.sqlState == "3F000" {
                try await execute(SQLStatement(sql: "ROLLBACK TO SAVEPOINT pgmodel_user_removal"), on: connection)
                continue
            } catch let error as PGModelError where error.code == .uniqueViolation && heirID != nil {
                throw PGModelError(
                    .uniqueViolation,
                    "cannot hand the rows of '\(name)' over to '\(heirName ?? "")': \(entities.joined(separator: ", ")) (table \(schema).\(table)) has a value unique per owner that both users hold; nothing was changed",
                    model: entities.first, sqlState: error.sqlState)
            }
            let count = Int(try rows.first?.decode(Int64.self) ?? 0)
            tables.append(UserRemovalReport.Table(schema: schema, table: table, entities: entities, rows: count))
            progress("\(schema).\(table) (\(entities.joined(separator: ", "))): \(count) row\(count == 1 ? "" : "s") \(heirID == nil ? "deleted" : "handed over")")
        }
        if let heirID {
            // The heir's shares of records now theirs would be shares with themselves.
            try await execute(SQLStatement(
                sql: "DELETE FROM pgmodel.shares WHERE owner_id = $1 AND grantee_id = $2",
                binds: [.uuid(userID), .uuid(heirID)]), on: connection)
            try await execute(SQLStatement(
                sql: "UPDATE pgmodel.shares SET owner_id = $2 WHERE owner_id = $1",
                binds: [.uuid(userID), .uuid(heirID)]), on: connection)
        }
        // Shares granted to the user, and any left of theirs, go with the user row (ON DELETE CASCADE);
        // so do their rows in pgmodel.sessions. The trigger rings every instance to close the sessions.
        try await execute(SQLStatement(sql: "DELETE FROM pgmodel.users WHERE id = $1", binds: [.uuid(userID)]), on: connection)
        return UserRemovalReport(user: name, handedOverTo: heirName, tables: tables)
    }

    private func lockedUserID(named name: String, on connection: EngineConnection) async throws -> UUID? {
        let rows = try await query(SQLStatement(sql: "SELECT id FROM pgmodel.users WHERE name = $1 FOR UPDATE", binds: [.string(name)]), on: connection)
        return try rows.first?.decode(UUID.self)
    }
}
