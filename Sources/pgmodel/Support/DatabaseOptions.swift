import ArgumentParser
import Foundation
@_spi(PGModelInternals) import PGModelPostgres

/// `--database-url` (falling back to `DATABASE_URL`) and `--schema`.
///
/// ```
/// pgmodel user list --database-url postgres://pgmodel:pgmodel@127.0.0.1:5432/pgmodel --schema public
/// ```
struct DatabaseOptions: ParsableArguments {
    @Option(name: .long, help: ArgumentHelp(
        "PostgreSQL URL: postgres://user:password@host:port/database[?schema=name&sslmode=verify-full&sslrootcert=path]. Defaults to $DATABASE_URL, else the local cluster scripts/pg.sh starts in this checkout (postgres://pgmodel:pgmodel@127.0.0.1:55432/pgmodel, or the port it took).",
        valueName: "url"))
    var databaseURL: String?

    @Option(name: .long, help: ArgumentHelp(
        "PostgreSQL schema of the model tables (default: the URL's schema parameter, else public).", valueName: "name"))
    var schema: String?

    /// The local cluster `scripts/pg.sh start` (and `scripts/run.sh`) runs: what a README command pasted
    /// on the developer's machine talks to when nothing else is said (``LocalCluster``).
    static var localClusterURL: String { LocalCluster.url }

    /// The URL the user gave (option, then environment), or `nil`.
    var explicitURL: String? {
        if let databaseURL, !databaseURL.isEmpty { return databaseURL }
        if let fromEnvironment = ProcessInfo.processInfo.environment["DATABASE_URL"], !fromEnvironment.isEmpty {
            return fromEnvironment
        }
        return nil
    }

    /// The URL from the option or the environment, else the local cluster's.
    func resolvedURL() throws -> String {
        explicitURL ?? Self.localClusterURL
    }

    /// The parsed configuration, with `--schema` applied.
    func configuration() throws -> PostgresStoreConfiguration {
        var configuration = try PostgresStoreConfiguration.parse(try resolvedURL())
        if let schema { configuration.schemaName = schema }
        return configuration
    }
}
