import Foundation
import Logging
import NIOPosix
import PGModel
@_spi(PGModelInternals) import PGModelCore
@_spi(PGModelInternals) import PGModelPostgres
@_spi(PGModelInternals) import PGModelServer
import PostgresNIO
import ServiceLifecycle

/// A running `pgmodel serve` for a test: in this process, on 127.0.0.1 and a port of its own (port 0),
/// in a PostgreSQL schema of its own, over ``PGModelTestDatabase`` — so a test of the service needs
/// nothing started beforehand. Users are made in one call each.
///
/// ```swift
/// let service = try await PGModelTestService.start()
/// let alice = try await service.makeUser("alice")            // pgmodel://alice_…:secret@127.0.0.1:port
/// let container = try ModelContainer(for: Trip.self, configurations: ModelConfiguration(url: alice))
/// // …
/// await service.shutdown()
/// ```
public final class PGModelTestService: Sendable {
    /// The TCP port the service listens on.
    public let port: Int
    /// The PostgreSQL schema its model tables live in.
    public let schemaName: String
    /// The database the service uses (with its password, if any: keep it out of logs).
    public let databaseURL: URL
    private let group: ServiceGroup
    private let logger: Logger
    /// The admin that registers schemas, made on first use.
    private let admin = AdminURL()

    /// One service for the whole test process, started on first use and left running until it exits:
    /// what ``PGModelTestStore`` uses when no service is given.
    public static func shared() async throws -> PGModelTestService {
        try await sharedInstance.value
    }

    private static let sharedInstance = Task { try await PGModelTestService.start() }

    private init(port: Int, schemaName: String, databaseURL: URL, group: ServiceGroup, logger: Logger) {
        self.port = port
        self.schemaName = schemaName
        self.databaseURL = databaseURL
        self.group = group
        self.logger = logger
    }

    /// Starts a service. `databaseURL` defaults to ``PGModelTestDatabase/url()``; `schemaName` to a fresh
    /// one; `configure` may change any other setting (limits, timeouts, TLS) before it starts.
    public static func start(databaseURL: URL? = nil, schemaName: String? = nil,
                             logger: Logger = Logger(label: "pgmodel.test-service"),
                             configure: (inout LineServerConfiguration) -> Void = { _ in }) async throws -> PGModelTestService {
        let url = try databaseURL ?? PGModelTestDatabase.url()
        let schema = schemaName ?? "svc_" + UUID().uuidString.lowercased().replacingOccurrences(of: "-", with: "").prefix(12)
        var configuration = LineServerConfiguration(databaseURL: url.absoluteString, host: "127.0.0.1", port: 0,
                                                    schemaName: schema, maxDatabaseConnections: 8)
        configure(&configuration)
        let server = try LineServer(configuration: configuration, logger: logger)
        let group = ServiceGroup(services: [server], logger: logger)
        Task.detached { try? await group.run() }
        let port = try await server.listeningPort()
        return PGModelTestService(port: port, schemaName: schema, databaseURL: url, group: group, logger: logger)
    }

    /// Creates a user (named `name` plus a unique suffix, so tests never collide) and returns the
    /// `pgmodel://` URL that logs in as them.
    public func makeUser(_ name: String = "user", password: String = "secret", isAdmin: Bool = false) async throws -> URL {
        let unique = name + "_" + UUID().uuidString.lowercased().replacingOccurrences(of: "-", with: "").prefix(10)
        let configuration = try PostgresStoreConfiguration.parse(databaseURL.absoluteString)
        let connection = try await PostgresConnection.connect(
            on: MultiThreadedEventLoopGroup.singleton.next(), configuration: configuration.connection, id: 1, logger: logger)
        do {
            let engine = PostgresStoreEngine(schemaName: schemaName, logger: logger)
            try await engine.bootstrap(on: EngineConnection(connection))
            _ = try await engine.createUser(name: unique, password: password, isAdmin: isAdmin, on: EngineConnection(connection))
            try await connection.close()
        } catch {
            try? await connection.close()
            throw error
        }
        var components = URLComponents()
        components.scheme = "pgmodel"
        components.user = unique
        components.password = password
        components.host = "127.0.0.1"
        components.port = port
        guard let url = components.url else {
            throw PGModelError(.invalidConfiguration, "the test service's URL could not be formed")
        }
        return url
    }

    /// Creates the tables of `schema` (or checks them) as an admin of the service, as a deployment does
    /// before its users log in: users may only register tables that exist.
    ///
    /// ```swift
    /// try await service.register(Schema([Trip.self, Stop.self]))
    /// ```
    public func register(_ schema: Schema) async throws {
        let url: URL
        if let known = admin.url {
            url = known
        } else {
            url = try await makeUser("admin", isAdmin: true)
            admin.url = url
        }
        _ = try await offCooperativePool { try ModelContainer(for: schema, configurations: ModelConfiguration(url: url)) }
    }

    /// Stops the service gracefully: open connections are answered and closed.
    public func shutdown() async {
        await group.triggerGracefulShutdown()
    }
}

/// The admin's URL, set once; two first callers may each make an admin, which does no harm.
private final class AdminURL: @unchecked Sendable {
    private let lock = NSLock()
    private var stored: URL?

    var url: URL? {
        get { lock.withLock { stored } }
        set { lock.withLock { stored = newValue } }
    }
}
