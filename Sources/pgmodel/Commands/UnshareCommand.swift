import ArgumentParser
@_spi(PGModelInternals) import PGModelCore

/// `pgmodel unshare ENTITY ID USER`: revokes a user's share of a record.
///
/// ```
/// pgmodel unshare Trip 0193a7c4-5e6f-7a8b-9c0d-1e2f3a4b5c6d bob
/// ```
struct UnshareCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "unshare", abstract: "Revoke a user's share of a record (admins).")

    @Argument(help: "The record's class.")
    var entity: String

    @Argument(help: "The record's id.")
    var id: String

    @Argument(help: "The user whose share to revoke.")
    var user: String

    @OptionGroup var database: DatabaseOptions

    func run() async throws {
        // Every failure prints as `Error: <sentence> [code]`, argument checks included.
        try await reportingFailures {
            let record = try RecordArgument.parse(entity: entity, id: id)
            try await ShareCommand.apply(ShareChange(record: record, user: user, permission: nil), database)
            print("revoked \(user)'s share of \(record.entity) \(record.id.uuidString.lowercased())")
        }
    }
}
