import Foundation
import Logging
@_spi(PGModelInternals) import PGModelCore
@_spi(PGModelInternals) import PGModelSQL
@_spi(PGModelInternals) @testable import PGModelPostgres
@_spi(PGModelInternals) import PGModelServer
import PostgresNIO
import Prometheus
import Testing

/// History retention (sql/015_pgmodel_history_retention.sql): a prune removes exactly the oldest committed
/// transactions beyond an age or a number of changes, leaves the rest readable, and expires the tokens
/// it removed, so a reader behind them gets `history_token_expired` instead of silently missing changes.
@Suite("History retention")
struct HistoryRetentionTests: EngineTestSuite {
    static let storePrefix = "hr"
    let schema: SchemaDescription = SchemaDescription(entities: [EntityDescription(name: "Memo", attributes: [
        AttributeDescription(name: "text", type: .string),
    ])])

    func memo(_ text: String) -> RowValues {
        RowValues(entity: "Memo", id: .v7(), values: ["text": .string(text)])
    }

    /// Saves `sizes.count` transactions, the i-th with `sizes[i]` inserts; returns their tokens, oldest first.
    func saveTransactions(_ sizes: [Int], _ engine: PostgresStoreEngine, _ c: EngineConnection) async throws -> [UInt64] {
        for (i, size) in sizes.enumerated() {
            try await save(engine, c, SaveRequest(inserts: (0..<size).map { memo("t\(i) m\($0)") }, author: "t\(i)"))
        }
        let page = try await engine.fetchHistory(HistoryRequest(), as: .trusted, on: c).transactions
        #expect(page.map(\.author) == sizes.indices.map { "t\($0)" })
        return page.map(\.token)
    }

    func isExpired(resumingFrom token: UInt64, _ engine: PostgresStoreEngine, _ c: EngineConnection) async throws -> Bool {
        do {
            _ = try await engine.fetchHistory(HistoryRequest(filter: .token(.greater, token)), as: .trusted, on: c)
            return false
        } catch let error as PGModelError where error.code == .historyTokenExpired {
            return true
        }
    }

    @Test("a count limit removes exactly the oldest transactions beyond the newest N changes, and expires their tokens")
    func pruneByCount() async throws {
        try await withStore { engine, c, store in
            // Changes per transaction, oldest first. From the newest: t5 (3) and t4 (1) fit in 4 changes, t3
            // does not, so t0…t3 go, whole transactions only.
            let tokens = try await saveTransactions([1, 300, 1, 2, 1, 3], engine, c)
            let limits = try HistoryRetention(store: store, maxAge: nil, maxChanges: 4)
            let report = try await engine.pruneHistory(store: store, limits: limits, on: c)
            #expect(report.transactions == 4)
            #expect(report.changes == 304, "a run of 300 inserts counts 300")
            #expect(report.deletedThrough == tokens[3])
            #expect(report.busy == false)

            let kept = try await engine.fetchHistory(HistoryRequest(), as: .trusted, on: c).transactions
            #expect(kept.map(\.token) == Array(tokens[4...]))
            #expect(kept.map(\.changes.count) == [1, 3])

            // Behind the removed history: expired. At or after its newest removed token: readable.
            #expect(try await isExpired(resumingFrom: tokens[0], engine, c))
            #expect(try await isExpired(resumingFrom: tokens[2], engine, c))
            #expect(try await !isExpired(resumingFrom: tokens[3], engine, c))
            let resumed = try await engine.fetchHistory(HistoryRequest(filter: .token(.greater, tokens[4])), as: .trusted, on: c)
            #expect(resumed.transactions.map(\.token) == [tokens[5]])

            // Within the limit now: a second prune removes nothing and keeps the recorded deletion.
            let again = try await engine.pruneHistory(store: store, limits: limits, on: c)
            #expect(again.transactions == 0 && again.changes == 0 && again.deletedThrough == nil)
            #expect(try await isExpired(resumingFrom: tokens[2], engine, c))
        }
    }

    @Test("an age limit removes exactly the transactions saved before it, in bounded batches")
    func pruneByAge() async throws {
        try await withStore { engine, c, store in
            let tokens = try await saveTransactions([2, 1, 1, 1, 2], engine, c)
            // The three oldest were saved days ago (the test moves their timestamps back).
            try await engine.execute(SQLStatement(sql: """
                UPDATE pgmodel.transactions SET created_at = now() - interval '3 days' \
                WHERE schema_name = $1 AND position <= $2::text::bigint
                """, binds: [.string(store), .string(String(tokens[2]))]), on: c)
            let limits = try HistoryRetention(store: store, maxAge: HistoryAge(parsing: "2d"), maxChanges: nil)
            // One change row a batch: each transaction is a batch of its own, whatever its size.
            let report = try await engine.pruneHistory(store: store, limits: limits, batchRows: 1, on: c)
            #expect(report.transactions == 3)
            #expect(report.changes == 4)
            #expect(report.batches == 3)
            #expect(report.deletedThrough == tokens[2])
            let kept = try await engine.fetchHistory(HistoryRequest(), as: .trusted, on: c).transactions
            #expect(kept.map(\.token) == Array(tokens[3...]))
            #expect(kept.map(\.changes.count) == [1, 2])
            #expect(try await isExpired(resumingFrom: tokens[1], engine, c))
            #expect(try await !isExpired(resumingFrom: tokens[3], engine, c))
        }
    }

