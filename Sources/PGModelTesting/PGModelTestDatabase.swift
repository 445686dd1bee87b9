import Foundation
import PGModelIO
import PGModelPostgres

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

    /// Whether the database is this process's private cluster (no `PGMODEL_TEST_DATABASE_URL`).
    public static var isPrivateCluster: Bool {
        (ProcessInfo.processInfo.environment[environmentVariable] ?? "").isEmpty
    }
}
