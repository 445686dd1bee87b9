import ArgumentParser

/// `pgmodel user add|list|passwd|remove|export|import`: manage the service's users (stored in `pgmodel.users`).
///
/// ```
/// pgmodel user add alice --password-stdin --admin
/// ```
struct UserCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "user",
        abstract: "Manage the users who may log in to the service.",
        subcommands: [UserAddCommand.self, UserListCommand.self, UserPasswdCommand.self, UserRemoveCommand.self,
                      UserExportCommand.self, UserImportCommand.self])
}
