import ArgumentParser
@_spi(PGModelInternals) import PGModelClient
@_spi(PGModelInternals) import PGModelCore
@_spi(PGModelInternals) import PGModelIO
@_spi(PGModelInternals) import PGModelPostgres

/// A failure to report in one line and exit with status 1; ArgumentParser prints its description.
///
/// ```swift
/// throw CommandFailure("user 'alice' does not exist")
/// ```
struct CommandFailure: Error, CustomStringConvertible {
    var description: String

    init(_ message: String) {
        description = message
    }

    /// The message of `error`, readable for people, in one shape: `<sentence> [code]`.
    init(_ error: any Error) {
        if let error = error as? PGModelError {
            // An operator reads this: PostgreSQL's SQLSTATE says what a database error was when the
            // message (kept free of values for the service's users) does not.
            let state = error.sqlState.map { error.message.contains($0) ? "" : " (SQLSTATE \($0))" } ?? ""
            description = "\(error.message)\(state) [\(error.code.rawValue)]"
        } else if let error = error as? CommandFailure {
            description = error.description
        } else if let error = error as? ValidationError {
            description = "\(error.message) [\(PGModelError.Code.invalidConfiguration.rawValue)]"
        } else {
            description = "\(PostgresFailureText.describe(error)) [\(PGModelError.Code.internalError.rawValue)]"
        }
    }
}

/// Runs `body`, turning any error but an exit code into a ``CommandFailure``: every failure of a
/// command prints as `Error: <sentence> [code]`.
func reportingFailures<T>(_ body: () async throws -> T) async throws -> T {
    do {
        return try await body()
    } catch let error as ExitCode {
        throw error
    } catch {
        throw CommandFailure(error)
    }
}
