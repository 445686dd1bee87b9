@_spi(PGModelInternals) import PGModelIO
import PostgresNIO

/// ``ConnectionFailureText`` and ``TLSFailure`` for errors that come out of PostgresNIO, which wraps the
/// network's and TLS's own errors in a `PSQLError`.
///
/// ```swift
/// mapped.message = PostgresFailureText.describe(error)   // "connection refused (nothing listens there)"
/// ```
package enum PostgresFailureText {
    /// Why a connection to PostgreSQL could not be made, in words a person reads.
    package static func describe(_ error: any Error) -> String {
        if let error = error as? PSQLError, let underlying = error.underlying {
            return ConnectionFailureText.describe(underlying)
        }
        return ConnectionFailureText.describe(error)
    }

    /// A sentence naming what went wrong for a TLS error, also inside a PostgresNIO error; nil for any
    /// other error.
    package static func tlsReason(for error: any Error, host: String?) -> String? {
        if let psql = error as? PSQLError {
            if psql.code == .sslUnsupported {
                return "the server does not accept TLS connections (sslmode requires TLS)"
            }
            guard let underlying = psql.underlying else { return nil }
            return TLSFailure.reason(for: underlying, host: host)
        }
        return TLSFailure.reason(for: error, host: host)
    }
}
