import ArgumentParser
import Foundation
import Logging
import Metrics
@_spi(PGModelInternals) import PGModelServer
@_spi(PGModelInternals) import PGModelWire
import Prometheus
import ServiceLifecycle

/// `pgmodel serve`: runs the line-protocol service until SIGINT or SIGTERM, then shuts down gracefully.
///
/// ```
/// pgmodel serve --host 0.0.0.0 --port 7432 --database-url postgres://pgmodel:pgmodel@db/pgmodel
/// pgmodel serve --tls-certificate /etc/pgmodel/server.pem --tls-key /etc/pgmodel/server.key
/// pgmodel serve --host 0.0.0.0 --trusted-proxy 10.0.0.0/8   # behind HAProxy with send-proxy-v2
/// pgmodel serve --metrics-port 9090   # GET /metrics, /health/live, /health/ready on 127.0.0.1:9090
/// pgmodel serve --history-retention-interval 60   # prune history to the stores' retention every minute
/// pgmodel serve --database-url postgres://svc:pw@pgbouncer:6432/app --pooling transaction \
///               --direct-url postgres://svc:pw@db:5432/app   # behind PgBouncer in transaction mode
///               --replica postgres://svc:pw@standby-1:5432/app  # reads on a streaming standby
/// ```
struct ServeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "serve",
        abstract: "Run the PGModel line-protocol service.",
        discussion: "SIGINT or SIGTERM stops accepting connections, lets requests in progress finish, then exits.")

    @Option(help: ArgumentHelp("Address to listen on. Defaults to $PGMODEL_HOST, else 127.0.0.1.", valueName: "address"))
    var host: String?

    @Option(help: ArgumentHelp("TCP port. Defaults to $PGMODEL_PORT, else 7432.", valueName: "port"))
    var port: Int?

    @OptionGroup var database: DatabaseOptions

    @Option(help: ArgumentHelp(
        "What the database URL reaches: session (PostgreSQL, or a pooler in session mode) or transaction (a pooler in transaction mode, such as PgBouncer's; the same as the URL's pgmodel_pooling=transaction). Defaults to the URL's.",
        valueName: "mode"))
    var pooling: String?

    @Option(help: ArgumentHelp(
        "PostgreSQL URL for what needs a session of its own (LISTEN for change events, migrations) when --database-url is a transaction-mode pooler: PostgreSQL itself or a session-mode pooler, same database. Defaults to $PGMODEL_DIRECT_DATABASE_URL, else --database-url.",
        valueName: "url"))
    var directURL: String?

    @Option(help: ArgumentHelp(
        "PostgreSQL URL of a streaming standby of the same database that serves fetches, counts and id reads once it has replayed the reading client's last save (read-your-writes; else the read goes to the primary after the URL's pgmodel_replica_wait, 100 ms by default). Repeat for several. Defaults to $PGMODEL_REPLICA_URLS (comma-separated).",
        valueName: "url"))
    var replica: [String] = []

    @Option(help: ArgumentHelp("Longest accepted request line in bytes.", valueName: "bytes"))
    var maxLineBytes = WireProtocol.defaultMaxLineBytes

    @Option(help: ArgumentHelp("Most bytes the lines of one save in parts may add up to; more is 'save_too_large'.", valueName: "bytes"))
    var maxSaveBytes = 64 << 20

    @Option(help: ArgumentHelp("Most simultaneous client connections; 0 is no limit.", valueName: "count"))
    var maxConnections = 1_024

    @Option(help: ArgumentHelp(
        "A load balancer (IP address or CIDR block) whose connections start with a PROXY protocol header (v1 or v2); the header's client address then drives login throttling and logs. Repeat for several. Defaults to $PGMODEL_TRUSTED_PROXIES (comma-separated).",
        valueName: "address"))
    var trustedProxy: [String] = []

    @Option(help: ArgumentHelp("Most transactions one history request answers with; more is 'result_too_large'.", valueName: "count"))
    var maxHistoryTransactions = 10_000

    @Option(help: ArgumentHelp("Seconds one save in parts may take from its first part to its last; 0 is no limit.", valueName: "seconds"))
    var heldSaveLifetime: Double = 600

    @Option(help: ArgumentHelp("Each request's deadline in seconds; past it the client gets 'timeout'.", valueName: "seconds"))
    var requestTimeout: Double = 30

    @Option(help: ArgumentHelp("Seconds a new connection has to log in before it is closed with 'timeout'.", valueName: "seconds"))
    var loginTimeout: Double = 10

    @Option(help: ArgumentHelp("Seconds a connection may send nothing (without a request running or a subscription) before it is closed, logged in or not; 0 keeps idle connections.", valueName: "seconds"))
    var idleTimeout: Double = 600

    @Option(help: ArgumentHelp("PostgreSQL's statement_timeout for each request, in seconds (default: 0.9 x --request-timeout).", valueName: "seconds"))
    var statementTimeout: Double?

    @Option(help: ArgumentHelp("Most rows one fetch or ids answers with; more is 'result_too_large'.", valueName: "count"))
    var maxResponseRows = 100_000

    @Option(help: ArgumentHelp("Longest response line in bytes; longer is 'result_too_large'.", valueName: "bytes"))
    var maxResponseBytes = 64 << 20

    @Option(help: ArgumentHelp("Seconds a graceful shutdown waits for requests and for clients to read their answers.", valueName: "seconds"))
    var shutdownGrace: Double = 10

    @Option(help: ArgumentHelp(
        "PEM certificate (chain) for TLS; with --tls-key the server accepts only TLS. Defaults to $PGMODEL_TLS_CERTIFICATE.",
        valueName: "path"))
    var tlsCertificate: String?

    @Option(help: ArgumentHelp("PEM private key of --tls-certificate. Defaults to $PGMODEL_TLS_KEY.", valueName: "path"))
    var tlsKey: String?

    @Option(help: ArgumentHelp(
        "Port of the HTTP endpoint serving /metrics (Prometheus), /health/live and /health/ready; none without it.",
        valueName: "port"))
    var metricsPort: Int?

    @Option(help: ArgumentHelp("Address the metrics endpoint listens on.", valueName: "address"))
    var metricsHost = "127.0.0.1"

    @Option(help: ArgumentHelp(
        "Seconds between prunes of every store's history to its retention setting (pgmodel history retention set); 0 is off.",
        valueName: "seconds"))
    var historyRetentionInterval: Double = 300

    @Option(help: ArgumentHelp("Log level: trace, debug, info, notice, warning, error, critical.", valueName: "level"))
    var logLevel = "info"

    @Option(help: ArgumentHelp("Log format: text (swift-log's lines) or json (one object per line, metadata as fields).", valueName: "format"))
    var logFormat = "text"

    func validate() throws {
        guard Logger.Level(rawValue: logLevel) != nil else {
            throw ValidationError("unknown log level '\(logLevel)'")
        }
        guard ["text", "json"].contains(logFormat) else { throw ValidationError("--log-format is text or json, not '\(logFormat)'") }
        guard maxLineBytes >= 64 else { throw ValidationError("--max-line-bytes must be at least 64") }
        guard maxConnections >= 0 else { throw ValidationError("--max-connections must be 0 (no limit) or more") }
        guard maxHistoryTransactions >= 1 else { throw ValidationError("--max-history-transactions must be at least 1") }
        do {
            _ = try TrustedProxies(trustedProxy)
        } catch let error as WireError {
            throw ValidationError("--trusted-proxy: \(error.message)")
        }
        guard loginTimeout.isFinite, loginTimeout > 0, loginTimeout <= 86_400 else {
            throw ValidationError("--login-timeout must be a number of seconds between 0 and 86400")
        }
        guard requestTimeout.isFinite, requestTimeout > 0, requestTimeout <= 86_400 else {
            throw ValidationError("--request-timeout must be between 0 and 86400 seconds")
        }
        for (name, value) in [("--history-retention-interval", historyRetentionInterval), ("--idle-timeout", idleTimeout), ("--shutdown-grace", shutdownGrace), ("--held-save-lifetime", heldSaveLifetime),
                              ("--statement-timeout", statementTimeout ?? 1)] {
            guard value.isFinite, value >= 0, value <= 86_400 else {
                throw ValidationError("\(name) must be a number of seconds between 0 and 86400")
            }
        }
        if let statementTimeout, statementTimeout <= 0 { throw ValidationError("--statement-timeout must be positive") }
        guard maxResponseRows >= 1 else { throw ValidationError("--max-response-rows must be at least 1") }
        guard maxResponseBytes >= 1024 else { throw ValidationError("--max-response-bytes must be at least 1024") }
        guard maxSaveBytes >= 64 else { throw ValidationError("--max-save-bytes must be at least 64") }
        if let pooling, !["session", "transaction"].contains(pooling) {
            throw ValidationError("--pooling is session or transaction, not '\(pooling)'")
        }
        if let metricsPort, !(0...65535).contains(metricsPort) {
            throw ValidationError("--metrics-port must be between 0 and 65535")
        }
    }

    func run() async throws {
        // Every failure prints as `Error: <sentence> [code]`, argument checks included.
        try await reportingFailures {
            let environment = ProcessInfo.processInfo.environment
            let host = host ?? environment["PGMODEL_HOST"].flatMap { $0.isEmpty ? nil : $0 } ?? "127.0.0.1"
            let port: Int
            if let explicit = self.port {
                port = explicit
            } else if let text = environment["PGMODEL_PORT"], !text.isEmpty {
                guard let parsed = Int(text) else { throw ValidationError("PGMODEL_PORT '\(text)' is not a port number") }
                port = parsed
            } else {
                port = WireProtocol.defaultPort
            }
            let nonEmpty: (String?) -> String? = { $0.flatMap { $0.isEmpty ? nil : $0 } }
            let databaseURL = try Self.url(try database.resolvedURL(), pooling: pooling)
            let directURL = nonEmpty(directURL) ?? nonEmpty(environment["PGMODEL_DIRECT_DATABASE_URL"])
            let tlsCertificate = nonEmpty(tlsCertificate) ?? nonEmpty(environment["PGMODEL_TLS_CERTIFICATE"])
            let tlsKey = nonEmpty(tlsKey) ?? nonEmpty(environment["PGMODEL_TLS_KEY"])
            guard (tlsCertificate == nil) == (tlsKey == nil) else {
                throw ValidationError("TLS needs both --tls-certificate and --tls-key (or $PGMODEL_TLS_CERTIFICATE and $PGMODEL_TLS_KEY)")
            }
            let level = Logger.Level(rawValue: logLevel) ?? .info
            let trustedProxies = !trustedProxy.isEmpty ? trustedProxy
                : (nonEmpty(environment["PGMODEL_TRUSTED_PROXIES"])?.split(separator: ",").map { String($0) } ?? [])

            let json = logFormat == "json"
            LoggingSystem.bootstrap { label in
                if json { return JSONLogHandler(label: label, logLevel: level) }
                var handler = StreamLogHandler.standardError(label: label)
                handler.logLevel = level
                return handler
            }
            let logger = Logger(label: "pgmodel.server")

            try await reportingFailures {
                var configuration = LineServerConfiguration(
                    databaseURL: databaseURL, host: host, port: port, schemaName: database.schema,
                    maxLineBytes: maxLineBytes, maxConnections: maxConnections > 0 ? maxConnections : nil)
                configuration.directDatabaseURL = directURL
                configuration.replicaURLs = !replica.isEmpty ? replica
                    : (nonEmpty(environment["PGMODEL_REPLICA_URLS"])?.split(separator: ",").map { String($0) } ?? [])
                configuration.requestTimeout = Self.duration(requestTimeout)
                configuration.loginTimeout = Self.duration(loginTimeout)
                configuration.idleTimeout = idleTimeout > 0 ? Self.duration(idleTimeout) : nil
                configuration.statementTimeout = statementTimeout.map(Self.duration)
                configuration.maxResponseRows = maxResponseRows
                configuration.maxResponseBytes = maxResponseBytes
                configuration.maxSaveBytes = maxSaveBytes
                // Several connections' saves at once, and never less than one save: held parts count at their
                // decoded size, up to about three times their lines for ordinary rows.
                // Each user may hold one whole save; the server, two users' worth.
                let perUser = max(configuration.effectiveMaxHeldSaveBytesPerUserDefault, maxSaveBytes > Int.max / 3 ? .max : maxSaveBytes * 3)
                configuration.maxHeldSaveBytesPerUser = perUser
                configuration.maxHeldSaveBytes = max(configuration.maxHeldSaveBytes, perUser > Int.max / 2 ? .max : perUser * 2)
                configuration.heldSaveLifetime = heldSaveLifetime > 0 ? Self.duration(heldSaveLifetime) : nil
                configuration.maxHistoryTransactions = maxHistoryTransactions
                configuration.trustedProxies = trustedProxies
                configuration.shutdownGracePeriod = Self.duration(shutdownGrace)
                configuration.historyRetentionInterval = historyRetentionInterval > 0 ? Self.duration(historyRetentionInterval) : nil
                configuration.tlsCertificatePath = tlsCertificate
                configuration.tlsKeyPath = tlsKey
                if let metricsPort {
                    // The process's metrics backend: the server's, the pool's and any library's metrics
                    // all land in the registry /metrics renders.
                    let registry = PrometheusCollectorRegistry()
                    let factory = PrometheusMetricsFactory.pgmodel(registry: registry)
                    MetricsSystem.bootstrap(factory)
                    configuration.metricsFactory = factory
                    configuration.metricsEndpoint = MetricsEndpointConfiguration(host: metricsHost, port: metricsPort, registry: registry)
                }
                let server = try LineServer(configuration: configuration, logger: logger)
                let group = ServiceGroup(
                    services: [server], gracefulShutdownSignals: [.sigterm, .sigint], cancellationSignals: [], logger: logger)
                try await group.run()
            }
        }
    }

    /// `url` with its `pgmodel_pooling` parameter set to `pooling` (replacing any), or as it is without one.
    static func url(_ url: String, pooling: String?) throws -> String {
        guard let pooling else { return url }
        guard var components = URLComponents(string: url) else {
            throw ValidationError("the database URL is not a valid URL")
        }
        var items = (components.queryItems ?? []).filter { $0.name != "pgmodel_pooling" }
        items.append(URLQueryItem(name: "pgmodel_pooling", value: pooling))
        components.queryItems = items
        guard let text = components.string else { throw ValidationError("the database URL is not a valid URL") }
        return text
    }

    /// Seconds from the command line (validated finite and at most a day), rounded up to milliseconds.
    static func duration(_ seconds: Double) -> Duration {
        .milliseconds(Int64((seconds * 1000).rounded(.up)))
    }
}
