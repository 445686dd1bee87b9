import Foundation
@_spi(PGModelInternals) import PGModelCore
@_spi(PGModelInternals) @testable import PGModelPostgres
import PostgresNIO
import Testing

/// `postgres://` URLs' TLS options, parsed without a database: what each `sslmode` means, and that every
/// value PGModel does not understand is refused with `invalid_configuration` naming it.
@Suite("TLS configuration: postgres:// sslmode")
struct PostgresTLSConfigurationTests {
    static let database = "postgres://pgmodel:pgmodel@127.0.0.1:55432/pgmodel"

    /// The message of the `invalid_configuration` error `body` throws; records an issue otherwise.
    static func refusal(_ body: () throws -> Void) -> String? {
        let error = #expect(throws: PGModelError.self) { try body() }
        return error?.message
    }

    @Test("each sslmode maps to PostgresNIO's TLS: disable off, prefer optional, the rest enforced")
    func sslModes() throws {
        let expected: [(String, PostgresSSLMode, allowed: Bool, enforced: Bool)] = [
            ("disable", .disable, false, false), ("prefer", .prefer, true, false), ("require", .require, true, true),
            ("verify-ca", .verifyCA, true, true), ("verify-full", .verifyFull, true, true),
        ]
        for (value, mode, allowed, enforced) in expected {
            let configuration = try PostgresStoreConfiguration.parse("\(Self.database)?sslmode=\(value)&schema=app")
            #expect(configuration.sslMode == mode)
            #expect(configuration.schemaName == "app")
            #expect(configuration.connection.tls.isAllowed == allowed, "\(value)")
            #expect(configuration.connection.tls.isEnforced == enforced, "\(value)")
        }
    }

    @Test("without sslmode a URL means disable, as before TLS existed; so does the plain initializer")
    func defaults() throws {
        let parsed = try PostgresStoreConfiguration.parse(Self.database)
        #expect(parsed.sslMode == .disable)
        #expect(parsed.sslRootCertificatePath == nil)
        #expect(!parsed.connection.tls.isAllowed)
        let made = PostgresStoreConfiguration(host: "127.0.0.1", username: "pgmodel", password: nil, database: "pgmodel")
        #expect(made.sslMode == .disable)
        #expect(!made.connection.tls.isAllowed)
    }

    @Test("unknown sslmode values, allow included, are refused by name")
    func unknownModes() {
        for value in ["verify_full", "on", "", "allow", "REQUIRE"] {
            let message = Self.refusal { _ = try PostgresStoreConfiguration.parse("\(Self.database)?sslmode=\(value)") }
            #expect(message?.contains("sslmode '\(value)'") == true, "\(value)")
        }
    }

    @Test("sslrootcert is read when the configuration is made: a missing file is refused by path; system means the default roots")
    func rootCertificate() throws {
        let missing = "/nonexistent/pgmodel-\(UUID().uuidString).pem"
        let message = Self.refusal { _ = try PostgresStoreConfiguration.parse("\(Self.database)?sslmode=verify-full&sslrootcert=\(missing)") }
        #expect(message == "the sslrootcert file '\(missing)' cannot be read")
        let system = try PostgresStoreConfiguration.parse("\(Self.database)?sslmode=verify-full&sslrootcert=system")
        #expect(system.sslRootCertificatePath == nil)
        // With TLS off the file is never needed, as with libpq.
        let disabled = try PostgresStoreConfiguration.parse("\(Self.database)?sslmode=disable&sslrootcert=\(missing)")
        #expect(!disabled.connection.tls.isAllowed)
        // Not PEM at all.
        let garbage = FileManager.default.temporaryDirectory.appendingPathComponent("pgmodel-\(UUID().uuidString).pem")
        try Data("not a certificate\n".utf8).write(to: garbage)
        defer { try? FileManager.default.removeItem(at: garbage) }
        let notPEM = Self.refusal { _ = try PostgresStoreConfiguration.parse("\(Self.database)?sslmode=require&sslrootcert=\(garbage.path)") }
        #expect(notPEM?.contains("'\(garbage.path)'") == true)
    }
}
