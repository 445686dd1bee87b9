import Foundation
@_spi(PGModelInternals) import PGModelCore
@_spi(PGModelInternals) import PGModelIO
@_spi(PGModelInternals) import PGModelWire

@_spi(PGModelInternals) extension RemoteModelStore {
    /// Where a remote store connects, as whom and how securely, parsed from
    /// `pgmodel://user:password@host:port` (plain TCP) or `pgmodels://user:password@host:port` (TLS).
    /// Its description never shows the password.
    ///
    /// TLS options (see ``TLS``): `tls=true` turns TLS on for a `pgmodel://` URL; `tlsCA=/path/ca.pem`
    /// trusts the certificates in that PEM file instead of the system's roots; `tlsVerify=none` skips
    /// checking the server's certificate (encryption without authentication: for tests only).
    ///
    /// ```swift
    /// let endpoint = try RemoteModelStore.Endpoint(url: URL(string: "pgmodels://alice:secret@db.local:7432?tlsCA=/etc/pgmodel/ca.pem")!)
    /// print(endpoint)   // pgmodels://alice@db.local:7432?tlsCA=/etc/pgmodel/ca.pem
    /// ```
    public struct Endpoint: Hashable, Sendable, CustomStringConvertible {
        /// The server's host name or address.
        public var host: String
        /// The server's port; 7432 unless the URL names one.
        public var port: Int
        /// The PGModel user name sent in `hello`.
        public var user: String
        /// The password sent in `hello`.
        package var password: String
        /// How the connection is encrypted; nil for plain TCP.
        public var tls: TLS?

        /// Parses and checks a `pgmodel://` or `pgmodels://` URL; throws `invalid_configuration` naming
        /// what is wrong.
        public init(url: URL) throws {
            let scheme = url.scheme?.lowercased()
            guard scheme == "pgmodel" || scheme == "pgmodels" else {
                throw PGModelError(
                    .invalidConfiguration, "a remote store URL starts with pgmodel:// or pgmodels:// (got scheme '\(url.scheme ?? "")')")
            }
            guard let host = url.host(percentEncoded: false), !host.isEmpty else {
                throw PGModelError(.invalidConfiguration, "the pgmodel:// URL has no host")
            }
            guard let user = url.user(percentEncoded: false), !user.isEmpty else {
                throw PGModelError(.invalidConfiguration, "the pgmodel:// URL has no user name (pgmodel://user:password@host:port)")
            }
            let port = url.port ?? WireProtocol.defaultPort
            guard (1...65535).contains(port) else {
                throw PGModelError(.invalidConfiguration, "the pgmodel:// URL's port \(port) is not between 1 and 65535")
            }
            guard url.path.isEmpty || url.path == "/" else {
                throw PGModelError(.invalidConfiguration, "a pgmodel:// URL has no path (got '\(url.path)')")
            }
            self.host = host
            self.port = port
            self.user = user
            self.password = url.password(percentEncoded: false) ?? ""
            let items = URLComponents(url: url, resolvingAgainstBaseURL: false)?.queryItems ?? []
            self.tls = try TLS(scheme: scheme ?? "", options: items)
        }

        public var description: String {
            let shownHost = host.contains(":") ? "[\(host)]" : host
            guard let tls else { return "pgmodel://\(user)@\(shownHost):\(port)" }
            return "pgmodels://\(user)@\(shownHost):\(port)\(tls.urlOptions)"
        }
    }
}
