import Foundation
@_spi(PGModelInternals) import PGModelCore

/// The SQL of persistent history: writing a save's transaction and changes, reading history up to the
/// commit order, deleting it. Every value is bound; the only identifiers are PGModel's own tables.
///
/// ```swift
/// let sql = HistorySQL(schemaName: "public")
/// let select = sql.selectTransactions(HistoryRequest(filter: .token(.greater, 4711)))
/// // SELECT t."id", t."position"::text, … FROM "pgmodel"."transactions" t WHERE t."schema_name" = $1
/// //   AND t."position" IS NOT NULL AND (t."position" > $2) ORDER BY t."position"
/// ```
@_spi(PGModelInternals) public struct HistorySQL: Sendable {
    /// The store whose history this reads and writes (`pgmodel.transactions.schema_name`).
    public let schemaName: String

    /// The doorbell channel.
    public static let channel = "pgmodel_changes"

    public init(schemaName: String) {
        self.schemaName = schemaName
    }

    /// `INSERT INTO pgmodel.transactions … RETURNING id`: the save's history transaction. Its token, the
    /// position, is assigned at COMMIT (the `pgmodel_assign_position` trigger).
    ///
    /// With `joining` (saves inside a migration, which all share one PostgreSQL transaction), a second
    /// save joins the first one's history transaction instead of breaking its one-row-per-xid key.
    ///
    /// With `changes`, the transaction and all of its changes are one statement (the transaction a
    /// data-modifying `WITH`): one round trip for a save's whole history instead of two. Only for a
    /// session whose policies on `pgmodel.changes` do not look the transaction up (the store's owner): a
    /// service user's insert policy finds its transaction with a query of its own, which does not see a
    /// row inserted by the same statement.
    ///
    /// ```swift
    /// sql.insertTransaction(author: nil, userID: nil, userName: nil, changes: .inserts(HistoryInsertColumns(entity: "Trip", owner: nil, rowIDs: [id])))
    /// // WITH "t" AS (INSERT INTO "pgmodel"."transactions" (…) VALUES ($1, …) RETURNING "id")
    /// // INSERT INTO "pgmodel"."changes" (…) VALUES ((SELECT "id" FROM "t"), $7::text, ($9::uuid[])[1], 'insert', $8::uuid, '{}', false)
    /// ```
    public func insertTransaction(author: String?, userID: UUID?, userName: String?, bundleIdentifier: String? = nil,
                                  processIdentifier: String? = nil, joining: Bool = false, changes: HistoryChanges? = nil) -> SQLStatement {
        var b = SQLBuilder()
        let values = [b.bind(.string(schemaName)), b.bind(author.map(PGValue.string) ?? .null),
                      b.bind(userID.map(PGValue.uuid) ?? .null) + "::uuid", b.bind(userName.map(PGValue.string) ?? .null),
                      b.bind(bundleIdentifier.map(PGValue.string) ?? .null) + "::text",
                      b.bind(processIdentifier.map(PGValue.string) ?? .null) + "::text"]
        let conflict = joining ? " ON CONFLICT (\"xid\") DO UPDATE SET \"author\" = coalesce(\"pgmodel\".\"transactions\".\"author\", EXCLUDED.\"author\")" : ""
        let transaction = "INSERT INTO \"pgmodel\".\"transactions\" (\"schema_name\", \"author\", \"user_id\", \"user_name\", \"bundle_identifier\", \"process_identifier\") VALUES (\(values.joined(separator: ", ")))\(conflict) RETURNING \"id\""
        guard let changes else {
            b.sql = transaction
            return b.statement
        }
        let insert = insertChangesSQL(&b, transaction: .withQuery, changes: changes)
        b.sql = "WITH \"t\" AS (\(transaction)) \(insert)"
        return b.statement
    }

