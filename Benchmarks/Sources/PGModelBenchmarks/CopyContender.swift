import Foundation
import PostgresNIO

/// `psql \copy` of a CSV file holding the same rows: PostgreSQL's own bulk path, the ceiling for inserts.
/// The CSV is written before the clock starts; the time is the psql process from launch to exit,
/// connection included, as a user running it would see it.
final class CopyContender: SuiteContender {
    let key = "copy"
    let title = "psql \\copy"
    let workloads: Set<SuiteWorkload> = [.insert]
    private let table: SuiteTable
    private let psql: String
    private var admin: PostgresConnection?
    private var schema = ""
    private let csv = FileManager.default.temporaryDirectory.appendingPathComponent("pgmodel-bench-\(UUID().uuidString).csv")

    init(table: SuiteTable, psql: String) {
        self.table = table
        self.psql = psql
    }

    func prepare() async throws {
        let admin = try await table.connect()
        self.admin = admin
        schema = SuiteTable.freshSchema(key)
        try await table.execute(SuiteTable.createStatements(schema: schema), on: admin)
    }

    /// Writes the CSV for `rows` (untimed); `insert` must be called with the same rows.
    func writeCSV(_ rows: [RecordRow]) throws {
        let dates = ISO8601DateFormatter()
        var text = ""
        text.reserveCapacity(rows.count * 128)
        for row in rows {
            // No generated value holds a comma, quote or newline, so no field needs quoting; an empty
            // unquoted field is CSV's NULL.
            text += "\(row.id.uuidString),\(row.name),\(row.category),\(row.price),\(row.quantity),\(dates.string(from: row.created)),"
            text += "\(row.active),\(row.note ?? ""),\(row.score),\(row.rank)\n"
        }
        try text.write(to: csv, atomically: true, encoding: .utf8)
    }

    func insert(_ rows: [RecordRow]) async throws {
        try runPSQL("\\copy \"\(schema)\".\"\(SuiteTable.name)\" (\(SuiteTable.columns.joined(separator: ", "))) FROM '\(csv.path)' WITH (FORMAT csv)")
    }

    /// psql with a trivial statement: the part of `insert`'s time that is the process's start and its
    /// login (SCRAM), not the copy. Reported beside the insert so a small N is read fairly.
    func startUp() throws {
        try runPSQL("SELECT 1")
    }

    private func runPSQL(_ command: String) throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: psql)
        process.arguments = ["-X", "-q", "-v", "ON_ERROR_STOP=1", "-d", table.libpqURL, "-c", command]
        let errors = Pipe()
        process.standardError = errors
        // The suite's standard output is its Markdown report.
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        let message = errors.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw SuiteError("psql -c \(command) failed: \(String(decoding: message, as: UTF8.self))")
        }
    }

    func analyze() async throws {
        guard let admin else { throw CancellationError() }
        try await table.execute(["ANALYZE \"\(schema)\".\"\(SuiteTable.name)\""], on: admin)
    }

    func teardown() async throws {
        if let admin {
            try await table.drop(schema: schema, on: admin)
            try await admin.close()
        }
        admin = nil
    }

    func removeCSV() {
        try? FileManager.default.removeItem(at: csv)
    }
}

/// A failure of the suite's own checks (a contender that returned the wrong rows, a tool that failed).
struct SuiteError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
