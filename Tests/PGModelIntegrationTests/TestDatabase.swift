import Foundation
import PGModel
import Testing

/// Where integration tests find PostgreSQL: `PGMODEL_TEST_DATABASE_URL`, set by scripts/test.sh.
enum TestDatabase {
    struct Missing: Error, CustomStringConvertible {
        var description: String {
            "PGMODEL_TEST_DATABASE_URL is not set: run the integration tests through scripts/test.sh, which starts PostgreSQL"
        }
    }

    static func url() throws -> String {
        guard let url = ProcessInfo.processInfo.environment["PGMODEL_TEST_DATABASE_URL"], !url.isEmpty else {
            throw Missing()
        }
        return url
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
            throw Missing()
        }
        return url
    }
}