    /// All changes of the history transaction this connection wrote last (its id is
    /// `currval('pgmodel.transactions_id_seq')`, this session's own), so that the statement can be sent
    /// right behind ``insertTransaction(author:userID:userName:bundleIdentifier:processIdentifier:joining:)``
    /// without waiting for the id it returns. Stores exactly what ``insertChanges(transactionID:columns:)``
    /// and ``insertChanges(transactionID:inserts:)`` store.
    ///
    /// ```swift
    /// sql.insertChangesOfLastTransaction(.inserts(HistoryInsertColumns(entity: "Trip", owner: nil, rowIDs: [id])))
    /// // INSERT INTO "pgmodel"."changes" (…) VALUES (currval('"pgmodel"."transactions_id_seq"'), $1::text, ($3::uuid[])[1], 'insert', $2::uuid, '{}', false)
    /// ```
    public func insertChangesOfLastTransaction(_ changes: HistoryChanges) -> SQLStatement {
        var b = SQLBuilder()
        b.sql = insertChangesSQL(&b, transaction: .last, changes: changes)
        return b.statement
    }

    /// ``insertChanges(transactionID:inserts:)`` or ``insertChanges(transactionID:columns:)``, whichever
    /// `changes` holds.
    ///
    /// ```swift
    /// sql.insertChanges(transactionID: 9, changes: .columns(columns))
    /// ```
    public func insertChanges(transactionID: Int64, changes: HistoryChanges) -> SQLStatement {
        var b = SQLBuilder()
        b.sql = insertChangesSQL(&b, transaction: .id(transactionID), changes: changes)
        return b.statement
    }

    private func insertChangesSQL(_ b: inout SQLBuilder, transaction: TransactionReference, changes: HistoryChanges) -> String {
        switch changes {
        case .inserts(let inserts): insertChangesSQL(&b, transaction: transaction, inserts: inserts)
        case .columns(let columns): insertChangesSQL(&b, transaction: transaction, columns: columns)
        }
    }

    /// The changes one statement writes: plain inserts of one class and owner, or any changes as columns.
    public enum HistoryChanges: Sendable {
        case inserts(HistoryInsertColumns)
        case columns(HistoryChangeColumns)
    }

    /// Which history transaction a changes statement writes to: one whose id is known (bound), or the
    /// one this session wrote last, or the one the statement's own `WITH "t"` inserts.
    private enum TransactionReference {
        case id(Int64)
        case last
        case withQuery

        func sql(_ b: inout SQLBuilder) -> String {
            switch self {
            case .id(let id): b.bind(.int(id))
            case .last: "currval('\"pgmodel\".\"transactions_id_seq\"')"
            case .withQuery: "(SELECT \"id\" FROM \"t\")"
            }
        }
    }

    /// All changes of one history transaction in one statement: `changes` is a JSON array of objects
    /// with `entity`, `row_id`, `kind`, `owner_id`, `updated_attributes`, `new_values`, `tombstone`,
    /// `audience` and `audience_only`.
    public func insertChanges(transactionID: Int64, changes json: String) -> SQLStatement {
        var b = SQLBuilder()
        let id = b.bind(.int(transactionID))
        let rows = b.bind(.string(json))
        b.sql = """
            INSERT INTO "pgmodel"."changes" ("transaction_id", "entity", "row_id", "kind", "owner_id", "updated_attributes", "new_values", "tombstone", "audience", "audience_only") \
            SELECT \(id), r."entity", r."row_id", r."kind", r."owner_id", coalesce(r."updated_attributes", '{}'), r."new_values", r."tombstone", r."audience", coalesce(r."audience_only", false) \
            FROM jsonb_to_recordset(\(rows)::jsonb) AS r("entity" text, "row_id" uuid, "kind" text, "owner_id" uuid, "updated_attributes" text[], "new_values" jsonb, "tombstone" jsonb, "audience" uuid[], "audience_only" boolean)
            """
        return b.statement
    }

