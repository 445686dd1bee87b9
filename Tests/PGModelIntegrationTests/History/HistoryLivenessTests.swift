import Foundation
import Logging
import NIOPosix
@_spi(PGModelInternals) import PGModel
@_spi(PGModelInternals) import PGModelCore
@_spi(PGModelInternals) import PGModelPostgres
import PostgresNIO
import Testing
import PGModelTesting

/// No other transaction can stall history: an open write transaction in another database of the same
/// cluster (an admin's forgotten BEGIN, a nightly import) holds back neither `fetchHistory` after a save
/// nor observers, on either store.
@Suite("History liveness: nothing else in the cluster holds history back")
struct HistoryLivenessTests {
    typealias Note = HistoryNotes.Note
    typealias Folder = HistoryNotes.Folder

    /// A write transaction left open in the cluster's `postgres` database for the duration of `body`.
    static func withOpenTransactionElsewhere<T: Sendable>(_ body: @Sendable () async throws -> T) async throws -> T {
        var configuration = try PostgresStoreConfiguration.parse(try TestDatabase.url()).connection
        configuration.database = "postgres"
        var logger = Logger(label: "pgmodel.test.liveness")
        logger.logLevel = .warning
        let other = try await PostgresConnection.connect(on: MultiThreadedEventLoopGroup.singleton.next(), configuration: configuration, id: 9, logger: logger)
        _ = try await other.query("BEGIN", logger: logger).collect()
        // Taking an xid is what a write does; it is what held back every reader of the cluster.
        _ = try await other.query("SELECT pg_current_xact_id()", logger: logger).collect()
        do {
            let result = try await body()
            _ = try? await other.query("ROLLBACK", logger: logger).collect()
            try? await other.close()
            return result
        } catch {
            try? await other.close()
            throw error
        }
    }

    @Test("read-your-writes and observers while another database has a write transaction open", arguments: StoreKind.observed)
    func observersKeepUpWithAnOpenTransactionElsewhere(kind: StoreKind) async throws {
        let f = try await StoreFixture.make(kind, [Folder.self, Note.self], service: kind == .service ? try await TestService.seeds() : nil)
        try await Self.withOpenTransactionElsewhere {
            try await offCooperativePool {
                let context = f.newContext()
                context.author = "App"
                let observer = try ResultsObserver<Note, Never>(modelContext: f.newContext())
                let before = observer.results.count
                let counter = try HistoryObserver(authors: ["App"], modelContainer: f.container)
                context.insert(Note(title: "\(f.token)-while-open", body: ""))
                try context.save()
                // The seed's last-token pattern: the save just made is in history at once.
                var last = HistoryDescriptor<DefaultHistoryTransaction>()
                last.sortBy = [.init(\.transactionIdentifier, order: .reverse)]
                last.fetchLimit = 1
                let newest = try context.fetchHistory(last).last
                #expect(newest?.author == "App")
                #expect(newest?.changes.count == 1)
                // Another context's and the history observer: updated while the transaction stays open.
                #expect(waitUntil(reading: { _ = observer.results }, seconds: 10) { observer.results.count == before + 1 })
                #expect(waitUntil(reading: { _ = counter.eventCounter }, seconds: 10) { counter.eventCounter >= 1 })
            }
        }
    }

    /// The seeds' history and observer scenarios, verbatim (the same test functions), while another
    /// database of the cluster has a write transaction open: sections, another context and another
    /// process, `HistoryObserver` by author, last token then changes, tombstones, resuming from tokens.
    @Test("the seeds' observer scenarios while another database has a write transaction open", arguments: StoreKind.observed)
    func seedScenariosWithAnOpenTransactionElsewhere(kind: StoreKind) async throws {
        try await Self.withOpenTransactionElsewhere {
            let scenarios = HistoryObserverTests()
            try await scenarios.everySaveIsOneHistoryTransactionWithItsChanges(kind: kind)   // tombstones
            try await scenarios.theSeedsLastTokenThenChangesFetch(kind: kind)
            try await scenarios.sectionedTripsByDestination(kind: kind)
            try await scenarios.resultsObserverSeesADeleteByAnotherContext(kind: kind)
            try await scenarios.resultsObserverSeesADeleteByAnotherProcess(kind: kind)
            try await scenarios.historyObserverCountsTheAppsSavesAndIgnoresTheServers(kind: kind)
            if kind == .direct { try await scenarios.historyObserverResumesFromSavedTokens() }
        }
    }

