import ArgumentParser

/// `pgmodel`: run the line-protocol service and manage its users.
///
/// ```
/// pgmodel serve --database-url postgres://pgmodel:pgmodel@127.0.0.1:5432/pgmodel
/// pgmodel user add alice --password-stdin
/// ```
@main
struct PGModelCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "pgmodel",
        abstract: "PGModel: SwiftData's programming model on PostgreSQL, shared over a line protocol.",
        version: "0.1.0",
        subcommands: [ServeCommand.self, UserCommand.self, SessionsCommand.self, ShareCommand.self, UnshareCommand.self, SharesCommand.self, StatusCommand.self, SchemaCommand.self, HistoryCommand.self])
}
