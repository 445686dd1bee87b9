import Foundation
import Logging
@_spi(PGModelInternals) import PGModelCore
@_spi(PGModelInternals) import PGModelSQL
@_spi(PGModelInternals) @testable import PGModelPostgres
import PostgresNIO
import PGModelTestSupport
import Testing

/// Set-based updates, deletes and links: one save of many changes is a constant number of
/// statements, and what it writes — rows, history, errors — is what the same changes saved one at a
/// time write.
@Suite("Set-based writes")
struct SetWriteTests: EngineTestSuite {
    static let storePrefix = "w"
    static let note = EntityDescription(name: "Note", attributes: [
        AttributeDescription(name: "title", type: .string, preservesValueOnDeletion: true),
        AttributeDescription(name: "tags", type: .stringArray, isOptional: true),
        AttributeDescription(name: "size", type: .int16),
    ])

    let schema = SchemaDescription(entities: GraphTestSchema.schema.entities + [Self.note])

    func row(_ entity: String, _ values: [String: PGValue]) -> RowValues {
        RowValues(entity: entity, id: .v7(), values: values)
    }

    func tracks(_ count: Int, of album: UUID) -> [RowValues] {
        (0..<count).map { row("Track", ["title": .string("t\($0)"), "duration": .int(Int64($0)), "album": .uuid(album)]) }
    }

    /// How many rows `sql` (a `count(*)`) counts.
    func count(_ c: EngineConnection, _ sql: String) async throws -> Int64 {
        var result: Int64 = -1
        for try await r in try await c.connection.query(PostgresQuery(unsafeSQL: sql), logger: Logger(label: "pgmodel.test.count")) { result = try r.decode(Int64.self) }
        return result
    }

    /// The changes history recorded, without the ids that differ between two runs of the same changes.
    func historyShape(_ changes: [HistoryChangeRecord]) -> [String] {
        changes.map { "\($0.kind) \($0.entity) \($0.updatedAttributes) \($0.values.sorted { $0.key < $1.key }) \($0.tombstone.sorted { $0.key < $1.key })" }
    }

    /// Updates of three shapes (a column, two columns and a reference, all three with nils), so one
    /// statement must leave each row's other columns alone.
    func updates(of rows: [RowValues], to album: UUID) -> [RowValues] {
        rows.enumerated().map { i, r in
            var values: [String: PGValue] = [:]
            switch i % 3 {
            case 0: values["title"] = .string("u\(i)")
            case 1: values["duration"] = .int(Int64(i * 7)); values["album"] = .uuid(album)
            default: values["title"] = .string("w\(i)"); values["duration"] = .int(-1); values["album"] = .null
            }
            return RowValues(entity: "Track", id: r.id, values: values)
        }
    }

    @Test func aSaveOfManyUpdatesIsAConstantNumberOfStatementsAndWritesWhatOneRowSavesWrite() async throws {
        try await withStore { engine, c, s in
            let a = row("Album", ["title": .string("A")]), b = row("Album", ["title": .string("B")])
            try await save(engine, c, SaveRequest(inserts: [a, b]))
            var counts: [Int] = []
            for n in [2, 40, 900] {
                let bulk = tracks(n, of: a.id)
                try await save(engine, c, SaveRequest(inserts: bulk))
                let sent = try await statements(on: c) { c in try await save(engine, c, SaveRequest(updates: updates(of: bulk, to: b.id))) }
                counts.append(sent.count)
                #expect(sent.filter { $0.hasPrefix("UPDATE \"\(s)\"") && $0.contains("unnest(") }.count == 1, "\(sent)")
            }
            #expect(Set(counts).count == 1, "statements per save: \(counts)")

            // The same updates one save at a time (the one-row statement) and in one save: same rows, same history.
            let single = tracks(12, of: a.id), bulk = tracks(12, of: a.id)
            try await save(engine, c, SaveRequest(inserts: single + bulk))
            for update in updates(of: single, to: b.id) {
                let sent = try await statements(on: c) { c in try await save(engine, c, SaveRequest(updates: [update])) }
                #expect(sent.filter { $0.contains("unnest(") && !$0.contains("\"pgmodel\".\"changes\"") }.isEmpty)
                #expect(sent.count == counts[0], "one model costs what the set-based save costs: \(sent)")
            }
            try await save(engine, c, SaveRequest(updates: updates(of: bulk, to: b.id)))
            let stored = Dictionary(uniqueKeysWithValues: try await fetch(engine, c, FetchRequest(entity: "Track")).map { ($0.id, $0.values) })
            for (one, many) in zip(single, bulk) {
                #expect(try #require(stored[one.id]) == (try #require(stored[many.id])))
            }
            #expect(stored[bulk[0].id]?["duration"] == .int(0) && stored[bulk[0].id]?["album"] == .uuid(a.id))
            #expect(stored[bulk[1].id]?["title"] == .string("t1") && stored[bulk[1].id]?["album"] == .uuid(b.id))
            #expect(stored[bulk[2].id]?["album"] == .null)
            let transactions = try await engine.fetchHistory(HistoryRequest(), as: .trusted, on: c).transactions
            let oneRow = transactions.dropLast().suffix(12).flatMap(\.changes)
            let setBased = try #require(transactions.last).changes
            #expect(setBased.map(\.id) == bulk.map(\.id))
            #expect(historyShape(setBased) == historyShape(oneRow))
        }
    }

