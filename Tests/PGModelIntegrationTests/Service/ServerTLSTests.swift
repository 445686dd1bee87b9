import Foundation
import NIOCore
@_spi(PGModelInternals) import PGModelClient
@_spi(PGModelInternals) import PGModelCore
@_spi(PGModelInternals) import PGModelIO
@_spi(PGModelInternals) import PGModelPostgres
@_spi(PGModelInternals) import PGModelServer
@_spi(PGModelInternals) import PGModelWire
import Testing

/// The service over TLS: a `pgmodels://` client against a server with a certificate made for the test,
/// and every way the two sides can disagree failing fast with a code that says so.
@Suite("Server: TLS")
struct ServerTLSTests {
    static func configuration(_ certificate: TestCertificates?) throws -> LineServerConfiguration {
        var configuration = LineServerConfiguration(
            databaseURL: try ServerTestHarness.databaseURL(), host: "127.0.0.1", port: 0, maxDatabaseConnections: 4)
        configuration.tlsCertificatePath = certificate?.certificatePath
        configuration.tlsKeyPath = certificate?.keyPath
        return configuration
    }

    static func store(_ url: String, timeout: TimeAmount = .seconds(10)) throws -> RemoteModelStore {
        try RemoteModelStore(url: try #require(URL(string: url)), requestTimeout: timeout)
    }

    /// Runs `body` and returns the PGModelError it throws; records an issue if it succeeds.
    static func failure(_ body: () async throws -> Void) async -> PGModelError? {
        do {
            try await body()
            Issue.record("expected an error")
            return nil
        } catch let error as PGModelError {
            return error
        } catch {
            Issue.record("expected a PGModelError, got \(error)")
            return nil
        }
    }

    /// The error a store on `url` fails to connect with (its connection closed afterwards).
    static func connectFailure(_ url: String, timeout: TimeAmount = .seconds(10)) async throws -> PGModelError? {
        let store = try Self.store(url, timeout: timeout)
        let error = await failure { try await store.connect() }
        await store.close()
        return error
    }

    @Test("a pgmodels:// client that trusts the certificate logs in, saves and fetches")
    func roundTripOverTLS() async throws {
        let certificate = try TestCertificates.make(names: ["localhost", "127.0.0.1"])
        let user = try await ServerTestHarness.makeUser("tls")
        let entity = ServerTestHarness.uniqueEntity("Secret")
        try await ServerTestHarness.register(ServerRemoteStoreTests.schema(entity))
        try await ServerTestHarness.withServer(configuration: try Self.configuration(certificate)) { server, port in
            #expect(server.description.contains("(TLS)"))
            let store = try Self.store("pgmodels://\(user.name):secret@127.0.0.1:\(port)?tlsCA=\(certificate.certificatePath)")
            #expect(store.endpoint.description == "pgmodels://\(user.name)@127.0.0.1:\(port)?tlsCA=\(certificate.certificatePath)")
            let hello = try await store.connect()
            #expect(hello.userID == user.id)
            try await store.prepare(ServerRemoteStoreTests.schema(entity))
            let row = ServerRemoteStoreTests.row(entity, "x", rank: 42, score: 0.5)
            _ = try await store.save(SaveRequest(inserts: [row], author: "tls"))
            let fetched = try await store.fetch(FetchRequest(entity: entity))
            #expect(fetched.map(\.id) == [row.id])
            #expect(fetched.first?.values["rank"] == .int(42))
            await store.close()

            // The same server by its DNS name, with TLS asked for by option rather than by scheme.
            let byName = try Self.store("pgmodel://\(user.name):secret@localhost:\(port)?tls=true&tlsCA=\(certificate.certificatePath)")
            #expect(try await byName.count(FetchRequest(entity: entity)) == 1)
            await byName.close()
        }
    }

    @Test("a TLS connection that said bye does not hold up graceful shutdown for the TLS close timeout (5 s)")
    func closedTLSConnectionsDoNotDelayShutdown() async throws {
        let certificate = try TestCertificates.make(names: ["127.0.0.1"])
        let user = try await ServerTestHarness.makeUser("bye")
        let clock = ContinuousClock()
        let stopping = try await ServerTestHarness.withServer(configuration: try Self.configuration(certificate)) { server, port in
            let store = try Self.store("pgmodels://\(user.name):secret@127.0.0.1:\(port)?tlsCA=\(certificate.certificatePath)")
            try await store.ping()
            await store.close()
            return clock.now
        }
        // Without reads during the close, the server would wait for a close_notify it never reads: the
        // 5 s timeout. Under 4 s tells the two apart with room for a loaded machine (2.5 s was seen).
        #expect(clock.now - stopping < .seconds(4))
    }

    @Test("a plain-text client of a TLS server gets tls_required at once, and the connection closes")
    func plainClientIsToldToUseTLS() async throws {
        let certificate = try TestCertificates.make(names: ["127.0.0.1"])
        let user = try await ServerTestHarness.makeUser("plain")
        try await ServerTestHarness.withServer(configuration: try Self.configuration(certificate)) { _, port in
            let started = ContinuousClock.now
            let error = try await Self.connectFailure("pgmodel://\(user.name):secret@127.0.0.1:\(port)")
            #expect(error?.code == .tlsRequired)
            #expect(error?.message.contains("pgmodels://") == true)
            #expect(ContinuousClock.now - started < .seconds(5))

            let raw = try await RawProtocolClient.connect(port: port)
            let answer = try await raw.request(#"{"id":1,"op":"hello","user":"x","password":"y","protocol":1}"#)
            #expect(answer.code == "tls_required")
            #expect(answer.idIsNull)
            try await raw.expectClosed(timeout: .seconds(5))
            await raw.close()
        }
    }

    @Test("a client that does not trust the certificate, or whose host it does not name, fails with tls_failed")
    func untrustedCertificateFails() async throws {
        let certificate = try TestCertificates.make(names: ["127.0.0.1"])
        let elsewhere = try TestCertificates.make(names: ["elsewhere.invalid"])
        let user = try await ServerTestHarness.makeUser("untrusted")
        try await ServerTestHarness.withServer(configuration: try Self.configuration(certificate)) { _, port in
            // The system's roots do not include a certificate made a moment ago.
            let untrusted = try await Self.connectFailure("pgmodels://\(user.name):secret@127.0.0.1:\(port)")
            #expect(untrusted?.code == .tlsFailed)
            #expect(untrusted?.message.contains("not signed by a trusted certificate authority") == true)

            // Trusting another certificate does not help.
            let other = try await Self.connectFailure(
                "pgmodels://\(user.name):secret@127.0.0.1:\(port)?tlsCA=\(elsewhere.certificatePath)")
            #expect(other?.code == .tlsFailed)

            // Skipping the checks, when asked explicitly, connects.
            let unchecked = try Self.store("pgmodels://\(user.name):secret@127.0.0.1:\(port)?tlsVerify=none")
            #expect(try await unchecked.connect().userID == user.id)
            await unchecked.close()
        }
        try await ServerTestHarness.withServer(configuration: try Self.configuration(elsewhere)) { _, port in
            // A trusted certificate for another host name.
            let misnamed = try await Self.connectFailure(
                "pgmodels://\(user.name):secret@127.0.0.1:\(port)?tlsCA=\(elsewhere.certificatePath)")
            #expect(misnamed?.code == .tlsFailed)
            #expect(misnamed?.message.contains("does not name '127.0.0.1'") == true)
        }
    }

    @Test("a TLS client of a plain server fails with tls_failed within its deadline, not a hang")
    func tlsClientOfPlainServerFails() async throws {
        let user = try await ServerTestHarness.makeUser("mismatch")
        try await ServerTestHarness.withServer(configuration: try Self.configuration(nil)) { server, port in
            #expect(!server.description.contains("TLS"))
            let started = ContinuousClock.now
            let error = try await Self.connectFailure(
                "pgmodels://\(user.name):secret@127.0.0.1:\(port)?tlsVerify=none", timeout: .seconds(2))
            #expect(error?.code == .tlsFailed)
            #expect(ContinuousClock.now - started < .seconds(8))
        }
    }

    @Test("a server whose certificate or key cannot be used does not start, and says which file")
    func badServerFilesAreRefused() async throws {
        let certificate = try TestCertificates.make(names: ["127.0.0.1"])
        var missingKey = try Self.configuration(certificate)
        missingKey.tlsKeyPath = certificate.keyPath + ".missing"
        #expect(throws: PGModelError(.invalidConfiguration, "the TLS key file '\(certificate.keyPath).missing' cannot be read")) {
            _ = try LineServer(configuration: missingKey)
        }
        var swapped = try Self.configuration(certificate)
        swapped.tlsCertificatePath = certificate.keyPath
        let notACertificate = #expect(throws: PGModelError.self) { _ = try LineServer(configuration: swapped) }
        #expect(notACertificate?.code == .invalidConfiguration)
        #expect(notACertificate?.message.contains("TLS certificate file '\(certificate.keyPath)'") == true)
        var halfConfigured = try Self.configuration(certificate)
        halfConfigured.tlsKeyPath = nil
        let error = #expect(throws: PGModelError.self) { _ = try LineServer(configuration: halfConfigured) }
        #expect(error?.code == .invalidConfiguration)
    }
}
