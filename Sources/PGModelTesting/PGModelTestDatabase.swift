import Foundation
import PGModel
@_spi(PGModelInternals) import PGModelIO
@_spi(PGModelInternals) import PGModelPostgres

/// The PostgreSQL database a test uses: `PGMODEL_TEST_DATABASE_URL` when it is set, else a private,
/// throwaway cluster this process starts on first use (PostgreSQL's server programs must be installed;
/// nothing needs to be running) and removes when it exits.
///
/// ```swift
/// import PGModelTesting
///
/// let url = try PGModelTestDatabase.url()          // postgres://…
/// let container = try ModelContainer(for: Trip.self, configurations: ModelConfiguration(url: url))
/// ```
///
/// For a store of its own per test, SwiftData's way works too, with no URL at all:
/// `ModelConfiguration(isStoredInMemoryOnly: true)` gets a fresh schema in the same private cluster
/// (or in `DATABASE_URL`'s database when that is set).
public enum PGModelTestDatabase {
    /// The environment variable that names an existing database instead of the private cluster.
    public static let environmentVariable = "PGMODEL_TEST_DATABASE_URL"

    /// `PGMODEL_TEST_DATABASE_URL`, or the private cluster's `postgres://` URL (a unix socket). Throws
    /// `invalid_configuration` when neither is available, naming the package to install.
    public static func url() throws -> URL {
        if let text = ProcessInfo.processInfo.environment[environmentVariable], !text.isEmpty, let url = URL(string: text) {
            return url
        }
        return try EphemeralCluster.shared.url()
    }

    /// ``url()`` with `schema=` added: a `postgres://` URL whose model tables live in `schemaName`.
    ///
    /// ```swift
    /// let url = try PGModelTestDatabase.url(schemaName: PGModelTestDatabase.uniqueSchemaName())
    /// ```
    public static func url(schemaName: String) throws -> URL {
        let base = try url().absoluteString
        let separator = base.contains("?") ? "&" : "?"
        guard let url = URL(string: base + separator + "schema=" + schemaName) else {
            throw PGModelError(.invalidConfiguration, "the test database URL cannot take a schema parameter")
        }
        return url
    }

    /// A schema name no other test uses: `prefix`, an underscore and twelve random hex digits.
    public static func uniqueSchemaName(_ prefix: String = "t") -> String {
        prefix + "_" + UUID().uuidString.lowercased().replacingOccurrences(of: "-", with: "").prefix(12)
    }

    /// Whether the database is this process's private cluster (no `PGMODEL_TEST_DATABASE_URL`).
    public static var isPrivateCluster: Bool {
        (ProcessInfo.processInfo.environment[environmentVariable] ?? "").isEmpty
    }
}
