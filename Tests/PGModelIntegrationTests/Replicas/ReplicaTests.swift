import Foundation
import Logging
import NIOPosix
@_spi(PGModelInternals) import PGModelCore
@_spi(PGModelInternals) @testable import PGModelPostgres
import PGModelTesting
import Testing

/// Reads on a real streaming standby (`scripts/standby.sh`): a store that saved reads its save, whether
/// the standby keeps up, lags (replay paused) or is gone.
@Suite("Replicas: reads on a streaming standby keep read-your-writes", .serialized,
       .enabled(if: Standby.isAvailable, "needs pg_basebackup and PGMODEL_TEST_DATABASE_URL"))
struct ReplicaTests {
    static let logger: Logger = {
        var logger = Logger(label: "pgmodel.test.replicas")
        logger.logLevel = .error
        return logger
    }()

    static let note = EntityDescription(name: "Note", attributes: [AttributeDescription(name: "title", type: .string)])

    /// A direct store on the test database with `standby` as its replica, in a fresh schema, dropped after `body`.
    static func withStore<T: Sendable>(_ standby: Standby, extra: String = "", _ body: (PostgresModelStore) async throws -> T) async throws -> T {
        var configuration = try PostgresStoreConfiguration.parse(standby.storeURL(extra: extra))
        configuration.schemaName = TestDatabase.uniqueSchema("rep")
        let store = PostgresModelStore(configuration: configuration, eventLoop: MultiThreadedEventLoopGroup.singleton.next(),
                                       dropsSchemaOnClose: true, logger: logger)
        do {
            try await store.prepare(SchemaDescription(entities: [note]))
            let result = try await body(store)
            await store.close()
            return result
        } catch {
            await store.close()
            throw error
        }
    }

    /// Saves one note titled `title`; returns its id.
    static func save(_ title: String, in store: PostgresModelStore) async throws -> UUID {
        let id = UUID.v7()
        let result = try await store.save(SaveRequest(inserts: [RowValues(entity: "Note", id: id, values: ["title": .string(title)])]))
        #expect(result.commitLSN != nil, "a save that wrote reports its commit position")
        return id
    }

    @Test("read-your-writes under load: every fetch right after its save sees it, and the standby serves reads")
    func readYourWritesUnderLoad() async throws {
        try await Standby.with { standby in
            // A generous wait: under load the standby should catch up within it and serve the reads.
            try await Self.withStore(standby, extra: "&pgmodel_replica_wait=2000") { store in
                let tasks = 8, rounds = 10
                let missed = try await withThrowingTaskGroup(of: Int.self) { group in
                    for task in 0..<tasks {
                        group.addTask {
                            var missed = 0
                            for round in 0..<rounds {
                                let id = try await Self.save("t\(task)-\(round)", in: store)
                                let ids = Set(try await store.fetch(FetchRequest(entity: "Note")).map(\.id))
                                if !ids.contains(id) { missed += 1 }
                                let count = try await store.count(FetchRequest(entity: "Note"))
                                if count < round + 1 { missed += 1 }
                            }
                            return missed
                        }
                    }
                    var total = 0
                    for try await missed in group { total += missed }
                    return total
                }
                #expect(missed == 0, "reads that did not see their own save")
                let served = try #require(store.replicaReads)
                #expect(served.replica > 0, "no read was served by the standby")
                #expect(served.replica + served.primary >= tasks * rounds * 2)
            }
        }
    }

    @Test("a lagging standby (replay paused): the fetch after a save waits its bound, then reads the primary, and sees the save")
    func pausedReplay() async throws {
        try await Standby.with { standby in
            try await Self.withStore(standby, extra: "&pgmodel_replica_wait=100") { store in
                _ = try await Self.save("before", in: store)
                _ = try await store.fetch(FetchRequest(entity: "Note"))
                try await standby.pause()
                do {
                    let before = try #require(store.replicaReads)
                    let id = try await Self.save("while paused", in: store)
                    let started = ContinuousClock.now
                    let ids = Set(try await store.fetch(FetchRequest(entity: "Note")).map(\.id))
                    let waited = ContinuousClock.now - started
                    #expect(ids.contains(id), "the fetch after the save must see it")
                    let after = try #require(store.replicaReads)
                    #expect(after.primary == before.primary + 1, "the paused standby must not serve the read")
                    #expect(after.replica == before.replica)
                    #expect(waited >= .milliseconds(90), "the read waited for the standby first")
                    try await standby.resume()
                } catch {
                    try? await standby.resume()
                    throw error
                }
                // Replay resumed: the standby catches up and serves reads again.
                let id = try await Self.save("after", in: store)
                let before = try #require(store.replicaReads)
                let deadline = ContinuousClock.now + .seconds(10)
                var servedByStandby = false
                while !servedByStandby, ContinuousClock.now < deadline {
                    #expect(Set(try await store.fetch(FetchRequest(entity: "Note")).map(\.id)).contains(id))
                    servedByStandby = try #require(store.replicaReads).replica > before.replica
                }
                #expect(servedByStandby, "the standby serves reads once it has replayed the save")
            }
        }
    }

    @Test("a standby that goes away: reads go to the primary and succeed")
    func standbyGone() async throws {
        try await Standby.with { standby in
            try await Self.withStore(standby) { store in
                _ = try await Self.save("first", in: store)
                _ = try await store.fetch(FetchRequest(entity: "Note"))
                try await standby.stop()
                for round in 0..<5 {
                    let id = try await Self.save("gone \(round)", in: store)
                    #expect(Set(try await store.fetch(FetchRequest(entity: "Note")).map(\.id)).contains(id))
                    #expect(try await store.count(FetchRequest(entity: "Note")) == round + 2)
                }
                let served = try #require(store.replicaReads)
                #expect(served.primary >= 10)
            }
        }
    }
}
