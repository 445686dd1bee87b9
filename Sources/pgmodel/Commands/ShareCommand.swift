import ArgumentParser
import Foundation
@_spi(PGModelInternals) import PGModelCore
@_spi(PGModelInternals) import PGModelPostgres

/// `pgmodel share ENTITY ID USER`: shares a record (and what it owns through `.cascade` relationships)
/// with a user, as an admin: through the database owner's connection, in one transaction.
///
/// ```
/// pgmodel share Trip 0193a7c4-5e6f-7a8b-9c0d-1e2f3a4b5c6d bob --read-write
/// ```
struct ShareCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "share", abstract: "Share a record with a user (admins).")

    @Argument(help: "The record's class (the Swift name, e.g. Trip).")
    var entity: String

    @Argument(help: "The record's id (its persistentModelID, a UUID).")
    var id: String

    @Argument(help: "The user to share it with.")
    var user: String

    @Flag(help: "Let the user change the record and add and delete what it owns (default: read-only).")
    var readWrite = false

    @OptionGroup var database: DatabaseOptions

    func run() async throws {
        // Every failure prints as `Error: <sentence> [code]`, argument checks included.
        try await reportingFailures {
            let record = try RecordArgument.parse(entity: entity, id: id)
            let permission: SharePermission = readWrite ? .readWrite : .readOnly
            try await ShareCommand.apply(ShareChange(record: record, user: user, permission: permission), database)
            print("shared \(record.entity) \(record.id.uuidString.lowercased()) with \(user) (\(permission.rawValue))")
        }
    }

    /// Applies one share or revocation as the database owner.
    static func apply(_ change: ShareChange, _ database: DatabaseOptions) async throws {
        let configuration = try database.configuration()
        try await reportingFailures {
            try await DatabaseSession.run(configuration) { engine, connection in
                let schema = try await engine.loadSchema(on: connection)
                _ = try await engine.save(SaveRequest(shares: [change], author: "pgmodel share"), in: schema, as: .trusted, on: connection)
            }
        }
    }
}
