import Logging
import Metrics
import NIOConcurrencyHelpers
import NIOCore
import NIOPosix
import NIOSSL
@_spi(PGModelInternals) import PGModelCore
@_spi(PGModelInternals) import PGModelIO
@_spi(PGModelInternals) import PGModelPostgres
@_spi(PGModelInternals) import PGModelWire
import PostgresNIO
import ServiceLifecycle

/// The PGModel line-protocol service: accepts TCP connections, logs users in, and runs their requests
/// on PostgreSQL through a connection pool, each under the user's ``AccessScope``.
///
/// Subscribed connections get change events from one shared database ``ChangeListener`` (one LISTEN
/// connection for the whole server, opened once the database is ready).
///
/// It is a swift-service-lifecycle `Service`. On graceful shutdown it stops accepting, lets every
/// request in progress finish and answer, closes the connections (ending their event forwarding), then
/// closes the change listener, and last its database pool.
///
/// ```swift
/// let server = try LineServer(configuration: LineServerConfiguration(databaseURL: url), logger: logger)
/// let group = ServiceGroup(services: [server], gracefulShutdownSignals: [.sigterm, .sigint], logger: logger)
/// try await group.run()
/// ```
public struct LineServer: Service, CustomStringConvertible {
    /// How the server was configured.
    public let configuration: LineServerConfiguration
    let logger: Logger
    let databaseConfiguration: PostgresStoreConfiguration
    /// The database side: the pool, the schema registry and the engine, shared with the direct store's code.
    let gateway: DatabaseGateway
    let lifecycle = LineServerLifecycle()
    let forwarders = ServerCounter()
    let visibilityReads = ServerCounter()
    let visibilityRounds = ServerCounter()
    let eventLoopGroup: any EventLoopGroup
    /// The server side of TLS, when the configuration names a certificate and key; nil serves plain TCP.
    let tlsContext: NIOSSLContext?
    /// The peers whose connections start with a PROXY protocol header.
    let trustedProxies: TrustedProxies
    /// The service's metrics, made once (``ServerMetrics``).
    let metrics: ServerMetrics
    /// What `/health/ready` reads: schema loaded, the change listener.
    let readiness = ServerReadiness()
    /// The HTTP endpoint of metrics and health, when configured.
    let metricsServer: MetricsHTTPServer?

    /// Checks the configuration (the database URL above all; `invalid_configuration` otherwise) and
    /// prepares the database pool. Nothing connects until ``run()``.
    public init(
        configuration: LineServerConfiguration,
        logger: Logger = Logger(label: "pgmodel.server"),
        eventLoopGroup: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton
    ) throws {
        var database = try PostgresStoreConfiguration.parse(configuration.databaseURL)
        if let schemaName = configuration.schemaName {
            guard Naming.isValidIdentifier(schemaName) else {
                throw PGModelError(.invalidConfiguration, "the schema name '\(schemaName)' is not a plain identifier")
            }
            database.schemaName = schemaName
        }
        if let directURL = configuration.directDatabaseURL {
            try database.setSessionConfiguration(PostgresStoreConfiguration.parse(directURL))
        }
        for replicaURL in configuration.replicaURLs {
            try database.addReplica(PostgresStoreConfiguration.parse(replicaURL))
        }
        let metricsFactory = configuration.metricsFactory ?? MetricsSystem.factory
        database.metricsFactory = metricsFactory
        self.metrics = ServerMetrics(factory: metricsFactory)
        guard (0...65535).contains(configuration.port) else {
            throw PGModelError(.invalidConfiguration, "the port \(configuration.port) is not between 0 and 65535")
        }
        guard configuration.maxLineBytes >= 64 else {
            throw PGModelError(.invalidConfiguration, "the line limit must be at least 64 bytes")
        }
        if let maxConnections = configuration.maxConnections, maxConnections < 1 {
            throw PGModelError(.invalidConfiguration, "the connection limit must be at least 1")
        }
        guard configuration.maxSaveBytes >= 64, configuration.maxHeldSaveBytes >= 0 else {
            throw PGModelError(.invalidConfiguration, "the save limits must allow at least 64 bytes for one save in parts, and the held-parts limit must not be negative")
        }
        guard configuration.maxResponseRows >= 1, configuration.maxHistoryTransactions >= 1, configuration.maxResponseBytes >= 1024,
              configuration.maxQueuedRequests >= 1 else {
            throw PGModelError(.invalidConfiguration, "the response limits must allow 1 row, 1 history transaction and 1 KiB, and at least 1 queued request")
        }
        guard configuration.effectiveMaxHeldSaveBytesPerUser >= 0 else {
            throw PGModelError(.invalidConfiguration, "the per-user held-parts limit must not be negative")
        }
        do {
            trustedProxies = try TrustedProxies(configuration.trustedProxies)
        } catch let error as WireError {
            throw PGModelError(.invalidConfiguration, "trusted proxies: \(error.message)")
        }
        for (name, duration) in [("request", configuration.requestTimeout), ("login", configuration.loginTimeout),
                                 ("statement", configuration.effectiveStatementTimeout),
                                 ("idle", configuration.idleTimeout ?? .seconds(1)),
                                 ("held save", configuration.heldSaveTimeout),
                                 ("held save lifetime", configuration.heldSaveLifetime ?? .seconds(1))] where duration <= .zero {
            throw PGModelError(.invalidConfiguration, "the \(name) timeout must be positive")
        }
        self.tlsContext = try Self.makeTLSContext(configuration)
        self.configuration = configuration
        self.logger = logger
        database.tracer = configuration.tracer
        self.databaseConfiguration = database
        self.eventLoopGroup = eventLoopGroup
        self.gateway = DatabaseGateway(
            configuration: database, maximumConnections: max(1, configuration.maxDatabaseConnections),
            maximumLoginConnections: max(1, configuration.maxLoginConnections),
            requestTimeout: ConnectionDeadline.timeAmount(configuration.requestTimeout),
            statementTimeout: configuration.effectiveStatementTimeout, eventLoopGroup: eventLoopGroup, logger: logger)
        self.metricsServer = try Self.makeMetricsServer(configuration, gateway: gateway, readiness: readiness,
                                                        eventLoopGroup: eventLoopGroup, logger: logger)
    }

