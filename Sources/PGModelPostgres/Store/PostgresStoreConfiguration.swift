import Metrics
import Foundation
import NIOSSL
@_spi(PGModelInternals) import PGModelCore
@_spi(PGModelInternals) import PGModelIO
import PostgresNIO
import Tracing

/// Where the PostgreSQL store is, parsed from a `postgres://` URL.
///
/// `postgres://user:password@host:port/database?schema=name&sslmode=verify-full&sslrootcert=/path/ca.pem`
/// — the schema (default `public`) holds the model tables; `sslmode` and `sslrootcert` mean what they
/// mean to libpq (see ``PostgresSSLMode``), but without `sslmode` connections are plain (`disable`).
/// As with libpq, a `host` parameter naming a directory (`postgres://pgmodel@localhost/pgmodel?host=/tmp/pg`)
/// connects to the unix socket `.s.PGSQL.<port>` in it instead of TCP. `pgmodel_pooling=transaction` says
/// the URL reaches a pooler in transaction mode (PgBouncer's `pool_mode = transaction`): see ``pooling``.
/// `pgmodel_replicas=host:port,host:port` names streaming standbys that serve reads (see ``replicas``), and
/// `pgmodel_replica_wait=<milliseconds>` how long a read waits for one to catch up (``replicaWait``).
/// `pgmodel_direct=host:port` names, beside a transaction-mode pooler's URL, where the connections that need
/// a session of their own (LISTEN, migrations) go, with the same credentials, database and TLS
/// (``sessionConfiguration``).
///
/// ```swift
/// let config = try PostgresStoreConfiguration.parse("postgres://pgmodel:pgmodel@127.0.0.1:55432/pgmodel")
/// ```
@_spi(PGModelInternals) public struct PostgresStoreConfiguration: Sendable {
    public var host: String
    public var port: Int
    public var username: String
    public var password: String?
    public var database: String
    /// The PostgreSQL schema holding model tables.
    public var schemaName: String
    /// The unix-domain socket to connect to instead of `host`/`port` (the URL's `host` parameter, a
    /// directory, plus `.s.PGSQL.<port>`), as for a private cluster that listens on no TCP port.
    public var unixSocketPath: String?
    /// How connections use TLS: the URL's `sslmode`, `disable` when it has none (and for a configuration
    /// made with ``init(host:port:username:password:database:schemaName:)``). Change it with ``setTLS(_:rootCertificatePath:)``.
    public private(set) var sslMode: PostgresSSLMode = .disable
    /// The PEM file of the certificate authorities `sslMode` trusts (the URL's `sslrootcert`); `nil`
    /// trusts the system's roots.
    public private(set) var sslRootCertificatePath: String?
    /// What sits between PGModel and PostgreSQL (the URL's `pgmodel_pooling`, `session` by default): in
    /// ``PoolingMode/transaction`` nothing PGModel does on a pooled connection relies on its session.
    public var pooling: PoolingMode = .session
    /// Where the connections that need a session of their own go (LISTEN for the doorbell, a migration's
    /// connection) when ``pooling`` is ``PoolingMode/transaction``: PostgreSQL itself, or a pooler in
    /// session mode. Unset, it is this configuration (``sessionConfiguration``).
    private var directEndpoint: DirectEndpoint?
    /// Streaming standbys of this database that serve fetches, counts and id reads once they have
    /// replayed the caller's last commit (read-your-writes); everything else goes here. Add one with
    /// ``addReplica(_:)`` or the URL's `pgmodel_replicas`.
    public private(set) var replicas: [PostgresStoreConfiguration] = []
    /// How long a read waits, at most, for a standby to replay its caller's last commit before it goes to
    /// the primary instead (the URL's `pgmodel_replica_wait`, in milliseconds). Short by default: a
    /// standby that is further behind than this serves the read no sooner than the primary would.
    public var replicaWait: Duration = Self.defaultReplicaWait
    /// ``replicaWait`` unless set: 100 ms.
    public static let defaultReplicaWait: Duration = .milliseconds(100)
    /// Built once from the two settings above: every connection of a pool shares it, and its trust
    /// roots are read once, not at each connect.
    private var tlsContext: NIOSSLContext?

    /// A configuration with TLS off; see ``setTLS(_:rootCertificatePath:)``.
    ///
    /// ```swift
    /// let config = PostgresStoreConfiguration(host: "127.0.0.1", username: "pgmodel", password: "pgmodel", database: "pgmodel")
    /// ```
    public init(host: String, port: Int = 5432, username: String, password: String?, database: String, schemaName: String = "public") {
        self.host = host
        self.port = port
        self.username = username
        self.password = password
        self.database = database
        self.schemaName = schemaName
    }

