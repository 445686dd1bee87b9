import Foundation
import Logging
@_spi(PGModelInternals) import PGModelCore
@_spi(PGModelInternals) import PGModelSQL
import PostgresNIO

/// Whose statements a pooled PostgreSQL connection runs: the session-level role, `pgmodel.user_id` and
/// `statement_timeout` it is set to. Every lease of ``ConnectionPool`` states the scope it needs; the pool
/// remembers each connection's scope and sets it (one statement, ``apply(on:logger:)``) only when it
/// differs, so a user's repeated requests on the same connection cost no extra round trip.
///
/// Security stays in PostgreSQL: a user's scope runs as `pgmodel_app` (or `pgmodel_admin`) with their id,
/// under row-level security; ``trusted`` is the login role with no user id, the direct store's and the
/// service's own work (logins, schema, migrations, listener).
///
/// ```swift
/// let scope = engine.scope(for: .user(alice))
/// try await scope.apply(on: connection, logger: logger)   // the session now runs as alice
/// ```
@_spi(PGModelInternals) public struct ConnectionScope: Sendable, Hashable, CustomStringConvertible {
    /// The service user whose rows the session sees; `nil` for ``trusted``.
    public let userID: UUID?
    /// The role the session takes (`pgmodel_app`, `pgmodel_admin`); `nil` keeps the login role.
    public let role: String?
    /// The session's `statement_timeout` (`"250ms"`); `nil` is the value the connection started with.
    public let statementTimeout: String?

    /// The login role itself, no user id, the default statement timeout: what a new connection is.
    public static let trusted = ConnectionScope(userID: nil, role: nil, statementTimeout: nil)

    /// A service user's scope.
    public init(userID: UUID, isAdmin: Bool, statementTimeout: Duration?) {
        self.init(userID: userID, isAdmin: isAdmin, statementTimeoutSetting: statementTimeout.map(Self.milliseconds))
    }

    /// A service user's scope with PostgreSQL's form of its statement timeout (``milliseconds(_:)``), made once.
    init(userID: UUID, isAdmin: Bool, statementTimeoutSetting: String?) {
        self.init(userID: userID, role: isAdmin ? SQLRenderer.adminRole : SQLRenderer.applicationRole,
                  statementTimeout: statementTimeoutSetting)
    }

    private init(userID: UUID?, role: String?, statementTimeout: String?) {
        self.userID = userID
        self.role = role
        self.statementTimeout = statementTimeout
    }

    public var description: String {
        guard let userID else { return "trusted" }
        return "\(role ?? "login role") as \(userID.uuidString.lowercased())"
    }

    /// Sets this scope on `connection` at session level, in one statement. It must run outside any
    /// transaction: a session-level setting made inside one is undone if that transaction rolls back.
    ///
    /// Going back to ``trusted`` resets the role (`'none'` is the login role), clears the user id
    /// (`pgmodel.current_user_id()` reads `''` as NULL) and restores the connection's own
    /// `statement_timeout` (`pg_settings.reset_val`: what `RESET` would give).
    func apply(on connection: EngineConnection, logger: Logger) async throws {
        try await PostgresStoreEngine(logger: logger).execute(statement, on: connection)
    }

    /// The statement ``apply(on:logger:)`` sends.
    var statement: SQLStatement {
        SQLStatement(sql: """
            SELECT set_config('role', $1, false), set_config('pgmodel.user_id', $2, false), \
            set_config('statement_timeout', coalesce($3, (SELECT reset_val FROM pg_settings WHERE name = 'statement_timeout')), false)
            """, binds: [.string(role ?? "none"), .string(userID?.uuidString.lowercased() ?? ""), statementTimeout.map(PGValue.string) ?? .null])
    }

    /// `"250ms"`: PostgreSQL's form of `duration`, at least one millisecond (0 would mean no limit).
    static func milliseconds(_ duration: Duration) -> String {
        let parts = duration.components
        return "\(max(1, parts.seconds * 1000 + parts.attoseconds / 1_000_000_000_000_000))ms"
    }
}
