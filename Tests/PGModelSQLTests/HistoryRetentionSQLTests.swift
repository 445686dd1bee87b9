import Foundation
@_spi(PGModelInternals) import PGModelCore
@_spi(PGModelInternals) import PGModelSQL
import Testing

// Snapshots of the history retention SQL: every value bound, nothing spliced in.
@Suite("HistoryRetentionSQL")
struct HistoryRetentionSQLTests {
    @Test func setBindsEveryValue() {
        let statement = HistoryRetentionSQL.setRetention(store: "app'; DROP", maxAgeSeconds: 86_400, maxChanges: nil)
        #expect(statement.sql == """
            INSERT INTO "pgmodel"."history_retention" ("schema_name", "max_age", "max_changes", "updated_at") \
            VALUES ($1, CASE WHEN $2::bigint % 86400 = 0 THEN make_interval(days => ($2::bigint / 86400)::integer) \
            ELSE make_interval(secs => $2::bigint::float8) END, $3::bigint, now()) \
            ON CONFLICT ("schema_name") DO UPDATE SET "max_age" = EXCLUDED."max_age", "max_changes" = EXCLUDED."max_changes", \
            "updated_at" = EXCLUDED."updated_at" RETURNING "schema_name", extract(epoch FROM "max_age")::bigint, "max_changes", "updated_at"
            """)
        #expect(statement.binds == [.string("app'; DROP"), .int(86_400), .null])
    }

    @Test func selectAndClear() {
        let all = HistoryRetentionSQL.selectRetention(store: nil)
        #expect(all.sql == #"SELECT "schema_name", extract(epoch FROM "max_age")::bigint, "max_changes", "updated_at" FROM "pgmodel"."history_retention" WHERE $1::text IS NULL OR "schema_name" = $1 ORDER BY "schema_name""#)
        #expect(all.binds == [.null])
        #expect(HistoryRetentionSQL.selectRetention(store: "app").binds == [.string("app")])
        let clear = HistoryRetentionSQL.clearRetention(store: "app")
        #expect(clear.sql == #"DELETE FROM "pgmodel"."history_retention" WHERE "schema_name" = $1 RETURNING "schema_name""#)
        #expect(clear.binds == [.string("app")])
    }

    @Test func pruneBoundsAndBatch() {
        let bounds = HistoryRetentionSQL.pruneBounds(store: "app", maxAgeSeconds: nil, maxChanges: 1_000)
        #expect(bounds.sql == """
            SELECT now() - make_interval(secs => $2::bigint::float8), \
            CASE WHEN $3::bigint IS NULL THEN NULL ELSE "pgmodel"."history_count_horizon"($1, $3::bigint) END
            """)
        #expect(bounds.binds == [.string("app"), .null, .int(1_000)])
        let cutoff = Date(timeIntervalSince1970: 1_700_000_000)
        let batch = HistoryRetentionSQL.pruneBatch(store: "app", olderThan: cutoff, throughPosition: nil, batchRows: 500)
        #expect(batch.sql == #"SELECT "transactions", "changes", "deleted_through", "busy" FROM "pgmodel"."prune_history"($1, $2::timestamptz, $3::bigint, $4::integer)"#)
        #expect(batch.binds == [.string("app"), .date(cutoff), .null, .int(500)])
    }
}