    /// Parses a `postgres://` or `postgresql://` URL; throws `invalidConfiguration` naming what is wrong
    /// (never echoing the password).
    public static func parse(_ url: String) throws -> PostgresStoreConfiguration {
        guard let components = URLComponents(string: url) else {
            throw PGModelError(.invalidConfiguration, "the database URL is not a valid URL")
        }
        guard components.scheme == "postgres" || components.scheme == "postgresql" else {
            throw PGModelError(.invalidConfiguration, "the database URL must start with postgres:// (got scheme '\(components.scheme ?? "")')")
        }
        let items = components.queryItems ?? []
        let socketDirectory = items.last { $0.name == "host" }?.value
        if let socketDirectory, !socketDirectory.hasPrefix("/") {
            throw PGModelError(.invalidConfiguration, "the database URL's host parameter must be an absolute directory (a unix socket's)")
        }
        guard let host = components.host.flatMap({ $0.isEmpty ? nil : $0 }) ?? (socketDirectory == nil ? nil : "localhost") else {
            throw PGModelError(.invalidConfiguration, "the database URL has no host")
        }
        guard let user = components.user, !user.isEmpty else {
            throw PGModelError(.invalidConfiguration, "the database URL has no user name")
        }
        let database = String(components.path.drop { $0 == "/" })
        var config = PostgresStoreConfiguration(
            host: host, port: components.port ?? 5432, username: user.removingPercentEncoding ?? user,
            password: components.password.map { $0.removingPercentEncoding ?? $0 },
            database: database.isEmpty ? user : database)
        if let socketDirectory {
            config.unixSocketPath = socketDirectory + "/.s.PGSQL.\(config.port)"
        }
        if let pooling = items.last(where: { $0.name == "pgmodel_pooling" }) {
            guard let mode = PoolingMode(rawValue: pooling.value ?? "") else {
                throw PGModelError(.invalidConfiguration, "the database URL's pgmodel_pooling parameter is session or transaction")
            }
            config.pooling = mode
        }
        for item in items where item.name == "schema" {
            guard let value = item.value, Naming.isValidIdentifier(value) else {
                throw PGModelError(.invalidConfiguration, "the database URL's schema parameter is not a plain identifier")
            }
            config.schemaName = value
        }
        // Not libpq's `prefer`: a URL without sslmode keeps PGModel's earlier plain connections (see
        // PostgresSSLMode: TLS is asked for by name).
        let mode = try items.last { $0.name == "sslmode" }.map { try PostgresSSLMode(parsing: $0.value ?? "") } ?? .disable
        let rootCertificate = items.last { $0.name == "sslrootcert" }?.value
        try config.setTLS(mode, rootCertificatePath: rootCertificate)
        // After TLS: a replica is reached as the primary is.
        if let replicas = items.last(where: { $0.name == "pgmodel_replicas" }) {
            for endpoint in (replicas.value ?? "").split(separator: ",", omittingEmptySubsequences: false) {
                let (host, port) = try Self.replicaEndpoint(String(endpoint))
                config.addReplica(host: host, port: port)
            }
        }
        // A transaction-mode pooler's URL names PostgreSQL itself (or a session-mode pooler) for what
        // needs a session: the store's LISTEN for change events, and migrations.
        if let direct = items.last(where: { $0.name == "pgmodel_direct" }) {
            let (host, port) = try Self.endpoint(direct.value ?? "", parameter: "pgmodel_direct", list: false)
            var session = config
            session.host = host
            session.port = port
            session.unixSocketPath = nil
            session.pooling = .session
            session.replicas = []
            try config.setSessionConfiguration(session)
        }
        if let wait = items.last(where: { $0.name == "pgmodel_replica_wait" }) {
            guard let text = wait.value, let milliseconds = Int(text), (0...60_000).contains(milliseconds) else {
                throw PGModelError(.invalidConfiguration, "the database URL's pgmodel_replica_wait parameter is a number of milliseconds from 0 to 60000")
            }
            config.replicaWait = .milliseconds(milliseconds)
        }
        return config
    }

    /// Sets how connections use TLS, reading `rootCertificatePath` (a PEM file of trusted certificate
    /// authorities; `nil` or `"system"` is the system's trust roots) now. As with libpq, giving a root
    /// certificate to `prefer` or `require` also checks the server's certificate chain. Throws
    /// `invalid_configuration` naming a file that cannot be read.
    ///
    /// ```swift
    /// try config.setTLS(.verifyFull, rootCertificatePath: "/etc/pgmodel/db-ca.pem")
    /// ```
    public mutating func setTLS(_ mode: PostgresSSLMode, rootCertificatePath: String? = nil) throws {
        let path = rootCertificatePath == "system" ? nil : rootCertificatePath
        tlsContext = try Self.makeTLSContext(mode, rootCertificatePath: path)
        sslMode = mode
        sslRootCertificatePath = path
    }

