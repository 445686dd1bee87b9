import Foundation
import NIOSSL
@_spi(PGModelInternals) import PGModelCore

/// Reads the PEM files TLS is configured with, failing with `invalid_configuration` that names the file
/// and what is wrong with it (never its contents: a key file is a secret).
///
/// ```swift
/// let roots = try TLSFiles.certificates(at: "/etc/pgmodel/ca.pem", purpose: "sslrootcert")
/// ```
package enum TLSFiles {
    /// The certificates in the PEM file at `path`; `purpose` names the option that gave the path.
    package static func certificates(at path: String, purpose: String) throws -> [NIOSSLCertificate] {
        let bytes = try contents(of: path, purpose: purpose)
        let certificates: [NIOSSLCertificate]
        do {
            certificates = try NIOSSLCertificate.fromPEMBytes(bytes)
        } catch {
            throw PGModelError(.invalidConfiguration, "the \(purpose) file '\(path)' does not hold PEM certificates")
        }
        guard !certificates.isEmpty else {
            throw PGModelError(.invalidConfiguration, "the \(purpose) file '\(path)' holds no certificate")
        }
        return certificates
    }

    /// The private key in the PEM file at `path`.
    package static func privateKey(at path: String, purpose: String) throws -> NIOSSLPrivateKey {
        let bytes = try contents(of: path, purpose: purpose)
        do {
            return try NIOSSLPrivateKey(bytes: bytes, format: .pem)
        } catch {
            throw PGModelError(.invalidConfiguration,
                "the \(purpose) file '\(path)' does not hold an unencrypted PEM private key")
        }
    }

    private static func contents(of path: String, purpose: String) throws -> [UInt8] {
        guard !path.isEmpty else {
            throw PGModelError(.invalidConfiguration, "the \(purpose) path is empty")
        }
        guard let data = FileManager.default.contents(atPath: path) else {
            throw PGModelError(.invalidConfiguration, "the \(purpose) file '\(path)' cannot be read")
        }
        return Array(data)
    }
}
