import NIOCore
import NIOSSL
@_spi(PGModelInternals) import PGModelCore
@_spi(PGModelInternals) import PGModelIO
@_spi(PGModelInternals) import PGModelPostgres

extension LineServer {
    /// The server's TLS context from the configuration's certificate and key files, read now so that a
    /// missing or unreadable file fails the start (`invalid_configuration` naming the file) rather than
    /// the first client. Nil when neither is set.
    ///
    /// ```swift
    /// let context = try LineServer.makeTLSContext(configuration)   // nil: plain TCP
    /// ```
    static func makeTLSContext(_ configuration: LineServerConfiguration) throws -> NIOSSLContext? {
        switch (configuration.tlsCertificatePath, configuration.tlsKeyPath) {
        case (nil, nil):
            return nil
        case (nil, .some):
            throw PGModelError(.invalidConfiguration, "a TLS key was given without a certificate (--tls-certificate)")
        case (.some, nil):
            throw PGModelError(.invalidConfiguration, "a TLS certificate was given without its key (--tls-key)")
        case (let certificatePath?, let keyPath?):
            let chain = try TLSFiles.certificates(at: certificatePath, purpose: "TLS certificate")
            let key = try TLSFiles.privateKey(at: keyPath, purpose: "TLS key")
            var tls = TLSConfiguration.makeServerConfiguration(
                certificateChain: chain.map { .certificate($0) }, privateKey: .privateKey(key))
            tls.minimumTLSVersion = .tlsv12
            do {
                return try NIOSSLContext(configuration: tls)
            } catch {
                // Typically a key that does not belong to the certificate.
                throw PGModelError(.invalidConfiguration,
                    "the TLS certificate '\(certificatePath)' and key '\(keyPath)' cannot be used together: \(error)")
            }
        }
    }

    /// Adds the TLS handlers in front of the line framing of a new connection, when TLS is on.
    ///
    /// ```swift
    /// try server.addTLSHandlers(to: channel)
    /// ```
    func addTLSHandlers(to channel: any Channel) throws {
        guard let tlsContext else { return }
        // NIOSSL does not finish its own close when the peer's close_notify arrives on a half-closable
        // channel: each closed connection would linger for the 5 s TLS shutdown timeout, holding its
        // slot. Over TLS, a client's close_notify therefore ends the connection (no half-close).
        try channel.syncOptions?.setOption(.allowRemoteHalfClosure, value: false)
        let pipeline = channel.pipeline.syncOperations
        try pipeline.addHandler(PlaintextRefusal())
        try pipeline.addHandler(NIOSSLServerHandler(context: tlsContext))
        try pipeline.addHandler(TLSCloseReader())
    }
}
