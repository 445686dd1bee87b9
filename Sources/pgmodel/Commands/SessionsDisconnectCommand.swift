import ArgumentParser
import Foundation
@_spi(PGModelInternals) import PGModelPostgres

/// `pgmodel sessions disconnect USER [--json]`: ends every session of `USER` on every instance (bumps
/// their `session_epoch`; each instance closes them with `session_revoked`). They may log in again.
///
/// ```
/// pgmodel sessions disconnect alice
/// ```
struct SessionsDisconnectCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "disconnect",
        abstract: "Close every session of a user, on every instance.",
        discussion: "The user may log in again; to keep them out, change their password (pgmodel user passwd) or remove them.")

    @Argument(help: "The user whose sessions end.")
    var user: String

    @Flag(name: .long, help: "Print the outcome as JSON.")
    var json = false

    @OptionGroup var database: DatabaseOptions

    func run() async throws {
        // Every failure prints as `Error: <sentence> [code]`, argument checks included.
        try await reportingFailures {
            let configuration = try database.configuration()
            let sessions = try await reportingFailures {
                try await DatabaseSession.run(configuration) { engine, connection in
                    try await engine.disconnectSessions(of: user, on: connection)
                }
            }
            if json {
                let encoder = JSONEncoder()
                encoder.outputFormatting = [.sortedKeys]
                print(String(decoding: try encoder.encode(["user": .string(user), "sessions": .int(sessions)] as [String: Outcome]), as: UTF8.self))
            } else {
                print("disconnecting \(sessions) session\(sessions == 1 ? "" : "s") of user '\(user)' (every instance closes them)")
            }
        }
    }

    /// A JSON value of the outcome.
    enum Outcome: Encodable {
        case string(String)
        case int(Int)

        func encode(to encoder: any Encoder) throws {
            var container = encoder.singleValueContainer()
            switch self {
            case .string(let value): try container.encode(value)
            case .int(let value): try container.encode(value)
            }
        }
    }
}
