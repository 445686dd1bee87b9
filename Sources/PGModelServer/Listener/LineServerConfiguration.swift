import Foundation
import Tracing
import Metrics
@_spi(PGModelInternals) import PGModelWire

/// How a ``LineServer`` listens and where its database is.
///
/// ```swift
/// var configuration = LineServerConfiguration(databaseURL: "postgres://pgmodel:pgmodel@127.0.0.1:5432/pgmodel")
/// configuration.port = 0   // any free port; ask the server which one with `listeningPort()`
/// ```
public struct LineServerConfiguration: Sendable, CustomStringConvertible {
    /// The address to listen on; `127.0.0.1` keeps the service local, `0.0.0.0` opens it to the network.
    public var host: String
    /// The TCP port; `0` picks a free one.
    public var port: Int
    /// `postgres://user:password@host:port/database?schema=name`.
    public var databaseURL: String
    /// Where the connections that need a session of their own go when ``databaseURL`` reaches a pooler in
    /// transaction mode (`?pgmodel_pooling=transaction`): the doorbell's `LISTEN` connection and
    /// migrations. PostgreSQL itself or a pooler in session mode, on the same database; `nil` is
    /// ``databaseURL`` (a service with no pooler in between needs no other).
    ///
    /// ```swift
    /// var configuration = LineServerConfiguration(databaseURL: "postgres://svc:pw@127.0.0.1:6432/app?pgmodel_pooling=transaction")
    /// configuration.directDatabaseURL = "postgres://svc:pw@127.0.0.1:5432/app"
    /// ```
    public var directDatabaseURL: String?
    /// Streaming standbys of the database (`postgres://` URLs, same database) that serve fetches, counts
    /// and id reads once they have replayed the reading client's newest save; everything else goes to
    /// ``databaseURL``. How long a read waits for a standby is the database URL's `pgmodel_replica_wait`.
    ///
    /// ```swift
    /// configuration.replicaURLs = ["postgres://svc:pw@standby-1:5432/app"]
    /// ```
    public var replicaURLs: [String] = []
    /// The PostgreSQL schema of the model tables; `nil` takes the URL's `schema` parameter, else `public`.
    public var schemaName: String?
    /// The longest request line, in bytes, not counting the `"\n"`.
    public var maxLineBytes: Int
    /// Connections beyond this many are answered with `too_many_connections` and closed (1,024 by
    /// default, well under a usual open-files limit); `nil` is no limit.
    public var maxConnections: Int?
    /// Failed `hello`s after which a connection is closed.
    public var maxFailedAuthentications: Int
    /// The most PostgreSQL connections the server's pool opens.
    public var maxDatabaseConnections: Int
    /// Each request's deadline (30 s by default; `register` gets at least 5 minutes): past it the request
    /// is answered with `timeout` and its database connection is closed, even when PostgreSQL stopped
    /// answering mid-statement.
    public var requestTimeout: Duration = .seconds(30)
    /// How long a new connection may take to log in (10 s by default): a connection without a
    /// successful `hello` by then gets a `timeout` error line and is closed, so idle sockets that never
    /// log in cannot pile up.
    public var loginTimeout: Duration = .seconds(10)
    /// How failed logins are slowed down across connections, per user name and per client address
    /// (see ``LoginThrottle``); `.disabled` turns it off.
    public var loginThrottle = LoginThrottle.Policy()
    /// How a logged-in user's share requests answered `not_found` (an unknown user name, a record they
    /// cannot see) are slowed down, per user and per client address: 20 free, then 1 s doubling up to
    /// 300 s, forgotten 15 minutes after the last; `.disabled` turns it off.
    public var shareProbeThrottle: LoginThrottle.Policy = {
        var policy = LoginThrottle.Policy()
        policy.freeFailuresPerUser = 20
        policy.freeFailuresPerAddress = 40
        policy.maximumUserDelay = .seconds(300)
        return policy
    }()
    /// How a logged-in user's saves answered `unique_violation` for a value unique across all users that
    /// is taken (what tells them a value exists, see COMPARISON.md) are slowed down, per user and per
    /// client address: as ``shareProbeThrottle``, 20 free, then 1 s doubling up to 300 s, forgotten 15
    /// minutes after the last; `.disabled` turns it off.
    ///
    /// ```swift
    /// var configuration = LineServerConfiguration()
    /// configuration.takenValueProbeThrottle.freeFailuresPerUser = 50
    /// ```
    public var takenValueProbeThrottle: LoginThrottle.Policy = {
        var policy = LoginThrottle.Policy()
        policy.freeFailuresPerUser = 20
        policy.freeFailuresPerAddress = 40
        policy.maximumUserDelay = .seconds(300)
        return policy
    }()
    /// PostgreSQL connections reserved for checking passwords, apart from ``maxDatabaseConnections``:
    /// logins never wait behind data requests, and bcrypt work never takes more than these.
    public var maxLoginConnections = 2
    /// Logins checked or waiting for a login connection at once, across the server's connections. A
    /// `hello` past it is answered `server_busy` at once (no password checked, nothing counted against
    /// anyone) and the client retries after a pause: a crowd reconnecting together then waits in short
    /// turns instead of queueing for longer than its clients wait, which would leave every check unread.
    ///
    /// ```swift
    /// configuration.maxPendingLogins = 128   // more login connections drain a longer queue in time
    /// ```
    public var maxPendingLogins = 64
    /// PostgreSQL's limit on each statement of a request (`statement_timeout`, part of the user's scope
    /// on the pooled connection): the database
    /// cancels a runaway statement and the request is answered `timeout` with its connection intact.
    /// `nil` (the default) takes nine tenths of ``requestTimeout``, so the database stops first.
    public var statementTimeout: Duration?
    /// The most rows a `fetch` or `ids` answers with; a larger result is refused with
    /// `result_too_large`, which tells the client to page with `limit` and `offset`.
    public var maxResponseRows = 100_000
    /// The most transactions a `history` answers with (10,000 by default); a request without a `limit`,
    /// or with a larger one, that matches more is refused with `result_too_large`, which tells the client
    /// to page with `limit` and a token (the Swift client does so itself).
    public var maxHistoryTransactions = 10_000
    /// The longest response line, in bytes; a longer answer is replaced by `result_too_large`. Rows are
    /// counted while they are read from PostgreSQL: a fetch or history read stops as soon as the rows'
    /// own bytes pass this, before the rest is read or anything is encoded.
    public var maxResponseBytes = 64 << 20
    /// A connection (logged in or not) that sends nothing for this long, and has no request running or
    /// subscription, gets a `timeout` line (id null) and is closed. `nil` keeps idle connections forever.
    public var idleTimeout: Duration? = .seconds(600)
    /// The most bytes the lines of one save in parts may add up to (PROTOCOL.md §4, A save in parts); the
    /// part that passes it is refused with `save_too_large` and the save is dropped. 64 MiB by default.
    ///
    /// ```swift
    /// configuration.maxSaveBytes = 256 << 20   // saves of about a million short rows
    /// ```
    public var maxSaveBytes = 64 << 20
    /// The most bytes of unfinished saves in parts the server holds at once, all connections together; a
    /// part past it is refused with `save_too_large` (try again later) and its save is dropped. 256 MiB by
    /// default.
    public var maxHeldSaveBytes = 384 << 20
    /// The most bytes of unfinished saves in parts one user's connections hold at once, all together; a
    /// part past it is refused with `save_too_large` (try again later) and its save is dropped. `nil` (the
    /// default) takes half of ``maxHeldSaveBytes``: one user can never take the room the others' saves need.
    public var maxHeldSaveBytesPerUser: Int?
    /// How long one save in parts may take from its first part to its last (10 minutes by default): a
    /// part after that is refused with `timeout` and the save dropped, and a connection whose held save
    /// passes it is closed as for ``heldSaveTimeout``. `nil` is no limit.
    public var heldSaveLifetime: Duration? = .seconds(600)
    /// How long a save in parts may wait for its next part. Past it the connection gets a `timeout` line (id
    /// null) and is closed, which drops the held parts and gives their room back; other requests or a
    /// subscription on the connection do not extend it. 60 seconds by default.
    ///
    /// ```swift
    /// configuration.heldSaveTimeout = .seconds(300)   // clients on slow links sending large saves
    /// ```
    public var heldSaveTimeout: Duration = .seconds(60)
    /// Requests read ahead of the one running, per connection. Past it the server stops reading that
    /// socket until it catches up, so a client that pipelines without end is held back by TCP, not by
    /// the server's memory.
    public var maxQueuedRequests = 16
    /// Ordinary requests one connection that logged in with `"concurrent":true` runs at once (its other
    /// requests run alone, in order). Each holds a pooled database connection while it runs, so this also
    /// bounds what one client connection takes of ``maxDatabaseConnections``.
    ///
    /// ```swift
    /// configuration.maxConcurrentRequests = 4   // many clients, a small pool
    /// ```
    public var maxConcurrentRequests = 8
    /// Whether a connection's short requests (a point fetch, a small save, a `ping`) run on the event
    /// loop its bytes arrive on, with a database connection from the same loop when the pool has one
    /// (`true`, the default), rather than on Swift's global executor. On the loop a short request wakes
    /// no other thread between the socket, PostgreSQL and the answer; what grows with the request — long
    /// lines, saves of many rows, large results, schema changes, history, logins — still leaves the loop
    /// (see ARCHITECTURE.md, Where the service's work runs). `PGMODEL_SERVE_ON_EVENT_LOOP=off` in the
    /// environment makes `false` the default, for `pgmodel serve` too.
    ///
    /// ```swift
    /// configuration.runsShortRequestsOnEventLoop = false   // every request on Swift's global executor
    /// ```
    public var runsShortRequestsOnEventLoop = !["off", "0"].contains(ProcessInfo.processInfo.environment["PGMODEL_SERVE_ON_EVENT_LOOP"])
    /// How often the server prunes history to each store's retention setting (`pgmodel.history_retention`,
    /// docs/ADMIN.md): a background pass at start and then every interval, stopping with the server.
    /// `nil` (the default here; `pgmodel serve` takes 300 seconds) prunes nothing. Several instances may all
    /// prune: one store is pruned by one of them at a time.
    ///
    /// ```swift
    /// configuration.historyRetentionInterval = .seconds(300)
    /// ```
    public var historyRetentionInterval: Duration?
    /// At graceful shutdown, how long requests in progress may take to finish and their answers to be
    /// read; connections still open after it (a client that stopped reading) are closed.
    public var shutdownGracePeriod: Duration = .seconds(10)

