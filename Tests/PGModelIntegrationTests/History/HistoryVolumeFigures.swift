import Foundation
import Logging
import NIOPosix
@_spi(PGModelInternals) import PGModelCore
@_spi(PGModelInternals) import PGModelSQL
@_spi(PGModelInternals) @testable import PGModelPostgres
import PostgresNIO
import Testing

/// Figures, not a check: how history reads, the horizon and pruning behave when a store's history is
/// large. Run with `PGMODEL_HISTORY_VOLUME=<changes>` (for example 10000000):
///
/// ```
/// PGMODEL_HISTORY_VOLUME=10000000 swift test --filter historyVolumeFigures
/// ```
///
/// The history is loaded in SQL, not saved through the engine (a hundred million saves would take days),
/// into store `hv` of a database of its own (`PGMODEL_HISTORY_VOLUME_DATABASE`, default
/// `pgmodel_history_volume`, on the test database's server), created when missing. Loading switches the
/// history tables' triggers off for its own statements, which is why it never runs in a shared database.
/// The database is kept, so a second run with the same or a larger count only times (or tops up); drop it
/// with `DROP DATABASE pgmodel_history_volume`. The shape: transactions of ten one-attribute updates each,
/// spread over a thousand owners, the reading user owning one in a thousand.
@Suite("History volume figures")
struct HistoryVolumeFigures {
    static var changes: Int? { ProcessInfo.processInfo.environment["PGMODEL_HISTORY_VOLUME"].flatMap { Int($0) } }
    static let store = "hv"
    static let changesPerTransaction = 10
    static let owners = 1_000

