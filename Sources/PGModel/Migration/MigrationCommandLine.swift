import Foundation
import Logging

/// The `migrate` command of an app's own executable. A migration plan is the app's Swift code (its
/// `VersionedSchema` types, its stages' `willMigrate`/`didMigrate`), so no generic tool can run it: as
/// with Vapor's `migrate` command, the app's executable takes a `migrate` subcommand and hands its
/// arguments here.
///
/// ```swift
/// // main.swift of the app's server executable
/// if CommandLine.arguments.dropFirst().first == "migrate" {
///     exit(MigrationCommandLine.run(arguments: Array(CommandLine.arguments.dropFirst(2)),
///                                   schema: Schema(versionedSchema: TripsSchemaV2.self), migrationPlan: TripsMigrationPlan.self))
/// }
/// ```
///
/// Arguments: `--database-url URL` (else the app's default, else `DATABASE_URL`), `--schema NAME` (the
/// PostgreSQL schema, added to the URL as `schema=`), `--dry-run` (print each stage's SQL and change
/// nothing), `--json` (JSON on standard output: one object per progress event and line), `--help`.
/// Without `--json` each stage is one line on standard error:
///
/// ```
/// stage 2/3 custom 1.0.0 → 2.0.0: willMigrate… schema change (4 statements)… didMigrate… done in 412 ms (Trip=4)
/// ```
///
/// A failure prints `Error: <sentence> [code]` on standard error and exits non-zero.
public enum MigrationCommandLine {
    /// What the arguments asked for.
    ///
    /// ```swift
    /// let options = try MigrationCommandLine.Options(parsing: ["--dry-run", "--schema", "trips"])
    /// ```
    public struct Options: Sendable, Hashable {
        /// The store from `--database-url`; `nil` without it (then the app's default, then `DATABASE_URL`).
        public var databaseURL: URL?
        /// The PostgreSQL schema from `--schema`.
        public var schemaName: String?
        /// `--dry-run`: show the stages and their SQL, change nothing.
        public var dryRun = false
        /// `--json`: JSON lines on standard output rather than sentences on standard error.
        public var json = false
        /// `--help`: print the usage and do nothing else.
        public var help = false

        /// Parses `arguments` (those after `migrate`). Throws ``ArgumentError`` for anything it does not
        /// understand.
        ///
        /// ```swift
        /// let options = try MigrationCommandLine.Options(parsing: ["--json", "--database-url", "postgres://pgmodel@127.0.0.1/pgmodel"])
        /// ```
        public init(parsing arguments: [String]) throws {
            var remaining = arguments[...]
            var url: String?
            while let argument = remaining.popFirst() {
                // `--name=value` and `--name value` both, as ArgumentParser-based tools accept.
                let (name, inline) = argument.split(separator: "=", maxSplits: 1).map(String.init).splitOption()
                func value() throws -> String {
                    if let inline { return inline }
                    guard let next = remaining.popFirst(), !next.hasPrefix("--") else { throw ArgumentError.missingValue(option: name) }
                    return next
                }
                switch name {
                case "--database-url": url = try value()
                case "--schema": schemaName = try value()
                case "--dry-run": dryRun = true
                case "--json": json = true
                case "--help", "-h": help = true
                default: throw ArgumentError.unknownArgument(argument)
                }
                if inline != nil, ["--dry-run", "--json", "--help", "-h"].contains(name) { throw ArgumentError.unexpectedValue(option: name) }
            }
            if let schemaName, schemaName.isEmpty || !schemaName.allSatisfy({ $0.isLetter || $0.isNumber || $0 == "_" }) {
                throw ArgumentError.invalidSchemaName(schemaName)
            }
            if let url { databaseURL = try MigrationCommandLine.parseURL(url, source: "--database-url") }
        }
    }

    /// `text` as a store URL, or ``ArgumentError/invalidURL(source:)`` naming where it came from.
    static func parseURL(_ text: String, source: String) throws -> URL {
        guard let url = URL(string: text), url.scheme != nil else { throw ArgumentError.invalidURL(source: source) }
        return url
    }

    /// The store: `--database-url`, else the app's default, else `DATABASE_URL` (the app's own setting
    /// wins over the generic variable, as its server reads them).
    static func store(_ options: Options, defaultDatabaseURL: URL?, environment: [String: String]) throws -> URL {
        if let url = options.databaseURL ?? defaultDatabaseURL { return url }
        guard let text = environment["DATABASE_URL"], !text.isEmpty else { throw ArgumentError.noDatabase }
        return try parseURL(text, source: "DATABASE_URL")
    }

