import Foundation
@_spi(PGModelInternals) import PGModelCore
@_spi(PGModelInternals) import PGModelPostgres
import Testing

/// `pgmodel history prune` and `pgmodel history retention set|show|clear`, run as the built executable
/// against real PostgreSQL.
@Suite("CLI: pgmodel history")
struct HistoryCommandTests {
    static let schema = SchemaDescription(entities: [EntityDescription(name: "Note", attributes: [AttributeDescription(name: "text", type: .string)])])

    /// A fresh store with `count` one-row saves; returns its name, URL and the saves' tokens, oldest first.
    static func store(saves count: Int) async throws -> (name: String, url: String, tokens: [UInt64]) {
        let name = TestDatabase.uniqueSchema("hcli")
        try await ServerTestHarness.register(schema, schemaName: name)
        let tokens = try await ServerTestHarness.withDatabase(schemaName: name) { engine, connection in
            for i in 0..<count {
                _ = try await engine.save(SaveRequest(inserts: [RowValues(entity: "Note", id: .v7(), values: ["text": .string("n\(i)")])]),
                                          in: schema, as: .trusted, on: connection)
            }
            return try await engine.fetchHistory(HistoryRequest(), as: .trusted, on: connection).transactions.map(\.token)
        }
        return (name, try SessionRevocationTests.databaseURL(schema: name), tokens)
    }

    static func drop(_ name: String) async {
        _ = try? await ServerTestHarness.withDatabase(schemaName: name) { engine, connection in
            _ = try await engine.clearHistoryRetention(store: name, on: connection)
            try await engine.dropSchema(on: connection)
        }
    }

    static func json(_ text: String) throws -> Any {
        try JSONSerialization.jsonObject(with: Data(text.utf8))
    }

    @Test("prune with --keep-changes --json removes the oldest and says what; retention set, show --json, a prune by the setting, clear")
    func pruneAndRetention() async throws {
        let store = try await Self.store(saves: 6)
        do {
            let url = store.url
            let pruned = try await ShareCommandTests.run(["history", "prune", "--store", store.name, "--keep-changes", "4", "--json", "--database-url", url])
            #expect(pruned.status == 0, "\(pruned.error)")
            let report = try #require(try Self.json(pruned.output) as? [String: Any])
            #expect(report["store"] as? String == store.name)
            #expect(report["transactions"] as? Int == 2)
            #expect(report["changes"] as? Int == 2)
            #expect(report["deleted_through_token"] as? String == String(store.tokens[1]))
            #expect(report["max_changes"] as? Int == 4)
            #expect(report["seconds"] is Double)

            let nothing = try await ShareCommandTests.run(["history", "prune", "--store", store.name, "--keep-changes", "4", "--database-url", url])
            #expect(nothing.status == 0 && nothing.output.contains("nothing to remove"), "\(nothing.output) \(nothing.error)")

            let set = try await ShareCommandTests.run(["history", "retention", "set", "--store", store.name, "--max-age", "30d",
                                                       "--max-changes", "2", "--database-url", url])
            #expect(set.status == 0 && set.output.contains("30d") && set.output.contains("at most 2 changes"), "\(set.output) \(set.error)")
            let shown = try await ShareCommandTests.run(["history", "retention", "show", "--store", store.name, "--json", "--database-url", url])
            #expect(shown.status == 0, "\(shown.error)")
            let settings = try #require(try Self.json(shown.output) as? [[String: Any]])
            #expect(settings.count == 1)
            #expect(settings.first?["max_age"] as? String == "30d")
            #expect(settings.first?["max_age_seconds"] as? Int == 2_592_000)
            #expect(settings.first?["max_changes"] as? Int == 2)
            let table = try await ShareCommandTests.run(["history", "retention", "show", "--database-url", url])
            #expect(table.status == 0 && table.output.contains(store.name), "\(table.error)")

            // Without limits, the stored setting applies (a running service may have applied it already).
            let bySetting = try await ShareCommandTests.run(["history", "prune", "--store", store.name, "--database-url", url])
            #expect(bySetting.status == 0 && bySetting.output.contains("beyond the newest 2 changes"), "\(bySetting.output) \(bySetting.error)")
            let left = try await ServerTestHarness.withDatabase(schemaName: store.name) { engine, connection in
                try await engine.fetchHistory(HistoryRequest(), as: .trusted, on: connection).transactions.map(\.token)
            }
            #expect(left == Array(store.tokens[4...]))

            let cleared = try await ShareCommandTests.run(["history", "retention", "clear", "--store", store.name, "--database-url", url])
            #expect(cleared.status == 0, "\(cleared.error)")
            let again = try await ShareCommandTests.run(["history", "retention", "clear", "--store", store.name, "--database-url", url])
            #expect(again.status != 0 && again.error.contains("[not_found]"), "\(again.error)")
            let noSetting = try await ShareCommandTests.run(["history", "prune", "--store", store.name, "--database-url", url])
            #expect(noSetting.status != 0 && noSetting.error.contains("no history retention setting") && noSetting.error.contains("[not_found]"),
                    "\(noSetting.error)")
        } catch {
            await Self.drop(store.name)
            throw error
        }
        await Self.drop(store.name)
    }

    @Test("bad ages and counts exit non-zero with invalid_configuration, before connecting")
    func badArguments() async throws {
        let cases: [[String]] = [
            ["history", "prune", "--store", "s", "--older-than", "30"],
            ["history", "prune", "--store", "s", "--older-than=-1d"],
            ["history", "prune", "--store", "s", "--older-than", "1w"],
            ["history", "prune", "--store", "s", "--keep-changes=-5"],
            ["history", "retention", "set", "--store", "s"],
        ]
        for arguments in cases {
            // A port where nothing listens: the argument check must fail first.
            let result = try await ShareCommandTests.run(arguments + ["--database-url", "postgres://pgmodel:pgmodel@127.0.0.1:9/pgmodel"])
            #expect(result.status != 0, "\(arguments)")
            #expect(result.error.contains("[invalid_configuration]"), "\(arguments): \(result.error)")
        }
    }
}
