import NIOCore
@_spi(PGModelInternals) import PGModelCore
import PostgresNIO

/// The connection one engine call runs on, with everything the call knows about it: the scope the
/// pool vouches its session is in, the deadline's watch every statement is awaited through, and the
/// request's budget. The engine reads nothing from its task: what a call may do travels here.
///
/// The pool makes these for its leases (``ConnectionPool/withConnection(scope:deadline:budget:operation:_:)``);
/// anything else wraps a connection of its own, which vouches for no scope and has no deadline:
///
/// ```swift
/// let connection = try await PostgresConnection.connect(on: eventLoop, configuration: configuration, id: 1, logger: logger)
/// let rows = try await engine.fetch(FetchRequest(entity: "Trip"), in: schema, as: .trusted, on: EngineConnection(connection))
/// ```
@_spi(PGModelInternals) public struct EngineConnection: Sendable {
    /// The PostgreSQL connection itself.
    public let connection: PostgresConnection
    /// The scope the pool vouches this connection's session is in at session level, so the engine
    /// skips its per-transaction `set_config` (and a lone read its BEGIN/COMMIT). Settable only inside
    /// this module: vouching for a connection that is not in the scope would run a user's statements
    /// as the login role.
    let sessionScope: ConnectionScope?
    /// Whether fetches may run as named prepared statements on this connection: not behind a pooler in
    /// transaction mode, where a statement prepared in one transaction is gone (or another client's)
    /// in the next. Connections of the caller's own keep them.
    var usesNamedStatements = true
    /// The watch of the deadline the call runs under (see ``StatementWatch``); `nil` without one.
    let watch: StatementWatch?
    /// What the request may read and where large results are decoded.
    public var budget: RequestBudget
    /// Records every statement sent through this value: the round trips tests count.
    public var statementLog: StatementLog?
    /// Where each statement's span goes; nil when tracing is off (the pool sets it on its leases).
    package var statementTracing: StatementTracing?

    /// A connection of the caller's own: no scope vouched for, no deadline.
    public init(_ connection: PostgresConnection, budget: RequestBudget = RequestBudget(), statementLog: StatementLog? = nil) {
        self.init(connection, sessionScope: nil, watch: nil, budget: budget, statementLog: statementLog)
    }

    init(_ connection: PostgresConnection, sessionScope: ConnectionScope?, watch: StatementWatch?,
         budget: RequestBudget, statementLog: StatementLog?) {
        self.connection = connection
        self.sessionScope = sessionScope
        self.watch = watch
        self.budget = budget
        self.statementLog = statementLog
    }

    /// The connection's event loop.
    public var eventLoop: any EventLoop { connection.eventLoop }

    /// Whether the connection's session is known to be in `scope` already.
    func holds(_ scope: ConnectionScope) -> Bool { sessionScope == scope }

    /// The same connection under another budget.
    public func with(budget: RequestBudget) -> EngineConnection {
        var copy = self
        copy.budget = budget
        return copy
    }
}
