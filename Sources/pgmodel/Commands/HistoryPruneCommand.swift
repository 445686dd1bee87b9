import ArgumentParser
import Foundation
@_spi(PGModelInternals) import PGModelCore
@_spi(PGModelInternals) import PGModelPostgres

/// `pgmodel history prune --store S [--older-than 30d] [--keep-changes N] [--json]`: removes the oldest
/// committed history transactions of a store beyond the limits (given, else the store's setting), batch
/// by batch, and prints what went: transactions, changes, the newest removed token, the time it took.
///
/// ```
/// pgmodel history prune --store public --older-than 30d
/// pgmodel history prune --store public --json     # the stored setting's limits
/// ```
struct HistoryPruneCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "prune",
        abstract: "Remove a store's oldest history beyond an age or a number of changes.",
        discussion: """
            Without --older-than and --keep-changes, the store's setting (pgmodel history retention set) applies. \
            Removes whole transactions, oldest first, in batches of at most 10,000 change rows, each its own SQL \
            transaction; never one whose save is still committing. Readers resuming from a removed token get \
            history_token_expired, as after deleteHistory.
            """)

    @Option(help: ArgumentHelp("The store (PostgreSQL schema) whose history to prune.", valueName: "schema"))
    var store: String

    @Option(help: ArgumentHelp("Remove transactions saved longer ago than this: 30d, 12h, 90m or 45s.", valueName: "age"))
    var olderThan: String?

    @Option(help: ArgumentHelp("Keep only the transactions holding the newest N changes (a run of inserts counts one per insert).", valueName: "N"))
    var keepChanges: Int64?

    @Flag(name: .long, help: "Print what was removed as JSON.")
    var json = false

    @OptionGroup var database: DatabaseOptions

    func run() async throws {
        // Every failure prints as `Error: <sentence> [code]`, argument checks included.
        try await reportingFailures {
            let limits = try HistoryLimitArguments.retention(store: store, age: olderThan, changes: keepChanges)
            let configuration = try database.configuration()
            let report = try await DatabaseSession.run(configuration) { engine, connection in
                try await engine.pruneHistory(store: store, limits: limits, on: connection)
            }
            if json {
                let encoder = JSONEncoder()
                encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
                print(String(decoding: try encoder.encode(report), as: UTF8.self))
                return
            }
            print(Self.summary(report))
        }
    }

    /// One line: `store public: removed 3 transactions, 120 changes through token 4711 in 12.3 ms (older than 30d)`.
    static func summary(_ report: HistoryPruneReport) -> String {
        let limits = [report.maxAge.map { "older than \($0)" }, report.maxChanges.map { "beyond the newest \($0) changes" }]
            .compactMap { $0 }.joined(separator: ", ")
        let time = String(format: "%.1f ms", report.seconds * 1000)
        if report.busy && report.transactions == 0 {
            return "store \(report.store): another session is pruning its history now; nothing removed (\(limits))"
        }
        guard let through = report.deletedThrough, report.transactions > 0 else {
            return "store \(report.store): nothing to remove (\(limits)) in \(time)"
        }
        return "store \(report.store): removed \(report.transactions) transaction\(report.transactions == 1 ? "" : "s"), "
            + "\(report.changes) change\(report.changes == 1 ? "" : "s") through token \(through) in \(time) (\(limits))"
    }
}