    @Test func updatesOfOneRowTwiceAndOfEveryTypeApplyInTheRequestsOrder() async throws {
        try await withStore { engine, c, _ in
            let notes = (0..<4).map { row("Note", ["title": .string("n\($0)"), "tags": .string(#"["a"]"#), "size": .int(Int64($0))]) }
            try await save(engine, c, SaveRequest(inserts: notes))
            // Two updates of one row in one save: the second wins, and history merges them into one change.
            let updates = [
                RowValues(entity: "Note", id: notes[0].id, values: ["title": .string("first"), "tags": .null]),
                RowValues(entity: "Note", id: notes[1].id, values: ["tags": .string(#"["x", "y"]"#)]),
                RowValues(entity: "Note", id: notes[0].id, values: ["title": .string("second"), "size": .int(300)]),
                RowValues(entity: "Note", id: notes[2].id, values: ["tags": .string("[]")]),
            ]
            try await save(engine, c, SaveRequest(updates: updates))
            let stored = Dictionary(uniqueKeysWithValues: try await fetch(engine, c, FetchRequest(entity: "Note")).map { ($0.id, $0.values) })
            #expect(stored[notes[0].id] == ["title": .string("second"), "tags": .null, "size": .int(300)])
            #expect(stored[notes[1].id]?["tags"] == .string(#"["x", "y"]"#) && stored[notes[1].id]?["title"] == .string("n1"))
            #expect(stored[notes[2].id]?["tags"] == .string("[]"))
            #expect(stored[notes[3].id] == notes[3].values)
            let changes = try #require(try await engine.fetchHistory(HistoryRequest(), as: .trusted, on: c).transactions.last).changes
            #expect(changes.map(\.id) == [notes[0].id, notes[1].id, notes[2].id])
            #expect(changes[0].updatedAttributes == ["tags", "title", "size"])
            #expect(changes[0].values == ["title": .string("second"), "tags": .null, "size": .int(300)])
            // A value out of its column's range fails the whole save, as a one-row update does.
            await #expect { try await save(engine, c, SaveRequest(updates: [
                RowValues(entity: "Note", id: notes[1].id, values: ["size": .int(1)]),
                RowValues(entity: "Note", id: notes[2].id, values: ["size": .int(70_000)]),
            ])) } throws: { ($0 as? PGModelError)?.code == .typeMismatch }
            #expect(try await fetch(engine, c, FetchRequest(entity: "Note")).first { $0.id == notes[1].id }?.values["size"] == .int(1))
        }
    }

    @Test func uniquenessUnderASetBasedUpdateIsTheOneRowPaths() async throws {
        try await withStore { engine, c, _ in
            let x = row("Trip", ["name": .string("x"), "destination": .string("X")])
            let y = row("Trip", ["name": .string("y"), "destination": .string("Y")])
            let z = row("Trip", ["name": .string("z"), "destination": .string("Z")])
            try await save(engine, c, SaveRequest(inserts: [x, y, z]))
            func rename(_ trip: RowValues, _ name: String) -> RowValues { RowValues(entity: "Trip", id: trip.id, values: ["name": .string(name)]) }
            // Freed first, then taken: one row at a time this succeeds, so the set-based save does too.
            let sent = try await statements(on: c) { c in try await save(engine, c, SaveRequest(updates: [rename(z, "w"), rename(y, "z"), rename(x, "y")])) }
            #expect(sent.contains { $0.hasPrefix("SAVEPOINT") })
            let names = try await fetch(engine, c, FetchRequest(entity: "Trip", sort: [SortKey("destination")])).map(\.values["name"])
            #expect(names == [.string("y"), .string("z"), .string("w")])
            // A value another row keeps: uniqueViolation naming the class, and nothing written.
            await #expect { try await save(engine, c, SaveRequest(updates: [rename(x, "v"), rename(y, "w")])) }
                throws: { ($0 as? PGModelError)?.code == .uniqueViolation && ($0 as? PGModelError)?.model == "Trip" }
            let after = try await fetch(engine, c, FetchRequest(entity: "Trip", sort: [SortKey("destination")])).map(\.values["name"])
            #expect(after == names)
            // Columns outside every uniqueness constraint: no savepoint.
            let plain = try await statements(on: c) { c in try await save(engine, c, SaveRequest(updates: [x, y].map {
                RowValues(entity: "Trip", id: $0.id, values: ["destination": .string("D")]) })) }
            #expect(!plain.contains { $0.hasPrefix("SAVEPOINT") })
        }
    }

    @Test func missingAndForbiddenRowsFailASetBasedUpdateAsTheyFailOneRow() async throws {
        try await withStore { engine, c, _ in
            let suffix = UUID().uuidString.prefix(8).lowercased()
            let alice = try await engine.createUser(name: "w_alice_\(suffix)", password: "x", isAdmin: false, on: c)
            let bob = try await engine.createUser(name: "w_bob_\(suffix)", password: "x", isAdmin: false, on: c)
            let hers = row("Album", ["title": .string("hers")]), shared = row("Album", ["title": .string("shared")])
            try await save(engine, c, SaveRequest(inserts: [hers, shared],
                                                  shares: [ShareChange(record: RowReference(entity: "Album", id: shared.id), user: bob.name, permission: .readOnly)]),
                           as: .user(alice))
            let mine = (0..<3).map { row("Album", ["title": .string("mine\($0)")]) }
            try await save(engine, c, SaveRequest(inserts: mine), as: .user(bob))
            func retitle(_ r: RowValues) -> RowValues { RowValues(entity: "Album", id: r.id, values: ["title": .string("changed")]) }
            // A row shared read-only: forbidden. A row Bob cannot see (Alice's own) or that never existed: notFound.
            await #expect { try await save(engine, c, SaveRequest(updates: mine.map(retitle) + [retitle(shared)]), as: .user(bob)) }
                throws: { ($0 as? PGModelError)?.code == .forbidden && ($0 as? PGModelError)?.model == "Album" }
            await #expect { try await save(engine, c, SaveRequest(updates: [retitle(hers)] + mine.map(retitle)), as: .user(bob)) }
                throws: { ($0 as? PGModelError)?.code == .notFound }
            await #expect { try await save(engine, c, SaveRequest(updates: mine.map(retitle) + [retitle(row("Album", [:]))]), as: .user(bob)) }
                throws: { ($0 as? PGModelError)?.code == .notFound }
            #expect(try await fetch(engine, c, FetchRequest(entity: "Album"), as: .user(bob)).allSatisfy { $0.values["title"] != .string("changed") })
            // Deleting rows Bob may see but not delete: forbidden, found in one lookup; nothing deleted.
            await #expect { try await save(engine, c, SaveRequest(deletes: (mine + [shared]).map { RowReference(entity: "Album", id: $0.id) }), as: .user(bob)) }
                throws: { ($0 as? PGModelError)?.code == .forbidden }
            #expect(try await fetch(engine, c, FetchRequest(entity: "Album"), as: .user(bob)).count == 4)
            // His own rows, set-based.
            try await save(engine, c, SaveRequest(updates: mine.map(retitle)), as: .user(bob))
            #expect(try await fetch(engine, c, FetchRequest(entity: "Album"), as: .user(bob)).filter { $0.values["title"] == .string("changed") }.count == 3)
        }
    }

    @Test func aSaveOfManyDeletesIsAConstantNumberOfStatementsWithDeleteRules() async throws {
        try await withStore { engine, c, _ in
            var counts: [Int] = []
            for n in [2, 40, 600] {
                let albums = (0..<n).map { row("Album", ["title": .string("a\($0)")]) }
                let children = albums.flatMap { tracks(2, of: $0.id) }
                // Playlists reach the tracks through a join table: their rows cascade, the playlists stay.
                let playlist = row("Playlist", ["name": .string("p\(n)")])
                let links = children.map { LinkChange(entity: "Playlist", relationship: "tracks", source: playlist.id, destination: $0.id, isAdded: true) }
                try await save(engine, c, SaveRequest(inserts: albums + children + [playlist], links: links))
                let sent = try await statements(on: c) { c in
                    let result = try await save(engine, c, SaveRequest(deletes: albums.map { RowReference(entity: "Album", id: $0.id) }))
                    #expect(result.deleted.count == 3 * n)
                }
                counts.append(sent.count)
                #expect(try await fetch(engine, c, FetchRequest(entity: "Track")).isEmpty)
                #expect(try await fetch(engine, c, FetchRequest(entity: "Playlist")).count == 1)
                try await save(engine, c, SaveRequest(deletes: [RowReference(entity: "Playlist", id: playlist.id)]))
            }
            #expect(Set(counts).count == 1, "statements per save: \(counts)")
            // .deny: a publisher with albums is not deleted, nor anything else of the save.
            let publishers = (0..<5).map { row("Publisher", ["name": .string("p\($0)")]) }
            let albums = (0..<5).map { row("Album", ["title": .string("d\($0)"), "publisher": $0 == 3 ? .uuid(publishers[3].id) : .null]) }
            try await save(engine, c, SaveRequest(inserts: publishers + albums))
            await #expect { try await save(engine, c, SaveRequest(updates: [RowValues(entity: "Album", id: albums[0].id, values: ["title": .string("x")])],
                                                                  deletes: publishers.map { RowReference(entity: "Publisher", id: $0.id) })) }
                throws: { ($0 as? PGModelError)?.code == .deleteDenied && ($0 as? PGModelError)?.keyPath == "albums" }
            #expect(try await fetch(engine, c, FetchRequest(entity: "Publisher")).count == 5)
            #expect(try await fetch(engine, c, FetchRequest(entity: "Album")).contains { $0.values["title"] == .string("d0") })
            // Deleting the album too lifts the rule; .nullify sets the references of those left behind.
            let trip = row("Trip", ["name": .string("t"), "destination": .string("T")])
            let items = (0..<3).map { row("BucketListItem", ["title": .string("i\($0)"), "isInPlan": .bool(true), "trip": .uuid(trip.id)]) }
            try await save(engine, c, SaveRequest(inserts: [trip] + items))
            let result = try await save(engine, c, SaveRequest(deletes: (publishers.map { RowReference(entity: "Publisher", id: $0.id) })
                + [RowReference(entity: "Album", id: albums[3].id), RowReference(entity: "Trip", id: trip.id)]))
            #expect(result.deleted.count == 7)
            #expect(try await fetch(engine, c, FetchRequest(entity: "BucketListItem")).allSatisfy { $0.values["trip"] == .null })
            let changes = try #require(try await engine.fetchHistory(HistoryRequest(), as: .trusted, on: c).transactions.last).changes
            #expect(changes.filter { $0.kind == .update }.map(\.id).sorted() == items.map(\.id).sorted())
            #expect(changes.filter { $0.kind == .delete }.count == 7)
        }
    }

