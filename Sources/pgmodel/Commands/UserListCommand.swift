import ArgumentParser
@_spi(PGModelInternals) import PGModelPostgres

/// `pgmodel user list`: prints every user, one per line: name, role, id.
///
/// ```
/// pgmodel user list
/// ```
struct UserListCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "list", abstract: "List the users.")

    @OptionGroup var database: DatabaseOptions

    func run() async throws {
        // Every failure prints as `Error: <sentence> [code]`, argument checks included.
        try await reportingFailures {
            let configuration = try database.configuration()
            let users = try await reportingFailures {
                try await DatabaseSession.run(configuration) { engine, connection in
                    try await engine.listUsers(on: connection)
                }
            }
            guard !users.isEmpty else {
                print("no users; add one with: pgmodel user add NAME --password-stdin")
                return
            }
            let width = max(4, users.map(\.name.count).max() ?? 4)
            print("NAME".padding(toLength: width, withPad: " ", startingAt: 0) + "  ROLE   ID")
            for user in users {
                let role = user.isAdmin ? "admin" : "user "
                print(user.name.padding(toLength: width, withPad: " ", startingAt: 0) + "  \(role)  \(user.id.uuidString.lowercased())")
            }
        }
    }
}
