import Foundation
@_spi(PGModelInternals) import PGModelCore
@_spi(PGModelInternals) @testable import PGModelPostgres
import Testing

/// `pgmodel_direct`: beside a transaction-mode pooler's URL, where the connections that need a session of
/// their own (the store's LISTEN, migrations) go. Parsed without a database.
@Suite("Direct endpoint beside a transaction-mode pooler")
struct DirectEndpointConfigurationTests {
    static let pooled = "postgres://app:s3cret@pgbouncer:6432/app?schema=shop&pgmodel_pooling=transaction"

    @Test("pgmodel_direct reaches PostgreSQL itself with the pooler URL's credentials, database, schema and TLS, in session mode")
    func parsed() throws {
        let config = try PostgresStoreConfiguration.parse(Self.pooled + "&pgmodel_direct=postgres:5432&sslmode=require&pgmodel_replicas=standby:5432")
        #expect(config.pooling == .transaction)
        #expect(config.host == "pgbouncer" && config.port == 6432)
        let session = config.sessionConfiguration
        #expect(session.host == "postgres" && session.port == 5432)
        #expect(session.pooling == .session)
        #expect(session.username == "app" && session.password == "s3cret" && session.database == "app")
        #expect(session.schemaName == "shop")
        #expect(session.sslMode == .require)
        #expect(session.replicas.isEmpty, "the session endpoint is the primary, never a standby")
        #expect(config.replicas.map(\.host) == ["standby"])

        let v6 = try PostgresStoreConfiguration.parse(Self.pooled + "&pgmodel_direct=[fd00::5]")
        #expect(v6.sessionConfiguration.host == "fd00::5" && v6.sessionConfiguration.port == 5432)
        let without = try PostgresStoreConfiguration.parse(Self.pooled)
        #expect(without.sessionConfiguration.host == "pgbouncer", "without it, sessions go where everything goes")
    }

    @Test("an invalid pgmodel_direct is invalid_configuration and never shows the password",
          arguments: ["pgmodel_direct=", "pgmodel_direct=h:0", "pgmodel_direct=h:x", "pgmodel_direct=a,b", "pgmodel_direct=u@h:1", "pgmodel_direct=[::1"])
    func refused(_ option: String) {
        do {
            _ = try PostgresStoreConfiguration.parse(Self.pooled + "&" + option)
            Issue.record("accepted \(option)")
        } catch let error as PGModelError {
            #expect(error.code == .invalidConfiguration)
            #expect(error.message.contains("pgmodel_direct"))
            #expect(!error.message.contains("s3cret"))
        } catch {
            Issue.record("unexpected \(error)")
        }
    }
}