    @Test("a long PGModel save in flight in another process delays nobody; its changes appear when it commits")
    func aLongSaveDelaysOnlyItself() async throws {
        let f = try await StoreFixture.make(.direct, [Folder.self, Note.self])
        let schemaName = try #require(URLComponents(url: f.url, resolvingAgainstBaseURL: false)?.queryItems?.first { $0.name == "schema" }?.value)
        var logger = Logger(label: "pgmodel.test.liveness")
        logger.logLevel = .warning
        let configuration = try PostgresStoreConfiguration.parse(try TestDatabase.url()).connection
        let slow = try await PostgresConnection.connect(on: MultiThreadedEventLoopGroup.singleton.next(), configuration: configuration, id: 8, logger: logger)
        // Another process's save, half done: its note and its history transaction are written, not committed.
        let slowNote = UUID.v7()
        _ = try await slow.query("BEGIN", logger: logger).collect()
        _ = try await slow.query(PostgresQuery(unsafeSQL: """
            INSERT INTO "\(schemaName)"."note" (id, entity, title, body) VALUES ('\(slowNote)', 'Note', '\(f.token)-slow', '')
            """), logger: logger).collect()
        let inserted = try await slow.query(PostgresQuery(unsafeSQL: """
            INSERT INTO pgmodel.transactions (schema_name, author) VALUES ('\(schemaName)', 'Slow') RETURNING id
            """), logger: logger).collect()
        let slowTransaction = try #require(try inserted.first?.decode(Int64.self))
        _ = try await slow.query(PostgresQuery(unsafeSQL: """
            INSERT INTO pgmodel.changes (transaction_id, entity, row_id, kind) VALUES (\(slowTransaction), 'Note', '\(slowNote)', 'insert')
            """), logger: logger).collect()
        _ = try await slow.query(PostgresQuery(unsafeSQL: """
            SELECT pg_notify('pgmodel_changes', '{"e":["Note"],"s":"\(schemaName)"}')
            """), logger: logger).collect()
        let counter = try await offCooperativePool { try HistoryObserver(observedModels: [Note.self], modelContainer: f.container) }
        try await offCooperativePool {
            let context = f.newContext()
            let observer = try ResultsObserver<Note, Never>(modelContext: f.newContext())
            let before = observer.results.count
            context.insert(Note(title: "\(f.token)-fast", body: ""))
            try context.save()
            #expect(waitUntil(reading: { _ = observer.results }, seconds: 10) { observer.results.count == before + 1 }, "the fast save is not held back")
            #expect(waitUntil(reading: { _ = counter.eventCounter }, seconds: 10) { counter.eventCounter == 1 })
        }
        _ = try await slow.query("COMMIT", logger: logger).collect()
        try await slow.close()
        // The long save's change arrives when it commits, after the fast one, exactly once.
        try await offCooperativePool {
            #expect(waitUntil(reading: { _ = counter.eventCounter }, seconds: 10) { counter.eventCounter == 2 })
            #expect(counter.eventCounter == 2)
        }
    }

    @Test("a ResultsObserver in the saving context is up to date when save() returns", arguments: StoreKind.observed)
    func saveUpdatesTheContextsOwnObservers(kind: StoreKind) async throws {
        let f = try await StoreFixture.make(kind, [Folder.self, Note.self], service: kind == .service ? try await TestService.seeds() : nil)
        try await offCooperativePool {
            let context = f.newContext()
            let observer = try ResultsObserver<Note, Never>(modelContext: context)
            let before = observer.results.count
            for i in 0..<5 {
                context.insert(Note(title: "\(f.token)-\(i)", body: ""))
                try context.save()
                #expect(observer.results.count == before + i + 1, "no waiting for the history feed")
            }
            let first = try #require(observer.results.first { $0.title == "\(f.token)-0" })
            context.delete(first)
            try context.save()
            #expect(observer.results.count == before + 4)
        }
    }
}

/// Upgrading from xid tokens: a database whose history was written by an older build gets positions that
/// keep every old token valid, in a scratch database of its own.
@Suite("History positions: upgrading from xid tokens")
struct HistoryPositionUpgradeTests {
    @Test("old transactions keep their xid as position; new saves come after every old token")
    func oldTokensResume() async throws {
        try await ScratchDatabase.with(label: "pgmodel.test.upgrade") { c, logger in
            // The layout before positions: the system files up to 003, and history written with xid tokens.
            for file in SystemSQL.files where file.name < "004" {
                for statement in SQLScript.statements(file.sql) { _ = try await c.query(PostgresQuery(unsafeSQL: statement), logger: logger).collect() }
            }
            var oldTokens: [UInt64] = []
            for author in ["old-1", "old-2"] {
                let rows = try await c.query(PostgresQuery(unsafeSQL: "INSERT INTO pgmodel.transactions (schema_name, author) VALUES ('public', '\(author)') RETURNING xid::text"), logger: logger).collect()
                let text = try rows.first?.decode(String.self) ?? ""
                oldTokens.append(try #require(UInt64(text)))
            }
            // This build starts: the whole system SQL, then a save.
            let engine = PostgresStoreEngine(schemaName: "public", logger: logger)
            try await engine.bootstrap(on: EngineConnection(c))
            let schema = SchemaDescription(entities: [EntityDescription(name: "Memo", attributes: [AttributeDescription(name: "text", type: .string)])])
            try await engine.prepare(schema, on: EngineConnection(c))
            _ = try await engine.save(SaveRequest(inserts: [RowValues(entity: "Memo", id: UUID.v7(), values: ["text": .string("new")])], author: "new"),
                                      in: schema, as: .trusted, on: EngineConnection(c))
            let all = try await engine.fetchHistory(HistoryRequest(), as: .trusted, on: EngineConnection(c)).transactions
            #expect(all.map(\.author) == ["old-1", "old-2", "new"])
            #expect(Array(all.prefix(2).map(\.token)) == oldTokens, "an old transaction's position is its old token")
            // A reader holding the first old token resumes with the second and the new save, nothing skipped.
            let resumed = try await engine.fetchHistory(HistoryRequest(filter: .token(.greater, oldTokens[0])), as: .trusted, on: EngineConnection(c)).transactions
            #expect(resumed.map(\.author) == ["old-2", "new"])
        }
    }
}
