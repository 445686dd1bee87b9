import ArgumentParser
import Foundation
@_spi(PGModelInternals) import PGModelCore
@_spi(PGModelInternals) import PGModelPostgres

/// `pgmodel user export NAME [--history] [--output FILE] [--json]`: writes one user's data in one store as
/// JSON lines (a header, their rows, the shares they granted, with `--history` their history), read in
/// one consistent snapshot. `pgmodel user import` reads the file back.
///
/// ```
/// pgmodel user export alice --output alice.jsonl
/// pgmodel user export alice --history --schema trips > alice.jsonl
/// ```
struct UserExportCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "export",
        abstract: "Write one user's rows, shares and (optionally) history as JSON lines.",
        discussion: """
            Reads the store of --schema (or the URL's) in one repeatable-read transaction. The first line is a \
            header (format, version, schema, user, time, the registered entity descriptions and each table's \
            columns); then one line per row the user owns in every registered entity table, one per many-to-many \
            link between two of those rows, then one per share \
            they granted on those rows (the grantee by name), then with --history one per history entry of \
            those rows. One progress line per table goes to standard error (not with --json). With --json and \
            --output, a summary object (rows per entity, shares, history entries, bytes) goes to standard output.
            """)

    @Argument(help: "The user whose data to export.")
    var name: String

    @Flag(name: .long, help: "Also write the history entries of the user's rows.")
    var history = false

    @Option(name: .shortAndLong, help: ArgumentHelp("Write to this file instead of standard output.", valueName: "file"))
    var output: String?

    @Flag(name: .long, help: "No progress lines; with --output, print a summary as JSON.")
    var json = false

    @OptionGroup var database: DatabaseOptions

    func run() async throws {
        // Every failure prints as `Error: <sentence> [code]`, argument checks included.
        try await reportingFailures {
            let configuration = try database.configuration()
            let sink = try LineSink(path: output)
            let quiet = json
            let report: UserExportReport
            do {
                report = try await DatabaseSession.run(configuration) { engine, connection in
                    try await engine.exportUser(name, includeHistory: history, write: { try sink.write($0) }, progress: { line in
                        if !quiet { FileHandle.standardError.write(Data((line + "\n").utf8)) }
                    }, on: connection)
                }
                try sink.finish()
            } catch {
                // A half-written file is no export: it goes.
                sink.discard()
                throw error
            }
            if json {
                if output != nil {
                    let encoder = JSONEncoder()
                    encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
                    print(String(decoding: try encoder.encode(report), as: UTF8.self))
                }
                return
            }
            let rows = report.rows.values.reduce(0, +)
            let summary = "exported \(rows) row\(rows == 1 ? "" : "s"), \(report.shares) share\(report.shares == 1 ? "" : "s")"
                + (history ? ", \(report.history) history entr\(report.history == 1 ? "y" : "ies")" : "")
                + " of user \(name) from schema \(report.schema) (\(report.bytes) bytes)"
            if let output {
                print(summary + " to \(output)")
            } else {
                // Standard output holds the export itself.
                FileHandle.standardError.write(Data((summary + "\n").utf8))
            }
        }
    }
}

/// Where an export's lines go: a file (written whole or removed) or standard output, buffered.
///
/// ```swift
/// let sink = try LineSink(path: "alice.jsonl")
/// try sink.write(#"{"kind":"header"}"#)
/// try sink.finish()
/// ```
final class LineSink {
    private let handle: FileHandle
    private let path: String?
    private var buffer = Data()

    init(path: String?) throws {
        self.path = path
        guard let path else {
            handle = FileHandle.standardOutput
            return
        }
        guard FileManager.default.createFile(atPath: path, contents: nil) else {
            throw CommandFailure("cannot create \(path) [\(PGModelError.Code.invalidConfiguration.rawValue)]")
        }
        do {
            handle = try FileHandle(forWritingTo: URL(fileURLWithPath: path))
        } catch {
            throw CommandFailure("cannot open \(path) for writing: \(error.localizedDescription) [\(PGModelError.Code.invalidConfiguration.rawValue)]")
        }
    }

    /// Appends `line` and a newline; flushes every 64 KiB.
    func write(_ line: String) throws {
        buffer.append(contentsOf: line.utf8)
        buffer.append(0x0A)
        if buffer.count >= 65_536 { try flush() }
    }

    /// Writes what is buffered and closes a file.
    func finish() throws {
        try flush()
        if path != nil { try handle.close() }
    }

    /// Closes and removes a file that was being written.
    func discard() {
        guard let path else { return }
        try? handle.close()
        try? FileManager.default.removeItem(atPath: path)
    }

    private func flush() throws {
        guard !buffer.isEmpty else { return }
        try handle.write(contentsOf: buffer)
        buffer.removeAll(keepingCapacity: true)
    }
}
