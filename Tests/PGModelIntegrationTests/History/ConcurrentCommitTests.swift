import Foundation
import Logging
import NIOPosix
@_spi(PGModelInternals) import PGModel
@_spi(PGModelInternals) import PGModelCore
@_spi(PGModelInternals) import PGModelPostgres
import PostgresNIO
import Testing
import PGModelTesting

/// Saves of one store commit side by side (no queue at COMMIT), and their doorbells ring after the
/// commit: readers still see a gap-free history and observers still hear of every save.
@Suite("History under concurrent commits")
struct ConcurrentCommitTests {
    typealias Note = HistoryNotes.Note
    typealias Folder = HistoryNotes.Folder

    /// Positions of concurrent saves can become visible out of order; a reader following along from its
    /// last token must still see every one of them (the horizon), none twice, in token order.
    @Test("a reader following concurrent writers from its token never skips or repeats a save", arguments: StoreKind.observed)
    func followingReaderSeesEverySave(kind: StoreKind) async throws {
        let f = try await StoreFixture.make(kind, [Folder.self, Note.self], service: kind == .service ? try await TestService.seeds() : nil)
        let writers = 8, savesEach = 15
        let container = f.container
        let token = f.token
        let start = try await offCooperativePool { () -> DefaultHistoryToken? in
            var newest = HistoryDescriptor<DefaultHistoryTransaction>()
            newest.sortBy = [.init(\.token, order: .reverse)]
            newest.fetchLimit = 1
            return try ModelContext(container).fetchHistory(newest).first?.token
        }
        let reader = Task.detached { () throws -> [DefaultHistoryToken] in
            var seen: [DefaultHistoryToken] = []
            var last = start
            var quietRounds = 0
            // Until every save has been seen and a few more reads found nothing new.
            while quietRounds < 3 {
                let context = ModelContext(container)
                var descriptor = HistoryDescriptor<DefaultHistoryTransaction>()
                if let after = last { descriptor.predicate = #Predicate { $0.token > after } }
                descriptor.sortBy = [.init(\.token)]
                let page = try context.fetchHistory(descriptor)
                seen += page.filter { $0.author == "writer-\(token)" }.map(\.token)
                if let newest = page.last?.token { last = newest }
                quietRounds = seen.count >= writers * savesEach ? quietRounds + 1 : 0
                if Task.isCancelled { break }
            }
            return seen
        }
        try await withThrowingTaskGroup(of: Void.self) { group in
            for w in 0..<writers {
                group.addTask {
                    try await offCooperativePool {
                        let context = ModelContext(container)
                        context.author = "writer-\(token)"
                        for i in 0..<savesEach {
                            context.insert(Note(title: "\(token)-\(w)-\(i)", body: ""))
                            try context.save()
                        }
                    }
                }
            }
            try await group.waitForAll()
        }
        let deadline = ContinuousClock.now + .seconds(60)
        let watchdog = Task.detached {
            try await Task.sleep(until: deadline)
            reader.cancel()
        }
        let seen = try await reader.value
        watchdog.cancel()
        let all = try await offCooperativePool { () -> [DefaultHistoryToken] in
            var descriptor = HistoryDescriptor<DefaultHistoryTransaction>()
            if let start { descriptor.predicate = #Predicate { $0.token > start } }
            descriptor.sortBy = [.init(\.token)]
            return try ModelContext(container).fetchHistory(descriptor).filter { $0.author == "writer-\(token)" }.map(\.token)
        }
        #expect(all.count == writers * savesEach)
        #expect(seen == all, "the following reader saw \(seen.count) of \(all.count) saves, in order and once each")
    }

    /// A save's doorbell rings after its commit, in a statement of its own: a process that dies between
    /// the two leaves a committed save unannounced. The listener's periodic check rings for it.
    @Test("a committed save whose doorbell never came still reaches observers")
    func unannouncedSaveStillReachesObservers() async throws {
        let f = try await StoreFixture.make(.direct, [Folder.self, Note.self])
        let schemaName = try #require(URLComponents(url: f.url, resolvingAgainstBaseURL: false)?.queryItems?.first { $0.name == "schema" }?.value)
        let counter = try await offCooperativePool { try HistoryObserver(observedModels: [Note.self], modelContainer: f.container) }
        var logger = Logger(label: "pgmodel.test.unannounced")
        logger.logLevel = .warning
        let configuration = try PostgresStoreConfiguration.parse(try TestDatabase.url()).connection
        let other = try await PostgresConnection.connect(on: MultiThreadedEventLoopGroup.singleton.next(), configuration: configuration, id: 7, logger: logger)
        // Another process's save, committed, whose doorbell was never rung (it died after COMMIT).
        let note = UUID.v7()
        _ = try await other.query("BEGIN", logger: logger).collect()
        _ = try await other.query(PostgresQuery(unsafeSQL: """
            INSERT INTO "\(schemaName)"."note" (id, entity, title, body) VALUES ('\(note)', 'Note', '\(f.token)-silent', '')
            """), logger: logger).collect()
        let inserted = try await other.query(PostgresQuery(unsafeSQL: """
            INSERT INTO pgmodel.transactions (schema_name, author) VALUES ('\(schemaName)', 'Silent') RETURNING id
            """), logger: logger).collect()
        let transaction = try #require(try inserted.first?.decode(Int64.self))
        _ = try await other.query(PostgresQuery(unsafeSQL: """
            INSERT INTO pgmodel.changes (transaction_id, entity, row_id, kind) VALUES (\(transaction), 'Note', '\(note)', 'insert')
            """), logger: logger).collect()
        _ = try await other.query("COMMIT", logger: logger).collect()
        try await other.close()
        try await offCooperativePool {
            #expect(waitUntil(reading: { _ = counter.eventCounter }, seconds: 20) { counter.eventCounter == 1 },
                    "the HistoryObserver heard of the unannounced save")
            // And it reads it once: later checks find nothing newer.
            #expect(counter.eventCounter == 1)
        }
    }
}
