import ArgumentParser
@_spi(PGModelInternals) import PGModelPostgres

/// `pgmodel user passwd NAME`: replaces a user's password.
///
/// ```
/// printf 'n3w\n' | pgmodel user passwd alice --password-stdin
/// ```
struct UserPasswdCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "passwd", abstract: "Change a user's password.")

    @Argument(help: "The user name.")
    var name: String

    @OptionGroup var password: PasswordOptions

    @OptionGroup var database: DatabaseOptions

    func run() async throws {
        // Every failure prints as `Error: <sentence> [code]`, argument checks included.
        try await reportingFailures {
            let configuration = try database.configuration()
            let password = try password.resolve()
            try await reportingFailures {
                try await DatabaseSession.run(configuration) { engine, connection in
                    try await engine.setPassword(user: name, password: password, on: connection)
                }
            }
            print("changed the password of \(name)")
        }
    }
}
