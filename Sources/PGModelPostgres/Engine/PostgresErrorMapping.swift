@_spi(PGModelInternals) import PGModelCore
import PostgresNIO

/// Turns PostgresNIO errors into PGModelError. Server messages are kept only where they cannot
/// contain bound values; `detail` (which can, e.g. "Key (name)=(Paris) already exists") never is.
///
/// ```swift
/// do { … } catch { throw PostgresErrorMapping.map(error, model: "Trip") }
/// ```
@_spi(PGModelInternals) public enum PostgresErrorMapping {
    /// The PGModelError for any error PostgresNIO throws (PGModelErrors pass through unchanged).
    public static func map(_ error: any Error, model: String? = nil) -> PGModelError {
        if let error = error as? PGModelError { return error }
        if let legacy = error as? PostgresError {
            // The simple-query API (used for the multi-statement system SQL) reports this older type.
            switch legacy {
            case .server(let server):
                let state = server.fields[.sqlState] ?? "XX000"
                return PGModelError(.databaseError, "PostgreSQL error\(model.map { " on \($0)" } ?? ""): \(server.fields[.message] ?? "")",
                                    model: model, sqlState: state)
            case .protocol(let text):
                return PGModelError(.connectionFailed, "PostgreSQL protocol error: \(text)", model: model)
            case .connectionClosed:
                return PGModelError(.connectionFailed, "the PostgreSQL connection closed", model: model)
            }
        }
        if let reason = PostgresFailureText.tlsReason(for: error, host: nil) {
            return PGModelError(.tlsFailed, "TLS to PostgreSQL failed: \(reason)", model: model)
        }
        guard let psql = error as? PSQLError else {
            return PGModelError(.connectionFailed, "PostgreSQL connection error: \(type(of: error))", model: model)
        }
        guard psql.code == .server, let info = psql.serverInfo else {
            return PGModelError(.connectionFailed, "PostgreSQL connection error (\(psql.code))", model: model)
        }
        let state = info[.sqlState] ?? "XX000"
        let constraint = info[.constraintName]
        let subject = model.map { " on \($0)" } ?? ""
        switch state {
        case "23505":
            var mapped = PGModelError(.uniqueViolation, "a write\(subject) breaks uniqueness constraint \(constraint ?? "(unknown)")", model: model, sqlState: state)
            // The engine turns a constraint across all users into the one answer that names its attributes.
            mapped.constraint = constraint
            return mapped
        case "23503":
            // One answer for every reference that fails, whether its row does not exist or row-level
            // security hides it (the commit-time check of references): neither the constraint's name nor
            // the message may tell the two apart.
            return PGModelError(.constraintViolation, "a write\(subject) references a row that does not exist", model: model, sqlState: state)
        case "23502", "23514":
            return PGModelError(.constraintViolation, "a write\(subject) breaks constraint \(constraint ?? info[.columnName] ?? "(unknown)")", model: model, sqlState: state)
        case "22012":
            return PGModelError(.invalidField, "division by zero in a predicate\(subject)", model: model, sqlState: state)
        case "22003":
            return PGModelError(.typeMismatch, "a value\(subject) is out of range for its column", model: model, sqlState: state)
        case "42P01":
            return PGModelError(.unknownEntity, "a table\(subject) does not exist; register the schema first", model: model, sqlState: state)
        case "42703":
            return PGModelError(.unknownAttribute, "a column\(subject) does not exist; the table is older than the schema", model: model, sqlState: state)
        case "42501":
            // Row-level security and privileges: the user may not make this change. The message names a
            // table or role, never a value.
            let hint = info[.hint].map { " (\($0))" } ?? ""
            return PGModelError(.forbidden, "this user may not make this change\(subject): \(info[.message] ?? "permission denied")\(hint)",
                                model: model, sqlState: state)
        case "57014":
            // statement_timeout (the service's limit per request) or a cancel: the statement was stopped,
            // the transaction rolled back, and the connection is still good.
            return PGModelError(.timeout, "a statement\(subject) ran longer than the statement timeout and was cancelled; nothing was written",
                                model: model, sqlState: state)
        case "28P01", "28000":
            return PGModelError(.connectionFailed, "PostgreSQL rejected the credentials", sqlState: state)
        case "3D000":
            return PGModelError(.connectionFailed, "the database does not exist", sqlState: state)
        default:
            if state.hasPrefix("08") || state.hasPrefix("57") {
                return PGModelError(.connectionFailed, "PostgreSQL connection failed", model: model, sqlState: state)
            }
            // Syntax and catalog messages (42xxx) name objects, not values; others may quote data.
            let text = state.hasPrefix("42") ? (info[.message] ?? "") : "see SQLSTATE"
            return PGModelError(.databaseError, "PostgreSQL error\(subject): \(text)", model: model, sqlState: state)
        }
    }
}
