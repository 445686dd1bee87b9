import Foundation
import Logging
@_spi(PGModelInternals) import PGModel
@_spi(PGModelInternals) import PGModelClient
@_spi(PGModelInternals) import PGModelCore
@_spi(PGModelInternals) import PGModelIO
@_spi(PGModelInternals) import PGModelPostgres
@_spi(PGModelInternals) import PGModelServer
import PostgresNIO

/// The line-protocol service run in this process on loopback, and a user it knows (password `secret`):
/// what the service benchmarks (`--fetch`, `--rls`, `--phases`) measure through.
///
/// ```swift
/// let service = try await InProcessService.start(databaseURL: url, schema: schema, on: connection, logger: logger)
/// let remote = try ModelContainer(for: BenchProduct.self, configurations: ModelConfiguration(url: service.url))
/// await service.stop()
/// ```
struct InProcessService {
    /// `pgmodel://user:secret@127.0.0.1:port`.
    let url: URL
    /// The user the URL logs in as.
    let userName: String
    let running: Task<Void, any Error>
    /// The `pgmodel serve` process, when the service runs in one of its own.
    var child: Process? = nil

    /// Adds a user (an admin when `admin`) through `connection`, then starts a server on `schema` of the
    /// database of `databaseURL`.
    static func start(databaseURL: URL, schema: String, admin: Bool = false, on connection: PostgresConnection,
                      logger: Logger, configure: (inout LineServerConfiguration) -> Void = { _ in }) async throws -> InProcessService {
        let userName = "bench_" + UUID().uuidString.lowercased().prefix(8)
        _ = try await connection.query(PostgresQuery(
            unsafeSQL: "INSERT INTO pgmodel.users (name, password_hash, is_admin) VALUES ($1, crypt('secret', gen_salt('bf', 4)), $2)",
            binds: { var b = PostgresBindings(); b.append(userName); b.append(admin); return b }()), logger: logger).collect()
        var serverURL = URLComponents(url: databaseURL, resolvingAgainstBaseURL: false)
        serverURL?.queryItems = nil
        var quiet = Logger(label: "bench.server")
        quiet.logLevel = .error
        var configuration = LineServerConfiguration(
            databaseURL: serverURL?.url?.absoluteString ?? databaseURL.absoluteString, host: "127.0.0.1", port: 0, schemaName: schema)
        if let pooled = servicePoolURL {
            // The data pool through a pooler (or `?pgmodel_pooling=transaction` on the same database, to
            // price the per-transaction identity alone); LISTEN stays on the benchmark's own URL.
            configuration.directDatabaseURL = configuration.databaseURL
            configuration.databaseURL = pooled
        }
        configure(&configuration)
        let server = try LineServer(configuration: configuration, logger: quiet)
        let running = Task { try await server.run() }
        let port = try await server.listeningPort()
        guard let url = URL(string: "pgmodel://\(userName):secret@127.0.0.1:\(port)") else {
            running.cancel()
            throw PGModelError(.invalidConfiguration, "cannot form the service URL")
        }
        return InProcessService(url: url, userName: userName, running: running)
    }

    /// `PGMODEL_BENCH_SERVICE_DATABASE_URL`: the URL of the service's data pool when it is not the
    /// benchmark's database URL, e.g. PgBouncer's in transaction mode
    /// (`postgres://…:6432/db?pgmodel_pooling=transaction`, from `scripts/pgbouncer.sh start`).
    static var servicePoolURL: String? {
        ProcessInfo.processInfo.environment["PGMODEL_BENCH_SERVICE_DATABASE_URL"].flatMap { $0.isEmpty ? nil : $0 }
    }

    func stop() async {
        running.cancel()
        _ = try? await running.value
        if let child, child.isRunning {
            child.terminate()
            child.waitUntilExit()
        }
    }

