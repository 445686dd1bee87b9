import Foundation
@_spi(PGModelInternals) import PGModel
import Testing

/// What a newcomer meets on the command line: a wrong database password says so, and checking a
/// server needs no database.
@Suite("CLI: the first hour")
struct CommandLineFirstHourTests {
    // The private cluster PGModelTesting starts when no server is named trusts its own socket: there is
    // no password to get wrong.
    @Test("a wrong database password is named as such, and never printed",
          .enabled(if: ProcessInfo.processInfo.environment["PGMODEL_TEST_DATABASE_URL"] != nil,
                   "needs a server that checks passwords: scripts/test.sh's cluster, or PGMODEL_TEST_DATABASE_URL"))
    func wrongPassword() async throws {
        guard var components = URLComponents(string: try TestDatabase.url()) else { return }
        components.password = "not-the-password-7f3a"
        let url = try #require(components.string)
        let result = try await ShareCommandTests.run(["user", "list", "--database-url", url])
        #expect(result.status != 0)
        #expect(result.error.contains("refused the password of user"))
        #expect(!result.error.contains("not-the-password-7f3a"))
    }

    @Test("without DATABASE_URL the CLI finds the checkout's cluster on the port it took, not only 55432")
    func findsTheCheckoutsClusterPort() async throws {
        // A checkout whose cluster (by the scripts' marker) took port 9, where nothing answers: the error
        // names the port the CLI read from postmaster.pid.
        let checkout = FileManager.default.temporaryDirectory.appendingPathComponent("pgmodel-cli-\(UUID().uuidString)")
        let data = checkout.appendingPathComponent(".pgdata")
        try FileManager.default.createDirectory(at: data, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: checkout) }
        try Data("PGModel cluster\n".utf8).write(to: data.appendingPathComponent("PGMODEL_CLUSTER"))
        try Data("4242\n\(data.path)\n1700000000\n9\n/tmp\n127.0.0.1\n".utf8).write(to: data.appendingPathComponent("postmaster.pid"))
        let result = try await ShareCommandTests.run(["user", "list"], removingEnvironment: ["DATABASE_URL", "PGMODEL_TEST_DATABASE_URL"],
                                                     directory: checkout)
        #expect(result.status != 0)
        #expect(result.error.contains("127.0.0.1:9:"), "\(result.error)")
    }

    @Test("every failure prints in one shape, Error: <sentence> [code], and a refused connection says so with host and port")
    func oneShapeOfError() async throws {
        let cases: [(arguments: [String], says: String, code: String)] = [
            (["user", "list", "--database-url", "not a url"], "postgres://", "invalid_configuration"),
            (["status", "--server", "pgmodel://alice:secret@127.0.0.1:9"], "127.0.0.1:9: connection refused", "connection_failed"),
            (["user", "list", "--database-url", "postgres://pgmodel:pgmodel@127.0.0.1:9/pgmodel"], "127.0.0.1:9: connection refused", "connection_failed"),
            (["serve", "--port", "99999"], "99999", "invalid_configuration"),
        ]
        for (arguments, says, code) in cases {
            let result = try await ShareCommandTests.run(arguments)
            let lines = result.error.split(separator: "\n").filter { $0.hasPrefix("Error: ") }
            #expect(result.status != 0, "\(arguments)")
            #expect(lines.count == 1 && lines[0].contains(says) && lines[0].hasSuffix("[\(code)]"), "\(arguments): \(result.error)")
            #expect(!result.error.contains("PGModelError(") && !result.error.contains("SingleConnectionFailure") && !result.error.contains("Usage:"),
                    "\(arguments): \(result.error)")
        }
    }

    @Test("pgmodel status --server works without DATABASE_URL")
    func statusWithoutDatabase() async throws {
        let service = try await TestService.shared()
        let url = try await service.newUserURL()
        let result = try await ShareCommandTests.run(["status", "--server", url.absoluteString],
                                                     removingEnvironment: ["DATABASE_URL", "PGMODEL_TEST_DATABASE_URL"])
        #expect(result.status == 0)
        #expect(result.output.contains("server: pgmodel"))
        #expect(!result.output.contains("database:"))
    }
}
