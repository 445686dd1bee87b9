import Foundation
@_spi(PGModelInternals) import PGModelCore
@_spi(PGModelInternals) import PGModelSQL
import PostgresNIO

@_spi(PGModelInternals) extension PostgresStoreEngine {
    /// Checks `password` against the bcrypt hash in `pgmodel.users`; throws `authenticationFailed`
    /// without telling whether the user or the password was wrong.
    ///
    /// An unknown name is checked against a stand-in hash of the same cost, so both cases run one
    /// bcrypt and take the same time: response timing does not reveal which names exist. A right
    /// password whose stored hash has a lower cost than ``passwordHashCost`` is hashed again at that
    /// cost, so old hashes are upgraded at their users' next login. The password travels only as a
    /// bind parameter, in a transaction that keeps the statement logs quiet (``withQuietLogs(on:_:)``).
    public func authenticate(user: String, password: String, on connection: EngineConnection) async throws -> AuthenticatedUser {
        try await withQuietLogs(on: connection) {
            let rows = try await query(SQLStatement(
                sql: """
                    SELECT u.id, u.name, u.is_admin,
                           coalesce(crypt($2, coalesce(u.password_hash, $3)) = u.password_hash, false),
                           u.password_hash, u.session_epoch
                    FROM (SELECT 1) AS one LEFT JOIN pgmodel.users u ON u.name = $1
                    """,
                binds: [.string(user), .string(password), .string(Self.standInPasswordHash)]), on: connection)
            guard let row = rows.first,
                  case let (id?, name?, isAdmin?, true, hash?, epoch?) = try row.decode((UUID?, String?, Bool?, Bool, String?, Int64?).self)
            else {
                throw PGModelError(.authenticationFailed, "wrong user name or password")
            }
            if let cost = Self.bcryptCost(of: hash), cost < Self.passwordHashCost {
                // Only if nobody changed the password meanwhile. The same password at a higher cost keeps
                // the user's sessions: pgmodel.users' trigger reads this setting (sql/014_pgmodel_sessions.sql).
                try await execute(SQLStatement(
                    sql: "SELECT set_config('pgmodel.rehashing_user', $1, true)", binds: [.string(id.uuidString.lowercased())]), on: connection)
                try await execute(SQLStatement(
                    sql: "UPDATE pgmodel.users SET password_hash = crypt($2, gen_salt('bf', \(Self.passwordHashCost))) WHERE id = $1 AND password_hash = $3",
                    binds: [.uuid(id), .string(password), .string(hash)]), on: connection)
            }
            return AuthenticatedUser(id: id, name: name, isAdmin: isAdmin, sessionEpoch: epoch)
        }
    }

    /// The bcrypt cost new password hashes get (`gen_salt('bf', 10)`), and that older hashes are raised
    /// to at their user's next login: 2^10 rounds per login or password change (docs/ADMIN.md has the
    /// measured cost), which bounds a stolen hash table's guessing rate without making logins slow.
    /// `PGMODEL_BCRYPT_COST` (6 to 14) in the environment changes it, for machines that must log in
    /// many users at once with little CPU, such as a test run.
    public static let passwordHashCost: Int = {
        let requested = ProcessInfo.processInfo.environment["PGMODEL_BCRYPT_COST"].flatMap { Int($0) }
        guard let requested, standInPasswordHashes[requested] != nil else { return 10 }
        return requested
    }()

    /// The cost of a bcrypt hash (`$2a$10$…` → 10); nil for anything else.
    static func bcryptCost(of hash: String) -> Int? {
        let parts = hash.split(separator: "$", omittingEmptySubsequences: false)
        guard parts.count >= 4, parts[0].isEmpty, parts[1].hasPrefix("2"), parts[2].count == 2 else { return nil }
        return Int(parts[2])
    }

    /// `crypt('pgmodel: no such user', gen_salt('bf', passwordHashCost))`: the cost passwords get, so a
    /// check against it takes as long as a real one.
    static var standInPasswordHash: String { standInPasswordHashes[passwordHashCost] ?? standInPasswordHashes[10] ?? "" }

    /// `crypt('pgmodel: no such user', gen_salt('bf', cost))` for each cost ``passwordHashCost`` may take.
    static let standInPasswordHashes: [Int: String] = [
        6: "$2a$06$OfbJqrelmBAelrs1ry8HD.N5GIImcm7W0Pnp6vlJEg9zXrbsHjNta",
        7: "$2a$07$coTsIWgUyFo1ZecrNZdc.upFXc2tdq398dETUxqnAe5n9Qggm4DTu",
        8: "$2a$08$G..0D5RP6pQbPskjKIK/YOVsth5SgjwUi1S5z51r.8JwcNsfDdakK",
        9: "$2a$09$ycTKmjjF1iV319iVSH3iqO5QkbV/xI4d.vr86rD2Y/w2GlpfT5fzO",
        10: "$2a$10$Yee12pt9YG.6jvzrHSpvVuXMVa7uSQAmxlLCW225KavEzrElnTg1C",
        11: "$2a$11$8XZ4WPyRi5XJL6fy/MLM/eOREAjj5YQrnsHx2NwwAbteyqKb6GY8.",
        12: "$2a$12$A2Qlo95rtOCbVy9Te.i6vOwOg1.iNP8ijpthg.90S.AI9xn1T5dOG",
        13: "$2a$13$Jxz5d9w/aIEEa5d/.slo0.hm/uqZhW8BY4HIWYcBnwSxh6n8opmbe",
        14: "$2a$14$j/b3XAafL1cQ3p57Ku8bM.Mw166MCIDBzrHIstTkj70qoW6cQT4oi",
    ]