    @Test func deletesKeepTombstonesAsOneRowDeletesDo() async throws {
        try await withStore { engine, c, _ in
            let notes = (0..<6).map { row("Note", ["title": .string("n\($0)"), "size": .int(Int64($0))]) }
            try await save(engine, c, SaveRequest(inserts: notes))
            try await save(engine, c, SaveRequest(deletes: [RowReference(entity: "Note", id: notes[0].id)]))
            try await save(engine, c, SaveRequest(deletes: notes.dropFirst().map { RowReference(entity: "Note", id: $0.id) }))
            let transactions = try await engine.fetchHistory(HistoryRequest(), as: .trusted, on: c).transactions
            let one = try #require(transactions.dropLast().last).changes, many = try #require(transactions.last).changes
            #expect(one.map(\.tombstone) == [["title": .string("n0")]])
            #expect(many.map(\.tombstone) == (1..<6).map { ["title": .string("n\($0)")] })
        }
    }

    @Test func aSaveOfManyLinksIsAConstantNumberOfStatementsInTheRequestsOrder() async throws {
        try await withStore { engine, c, s in
            var counts: [Int] = []
            for n in [4, 40, 900] {
                let users = (0...n).map { row("User", ["name": .string("u\($0)")]) }
                try await save(engine, c, SaveRequest(inserts: users))
                // User 0 follows everyone: half named from its side (following), half from theirs (followers).
                let follows = users.dropFirst().enumerated().map { i, other in
                    i % 2 == 0 ? LinkChange(entity: "User", relationship: "following", source: users[0].id, destination: other.id, isAdded: true)
                               : LinkChange(entity: "User", relationship: "followers", source: other.id, destination: users[0].id, isAdded: true)
                }
                let sent = try await statements(on: c) { c in try await save(engine, c, SaveRequest(links: follows)) }
                counts.append(sent.count)
                #expect(sent.filter { $0.hasPrefix("INSERT INTO \"\(s)\"") && $0.contains("unnest(") }.count == 2, "\(sent)")
                let removals = follows.map { LinkChange(entity: $0.entity, relationship: $0.relationship, source: $0.source, destination: $0.destination, isAdded: false) }
                let removed = try await statements(on: c) { c in try await save(engine, c, SaveRequest(links: removals)) }
                #expect(removed.count == sent.count)
                let following = "SELECT count(*) FROM \(s).user_followers WHERE followers_id = '\(users[0].id)' OR user_id = '\(users[0].id)'"
                #expect(try await count(c, following) == 0)
                try await save(engine, c, SaveRequest(links: follows))
                #expect(try await count(c, following) == Int64(n))
            }
            #expect(Set(counts).count == 1, "statements per save: \(counts)")
            // One link added and removed (and the reverse) in one save, named from both sides: the last change wins.
            let a = row("User", ["name": .string("a")]), b = row("User", ["name": .string("b")]), d = row("User", ["name": .string("d")])
            try await save(engine, c, SaveRequest(inserts: [a, b, d], links: [LinkChange(entity: "User", relationship: "following", source: a.id, destination: d.id, isAdded: true)]))
            try await save(engine, c, SaveRequest(links: [
                LinkChange(entity: "User", relationship: "following", source: a.id, destination: b.id, isAdded: true),
                LinkChange(entity: "User", relationship: "followers", source: b.id, destination: a.id, isAdded: false),
                LinkChange(entity: "User", relationship: "following", source: a.id, destination: d.id, isAdded: false),
                LinkChange(entity: "User", relationship: "followers", source: d.id, destination: a.id, isAdded: true),
            ]))
            // Only a → d is left: a → b was added then removed, a → d removed then added.
            #expect(try await count(c, "SELECT count(*) FROM \(s).user_followers WHERE followers_id = '\(a.id)' OR user_id = '\(a.id)'") == 1)
            #expect(try await count(c, "SELECT count(*) FROM \(s).user_followers WHERE followers_id = '\(d.id)' OR user_id = '\(d.id)'") == 1)
            // History: one change per row, naming the relationship, in the request's order.
            let changes = try #require(try await engine.fetchHistory(HistoryRequest(), as: .trusted, on: c).transactions.last).changes
            #expect(changes.map(\.id) == [a.id, b.id, d.id])
            #expect(changes[0].updatedAttributes == ["following"])
        }
    }
}

