import Foundation
@_spi(PGModelInternals) import PGModelCore

/// The SQL of history retention (`sql/015_pgmodel_history_retention.sql`): the per-store setting in
/// `pgmodel.history_retention`, and the batches of `pgmodel.prune_history` that enforce it. Every value
/// is bound; the only identifiers are PGModel's own.
///
/// ```swift
/// let statement = HistoryRetentionSQL.setRetention(store: "public", maxAgeSeconds: 2_592_000, maxChanges: nil)
/// // INSERT INTO "pgmodel"."history_retention" … VALUES ($1, CASE WHEN $2::bigint % 86400 = 0 THEN make_interval(days => …)
/// //   ELSE make_interval(secs => …) END, $3::bigint, now()) ON CONFLICT ("schema_name") DO UPDATE …
/// ```
@_spi(PGModelInternals) public enum HistoryRetentionSQL {
    /// The columns every read of a setting returns: store, age limit in whole seconds, change limit, when set.
    static let columns = #""schema_name", extract(epoch FROM "max_age")::bigint, "max_changes", "updated_at""#

    /// Sets (or replaces) `store`'s setting; returns it as ``selectRetention(store:)`` does.
    ///
    /// ```swift
    /// HistoryRetentionSQL.setRetention(store: "public", maxAgeSeconds: nil, maxChanges: 1_000_000)
    /// ```
    public static func setRetention(store: String, maxAgeSeconds: Int64?, maxChanges: Int64?) -> SQLStatement {
        // Whole days, hours and minutes are stored as such, so psql shows `30 days` rather than `720:00:00`.
        SQLStatement(sql: """
            INSERT INTO "pgmodel"."history_retention" ("schema_name", "max_age", "max_changes", "updated_at") \
            VALUES ($1, CASE WHEN $2::bigint % 86400 = 0 THEN make_interval(days => ($2::bigint / 86400)::integer) \
            ELSE make_interval(secs => $2::bigint::float8) END, $3::bigint, now()) \
            ON CONFLICT ("schema_name") DO UPDATE SET "max_age" = EXCLUDED."max_age", "max_changes" = EXCLUDED."max_changes", \
            "updated_at" = EXCLUDED."updated_at" RETURNING \(columns)
            """, binds: [.string(store), maxAgeSeconds.map(PGValue.int) ?? .null, maxChanges.map(PGValue.int) ?? .null])
    }

    /// Every store's setting in store order, or only `store`'s.
    ///
    /// ```swift
    /// HistoryRetentionSQL.selectRetention(store: nil)
    /// // SELECT "schema_name", … FROM "pgmodel"."history_retention" WHERE $1::text IS NULL OR "schema_name" = $1 ORDER BY "schema_name"
    /// ```
    public static func selectRetention(store: String?) -> SQLStatement {
        SQLStatement(sql: """
            SELECT \(columns) FROM "pgmodel"."history_retention" WHERE $1::text IS NULL OR "schema_name" = $1 ORDER BY "schema_name"
            """, binds: [store.map(PGValue.string) ?? .null])
    }

    /// Removes `store`'s setting; returns its store name when there was one.
    ///
    /// ```swift
    /// HistoryRetentionSQL.clearRetention(store: "public")
    /// ```
    public static func clearRetention(store: String) -> SQLStatement {
        SQLStatement(sql: #"DELETE FROM "pgmodel"."history_retention" WHERE "schema_name" = $1 RETURNING "schema_name""#,
                     binds: [.string(store)])
    }

    /// What one prune pass removes, fixed at its start: the age cut-off on the database's clock (NULL
    /// without an age limit) and the newest position a change limit removes (NULL without one, or when
    /// the store's history fits).
    ///
    /// ```swift
    /// HistoryRetentionSQL.pruneBounds(store: "public", maxAgeSeconds: 86_400, maxChanges: nil)
    /// ```
    public static func pruneBounds(store: String, maxAgeSeconds: Int64?, maxChanges: Int64?) -> SQLStatement {
        SQLStatement(sql: """
            SELECT now() - make_interval(secs => $2::bigint::float8), \
            CASE WHEN $3::bigint IS NULL THEN NULL ELSE "pgmodel"."history_count_horizon"($1, $3::bigint) END
            """, binds: [.string(store), maxAgeSeconds.map(PGValue.int) ?? .null, maxChanges.map(PGValue.int) ?? .null])
    }

    /// One batch of `pgmodel.prune_history`: transactions and changes removed, the newest removed
    /// position, and whether another session was pruning the store.
    ///
    /// ```swift
    /// HistoryRetentionSQL.pruneBatch(store: "public", olderThan: cutoff, throughPosition: nil, batchRows: 10_000)
    /// // SELECT "transactions", "changes", "deleted_through", "busy" FROM "pgmodel"."prune_history"($1, $2::timestamptz, $3::bigint, $4::integer)
    /// ```
    public static func pruneBatch(store: String, olderThan: Date?, throughPosition: Int64?, batchRows: Int) -> SQLStatement {
        SQLStatement(sql: """
            SELECT "transactions", "changes", "deleted_through", "busy" \
            FROM "pgmodel"."prune_history"($1, $2::timestamptz, $3::bigint, $4::integer)
            """, binds: [.string(store), olderThan.map(PGValue.date) ?? .null, throughPosition.map(PGValue.int) ?? .null,
                         .int(Int64(batchRows))])
    }
}
