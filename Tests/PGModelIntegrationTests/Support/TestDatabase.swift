import Foundation
@_spi(PGModelInternals) import PGModel
import PGModelTesting

/// Where integration tests find PostgreSQL: `PGMODEL_TEST_DATABASE_URL` (scripts/test.sh sets it), else
/// PGModelTesting's private cluster, so `swift test` works with PostgreSQL installed and nothing started.
enum TestDatabase {
    static func url() throws -> String {
        try PGModelTestDatabase.url().absoluteString
    }

    /// A fresh PostgreSQL schema name, so each test has its own tables.
    static func uniqueSchema(_ prefix: String = "t") -> String {
        PGModelTestDatabase.uniqueSchemaName(prefix)
    }

    /// A `postgres://` URL into a fresh schema.
    static func schemaURL(_ schema: String? = nil) throws -> URL {
        try PGModelTestDatabase.url(schemaName: schema ?? uniqueSchema())
    }
}
