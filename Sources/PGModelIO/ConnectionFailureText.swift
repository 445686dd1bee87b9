import NIOCore
import NIOPosix

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Why a TCP connection could not be made, in words a person reads: "connection refused (nothing
/// listens there)", "connection timed out", "the host name did not resolve". NIO's own descriptions
/// (`SingleConnectionFailure(target: …, error: …) (errno: 111)`) name types, not causes; this is what
/// error messages quote instead, for the service and for PostgreSQL alike (PGModelPostgres unwraps
/// PostgresNIO's errors first: `PostgresFailureText.describe(_:)`).
///
/// ```swift
/// throw PGModelError(.connectionFailed, "cannot connect to \(endpoint): \(ConnectionFailureText.describe(error))")
/// ```
package enum ConnectionFailureText {
    package static func describe(_ error: any Error) -> String {
        if let error = error as? NIOConnectionError {
            if let first = error.connectionErrors.first { return describe(first.error) }
            if error.dnsAError != nil || error.dnsAAAAError != nil { return "the host name \(error.host) did not resolve" }
            return "no address of \(error.host) to connect to"
        }
        if let error = error as? IOError {
            switch error.errnoCode {
            case ECONNREFUSED: return "connection refused (nothing listens there)"
            case ETIMEDOUT: return "connection timed out"
            case EHOSTUNREACH, ENETUNREACH: return "the host is unreachable"
            case ECONNRESET: return "the connection was reset"
            default: return error.description
            }
        }
        if let error = error as? ChannelError, case .connectTimeout = error { return "connection timed out" }
        return String(describing: error)
    }
}
