import NIOSSL

/// Words for a failed TLS set-up, shared by the database connections and the service client: which
/// check failed and what to change, rather than BoringSSL's error stack.
///
/// ```swift
/// if let reason = TLSFailure.reason(for: error, host: "db.internal") { throw PGModelError(.tlsFailed, reason) }
/// ```
package enum TLSFailure {
    /// A sentence naming what went wrong for a TLS error; nil for any other error. `host` is the name the
    /// certificate was checked against, if the caller knows it. (PGModelPostgres looks inside PostgresNIO's
    /// errors first: `PostgresFailureText.tlsReason(for:host:)`.)
    package static func reason(for error: any Error, host: String?) -> String? {
        if let extra = error as? NIOSSLExtraError, extra == .failedToValidateHostname {
            return "the server's certificate does not name \(host.map { "'\($0)'" } ?? "the host connected to")"
        }
        if let ssl = error as? NIOSSLError {
            switch ssl {
            case .handshakeFailed(let boring):
                let text = "\(boring)"
                if text.contains("CERTIFICATE_VERIFY_FAILED") {
                    return "the server's certificate is not signed by a trusted certificate authority"
                }
                if text.contains("WRONG_VERSION_NUMBER") || text.contains("PACKET_LENGTH_TOO_LONG") || text.contains("HTTP_REQUEST") {
                    return "the peer does not speak TLS"
                }
                return "the TLS handshake failed (\(text))"
            case .noCertificateToValidate, .unableToValidateCertificate, .cannotMatchULabel, .cannotFindPeerIP:
                return "the server's certificate could not be checked (\(ssl))"
            default:
                return "TLS failed (\(ssl))"
            }
        }
        if error is BoringSSLError { return "TLS failed (\(error))" }
        return nil
    }
}
