import Foundation
@_spi(PGModelInternals) import PGModelCore

@_spi(PGModelInternals) extension HistorySQL {
    /// Every change of `transactionIDs` as the database owner reads them (runs become one change per
    /// insert, through `pgmodel.change_rows`), audience events included: `transaction_id, id, kind,
    /// entity, row_id, updated_attributes, new_values, tombstone, audience_only`. Who may see which of
    /// them is ``audienceVisibility(users:adminRoles:transactionIDs:)``'s answer.
    ///
    /// ```swift
    /// let changes = sql.selectAllChanges(transactionIDs: [41, 42])
    /// ```
    public func selectAllChanges(transactionIDs: [Int64]) -> SQLStatement {
        var b = SQLBuilder()
        b.sql = "SELECT c.\"transaction_id\", c.\"id\", c.\"kind\", c.\"entity\", c.\"row_id\", c.\"updated_attributes\", "
            + "c.\"new_values\"::text, c.\"tombstone\"::text, c.\"audience_only\" FROM \"pgmodel\".\"change_rows\" c "
            + "WHERE c.\"transaction_id\" = ANY(" + b.bind(.string(Self.bigintArray(transactionIDs))) + "::bigint[]) ORDER BY c.\"id\""
        return b.statement
    }

    /// Which of `users` may see which transaction and change of `transactionIDs`, in one statement for
    /// all of them: rows `kind` (`t` a transaction, `c` a change as `pgmodel.change_rows` numbers it),
    /// `id`, and `readers`, the 1-based positions in `users` of those who may see it, comma-separated.
    /// Run by the database owner (who alone may call the store's `pgmodel_shared_keys_for`).
    ///
    /// It is the row-level security a history read runs under, spelled out per user: the policies of
    /// `pgmodel.changes` and `pgmodel.transactions` for `pgmodel_app` (owner, admin, a share's closure,
    /// the audience of a share or revocation; a transaction with any such change, or saved by the
    /// user), those for `pgmodel_admin` where `adminRoles` says the user's transactions take that role
    /// (every row while the user is an admin, none otherwise), the per-insert filter of a run in
    /// `pgmodel.change_rows`, and the read's own rule that an audience event is its audience's only.
    /// A user's share closure is the one the policies use (the store's `pgmodel_shared_keys()`, which
    /// `pgmodel.shared_row_keys()` collects), computed once per user for the statement; keys of other
    /// stores never match this store's changes, so they are left out.
    ///
    /// ```swift
    /// let visibility = sql.audienceVisibility(users: [alice, bob], adminRoles: [false, false], transactionIDs: [41, 42])
    /// ```
    public func audienceVisibility(users: [UUID], adminRoles: [Bool], transactionIDs: [Int64]) -> SQLStatement {
        var b = SQLBuilder()
        let userList = b.bindIDs(users)
        let roles = b.bind(.string("{" + adminRoles.map { $0 ? "t" : "f" }.joined(separator: ",") + "}")) + "::boolean[]"
        let ids = b.bind(.string(Self.bigintArray(transactionIDs))) + "::bigint[]"
        let sharedChange = "\"pgmodel\".\"is_shared_change\""
        b.sql = """
            WITH "u" AS MATERIALIZED (\
            SELECT x."n", x."id", x."admin_role", \
            coalesce((SELECT us."is_admin" FROM "pgmodel"."users" us WHERE us."id" = x."id"), false) AS "is_admin", \
            \(Naming.quoted(schemaName)).\"pgmodel_shared_keys_for\"(x."id") AS "keys" \
            FROM unnest(\(userList), \(roles)) WITH ORDINALITY AS x("id", "admin_role", "n")), \
            "v" AS MATERIALIZED (SELECT u.*, ARRAY(SELECT DISTINCT left(k, 36)::uuid FROM unnest(u."keys") AS k) AS "ids" FROM "u"), \
            "c" AS MATERIALIZED (SELECT ch."id", ch."transaction_id", ch."entity", ch."row_id", ch."row_ids", ch."owner_id", \
            ch."audience", ch."audience_only" FROM "pgmodel"."changes" ch WHERE ch."transaction_id" = ANY(\(ids))), \
            "b" AS MATERIALIZED (\
            SELECT c.*, v."n", v."id" AS "uid", v."is_admin", v."keys", v."ids" FROM "c" CROSS JOIN "v" \
            WHERE CASE WHEN v."admin_role" THEN v."is_admin" \
            ELSE ((NOT c."audience_only" AND (c."owner_id" = v."id" OR v."is_admin" \
            OR (c."row_id" = ANY (v."ids") AND \(sharedChange)(c."transaction_id", c."entity", c."row_id", v."keys")) \
            OR (c."row_ids" && v."ids" AND "pgmodel"."is_shared_run"(c."transaction_id", c."entity", c."row_ids", v."keys")))) \
            OR v."id" = ANY (c."audience")) END) \
            SELECT 't'::text, t."id", string_agg(v."n"::text, ',' ORDER BY v."n") \
            FROM "pgmodel"."transactions" t CROSS JOIN "v" \
            WHERE t."id" = ANY(\(ids)) AND CASE WHEN v."admin_role" THEN v."is_admin" \
            ELSE (t."user_id" = v."id" OR v."is_admin" OR EXISTS (SELECT 1 FROM "b" WHERE b."transaction_id" = t."id" AND b."n" = v."n")) END \
            GROUP BY t."id" \
            UNION ALL \
            SELECT 'c'::text, b."id", string_agg(b."n"::text, ',' ORDER BY b."n") FROM "b" \
            WHERE b."row_ids" IS NULL AND (NOT b."audience_only" OR b."uid" = ANY (b."audience")) \
            GROUP BY b."id" \
            UNION ALL \
            SELECT 'c'::text, b."id" + r."k" - 1, string_agg(b."n"::text, ',' ORDER BY b."n") \
            FROM "b" CROSS JOIN LATERAL unnest(b."row_ids") WITH ORDINALITY AS r("row_id", "k") \
            WHERE b."row_ids" IS NOT NULL AND (NOT b."audience_only" OR b."uid" = ANY (b."audience")) \
            AND (b."owner_id" = b."uid" OR b."is_admin" \
            OR (r."row_id" = ANY (b."ids") AND \(sharedChange)(b."transaction_id", b."entity", r."row_id", b."keys"))) \
            GROUP BY b."id" + r."k" - 1
            """
        return b.statement
    }

    private static func bigintArray(_ ids: [Int64]) -> String {
        "{" + ids.map(String.init).joined(separator: ",") + "}"
    }
}