    /// A `pgmodel serve` child process (the release binary at `binary`) on `schema`, as the service is
    /// deployed, instead of a server in this process; a user is added as ``start(databaseURL:schema:admin:on:logger:)`` does.
    static func startChild(binary: String, databaseURL: URL, schema: String, on connection: PostgresConnection,
                           logger: Logger) async throws -> InProcessService {
        let userName = "bench_" + UUID().uuidString.lowercased().prefix(8)
        _ = try await connection.query(PostgresQuery(
            unsafeSQL: "INSERT INTO pgmodel.users (name, password_hash, is_admin) VALUES ($1, crypt('secret', gen_salt('bf', 4)), false)",
            binds: { var b = PostgresBindings(); b.append(userName); return b }()), logger: logger).collect()
        var serverURL = URLComponents(url: databaseURL, resolvingAgainstBaseURL: false)
        serverURL?.queryItems = nil
        let port = 20_000 + Int.random(in: 0..<20_000)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: binary)
        process.arguments = ["serve", "--port", "\(port)", "--database-url", serverURL?.url?.absoluteString ?? databaseURL.absoluteString,
                             "--schema", schema]
        if let pooled = servicePoolURL {
            process.arguments?[4] = pooled
            process.arguments? += ["--direct-url", serverURL?.url?.absoluteString ?? databaseURL.absoluteString]
        }
        process.standardOutput = FileHandle.nullDevice
        if ProcessInfo.processInfo.environment["PGMODEL_BENCH_SERVER_STDERR"] == nil { process.standardError = FileHandle.nullDevice }
        try process.run()
        guard let url = URL(string: "pgmodel://\(userName):secret@127.0.0.1:\(port)") else {
            process.terminate()
            throw PGModelError(.invalidConfiguration, "cannot form the service URL")
        }
        // Ready when it answers a ping.
        let probe = try RemoteModelStore(url: url)
        defer { Task { await probe.close() } }
        for _ in 0..<200 {
            if (try? await probe.ping()) != nil {
                return InProcessService(url: url, userName: userName, running: Task {}, child: process)
            }
            try await Task.sleep(for: .milliseconds(50))
        }
        process.terminate()
        throw PGModelError(.connectionFailed, "pgmodel serve did not answer on port \(port)")
    }
}

extension InProcessService {
    /// The release `pgmodel` named by `--service-binary PATH` on the command line, if any.
    static var binaryArgument: String? {
        let arguments = CommandLine.arguments
        return arguments.firstIndex(of: "--service-binary").flatMap { arguments.indices.contains($0 + 1) ? arguments[$0 + 1] : nil }
    }

    /// ``startChild(binary:databaseURL:schema:on:logger:)`` with `binary`, else a server in this process.
    static func start(binary: String?, databaseURL: URL, schema: String, on connection: PostgresConnection,
                      logger: Logger) async throws -> InProcessService {
        if let binary {
            return try await startChild(binary: binary, databaseURL: databaseURL, schema: schema, on: connection, logger: logger)
        }
        return try await start(databaseURL: databaseURL, schema: schema, on: connection, logger: logger)
    }
}

extension InProcessService {
    /// Gives every `BenchProduct` row of `schema` to this service's user (and analyzes the table), then
    /// opens this service's remote store and a direct store on `directURL`, both prepared for `schema`'s
    /// entities: a user's fetch through one and the same fetch on the other then see the same rows.
    func storesOverOwnedProducts(schema: String, description: SchemaDescription, directURL: URL,
                                 on connection: PostgresConnection, logger: Logger) async throws -> (remote: RemoteModelStore, direct: PostgresModelStore, entity: String) {
        _ = try await connection.query(PostgresQuery(
            unsafeSQL: "UPDATE \"\(schema)\".\"bench_product\" SET owner_id = (SELECT id FROM pgmodel.users WHERE name = $1)",
            binds: { var b = PostgresBindings(); b.append(userName); return b }()), logger: logger).collect()
        _ = try await connection.query(PostgresQuery(unsafeSQL: "VACUUM ANALYZE \"\(schema)\".\"bench_product\""), logger: logger).collect()
        let remote = try RemoteModelStore(url: url)
        let direct = PostgresModelStore(configuration: try PostgresStoreConfiguration.parse(directURL.absoluteString),
                                        eventLoop: MultiThreadedEventLoopGroup.singleton.next())
        try await direct.prepare(description)
        try await remote.prepare(description)
        return (remote, direct, description.entities.first { $0.name.contains("BenchProduct") }?.name ?? "BenchProduct")
    }
}