extension SetWriteTests {
    /// The changes each of `writes` stores in one history transaction, written in turn and compared as text
    /// one per change (`pgmodel.change_rows`, whichever way they are stored); rolled back afterwards, so
    /// nothing is left behind.
    static func storedChanges(_ engine: PostgresStoreEngine, _ c: EngineConnection,
                              _ writes: [(Int64) throws -> SQLStatement]) async throws -> [[String]] {
        let sql = HistorySQL(schemaName: engine.schemaName)
        var stored: [[String]] = []
        do {
            try await engine.transaction(on: c) {
                let transaction = try await engine.query(sql.insertTransaction(author: "t", userID: nil, userName: nil), on: c)
                let id = try #require(try transaction.first?.decode(Int64.self))
                let select = SQLStatement(sql: """
                    SELECT concat_ws(' | ', entity, row_id, kind, owner_id, updated_attributes::text, new_values::text, tombstone::text, audience::text, audience_only)
                    FROM pgmodel.change_rows WHERE transaction_id = $1 ORDER BY id
                    """, binds: [.int(id)])
                var before = 0
                for write in writes {
                    try await engine.execute(try write(id), on: c)
                    let rows = try await engine.query(select, on: c).map { try $0.decode(String.self) }
                    stored.append(Array(rows.dropFirst(before)))
                    before = rows.count
                }
                throw PGModelError(.internalError, "roll back")
            }
        } catch let error as PGModelError where error.message == "roll back" {}
        return stored
    }