    /// The addresses and CIDR blocks of the load balancers that send a PROXY protocol header (v1 or v2)
    /// before each connection's first byte (HAProxy's `send-proxy` / `send-proxy-v2`, AWS NLB's proxy
    /// protocol). A connection from one of them must start with the header, else it is closed; the
    /// client address the header names then drives the login throttle and the logs. Connections from
    /// anyone else are never read for a header. Empty (the default): the PROXY protocol is off.
    ///
    /// ```swift
    /// configuration.trustedProxies = ["10.0.0.0/8", "192.0.2.7"]
    /// ```
    public var trustedProxies: [String] = []

    /// Where the server's spans go: one per request (kind `server`, a child of the client's span when the
    /// request carries `traceparent`), one per store call and one per SQL statement below it. nil (the
    /// default) is the process's tracer, `InstrumentationSystem.tracer`, read when the server is made: a
    /// no-op until the process bootstraps one, and then the server adds no span work at all.
    ///
    /// ```swift
    /// configuration.tracer = InMemoryTracer()
    /// ```
    public var tracer: (any Tracer)?

    /// The per-user held-save limit in force.
    var effectiveMaxHeldSaveBytesPerUser: Int { maxHeldSaveBytesPerUser ?? maxHeldSaveBytes / 2 }

    /// What ``maxHeldSaveBytesPerUser`` comes to when it is not set: half of ``maxHeldSaveBytes``.
    public var effectiveMaxHeldSaveBytesPerUserDefault: Int { maxHeldSaveBytes / 2 }

