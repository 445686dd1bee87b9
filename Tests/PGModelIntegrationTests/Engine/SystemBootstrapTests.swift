import Foundation
import Logging
import NIOPosix
@_spi(PGModelInternals) import PGModelClient
@_spi(PGModelInternals) import PGModelIO
@_spi(PGModelInternals) @testable import PGModelPostgres
import PostgresNIO
import Testing

/// The system SQL runs in full only where it is not in place yet (each further in-memory
/// container, and every store start, pays one read for it).
///
/// Each test in a scratch database: other suites bootstrap into the shared ones at any moment.
@Suite("System SQL bootstrap", .serialized)
struct SystemBootstrapTests {
    static let logger: Logger = {
        var logger = Logger(label: "pgmodel.test.bootstrap")
        logger.logLevel = .warning
        return logger
    }()


    func schemaComment(_ connection: PostgresConnection) async throws -> String? {
        for try await comment in try await connection.query(
            "SELECT obj_description('pgmodel'::regnamespace, 'pg_namespace')", logger: Self.logger).decode(String?.self) {
            return comment
        }
        return nil
    }

    /// A database of its own: every other suite bootstraps into the shared test database and the private
    /// cluster's (in-memory containers) at any moment, and would put the marker back between a test's
    /// change of it and its check.
    func withConnection(_ body: (PostgresConnection) async throws -> Void) async throws {
        try await ScratchDatabase.with(label: "pgmodel.test.bootstrap") { connection, _ in try await body(connection) }
    }

    @Test("a database bootstrapped by this build costs one read, and admins see which system SQL it has")
    func appliedSystemSQLIsOneRead() async throws {
        try await withConnection { connection in
            let engine = PostgresStoreEngine(logger: Self.logger)
            try await engine.bootstrap(on: EngineConnection(connection))
            #expect(try await schemaComment(connection) == SystemSQL.marker)
            #expect(try await engine.isBootstrapped(on: EngineConnection(connection)))
            let again = try await EngineTestStore.statements(on: EngineConnection(connection)) { try await engine.bootstrap(on: $0) }
            #expect(again.count == 1, "\(again)")
            #expect(SystemSQL.fingerprint.count == 16)
            #expect(SystemSQL.marker.contains(SystemSQL.fingerprint))
        }
    }

    @Test("another build's marker (or none) runs every file again and leaves this build's marker")
    func anotherMarkerRunsTheFiles() async throws {
        try await withConnection { connection in
            let engine = PostgresStoreEngine(logger: Self.logger)
            try await engine.bootstrap(on: EngineConnection(connection))
            for stale in ["'PGModel system objects (system SQL 0000000000000000)'", "NULL"] {
                try await connection.query(PostgresQuery(unsafeSQL: "COMMENT ON SCHEMA pgmodel IS \(stale)"), logger: Self.logger)
                #expect(try await engine.isBootstrapped(on: EngineConnection(connection)) == false)
                let full = try await EngineTestStore.statements(on: EngineConnection(connection)) { try await engine.bootstrap(on: $0) }
                #expect(full.count > SystemSQL.files.count, "\(full.count) statements")
                #expect(try await schemaComment(connection) == SystemSQL.marker)
            }
        }
    }
}
