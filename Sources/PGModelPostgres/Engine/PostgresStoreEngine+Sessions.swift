import Foundation
@_spi(PGModelInternals) import PGModelCore
@_spi(PGModelInternals) import PGModelSQL
import PostgresNIO

/// Live sessions and their revocation (`sql/014_pgmodel_sessions.sql`): what `pgmodel serve` records
/// of its logged-in connections, and what operators read and change through the CLI.
@_spi(PGModelInternals) extension PostgresStoreEngine {
    /// The current `session_epoch` of each of `ids` that is still a user; a missing id is a removed user.
    ///
    /// ```swift
    /// let epochs = try await engine.sessionEpochs(of: [alice.id], on: connection)
    /// ```
    public func sessionEpochs(of ids: [UUID], on connection: EngineConnection) async throws -> [UUID: Int64] {
        guard !ids.isEmpty else { return [:] }
        let rows = try await query(SQLStatement(
            sql: "SELECT id, session_epoch FROM pgmodel.users WHERE id = ANY ($1::uuid[])",
            binds: [.string(Self.textArray(ids.map { $0.uuidString.lowercased() }))]), on: connection)
        var epochs: [UUID: Int64] = [:]
        for row in rows {
            let (id, epoch) = try row.decode((UUID, Int64).self)
            epochs[id] = epoch
        }
        return epochs
    }

    /// Ends every session of `user` on every instance: bumps their `session_epoch`, which rings the
    /// doorbell (the same as `UPDATE pgmodel.users SET session_epoch = session_epoch + 1 WHERE name = …`).
    /// Returns how many of their sessions `pgmodel.session_list` showed. Throws `notFound` for an unknown user.
    ///
    /// ```swift
    /// let closed = try await engine.disconnectSessions(of: "alice", on: connection)
    /// ```
    public func disconnectSessions(of user: String, on connection: EngineConnection) async throws -> Int {
        let rows = try await query(SQLStatement(
            sql: """
                WITH bumped AS (UPDATE pgmodel.users SET session_epoch = session_epoch + 1 WHERE name = $1 RETURNING id)
                SELECT (SELECT count(*) FROM pgmodel.session_list s WHERE s.user_id = b.id) FROM bumped b
                """,
            binds: [.string(user)]), on: connection)
        guard let row = rows.first else { throw PGModelError(.notFound, "user '\(user)' does not exist") }
        return Int(try row.decode(Int64.self))
    }

    /// The sessions of live service instances (`pgmodel.session_list`), oldest login first; only
    /// `user`'s when given.
    ///
    /// ```swift
    /// for session in try await engine.listSessions(on: connection) { print(session.userName, session.clientAddress) }
    /// ```
    public func listSessions(user: String? = nil, on connection: EngineConnection) async throws -> [LiveSession] {
        let rows = try await query(SQLStatement(
            sql: """
                SELECT id, user_name, client_address, tls, logged_in_at, instance_id, instance_host, schema_name
                FROM pgmodel.session_list WHERE $1::text IS NULL OR user_name = $1 ORDER BY logged_in_at, id
                """,
            binds: [user.map { PGValue.string($0) } ?? PGValue.null]), on: connection)
        return try rows.map { row in
            let (id, name, address, tls, since, instance, host, schema) = try row.decode((UUID, String, String, Bool, Date, UUID, String, String).self)
            return LiveSession(id: id, userName: name, clientAddress: address, tls: tls, loggedInAt: since,
                               instanceID: instance, instanceHost: host, schemaName: schema)
        }
    }