    /// Runs until graceful shutdown or cancellation. Throws when the database cannot be prepared or the
    /// address cannot be bound. Call it once.
    public func run() async throws {
        try lifecycle.markStarted()
        let listener = LineListener(server: self)
        // The listener drains first (every request in progress answers); the database pool closes last.
        do {
            try await withMetricsEndpoint { try await listener.run() }
            await gateway.close()
            lifecycle.finish(PGModelError(.connectionFailed, "the server has stopped"))
        } catch {
            await gateway.close()
            lifecycle.finish(error)
            throw error
        }
    }

    /// The port the server listens on, once it does (useful with port `0`). Throws if ``run()`` failed
    /// before listening or the server has stopped.
    ///
    /// ```swift
    /// let port = try await server.listeningPort()
    /// ```
    public func listeningPort() async throws -> Int {
        try await lifecycle.listeningPort()
    }

    /// How many client connections are open right now.
    public var connectionCount: Int { lifecycle.connectionCount }

    /// How many connections are forwarding change events right now: those with at least one
    /// subscription. It drops at the last `unsubscribe` (before its response) and when a connection ends.
    ///
    /// ```swift
    /// #expect(server.signalForwarderCount == 0)   // every subscriber has gone
    /// ```
    public var signalForwarderCount: Int { forwarders.count }

    /// How many history reads the server has made to decide which change events its subscribers may
    /// see, since it started. Each round of reads makes one per user with subscribed connections, shared
    /// by all of that user's connections; rings that arrive while a round runs share the next round, so
    /// this grows with bursts of saves and with users listening, not with saves or connections.
    ///
    /// ```swift
    /// let before = server.visibilityReadCount   // … a burst of 50 saves, 3 connections of one user …
    /// #expect(server.visibilityReadCount - before <= 2)
    /// ```
    public var visibilityReadCount: Int { visibilityReads.count }

    /// How many rounds of visibility reads the server has started: one per ring, or per burst of rings
    /// that arrived while a round ran, while any connection is subscribed (a `reconnected` ring reads nothing).
    ///
    /// ```swift
    /// // Two users subscribed, however many connections each: two reads a round.
    /// #expect(server.visibilityReadCount - reads == 2 * (server.visibilityRoundCount - rounds))
    /// ```
    @_spi(PGModelInternals) public var visibilityRoundCount: Int { visibilityRounds.count }

    /// Names the listening address and the database without its password: service-lifecycle logs it.
    public var description: String {
        "LineServer(\(configuration.host):\(configuration.port)\(tlsContext == nil ? "" : " (TLS)"), database \(LineServerConfiguration.redacting(configuration.databaseURL)))"
    }
}