    /// All changes of one history transaction in one statement, each column one array parameter, in
    /// the columns' order (the changes' ids follow it). Stores exactly what
    /// ``insertChanges(transactionID:changes:)`` stores for the same changes.
    ///
    /// ```swift
    /// sql.insertChanges(transactionID: 9, columns: columns)
    /// // INSERT INTO "pgmodel"."changes" (…) SELECT $1, "v"."e", … FROM unnest($2::text[], $3::uuid[], …)
    /// //   WITH ORDINALITY AS "v"(…) ORDER BY "v"."i"
    /// ```
    public func insertChanges(transactionID: Int64, columns: HistoryChangeColumns) -> SQLStatement {
        var b = SQLBuilder()
        b.sql = insertChangesSQL(&b, transaction: .id(transactionID), columns: columns)
        return b.statement
    }

    private func insertChangesSQL(_ b: inout SQLBuilder, transaction: TransactionReference, columns: HistoryChangeColumns) -> String {
        let id = transaction.sql(&b)
        let arrays = [b.bind(SQLArray(.text, columns.entities)), b.bind(SQLArray(.uuid, columns.rowIDs)), b.bind(SQLArray(.text, columns.kinds)),
                      b.bind(SQLArray(.uuid, columns.owners)), b.bind(SQLArray(.text, columns.updatedAttributes)),
                      b.bind(SQLArray(.text, columns.newValues)), b.bind(SQLArray(.text, columns.previousValues)),
                      b.bind(SQLArray(.text, columns.tombstones)),
                      b.bind(SQLArray(.text, columns.audiences)), b.bind(SQLArray(.bool, columns.audienceOnly))]
        return """
            INSERT INTO "pgmodel"."changes" ("transaction_id", "entity", "row_id", "kind", "owner_id", "updated_attributes", "new_values", "previous_values", "tombstone", "audience", "audience_only") \
            SELECT \(id), "v"."e", "v"."r", "v"."k", "v"."o", coalesce("v"."a"::text[], '{}'), "v"."n"::jsonb, "v"."p"::jsonb, "v"."t"::jsonb, "v"."u"::uuid[], "v"."x" \
            FROM unnest(\(arrays.joined(separator: ", "))) WITH ORDINALITY AS "v"("e", "r", "k", "o", "a", "n", "p", "t", "u", "x", "i") ORDER BY "v"."i"
            """
    }

    /// The most inserts one run holds: the step of `pgmodel.changes_id_seq`, which leaves a run's
    /// change identifiers (its `id` and the values after it) to that run.
    public static let runCapacity = 8_192

    /// Plain inserts of one class and owner as changes of one history transaction, in the ids' order, with
    /// one array parameter instead of nine. Two or more (at most ``runCapacity``) are one `pgmodel.changes`
    /// row, a run (`sql/009_pgmodel_history_runs.sql`): their ids in `row_ids`, `row_id` NULL, and the k-th
    /// insert's change identifier `id + k - 1`. A single insert is stored as
    /// ``insertChanges(transactionID:columns:)`` stores it. Either way
    /// ``selectChanges(transactionIDs:entities:)`` reads one change per insert.
    ///
    /// ```swift
    /// sql.insertChanges(transactionID: 9, inserts: HistoryInsertColumns(entity: "Trip", owner: nil, rowIDs: ids))
    /// // INSERT INTO "pgmodel"."changes" ("transaction_id", "entity", "row_id", "kind", "owner_id", "updated_attributes",
    /// //   "audience_only", "row_ids") VALUES ($1, $2::text, NULL, 'insert', $3::uuid, '{}', false, $4)
    /// ```
    public func insertChanges(transactionID: Int64, inserts: HistoryInsertColumns) -> SQLStatement {
        var b = SQLBuilder()
        b.sql = insertChangesSQL(&b, transaction: .id(transactionID), inserts: inserts)
        return b.statement
    }