    /// Arguments the command does not understand. Messages name the argument, never a URL (it may
    /// carry a password).
    ///
    /// ```swift
    /// catch let error as MigrationCommandLine.ArgumentError { print(error) }   // unknown argument '--frobnicate' …
    /// ```
    public enum ArgumentError: Error, Hashable, Sendable, CustomStringConvertible {
        /// An argument that is no option of the command.
        case unknownArgument(String)
        /// An option that takes a value was last, or followed by another option.
        case missingValue(option: String)
        /// A flag was given a value (`--json=yes`).
        case unexpectedValue(option: String)
        /// `--database-url` or `DATABASE_URL` is not a URL.
        case invalidURL(source: String)
        /// `--schema` is not a plain PostgreSQL name.
        case invalidSchemaName(String)
        /// No store: neither `--database-url`, a default from the app, nor `DATABASE_URL`.
        case noDatabase

        public var description: String {
            switch self {
            case .unknownArgument(let argument):
                // A stray URL may carry a password: say what it is, not what it says.
                return "unknown argument \(argument.contains("://") ? "(a URL: pass it as --database-url)" : "'\(argument)'") (see --help)"
            case .missingValue(let option): return "\(option) needs a value"
            case .unexpectedValue(let option): return "\(option) takes no value"
            case .invalidURL(let source): return "\(source) is not a URL: give a postgres:// or pgmodel:// URL"
            case .invalidSchemaName(let name): return "--schema '\(name)' is not a plain PostgreSQL name (letters, digits, underscores)"
            case .noDatabase: return "no store to migrate: pass --database-url or set DATABASE_URL"
            }
        }
    }

    /// The text `--help` prints.
    public static let usage = """
        USAGE: <app> migrate [--database-url <url>] [--schema <name>] [--dry-run] [--json]

        Moves the store to the app's schema version through its migration plan, every stage in one transaction.

        OPTIONS:
          --database-url <url>  The store (postgres://, or pgmodel:// for lightweight stages); default: DATABASE_URL.
          --schema <name>       The PostgreSQL schema of the app's tables (the URL's schema= parameter).
          --dry-run             Print the stages and their SQL; change nothing.
          --json                One JSON object per progress event and line on standard output.
          -h, --help            Show this help.
        """

    /// Parses `arguments`, runs the migration (or its dry run) and returns the process's exit status:
    /// 0 when the store is at the app's version, 1 when the migration failed, 2 for arguments it does not
    /// understand. Blocks the calling thread for the whole migration, as opening a container does, so
    /// call it from the executable's top level, not from a task on the cooperative pool.
    ///
    /// `defaultDatabaseURL` is the store when no `--database-url` is given (an app's own environment
    /// variable); `DATABASE_URL` comes next. `defaultSchemaName` is the PostgreSQL schema of a
    /// `postgres://` URL that names none and no `--schema` overrides (the app's own, as its server uses). `standardOutput` and `standardError`
    /// receive text as it is ready (a human progress line is written in pieces), so tests can capture it.
    ///
    /// ```swift
    /// let status = MigrationCommandLine.run(arguments: ["--dry-run"], schema: Schema(versionedSchema: TripsSchemaV2.self),
    ///                                       migrationPlan: TripsMigrationPlan.self)
    /// exit(status)
    /// ```
    public static func run(arguments: [String], environment: [String: String] = ProcessInfo.processInfo.environment,
                           schema: Schema, migrationPlan: any SchemaMigrationPlan.Type, defaultDatabaseURL: URL? = nil, defaultSchemaName: String? = nil,
                           standardOutput: @escaping @Sendable (String) -> Void = { write($0, to: .standardOutput) },
                           standardError: @escaping @Sendable (String) -> Void = { write($0, to: .standardError) }) -> Int32 {
        let options: Options
        let base: URL
        do {
            options = try Options(parsing: arguments)
            if options.help {
                standardOutput(usage + "\n")
                return 0
            }
            base = try store(options, defaultDatabaseURL: defaultDatabaseURL, environment: environment)
        } catch {
            standardError("Error: \(error) [invalid_arguments]\n")
            return 2
        }
        let url = options.schemaName.map { withSchema($0, base) } ?? defaultSchemaName.map { withDefaultSchema($0, base) } ?? base
        let configurations = [ModelConfiguration(url: url)]
        do {
            if options.dryRun {
                let dryRun = try ModelContainer.migrationDryRun(for: schema, migrationPlan: migrationPlan, configurations: configurations)
                if options.json {
                    standardOutput(try jsonLine(DryRunJSON(dryRun)))
                } else {
                    standardOutput(dryRun.description + "\n")
                    standardError("dry run: nothing was changed\n")
                }
                return 0
            }
            let printer = ProgressPrinter(json: options.json, standardOutput: standardOutput, standardError: standardError)
            var quiet = Logger(label: "pgmodel.migration")
            quiet.logLevel = .critical
            _ = try ModelContainer.migrate(for: schema, migrationPlan: migrationPlan, configurations: configurations, logger: quiet) { printer.print($0) }
            return 0
        } catch let error as PGModelError {
            standardError("Error: \(error.message) [\(error.code)]\n")
            return 1
        } catch {
            standardError("Error: \(error) [internal_error]\n")
            return 1
        }
    }