    @Test("figures: history read, horizon and prune times at a given number of changes",
          .enabled(if: HistoryVolumeFigures.changes.map { $0 >= 10_000 } ?? false))
    func historyVolumeFigures() async throws {
        let wanted = Self.changes ?? 0
        var logger = Logger(label: "pgmodel.test.history-volume")
        logger.logLevel = .warning
        var configuration = try PostgresStoreConfiguration.parse(try TestDatabase.url()).connection
        let database = ProcessInfo.processInfo.environment["PGMODEL_HISTORY_VOLUME_DATABASE"] ?? "pgmodel_history_volume"
        let admin = try await PostgresConnection.connect(on: MultiThreadedEventLoopGroup.singleton.next(),
                                                         configuration: configuration, id: 1, logger: logger)
        let exists = try await admin.query("SELECT 1 FROM pg_database WHERE datname = \(database)", logger: logger)
            .collect().count == 1
        if !exists { _ = try await admin.query(PostgresQuery(unsafeSQL: "CREATE DATABASE \"\(database)\""), logger: logger) }
        try await admin.close()
        configuration.database = database
        let postgres = try await PostgresConnection.connect(on: MultiThreadedEventLoopGroup.singleton.next(),
                                                            configuration: configuration, id: 2, logger: logger)
        defer { Task { try? await postgres.close() } }
        let c = EngineConnection(postgres)
        let engine = PostgresStoreEngine(schemaName: Self.store, logger: logger)
        try await engine.bootstrap(on: c)
        try await engine.prepare(SchemaDescription(entities: [EntityDescription(name: "Memo", attributes: [
            AttributeDescription(name: "text", type: .string),
        ])]), on: c)
        let reader = try await user(engine, c)

        var lines = ["| figure | value |", "|---|---:|"]
        func report(_ name: String, _ value: String) {
            lines.append("| \(name) | \(value) |")
            print("history volume: \(name): \(value)")
        }
        let loadStarted = ContinuousClock.now
        let have = try await count(engine, c)
        if have < wanted {
            try await load(from: have, to: wanted, owner: reader.id, engine, c)
            report("load of \(wanted - have) changes (SQL, triggers off)", seconds(since: loadStarted))
        }
        let total = try await count(engine, c)
        report("changes in store `hv`", "\(total)")
        let sizes = try await scalarRow("""
            SELECT pg_total_relation_size('pgmodel.changes'), pg_total_relation_size('pgmodel.transactions'),
                   pg_relation_size('pgmodel.changes'), (SELECT count(*) FROM pgmodel.transactions)
            """, engine, c)
        report("bytes per change, changes table with its indexes", String(format: "%.0f", Double(sizes[0]) / Double(max(1, total))))
        report("bytes per change, changes table alone", String(format: "%.0f", Double(sizes[2]) / Double(max(1, total))))
        report("bytes per transaction, transactions table with its indexes", String(format: "%.0f", Double(sizes[1]) / Double(max(1, sizes[3]))))

        let positions = try await scalarRow(
            "SELECT min(position), max(position) FROM pgmodel.transactions WHERE schema_name = 'hv'", engine, c)
        let (oldest, newest) = (positions[0], positions[1])
        report("horizon (pgmodel.history_horizon)", try await median {
            _ = try await engine.query(SQLStatement(sql: "SELECT pgmodel.history_horizon('hv')"), on: c)
        })
        let tail = UInt64(max(oldest, newest - 100))
        let middle = UInt64(oldest + (newest - oldest) / 2)
        func read(_ token: UInt64, limit: Int?, as requester: Requester, runs: Int = 5) async throws -> String {
            try await median(runs: runs) {
                _ = try await engine.fetchHistory(HistoryRequest(filter: .token(.greater, token), limit: limit), as: requester, on: c)
            }
        }
        report("trusted read of the newest 100 transactions (1,000 changes)", try await read(tail, limit: nil, as: .trusted))
        report("user's read after the same token (their 1 in 1,000)", try await read(tail, limit: nil, as: .user(reader)))
        report("trusted read of 100 transactions from the middle", try await read(middle, limit: 100, as: .trusted))
        report("user's read of 100 of their transactions from the middle", try await read(middle, limit: 100, as: .user(reader), runs: 1))
        report("count-limit horizon, keeping 99% (pgmodel.history_count_horizon)", try await median(runs: 1) {
            _ = try await engine.query(SQLStatement(sql: "SELECT pgmodel.history_count_horizon('hv', $1)", binds: [.int(Int64(total) * 99 / 100)]), on: c)
        })
        // Pruning the oldest 1% by age, in the service's batches; the rows are loaded back by the next run.
        let cutoff = try await scalarRow("""
            SELECT extract(epoch FROM created_at)::bigint FROM pgmodel.transactions
             WHERE schema_name = 'hv' AND position = \(oldest + (newest - oldest) / 100)
            """, engine, c)
        let pruneStarted = ContinuousClock.now
        let age = try #require(HistoryAge(seconds: max(1, Int64(Date().timeIntervalSince1970) - (cutoff.first ?? 0))))
        let pruned = try await engine.pruneHistory(store: Self.store, limits: try HistoryRetention(store: Self.store, maxAge: age, maxChanges: nil), on: c)
        report("prune of the oldest 1% by age (\(pruned.changes) changes, \(pruned.transactions) transactions)", seconds(since: pruneStarted))
        report("prune rate", String(format: "%.0f changes/s", Double(pruned.changes) / max(0.001, pruned.seconds)))
        print(lines.joined(separator: "\n"))
        #expect(total >= wanted)
    }

    /// The reading user: a real account, so the engine's user scope is what a service request gets.
    func user(_ engine: PostgresStoreEngine, _ c: EngineConnection) async throws -> AuthenticatedUser {
        if let existing = try await engine.listUsers(on: c).first(where: { $0.name == "history-volume-reader" }) { return existing }
        return try await engine.createUser(name: "history-volume-reader", password: "reader-password", isAdmin: false, on: c)
    }

    func count(_ engine: PostgresStoreEngine, _ c: EngineConnection) async throws -> Int {
        Int(try await scalarRow("""
            SELECT count(*) FROM pgmodel.changes ch JOIN pgmodel.transactions t ON t.id = ch.transaction_id WHERE t.schema_name = 'hv'
            """, engine, c)[0])
    }

