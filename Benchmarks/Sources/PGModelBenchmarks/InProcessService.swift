import Foundation
import Logging
import PGModel
import PGModelServer
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

    /// Adds a user (an admin when `admin`) through `connection`, then starts a server on `schema` of the
    /// database of `databaseURL`.
    static func start(databaseURL: URL, schema: String, admin: Bool = false, on connection: PostgresConnection,
                      logger: Logger) async throws -> InProcessService {
        let userName = "bench_" + UUID().uuidString.lowercased().prefix(8)
        _ = try await connection.query(PostgresQuery(
            unsafeSQL: "INSERT INTO pgmodel.users (name, password_hash, is_admin) VALUES ($1, crypt('secret', gen_salt('bf', 4)), $2)",
            binds: { var b = PostgresBindings(); b.append(userName); b.append(admin); return b }()), logger: logger).collect()
        var serverURL = URLComponents(url: databaseURL, resolvingAgainstBaseURL: false)
        serverURL?.queryItems = nil
        var quiet = Logger(label: "bench.server")
        quiet.logLevel = .error
        let server = try LineServer(configuration: LineServerConfiguration(
            databaseURL: serverURL?.url?.absoluteString ?? databaseURL.absoluteString, host: "127.0.0.1", port: 0, schemaName: schema), logger: quiet)
        let running = Task { try await server.run() }
        let port = try await server.listeningPort()
        guard let url = URL(string: "pgmodel://\(userName):secret@127.0.0.1:\(port)") else {
            running.cancel()
            throw PGModelError(.invalidConfiguration, "cannot form the service URL")
        }
        return InProcessService(url: url, userName: userName, running: running)
    }

    func stop() async {
        running.cancel()
        _ = try? await running.value
    }
}
