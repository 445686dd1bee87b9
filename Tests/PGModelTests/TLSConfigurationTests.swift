import Foundation
@_spi(PGModelInternals) @testable import PGModel
@_spi(PGModelInternals) @testable import PGModelClient
@_spi(PGModelInternals) import PGModelCore
@_spi(PGModelInternals) @testable import PGModelIO
@_spi(PGModelInternals) @testable import PGModelPostgres
@_spi(PGModelInternals) import PGModelWire
import PostgresNIO
import Testing


/// The TLS options of both URLs, parsed without a server or a database: what each value means, and
/// that every value PGModel does not understand is refused with `invalid_configuration` naming it.
@Suite("TLS configuration")
struct TLSConfigurationTests {
    static let database = "postgres://pgmodel:pgmodel@127.0.0.1:55432/pgmodel"

    static func endpoint(_ url: String) throws -> RemoteModelStore.Endpoint {
        try RemoteModelStore.Endpoint(url: try #require(URL(string: url)))
    }

    /// The message of the `invalid_configuration` error `body` throws; records an issue otherwise.
    static func refusal(_ body: () throws -> Void) -> String? {
        let error = #expect(throws: PGModelError.self) { try body() }
        #expect(error?.code == .invalidConfiguration)
        return error?.message
    }

    // MARK: postgres:// sslmode

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

    // MARK: pgmodel:// and pgmodels://

    @Test("pgmodels:// and tls=true turn TLS on with full verification; pgmodel:// and tls=false leave it off")
    func schemesAndTLSOption() throws {
        #expect(try Self.endpoint("pgmodels://alice:secret@db.local").tls == RemoteModelStore.TLS())
        #expect(try Self.endpoint("pgmodel://alice:secret@db.local?tls=true").tls == RemoteModelStore.TLS())
        #expect(try Self.endpoint("pgmodel://alice:secret@db.local").tls == nil)
        #expect(try Self.endpoint("pgmodel://alice:secret@db.local?tls=false&requestTimeout=5").tls == nil)
        let secure = try Self.endpoint("PGMODELS://alice:secret@db.local:9000")
        #expect(secure.tls?.verifiesCertificate == true)
        #expect(secure.port == 9000)
        #expect(secure.description == "pgmodels://alice@db.local:9000")
    }

    @Test("tlsCA names the trusted certificates and tlsVerify=none skips the checks; both show in the description, the password never")
    func trustOptions() throws {
        let trusted = try Self.endpoint("pgmodels://alice:secret@10.0.0.5?tlsCA=/etc/pgmodel/ca.pem")
        #expect(trusted.tls == RemoteModelStore.TLS(trustedCertificatesPath: "/etc/pgmodel/ca.pem"))
        #expect(trusted.description == "pgmodels://alice@10.0.0.5:\(WireProtocol.defaultPort)?tlsCA=/etc/pgmodel/ca.pem")
        let unchecked = try Self.endpoint("pgmodel://alice:secret@db.local?tls=true&tlsVerify=none")
        #expect(unchecked.tls == RemoteModelStore.TLS(verifiesCertificate: false))
        #expect(unchecked.description == "pgmodels://alice@db.local:\(WireProtocol.defaultPort)?tlsVerify=none")
        #expect(!unchecked.description.contains("secret"))
        #expect(try Self.endpoint("pgmodels://alice:secret@db.local?tlsVerify=full").tls?.verifiesCertificate == true)
    }

    @Test("options that contradict each other or the scheme are refused, each naming the option")
    func contradictions() {
        let cases: [(String, String)] = [
            ("pgmodels://a:b@h?tls=false", "cannot say tls=false"),
            ("pgmodel://a:b@h?tls=yes", "tls option must be true or false (got 'yes')"),
            ("pgmodel://a:b@h?tlsCA=/ca.pem", "need TLS"),
            ("pgmodel://a:b@h?tlsVerify=none", "need TLS"),
            ("pgmodels://a:b@h?tlsVerify=maybe", "tlsVerify option must be full or none (got 'maybe')"),
            ("pgmodels://a:b@h?tlsCA=", "needs the path of a PEM file"),
            ("pgmodels://a:b@h?tlsCA=/ca.pem&tlsVerify=none", "no effect with tlsVerify=none"),
            ("pgmodelx://a:b@h", "pgmodel:// or pgmodels://"),
        ]
        for (url, words) in cases {
            let message = Self.refusal { _ = try Self.endpoint(url) }
            #expect(message?.contains(words) == true, "\(url): \(message ?? "")")
        }
    }

    @Test("a store whose tlsCA file is missing fails when it is made, naming the file; pgmodels:// opens a remote store")
    func storeReadsCAFileUpFront() throws {
        let missing = "/nonexistent/pgmodel-\(UUID().uuidString).pem"
        let message = Self.refusal {
            _ = try RemoteModelStore(url: try #require(URL(string: "pgmodels://alice:secret@127.0.0.1?tlsCA=\(missing)")))
        }
        #expect(message == "the tlsCA file '\(missing)' cannot be read")
        let opened = try ModelStores.open(
            url: try #require(URL(string: "pgmodels://alice:secret@127.0.0.1:1?tlsVerify=none")),
            isStoredInMemoryOnly: false, requestTimeout: .seconds(1))
        #expect(opened.store is RemoteModelStore)
    }
}