    /// The statement timeout in force.
    var effectiveStatementTimeout: Duration { statementTimeout ?? requestTimeout * 0.9 }
    /// The PEM file of the server's certificate (its chain: the leaf first, then any intermediates).
    /// With ``tlsKeyPath`` it turns TLS on: the server then accepts only TLS connections, and answers a
    /// plain-text one with a `tls_required` line before closing it. Both or neither must be set.
    ///
    /// ```swift
    /// configuration.tlsCertificatePath = "/etc/pgmodel/server.pem"
    /// configuration.tlsKeyPath = "/etc/pgmodel/server.key"
    /// ```
    public var tlsCertificatePath: String?
    /// The PEM file of the certificate's private key (unencrypted); see ``tlsCertificatePath``.
    public var tlsKeyPath: String?

    /// Where the server's and its pool's metrics go; `nil` (the default) takes `MetricsSystem.factory`
    /// when the server is made. Tests pass their own (a `PrometheusMetricsFactory` on a fresh registry)
    /// and need no global bootstrap.
    ///
    /// ```swift
    /// configuration.metricsFactory = PrometheusMetricsFactory(registry: registry)
    /// ```
    public var metricsFactory: (any MetricsFactory)?
    /// The HTTP endpoint of metrics and health checks; `nil` (the default) serves none.
    ///
    /// ```swift
    /// configuration.metricsEndpoint = MetricsEndpointConfiguration(port: 9090, registry: registry)
    /// ```
    public var metricsEndpoint: MetricsEndpointConfiguration?

