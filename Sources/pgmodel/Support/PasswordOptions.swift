import ArgumentParser
import Foundation

/// `--password P` or `--password-stdin`; exactly one.
///
/// ```
/// echo 's3cret' | pgmodel user add alice --password-stdin
/// ```
struct PasswordOptions: ParsableArguments {
    @Option(name: .long, help: ArgumentHelp(
        "The password (visible in the process list and shell history; prefer --password-stdin).", valueName: "password"))
    var password: String?

    @Flag(name: .long, help: "Read the password from the first line of standard input.")
    var passwordStdin = false

    func validate() throws {
        if password != nil && passwordStdin {
            throw ValidationError("give either --password or --password-stdin, not both")
        }
        if password == nil && !passwordStdin {
            throw ValidationError("give the password with --password or --password-stdin")
        }
    }

    /// The password from the option or standard input.
    func resolve() throws -> String {
        if let password { return password }
        guard let line = readLine(strippingNewline: true) else {
            throw ValidationError("--password-stdin: standard input is empty")
        }
        let password = line.hasSuffix("\r") ? String(line.dropLast()) : line
        guard !password.isEmpty else { throw ValidationError("--password-stdin: the password is empty") }
        return password
    }
}