    /// The column-wise history statement stores, row for row, what the JSON-document statement stored.
    @Test func historyColumnsStoreWhatTheJSONDocumentStored() async throws {
        try await withStore { engine, c, _ in
            var log = HistoryLog()
            let ids = (0..<5).map { _ in UUID.v7() }
            let owner = UUID.v7(), grantee = UUID.v7()
            log.record(.insert, "Trip", ids[0], owner: owner)
            log.record(.update, "Track", ids[1], owner: nil, values: [
                "title": .string(#"quote " and \ backslash, {brace}"#), "duration": .int(-4), "album": .null,
                "ratio": .double(0.1), "amount": .decimal(Decimal(string: "12.50")!), "when": .date(Date(timeIntervalSince1970: 1.5)),
                "token": .uuid(ids[4]), "bytes": .data(Data([0, 1, 255])),
            ])
            log.record(.update, "Track", ids[1], owner: nil, values: [:], attributes: ["odd \"name\""])
            log.record(.update, "User", ids[2], owner: owner, values: [:], attributes: ["following"])
            log.record(.delete, "Note", ids[3], owner: owner, tombstone: ["title": .string("gone")], audience: [grantee, owner])
            log.record(.delete, "Note", ids[4], owner: nil)
            log.recordAudienceEvent(.insert, "Album", ids[0], for: grantee)
            log.recordAudienceEvent(.delete, "Album", ids[1], for: grantee)
            let sql = HistorySQL(schemaName: engine.schemaName)
            let json = String(decoding: try PostgresStoreEngine.historyEncoder.encode(log.entries), as: UTF8.self)
            let columns = try log.columns(encoder: PostgresStoreEngine.historyEncoder)
            let stored = try await Self.storedChanges(engine, c, [
                { sql.insertChanges(transactionID: $0, changes: json) },
                { sql.insertChanges(transactionID: $0, columns: columns) },
            ])
            #expect(stored.count == 2)
            #expect(stored.first?.count == 7)
            #expect(stored.first == stored.last)
            #expect(stored.last?[1].contains(#"odd \"name\""#) == true, "\(stored)")
        }
    }

    /// A chunk of plain inserts written as one array of ids (a run, one `pgmodel.changes` row) stores, change
    /// for change, what the nine-column statement stored for them, with and without an owner.
    @Test func historyInsertColumnsStoreWhatTheColumnsStored() async throws {
        try await withStore { engine, c, _ in
            let sql = HistorySQL(schemaName: engine.schemaName)
            for owner in [nil, UUID.v7()] {
                var log = HistoryLog()
                let ids = (0..<4).map { _ in UUID.v7() }
                for id in ids { log.record(.insert, "Trip", id, owner: owner) }
                let inserts = try #require(log.insertColumns(in: 0..<4))
                let columns = try log.columns(encoder: PostgresStoreEngine.historyEncoder)
                let stored = try await Self.storedChanges(engine, c, [
                    { sql.insertChanges(transactionID: $0, columns: columns) },
                    { sql.insertChanges(transactionID: $0, inserts: inserts) },
                ])
                #expect(stored.count == 2)
                #expect(stored.first?.count == 4)
                #expect(stored.first == stored.last, "\(stored)")
                // In the ids' order.
                #expect(zip(stored.last ?? [], ids).allSatisfy { row, id in row.contains(id.uuidString.lowercased()) }, "\(stored)")
            }
        }
    }
}

extension SetWriteTests {
    /// Inserted rows are kept compactly in the history log, yet the log's changes are the
    /// ones, in the order, it recorded before: an insert stays an insert whatever comes after it (a
    /// merged upsert, a link), an update merges with an earlier update, row changes come before
    /// audience events.
    /// Inserts recorded from the save's own rows (no copy of their ids) are the changes the one-by-one
    /// inserts were: in runs across classes and owners, with merged rows and links between them.
    @Test func historyLogReadsInsertedIdsFromTheSaveRows() throws {
        let owner = UUID.v7()
        let rows = (0..<9).map { i in RowValues(entity: i < 4 ? "Trip" : (i < 7 ? "Album" : "Trip"), id: .v7(), values: [:]) }
        let owners: [UUID?] = [nil, nil, owner, owner, nil, nil, nil, owner, owner]
        let merged: Set<Int> = [3, 5]
        var byRow = HistoryLog(), byID = HistoryLog()
        byRow.insertsCome(from: rows)
        for (i, row) in rows.enumerated() {
            for log in [0, 1] {
                if merged.contains(i) {
                    if log == 0 { byRow.record(.update, row.entity, row.id, owner: owners[i], values: ["name": .string("m")]) }
                    else { byID.record(.update, row.entity, row.id, owner: owners[i], values: ["name": .string("m")]) }
                } else if log == 0 {
                    byRow.recordInsert(ofRow: i, owner: owners[i])
                } else {
                    byID.record(.insert, row.entity, row.id, owner: owners[i])
                }
            }
        }
        // A link to an inserted row after the inserts, and a second insert of a row already recorded.
        for i in [1, 6] {
            byRow.record(.update, rows[i].entity, rows[i].id, owner: owners[i], values: [:], attributes: ["tracks"])
            byID.record(.update, rows[i].entity, rows[i].id, owner: owners[i], values: [:], attributes: ["tracks"])
        }
        byRow.recordInsert(ofRow: 2, owner: owners[2])
        byID.record(.insert, rows[2].entity, rows[2].id, owner: owners[2])
        byRow.recordInsert(ofRow: 99, owner: nil)

        #expect(byRow.count == 9 && byID.count == 9)
        let entries = byRow.entries
        #expect(entries.map(\.row_id) == byID.entries.map(\.row_id))
        #expect(entries.map(\.row_id) == rows.map(\.id))
        #expect(entries.map(\.kind) == byID.entries.map(\.kind))
        #expect(entries.map(\.kind) == ["insert", "insert", "insert", "update", "insert", "update", "insert", "insert", "insert"])
        #expect(entries.map(\.entity) == rows.map(\.entity))
        #expect(entries.map(\.owner_id) == owners)
        #expect(byRow.entities == ["Trip", "Album"] && byID.entities == ["Trip", "Album"])
        for range in [0..<9, 0..<4, 3..<8, 6..<9, 4..<5] {
            #expect(try byRow.columns(encoder: PostgresStoreEngine.historyEncoder, in: range)
                    == byID.columns(encoder: PostgresStoreEngine.historyEncoder, in: range), "\(range)")
        }
        // Only a range of plain inserts of one class and owner is one array of ids: rows 0–1 (Trip, no
        // owner), 2 (Trip, owner), 4 and 6 (Album, no owner, around a merged row), 7–8 (Trip, owner).
        for log in [byRow, byID] {
            #expect(log.insertColumns(in: 0..<2) == HistoryInsertColumns(entity: "Trip", owner: nil, rowIDs: [rows[0].id, rows[1].id]))
            #expect(log.insertColumns(in: 2..<3) == HistoryInsertColumns(entity: "Trip", owner: owner, rowIDs: [rows[2].id]))
            #expect(log.insertColumns(in: 7..<9) == HistoryInsertColumns(entity: "Trip", owner: owner, rowIDs: [rows[7].id, rows[8].id]))
            #expect(log.insertColumns(in: 6..<7) == HistoryInsertColumns(entity: "Album", owner: nil, rowIDs: [rows[6].id]))
            for mixed in [0..<3, 1..<4, 3..<4, 4..<7, 6..<8, 0..<9] {
                #expect(log.insertColumns(in: mixed) == nil, "\(mixed)")
            }
            #expect(log.insertColumns(in: 8..<10) == nil, "past the end")
        }
    }

