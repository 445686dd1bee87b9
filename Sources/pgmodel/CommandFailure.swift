import ArgumentParser
import PGModelCore

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

    /// The message of `error`, readable for people: PGModelError's message and code, else the error.
    init(_ error: any Error) {
        if let error = error as? PGModelError {
            description = "\(error.message) [\(error.code.rawValue)]"
        } else if let error = error as? CommandFailure {
            description = error.description
        } else {
            description = "\(error)"
        }
    }
}

/// Runs `body`, turning any error but ArgumentParser's own into a ``CommandFailure``.
func reportingFailures<T>(_ body: () async throws -> T) async throws -> T {
    do {
        return try await body()
    } catch let error as ValidationError {
        throw error
    } catch let error as ExitCode {
        throw error
    } catch {
        throw CommandFailure(error)
    }
}
