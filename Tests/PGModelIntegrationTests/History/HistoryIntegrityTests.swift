import Foundation
import Logging
import NIOPosix
@_spi(PGModelInternals) import PGModelCore
@_spi(PGModelInternals) import PGModelSQL
@_spi(PGModelInternals) @testable import PGModelPostgres
import PostgresNIO
import Testing

/// `pgmodel.changes.transaction_id` is checked by statement triggers instead of a per-row foreign key
/// (sql/008_pgmodel_history_integrity.sql): history still records what it did, a change still
/// needs its transaction, deleting history still deletes its changes, and a service user still writes
/// history only into their own transaction.
@Suite("History integrity")
struct HistoryIntegrityTests: EngineTestSuite {
    static let storePrefix = "hi"
    static let memo: EntityDescription = EntityDescription(name: "Memo", attributes: [
        AttributeDescription(name: "text", type: .string),
        AttributeDescription(name: "rank", type: .int64),
    ])
    static let tag: EntityDescription = EntityDescription(name: "Tag", attributes: [AttributeDescription(name: "label", type: .string)])
    let schema: SchemaDescription = SchemaDescription(entities: [HistoryIntegrityTests.memo, HistoryIntegrityTests.tag])
    let logger: Logger = {
        var logger = Logger(label: "pgmodel.test.integrity")
        logger.logLevel = .warning
        return logger
    }()

    func memo(_ i: Int) -> RowValues {
        RowValues(entity: "Memo", id: .v7(), values: ["text": .string("m\(i)"), "rank": .int(Int64(i))])
    }

    func count(_ engine: PostgresStoreEngine, _ c: EngineConnection, changesOf ids: [Int64]) async throws -> Int64 {
        let rows = try await engine.query(SQLStatement(sql: "SELECT count(*) FROM pgmodel.change_rows WHERE transaction_id = ANY ($1::text::bigint[])",
                                                       binds: [.string("{" + ids.map(String.init).joined(separator: ",") + "}")]), on: c)
        return try rows.first?.decode(Int64.self) ?? -1
    }

    @Test func aBulkSaveRecordsWhatOneRowSavesRecord() async throws {
        try await withStore { engine, c, _ in
            let bulk = (0..<1_500).map(memo)
            _ = try await engine.save(SaveRequest(inserts: bulk, author: "bulk"), in: schema, as: .trusted, on: c)
            let single = (0..<3).map(memo)
            for row in single { _ = try await engine.save(SaveRequest(inserts: [row], author: "one"), in: schema, as: .trusted, on: c) }
            let page = try await engine.fetchHistory(HistoryRequest(), as: .trusted, on: c).transactions
            #expect(page.map(\.author) == ["bulk", "one", "one", "one"])
            let changes = try #require(page.first?.changes)
            // One insert per row, in the request's order (change ids ascend with it).
            #expect(changes.map(\.id) == bulk.map(\.id))
            #expect(changes.map(\.changeIdentifier) == changes.map(\.changeIdentifier).sorted())
            func shape(_ change: HistoryChangeRecord) -> String {
                "\(change.kind) \(change.entity) \(change.updatedAttributes) \(change.values) \(change.tombstone)"
            }
            let one = try #require(page.last?.changes.first)
            #expect(Set(changes.map(shape)) == [shape(one)], "a bulk insert's change is a one-row insert's change")
        }
    }