    @Test("a transaction still committing (position NULL) is never pruned, however old")
    func committingTransactionIsKept() async throws {
        try await withStore { engine, c, store in
            try await engine.execute(SQLStatement(sql: "BEGIN"), on: c)
            do {
                // Its position is assigned at COMMIT: inside this transaction it is still NULL.
                try await engine.execute(SQLStatement(sql: """
                    INSERT INTO pgmodel.transactions (schema_name, author, created_at) VALUES ($1, 'committing', now() - interval '10 days')
                    """, binds: [.string(store)]), on: c)
                let bounds = HistoryPruneBounds(store: store, olderThan: Date(), throughPosition: Int64.max)
                let batch = try await engine.pruneBatch(bounds, on: c)
                #expect(batch.transactions == 0)
                let left = try await engine.query(SQLStatement(sql: "SELECT count(*) FROM pgmodel.transactions WHERE schema_name = $1 AND position IS NULL",
                                                               binds: [.string(store)]), on: c)
                #expect(try left.first?.decode(Int64.self) == 1)
            } catch {
                try? await engine.execute(SQLStatement(sql: "ROLLBACK"), on: c)
                throw error
            }
            try await engine.execute(SQLStatement(sql: "ROLLBACK"), on: c)
        }
    }

    @Test("the setting is stored, listed, replaced and cleared; a prune without limits uses it, and without one is not_found")
    func settingRoundTrip() async throws {
        try await withStore { engine, c, store in
            do {
                _ = try await engine.pruneHistory(store: store, on: c)
                Issue.record("a prune without limits or setting succeeded")
            } catch let error as PGModelError {
                #expect(error.code == .notFound)
            }
            let stored = try await engine.setHistoryRetention(
                HistoryRetention(store: store, maxAge: HistoryAge(parsing: "30d"), maxChanges: nil), on: c)
            #expect(stored.maxAge?.seconds == 30 * 86_400 && stored.maxChanges == nil && stored.updatedAt != nil)
            let replaced = try await engine.setHistoryRetention(
                HistoryRetention(store: store, maxAge: HistoryAge(parsing: "90m"), maxChanges: 7), on: c)
            #expect(replaced.maxAge?.description == "90m" && replaced.maxChanges == 7)
            #expect(try await engine.historyRetentions(store: store, on: c).map(\.maxChanges) == [7])
            #expect(try await engine.historyRetentions(on: c).contains { $0.store == store })
            let tokens = try await saveTransactions([1, 1, 1, 1, 1, 1, 1, 1, 1], engine, c)
            let report = try await engine.pruneHistory(store: store, on: c)
            #expect(report.maxChanges == 7 && report.maxAge?.seconds == 5_400)
            // Another pruner (the service) may have pruned it first: either way seven are left.
            let kept = try await engine.fetchHistory(HistoryRequest(), as: .trusted, on: c).transactions
            #expect(kept.map(\.token) == Array(tokens[2...]))
            #expect(try await engine.clearHistoryRetention(store: store, on: c))
            #expect(try await !engine.clearHistoryRetention(store: store, on: c))
            #expect(try await engine.historyRetentions(store: store, on: c).isEmpty)
        }
    }

    @Test("pgmodel serve prunes every store with a setting periodically, and stops with the server")
    func servicePrunesPeriodically() async throws {
        try await withStore { engine, c, store in
            let tokens = try await saveTransactions([1, 2, 1, 1], engine, c)
            _ = try await engine.setHistoryRetention(HistoryRetention(store: store, maxAge: nil, maxChanges: 1), on: c)
            do {
                let registry = PrometheusCollectorRegistry()
                let metered = MetricsEndpointTests.metered(registry)
                try await ServerTestHarness.withRunningServer(configure: {
                    metered(&$0)
                    $0.historyRetentionInterval = .milliseconds(100)
                }) { server, _ in
                    let deadline = ContinuousClock.now + .seconds(30)
                    while try await ServerTestHarness.withDatabase(schemaName: store, { e, c in
                        try await e.fetchHistory(HistoryRequest(), as: .trusted, on: c).transactions.count
                    }) > 1 {
                        guard ContinuousClock.now < deadline else {
                            Issue.record("the service did not prune store \(store) within 30 s")
                            return
                        }
                        try await Task.sleep(for: .milliseconds(50))
                    }
                    // Other stores' settings may be pruned by the same pass: at least this store's four changes.
                    let metricsPort = try await server.metricsPort()
                    _ = try await MetricsEndpointTests.scrape(port: metricsPort) { $0.samples["pgmodel_history_pruned_changes_total", default: 0] >= 4 }
                }
            } catch {
                _ = try? await engine.clearHistoryRetention(store: store, on: c)
                throw error
            }
            let kept = try await engine.fetchHistory(HistoryRequest(), as: .trusted, on: c).transactions
            #expect(kept.map(\.token) == [tokens[3]])
            #expect(try await isExpired(resumingFrom: tokens[1], engine, c))
            _ = try await engine.clearHistoryRetention(store: store, on: c)
        }
    }
}