    /// Registers (or, after the doorbell connection was replaced, updates) a service instance, naming
    /// `connection`'s backend so that a dead instance is recognisable in `pg_stat_activity`. Call it on
    /// the instance's doorbell connection.
    ///
    /// ```swift
    /// try await engine.registerInstance(id: instance, host: "web-1", version: "pgmodel/0.1", on: listenerConnection)
    /// ```
    public func registerInstance(id: UUID, host: String, version: String, on connection: EngineConnection) async throws {
        try await execute(SQLStatement(
            sql: """
                INSERT INTO pgmodel.service_instances (id, backend_pid, backend_start, host, version, schema_name)
                SELECT $1, pg_backend_pid(), a.backend_start, $2, $3, $4 FROM pg_stat_activity a WHERE a.pid = pg_backend_pid()
                ON CONFLICT (id) DO UPDATE SET backend_pid = EXCLUDED.backend_pid, backend_start = EXCLUDED.backend_start
                """,
            binds: [.uuid(id), .string(host), .string(version), .string(schemaName)]), on: connection)
    }

    /// Deletes the rows of instances whose doorbell backend is gone (their sessions go with them).
    ///
    /// ```swift
    /// try await engine.purgeDeadInstances(on: connection)   // at an instance's start
    /// ```
    public func purgeDeadInstances(on connection: EngineConnection) async throws {
        try await execute(SQLStatement(
            sql: "DELETE FROM pgmodel.service_instances i WHERE NOT pgmodel.instance_is_live(i.backend_pid, i.backend_start)"), on: connection)
    }

    /// Deletes an instance's row and its sessions' (a clean shutdown).
    ///
    /// ```swift
    /// try await engine.removeInstance(id: instanceID, on: connection)
    /// ```
    public func removeInstance(id: UUID, on connection: EngineConnection) async throws {
        try await execute(SQLStatement(sql: "DELETE FROM pgmodel.service_instances WHERE id = $1", binds: [.uuid(id)]), on: connection)
    }

    /// Records logged-in sessions of `instance`; rows already there stay (a login, or the re-recording of
    /// every live session after the instance's row was purged while its doorbell was down). Sessions of
    /// users removed meanwhile are skipped.
    ///
    /// ```swift
    /// try await engine.recordSessions([RecordedSession(id: sessionID, userID: alice.id, clientAddress: "203.0.113.7", tls: true)],
    ///                                 instance: instanceID, on: connection)
    /// ```
    public func recordSessions(_ sessions: [RecordedSession], instance: UUID, on connection: EngineConnection) async throws {
        guard !sessions.isEmpty else { return }
        try await execute(SQLStatement(
            sql: """
                INSERT INTO pgmodel.sessions (id, instance_id, user_id, client_address, tls, logged_in_at)
                SELECT s.id, $1, s.user_id, s.address, s.tls, s.since
                FROM unnest($2::uuid[], $3::uuid[], $4::text[], $5::boolean[], $6::timestamptz[]) AS s(id, user_id, address, tls, since)
                WHERE EXISTS (SELECT 1 FROM pgmodel.users u WHERE u.id = s.user_id)
                  AND EXISTS (SELECT 1 FROM pgmodel.service_instances i WHERE i.id = $1)
                ON CONFLICT (id) DO NOTHING
                """,
            binds: [.uuid(instance),
                    .string(Self.textArray(sessions.map { $0.id.uuidString.lowercased() })),
                    .string(Self.textArray(sessions.map { $0.userID.uuidString.lowercased() })),
                    .string(Self.textArray(sessions.map(\.clientAddress))),
                    .string("{" + sessions.map { $0.tls ? "t" : "f" }.joined(separator: ",") + "}"),
                    .string(Self.textArray(sessions.map { Self.timestampText($0.loggedInAt) }))]), on: connection)
    }

    /// Forgets ended sessions.
    ///
    /// ```swift
    /// try await engine.forgetSessions([sessionID], on: connection)
    /// ```
    public func forgetSessions(_ ids: [UUID], on connection: EngineConnection) async throws {
        guard !ids.isEmpty else { return }
        try await execute(SQLStatement(
            sql: "DELETE FROM pgmodel.sessions WHERE id = ANY ($1::uuid[])",
            binds: [.string(Self.textArray(ids.map { $0.uuidString.lowercased() }))]), on: connection)
    }

    /// `date` as a timestamptz literal PostgreSQL reads exactly (ISO 8601, microseconds, UTC).
    static func timestampText(_ date: Date) -> String {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        return formatter.string(from: date)
    }
}