    private static func makeTLSContext(_ mode: PostgresSSLMode, rootCertificatePath: String?) throws -> NIOSSLContext? {
        var tls = TLSConfiguration.makeClientConfiguration()
        tls.minimumTLSVersion = .tlsv12
        switch mode {
        case .disable:
            return nil
        case .prefer, .require:
            if rootCertificatePath == nil {
                // Encryption only: no roots to load, nothing to check.
                tls.certificateVerification = .none
                tls.trustRoots = .certificates([])
            } else {
                tls.certificateVerification = .noHostnameVerification
            }
        case .verifyCA:
            tls.certificateVerification = .noHostnameVerification
        case .verifyFull:
            tls.certificateVerification = .fullVerification
        }
        if let rootCertificatePath {
            tls.trustRoots = .certificates(try TLSFiles.certificates(at: rootCertificatePath, purpose: "sslrootcert"))
        }
        do {
            return try NIOSSLContext(configuration: tls)
        } catch {
            throw PGModelError(.invalidConfiguration, "cannot set up TLS for sslmode \(mode): \(error)")
        }
    }

    /// How long opening one connection may take.
    public var connectTimeout: TimeAmount = .seconds(10)

    /// Where the store's spans go (one per store call, one per SQL statement): nil is the process's
    /// tracer (`InstrumentationSystem.tracer`, a no-op until the app bootstraps one), read when the store
    /// is made.
    ///
    /// ```swift
    /// var config = try PostgresStoreConfiguration.parse(url)
    /// config.tracer = InMemoryTracer()
    /// ```
    public var tracer: (any Tracer)?
    /// Where the store's metrics go (``StoreMetrics``); `nil` (the default) takes `MetricsSystem.factory`
    /// when the store opens, so an app that bootstrapped its `MetricsSystem` gets them without more.
    ///
    /// ```swift
    /// config.metricsFactory = NOOPMetricsHandler.instance   // this store reports nothing
    /// ```
    public var metricsFactory: (any MetricsFactory)?

    /// The configuration of the connections that need a session of their own: the direct endpoint set
    /// with ``setSessionConfiguration(_:)``, else this one (in session mode every connection has one).
    ///
    /// ```swift
    /// var pooled = try PostgresStoreConfiguration.parse("postgres://pgmodel:pw@127.0.0.1:6432/pgmodel?pgmodel_pooling=transaction")
    /// try pooled.setSessionConfiguration(PostgresStoreConfiguration.parse("postgres://pgmodel:pw@127.0.0.1:5432/pgmodel"))
    /// let listener = pooled.sessionConfiguration.connection   // LISTEN goes straight to PostgreSQL
    /// ```
    public var sessionConfiguration: PostgresStoreConfiguration {
        guard var direct = directEndpoint?.configuration else { return self }
        direct.schemaName = schemaName
        direct.tracer = tracer
        direct.metricsFactory = metricsFactory
        return direct
    }

    /// Sets where connections that need a session go (see ``sessionConfiguration``). The endpoint must
    /// not itself be a transaction-mode pooler, and must reach the same database.
    ///
    /// ```swift
    /// try pooled.setSessionConfiguration(PostgresStoreConfiguration.parse(directURL))
    /// ```
    public mutating func setSessionConfiguration(_ direct: PostgresStoreConfiguration) throws {
        guard direct.pooling == .session else {
            throw PGModelError(.invalidConfiguration, "the direct database URL must not be a transaction-mode pooler's (pgmodel_pooling=transaction)")
        }
        guard direct.database == database else {
            throw PGModelError(.invalidConfiguration, "the direct database URL names database '\(direct.database)', the database URL '\(database)'")
        }
        var plain = direct
        plain.directEndpoint = nil
        directEndpoint = DirectEndpoint(configuration: plain)
    }

    /// Adds a streaming standby at `host`:`port` reached as this configuration reaches the primary (same
    /// user, password, database and TLS; a physical standby has the primary's roles), as libpq's
    /// multi-host URLs do.
    ///
    /// ```swift
    /// config.addReplica(host: "10.0.0.12", port: 5432)
    /// ```
    public mutating func addReplica(host: String, port: Int = 5432) {
        var replica = self
        replica.host = host
        replica.port = port
        replica.unixSocketPath = nil
        replica.directEndpoint = nil
        replica.replicas = []
        replicas.append(replica)
    }

