import Foundation
@_spi(PGModelInternals) import PGModelCore
@_spi(PGModelInternals) import PGModelSQL
import Testing

// Snapshots of the history SQL: every value bound, the horizon always applied.

@Suite("HistorySQL")
struct HistorySQLTests {
    let sql = HistorySQL(schemaName: "app")
    let horizon = #"t."schema_name" = $1 AND t."position" IS NOT NULL"#
    let columns = #"SELECT t."id", t."position"::text, t."author", t."user_name", t."created_at", t."bundle_identifier", t."process_identifier" FROM "pgmodel"."transactions" t WHERE "#

    @Test func everyFilterRendersWithBinds() {
        let cases: [(HistoryFilter, String)] = [
            (.token(.greater, 42), #"t."position" > $2"#),
            (.transactionIdentifier(.lessOrEqual, 7), #"t."id" <= $2"#),
            (.author(.equal, "App"), #"t."author" = $2"#),
            (.author(.notEqual, "App"), #"t."author" IS DISTINCT FROM $2"#),
            (.author(.equal, nil), #"t."author" IS NULL"#),
            (.author(.notEqual, nil), #"t."author" IS NOT NULL"#),
            (.authorIn(["App", "Widget"]), #"t."author" IN (SELECT jsonb_array_elements_text($2::jsonb))"#),
            (.timestamp(.less, Date(timeIntervalSince1970: 0)), #"t."created_at" < $2"#),
            (.entities(["Trip"]), #"EXISTS (SELECT 1 FROM "pgmodel"."changes" c WHERE c."transaction_id" = t."id" AND c."entity" IN (SELECT jsonb_array_elements_text($2::jsonb)))"#),
            (.none, "FALSE"),
            (.and([.token(.greater, 1), .author(.equal, "A")]), #"(t."position" > $2) AND (t."author" = $3)"#),
            (.or([.token(.less, 1), .none]), #"(t."position" < $2) OR (FALSE)"#),
            (.not(.author(.equal, "A")), #"NOT coalesce((t."author" = $2), FALSE)"#),
        ]
        for (filter, condition) in cases {
            let statement = sql.selectTransactions(HistoryRequest(filter: filter))
            #expect(statement.sql == columns + horizon + " AND (" + condition + #") ORDER BY t."position""#, "\(filter)")
            #expect(statement.binds.first == .string("app"))
        }
    }

    /// Which transactions a user sees is row-level security's business: the SQL has no owner filter.
    @Test func orderAndLimit() {
        let statement = sql.selectTransactions(HistoryRequest(newestFirst: true, limit: 1))
        #expect(statement.sql == columns + horizon + #" ORDER BY t."position" DESC LIMIT $2"#)
        // Sort keys come first, nil authors where Swift puts them; the token always ends the order.
        let byAuthor = sql.selectTransactions(HistoryRequest(limit: 3, sort: [HistorySortKey(.author, ascending: false)]))
        #expect(byAuthor.sql == columns + horizon + #" ORDER BY t."author" DESC NULLS LAST, t."position" LIMIT $2"#)
        let forward = sql.selectTransactions(HistoryRequest(newestFirst: true, sort: [HistorySortKey(.author)]))
        #expect(forward.sql == columns + horizon + #" ORDER BY t."author" ASC NULLS FIRST, t."position" DESC"#)
        #expect(statement.binds == [.string("app"), .int(1)])
    }

    @Test func writesAndTheDoorbell() {
        #expect(sql.insertTransaction(author: "App", userID: nil, userName: nil).sql
            == #"INSERT INTO "pgmodel"."transactions" ("schema_name", "author", "user_id", "user_name", "bundle_identifier", "process_identifier") VALUES ($1, $2, $3::uuid, $4, $5::text, $6::text) RETURNING "id""#)
        let origin = sql.insertTransaction(author: nil, userID: nil, userName: "alice", bundleIdentifier: "Tool", processIdentifier: "42")
        #expect(origin.binds == [.string("app"), .null, .null, .string("alice"), .string("Tool"), .string("42")])
        // The transaction and its changes as one statement: the changes name the row the WITH inserts.
        let id = UUID()
        let together = sql.insertTransaction(author: "App", userID: nil, userName: nil,
                                             changes: .inserts(HistoryInsertColumns(entity: "Trip", owner: nil, rowIDs: [id])))
        #expect(together.sql == #"WITH "t" AS (INSERT INTO "pgmodel"."transactions" ("schema_name", "author", "user_id", "user_name", "bundle_identifier", "process_identifier") VALUES ($1, $2, $3::uuid, $4, $5::text, $6::text) RETURNING "id") "#
            + #"INSERT INTO "pgmodel"."changes" ("transaction_id", "entity", "row_id", "kind", "owner_id", "updated_attributes", "audience_only") VALUES ((SELECT "id" FROM "t"), $7::text, ($9::uuid[])[1], 'insert', $8::uuid, '{}', false)"#)
        #expect(together.binds == [.string("app"), .string("App"), .null, .null, .null, .null, .string("Trip"), .null])
        #expect(together.arrays == [SQLArray(.uuid, [.uuid(id)])])
        let changes = sql.insertChanges(transactionID: 9, changes: "[]")
        #expect(changes.sql.hasPrefix(#"INSERT INTO "pgmodel"."changes" ("transaction_id", "entity", "row_id", "kind", "owner_id", "updated_attributes", "new_values", "tombstone", "audience", "audience_only") SELECT $1, "#))
        #expect(changes.sql.hasSuffix(#"FROM jsonb_to_recordset($2::jsonb) AS r("entity" text, "row_id" uuid, "kind" text, "owner_id" uuid, "updated_attributes" text[], "new_values" jsonb, "tombstone" jsonb, "audience" uuid[], "audience_only" boolean)"#))
        #expect(sql.notify(payload: "x") == SQLStatement(sql: "SELECT pg_notify('pgmodel_changes', $1)", binds: [.string("x")]))
        #expect(sql.notifyPayload(entities: ["Trip", "Album"]) == #"{"e":["Trip","Album"],"s":"app"}"#)
        let many = (0..<2000).map { "Entity\($0)" }
        #expect(sql.notifyPayload(entities: many) == #"{"e":[],"s":"app"}"#, "an oversized ring names no entities")
    }

    @Test func plainInsertsOfOneClassAndOwnerAreOneRun() {
        let ids = [UUID(), UUID()]
        let owner = UUID()
        let statement = sql.insertChanges(transactionID: 9, inserts: HistoryInsertColumns(entity: "Trip", owner: owner, rowIDs: ids))
        #expect(statement.sql == #"INSERT INTO "pgmodel"."changes" ("transaction_id", "entity", "row_id", "kind", "owner_id", "updated_attributes", "audience_only", "row_ids") "#
            + #"VALUES ($1, $2::text, NULL, 'insert', $3::uuid, '{}', false, $4::uuid[])"#)
        #expect(statement.binds == [.int(9), .string("Trip"), .uuid(owner)])
        #expect(statement.arrays == [SQLArray(.uuid, ids.map(PGValue.uuid))])
        // The direct store's rows have no owner.
        #expect(sql.insertChanges(transactionID: 9, inserts: HistoryInsertColumns(entity: "Trip", owner: nil, rowIDs: ids)).binds
            == [.int(9), .string("Trip"), .null])
    }

    @Test("changes sent right behind their transaction name it by this session's last id, and store what the bound form stores")
    func changesOfTheLastTransaction() {
        let id = UUID()
        let inserts = HistoryInsertColumns(entity: "Trip", owner: nil, rowIDs: [id])
        let statement = sql.insertChangesOfLastTransaction(.inserts(inserts))
        #expect(statement.sql == #"INSERT INTO "pgmodel"."changes" ("transaction_id", "entity", "row_id", "kind", "owner_id", "updated_attributes", "audience_only") "#
            + #"VALUES (currval('"pgmodel"."transactions_id_seq"'), $1::text, ($3::uuid[])[1], 'insert', $2::uuid, '{}', false)"#)
        #expect(statement.binds == [.string("Trip"), .null])
        #expect(statement.arrays == [SQLArray(.uuid, [.uuid(id)])])
        let bound = sql.insertChanges(transactionID: 9, inserts: inserts)
        #expect(Array(bound.binds.dropFirst()) == statement.binds)
        #expect(bound.sql.replacingOccurrences(of: "$1, ", with: "currval('\"pgmodel\".\"transactions_id_seq\"'), ")
            .replacingOccurrences(of: "$2", with: "$1").replacingOccurrences(of: "$3", with: "$2").replacingOccurrences(of: "$4", with: "$3") == statement.sql)
        var columns = HistoryChangeColumns()
        columns.append(entity: "Trip", rowID: id, kind: "update", owner: nil, updatedAttributes: ["name"], newValues: #"{"name":"x"}"#,
                       previousValues: nil, tombstone: nil, audience: nil, audienceOnly: false)
        let changes = sql.insertChangesOfLastTransaction(.columns(columns))
        #expect(changes.sql.contains(#"SELECT currval('"pgmodel"."transactions_id_seq"'), "v"."e""#))
        #expect(changes.binds.isEmpty)
        #expect(changes.arrays == sql.insertChanges(transactionID: 9, columns: columns).arrays)
    }

    @Test func aSingleInsertIsARowOfItsOwn() {
        let id = UUID()
        let statement = sql.insertChanges(transactionID: 9, inserts: HistoryInsertColumns(entity: "Trip", owner: nil, rowIDs: [id]))
        #expect(statement.sql == #"INSERT INTO "pgmodel"."changes" ("transaction_id", "entity", "row_id", "kind", "owner_id", "updated_attributes", "audience_only") "#
            + #"VALUES ($1, $2::text, ($4::uuid[])[1], 'insert', $3::uuid, '{}', false)"#)
        #expect(statement.arrays == [SQLArray(.uuid, [.uuid(id)])])
    }

    @Test func changesAreReadOnePerInsertThroughTheView() {
        let statement = sql.selectChanges(transactionIDs: [3, 4], entities: nil)
        #expect(statement.sql.contains(#" FROM "pgmodel"."change_rows" c WHERE c."transaction_id" = ANY($1::bigint[])"#))
        #expect(statement.sql.hasSuffix(#" ORDER BY c."id""#))
        #expect(statement.binds == [.string("{3,4}")])
    }

    @Test func deletesRecordTheNewestToken() {
        #expect(sql.deleteTransactions(.token(.lessOrEqual, 5)).sql
            == #"DELETE FROM "pgmodel"."transactions" t WHERE "# + horizon + #" AND (t."position" <= $2) RETURNING t."position"::text"#)
        #expect(sql.recordDeletion(through: 5).binds == [.string("app"), .string("5")])
        #expect(HistoryRequest(filter: .and([.author(.equal, "A"), .token(.greater, 3)])).resumeToken == 3)
        #expect(HistoryRequest(filter: .or([.token(.greater, 3)])).resumeToken == nil)
    }
}
