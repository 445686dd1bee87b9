import Foundation
@_spi(PGModelInternals) import PGModelCore
@_spi(PGModelInternals) @testable import PGModelPostgres
import PGModelTesting
import Synchronization
import Testing

/// History reads on the standby: the horizon is taken on the primary with its WAL position, the page is
/// read on a standby that has replayed that far (and the caller's last commit), else on the primary.
extension ReplicaTests {
    /// Every history transaction of `store` with a token above `after`, read through the store (so on
    /// the standby when it can).
    static func history(after token: UInt64?, in store: PostgresModelStore) async throws -> [HistoryRecord] {
        let filter: HistoryFilter = token.map { .token(.greater, $0) } ?? .all
        return try await store.fetchHistory(HistoryRequest(filter: filter)).transactions
    }

    /// The ids of the rows `records` changed.
    static func changedIDs(_ records: [HistoryRecord]) -> Set<UUID> {
        Set(records.flatMap { $0.changes.map(\.id) })
    }

    @Test("history read-your-writes: a history read right after a save has it, and the standby serves history reads")
    func historyReadYourWrites() async throws {
        try await Standby.with { standby in
            try await Self.withStore(standby, extra: "&pgmodel_replica_wait=2000") { store in
                var missed = 0
                for round in 0..<20 {
                    let id = try await Self.save("h\(round)", in: store)
                    let records = try await Self.history(after: nil, in: store)
                    if !Self.changedIDs(records).contains(id) { missed += 1 }
                    #expect(records.count == round + 1, "every earlier save is in the page")
                }
                #expect(missed == 0, "history reads that did not see their own save")
                let served = try #require(store.replicaReads)
                #expect(served.replica > 0, "no history read was served by the standby")
            }
        }
    }

    @Test("history with replay paused: the read waits its bound, then reads the primary, and has the save and every one before it")
    func historyPausedReplay() async throws {
        try await Standby.with { standby in
            try await Self.withStore(standby, extra: "&pgmodel_replica_wait=100") { store in
                let first = try await Self.save("before", in: store)
                _ = try await Self.history(after: nil, in: store)
                try await standby.pause()
                do {
                    let before = try #require(store.replicaReads)
                    let second = try await Self.save("while paused", in: store)
                    let started = ContinuousClock.now
                    let records = try await Self.history(after: nil, in: store)
                    let waited = ContinuousClock.now - started
                    #expect(Self.changedIDs(records) == [first, second], "the page has the save and the one before it")
                    let after = try #require(store.replicaReads)
                    #expect(after.primary == before.primary + 1, "the paused standby must not serve the history read")
                    #expect(after.replica == before.replica)
                    #expect(waited >= .milliseconds(90), "the read waited for the standby first")
                    try await standby.resume()
                } catch {
                    try? await standby.resume()
                    throw error
                }
                // Replay resumed: the standby serves history again, complete.
                let third = try await Self.save("after", in: store)
                let before = try #require(store.replicaReads)
                let deadline = ContinuousClock.now + .seconds(10)
                var servedByStandby = false
                while !servedByStandby, ContinuousClock.now < deadline {
                    #expect(Self.changedIDs(try await Self.history(after: nil, in: store)).contains(third))
                    servedByStandby = try #require(store.replicaReads).replica > before.replica
                }
                #expect(servedByStandby, "the standby serves history once it has replayed the save")
            }
        }
    }

    @Test("history on the standby is gap-free: a reader following the feed while many savers commit side by side never skips a position")
    func historyGapFree() async throws {
        try await Standby.with { standby in
            try await Self.withStore(standby, extra: "&pgmodel_replica_wait=2000") { store in
                let savers = 8, rounds = 25
                let done = ReplicaStopFlag()
                async let followed: [UInt64] = {
                    // A feed: each read resumes after the newest token it has seen. A page that skipped a
                    // position below its horizon would lose that transaction for good.
                    var tokens: [UInt64] = []
                    var last: UInt64?
                    while true {
                        let finished = done.isSet
                        let page = try await Self.history(after: last, in: store)
                        tokens += page.map(\.token)
                        last = page.last?.token ?? last
                        if finished { return tokens }
                    }
                }()
                try await withThrowingTaskGroup(of: Void.self) { group in
                    for saver in 0..<savers {
                        group.addTask {
                            for round in 0..<rounds { _ = try await Self.save("s\(saver)-\(round)", in: store) }
                        }
                    }
                    try await group.waitForAll()
                }
                done.set()
                let tokens = try await followed
                let all = try await Self.history(after: nil, in: store).map(\.token)
                #expect(all.count == savers * rounds)
                #expect(tokens == all, "the feed read every position once, in order: \(Set(all).subtracting(tokens).count) skipped")
                let served = try #require(store.replicaReads)
                #expect(served.replica > 0, "no history read was served by the standby")
            }
        }
    }
}

/// A flag one task sets and another reads.
final class ReplicaStopFlag: Sendable {
    private let value = Mutex(false)
    var isSet: Bool { value.withLock { $0 } }
    func set() { value.withLock { $0 = true } }
}
