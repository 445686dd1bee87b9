import ArgumentParser
import Foundation
@_spi(PGModelInternals) import PGModelPostgres

/// `pgmodel schema`: the store's schema version history, oldest first — every registration that changed
/// tables and every version a migration plan moved the store to, with its stages, duration and rows.
///
/// ```
/// pgmodel schema --schema public
/// pgmodel schema --json
/// ```
struct SchemaCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "schema", abstract: "Show the store's schema version history.",
        discussion: """
            A row marked 'migrated' or 'versioned' carries a fingerprint: the plan's models had exactly that \
            shape at that version. 'registered' rows are plain registrations (apps without a migration plan). \
            To see what a migration would do before running it, call ModelContainer.migrationDryRun(for:migrationPlan:configurations:) \
            from the app (see docs/MIGRATIONS.md).
            """)

    @OptionGroup var database: DatabaseOptions

    @Flag(name: .long, help: "Print the history as JSON.")
    var json = false

    func run() async throws {
        // Every failure prints as `Error: <sentence> [code]`, argument checks included.
        try await reportingFailures {
            let configuration = try database.configuration()
            let records = try await reportingFailures {
                try await DatabaseSession.run(configuration) { engine, connection in
                    try await engine.schemaHistory(on: connection)
                }
            }
            if json {
                let encoder = JSONEncoder()
                encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
                encoder.dateEncodingStrategy = .iso8601
                print(String(decoding: try encoder.encode(records), as: UTF8.self))
                return
            }
            guard !records.isEmpty else {
                print("schema \(configuration.schemaName): nothing registered yet")
                return
            }
            print("schema \(configuration.schemaName): \(records.count) version\(records.count == 1 ? "" : "s")")
            let formatter = ISO8601DateFormatter()
            for record in records {
                let kind = record.fingerprint == nil ? "registered" : (record.stages.map { $0 != "[]" } == true ? "migrated  " : "versioned ")
                let fingerprint = record.fingerprint.map { String($0.prefix(12)) } ?? "-".padding(toLength: 12, withPad: " ", startingAt: 0)
                print("\(record.version.padding(toLength: 8, withPad: " ", startingAt: 0))  \(kind)  \(fingerprint)  \(formatter.string(from: record.appliedAt))  \(record.appliedBy ?? "-")  \(record.entities.joined(separator: ", "))")
                for stage in Self.stages(record.stages) {
                    print("          \(stage)")
                }
            }
        }
    }

    /// One line per recorded stage: `custom 1.0.0 → 2.0.0  412 ms  Trip=4 BucketListItem=8`.
    static func stages(_ json: String?) -> [String] {
        guard let json, let reports = try? JSONDecoder().decode([MigrationStageReport].self, from: Data(json.utf8)) else { return [] }
        return reports.map { report in
            "\(report.kind) \(report.from) → \(report.to)  \(report.milliseconds) ms  " +
                report.rows.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " ")
        }
    }
}
