import Foundation
import Logging
@_spi(PGModelInternals) import PGModelCore
import PostgresNIO

extension PostgresConnection.Configuration {
    /// The session PGModel's own connections have (`PostgresStoreConfiguration.connection`): PostgreSQL's
    /// default search path, where its extensions were created, whatever the role's own setting (the
    /// scripts give the role `pgmodel` the path `public` alone, for psql).
    func pgmodelSession() -> Self {
        var configuration = self
        configuration.options.additionalStartupParameters = [("search_path", "\"$user\", public")]
        return configuration
    }
}

extension PostgresConnection.Configuration {
    /// A plain-text PGModel session on the database `url` names (`postgres://user:password@host:port/db`).
    static func benchmark(_ url: URL) throws -> Self {
        guard let components = URLComponents(url: url, resolvingAgainstBaseURL: false), let host = components.host else {
            throw PGModelError(.invalidConfiguration, "DATABASE_URL has no host")
        }
        return PostgresConnection.Configuration(
            host: host, port: components.port ?? 5432, username: components.user ?? "postgres",
            password: components.password, database: String(components.path.dropFirst()), tls: .disable).pgmodelSession()
    }
}

extension PostgresConnection {
    /// Drops a benchmark's schema and its registration, so runs leave nothing behind.
    func dropBenchmarkSchema(_ schema: String, logger: Logger) async throws {
        _ = try await query(PostgresQuery(unsafeSQL: "DROP SCHEMA \"\(schema)\" CASCADE"), logger: logger).collect()
        _ = try await query(PostgresQuery(unsafeSQL: "DELETE FROM pgmodel.entities WHERE schema_name = '\(schema)'"), logger: logger).collect()
    }
}
