import Foundation
@_spi(PGModelInternals) import PGModel
@_spi(PGModelInternals) import PGModelCore
@_spi(PGModelInternals) import PGModelPostgres
import Testing

/// `pgmodel share`, `unshare` and `shares`, run as the built executable against the test database.
@Suite("CLI: pgmodel share, unshare, shares")
struct ShareCommandTests {
    /// The `pgmodel` executable built next to the test bundle.
    static func executable() throws -> URL {
        let bundle = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        for candidate in [bundle.appendingPathComponent("pgmodel"), bundle.deletingLastPathComponent().appendingPathComponent("pgmodel")]
        where FileManager.default.isExecutableFile(atPath: candidate.path) {
            return candidate
        }
        throw PGModelError(.invalidConfiguration, "the pgmodel executable is not built next to the tests (swift build --build-tests builds it)")
    }

    /// Runs `pgmodel` with `arguments`; returns the exit status, standard output and standard error.
    static func run(_ arguments: [String], removingEnvironment removed: Set<String> = [],
                    directory: URL? = nil) async throws -> (status: Int32, output: String, error: String) {
        let environment = removed.isEmpty ? nil : ProcessInfo.processInfo.environment.filter { !removed.contains($0.key) }
        return try await ExamplesTests.run(try executable(), arguments, replacingEnvironment: environment, directory: directory)
    }

    @Test("an admin shares, lists and revokes from the command line; bad input exits non-zero with a coded error")
    func shareFromTheCommandLine() async throws {
        let schemaName = TestDatabase.uniqueSchema("cli")
        try await ServerTestHarness.register(SharingTests.schema, schemaName: schemaName)
        let alice = try await ServerTestHarness.makeUser("cli_alice")
        let bob = try await ServerTestHarness.makeUser("cli_bob")
        let trip = UUID.v7()
        try await ServerTestHarness.withDatabase(schemaName: schemaName) { engine, connection in
            _ = try await engine.save(SaveRequest(inserts: [RowValues(entity: "Expedition", id: trip, values: ["code": .string("C"), "title": .string("T")])]),
                                      in: SharingTests.schema, as: .user(alice), on: connection)
        }
        let url = try TestDatabase.url() + (try TestDatabase.url().contains("?") ? "&" : "?") + "schema=" + schemaName
        let id = trip.uuidString.lowercased()

        let shared = try await Self.run(["share", "Expedition", id, bob.name, "--read-write", "--database-url", url])
        #expect(shared.status == 0, "\(shared.error)")
        #expect(shared.output.contains("shared Expedition \(id) with \(bob.name) (readWrite)"))
        let listed = try await Self.run(["shares", "--user", bob.name, "--database-url", url])
        #expect(listed.status == 0, "\(listed.error)")
        let row = listed.output.split(separator: "\n").first { $0.contains(id) }.map(String.init) ?? ""
        #expect(row.split(separator: "\t").map(String.init).prefix(5) == ["Expedition", id, alice.name, bob.name, "readWrite"])
        let byRecord = try await Self.run(["shares", "Expedition", id, "--database-url", url])
        #expect(byRecord.output.contains(bob.name))

        let revoked = try await Self.run(["unshare", "Expedition", id, bob.name, "--database-url", url])
        #expect(revoked.status == 0, "\(revoked.error)")
        #expect(try await Self.run(["shares", "--user", bob.name, "--database-url", url]).output.contains("no shares"))

        let unknown = try await Self.run(["share", "Expedition", id, "nobody'; DROP TABLE pgmodel.users; --", "--database-url", url])
        #expect(unknown.status != 0)
        #expect(unknown.error.contains("[not_found]"))
        let badID = try await Self.run(["share", "Expedition", "not-a-uuid", bob.name, "--database-url", url])
        #expect(badID.status != 0)
        let badEntity = try await Self.run(["unshare", "Nope", id, bob.name, "--database-url", url])
        #expect(badEntity.error.contains("[unknown_entity]"))
        #expect(try await SharingTests.trusted(schemaName, "SELECT count(*)::text FROM pgmodel.users WHERE id = '\(alice.id)'") == ["1"])
    }
}
