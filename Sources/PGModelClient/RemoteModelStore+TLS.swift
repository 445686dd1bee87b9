import Foundation
import NIOCore
import NIOSSL
@_spi(PGModelInternals) import PGModelCore
@_spi(PGModelInternals) import PGModelIO

@_spi(PGModelInternals) extension RemoteModelStore {
    /// How a remote store encrypts its connection to the service: on for `pgmodels://` URLs and for
    /// `pgmodel://…?tls=true`. The server's certificate is checked by default — its chain against the
    /// system's trust roots, and that it names the URL's host (a DNS name, or an IP address in its
    /// subject alternative names).
    ///
    /// | URL option | meaning |
    /// |---|---|
    /// | `tls=true` / `tls=false` | TLS on or off for `pgmodel://` (`pgmodels://` is always on) |
    /// | `tlsCA=/path/ca.pem` | trust the certificates in this PEM file instead of the system's roots |
    /// | `tlsVerify=full` / `tlsVerify=none` | check the certificate (default), or skip every check |
    ///
    /// ```swift
    /// let endpoint = try RemoteModelStore.Endpoint(url: URL(string: "pgmodels://alice:secret@db.local?tlsCA=/etc/pgmodel/ca.pem")!)
    /// #expect(endpoint.tls?.trustedCertificatesPath == "/etc/pgmodel/ca.pem")
    /// ```
    public struct TLS: Hashable, Sendable {
        /// The PEM file whose certificates are trusted instead of the system's roots (`tlsCA=`); nil
        /// trusts the system's roots.
        public var trustedCertificatesPath: String?
        /// Whether the server's certificate is checked; false only when the URL says `tlsVerify=none`,
        /// which leaves the connection open to an impostor.
        public var verifiesCertificate: Bool

        /// TLS that checks the server's certificate against `trustedCertificatesPath` (nil: the system's roots).
        ///
        /// ```swift
        /// let tls = RemoteModelStore.TLS(trustedCertificatesPath: "/etc/pgmodel/ca.pem")
        /// ```
        public init(trustedCertificatesPath: String? = nil, verifiesCertificate: Bool = true) {
            self.trustedCertificatesPath = trustedCertificatesPath
            self.verifiesCertificate = verifiesCertificate
        }

        /// The TLS a URL asks for, or nil for plain TCP. Options that contradict each other or the
        /// scheme are errors rather than guesses: a URL that says TLS must get it or fail.
        init?(scheme: String, options: [URLQueryItem]) throws {
            func last(_ name: String) -> String?? { options.last { $0.name == name }.map(\.value) }
            var enabled = scheme == "pgmodels"
            if let value = last("tls") {
                switch value ?? "" {
                case "true": enabled = true
                case "false":
                    guard !enabled else {
                        throw PGModelError(.invalidConfiguration, "a pgmodels:// URL always uses TLS; it cannot say tls=false")
                    }
                default:
                    throw PGModelError(.invalidConfiguration, "the URL's tls option must be true or false (got '\(value ?? "")')")
                }
            }
            let trusted = last("tlsCA")
            let verify = last("tlsVerify")
            guard enabled else {
                if trusted != nil || verify != nil {
                    throw PGModelError(.invalidConfiguration,
                        "the URL's tlsCA and tlsVerify options need TLS: use pgmodels:// or add tls=true")
                }
                return nil
            }
            var verifies = true
            if let verify {
                switch verify ?? "" {
                case "full": verifies = true
                case "none": verifies = false
                default:
                    throw PGModelError(.invalidConfiguration, "the URL's tlsVerify option must be full or none (got '\(verify ?? "")')")
                }
            }
            if let trusted {
                guard let path = trusted, !path.isEmpty else {
                    throw PGModelError(.invalidConfiguration, "the URL's tlsCA option needs the path of a PEM file")
                }
                guard verifies else {
                    throw PGModelError(.invalidConfiguration, "the URL's tlsCA option has no effect with tlsVerify=none; drop one of them")
                }
                self.init(trustedCertificatesPath: path)
            } else {
                self.init(verifiesCertificate: verifies)
            }
        }

        /// The options that reproduce this in a `pgmodels://` URL (empty for the defaults).
        var urlOptions: String {
            var items: [URLQueryItem] = []
            if let trustedCertificatesPath { items.append(URLQueryItem(name: "tlsCA", value: trustedCertificatesPath)) }
            if !verifiesCertificate { items.append(URLQueryItem(name: "tlsVerify", value: "none")) }
            guard !items.isEmpty else { return "" }
            var components = URLComponents()
            components.queryItems = items
            return components.string ?? ""
        }

        /// The client context: read once per store, so a missing CA file fails when the store is made
        /// (`invalid_configuration` naming it), not at each connect.
        func makeContext() throws -> NIOSSLContext {
            var configuration = TLSConfiguration.makeClientConfiguration()
            configuration.minimumTLSVersion = .tlsv12
            if verifiesCertificate {
                configuration.certificateVerification = .fullVerification
                if let trustedCertificatesPath {
                    configuration.trustRoots = .certificates(
                        try TLSFiles.certificates(at: trustedCertificatesPath, purpose: "tlsCA"))
                }
            } else {
                configuration.certificateVerification = .none
                configuration.trustRoots = .certificates([])
            }
            do {
                return try NIOSSLContext(configuration: configuration)
            } catch {
                throw PGModelError(.invalidConfiguration, "cannot set up TLS for the remote store: \(error)")
            }
        }
    }

    /// Adds the client side of TLS under the line framing; `host` is checked against the certificate
    /// and sent as SNI (an IP address is checked against the certificate's IP addresses, and not sent).
    /// The returned future completes when the handshake does, fails when it does not within `timeout`.
    static func addTLSHandlers(context: NIOSSLContext, host: String, timeout: TimeAmount,
                               to channel: any Channel) throws -> EventLoopFuture<Void> {
        let isAddress = (try? SocketAddress(ipAddress: host, port: 0)) != nil
        let handshake = channel.eventLoop.makePromise(of: Void.self)
        try channel.pipeline.syncOperations.addHandler(NIOSSLClientHandler(context: context, serverHostname: isAddress ? nil : host))
        try channel.pipeline.syncOperations.addHandler(TLSHandshakeWatcher(promise: handshake, timeout: timeout))
        return handshake.futureResult
    }

    /// The error for a connection whose TLS set-up failed: `tls_failed`, saying which check failed.
    func tlsError(_ error: any Error) -> PGModelError {
        if let error = error as? PGModelError { return error }
        let reason = TLSFailure.reason(for: error, host: endpoint.host) ?? "\(error)"
        return PGModelError(.tlsFailed, "TLS with \(endpoint) failed: \(reason)")
    }
}