    @Test func historyLogKeepsInsertsCompactAndInOrder() throws {
        var log = HistoryLog()
        let ids = (0..<6).map { _ in UUID.v7() }
        let owner = UUID.v7(), grantee = UUID.v7()
        log.reserveCapacity(inserts: 0, others: 1)
        log.record(.update, "Track", ids[0], owner: nil, values: ["title": .string("a")])
        log.reserveCapacity(inserts: 3, others: 0)
        log.record(.insert, "Trip", ids[1], owner: owner)
        log.record(.insert, "Album", ids[2], owner: nil)
        // A merged upsert into a row this save inserted, then one into a row it updated.
        log.record(.update, "Trip", ids[1], owner: owner, values: ["name": .string("merged")])
        log.record(.update, "Track", ids[0], owner: nil, values: ["duration": .int(3)])
        log.record(.insert, "Trip", ids[3], owner: owner)
        // An insert of a row the save already changed stays what it was.
        log.record(.insert, "Track", ids[0], owner: nil)
        // Links after the inserts.
        log.record(.update, "Album", ids[2], owner: nil, values: [:], attributes: ["tracks"])
        log.record(.update, "Album", ids[4], owner: nil, values: [:], attributes: ["tracks"])
        log.record(.delete, "Note", ids[5], owner: owner, tombstone: ["title": .string("gone")], audience: [grantee])
        log.recordAudienceEvent(.insert, "Album", ids[2], for: grantee)

        let entries = log.entries
        #expect(log.count == 7)
        #expect(entries.map(\.row_id) == [ids[0], ids[1], ids[2], ids[3], ids[4], ids[5], ids[2]])
        #expect(entries.map(\.kind) == ["update", "insert", "insert", "insert", "update", "delete", "insert"])
        #expect(entries.map(\.entity) == ["Track", "Trip", "Album", "Trip", "Album", "Note", "Album"])
        #expect(entries.map(\.owner_id) == [nil, owner, nil, owner, nil, owner, nil])
        #expect(entries[0].updated_attributes == ["title", "duration"])
        #expect(entries[0].new_values == ["title": .string("a"), "duration": .int(3)])
        for insert in entries[1...3] {
            #expect(insert.updated_attributes.isEmpty && insert.new_values == nil && insert.tombstone == nil && insert.audience == nil && !insert.audience_only)
        }
        #expect(entries[4].updated_attributes == ["tracks"])
        #expect(entries[5].tombstone == ["title": .string("gone")] && entries[5].audience == [grantee])
        #expect(entries[6].audience_only && entries[6].audience == [grantee])
        #expect(log.entities == ["Track", "Trip", "Album", "Note"])

        // Columns of any range are those of the changes at that range.
        func json(_ values: [String: PGValue]?) throws -> String? {
            guard let values else { return nil }
            return values.isEmpty ? "{}" : String(decoding: try PostgresStoreEngine.historyEncoder.encode(values), as: UTF8.self)
        }
        for range in [0..<7, 0..<3, 3..<6, 6..<7, 2..<5] {
            var expected = HistoryChangeColumns(capacity: range.count)
            for e in entries[range] {
                expected.append(entity: e.entity, rowID: e.row_id, kind: e.kind, owner: e.owner_id, updatedAttributes: e.updated_attributes,
                                newValues: try json(e.new_values), tombstone: try json(e.tombstone), audience: e.audience, audienceOnly: e.audience_only)
            }
            #expect(try log.columns(encoder: PostgresStoreEngine.historyEncoder, in: range) == expected, "\(range)")
        }
    }
}
