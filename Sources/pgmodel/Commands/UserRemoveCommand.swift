import ArgumentParser
import Foundation
@_spi(PGModelInternals) import PGModelPostgres

/// `pgmodel user remove NAME --delete-rows | --hand-over-to OTHER [--json]`: removes a user, in one
/// transaction, with the rows they own in every registered entity table (deleted, or given to OTHER
/// with the shares NAME granted on them). Their sessions close on every instance.
///
/// ```
/// pgmodel user remove alice --hand-over-to bob
/// pgmodel user remove mallory --delete-rows --json
/// ```
struct UserRemoveCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "remove",
        abstract: "Remove a user, deleting their rows or handing them over to another user.",
        discussion: """
            Exactly one of --delete-rows and --hand-over-to is required. Everything happens in one transaction: \
            when handing over would give OTHER two rows with one value unique per owner, nothing changes and \
            the error names the entity. Shares granted to the user go away. One line per table goes to \
            standard error as the work proceeds (not with --json).
            """)

    @Argument(help: "The user to remove.")
    var name: String

    @Flag(name: .long, help: "Delete every row the user owns.")
    var deleteRows = false

    @Option(name: .customLong("hand-over-to"), help: ArgumentHelp("Give every row the user owns to this user.", valueName: "other"))
    var handOverTo: String?

    @Flag(name: .long, help: "Print what was done as JSON.")
    var json = false

    @OptionGroup var database: DatabaseOptions

    func validate() throws {
        if deleteRows == (handOverTo != nil) {
            throw ValidationError("give exactly one of --delete-rows and --hand-over-to OTHER")
        }
    }

    func run() async throws {
        // Every failure prints as `Error: <sentence> [code]`, argument checks included.
        try await reportingFailures {
            let configuration = try database.configuration()
            let removal: UserRemoval = handOverTo.map { .handOver(to: $0) } ?? .deleteRows
            let quiet = json
            let report = try await reportingFailures {
                try await DatabaseSession.run(configuration) { engine, connection in
                    try await engine.removeUser(name, removal, progress: { line in
                        if !quiet { FileHandle.standardError.write(Data((line + "\n").utf8)) }
                    }, on: connection)
                }
            }
            if json {
                let encoder = JSONEncoder()
                encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
                print(String(decoding: try encoder.encode(report), as: UTF8.self))
                return
            }
            let rows = report.tables.map(\.rows).reduce(0, +)
            if let heir = report.handedOverTo {
                print("removed user \(name); \(rows) row\(rows == 1 ? "" : "s") handed over to \(heir)")
            } else {
                print("removed user \(name); \(rows) row\(rows == 1 ? "" : "s") deleted")
            }
        }
    }
}