    /// The settings ``withQuietLogs(on:_:)`` turns off for its transaction, and their quiet values.
    static let quietLogSettings: [(name: String, value: String)] = [
        ("log_statement", "none"), ("log_min_duration_statement", "-1"), ("log_min_duration_sample", "-1"),
        ("log_transaction_sample_rate", "0"), ("log_parameter_max_length", "0"), ("log_parameter_max_length_on_error", "0"),
    ]

    /// Runs `body` (statements that carry a password as a bind parameter) in a transaction in which
    /// PostgreSQL logs no statement and no bind parameter: `SET LOCAL` of ``quietLogSettings``, each
    /// that this role may set (the `log_parameter_max_length_on_error` anyone may; the others need a
    /// superuser or, from PostgreSQL 15, `GRANT SET ON PARAMETER … TO` the service's role, which
    /// scripts/docker-initdb.sh and the embedded cluster give). Returns how many settings were quieted
    /// through `quieted`, for tests.
    package func withQuietLogs<T>(on connection: EngineConnection, quieted: ((Int) -> Void)? = nil,
                                  _ body: () async throws -> T) async throws -> T {
        // Inside an enclosing transaction (a migration's) the settings hold until it ends.
        if !isEnclosed { try await execute(SQLStatement(sql: "BEGIN"), on: connection) }
        do {
            let names = Self.quietLogSettings.map(\.name), values = Self.quietLogSettings.map(\.value)
            let rows = try await query(SQLStatement(
                sql: """
                    SELECT count(set_config(p.name, p.value, true))
                    FROM unnest($1::text[], $2::text[]) AS p(name, value) JOIN pg_settings s ON s.name = p.name
                    WHERE s.context = 'user' OR has_parameter_privilege(p.name, 'SET')
                    """,
                binds: [.string(Self.textArray(names)), .string(Self.textArray(values))]), on: connection)
            quieted?(try rows.first?.decode(Int.self) ?? 0)
            let result = try await body()
            if !isEnclosed { try await execute(SQLStatement(sql: "COMMIT"), on: connection) }
            return result
        } catch {
            if !isEnclosed { await rollback(on: connection) }
            throw error
        }
    }

    /// Creates a user with a bcrypt password hash (pgcrypto, cost ``passwordHashCost``). Throws
    /// `uniqueViolation` if the name is taken.
    public func createUser(name: String, password: String, isAdmin: Bool, on connection: EngineConnection) async throws -> AuthenticatedUser {
        guard !password.isEmpty else {
            throw PGModelError(.invalidField, "the password of user '\(name)' must not be empty")
        }
        do {
            return try await withQuietLogs(on: connection) {
                let rows = try await query(SQLStatement(
                    sql: "INSERT INTO pgmodel.users (name, password_hash, is_admin) VALUES ($1, crypt($2, gen_salt('bf', \(Self.passwordHashCost))), $3) RETURNING id",
                    binds: [.string(name), .string(password), .bool(isAdmin)]), on: connection)
                guard let row = rows.first else { throw PGModelError(.internalError, "creating user '\(name)' returned no id") }
                return AuthenticatedUser(id: try row.decode(UUID.self), name: name, isAdmin: isAdmin)
            }
        } catch let error as PGModelError where error.code == .uniqueViolation {
            throw PGModelError(.uniqueViolation, "user '\(name)' already exists", sqlState: error.sqlState)
        } catch let error as PGModelError where error.code == .constraintViolation {
            throw PGModelError(.invalidField, "user name '\(name)' must be 1 to 128 characters", sqlState: error.sqlState)
        }
    }

    /// Replaces a user's password (bcrypt, cost ``passwordHashCost``). Throws `notFound` for an unknown user.
    public func setPassword(user: String, password: String, on connection: EngineConnection) async throws {
        guard !password.isEmpty else {
            throw PGModelError(.invalidField, "the password of user '\(user)' must not be empty")
        }
        let rows = try await withQuietLogs(on: connection) {
            try await query(SQLStatement(
                sql: "UPDATE pgmodel.users SET password_hash = crypt($2, gen_salt('bf', \(Self.passwordHashCost))) WHERE name = $1 RETURNING id",
                binds: [.string(user), .string(password)]), on: connection)
        }
        if rows.isEmpty { throw PGModelError(.notFound, "user '\(user)' does not exist") }
    }

    /// Every user, by name.
    public func listUsers(on connection: EngineConnection) async throws -> [AuthenticatedUser] {
        let rows = try await query(SQLStatement(sql: "SELECT id, name, is_admin FROM pgmodel.users ORDER BY name"), on: connection)
        return try rows.map { row in
            let (id, name, isAdmin) = try row.decode((UUID, String, Bool).self)
            return AuthenticatedUser(id: id, name: name, isAdmin: isAdmin)
        }
    }
}
