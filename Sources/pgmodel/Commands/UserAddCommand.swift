import ArgumentParser
@_spi(PGModelInternals) import PGModelPostgres

/// `pgmodel user add NAME`: creates a user with a bcrypt-hashed password.
///
/// ```
/// printf 's3cret\n' | pgmodel user add alice --password-stdin
/// ```
struct UserAddCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "add", abstract: "Create a user.")

    @Argument(help: "The user name (1 to 128 characters).")
    var name: String

    @OptionGroup var password: PasswordOptions

    @Flag(help: "Let the user see and change every record.")
    var admin = false

    @OptionGroup var database: DatabaseOptions

    func run() async throws {
        // Every failure prints as `Error: <sentence> [code]`, argument checks included.
        try await reportingFailures {
            let configuration = try database.configuration()
            let password = try password.resolve()
            let user = try await reportingFailures {
                try await DatabaseSession.run(configuration) { engine, connection in
                    try await engine.createUser(name: name, password: password, isAdmin: admin, on: connection)
                }
            }
            print("created \(user.isAdmin ? "admin" : "user") \(user.name) (\(user.id.uuidString.lowercased()))")
        }
    }
}
