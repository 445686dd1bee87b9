import ArgumentParser
import Foundation
@_spi(PGModelInternals) import PGModelCore
@_spi(PGModelInternals) import PGModelPostgres

/// `pgmodel shares [ENTITY ID] [--user NAME]`: lists shares, of one record or with one user.
///
/// ```
/// pgmodel shares --user bob
/// pgmodel shares Trip 0193a7c4-5e6f-7a8b-9c0d-1e2f3a4b5c6d
/// ```
struct SharesCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "shares", abstract: "List shares, of a record or with a user (admins).")

    @Argument(help: "The record's class (with ID: only its shares).")
    var entity: String?

    @Argument(help: "The record's id.")
    var id: String?

    @Option(help: "Only shares with this user.")
    var user: String?

    @OptionGroup var database: DatabaseOptions

    func validate() throws {
        if (entity == nil) != (id == nil) { throw ValidationError("give both ENTITY and ID, or neither") }
    }

    func run() async throws {
        // Every failure prints as `Error: <sentence> [code]`, argument checks included.
        try await reportingFailures {
            let record = try entity.map { try RecordArgument.parse(entity: $0, id: id ?? "") }
            let configuration = try database.configuration()
            let shares = try await reportingFailures {
                try await DatabaseSession.run(configuration) { engine, connection in
                    try await engine.listShares(of: record, user: user, on: connection)
                }
            }
            guard !shares.isEmpty else {
                print("no shares")
                return
            }
            print("ENTITY\tID\tOWNER\tUSER\tPERMISSION\tGRANTED BY\tCREATED")
            let dates = ISO8601DateFormatter()
            for listing in shares {
                print([listing.record.entity, listing.record.id.uuidString.lowercased(), listing.owner ?? "-", listing.share.user,
                       listing.share.permission.rawValue, listing.share.grantedBy, dates.string(from: listing.share.createdAt)].joined(separator: "\t"))
            }
        }
    }
}
