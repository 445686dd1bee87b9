import Foundation
import Logging
@_spi(PGModelInternals) import PGModelCore
@_spi(PGModelInternals) @testable import PGModelPostgres
import PostgresNIO
import PGModelTestSupport
import Testing

/// Set-based inserts: one save of many new rows is a constant number of statements, and every
/// behaviour of the one-row path — upserts and remapped ids, inheritance, nils, every attribute type,
/// references between rows of one save, a grantee's rows for a shared record, history — is unchanged.
@Suite("Bulk save")
struct BulkSaveTests: EngineTestSuite {
    static let storePrefix = "b"
    static let sample = EntityDescription(name: "Sample", attributes: [
        AttributeDescription(name: "text", type: .string),
        AttributeDescription(name: "flag", type: .bool),
        AttributeDescription(name: "small", type: .int16),
        AttributeDescription(name: "medium", type: .int32),
        AttributeDescription(name: "large", type: .int64),
        AttributeDescription(name: "single", type: .float),
        AttributeDescription(name: "double", type: .double),
        AttributeDescription(name: "amount", type: .decimal),
        AttributeDescription(name: "when", type: .date),
        AttributeDescription(name: "token", type: .uuid),
        AttributeDescription(name: "bytes", type: .data),
        AttributeDescription(name: "link", type: .url),
        AttributeDescription(name: "document", type: .json),
        AttributeDescription(name: "names", type: .stringArray),
        AttributeDescription(name: "numbers", type: .int64Array),
        AttributeDescription(name: "ratios", type: .doubleArray),
        AttributeDescription(name: "switches", type: .boolArray),
        AttributeDescription(name: "maybeText", type: .string, isOptional: true),
        AttributeDescription(name: "maybeAmount", type: .decimal, isOptional: true),
        AttributeDescription(name: "maybeWhen", type: .date, isOptional: true),
        AttributeDescription(name: "maybeDocument", type: .json, isOptional: true),
        AttributeDescription(name: "maybeNames", type: .stringArray, isOptional: true),
        AttributeDescription(name: "maybeBytes", type: .data, isOptional: true),
    ])

    let schema = SchemaDescription(entities: GraphTestSchema.schema.entities + [Self.sample])

    func row(_ entity: String, _ values: [String: PGValue]) -> RowValues {
        RowValues(entity: entity, id: .v7(), values: values)
    }

    func album(_ title: String) -> RowValues { row("Album", ["title": .string(title)]) }

    func tracks(_ count: Int, of album: UUID?) -> [RowValues] {
        (0..<count).map { row("Track", ["title": .string("t\($0)"), "duration": .int(Int64($0)), "album": album.map(PGValue.uuid) ?? .null]) }
    }

    @Test func aSaveOfManyInsertsIsAConstantNumberOfStatements() async throws {
        try await withStore { engine, c, s in
            var counts: [Int] = []
            for n in [2, 40, 900] {
                let parent = album("A\(n)")
                // Children before their parent: foreign keys are checked at commit.
                let request = SaveRequest(inserts: tracks(n, of: parent.id) + [parent])
                let sent = try await statements(on: c) { c in _ = try await save(engine, c, request) }
                // A long stretch of tracks is a history run of its own; a short one goes with its album.
                // A save whose history is one statement sends its transaction in the same statement.
                let history = sent.filter { $0.contains("\"pgmodel\".\"changes\"") }.count
                #expect(history == (n >= PostgresStoreEngine.historyMinimumRun ? 2 : 1), "\(n) tracks")
                counts.append(sent.count - history - sent.filter { $0.hasPrefix("INSERT INTO \"pgmodel\".\"transactions\"") }.count)
                #expect(sent.filter { $0.hasPrefix("INSERT INTO \"\(s)\"") && $0.contains("unnest(") }.count == 1)
                // Tracks have no uniqueness constraint: every row is inserted or the save fails, so no ids come back.
                #expect(sent.filter { $0.hasPrefix("INSERT INTO \"\(s)\".\"track\"") }.map { $0.contains("RETURNING") } == [false])
                #expect(try await fetch(engine, c, FetchRequest(entity: "Track", predicate: .compare(.equal, .key("album.title"), .value(.string("A\(n)"))))).count == n)
            }
            #expect(Set(counts).count == 1, "statements per save: \(counts)")
            // One model: the one-row statement, as before.
            let one = try await statements(on: c) { c in _ = try await save(engine, c, SaveRequest(inserts: [album("solo")])) }
            #expect(one.filter { $0.contains("unnest(") && !$0.contains("\"pgmodel\".\"changes\"") }.isEmpty)
            #expect(one.filter { $0.hasPrefix("INSERT INTO \"\(s)\"") && $0.contains(" VALUES (") }.count == 1)
            // One statement fewer than a save of tracks and their album, history's included.
            #expect(one.count == counts[0], "one model: \(one)")
        }
    }

