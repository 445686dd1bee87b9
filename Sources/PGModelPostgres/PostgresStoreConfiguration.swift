import Foundation
import PGModelCore
import PostgresNIO

/// Where the PostgreSQL store is, parsed from a `postgres://` URL.
///
/// `postgres://user:password@host:port/database?schema=name` — the schema (default `public`) holds
/// the model tables. TLS is off: PGModel targets a database on the same host or private network.
///
/// ```swift
/// let config = try PostgresStoreConfiguration.parse("postgres://pgmodel:pgmodel@127.0.0.1:55432/pgmodel")
/// ```
public struct PostgresStoreConfiguration: Sendable {
    public var host: String
    public var port: Int
    public var username: String
    public var password: String?
    public var database: String
    /// The PostgreSQL schema holding model tables.
    public var schemaName: String

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
        guard let host = components.host, !host.isEmpty else {
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
        for item in components.queryItems ?? [] where item.name == "schema" {
            guard let value = item.value, Naming.isValidIdentifier(value) else {
                throw PGModelError(.invalidConfiguration, "the database URL's schema parameter is not a plain identifier")
            }
            config.schemaName = value
        }
        return config
    }

    /// How long opening one connection may take.
    public var connectTimeout: TimeAmount = .seconds(10)

    /// A single connection's configuration.
    public var connection: PostgresConnection.Configuration {
        var configuration = PostgresConnection.Configuration(host: host, port: port, username: username, password: password,
                                                             database: database, tls: .disable)
        configuration.options.connectTimeout = connectTimeout
        return configuration
    }

}
