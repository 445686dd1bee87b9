import Logging
import NIOPosix
@_spi(PGModelInternals) import PGModelPostgres
import PostgresNIO

/// A database of its own on the test cluster for one upgrade test (system SQL applied by hand, file by
/// file), dropped afterwards whatever happens.
enum ScratchDatabase {
    static func with(label: String, _ body: (PostgresConnection, Logger) async throws -> Void) async throws {
        var logger = Logger(label: label)
        logger.logLevel = .warning
        let base = try PostgresStoreConfiguration.parse(try TestDatabase.url()).connection
        let admin = try await PostgresConnection.connect(on: MultiThreadedEventLoopGroup.singleton.next(), configuration: base, id: 30, logger: logger)
        let database = "pgmodel_upgrade_" + ServerTestHarness.uniqueSuffix()
        let drop = PostgresQuery(unsafeSQL: "DROP DATABASE IF EXISTS \(database) WITH (FORCE)")
        _ = try await admin.query(PostgresQuery(unsafeSQL: "CREATE DATABASE \(database)"), logger: logger).collect()
        do {
            var scratch = base
            scratch.database = database
            let connection = try await PostgresConnection.connect(on: MultiThreadedEventLoopGroup.singleton.next(), configuration: scratch, id: 31, logger: logger)
            do {
                try await body(connection, logger)
                try await connection.close()
            } catch {
                try? await connection.close()
                throw error
            }
        } catch {
            _ = try? await admin.query(drop, logger: logger).collect()
            try? await admin.close()
            throw error
        }
        _ = try await admin.query(drop, logger: logger).collect()
        try await admin.close()
    }
}