    @Test func everyAttributeTypeRoundTripsThroughTheArrayPath() async throws {
        try await withStore { engine, c, _ in
            let base = Date(timeIntervalSince1970: 1_700_000_000.123456)
            func values(_ i: Int) -> [String: PGValue] {
                var v: [String: PGValue] = [
                    "text": .string(i == 0 ? "" : "naïve \"quoted\" {a,b} \\ 🚀 \(i)"),
                    "flag": .bool(i % 2 == 0),
                    "small": .int(i == 1 ? Int64(Int16.min) : Int64(i)),
                    "medium": .int(i == 1 ? Int64(Int32.max) : -Int64(i)),
                    "large": .int(i == 1 ? Int64.min : Int64(i) << 40),
                    "single": .double(i == 1 ? 3.5 : Double(i) / 4),
                    "double": .double(i == 1 ? -.greatestFiniteMagnitude : Double(i) / 3),
                    "amount": .decimal(i == 1 ? Decimal(string: "-12345678901234567890.0123456789")! : Decimal(i) / 8),
                    "when": .date(base.addingTimeInterval(Double(i) * 86_400.5)),
                    "token": .uuid(UUID(uuidString: String(format: "00000000-0000-7000-8000-%012d", i))!),
                    "bytes": .data(i == 0 ? Data() : Data([0, 255, UInt8(i % 256), 10, 0])),
                    "link": .string("https://example.com/\(i)?q=a,b"),
                    "document": .string(#"{"a": [1, 2, {"b": null}], "n": "\#(i)"}"#),
                    "names": .string(i == 0 ? "[]" : #"["a", "b,c", "\"q\"", "\#(i)"]"#),
                    "numbers": .string("[1, -2, \(i)]"),
                    "ratios": .string("[0.5, -1.25]"),
                    "switches": .string("[true, false]"),
                ]
                if i % 3 == 0 {   // optionals: some given, some nil, some absent
                    v["maybeText"] = .string("m\(i)")
                    v["maybeAmount"] = .decimal(Decimal(i) + Decimal(string: "0.5")!)
                    v["maybeWhen"] = .date(base)
                    v["maybeDocument"] = .string(#"{"k": true}"#)
                    v["maybeNames"] = .string(#"["x"]"#)
                    v["maybeBytes"] = .data(Data([1, 2, 3]))
                } else if i % 3 == 1 {
                    for key in ["maybeText", "maybeAmount", "maybeWhen", "maybeDocument", "maybeNames", "maybeBytes"] { v[key] = .null }
                }
                return v
            }
            let count = 7
            // The same values twice: each through a one-model save (the one-row statement), and all in one save.
            let single = (0..<count).map { row("Sample", values($0)) }
            let bulk = (0..<count).map { row("Sample", values($0)) }
            for r in single { _ = try await save(engine, c, SaveRequest(inserts: [r])) }
            let sent = try await statements(on: c) { c in _ = try await save(engine, c, SaveRequest(inserts: bulk)) }
            #expect(sent.contains { $0.contains("unnest(") })
            let stored = try await fetch(engine, c, FetchRequest(entity: "Sample"))
            let byID = Dictionary(uniqueKeysWithValues: stored.map { ($0.id, $0.values) })
            for i in 0..<count {
                let one = try #require(byID[single[i].id]), many = try #require(byID[bulk[i].id])
                #expect(one == many, "row \(i)")
            }
            #expect(byID[bulk[2].id]?["maybeText"] == .null)
            #expect(byID[bulk[3].id]?["maybeText"] == .string("m3"))
            #expect(byID[bulk[1].id]?["large"] == .int(Int64.min))
        }
    }

    @Test func upsertsAndRemappedIdentifiersAreUnchangedInABulkSave() async throws {
        try await withStore { engine, c, _ in
            let existing = row("Trip", ["name": .string("Rome"), "destination": .string("IT")])
            _ = try await save(engine, c, SaveRequest(inserts: [existing]))
            let paris = row("Trip", ["name": .string("Paris"), "destination": .string("FR")])
            // A subclass row meeting an existing row's unique name: it updates that row.
            let rome = row("BusinessTrip", ["name": .string("Rome"), "destination": .string("Roma"), "perdiem": .double(80)])
            let oslo = row("PersonalTrip", ["name": .string("Oslo"), "destination": .string("NO"), "reason": .null])
            // Meets a row inserted earlier in the same save, of another class: merges into it.
            let osloAgain = row("Trip", ["name": .string("Oslo"), "destination": .string("Norway")])
            let lima = row("BusinessTrip", ["name": .string("Lima"), "destination": .string("PE"), "perdiem": .double(20)])
            let result = try await save(engine, c, SaveRequest(inserts: [paris, rome, oslo, osloAgain, lima]))
            #expect(result.remappedIdentifiers == [rome.id: existing.id, osloAgain.id: oslo.id])
            let trips = try await fetch(engine, c, FetchRequest(entity: "Trip", sort: [SortKey("name")]))
            #expect(trips.map(\.values["name"]) == [.string("Lima"), .string("Oslo"), .string("Paris"), .string("Rome")])
            #expect(trips.map(\.entity) == ["BusinessTrip", "PersonalTrip", "Trip", "Trip"])
            #expect(trips.map(\.id) == [lima.id, oslo.id, paris.id, existing.id])
            #expect(trips[1].values["destination"] == .string("Norway") && trips[1].values["reason"] == .null)
            #expect(trips[3].values["destination"] == .string("Roma"))
            // History: the inserts, and the merges as updates of the rows they met, in the save's order.
            let page = try await engine.fetchHistory(HistoryRequest(), as: .trusted, on: c)
            let changes = try #require(page.transactions.last).changes
            #expect(changes.map(\.id) == [paris.id, existing.id, oslo.id, lima.id])
            #expect(changes.map(\.kind) == [.insert, .update, .insert, .insert])
            // An id that collides, in a class without uniqueness constraints: the save fails whole, naming it.
            let first = album("one")
            _ = try await save(engine, c, SaveRequest(inserts: [first]))
            var clash = album("clash")
            clash.id = first.id
            await #expect { _ = try await save(engine, c, SaveRequest(inserts: [album("two"), clash, album("three")])) }
                throws: { ($0 as? PGModelError)?.code == .uniqueViolation && ($0 as? PGModelError)?.model == "Album" }
            #expect(try await fetch(engine, c, FetchRequest(entity: "Album")).map(\.values["title"]) == [.string("one")])
        }
    }

    /// A save larger than one statement's chunk (``PostgresStoreEngine/insertChunkSize``): a constant
    /// number of statements per chunk, every row written, and history in the save's order across chunks.
    @Test func aSaveOfSeveralChunksWritesEveryRowAndItsHistoryInOrder() async throws {
        try await withStore { engine, c, s in
            let count = PostgresStoreEngine.insertChunkSize * 2 + 7
            let parent = album("many")
            let rows = tracks(count, of: parent.id) + [parent]
            let sent = try await statements(on: c) { c in _ = try await save(engine, c, SaveRequest(inserts: rows)) }
            let chunks = (count + PostgresStoreEngine.insertChunkSize - 1) / PostgresStoreEngine.insertChunkSize
            #expect(sent.filter { $0.hasPrefix("INSERT INTO \"\(s)\"") && $0.contains("unnest(") }.count == chunks)
            // The tracks as runs of a chunk each, the last few with their album.
            let historyChunks = count / PostgresStoreEngine.historyChunkSize + 1
            #expect(sent.filter { $0.hasPrefix("INSERT INTO \"pgmodel\".\"changes\"") }.count == historyChunks)
            let stored = try await fetch(engine, c, FetchRequest(entity: "Track", predicate: .compare(.equal, .key("album.title"), .value(.string("many")))))
            #expect(Set(stored.map(\.id)) == Set(rows.dropLast().map(\.id)))
            let page = try await engine.fetchHistory(HistoryRequest(), as: .trusted, on: c)
            let changes = try #require(page.transactions.last).changes
            #expect(changes.map(\.id) == rows.map(\.id))
            #expect(changes.allSatisfy { $0.kind == .insert })
        }
    }

    @Test func referencesBetweenRowsOfOneSaveAndOfEveryClass() async throws {
        try await withStore { engine, c, _ in
            let trip = row("PersonalTrip", ["name": .string("Kyoto"), "destination": .string("JP"), "reason": .string("rest")])
            let other = row("BusinessTrip", ["name": .string("Osaka"), "destination": .string("JP"), "perdiem": .double(1)])
            let items = (0..<5).map { row("BucketListItem", ["title": .string("i\($0)"), "isInPlan": .bool($0 % 2 == 0),
                                                             "trip": $0 == 4 ? .null : .uuid($0 % 2 == 0 ? trip.id : other.id)]) }
            let stay = row("LivingAccommodation", ["name": .string("Ryokan"), "address": .string("Gion"), "trip": .uuid(trip.id)])
            _ = try await save(engine, c, SaveRequest(inserts: items + [stay, trip, other]))
            let kyoto = try await fetch(engine, c, FetchRequest(entity: "BucketListItem", predicate: .compare(.equal, .key("trip.name"), .value(.string("Kyoto")))))
            #expect(Set(kyoto.map(\.id)) == [items[0].id, items[2].id])
            let stays = try await fetch(engine, c, FetchRequest(entity: "LivingAccommodation", predicate: .compare(.equal, .key("trip.destination"), .value(.string("JP")))))
            #expect(stays.map(\.id) == [stay.id])
            // A reference to a row that exists nowhere still fails at commit, and nothing is written.
            let dangling = (0..<3).map { row("BucketListItem", ["title": .string("d\($0)"), "isInPlan": .bool(true), "trip": .uuid(.v7())]) }
            await #expect { _ = try await save(engine, c, SaveRequest(inserts: dangling)) }
                throws: { ($0 as? PGModelError)?.code == .constraintViolation }
            #expect(try await fetch(engine, c, FetchRequest(entity: "BucketListItem")).count == 5)
        }
    }

    @Test func serviceUsersBulkInsertTheirOwnRowsAndChildrenOfASharedRecord() async throws {
        try await withStore { engine, c, _ in
            let suffix = UUID().uuidString.prefix(8).lowercased()
            let alice = try await engine.createUser(name: "b_alice_\(suffix)", password: "x", isAdmin: false, on: c)
            let bob = try await engine.createUser(name: "b_bob_\(suffix)", password: "x", isAdmin: false, on: c)
            let shared = album("shared")
            _ = try await save(engine, c, SaveRequest(inserts: [shared] + tracks(2, of: shared.id),
                                                      shares: [ShareChange(record: RowReference(entity: "Album", id: shared.id), user: bob.name, permission: .readWrite)]),
                               as: .user(alice))
            // Bob adds three tracks to Alice's album (they become hers) and saves an album of his own with two.
            let mine = album("mine")
            let added = tracks(3, of: shared.id)
            let own = tracks(2, of: mine.id)
            let sent = try await statements(on: c) { c in _ = try await save(engine, c, SaveRequest(inserts: added + [mine] + own), as: .user(bob)) }
            #expect(sent.filter { $0.hasPrefix("INSERT INTO") && $0.contains("unnest(") && !$0.contains("\"pgmodel\".\"changes\"") }.count == 2)
            let aliceTracks = try await fetch(engine, c, FetchRequest(entity: "Track", predicate: .compare(.equal, .key("album.title"), .value(.string("shared")))), as: .user(alice))
            #expect(aliceTracks.count == 5)
            let owners = try await c.connection.query(PostgresQuery(unsafeSQL: "SELECT owner_id FROM \(engine.schemaName).track WHERE id = ANY('{\((added + own).map(\.id.uuidString).joined(separator: ","))}'::uuid[]) ORDER BY owner_id = '\(alice.id)' DESC"), logger: Logger(label: "q"))
            var ownerIDs: [UUID] = []
            for try await r in owners { ownerIDs.append(try r.decode(UUID.self)) }
            #expect(ownerIDs == [alice.id, alice.id, alice.id, bob.id, bob.id])
            // Alice cannot see Bob's album; a bulk insert with a reference to it fails at commit.
            await #expect { _ = try await save(engine, c, SaveRequest(inserts: tracks(3, of: mine.id)), as: .user(alice)) }
                throws: { ($0 as? PGModelError)?.code == .constraintViolation }
        }
    }
}

extension BulkSaveTests {
    /// A result of at least ``PostgresStoreEngine/parallelDecodeRows`` rows is decoded in two halves at
    /// once: it must be exactly the result decoded in one piece (here: pages too small to be split), in
    /// order, with every class's shape (the halves hold different mixes of the three classes).
    @Test func aLargeResultDecodedInHalvesIsTheResultDecodedWhole() async throws {
        try await withStore { engine, c, _ in
            let half = PostgresStoreEngine.parallelDecodeRows / 2 + 100
            // First half Trip and BusinessTrip; second half PersonalTrip first, then Trip.
            var rows: [RowValues] = []
            for i in 0..<(2 * half) {
                let entity = i < half ? (i % 2 == 0 ? "Trip" : "BusinessTrip") : (i % 2 == 0 ? "PersonalTrip" : "Trip")
                var values: [String: PGValue] = ["name": .string("trip \(i)"), "destination": .string("d\(i % 7)")]
                if entity == "BusinessTrip" { values["perdiem"] = .double(Double(i) / 4) }
                if entity == "PersonalTrip" { values["reason"] = i % 3 == 0 ? .null : .string("r\(i)") }
                rows.append(RowValues(entity: entity, id: .v7(), values: values))
            }
            _ = try await save(engine, c, SaveRequest(inserts: rows))
            let whole = try await engine.fetchTable(FetchRequest(entity: "Trip"), in: schema, as: .trusted, on: c)
            #expect(whole.rows.count == rows.count)
            var paged: [RowValues] = []
            for offset in stride(from: 0, to: rows.count, by: 1_000) {
                paged += try await fetch(engine, c, FetchRequest(entity: "Trip", limit: 1_000, offset: offset))
            }
            // Compared as one Bool: a failure should not print 9,000 rows.
            let same = whole.rowValues == paged
            #expect(same, "the result decoded in halves differs from the pages decoded whole")
            #expect(Set(whole.rows.map(\.id)) == Set(rows.map(\.id)))
            #expect(Set(whole.shapes.map(\.entity)) == ["Trip", "BusinessTrip", "PersonalTrip"] && whole.shapes.count == 3)
        }
    }
}
