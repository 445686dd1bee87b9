import Foundation
import Logging
@_spi(PGModelInternals) import PGModelCore
@_spi(PGModelInternals) @testable import PGModelPostgres
@_spi(PGModelInternals) import PGModelSQL
import PGModelTestSupport
import PostgresNIO
import Testing

/// An update that returns what it replaced: the base of conflict detection by attribute. What comes back
/// is the row's newest values of the attributes the update sets — someone else's change included — so
/// comparing them with what the saving context read needs no other round trip.
@Suite("An update returns the values it replaced")
struct ReplacedValuesTests: EngineTestSuite {
    static let storePrefix = "rv"
    let schema = GraphTestSchema.schema

    func replaced(_ row: RowValues, in schemaName: String, on c: EngineConnection) async throws -> [PostgresRow] {
        let renderer = try SQLRenderer(schema: schema, schemaName: schemaName)
        return try await c.connection.query(PostgresValueCoding.query(renderer.updateReturningReplaced(row)), logger: Logger(label: "rv")).collect()
    }

    @Test func anUpdateReturnsTheNewestValuesItOverwrote() async throws {
        try await withStore { engine, c, schemaName in
            let id = UUID.v7()
            try await save(engine, c, SaveRequest(inserts: [RowValues(entity: "Track", id: id, values: ["title": .string("read"), "duration": .int(1)])]))
            // Someone else changes the title after this context read "read".
            try await save(engine, c, SaveRequest(updates: [RowValues(entity: "Track", id: id, values: ["title": .string("theirs")])]))
            let rows = try await replaced(RowValues(entity: "Track", id: id, values: ["title": .string("mine"), "duration": .int(2)]), in: schemaName, on: c)
            #expect(rows.count == 1)
            let (rowID, _, title, duration) = try #require(rows.first).decode((UUID, Optional<UUID>, String, Int64).self)
            #expect(rowID == id && title == "theirs" && duration == 1, "the replaced values: theirs for the title, the ancestor for the duration")
            let now = try await fetch(engine, c, FetchRequest(entity: "Track", identifiers: [id]))
            #expect(now.first?.values["title"] == .string("mine"))
        }
    }

    @Test func anUpdateWaitsForAConcurrentWriterAndReturnsWhatItCommitted() async throws {
        try await withStore { engine, c, schemaName in
            let id = UUID.v7()
            try await save(engine, c, SaveRequest(inserts: [RowValues(entity: "Track", id: id, values: ["title": .string("read"), "duration": .int(1)])]))
            let other = try await EngineTestStore.connect(id: 2, logger: Logger(label: "rv"))
            defer { Task { try? await other.close() } }
            let logger = Logger(label: "rv")
            _ = try await other.query("BEGIN", logger: logger).collect()
            _ = try await other.query(PostgresQuery(unsafeSQL: "UPDATE \(schemaName).track SET title = 'theirs' WHERE id = '\(id.uuidString)'"), logger: logger).collect()
            // The update blocks on the row lock the other transaction holds, then reads its committed value.
            async let rows = replaced(RowValues(entity: "Track", id: id, values: ["title": .string("mine")]), in: schemaName, on: c)
            var waited = false
            for _ in 0..<200 where !waited {
                let locks = try await other.query(PostgresQuery(unsafeSQL:
                    "SELECT count(*)::int8 FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND datname = current_database()"), logger: logger)
                for try await count in locks.decode(Int64.self) { waited = count > 0 }
                if !waited { try await Task.sleep(for: .milliseconds(10)) }
            }
            #expect(waited, "the update waits for the concurrent writer's lock")
            _ = try await other.query("COMMIT", logger: logger).collect()
            let (_, _, title) = try #require(try await rows.first).decode((UUID, Optional<UUID>, String).self)
            #expect(title == "theirs")
        }
    }

    @Test func aGoneRowUpdatesNothingAndReturnsNothing() async throws {
        try await withStore { _, c, schemaName in
            let rows = try await replaced(RowValues(entity: "Track", id: UUID.v7(), values: ["title": .string("mine")]), in: schemaName, on: c)
            #expect(rows.isEmpty)
        }
    }
}