    private func insertChangesSQL(_ b: inout SQLBuilder, transaction: TransactionReference, inserts: HistoryInsertColumns) -> String {
        let id = transaction.sql(&b)
        let entity = b.bind(.string(inserts.entity))
        let owner = b.bind(inserts.owner.map(PGValue.uuid) ?? .null)
        let rowIDs = b.bind(SQLArray(.uuid, inserts.rowIDs))
        if inserts.count == 1 {
            return """
                INSERT INTO "pgmodel"."changes" ("transaction_id", "entity", "row_id", "kind", "owner_id", "updated_attributes", "audience_only") \
                VALUES (\(id), \(entity)::text, (\(rowIDs))[1], 'insert', \(owner)::uuid, '{}', false)
                """
        }
        // More than a run holds fails the table's check (changes_rows_shape); the store's chunks are smaller.
        return """
            INSERT INTO "pgmodel"."changes" ("transaction_id", "entity", "row_id", "kind", "owner_id", "updated_attributes", "audience_only", "row_ids") \
            VALUES (\(id), \(entity)::text, NULL, 'insert', \(owner)::uuid, '{}', false, \(rowIDs))
            """
    }

    /// `SELECT pg_notify('pgmodel_changes', payload)`: delivered at commit, dropped on rollback.
    public func notify(payload: String) -> SQLStatement {
        SQLStatement(sql: "SELECT pg_notify('\(Self.channel)', $1)", binds: [.string(payload)])
    }

    /// ``notify(payload:)`` that also answers a WAL position (text, `"0/16B3748"`) at or past the end of
    /// the commit record: sent right behind a save's COMMIT, so a standby that has replayed that far
    /// shows the save. (Read before COMMIT it would not be.)
    ///
    /// ```swift
    /// let doorbell = sql.notifyWithCommitPosition(payload: sql.notifyPayload(entities: ["Trip"]))
    /// ```
    public func notifyWithCommitPosition(payload: String) -> SQLStatement {
        // The flush position when commits wait for their flush (every synchronous_commit but off): past the
        // commit record and already sendable to a standby. The insert position may run ahead of what the
        // WAL writer has flushed, and a standby cannot replay that far until it does.
        SQLStatement(sql: """
            SELECT pg_notify('\(Self.channel)', $1)::text, (CASE WHEN current_setting('synchronous_commit') = 'off' \
            THEN pg_current_wal_insert_lsn() ELSE pg_current_wal_flush_lsn() END)::text
            """, binds: [.string(payload)])
    }

