import Foundation
import PGModel
import PGModelTesting
import Testing

/// Where integration tests find PostgreSQL: `PGMODEL_TEST_DATABASE_URL` (scripts/test.sh sets it), else
/// PGModelTesting's private cluster, so `swift test` works with PostgreSQL installed and nothing started.
enum TestDatabase {
    static func url() throws -> String {
        try PGModelTestDatabase.url().absoluteString
    }

    /// A fresh PostgreSQL schema name, so each test has its own tables.
    static func uniqueSchema(_ prefix: String = "t") -> String {
        prefix + "_" + UUID().uuidString.lowercased().replacingOccurrences(of: "-", with: "").prefix(12)
    }

    /// A `postgres://` URL into a fresh schema.
    static func schemaURL(_ schema: String? = nil) throws -> URL {
        let base = try url()
        let separator = base.contains("?") ? "&" : "?"
        guard let url = URL(string: base + separator + "schema=" + (schema ?? uniqueSchema())) else {
            throw PGModelError(.invalidConfiguration, "the test database URL cannot take a schema parameter")
        }
        return url
    }
}
