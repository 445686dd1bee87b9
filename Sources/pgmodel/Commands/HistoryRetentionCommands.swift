import ArgumentParser
import Foundation
@_spi(PGModelInternals) import PGModelCore
@_spi(PGModelInternals) import PGModelPostgres

/// `pgmodel history retention set --store S [--max-age 30d] [--max-changes N]`: stores (replaces) how
/// much history a store keeps.
///
/// ```
/// pgmodel history retention set --store public --max-age 30d
/// ```
struct HistoryRetentionSetCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "set", abstract: "Set how much history a store keeps (replaces its setting).")

    @Option(help: ArgumentHelp("The store (PostgreSQL schema).", valueName: "schema"))
    var store: String

    @Option(help: ArgumentHelp("Keep history for this long: 30d, 12h, 90m or 45s.", valueName: "age"))
    var maxAge: String?

    @Option(help: ArgumentHelp("Keep only the transactions holding the newest N changes.", valueName: "N"))
    var maxChanges: Int64?

    @Flag(name: .long, help: "Print the stored setting as JSON.")
    var json = false

    @OptionGroup var database: DatabaseOptions

    func run() async throws {
        try await reportingFailures {
            guard let retention = try HistoryLimitArguments.retention(store: store, age: maxAge, changes: maxChanges) else {
                throw ValidationError("give --max-age, --max-changes or both")
            }
            let configuration = try database.configuration()
            let stored = try await DatabaseSession.run(configuration) { engine, connection in
                try await engine.setHistoryRetention(retention, on: connection)
            }
            if json {
                print(try HistoryRetentionShowCommand.encode(stored))
                return
            }
            print("store \(stored.store): keeps \(HistoryRetentionShowCommand.limits(stored))")
        }
    }
}

/// `pgmodel history retention show [--store S] [--json]`: every store's setting.
///
/// ```
/// pgmodel history retention show
/// ```
struct HistoryRetentionShowCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "show", abstract: "Show the stores' history retention settings.")

    @Option(help: ArgumentHelp("Only this store's setting.", valueName: "schema"))
    var store: String?

    @Flag(name: .long, help: "Print the settings as a JSON array.")
    var json = false

    @OptionGroup var database: DatabaseOptions

    func run() async throws {
        try await reportingFailures {
            let configuration = try database.configuration()
            let retentions = try await DatabaseSession.run(configuration) { engine, connection in
                try await engine.historyRetentions(store: store, on: connection)
            }
            if json {
                print(try Self.encode(retentions))
                return
            }
            guard !retentions.isEmpty else {
                print(store.map { "store \($0) has no history retention setting" } ?? "no history retention settings")
                return
            }
            let dates = ISO8601DateFormatter()
            let width = max(5, retentions.map(\.store.count).max() ?? 5)
            print("STORE".padding(toLength: width, withPad: " ", startingAt: 0) + "  MAX AGE   MAX CHANGES   UPDATED")
            for retention in retentions {
                print([retention.store.padding(toLength: width, withPad: " ", startingAt: 0),
                       (retention.maxAge?.description ?? "-").padding(toLength: 8, withPad: " ", startingAt: 0),
                       (retention.maxChanges.map(String.init) ?? "-").padding(toLength: 12, withPad: " ", startingAt: 0),
                       retention.updatedAt.map(dates.string(from:)) ?? "-"].joined(separator: "  "))
            }
        }
    }

    /// `retention` (one or many) as sorted, pretty JSON with ISO 8601 dates.
    static func encode<T: Encodable>(_ value: T) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        encoder.dateEncodingStrategy = .iso8601
        return String(decoding: try encoder.encode(value), as: UTF8.self)
    }

    /// `history of the last 30d and at most 1000 changes`.
    static func limits(_ retention: HistoryRetention) -> String {
        [retention.maxAge.map { "history of the last \($0)" }, retention.maxChanges.map { "at most \($0) changes" }]
            .compactMap { $0 }.joined(separator: " and ")
    }
}

/// `pgmodel history retention clear --store S`: removes a store's setting (its history stays as it is).
///
/// ```
/// pgmodel history retention clear --store public
/// ```
struct HistoryRetentionClearCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "clear", abstract: "Remove a store's history retention setting; its history is kept from then on.")

    @Option(help: ArgumentHelp("The store (PostgreSQL schema).", valueName: "schema"))
    var store: String

    @OptionGroup var database: DatabaseOptions

    func run() async throws {
        try await reportingFailures {
            let configuration = try database.configuration()
            let removed = try await DatabaseSession.run(configuration) { engine, connection in
                try await engine.clearHistoryRetention(store: store, on: connection)
            }
            guard removed else {
                throw CommandFailure("store \(store) has no history retention setting [\(PGModelError.Code.notFound.rawValue)]")
            }
            print("store \(store): history retention setting removed; its history is kept from now on")
        }
    }
}