    /// Adds a streaming standby with a configuration of its own (its own TLS, say). It must name the same
    /// database; its schema, tracer and metrics are this configuration's.
    ///
    /// ```swift
    /// try config.addReplica(PostgresStoreConfiguration.parse("postgres://app:pw@standby-1:5432/app?sslmode=verify-full"))
    /// ```
    public mutating func addReplica(_ replica: PostgresStoreConfiguration) throws {
        guard replica.database == database else {
            throw PGModelError(.invalidConfiguration, "a replica names database '\(replica.database)', the database URL '\(database)'")
        }
        var plain = replica
        plain.replicas = []
        plain.directEndpoint = nil
        replicas.append(plain)
    }

    /// The configurations of ``replicas`` with this configuration's schema, tracer, metrics and connect
    /// timeout, as their pools use them.
    public var replicaConfigurations: [PostgresStoreConfiguration] {
        replicas.map { replica in
            var replica = replica
            replica.schemaName = schemaName
            replica.tracer = tracer
            replica.metricsFactory = metricsFactory
            replica.connectTimeout = connectTimeout
            return replica
        }
    }

    /// One `host:port` (or `host`, port 5432; `[v6 address]:port`) of `pgmodel_replicas`.
    static func replicaEndpoint(_ text: String) throws -> (host: String, port: Int) {
        try endpoint(text, parameter: "pgmodel_replicas", list: true)
    }

    /// `host:port` (or `[v6]:port`, the port 5432 when left out) of a URL parameter naming other servers.
    static func endpoint(_ text: String, parameter: String, list: Bool) throws -> (host: String, port: Int) {
        let invalid = PGModelError(.invalidConfiguration, list
            ? "the database URL's \(parameter) parameter is a list of host:port, separated by commas"
            : "the database URL's \(parameter) parameter is one host:port")
        var host = Substring(text)
        var portText: Substring?
        if host.hasPrefix("[") {
            guard let close = host.firstIndex(of: "]") else { throw invalid }
            let rest = host[host.index(after: close)...]
            host = host[host.index(after: host.startIndex)..<close]
            if !rest.isEmpty {
                guard rest.hasPrefix(":") else { throw invalid }
                portText = rest.dropFirst()
            }
        } else if let colon = host.lastIndex(of: ":") {
            portText = host[host.index(after: colon)...]
            host = host[..<colon]
        }
        guard !host.isEmpty, !host.contains(where: { $0 == "/" || $0 == "@" || $0 == " " || $0 == "," }) else { throw invalid }
        var port = 5432
        if let portText {
            guard let parsed = Int(portText), (1...65535).contains(parsed) else { throw invalid }
            port = parsed
        }
        return (String(host), port)
    }

    /// A single connection's configuration.
    public var connection: PostgresConnection.Configuration {
        let tls: PostgresConnection.Configuration.TLS
        switch (sslMode, tlsContext) {
        case (.prefer, let context?): tls = .prefer(context)
        case (.require, let context?), (.verifyCA, let context?), (.verifyFull, let context?): tls = .require(context)
        default: tls = .disable
        }
        var configuration = if let unixSocketPath {
            PostgresConnection.Configuration(unixSocketPath: unixSocketPath, username: username, password: password, database: database)
        } else {
            PostgresConnection.Configuration(host: host, port: port, username: username, password: password,
                                             database: database, tls: tls)
        }
        configuration.options.connectTimeout = connectTimeout
        // The scripts give the role `pgmodel` the search path `public` alone, so an admin's psql does not
        // list the system schema of the same name beside the model tables. PGModel's own sessions keep
        // PostgreSQL's default path, where its extensions (pgcrypto, unaccent) may have been created.
        configuration.options.additionalStartupParameters = [("search_path", "\"$user\", public")]
        return configuration
    }
}

/// What sits between PGModel and PostgreSQL, as far as the sessions of pooled connections go.
///
/// ```swift
/// let config = try PostgresStoreConfiguration.parse("postgres://pgmodel:pw@pgbouncer:6432/pgmodel?pgmodel_pooling=transaction")
/// precondition(config.pooling == .transaction)
/// ```
@_spi(PGModelInternals) public enum PoolingMode: String, Sendable, Hashable, CaseIterable {
    /// PostgreSQL itself, or a pooler in session mode: a connection keeps its session from one
    /// transaction to the next, so the pool keeps a user's identity on it between requests and fetches
    /// run as named prepared statements.
    case session
    /// A pooler in transaction mode (PgBouncer's `pool_mode = transaction`): consecutive transactions of
    /// one connection may run on different server connections. Every service request then takes on its
    /// user's identity inside its own transaction (`set_config(…, true)`), reads included; fetches run
    /// unnamed; LISTEN and migrations go to ``PostgresStoreConfiguration/sessionConfiguration``.
    case transaction
}

/// The boxed direct endpoint of a configuration (a struct cannot hold its own type inline).
private final class DirectEndpoint: Sendable {
    let configuration: PostgresStoreConfiguration
    init(configuration: PostgresStoreConfiguration) { self.configuration = configuration }
}
