import Foundation
@_spi(PGModelInternals) @testable import PGModelClient
@_spi(PGModelInternals) import PGModelCore
import Testing

/// `pgmodel://` and `pgmodels://` URLs' TLS options, parsed without a server: what each value means, and
/// that every value PGModel does not understand is refused with `invalid_configuration` naming it.
@Suite("TLS configuration: pgmodel:// and pgmodels://")
struct EndpointTLSConfigurationTests {
    static func endpoint(_ url: String) throws -> RemoteModelStore.Endpoint {
        try RemoteModelStore.Endpoint(url: try #require(URL(string: url)))
    }

    /// The message of the `invalid_configuration` error `body` throws; records an issue otherwise.
    static func refusal(_ body: () throws -> Void) -> String? {
        let error = #expect(throws: PGModelError.self) { try body() }
        return error?.message
    }

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
        #expect(trusted.description == "pgmodels://alice@10.0.0.5:7432?tlsCA=/etc/pgmodel/ca.pem")
        let unchecked = try Self.endpoint("pgmodel://alice:secret@db.local?tls=true&tlsVerify=none")
        #expect(unchecked.tls == RemoteModelStore.TLS(verifiesCertificate: false))
        #expect(unchecked.description == "pgmodels://alice@db.local:7432?tlsVerify=none")
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
}
