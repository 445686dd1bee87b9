import Foundation
@_spi(PGModelInternals) import PGModelPostgres
import Testing

/// The store applies an embedded copy of `sql/*.sql`, split into single statements for the extended
/// protocol. These guard the copy against drift and the splitter against the SQL the files use.
@Suite("System SQL")
struct SystemSQLTests {
    static let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    @Test func embeddedCopyMatchesTheSQLFolder() throws {
        let folder = Self.repository.appendingPathComponent("sql")
        let names = try FileManager.default.contentsOfDirectory(atPath: folder.path).filter { $0.hasSuffix(".sql") }.sorted()
        #expect(names == SystemSQL.files.map(\.name), "run scripts/embed-sql.sh")
        for file in SystemSQL.files {
            let onDisk = try String(contentsOf: folder.appendingPathComponent(file.name), encoding: .utf8)
            #expect(onDisk.trimmingCharacters(in: .newlines) == file.sql.trimmingCharacters(in: .newlines), "run scripts/embed-sql.sh")
        }
    }

    @Test func splitterKeepsQuotedAndDollarQuotedSemicolons() {
        let script = """
            -- a comment; with a semicolon
            CREATE SCHEMA a; /* block; comment */
            COMMENT ON TABLE t IS 'it''s; fine';
            DO $x$ BEGIN PERFORM 1; END $x$;
            SELECT "we;ird", $1, $$a;b$$
            """
        #expect(SQLScript.statements(script) == [
            "CREATE SCHEMA a",
            "COMMENT ON TABLE t IS 'it''s; fine'",
            "DO $x$ BEGIN PERFORM 1; END $x$",
            "SELECT \"we;ird\", $1, $$a;b$$",
        ])
    }

    @Test("a batch is one DO block whose statements are base64, so their own dollar quotes cannot end it")
    func batchEncodesEveryStatement() throws {
        let statements = ["DO $pgmodel_batch$ BEGIN NULL; END $pgmodel_batch$", "COMMENT ON TABLE t IS 'it''s'"]
        let block = SQLScript.batch(statements)
        #expect(SQLScript.statements(block) == [block], "one statement")
        #expect(block.hasPrefix("DO $pgmodel_batch$ BEGIN\n") && block.hasSuffix("END $pgmodel_batch$"))
        let encoded = block.split(separator: "\n").dropFirst().dropLast().map { line -> String in
            let payload = line.drop { $0 != "'" }.dropFirst().prefix { $0 != "'" }
            return String(decoding: Data(base64Encoded: String(payload)) ?? Data(), as: UTF8.self)
        }
        #expect(encoded == statements)
        #expect(SQLScript.batch([]) == "DO $pgmodel_batch$ BEGIN\nEND $pgmodel_batch$")
    }

    @Test func systemSQLSplitsIntoWholeStatements() {
        let statements = SystemSQL.files.flatMap { SQLScript.statements($0.sql) }
        #expect(statements.count >= 9)
        #expect(statements.contains { $0.hasPrefix("DO $pgmodel$") && $0.hasSuffix("$pgmodel$") })
        #expect(statements.allSatisfy { !$0.isEmpty && !$0.hasPrefix("--") })
    }
}
