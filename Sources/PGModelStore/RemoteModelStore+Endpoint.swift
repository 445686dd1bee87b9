import Foundation
import PGModelCore
import PGModelWire

extension RemoteModelStore {
    /// Where a remote store connects and as whom, parsed from `pgmodel://user:password@host:port`.
    /// Its description never shows the password.
    ///
    /// ```swift
    /// let endpoint = try RemoteModelStore.Endpoint(url: URL(string: "pgmodel://alice:secret@db.local:7432")!)
    /// print(endpoint)   // pgmodel://alice@db.local:7432
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

        /// Parses and checks a `pgmodel://` URL; throws `invalid_configuration` naming what is wrong.
        public init(url: URL) throws {
            guard url.scheme?.lowercased() == "pgmodel" else {
                throw PGModelError(
                    .invalidConfiguration, "a remote store URL starts with pgmodel:// (got scheme '\(url.scheme ?? "")')")
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
        }

        public var description: String {
            let shownHost = host.contains(":") ? "[\(host)]" : host
            return "pgmodel://\(user)@\(shownHost):\(port)"
        }
    }
}