    /// Adds transactions of ``changesPerTransaction`` updates until the store holds `wanted` changes, a
    /// million changes per SQL transaction, timestamps a few milliseconds apart and older than now.
    func load(from have: Int, to wanted: Int, owner reader: UUID, _ engine: PostgresStoreEngine, _ c: EngineConnection) async throws {
        try await engine.execute(SQLStatement(sql: "ALTER TABLE pgmodel.transactions DISABLE TRIGGER pgmodel_assign_position"), on: c)
        try await engine.execute(SQLStatement(sql: "ALTER TABLE pgmodel.changes DISABLE TRIGGER pgmodel_changes_transaction"), on: c)
        // Numbered after the transactions an earlier run loaded (a prune may have removed its oldest).
        let loaded = try await scalarRow("""
            SELECT coalesce(max(xid::text::numeric) - 4611686018427387904, -1)::bigint + 1 FROM pgmodel.transactions WHERE author = 'load'
            """, engine, c)
        var next = Int(loaded.first ?? 0)
        let last = next + (wanted - have + Self.changesPerTransaction - 1) / Self.changesPerTransaction
        let batch = 100_000
        while next < last {
            let end = min(last, next + batch)
            // xids far above any real one (the column is unique); owners cycle, owner 0 is the reader.
            try await engine.execute(SQLStatement(sql: """
                WITH t AS (
                    INSERT INTO pgmodel.transactions (xid, schema_name, author, user_id, user_name, created_at, position)
                    SELECT (4611686018427387904 + g)::text::xid8, 'hv', 'load',
                           CASE WHEN g % \(Self.owners) = 0 THEN $1::uuid
                                ELSE ('00000000-0000-4000-8000-' || lpad(to_hex(g % \(Self.owners)), 12, '0'))::uuid END,
                           'owner', now() - make_interval(secs => ($3 - g) * 0.005), nextval('pgmodel.history_position')
                      FROM generate_series($2::bigint, $3::bigint - 1) g
                    RETURNING id, user_id
                )
                INSERT INTO pgmodel.changes (transaction_id, entity, row_id, kind, owner_id, updated_attributes, new_values, previous_values)
                SELECT t.id, 'Memo', (lpad(to_hex(t.id), 12, '0') || '-7000-8000-' || lpad(to_hex(k), 12, '0'))::uuid, 'update', t.user_id,
                       '{text}', jsonb_build_object('text', 'revision ' || t.id || '.' || k), jsonb_build_object('text', 'revision ' || t.id)
                  FROM t CROSS JOIN generate_series(1, \(Self.changesPerTransaction)) k
                """, binds: [.uuid(reader), .int(Int64(next)), .int(Int64(end))]), on: c)
            next = end
        }
        try await engine.execute(SQLStatement(sql: "ALTER TABLE pgmodel.transactions ENABLE TRIGGER pgmodel_assign_position"), on: c)
        try await engine.execute(SQLStatement(sql: "ALTER TABLE pgmodel.changes ENABLE TRIGGER pgmodel_changes_transaction"), on: c)
        try await engine.execute(SQLStatement(sql: "ANALYZE pgmodel.transactions"), on: c)
        try await engine.execute(SQLStatement(sql: "ANALYZE pgmodel.changes"), on: c)
    }

    func scalarRow(_ sql: String, _ engine: PostgresStoreEngine, _ c: EngineConnection) async throws -> [Int64] {
        let rows = try await engine.query(SQLStatement(sql: sql), on: c)
        guard let row = rows.first else { return [] }
        var values: [Int64] = []
        for cell in row { values.append(try cell.decode(Int64?.self) ?? 0) }
        return values
    }

    /// The median of `runs` timings of `body`, as text.
    func median(runs: Int = 5, _ body: () async throws -> Void) async throws -> String {
        var times: [Double] = []
        for _ in 0..<runs {
            let started = ContinuousClock.now
            try await body()
            times.append(Self.seconds(ContinuousClock.now - started))
        }
        return Self.describe(times.sorted()[times.count / 2])
    }

    func seconds(since start: ContinuousClock.Instant) -> String { Self.describe(Self.seconds(ContinuousClock.now - start)) }

    static func seconds(_ duration: Duration) -> Double {
        let parts = duration.components
        return Double(parts.seconds) + Double(parts.attoseconds) / 1e18
    }

    static func describe(_ seconds: Double) -> String {
        seconds < 1 ? String(format: "%.1f ms", seconds * 1000) : String(format: "%.2f s", seconds)
    }
}
