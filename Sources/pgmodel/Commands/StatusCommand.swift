import ArgumentParser
import Foundation
import PGModel
@_spi(PGModelInternals) import PGModelClient
@_spi(PGModelInternals) import PGModelCore
@_spi(PGModelInternals) import PGModelIO
@_spi(PGModelInternals) import PGModelPostgres
@_spi(PGModelInternals) import PGModelWire

/// `pgmodel status`: what the database holds (registered entities, user count) and, given a server URL,
/// whether the service answers and which version it runs. Given the metrics endpoint of a running server
/// (`http://host:port`), its readiness checks instead, exiting 1 when it is not ready.
///
/// ```
/// pgmodel status --server pgmodel://alice:secret@127.0.0.1:7432
/// pgmodel status --server http://127.0.0.1:9090 --json
/// ```
struct StatusCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "status", abstract: "Show the server version, registered entities and user count.")

    @OptionGroup var database: DatabaseOptions

    @Option(help: ArgumentHelp(
        "A running service to log in to, pgmodel://user:password@host:port (pgmodels:// for TLS), or its metrics endpoint, http://host:port (pgmodel serve --metrics-port), to read its readiness. Defaults to $PGMODEL_URL.", valueName: "url"))
    var server: String?

    @Flag(help: "With an http:// --server: print the readiness report as JSON.")
    var json = false

    func run() async throws {
        // Every failure prints as `Error: <sentence> [code]`, argument checks included.
        try await reportingFailures {
            let serverURL = server ?? ProcessInfo.processInfo.environment["PGMODEL_URL"].flatMap { $0.isEmpty ? nil : $0 }

            if let serverURL, let url = URL(string: serverURL), url.scheme == "http" {
                return try await showReadiness(url)
            }
            try await reportingFailures {
                // With only a server to check, no database is needed: a client machine has none.
                if serverURL == nil || database.explicitURL != nil {
                    let configuration = try database.configuration()
                    let (schema, users) = try await DatabaseSession.run(configuration) { engine, connection in
                        (try await engine.loadSchema(on: connection), try await engine.listUsers(on: connection))
                    }
                    print("database: \(configuration.host):\(configuration.port)/\(configuration.database) (schema \(configuration.schemaName))")
                    let names = schema.entities.map(\.name)
                    print("entities: \(names.count)\(names.isEmpty ? "" : " — " + names.joined(separator: ", "))")
                    print("users: \(users.count) (\(users.filter(\.isAdmin).count) admin)")
                }

                guard let serverURL else {
                    print("server: not checked (pass --server pgmodel://user:password@host:port)")
                    return
                }
                guard let url = URL(string: serverURL) else {
                    throw CommandFailure("--server is not a valid URL")
                }
                let store = try RemoteModelStore(url: url)
                do {
                    let hello = try await store.connect()
                    print("server: \(hello.server) at \(store.endpoint.host):\(store.endpoint.port), protocol \(WireProtocol.version), logged in as \(hello.user)")
                    await store.close()
                } catch {
                    await store.close()
                    throw error
                }
            }
        }
    }
}
