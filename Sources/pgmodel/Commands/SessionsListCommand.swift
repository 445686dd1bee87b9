import ArgumentParser
import Foundation
@_spi(PGModelInternals) import PGModelPostgres

/// `pgmodel sessions list [--user NAME] [--json]`: one line per logged-in connection of a live service
/// instance: user, client address, TLS, instance, since.
///
/// ```
/// pgmodel sessions list --user alice
/// ```
struct SessionsListCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "list", abstract: "List the logged-in connections.")

    @Option(help: "Only this user's sessions.")
    var user: String?

    @Flag(name: .long, help: "Print the sessions as JSON.")
    var json = false

    @OptionGroup var database: DatabaseOptions

    func run() async throws {
        // Every failure prints as `Error: <sentence> [code]`, argument checks included.
        try await reportingFailures {
            let configuration = try database.configuration()
            let sessions = try await reportingFailures {
                try await DatabaseSession.run(configuration) { engine, connection in
                    try await engine.listSessions(user: user, on: connection)
                }
            }
            if json {
                let encoder = JSONEncoder()
                encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
                encoder.dateEncodingStrategy = .iso8601
                print(String(decoding: try encoder.encode(sessions), as: UTF8.self))
                return
            }
            guard !sessions.isEmpty else {
                print("no sessions")
                return
            }
            let dates = ISO8601DateFormatter()
            let width = max(4, sessions.map(\.userName.count).max() ?? 4)
            print("USER".padding(toLength: width, withPad: " ", startingAt: 0) + "  ADDRESS          TLS  INSTANCE                    SINCE")
            for session in sessions {
                let instance = "\(session.instanceHost) \(session.instanceID.uuidString.lowercased().prefix(8))"
                print([session.userName.padding(toLength: width, withPad: " ", startingAt: 0),
                       session.clientAddress.padding(toLength: 15, withPad: " ", startingAt: 0),
                       session.tls ? "yes" : "no ",
                       instance.padding(toLength: 26, withPad: " ", startingAt: 0),
                       dates.string(from: session.loggedInAt)].joined(separator: "  "))
            }
        }
    }
}