    /// Chunks are built while the previous one runs (StatementPipeline): still one statement per chunk, in
    /// order, and a chunk that fails while the next is built is the error the save reports.
    @Test func aPipelinedBulkSaveSendsItsChunksInOrderAndReportsTheFirstFailure() async throws {
        try await withStore { engine, c, _ in
            let rows = (0..<25_000).map(memo)
            let counter = StatementLog()
            _ = try await engine.save(SaveRequest(inserts: rows), in: schema, as: .trusted, on: EngineConnection(c.connection, statementLog: counter))
            let kinds = counter.statements.map { sql -> String in
                if sql.hasPrefix("INSERT INTO \"pgmodel\".\"changes\"") { return "changes" }
                if sql.hasPrefix("INSERT INTO \"pgmodel\".\"transactions\"") { return "transaction" }
                if sql.hasPrefix("INSERT") { return "rows" }
                return sql.hasPrefix("SELECT pg_notify") ? "notify" : sql
            }
            let rowChunks = (rows.count + PostgresStoreEngine.insertChunkSize - 1) / PostgresStoreEngine.insertChunkSize
            let changeChunks = (rows.count + PostgresStoreEngine.historyChunkSize - 1) / PostgresStoreEngine.historyChunkSize
            #expect(rowChunks > 2 && changeChunks > 2)
            #expect(kinds == ["BEGIN"] + Array(repeating: "rows", count: rowChunks) + ["transaction"]
                    + Array(repeating: "changes", count: changeChunks) + ["COMMIT", "notify"], "the doorbell rings after the commit")
            #expect(try await engine.count(FetchRequest(entity: "Memo"), in: schema, as: .trusted, on: c) == 25_000)
            let saved = try await engine.fetchHistory(HistoryRequest(), as: .trusted, on: c).transactions
            #expect(saved.first?.changes.map(\.id) == rows.map(\.id))
            // The first chunk breaks the primary key while the second is built: that is the error, and
            // nothing of the save stays.
            var failing = (0..<10_500).map(memo)
            failing[2].id = failing[0].id
            await #expect { _ = try await engine.save(SaveRequest(inserts: failing), in: schema, as: .trusted, on: c) } throws: {
                ($0 as? PGModelError)?.code == .uniqueViolation && ($0 as? PGModelError)?.model == "Memo"
            }
            #expect(try await engine.count(FetchRequest(entity: "Memo"), in: schema, as: .trusted, on: c) == 25_000)
            #expect(try await engine.fetchHistory(HistoryRequest(), as: .trusted, on: c).transactions.count == 1)
        }
    }

    /// A save's plain inserts of one class and owner are one `pgmodel.changes` row, a run (sql/009): read
    /// back one change per insert, each with its own change identifier, in the request's order.
    @Test func plainInsertsAreOneRunReadAsOneChangeEach() async throws {
        try await withStore { engine, c, _ in
            func strings(_ sql: String) async throws -> [String] {
                try await engine.query(SQLStatement(sql: sql), on: c).map { try $0.decode(String.self) }
            }
            let rows = (0..<7).map(memo)
            _ = try await engine.save(SaveRequest(inserts: rows, author: "run"), in: schema, as: .trusted, on: c)
            _ = try await engine.save(SaveRequest(inserts: [memo(7)], author: "one"), in: schema, as: .trusted, on: c)
            let page = try await engine.fetchHistory(HistoryRequest(), as: .trusted, on: c).transactions
            #expect(page.map(\.author) == ["run", "one"])
            let run = try #require(page.first), one = try #require(page.last)
            #expect(run.changes.map(\.id) == rows.map(\.id))
            #expect(run.changes.allSatisfy { $0.kind == .insert && $0.entity == "Memo" })
            // A run's identifiers follow its first; the sequence's step keeps them the run's alone.
            let identifiers = run.changes.map(\.changeIdentifier)
            #expect(identifiers == Array(identifiers[0]..<identifiers[0] + 7))
            #expect(PostgresStoreEngine.historyChunkSize <= HistorySQL.runCapacity)
            #expect(try await strings("SELECT increment_by::text FROM pg_sequences WHERE schemaname = 'pgmodel' AND sequencename = 'changes_id_seq'")
                    == [String(HistorySQL.runCapacity)])
            #expect(one.changes.count == 1 && one.changes.first?.changeIdentifier ?? 0 > identifiers.last ?? .max)
            // Stored as one row with the ids, and the single insert as a row of its own.
            #expect(try await strings("""
                SELECT concat_ws(' ', id, row_id, cardinality(row_ids)) FROM pgmodel.changes
                WHERE transaction_id = \(run.transactionIdentifier)
                """) == ["\(identifiers[0]) 7"])
            #expect(try await strings("SELECT concat_ws(' ', row_id, row_ids IS NULL) FROM pgmodel.changes WHERE transaction_id = \(one.transactionIdentifier)")
                    == ["\(one.changes[0].id.uuidString.lowercased()) t"])
            // The admin's view: one row per change.
            #expect(try await strings("SELECT row_id::text FROM pgmodel.change_rows WHERE transaction_id = \(run.transactionIdentifier) ORDER BY id")
                    == rows.map { $0.id.uuidString.lowercased() })
            // A run is only ever a run of plain inserts, no longer than its identifiers' room.
            for malformed in [
                "row_id, row_ids) SELECT t, 'insert', gen_random_uuid(), ARRAY[gen_random_uuid()]",
                "row_ids) SELECT t, 'update', ARRAY[gen_random_uuid()]",
                "row_ids, tombstone) SELECT t, 'insert', ARRAY[gen_random_uuid()], '{}'::jsonb",
                "row_ids) SELECT t, 'insert', '{}'::uuid[]",
                "row_ids) SELECT t, 'insert', (SELECT array_agg(gen_random_uuid()) FROM generate_series(1, \(HistorySQL.runCapacity + 1)))",
            ] {
                let insert = SQLStatement(sql: """
                    INSERT INTO pgmodel.changes (transaction_id, entity, kind, \(malformed.replacingOccurrences(of: "SELECT t,", with: "SELECT t, 'Memo',"))
                    FROM (SELECT \(run.transactionIdentifier)::bigint AS t) AS v
                    """)
                await #expect { try await engine.transaction(on: c) { try await engine.execute(insert, on: c) } } throws: {
                    ($0 as? PGModelError)?.sqlState == "23514"
                }
            }
        }
    }

    /// Which history statements a log becomes: a long stretch of one class's inserts is a run of its own,
    /// shorter ones go row by row with the changes around them, and no statement holds more than `size`.
    @Test func longStretchesOfInsertsAreStatementsOfTheirOwn() {
        var log = HistoryLog()
        func inserts(_ entity: String, _ count: Int, owner: UUID? = nil) {
            for _ in 0..<count { log.record(.insert, entity, .v7(), owner: owner) }
        }
        inserts("Album", 1)
        inserts("Track", 300)
        inserts("Album", 1)
        inserts("Track", 10)
        log.record(.update, "Album", .v7(), owner: nil, values: ["title": .string("x")])
        inserts("Track", 300)
        inserts("Track", 300, owner: UUID())   // another owner: another stretch
        log.recordAudienceEvent(.insert, "Album", .v7(), for: UUID())
        #expect(log.statementRanges(size: 5_000, minimumRun: 256) == [0..<1, 1..<301, 301..<313, 313..<613, 613..<913, 913..<914])
        // Runs of at most `size`; a piece too short for a run (100 < 256) goes row by row with what follows.
        #expect(log.statementRanges(size: 200, minimumRun: 256) == [0..<1, 1..<201, 201..<313, 313..<513, 513..<613, 613..<813, 813..<914])
        // Below the minimum everything is row by row, in statements of `size`.
        #expect(log.statementRanges(size: 500, minimumRun: 1_000) == [0..<500, 500..<914])
        #expect(log.insertColumns(in: 1..<301)?.count == 300 && log.insertColumns(in: 313..<613)?.count == 300)
        #expect(log.insertColumns(in: 301..<313) == nil)
        #expect(HistoryLog().statementRanges(size: 5_000, minimumRun: 256).isEmpty)
    }

    /// A save of two albums' worth of memos and tags, interleaved: each long stretch of tags is one run,
    /// the memos rows of their own, and history reads back every insert in the save's order.
    @Test func aSaveThatInterleavesClassesWritesItsLongStretchesAsRuns() async throws {
        try await withStore { engine, c, _ in
            func tags(_ n: Int) -> [RowValues] { (0..<n).map { RowValues(entity: "Tag", id: .v7(), values: ["label": .string("t\($0)")]) } }
            let rows = [memo(0)] + tags(300) + [memo(1)] + tags(300)
            _ = try await engine.save(SaveRequest(inserts: rows), in: schema, as: .trusted, on: c)
            let page = try await engine.fetchHistory(HistoryRequest(), as: .trusted, on: c).transactions
            let changes = try #require(page.first?.changes)
            #expect(changes.map(\.id) == rows.map(\.id))
            #expect(changes.map(\.entity) == rows.map(\.entity))
            let stored = try await engine.query(SQLStatement(sql: """
                SELECT concat_ws(' ', entity, coalesce(cardinality(row_ids), 1)) FROM pgmodel.changes WHERE transaction_id = $1 ORDER BY id
                """, binds: [.int(try #require(page.first?.transactionIdentifier))]), on: c).map { try $0.decode(String.self) }
            #expect(stored == ["Memo 1", "Tag 300", "Memo 1", "Tag 300"])
        }
    }

    /// A run is one row, but a service user sees only its inserts they may see: a grantee of one of its
    /// rows sees that row's insert, not its neighbours' — through the service's reads and through
    /// `pgmodel.change_rows` in plain SQL as the user.
    @Test func aGranteeSeesOnlyTheSharedInsertsOfARun() async throws {
        try await withStore { engine, c, _ in
            let suffix = UUID().uuidString.prefix(8).lowercased()
            let alice = try await engine.createUser(name: "hr_alice_\(suffix)", password: "x", isAdmin: false, on: c)
            let bob = try await engine.createUser(name: "hr_bob_\(suffix)", password: "x", isAdmin: false, on: c)
            let rows = (0..<5).map(memo)
            _ = try await engine.save(SaveRequest(inserts: rows), in: schema, as: .user(alice), on: c)
            #expect(try await engine.fetchHistory(HistoryRequest(), as: .user(bob), on: c).transactions.isEmpty)
            _ = try await engine.save(SaveRequest(shares: [ShareChange(record: RowReference(entity: "Memo", id: rows[2].id), user: bob.name, permission: .readOnly)]),
                                      in: schema, as: .user(alice), on: c)
            let seen = try await engine.fetchHistory(HistoryRequest(), as: .user(bob), on: c).transactions.flatMap(\.changes)
            #expect(Set(seen.map(\.id)) == [rows[2].id], "\(seen)")
            #expect(seen.first?.kind == .insert)
            // The owner sees the whole run.
            let hers = try await engine.fetchHistory(HistoryRequest(), as: .user(alice), on: c).transactions
            #expect(hers.first?.changes.map(\.id) == rows.map(\.id))
            // Plain SQL as Bob, row-level security and the view alone.
            let visible = try await engine.transaction(as: .user(bob), on: c) {
                try await engine.query(SQLStatement(sql: "SELECT DISTINCT row_id::text FROM pgmodel.change_rows"), on: c).map { try $0.decode(String.self) }
            }
            #expect(visible == [rows[2].id.uuidString.lowercased()])
        }
    }

    @Test func deletingHistoryDeletesItsChanges() async throws {
        try await withStore { engine, c, _ in
            for i in 0..<3 {
                _ = try await engine.save(SaveRequest(inserts: (0..<(10 * (i + 1))).map(memo)), in: schema, as: .trusted, on: c)
            }
            let all = try await engine.fetchHistory(HistoryRequest(), as: .trusted, on: c).transactions
            #expect(all.count == 3)
            guard all.count == 3 else { return }
            #expect(try await count(engine, c, changesOf: all.map(\.transactionIdentifier)) == 60)
            #expect(try await engine.deleteHistory(HistoryRequest(filter: .token(.lessOrEqual, all[1].token)), as: .trusted, on: c) == 2)
            #expect(try await count(engine, c, changesOf: all.prefix(2).map(\.transactionIdentifier)) == 0)
            #expect(try await count(engine, c, changesOf: [all[2].transactionIdentifier]) == 30)
        }
    }

    @Test func aChangeNeedsItsTransaction() async throws {
        try await withStore { engine, c, _ in
            let insert = SQLStatement(sql: """
                INSERT INTO pgmodel.changes (transaction_id, entity, row_id, kind) VALUES ($1::text::bigint, 'Memo', $2::text::uuid, 'insert')
                """, binds: [.string("-1"), .string(UUID.v7().uuidString)])
            await #expect { try await engine.transaction(on: c) { try await engine.execute(insert, on: c) } } throws: {
                ($0 as? PGModelError)?.sqlState == "23503"
            }
            // A transaction with changes keeps its id.
            _ = try await engine.save(SaveRequest(inserts: [memo(0)]), in: schema, as: .trusted, on: c)
            let id = try #require(try await engine.fetchHistory(HistoryRequest(), as: .trusted, on: c).transactions.first?.transactionIdentifier)
            let renumber = SQLStatement(sql: "UPDATE pgmodel.transactions SET id = -id WHERE id = $1::text::bigint", binds: [.string(String(id))])
            await #expect { try await engine.transaction(on: c) { try await engine.execute(renumber, on: c) } } throws: {
                ($0 as? PGModelError)?.sqlState == "23503"
            }
        }
    }

    @Test func aServiceUserWritesHistoryOnlyIntoTheirOwnTransactionAndRowsOnlyAsThemselves() async throws {
        try await withStore { engine, c, _ in
            let suffix = UUID().uuidString.prefix(8).lowercased()
            let alice = try await engine.createUser(name: "hi_alice_\(suffix)", password: "x", isAdmin: false, on: c)
            let bob = try await engine.createUser(name: "hi_bob_\(suffix)", password: "x", isAdmin: false, on: c)
            // Their own bulk saves record their history.
            _ = try await engine.save(SaveRequest(inserts: (0..<50).map(memo)), in: schema, as: .user(alice), on: c)
            _ = try await engine.save(SaveRequest(inserts: (0..<50).map(memo)), in: schema, as: .user(bob), on: c)
            let hers = try await engine.fetchHistory(HistoryRequest(), as: .user(alice), on: c).transactions
            #expect(hers.count == 1 && hers.first?.changes.count == 50)
            let bobs = try #require(try await engine.fetchHistory(HistoryRequest(), as: .user(bob), on: c).transactions.first)
            // Alice cannot add a change to Bob's history transaction, nor to one of hers of another SQL transaction.
            for target in [bobs.transactionIdentifier, try #require(hers.first?.transactionIdentifier)] {
                let forged = SQLStatement(sql: """
                    INSERT INTO pgmodel.changes (transaction_id, entity, row_id, kind, owner_id) \
                    VALUES ($1::text::bigint, 'Memo', $2::text::uuid, 'insert', $3::text::uuid)
                    """, binds: [.string(String(target)), .string(UUID.v7().uuidString), .string(alice.id.uuidString)])
                await #expect { try await engine.transaction(as: .user(alice), on: c) { try await engine.execute(forged, on: c) } } throws: {
                    ($0 as? PGModelError)?.sqlState == "42501"
                }
            }
            // Nor insert a row for Bob through the set-based insert: row-level security checks every row.
            let renderer = try SQLRenderer(schema: schema, schemaName: engine.schemaName)
            let rows = (0..<20).map(memo)
            let statement = try #require(try renderer.insert(rows, owners: rows.indices.map { $0 == 7 ? bob.id : alice.id }, upserting: false))
            await #expect { try await engine.transaction(as: .user(alice), on: c) { try await engine.execute(statement, on: c) } } throws: {
                ($0 as? PGModelError)?.sqlState == "42501"
            }
            #expect(try await engine.fetch(FetchRequest(entity: "Memo"), in: schema, as: .user(alice), on: c).count == 50)
        }
    }
}

/// A database whose history was written before sql/008 (changes with a foreign key to their transaction)
/// is upgraded in place: the foreign key gives way to the triggers, runs of inserts arrive (sql/009),
/// history is kept, and a second start changes nothing. In a scratch database of its own.
@Suite("History integrity: upgrading from the foreign key")
struct HistoryIntegrityUpgradeTests {
    @Test func anOldStoreKeepsItsHistoryAndItsGuarantees() async throws {
        try await ScratchDatabase.with(label: "pgmodel.test.integrity-upgrade") { c, logger in
            func strings(_ sql: String) async throws -> [String] {
                try await c.query(PostgresQuery(unsafeSQL: sql), logger: logger).collect().map { try $0.decode(String.self) }
            }
            let foreignKeys = "SELECT conname::text FROM pg_constraint WHERE conrelid = 'pgmodel.changes'::regclass AND contype = 'f'"
            let triggers = "SELECT tgname::text FROM pg_trigger WHERE tgrelid IN ('pgmodel.changes'::regclass, 'pgmodel.transactions'::regclass) AND NOT tgisinternal ORDER BY 1"
            // The layout before: the system files up to 007, and history written under the foreign key.
            for file in SystemSQL.files where file.name < "008" {
                for statement in SQLScript.statements(file.sql) { _ = try await c.query(PostgresQuery(unsafeSQL: statement), logger: logger).collect() }
            }
            #expect(try await strings(foreignKeys) == ["changes_transaction_id_fkey"])
            let old = try await strings("""
                WITH t AS (INSERT INTO pgmodel.transactions (schema_name, author) VALUES ('public', 'old') RETURNING id)
                INSERT INTO pgmodel.changes (transaction_id, entity, row_id, kind) SELECT t.id, 'Memo', gen_random_uuid(), 'insert' FROM t, generate_series(1, 3)
                RETURNING transaction_id::text
                """)
            #expect(old.count == 3)
            // This build starts, twice: the second start finds everything in place.
            let engine = PostgresStoreEngine(schemaName: "public", logger: logger)
            try await engine.bootstrap(on: EngineConnection(c))
            #expect(try await strings(foreignKeys).isEmpty)
            let installed = try await strings(triggers)
            #expect(installed == ["pgmodel_assign_position", "pgmodel_changes_transaction", "pgmodel_changes_transaction_update",
                                  "pgmodel_transactions_delete", "pgmodel_transactions_id", "pgmodel_transactions_truncate"])
            // sql/017: every save writes every index of its transaction row; only those reads use are kept.
            #expect(try await strings("SELECT indexname::text FROM pg_indexes WHERE schemaname = 'pgmodel' AND tablename = 'transactions' ORDER BY 1")
                == ["transactions_pkey", "transactions_schema_created", "transactions_schema_position", "transactions_xid_key"])
            let policies = try await strings("SELECT with_check FROM pg_policies WHERE schemaname = 'pgmodel' AND tablename = 'changes' AND cmd = 'INSERT' ORDER BY policyname")
            #expect(policies.count == 2 && policies.allSatisfy { $0.contains("own_transaction_id") }, "\(policies)")
            // sql/009: runs of inserts, and the select policy that shows a run to a grantee of one of its rows.
            let appSelect = try await strings("SELECT qual FROM pg_policies WHERE schemaname = 'pgmodel' AND tablename = 'changes' AND policyname = 'pgmodel_app_select'")
            #expect(appSelect.count == 1 && appSelect.allSatisfy { $0.contains("row_ids") }, "\(appSelect)")
            #expect(try await strings("SELECT attname::text FROM pg_attribute WHERE attrelid = 'pgmodel.changes'::regclass AND attname = 'row_ids'") == ["row_ids"])
            #expect(try await strings("SELECT increment_by::text FROM pg_sequences WHERE schemaname = 'pgmodel' AND sequencename = 'changes_id_seq'") == ["8192"])
            try await engine.bootstrap(on: EngineConnection(c))
            #expect(try await strings(triggers) == installed)
            // The old history is readable, and deleting it deletes its changes.
            let schema = SchemaDescription(entities: [HistoryIntegrityTests.memo])
            try await engine.prepare(schema, on: EngineConnection(c))
            let history = try await engine.fetchHistory(HistoryRequest(), as: .trusted, on: EngineConnection(c)).transactions
            #expect(history.map(\.author) == ["old"] && history.first?.changes.count == 3)
            #expect(try await engine.deleteHistory(HistoryRequest(), as: .trusted, on: EngineConnection(c)) == 1)
            #expect(try await strings("SELECT count(*)::text FROM pgmodel.changes") == ["0"])
        }
    }
}