    /// Writes `text` to a standard stream unbuffered, so progress shows while a long stage runs.
    ///
    /// ```swift
    /// MigrationCommandLine.write("stage 1/2 …", to: .standardError)
    /// ```
    public static func write(_ text: String, to stream: Stream) {
        (stream == .standardOutput ? FileHandle.standardOutput : FileHandle.standardError).write(Data(text.utf8))
    }

    /// A standard stream of the process.
    public enum Stream: Sendable, Hashable {
        /// File descriptor 1: `--json`'s events, `--dry-run`'s SQL, `--help`.
        case standardOutput
        /// File descriptor 2: human progress and errors.
        case standardError
    }

    /// `url` with `schema=name`, replacing any schema it named.
    static func withSchema(_ name: String, _ url: URL) -> URL {
        guard var components = URLComponents(url: url, resolvingAgainstBaseURL: false) else { return url }
        var items = (components.queryItems ?? []).filter { $0.name != "schema" }
        items.append(URLQueryItem(name: "schema", value: name))
        components.queryItems = items
        return components.url ?? url
    }

    /// `url` with `schema=name` when it is a `postgres://` URL naming no schema (the service's URLs name
    /// none: the server chooses).
    static func withDefaultSchema(_ name: String, _ url: URL) -> URL {
        guard url.scheme == "postgres" || url.scheme == "postgresql" else { return url }
        let items = URLComponents(url: url, resolvingAgainstBaseURL: false)?.queryItems ?? []
        return items.contains { $0.name == "schema" } ? url : withSchema(name, url)
    }

    /// One JSON object and a newline; keys sorted so lines compare stably.
    static func jsonLine(_ value: some Encodable) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return String(decoding: try encoder.encode(value), as: UTF8.self) + "\n"
    }

    /// Turns progress events into JSON lines or the human line of each stage.
    private struct ProgressPrinter: Sendable {
        let json: Bool
        let standardOutput: @Sendable (String) -> Void
        let standardError: @Sendable (String) -> Void

        func print(_ event: MigrationProgress) {
            if json {
                // An event that cannot be encoded is a bug; the run's outcome still reaches the exit status.
                if let line = try? jsonLine(event) { standardOutput(line) }
                return
            }
            switch event {
            case .stageStarted(let stage): standardError("\(stage.label): ")
            case .stepStarted(_, let step): standardError("\(step.label)… ")
            case .stageFinished(_, let milliseconds, let rows):
                standardError("done in \(milliseconds) ms\(rows.isEmpty ? "" : " (\(MigrationReport.rowsText(rows)))")\n")
            case .stageFailed(_, let step, _): standardError("failed in \(step.label)\n")
            case .finished(let report): standardError(report.description + "\n")
            }
        }
    }

    /// `--dry-run --json`'s one object: versions as `"1.0.0"` like the progress events'.
    private struct DryRunJSON: Encodable {
        struct Stage: Encodable {
            var from: String
            var to: String
            var kind: MigrationStageKind
            var statements: [String]
        }
        var event = "dry_run"
        var storeVersion: String?
        var targetVersion: String
        var stages: [Stage]

        enum CodingKeys: String, CodingKey { case event, storeVersion = "store_version", targetVersion = "target_version", stages }

        init(_ dryRun: MigrationDryRun) {
            storeVersion = dryRun.storeVersion?.description
            targetVersion = dryRun.targetVersion.description
            stages = dryRun.stages.map {
                Stage(from: $0.from.description, to: $0.to.description, kind: $0.isCustom ? .custom : .lightweight, statements: $0.statements)
            }
        }
    }
}

private extension Array where Element == String {
    /// `["--schema", "x"]` (from `--schema=x`) as the option and its inline value.
    func splitOption() -> (String, String?) {
        (first ?? "", count > 1 ? self[1] : nil)
    }
}
