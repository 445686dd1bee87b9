@_spi(PGModelInternals) import PGModelCore

/// How connections to PostgreSQL use TLS: the database URL's `sslmode`, with libpq's meanings.
///
/// | mode | encrypted | certificate checked | host name checked |
/// |---|---|---|---|
/// | `disable` (the default) | no | — | — |
/// | `prefer` | if the server offers it | only with `sslrootcert` | no |
/// | `require` | always; fails otherwise | only with `sslrootcert` | no |
/// | `verify-ca` | always | yes | no |
/// | `verify-full` | always | yes | yes |
///
/// ```swift
/// let config = try PostgresStoreConfiguration.parse("postgres://app:secret@db.internal/app?sslmode=verify-full")
/// #expect(config.sslMode == .verifyFull)
/// ```
@_spi(PGModelInternals) public enum PostgresSSLMode: String, Sendable, CaseIterable, CustomStringConvertible {
    /// Plain TCP: PGModel never asks the server for TLS. PGModel's default when the URL has no
    /// `sslmode` (libpq's is `prefer`).
    case disable
    /// TLS if the server offers it, plain TCP if it does not; the certificate is not checked unless
    /// `sslrootcert` is given. libpq's default (not PGModel's).
    case prefer
    /// TLS or no connection; the certificate is not checked unless `sslrootcert` is given (libpq does
    /// the same), so this protects against eavesdropping, not against an impostor.
    case require
    /// TLS, with the server's certificate chain checked against `sslrootcert` (else the system's trust
    /// roots); any host name is accepted.
    case verifyCA = "verify-ca"
    /// TLS, with the chain checked and the certificate required to name the URL's host (a DNS name, or
    /// an IP address in its subject alternative names).
    case verifyFull = "verify-full"

    /// The mode a URL's `sslmode` value names; throws `invalid_configuration` naming the value for one
    /// PGModel does not know (libpq's `allow` included: PostgresNIO cannot try plain TCP first).
    ///
    /// ```swift
    /// let mode = try PostgresSSLMode(parsing: "verify-full")
    /// ```
    public init(parsing text: String) throws {
        guard let mode = PostgresSSLMode(rawValue: text) else {
            let known = Self.allCases.map(\.rawValue).joined(separator: ", ")
            if text == "allow" {
                throw PGModelError(.invalidConfiguration,
                    "the database URL's sslmode 'allow' is not supported; use one of \(known)")
            }
            throw PGModelError(.invalidConfiguration,
                "the database URL's sslmode '\(text)' is not one of \(known)")
        }
        self = mode
    }

    /// The `sslmode` value, as written in a URL.
    public var description: String { rawValue }
}
