import Foundation
import Logging
import NIOPosix
@_spi(PGModelInternals) @testable import PGModelClient
@_spi(PGModelInternals) import PGModelCore
@_spi(PGModelInternals) @testable import PGModelIO
@_spi(PGModelInternals) @testable import PGModelPostgres
import PostgresNIO
import PGModelTestSupport
import Testing

/// History at the engine level against a real PostgreSQL: what a save records, per-user visibility,
/// deletes and expired tokens, the visibility horizon with two writers committing out of order, and the
/// LISTEN doorbell across a killed backend.
@Suite("Engine history")
struct EngineHistoryTests: EngineTestSuite {
    static let storePrefix = "h"
    let schema = GraphTestSchema.schema
    let logger: Logger = {
        var logger = Logger(label: "pgmodel.test.history")
        logger.logLevel = .warning
        return logger
    }()

    func connect(_ id: Int = 1) async throws -> PostgresConnection {
        try await EngineTestStore.connect(id: id, logger: logger)
    }

    func track(_ id: UUID, _ title: String, album: UUID? = nil) -> RowValues {
        RowValues(entity: "Track", id: id, values: ["title": .string(title), "duration": .int(200), "album": album.map(PGValue.uuid) ?? .null])
    }

    func exec(_ c: EngineConnection, _ sql: String, _ binds: [PGValue] = []) async throws {
        var bindings = PostgresBindings()
        for bind in binds {
            if case .string(let s) = bind { bindings.append(s) }
        }
        _ = try await c.connection.query(PostgresQuery(unsafeSQL: sql, binds: bindings), logger: logger).collect()
    }

    @Test("a small save sends its history behind its write unawaited: when the write fails, its error is the one thrown, no history is left, and the connection saves again")
    func failedWriteLeavesNoHistory() async throws {
        try await withStore { engine, c, _ in
            let first = UUID.v7()
            _ = try await engine.save(SaveRequest(inserts: [track(first, "A")]), in: schema, as: .trusted, on: c)
            // The same id again: the row's insert fails; the history statements behind it never apply.
            do {
                _ = try await engine.save(SaveRequest(inserts: [track(first, "again")]), in: schema, as: .trusted, on: c)
                Issue.record("inserting an id that exists should fail")
            } catch let error as PGModelError {
                #expect(error.code == .uniqueViolation, "the row's own error, not the aborted statements' after it: \(error)")
            }
            let second = UUID.v7()
            _ = try await engine.save(SaveRequest(inserts: [track(second, "B")]), in: schema, as: .trusted, on: c)
            let page = try await engine.fetchHistory(HistoryRequest(), as: .trusted, on: c)
            #expect(page.transactions.map { $0.changes.map(\.id) } == [[first], [second]])
            let titles = try await engine.fetch(FetchRequest(entity: "Track"), in: schema, as: .trusted, on: c).compactMap { $0["title"] }
            #expect(Set(titles) == [.string("A"), .string("B")])
        }
    }

