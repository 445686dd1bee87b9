import ArgumentParser
@_spi(PGModelInternals) import PGModelPostgres

/// `pgmodel history prune|retention`: how much persistent history each store keeps, and removing what is
/// beyond it (`pgmodel.history_retention`, docs/ADMIN.md).
///
/// ```
/// pgmodel history retention set --store public --max-age 30d
/// pgmodel history prune --store public
/// ```
struct HistoryCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "history",
        abstract: "Bound and prune the stores' persistent history.",
        subcommands: [HistoryPruneCommand.self, HistoryRetentionCommand.self])
}

/// `pgmodel history retention set|show|clear`: the per-store retention setting.
///
/// ```
/// pgmodel history retention set --store public --max-age 30d --max-changes 10000000
/// pgmodel history retention show --json
/// pgmodel history retention clear --store public
/// ```
struct HistoryRetentionCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "retention",
        abstract: "Set, show or clear how much history a store keeps.",
        discussion: """
            A store with a setting is pruned by every running `pgmodel serve` (see --history-retention-interval) \
            and by `pgmodel history prune --store S` without limits.
            """,
        subcommands: [HistoryRetentionSetCommand.self, HistoryRetentionShowCommand.self, HistoryRetentionClearCommand.self])
}

/// `--max-age`/`--older-than` and `--max-changes`/`--keep-changes` as one setting.
///
/// ```swift
/// let limits = try HistoryLimitArguments.retention(store: "public", age: "30d", changes: nil)
/// ```
enum HistoryLimitArguments {
    /// The limits for `store`, or nil when neither is given; an age that does not parse or a negative
    /// count is `invalid_configuration`.
    static func retention(store: String, age: String?, changes: Int64?) throws -> HistoryRetention? {
        guard age != nil || changes != nil else { return nil }
        return try HistoryRetention(store: store, maxAge: age.map { try HistoryAge(parsing: $0) }, maxChanges: changes)
    }
}