    /// The doorbell payload: `{"s":"<schema>","e":["Trip",…]}`, or no entity names when they would not fit.
    public func notifyPayload(entities: [String]) -> String {
        func payload(_ names: [String]) -> String {
            let object: [String: Any] = ["s": schemaName, "e": names]
            guard let data = try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys]) else { return "{}" }
            return String(decoding: data, as: UTF8.self)
        }
        let full = payload(entities)
        return full.utf8.count <= 7000 ? full : payload([])
    }

    /// The newest token removed by `deleteHistory` (NULL when none). Run in the same snapshot as
    /// ``selectTransactions(_:)``.
    public func deletionState() -> SQLStatement {
        SQLStatement(sql: """
            SELECT (SELECT d."deleted_through_position"::text FROM "pgmodel"."history_deletions" d WHERE d."schema_name" = $1)
            """, binds: [.string(schemaName)])
    }

    /// `SELECT pgmodel.history_horizon(store)::text`: the newest position below which every save of the store
    /// has committed or rolled back. Saves of a store commit side by side, so positions can become visible
    /// out of order for a moment; a reader runs this as a statement of its own (its lock ends with it), then
    /// reads ``selectTransactions(_:through:)`` up to the horizon in a snapshot taken afterwards.
    public func horizon() -> SQLStatement {
        SQLStatement(sql: "SELECT \"pgmodel\".\"history_horizon\"($1)::text", binds: [.string(schemaName)])
    }

    /// ``horizon()`` and the primary's WAL position read once the horizon's lock is held:
    /// `horizon, wal_position`. Every save up to the horizon has ended before that lock is granted, and a
    /// transaction lets go of its locks only after its commit record is written and, unless
    /// `synchronous_commit` is off, flushed: so the position is the flush position (what a standby can
    /// already receive), and the insert position under `synchronous_commit = off`, as for a save's
    /// ``notifyWithCommitPosition(payload:)``. The insert position would be safe either way, but it runs
    /// ahead of the flush whenever anyone has written WAL not yet flushed, and a standby cannot replay
    /// that far until the WAL writer's next round. A standby that has replayed the position shows every
    /// save up to the horizon to a snapshot it takes afterwards. The horizon is a subquery fenced by
    /// `OFFSET 0`, so it runs before the position is read.
    ///
    /// ```swift
    /// let statement = HistorySQL(schemaName: "app").horizonWithWALPosition()
    /// ```
    public func horizonWithWALPosition() -> SQLStatement {
        SQLStatement(sql: """
            SELECT h.horizon::text, (CASE WHEN current_setting('synchronous_commit') = 'off' \
            THEN pg_current_wal_insert_lsn() ELSE pg_current_wal_flush_lsn() END)::text \
            FROM (SELECT "pgmodel"."history_horizon"($1) AS horizon OFFSET 0) AS h
            """, binds: [.string(schemaName)])
    }

    /// `id, position, author, user_name, created_at, bundle_identifier, process_identifier` of the matching committed transactions, in the
    /// request's order: its sort keys, then the token. With `horizon` (``horizon()``), only positions up to
    /// it: what the reader sees is then a gap-free prefix of the store's history.
    /// Which of them a service user sees is row-level security's business: transactions with a change
    /// of a row they may see, and their own.
    public func selectTransactions(_ request: HistoryRequest, through horizon: UInt64? = nil) -> SQLStatement {
        var b = SQLBuilder()
        var conditions = visibleConditions(request.filter, &b)
        if let horizon { conditions += " AND t.\"position\" <= \(b.bind(.int(Int64(clamping: horizon))))" }
        var order: [String] = request.sort.map { key in
            switch key.key {
            // Swift orders nil before any value; PostgreSQL's default is the opposite.
            case .author: key.ascending ? "t.\"author\" ASC NULLS FIRST" : "t.\"author\" DESC NULLS LAST"
            }
        }
        // The position is unique: it ends every order, so pages are stable.
        order.append("t.\"position\"" + (request.newestFirst ? " DESC" : ""))
        b.sql = "SELECT t.\"id\", t.\"position\"::text, t.\"author\", t.\"user_name\", t.\"created_at\", t.\"bundle_identifier\", t.\"process_identifier\" FROM \"pgmodel\".\"transactions\" t WHERE "
            + conditions + " ORDER BY " + order.joined(separator: ", ")
        if let limit = request.limit { b.sql += " LIMIT \(b.bind(.int(Int64(max(0, limit)))))" }
        return b.statement
    }

    /// The changes of `transactionIDs`, in change order: only `entities` when given (and, for a service
    /// user, only changes of rows they may see: row-level security).
    public func selectChanges(transactionIDs: [Int64], entities: [String]?) -> SQLStatement {
        var b = SQLBuilder()
        // Through pgmodel.change_rows: a run of inserts becomes one change per insert, and a service user
        // gets only the inserts of a run they may see.
        var sql = "SELECT c.\"transaction_id\", c.\"id\", c.\"kind\", c.\"entity\", c.\"row_id\", c.\"updated_attributes\", "
            + "c.\"new_values\"::text, c.\"tombstone\"::text FROM \"pgmodel\".\"change_rows\" c WHERE c.\"transaction_id\" = ANY("
            + b.bind(.string("{" + transactionIDs.map(String.init).joined(separator: ",") + "}")) + "::bigint[])"
            // A record appearing or disappearing for a user (a share, a revocation) is that user's event only.
            + " AND (NOT c.\"audience_only\" OR (SELECT \"pgmodel\".\"current_user_id\"()) = ANY (c.\"audience\"))"
        if let entities { sql += " AND c.\"entity\" IN (SELECT jsonb_array_elements_text(\(b.bind(.string(Self.jsonArray(entities))))::jsonb))" }
        b.sql = sql + " ORDER BY c.\"id\""
        return b.statement
    }

    /// `DELETE` of the matching committed transactions (the `pgmodel_transactions_delete` trigger deletes their
    /// changes in the same statement), returning each deleted token.
    public func deleteTransactions(_ filter: HistoryFilter) -> SQLStatement {
        var b = SQLBuilder()
        let conditions = visibleConditions(filter, &b)
        b.sql = "DELETE FROM \"pgmodel\".\"transactions\" t WHERE " + conditions + " RETURNING t.\"position\"::text"
        return b.statement
    }

    /// Records that history through `token` was deleted, keeping the newest such token.
    public func recordDeletion(through token: UInt64) -> SQLStatement {
        SQLStatement(sql: """
            INSERT INTO "pgmodel"."history_deletions" ("schema_name", "deleted_through_position") VALUES ($1, $2::text::bigint) \
            ON CONFLICT ("schema_name") DO UPDATE SET "deleted_through_position" = \
            greatest("pgmodel"."history_deletions"."deleted_through_position", EXCLUDED."deleted_through_position")
            """, binds: [.string(schemaName), .string(String(token))])
    }

    /// This store, positioned (committed), matching `filter`.
    private func visibleConditions(_ filter: HistoryFilter, _ b: inout SQLBuilder) -> String {
        var parts = ["t.\"schema_name\" = \(b.bind(.string(schemaName)))", "t.\"position\" IS NOT NULL"]
        if filter != .all { parts.append("(" + condition(filter, &b) + ")") }
        return parts.joined(separator: " AND ")
    }

    private func condition(_ filter: HistoryFilter, _ b: inout SQLBuilder) -> String {
        switch filter {
        case .all:
            return "TRUE"
        case .none:
            return "FALSE"
        case .token(let op, let value):
            // A token beyond bigint (only a hand-made one) compares as the largest position.
            return "t.\"position\" \(Self.sql(op)) \(b.bind(.int(Int64(clamping: value))))"
        case .transactionIdentifier(let op, let value):
            return "t.\"id\" \(Self.sql(op)) \(b.bind(.int(value)))"
        case .author(let op, nil):
            return op == .notEqual ? "t.\"author\" IS NOT NULL" : op == .equal ? "t.\"author\" IS NULL" : "FALSE"
        case .author(let op, let value?):
            // Swift's `author != "x"` is true for a nil author; SQL's `<>` would be NULL.
            if op == .notEqual { return "t.\"author\" IS DISTINCT FROM \(b.bind(.string(value)))" }
            return "t.\"author\" \(Self.sql(op)) \(b.bind(.string(value)))"
        case .authorIn(let authors):
            return "t.\"author\" IN (SELECT jsonb_array_elements_text(\(b.bind(.string(Self.jsonArray(authors))))::jsonb))"
        case .timestamp(let op, let date):
            return "t.\"created_at\" \(Self.sql(op)) \(b.bind(.date(date)))"
        case .entities(let names):
            return "EXISTS (SELECT 1 FROM \"pgmodel\".\"changes\" c WHERE c.\"transaction_id\" = t.\"id\" AND c.\"entity\" IN "
                + "(SELECT jsonb_array_elements_text(\(b.bind(.string(Self.jsonArray(names))))::jsonb)))"
        case .and(let parts):
            return parts.isEmpty ? "TRUE" : parts.map { "(" + condition($0, &b) + ")" }.joined(separator: " AND ")
        case .or(let parts):
            return parts.isEmpty ? "FALSE" : parts.map { "(" + condition($0, &b) + ")" }.joined(separator: " OR ")
        case .not(let inner):
            // NOT over a NULL author comparison would be NULL; coalesce keeps Swift's two-valued logic.
            return "NOT coalesce((" + condition(inner, &b) + "), FALSE)"
        }
    }

    private static func sql(_ op: ComparisonOperator) -> String {
        switch op {
        case .equal: "="
        case .notEqual: "<>"
        case .less: "<"
        case .lessOrEqual: "<="
        case .greater: ">"
        case .greaterOrEqual: ">="
        }
    }

    static func jsonArray(_ strings: [String]) -> String {
        guard let data = try? JSONSerialization.data(withJSONObject: strings) else { return "[]" }
        return String(decoding: data, as: UTF8.self)
    }
}