    public init(
        databaseURL: String,
        host: String = "127.0.0.1",
        port: Int = WireProtocol.defaultPort,
        schemaName: String? = nil,
        maxLineBytes: Int = WireProtocol.defaultMaxLineBytes,
        maxConnections: Int? = 1_024,
        maxFailedAuthentications: Int = 5,
        maxDatabaseConnections: Int = 20
    ) {
        self.host = host
        self.port = port
        self.databaseURL = databaseURL
        self.schemaName = schemaName
        self.maxLineBytes = maxLineBytes
        self.maxConnections = maxConnections
        self.maxFailedAuthentications = maxFailedAuthentications
        self.maxDatabaseConnections = maxDatabaseConnections
    }

    /// The settings without the database password, for logs.
    public var description: String {
        var text = "LineServerConfiguration(host: \(host), port: \(port), database: \(Self.redacting(databaseURL))"
        if let directDatabaseURL { text += ", direct database: \(Self.redacting(directDatabaseURL))" }
        if !replicaURLs.isEmpty { text += ", replicas: \(replicaURLs.map(Self.redacting).joined(separator: ","))" }
        if let schemaName { text += ", schema: \(schemaName)" }
        text += ", maxLineBytes: \(maxLineBytes), maxSaveBytes: \(maxSaveBytes)"
        if let maxConnections { text += ", maxConnections: \(maxConnections)" }
        if let tlsCertificatePath { text += ", tls: \(tlsCertificatePath)" }
        if !trustedProxies.isEmpty { text += ", trustedProxies: \(trustedProxies.joined(separator: ","))" }
        if let metricsEndpoint { text += ", metrics: \(metricsEndpoint.host):\(metricsEndpoint.port)" }
        return text + ")"
    }

    /// `url` with any password replaced by `***`.
    static func redacting(_ url: String) -> String {
        guard var components = URLComponents(string: url) else { return "(unparsable URL)" }
        if components.password != nil { components.password = "***" }
        return components.string ?? "(unparsable URL)"
    }
}
