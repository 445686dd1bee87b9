import Foundation
import Logging
import NIOCore
import NIOPosix
@_spi(PGModelInternals) @testable import PGModelClient
@_spi(PGModelInternals) import PGModelCore
@_spi(PGModelInternals) @testable import PGModelIO
@_spi(PGModelInternals) @testable import PGModelPostgres
import PostgresNIO
import Testing


/// The public copy of the test cluster's certificate (scripts/lib.sh), if the cluster has one.
let testClusterRootCertificate = ProcessInfo.processInfo.environment["PGMODEL_TEST_PG_SSLROOTCERT"].flatMap { $0.isEmpty ? nil : $0 }

/// `sslmode` against the test cluster, which scripts/lib.sh runs with `ssl = on` and a self-signed
/// certificate whose public copy is at `$PGMODEL_TEST_PG_SSLROOTCERT`. Every check asks PostgreSQL
/// itself (`pg_stat_ssl`) whether the connection is encrypted.
@Suite("PostgreSQL: sslmode", .timeLimit(.minutes(2)), .enabled(if: testClusterRootCertificate != nil,
                                       "PGMODEL_TEST_PG_SSLROOTCERT is not set: scripts/test.sh sets it for the embedded cluster"))
struct PostgresTLSTests {
    static var rootCertificate: String? { testClusterRootCertificate }

    /// The test database's URL with `options` added, and its host replaced when `host` is given.
    static func url(_ options: String, host: String? = nil) throws -> String {
        var components = try #require(URLComponents(string: try ServerTestHarness.databaseURL()))
        if let host { components.host = host }
        let text = try #require(components.string)
        return text + (text.contains("?") ? "&" : "?") + options
    }

    /// Whether PostgreSQL says the connection `configuration` opens is encrypted.
    static func isEncrypted(_ configuration: PostgresStoreConfiguration) async throws -> Bool {
        let connection = try await PostgresConnection.connect(
            on: MultiThreadedEventLoopGroup.singleton.next(), configuration: configuration.connection, id: 1,
            logger: ServerTestHarness.logger)
        do {
            let result = try await encrypted(on: connection)
            try await connection.close()
            return result
        } catch {
            try? await connection.close()
            throw error
        }
    }

    static func encrypted(on connection: PostgresConnection) async throws -> Bool {
        let rows = try await connection.query("SELECT ssl FROM pg_stat_ssl WHERE pid = pg_backend_pid()", logger: ServerTestHarness.logger)
        for try await ssl in rows.decode(Bool.self) { return ssl }
        Issue.record("pg_stat_ssl has no row for this connection")
        return false
    }

    @Test("require encrypts; prefer encrypts when the server offers TLS; disable, and no sslmode, do not")
    func requireEncrypts() async throws {
        let require = try PostgresStoreConfiguration.parse(try Self.url("sslmode=require"))
        #expect(require.sslMode == .require)
        #expect(try await Self.isEncrypted(require))
        #expect(try await !Self.isEncrypted(PostgresStoreConfiguration.parse(try Self.url("sslmode=disable"))))
        #expect(try await Self.isEncrypted(PostgresStoreConfiguration.parse(try Self.url("sslmode=prefer"))))
        let byDefault = try PostgresStoreConfiguration.parse(try ServerTestHarness.databaseURL())
        #expect(byDefault.sslMode == .disable)
        #expect(try await !Self.isEncrypted(byDefault))
    }

    @Test("verify-full connects with the cluster's certificate as root, by name and by address")
    func verifyFullWithRootCertificate() async throws {
        let root = try #require(Self.rootCertificate)
        for host in ["localhost", "127.0.0.1"] {
            let configuration = try PostgresStoreConfiguration.parse(try Self.url("sslmode=verify-full&sslrootcert=\(root)", host: host))
            #expect(configuration.sslRootCertificatePath == root)
            #expect(try await Self.isEncrypted(configuration), "host \(host)")
        }
        let verifyCA = try PostgresStoreConfiguration.parse(try Self.url("sslmode=verify-ca&sslrootcert=\(root)"))
        #expect(try await Self.isEncrypted(verifyCA))
    }

    @Test("verify-full against the system's roots fails through the pool with tls_failed, not connection_failed")
    func verifyFullWithoutTrustFails() async throws {
        let configuration = try PostgresStoreConfiguration.parse(try Self.url("sslmode=verify-full"))
        let pool = ConnectionPool(configuration: configuration, maximumConnections: 1,
                                  eventLoopGroup: MultiThreadedEventLoopGroup.singleton, logger: ServerTestHarness.logger)
        let error = await #expect(throws: PGModelError.self) {
            try await pool.withConnection(scope: .trusted, deadline: .seconds(10), operation: "test") { _ in }
        }
        #expect(error?.code == .tlsFailed)
        #expect(error?.message.contains("not signed by a trusted certificate authority") == true)
        await pool.close()
    }

    @Test("the direct store's pool and its change listener both connect encrypted under sslmode=require")
    func poolAndListenerAreEncrypted() async throws {
        let schemaName = "tls_" + ServerTestHarness.uniqueSuffix()
        let configuration = try PostgresStoreConfiguration.parse(try Self.url("sslmode=require"))
        let pool = ConnectionPool(configuration: configuration, maximumConnections: 1,
                                  eventLoopGroup: MultiThreadedEventLoopGroup.singleton, logger: ServerTestHarness.logger)
        let pooled = try await pool.withConnection(scope: .trusted, deadline: .seconds(10), operation: "test") { try await Self.encrypted(on: $0.connection) }
        #expect(pooled)
        await pool.close()

        let listener = ChangeListener(configuration: configuration.connection, schemaName: schemaName,
                                      eventLoop: MultiThreadedEventLoopGroup.singleton.next(), logger: ServerTestHarness.logger)
        var signals = listener.signals().makeAsyncIterator()
        // The first signal says the listener is connected and listening.
        #expect(await signals.next()?.kind == .reconnected)
        let name = ChangeListener.applicationName(schemaName)
        let listening = try await ServerTestHarness.withDatabase { _, connection in
            let rows = try await connection.connection.query(
                "SELECT s.ssl FROM pg_stat_ssl s JOIN pg_stat_activity a USING (pid) WHERE a.application_name = \(name)",
                logger: ServerTestHarness.logger)
            var values: [Bool] = []
            for try await ssl in rows.decode(Bool.self) { values.append(ssl) }
            return values
        }
        #expect(listening == [true])
        await listener.close()
    }

    @Test("an unknown sslmode is a typed error naming it, before anything connects")
    func unknownModeIsRefused() throws {
        let error = #expect(throws: PGModelError.self) { try PostgresStoreConfiguration.parse(try Self.url("sslmode=verify-everything")) }
        #expect(error?.code == .invalidConfiguration)
        #expect(error?.message.contains("'verify-everything'") == true)
    }
}
