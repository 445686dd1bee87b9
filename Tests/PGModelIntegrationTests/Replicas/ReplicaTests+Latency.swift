import Foundation
import NIOPosix
@_spi(PGModelInternals) import PGModelCore
@_spi(PGModelInternals) @testable import PGModelPostgres
import PGModelTesting
import PostgresNIO
import Testing

/// An opt-in measurement, not a check of speed: with `PGMODEL_REPLICA_LATENCY=N`, N saves each for
/// three read-your-writes paths on a real standby, printed as a table of p50/p99.
extension ReplicaTests {
    /// How many saves each path measures; `nil` (the variable unset) skips the measurement.
    static let latencyRounds: Int? = ProcessInfo.processInfo.environment["PGMODEL_REPLICA_LATENCY"].flatMap(Int.init).map { max($0, 1) }

    @Test("read-your-writes latency on the standby (PGMODEL_REPLICA_LATENCY=N)", .enabled(if: ReplicaTests.latencyRounds != nil))
    func readYourWritesLatency() async throws {
        let rounds = Self.latencyRounds ?? 1
        try await Standby.with { standby in
            try await Self.withStore(standby) { store in
                // The same schema through a store without replicas: the primary-only baseline.
                var primaryConfiguration = try PostgresStoreConfiguration.parse(TestDatabase.url())
                primaryConfiguration.schemaName = store.schemaName
                let primary = PostgresModelStore(configuration: primaryConfiguration, eventLoop: MultiThreadedEventLoopGroup.singleton.next(),
                                                 logger: Self.logger)
                var standbyConfiguration = try PostgresStoreConfiguration.parse(TestDatabase.url())
                standbyConfiguration.port = standby.port
                let probe = try await PostgresConnection.connect(on: MultiThreadedEventLoopGroup.singleton.next(),
                                                                 configuration: standbyConfiguration.connection, id: 1, logger: Self.logger)
                do {
                    let table = try await Self.measure(rounds: rounds, store: store, primary: primary, probe: probe)
                    print(table)
                    try await probe.close()
                    await primary.close()
                } catch {
                    try? await probe.close()
                    await primary.close()
                    throw error
                }
            }
        }
    }

    private struct Series {
        var times: [Duration] = []
        var fallbacks = 0

        func row(_ name: String) -> String {
            let sorted = times.sorted()
            func percentile(_ p: Double) -> String {
                guard !sorted.isEmpty else { return "-" }
                let index = min(sorted.count - 1, Int((Double(sorted.count) * p).rounded(.up)) - 1)
                let value = sorted[max(index, 0)].components
                return String(format: "%.2f", Double(value.seconds) * 1000 + Double(value.attoseconds) / 1e15)
            }
            return "| \(name) | \(times.count) | \(percentile(0.5)) | \(percentile(0.99)) | \(fallbacks) |"
        }
    }

    private static func measure(rounds: Int, store: PostgresModelStore, primary: PostgresModelStore, probe: PostgresConnection) async throws -> String {
        var replay = Series(), fetch = Series(), history = Series(), baseline = Series()
        // Warm both stores' pools and schema caches.
        _ = try await Self.save("warm", in: store)
        _ = try await store.fetch(FetchRequest(entity: "Note", limit: 1))
        _ = try await store.fetchHistory(HistoryRequest(newestFirst: true, limit: 1))
        _ = try await primary.fetch(FetchRequest(entity: "Note", limit: 1))
        for round in 0..<rounds {
            // Save return until the standby has replayed the commit (polled on a connection of its own).
            let saved = try await store.save(SaveRequest(inserts: [RowValues(entity: "Note", id: UUID.v7(), values: ["title": .string("r\(round)")])]))
            let commit = try #require(saved.commitLSN)
            var started = ContinuousClock.now
            while true {
                guard ContinuousClock.now < started + .seconds(30) else { throw PGModelError(.timeout, "the standby did not replay a commit within 30 s") }
                let rows = try await probe.query("SELECT pg_last_wal_replay_lsn()::text", logger: Self.logger).collect()
                if let text = try rows.first?.decode(String?.self), let replayed = LogSequenceNumber(text), replayed >= commit { break }
            }
            replay.times.append(ContinuousClock.now - started)

            // Save return until a fetch routed by the store (standby, else primary after the wait) has the row.
            var id = try await Self.save("f\(round)", in: store)
            var before = try #require(store.replicaReads)
            started = .now
            let rows = try await store.fetch(FetchRequest(entity: "Note", identifiers: [id]))
            fetch.times.append(ContinuousClock.now - started)
            #expect(rows.map(\.id) == [id])
            if try #require(store.replicaReads).primary > before.primary { fetch.fallbacks += 1 }

            // The same for a history read (horizon on the primary, page on the standby).
            id = try await Self.save("h\(round)", in: store)
            before = try #require(store.replicaReads)
            started = .now
            let page = try await store.fetchHistory(HistoryRequest(newestFirst: true, limit: 1))
            history.times.append(ContinuousClock.now - started)
            #expect(page.transactions.first?.changes.map(\.id) == [id])
            if try #require(store.replicaReads).primary > before.primary { history.fallbacks += 1 }

            // Baseline: the same fetch on the primary right after a save.
            id = try await Self.save("p\(round)", in: store)
            started = .now
            _ = try await primary.fetch(FetchRequest(entity: "Note", identifiers: [id]))
            baseline.times.append(ContinuousClock.now - started)
        }
        return """
            read-your-writes latency on the standby, ms from save return (replica wait \(store.gateway.replicas?.wait ?? .zero))
            | path | saves | p50 ms | p99 ms | primary fallbacks |
            |---|---|---|---|---|
            \(replay.row("standby replayed the commit (polled)"))
            \(fetch.row("fetch by id, routed"))
            \(history.row("history newest page, routed"))
            \(baseline.row("fetch by id on the primary (baseline)"))
            """
    }
}
