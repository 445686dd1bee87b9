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

    /// The updates of one row in `pgmodel.changes`, oldest first: what each replaced and wrote.
    func recordedUpdates(of id: UUID, in schemaName: String, on c: EngineConnection) async throws
        -> [(previous: [String: PGValue]?, new: [String: PGValue]?)] {
        let rows = try await c.connection.query("""
            SELECT c.previous_values::text, c.new_values::text FROM pgmodel.changes c JOIN pgmodel.transactions t ON t.id = c.transaction_id
             WHERE t.schema_name = \(schemaName) AND c.row_id = \(id) AND c.kind = 'update' ORDER BY c.id
            """, logger: Logger(label: "rv")).collect()
        func values(_ text: String?) throws -> [String: PGValue]? {
            try text.map { try JSONDecoder().decode([String: PGValue].self, from: Data($0.utf8)) }
        }
        return try rows.map { row in
            let (previous, new) = try row.decode((String?, String?).self)
            return (try values(previous), try values(new))
        }
    }

    @Test(arguments: [false, true])
    func aNullifiedReferenceAndAnUpsertRecordWhatTheyReplaced(asUser: Bool) async throws {
        try await withStore { engine, c, schemaName in
            let requester: Requester = asUser
                ? .user(try await engine.createUser(name: "rv_" + UUID().uuidString.prefix(8).lowercased(), password: "x", isAdmin: false, on: c))
                : .trusted
            let trip = UUID.v7(), item = UUID.v7(), again = UUID.v7()
            try await save(engine, c, SaveRequest(inserts: [
                RowValues(entity: "Trip", id: trip, values: ["name": .string("Oslo"), "destination": .string("North")]),
                RowValues(entity: "BucketListItem", id: item, values: ["title": .string("fjord"), "isInPlan": .bool(true), "trip": .uuid(trip)]),
            ]), as: requester)

            // An insert with the unique name of an existing trip updates that trip (an upsert): history keeps
            // what it replaced there, as for an update.
            let upsert = try await save(engine, c, SaveRequest(inserts: [
                RowValues(entity: "Trip", id: again, values: ["name": .string("Oslo"), "destination": .string("South")]),
            ]), as: requester)
            #expect(upsert.remappedIdentifiers == [again: trip])
            let merged = try await recordedUpdates(of: trip, in: schemaName, on: c)
            #expect(merged.count == 1)
            #expect(merged.first?.new == ["name": .string("Oslo"), "destination": .string("South")])
            #expect(merged.first?.previous == ["name": .string("Oslo"), "destination": .string("North")])

            // Deleting the trip clears the item's reference (`.nullify`): the change records the id it held.
            try await save(engine, c, SaveRequest(deletes: [RowReference(entity: "Trip", id: trip)]), as: requester)
            let nullified = try await recordedUpdates(of: item, in: schemaName, on: c)
            #expect(nullified.count == 1)
            #expect(nullified.first?.new == ["trip": .null])
            #expect(nullified.first?.previous == ["trip": .uuid(trip)])
        }
    }

    @Test func aGoneRowUpdatesNothingAndReturnsNothing() async throws {
        try await withStore { _, c, schemaName in
            let rows = try await replaced(RowValues(entity: "Track", id: UUID.v7(), values: ["title": .string("mine")]), in: schemaName, on: c)
            #expect(rows.isEmpty)
        }
    }
}
