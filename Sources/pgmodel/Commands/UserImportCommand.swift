import ArgumentParser
import Foundation
@_spi(PGModelInternals) import PGModelCore
@_spi(PGModelInternals) import PGModelPostgres

/// `pgmodel user import FILE [--as USER] [--json]`: reads a `pgmodel user export` file into the store of
/// `--schema` (or the URL's), in one transaction, every row owned by USER.
///
/// ```
/// pgmodel user import alice.jsonl --schema trips_copy
/// pgmodel user import alice.jsonl --as alice2 --json
/// ```
struct UserImportCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "import",
        abstract: "Read a user export into a store, owned by a user of this database.",
        discussion: """
            Everything happens in one transaction, and nothing is written when anything fails: a malformed \
            line (the error names its number), an entity not registered in the target schema, a column it \
            lacks there or has with another type, or an id that already exists there (whoever owns it: rows \
            are never overwritten). References to rows neither in the file nor the user's own here become \
            NULL. Shares are made again by grantee name; those whose grantee is no user here are skipped and \
            counted. History lines are not imported (history is what saves wrote), only counted. The import \
            itself writes no history. One progress line per table goes to standard error (not with --json).
            """)

    @Argument(help: "The export file (pgmodel user export), or - for standard input.")
    var file: String

    @Option(name: .customLong("as"), help: ArgumentHelp("The user who owns the imported rows (default: the exported user's name); must exist here.", valueName: "user"))
    var user: String?

    @Flag(name: .long, help: "Print what was done as JSON.")
    var json = false

    @OptionGroup var database: DatabaseOptions

    func run() async throws {
        // Every failure prints as `Error: <sentence> [code]`, argument checks included.
        try await reportingFailures {
            let configuration = try database.configuration()
            let data: Data
            do {
                data = file == "-" ? FileHandle.standardInput.readDataToEndOfFile() : try Data(contentsOf: URL(fileURLWithPath: file))
            } catch {
                throw CommandFailure("cannot read \(file): \(error.localizedDescription) [\(PGModelError.Code.invalidConfiguration.rawValue)]")
            }
            guard let text = String(data: data, encoding: .utf8) else {
                throw CommandFailure("\(file) is not UTF-8 text [\(PGModelError.Code.malformedMessage.rawValue)]")
            }
            // Split on "\n" only, so a line number is what an editor shows.
            let lines = text.split(separator: "\n", omittingEmptySubsequences: false).map { String($0.hasSuffix("\r") ? $0.dropLast() : $0) }
            let quiet = json
            let report = try await DatabaseSession.run(configuration) { engine, connection in
                try await engine.importUser(lines: lines, as: user, progress: { line in
                    if !quiet { FileHandle.standardError.write(Data((line + "\n").utf8)) }
                }, on: connection)
            }
            if json {
                let encoder = JSONEncoder()
                encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
                print(String(decoding: try encoder.encode(report), as: UTF8.self))
                return
            }
            let rows = report.rows.values.reduce(0, +)
            var summary = "imported \(rows) row\(rows == 1 ? "" : "s") and \(report.shares) share\(report.shares == 1 ? "" : "s") into schema \(report.schema) as user \(report.user)"
            if report.sharesSkipped > 0 { summary += "; \(report.sharesSkipped) share\(report.sharesSkipped == 1 ? "" : "s") skipped (grantee unknown here, or the owner)" }
            if report.referencesCleared > 0 { summary += "; \(report.referencesCleared) reference\(report.referencesCleared == 1 ? "" : "s") to rows outside the file set to NULL" }
            if report.historySkipped > 0 { summary += "; \(report.historySkipped) history entr\(report.historySkipped == 1 ? "y" : "ies") not imported" }
            print(summary)
        }
    }
}
