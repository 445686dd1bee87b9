import ArgumentParser

/// `pgmodel sessions list|disconnect`: the service's logged-in connections, across every instance
/// (`pgmodel.session_list`).
///
/// ```
/// pgmodel sessions list
/// pgmodel sessions disconnect alice
/// ```
struct SessionsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sessions",
        abstract: "See and end the logged-in connections of every service instance.",
        subcommands: [SessionsListCommand.self, SessionsDisconnectCommand.self])
}
