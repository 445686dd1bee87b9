import ArgumentParser
import Foundation
import PGModelPostgres

/// `--database-url` (falling back to `DATABASE_URL`) and `--schema`.
///
/// ```
/// pgmodel user list --database-url postgres://pgmodel:pgmodel@127.0.0.1:5432/pgmodel --schema public
/// ```
struct DatabaseOptions: ParsableArguments {
    @Option(name: .long, help: ArgumentHelp(
        "PostgreSQL URL: postgres://user:password@host:port/database[?schema=name&sslmode=verify-full&sslrootcert=path]. Defaults to $DATABASE_URL.",
        valueName: "url"))
    var databaseURL: String?

    @Option(name: .long, help: ArgumentHelp(
        "PostgreSQL schema of the model tables (default: the URL's schema parameter, else public).", valueName: "name"))
    var schema: String?

    /// The URL from the option or the environment.
    func resolvedURL() throws -> String {
        if let databaseURL, !databaseURL.isEmpty { return databaseURL }
        if let fromEnvironment = ProcessInfo.processInfo.environment["DATABASE_URL"], !fromEnvironment.isEmpty {
            return fromEnvironment
        }
        throw ValidationError("no database: pass --database-url or set DATABASE_URL")
    }

    /// The parsed configuration, with `--schema` applied.
    func configuration() throws -> PostgresStoreConfiguration {
        var configuration = try PostgresStoreConfiguration.parse(try resolvedURL())
        if let schema { configuration.schemaName = schema }
        return configuration
    }
}