    /// A direct save whose history is one statement sends its history transaction and changes as one
    /// statement; both kinds of changes (a run of inserts, and updates as columns) read back whole.
    @Test func aSmallSavesHistoryIsOneStatement() async throws {
        try await withStore { engine, c, _ in
            let album = UUID.v7(), t1 = UUID.v7(), t2 = UUID.v7()
            let inserts = try await EngineTestStore.statements(on: c) {
                _ = try await engine.save(SaveRequest(inserts: [RowValues(entity: "Album", id: album, values: ["title": .string("Blue")]),
                                                                track(t1, "A", album: album), track(t2, "B", album: album)], author: "one"),
                                          in: schema, as: .trusted, on: $0)
            }
            let history = inserts.filter { $0.contains(#""pgmodel"."transactions""#) || $0.contains(#""pgmodel"."changes""#) }
            #expect(history.count == 1 && history.allSatisfy { $0.hasPrefix(#"WITH "t" AS (INSERT INTO "pgmodel"."transactions""#) }, "\(history)")
            let updates = try await EngineTestStore.statements(on: c) {
                _ = try await engine.save(SaveRequest(updates: [RowValues(entity: "Track", id: t1, values: ["title": .string("A2")])], author: "two"),
                                          in: schema, as: .trusted, on: $0)
            }
            #expect(updates.filter { $0.contains(#""pgmodel"."changes""#) }.count == 1, "\(updates)")
            let page = try await engine.fetchHistory(HistoryRequest(), as: .trusted, on: c)
            #expect(page.transactions.map(\.author) == ["one", "two"])
            #expect(page.transactions.first.map { Set($0.changes.map(\.id)) } == [album, t1, t2])
            #expect(page.transactions.last?.changes.map(\.id) == [t1])
            #expect(page.transactions.last?.changes.first?.updatedAttributes == ["title"])
        }
    }

    @Test func savesRecordTheirChangesAndAuthor() async throws {
        try await withStore { engine, c, _ in
            let album = UUID.v7(), t1 = UUID.v7(), t2 = UUID.v7()
            _ = try await engine.save(SaveRequest(inserts: [RowValues(entity: "Album", id: album, values: ["title": .string("Blue")]),
                                                            track(t1, "A", album: album), track(t2, "B", album: album)], author: "App"),
                                      in: schema, as: .trusted, on: c)
            _ = try await engine.save(SaveRequest(updates: [RowValues(entity: "Track", id: t1, values: ["title": .string("A2")])]),
                                      in: schema, as: .trusted, on: c)
            _ = try await engine.save(SaveRequest(deletes: [RowReference(entity: "Album", id: album)]), in: schema, as: .trusted, on: c)
            _ = try await engine.save(SaveRequest(), in: schema, as: .trusted, on: c)   // writes nothing, records nothing

            let page = try await engine.fetchHistory(HistoryRequest(), as: .trusted, on: c)
            #expect(page.transactions.count == 3)
            guard page.transactions.count == 3 else { return }
            let (insert, update, delete) = (page.transactions[0], page.transactions[1], page.transactions[2])
            #expect(insert.author == "App" && update.author == nil)
            #expect(insert.changes.map(\.kind) == [.insert, .insert, .insert])
            #expect(Set(insert.changes.map(\.id)) == [album, t1, t2])
            #expect(update.changes == [HistoryChangeRecord(changeIdentifier: update.changes.first?.changeIdentifier ?? 0, kind: .update,
                                                           entity: "Track", id: t1, updatedAttributes: ["title"], values: ["title": .string("A2")])])
            // Album cascades to its tracks: all three deletes are recorded.
            #expect(Set(delete.changes.filter { $0.kind == .delete }.map(\.id)) == [album, t1, t2])
            #expect(insert.token < update.token && update.token < delete.token)

            let newest = try await engine.fetchHistory(HistoryRequest(newestFirst: true, limit: 1), as: .trusted, on: c)
            #expect(newest.transactions.map(\.token) == [delete.token])
            let onlyDeletes = try await engine.fetchHistory(
                HistoryRequest(filter: .and([.token(.greater, insert.token), .entities(["Album"])])), as: .trusted, on: c)
            #expect(onlyDeletes.transactions.map(\.token) == [delete.token])
            let byAuthor = try await engine.fetchHistory(HistoryRequest(filter: .authorIn(["App", "Other"])), as: .trusted, on: c)
            #expect(byAuthor.transactions.map(\.token) == [insert.token])
            let notApp = try await engine.fetchHistory(HistoryRequest(filter: .author(.notEqual, "App")), as: .trusted, on: c)
            #expect(notApp.transactions.count == 2, "a nil author is not \"App\"")
            let albumChangesOnly = try await engine.fetchHistory(HistoryRequest(changedEntities: ["Album"]), as: .trusted, on: c)
            #expect(albumChangesOnly.transactions.flatMap(\.changes).allSatisfy { $0.entity == "Album" })
        }
    }

    @Test func usersSeeOnlyHistoryOfTheirOwnRows() async throws {
        try await withStore { engine, c, _ in
            let suffix = UUID().uuidString.prefix(8).lowercased()
            let aliceUser = try await engine.createUser(name: "alice-\(suffix)", password: "pw", isAdmin: false, on: c)
            let bobUser = try await engine.createUser(name: "bob-\(suffix)", password: "pw", isAdmin: false, on: c)
            let alice = Requester.user(aliceUser)
            let bob = Requester.user(bobUser)
            _ = try await engine.save(SaveRequest(inserts: [track(UUID.v7(), "alice's")]), in: schema, as: alice, on: c)
            _ = try await engine.save(SaveRequest(inserts: [track(UUID.v7(), "bob's")]), in: schema, as: bob, on: c)
            let seenByAlice = try await engine.fetchHistory(HistoryRequest(), as: alice, on: c)
            #expect(seenByAlice.transactions.count == 1)
            #expect(seenByAlice.transactions.first?.userName == aliceUser.name)
            #expect(try await engine.fetchHistory(HistoryRequest(), as: .trusted, on: c).transactions.count == 2)
            _ = bob
            await #expect { try await engine.deleteHistory(HistoryRequest(), as: alice, on: c) } throws: {
                ($0 as? PGModelError)?.code == .forbidden
            }
        }
    }

    @Test func deletedHistoryExpiresOlderTokens() async throws {
        try await withStore { engine, c, _ in
            for i in 0..<3 {
                _ = try await engine.save(SaveRequest(inserts: [track(UUID.v7(), "t\(i)")]), in: schema, as: .trusted, on: c)
            }
            let all = try await engine.fetchHistory(HistoryRequest(), as: .trusted, on: c).transactions.map(\.token)
            #expect(all.count == 3)
            guard all.count == 3 else { return }
            let deleted = try await engine.deleteHistory(HistoryRequest(filter: .token(.lessOrEqual, all[1])), as: .trusted, on: c)
            #expect(deleted == 2)
            let rest = try await engine.fetchHistory(HistoryRequest(filter: .token(.greater, all[1])), as: .trusted, on: c)
            #expect(rest.transactions.map(\.token) == [all[2]])
            await #expect { try await engine.fetchHistory(HistoryRequest(filter: .token(.greater, all[0])), as: .trusted, on: c) } throws: {
                ($0 as? PGModelError)?.code == .historyTokenExpired
            }
        }
    }

    /// Writer A starts first and commits last; writer B commits in between, while A is still open. B is
    /// visible at once (nothing holds history back), and A, which takes its position only at its end,
    /// lands after B: a reader that resumed from B's token still gets A, exactly once.
    @Test func aLateCommitIsNeverSkipped() async throws {
        try await withStore { engine, reader, name in
            let before = try await engine.fetchHistory(HistoryRequest(newestFirst: true, limit: 1), as: .trusted, on: reader)
            let start = before.transactions.first?.token ?? 0
            let slow = try await connect(2)
            defer { Task { try? await slow.close() } }
            try await exec(EngineConnection(slow), "BEGIN")
            let rows = try await slow.query(PostgresQuery(unsafeSQL: "INSERT INTO pgmodel.transactions (schema_name, author) VALUES ($1, 'slow') RETURNING id",
                                                          binds: { var b = PostgresBindings(); b.append(name); return b }()), logger: logger).collect()
            let slowID = try #require(try rows.first?.decode(Int64.self))
            _ = try await engine.save(SaveRequest(inserts: [track(UUID.v7(), "fast")], author: "fast"), in: schema, as: .trusted, on: reader)

            let whileSlowRuns = try await engine.fetchHistory(HistoryRequest(filter: .token(.greater, start)), as: .trusted, on: reader)
            #expect(whileSlowRuns.transactions.map(\.author) == ["fast"], "B is visible while A runs")
            let fastToken = try #require(whileSlowRuns.transactions.last?.token)

            // A's position is assigned at its COMMIT, as every save's.
            try await exec(EngineConnection(slow), "COMMIT")
            #expect(slowID > 0)
            let resumed = try await engine.fetchHistory(HistoryRequest(filter: .token(.greater, fastToken)), as: .trusted, on: reader)
            #expect(resumed.transactions.map(\.author) == ["slow"], "the late commit comes after B, not skipped")
            let all = try await engine.fetchHistory(HistoryRequest(filter: .token(.greater, start)), as: .trusted, on: reader)
            #expect(all.transactions.map(\.author) == ["fast", "slow"], "in commit order")
        }
    }

    /// An open write transaction elsewhere in the cluster (another database) holds nothing back.
    @Test func anotherDatabasesOpenTransactionHoldsNothingBack() async throws {
        try await withStore { engine, c, _ in
            let other = try await connect(3)
            defer { Task { try? await other.close() } }
            try await exec(EngineConnection(other), "BEGIN")
            try await exec(EngineConnection(other), "SELECT pg_current_xact_id()")   // a write transaction's xid, as an INSERT takes
            _ = try await engine.save(SaveRequest(inserts: [track(UUID.v7(), "now")], author: "now"), in: schema, as: .trusted, on: c)
            let page = try await engine.fetchHistory(HistoryRequest(newestFirst: true, limit: 1), as: .trusted, on: c)
            #expect(page.transactions.first?.author == "now", "read-your-writes with another transaction open")
            try await exec(EngineConnection(other), "ROLLBACK")
        }
    }

    @Test func theDoorbellRingsForItsStoreAndAfterReconnecting() async throws {
        try await withStore { engine, c, name in
            let configuration = try PostgresStoreConfiguration.parse(try TestDatabase.url())
            let listener = ChangeListener(configuration: configuration.connection, schemaName: name,
                                          eventLoop: MultiThreadedEventLoopGroup.singleton.next(), logger: logger)
            var signals = listener.signals().makeAsyncIterator()
            #expect(await next(&signals)?.kind == .reconnected, "LISTEN took effect: catch up")

            let other = PostgresStoreEngine(schemaName: TestDatabase.uniqueSchema("o"), logger: logger)
            try await other.prepare(schema, on: c)
            _ = try await other.save(SaveRequest(inserts: [track(UUID.v7(), "elsewhere")]), in: schema, as: .trusted, on: c)
            try await other.dropSchema(on: c)
            _ = try await engine.save(SaveRequest(inserts: [RowValues(entity: "Album", id: UUID.v7(), values: ["title": .string("X")])]),
                                      in: schema, as: .trusted, on: c)
            let rang = await next(&signals)
            #expect(rang == ChangeSignal(.committed, entities: ["Album"]), "the other store's ring was filtered out")

            try await exec(c, "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = $1",
                           [.string(ChangeListener.applicationName(name))])
            #expect(await next(&signals)?.kind == .reconnected, "after its backend was killed it listens again")
            _ = try await engine.save(SaveRequest(inserts: [track(UUID.v7(), "after")]), in: schema, as: .trusted, on: c)
            #expect(await next(&signals) == ChangeSignal(.committed, entities: ["Track"]))
            await listener.close()
            #expect(await next(&signals) == nil, "closing ends the stream")
        }
    }

    /// The next signal, or nil after 20 s: a test fails instead of hanging.
    func next(_ iterator: inout AsyncStream<ChangeSignal>.Iterator) async -> ChangeSignal? {
        nonisolated(unsafe) var it = iterator
        let result = await withTaskGroup(of: ChangeSignal?.self) { group in
            group.addTask { await it.next() }
            group.addTask { try? await Task.sleep(for: .seconds(20)); return nil }
            let first = await group.next() ?? nil
            group.cancelAll()
            return first
        }
        iterator = it
        return result
    }
}
