import Foundation
import PGModelCore
import PGModelSQL
import PostgresNIO

extension PostgresStoreEngine {
    /// Checks `password` against the bcrypt hash in `pgmodel.users`; throws `authenticationFailed`
    /// without telling whether the user or the password was wrong.
    ///
    /// An unknown name is checked against a stand-in hash of the same cost, so both cases run one
    /// bcrypt and take the same time: response timing does not reveal which names exist.
    public func authenticate(user: String, password: String, on connection: PostgresConnection) async throws -> AuthenticatedUser {
        let rows = try await query(SQLStatement(
            sql: """
                SELECT u.id, u.name, u.is_admin,
                       coalesce(crypt($2, coalesce(u.password_hash, $3)) = u.password_hash, false)
                FROM (SELECT 1) AS one LEFT JOIN pgmodel.users u ON u.name = $1
                """,
            binds: [.string(user), .string(password), .string(Self.standInPasswordHash)]), on: connection)
        guard let row = rows.first,
              case let (id?, name?, isAdmin?, true) = try row.decode((UUID?, String?, Bool?, Bool).self)
        else {
            throw PGModelError(.authenticationFailed, "wrong user name or password")
        }
        return AuthenticatedUser(id: id, name: name, isAdmin: isAdmin)
    }

    /// `crypt('pgmodel: no such user', gen_salt('bf'))`: the cost (06) of `gen_salt('bf')`, which new
    /// passwords get, so a check against it takes as long as a real one.
    static let standInPasswordHash = "$2a$06$z0OagqtqZMnQkr88Gn3YxeTfl1JL249nIexZulCLMooLU8.7Zvbli"

    /// Creates a user with a bcrypt password hash (pgcrypto). Throws `uniqueViolation` if the name is taken.
    public func createUser(name: String, password: String, isAdmin: Bool, on connection: PostgresConnection) async throws -> AuthenticatedUser {
        guard !password.isEmpty else {
            throw PGModelError(.invalidField, "the password of user '\(name)' must not be empty")
        }
        do {
            let rows = try await query(SQLStatement(
                sql: "INSERT INTO pgmodel.users (name, password_hash, is_admin) VALUES ($1, crypt($2, gen_salt('bf')), $3) RETURNING id",
                binds: [.string(name), .string(password), .bool(isAdmin)]), on: connection)
            guard let row = rows.first else { throw PGModelError(.internalError, "creating user '\(name)' returned no id") }
            return AuthenticatedUser(id: try row.decode(UUID.self), name: name, isAdmin: isAdmin)
        } catch let error as PGModelError where error.code == .uniqueViolation {
            throw PGModelError(.uniqueViolation, "user '\(name)' already exists", sqlState: error.sqlState)
        } catch let error as PGModelError where error.code == .constraintViolation {
            throw PGModelError(.invalidField, "user name '\(name)' must be 1 to 128 characters", sqlState: error.sqlState)
        }
    }

    /// Replaces a user's password. Throws `notFound` for an unknown user.
    public func setPassword(user: String, password: String, on connection: PostgresConnection) async throws {
        guard !password.isEmpty else {
            throw PGModelError(.invalidField, "the password of user '\(user)' must not be empty")
        }
        let rows = try await query(SQLStatement(
            sql: "UPDATE pgmodel.users SET password_hash = crypt($2, gen_salt('bf')) WHERE name = $1 RETURNING id",
            binds: [.string(user), .string(password)]), on: connection)
        if rows.isEmpty { throw PGModelError(.notFound, "user '\(user)' does not exist") }
    }

    /// Every user, by name.
    public func listUsers(on connection: PostgresConnection) async throws -> [AuthenticatedUser] {
        let rows = try await query(SQLStatement(sql: "SELECT id, name, is_admin FROM pgmodel.users ORDER BY name"), on: connection)
        return try rows.map { row in
            let (id, name, isAdmin) = try row.decode((UUID, String, Bool).self)
            return AuthenticatedUser(id: id, name: name, isAdmin: isAdmin)
        }
    }
}
