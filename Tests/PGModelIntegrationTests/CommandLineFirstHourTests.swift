import Foundation
import PGModel
import Testing

/// What a newcomer meets on the command line: a wrong database password says so, and checking a
/// server needs no database.
@Suite("CLI: the first hour")
struct CommandLineFirstHourTests {
    @Test("a wrong database password is named as such, and never printed")
    func wrongPassword() async throws {
        guard var components = URLComponents(string: try TestDatabase.url()) else { return }
        components.password = "not-the-password-7f3a"
        let url = try #require(components.string)
        let result = try await ShareCommandTests.run(["user", "list", "--database-url", url])
        #expect(result.status != 0)
        #expect(result.error.contains("refused the password of user"))
        #expect(!result.error.contains("not-the-password-7f3a"))
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
