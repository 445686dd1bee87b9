import Foundation
@_spi(PGModelInternals) import PGModelCore
@_spi(PGModelInternals) import PGModelSQL
import Testing

/// Exact SQL of selects, writes and DDL: any change to what PGModel sends PostgreSQL shows up here.
@Suite("SQL renderer")
struct SQLRendererTests {
    static let trip = EntityDescription(
        name: "BucketListItem",
        attributes: [
            AttributeDescription(name: "title", type: .string, isUnique: true),
            AttributeDescription(name: "startDate", type: .date),
            AttributeDescription(name: "notes", type: .string, isOptional: true),
            AttributeDescription(name: "id", type: .string),
            AttributeDescription(name: "cost", type: .decimal),
        ],
        uniquenessConstraints: [["startDate", "notes"]],
        indexes: [["startDate"]])

    let renderer: SQLRenderer
    let owner = UUID(uuidString: "00000000-0000-7000-8000-000000000001")!
    let rowID = UUID(uuidString: "00000000-0000-7000-8000-0000000000aa")!

    init() throws {
        renderer = try SQLRenderer(schema: SchemaDescription(entities: [Self.trip]), schemaName: "app")
    }

    @Test func namesAreSnakeCaseAndReservedNamesArePrefixed() {
        #expect(Self.trip.tableName == "bucket_list_item")
        #expect(Self.trip.attribute(named: "startDate")?.columnName == "start_date")
        #expect(Self.trip.attribute(named: "id")?.columnName == "attr_id")
        #expect(Naming.snakeCase("userID") == "user_id")
        #expect(Naming.snakeCase("URLString") == "url_string")
        #expect(Self.trip.uniquenessConstraints == [["startDate", "notes"], ["title"]])
    }

    @Test func selectWithPredicateSortAndPaging() throws {
        let request = FetchRequest(entity: "BucketListItem",
                                   predicate: .compare(.equal, .key("title"), .value(.string("Paris"))),
                                   sort: [SortKey("startDate"), SortKey("notes", ascending: false)], limit: 10, offset: 5)
        let s = try renderer.select(request)
        #expect(s.sql == #"SELECT "id", "entity", "title", "start_date", "notes", "attr_id", "cost" FROM "app"."bucket_list_item" WHERE ("title" = $1) ORDER BY "start_date" ASC NULLS FIRST, "notes" DESC NULLS LAST, "id" ASC LIMIT $2 OFFSET $3"#)
        #expect(s.binds == [.string("Paris"), .int(10), .int(5)])
    }

    @Test func keysetPageExpandsEveryKeyWithItsDirectionAndNulls() throws {
        let date = Date(timeIntervalSince1970: 1_714_557_600)
        let ascending = FetchRequest(entity: "BucketListItem", sort: [SortKey("startDate"), SortKey("notes", ascending: false)], limit: 10,
                                     after: FetchCursor(values: [.date(date), .string("b")], id: rowID))
        let s = try renderer.select(ascending)
        #expect(s.sql == #"SELECT "id", "entity", "title", "start_date", "notes", "attr_id", "cost" FROM "app"."bucket_list_item" WHERE ("start_date" >= $3 AND ("start_date" > $3 OR ("notes" < $2 OR "notes" IS NULL OR ("notes" = $2 AND "id" > $1)))) ORDER BY "start_date" ASC NULLS FIRST, "notes" DESC NULLS LAST, "id" ASC LIMIT $4"#)
        #expect(s.binds == [.uuid(rowID), .string("b"), .date(date), .int(10)])

        // A NULL position: NULL is the first value of an ascending key and the last of a descending one.
        let nulls = FetchRequest(entity: "BucketListItem", predicate: .compare(.equal, .key("title"), .value(.string("Paris"))),
                                 sort: [SortKey("notes"), SortKey("notes", ascending: false)], limit: 10,
                                 after: FetchCursor(values: [.null, .null], id: rowID))
        let n = try renderer.select(nulls)
        #expect(n.sql == #"SELECT "id", "entity", "title", "start_date", "notes", "attr_id", "cost" FROM "app"."bucket_list_item" WHERE ("title" = $1) AND ("notes" IS NOT NULL OR ("notes" IS NULL AND ("notes" IS NULL AND "id" > $2))) ORDER BY "notes" ASC NULLS FIRST, "notes" DESC NULLS LAST, "id" ASC LIMIT $3"#)
        #expect(n.binds == [.string("Paris"), .uuid(rowID), .int(10)])

        // No sort: the id alone.
        let byID = try renderer.selectIdentifiers(FetchRequest(entity: "BucketListItem", limit: 5, after: FetchCursor(values: [], id: rowID)))
        #expect(byID.sql == #"SELECT "id", "entity" FROM "app"."bucket_list_item" WHERE "id" > $1 ORDER BY "id" ASC LIMIT $2"#)

        // The cursor holds one value per sort key.
        #expect(throws: PGModelError.self) {
            try renderer.select(FetchRequest(entity: "BucketListItem", sort: [SortKey("notes")], after: FetchCursor(values: [], id: rowID)))
        }
    }

    @Test func selectWithoutAnythingOrdersByID() throws {
        let s = try renderer.select(FetchRequest(entity: "BucketListItem"))
        #expect(s.sql == #"SELECT "id", "entity", "title", "start_date", "notes", "attr_id", "cost" FROM "app"."bucket_list_item" ORDER BY "id" ASC"#)
        #expect(s.binds.isEmpty)
    }

    @Test func selectByIdentifiers() throws {
        let s = try renderer.selectIdentifiers(FetchRequest(entity: "BucketListItem", identifiers: [rowID]))
        #expect(s.sql == #"SELECT "id", "entity" FROM "app"."bucket_list_item" WHERE "id" IN ($1) ORDER BY "id" ASC"#)
        let none = try renderer.count(FetchRequest(entity: "BucketListItem", identifiers: []))
        #expect(none.sql == #"SELECT count(*) FROM "app"."bucket_list_item" WHERE FALSE"#)
    }

    @Test func ownershipSelectsTheCallersRowsOrThoseSharedWithThem() throws {
        let owned = try renderer.count(FetchRequest(entity: "BucketListItem", ownership: .owned))
        #expect(owned.sql == #"SELECT count(*) FROM "app"."bucket_list_item" WHERE "owner_id" IS NOT DISTINCT FROM (SELECT "pgmodel"."current_user_id"())"#)
        let shared = try renderer.selectIdentifiers(FetchRequest(entity: "BucketListItem", identifiers: [rowID], ownership: .sharedWithMe))
        #expect(shared.sql == #"SELECT "id", "entity" FROM "app"."bucket_list_item" WHERE ("owner_id" IS DISTINCT FROM (SELECT "pgmodel"."current_user_id"()) AND "id" = ANY ((SELECT "app"."pgmodel_shared_ids"('BucketListItem', false, false))::uuid[])) AND "id" IN ($1) ORDER BY "id" ASC"#)
        #expect(shared.binds == [.uuid(rowID)])
    }

    @Test func countWithAndWithoutPaging() throws {
        let plain = try renderer.count(FetchRequest(entity: "BucketListItem"))
        #expect(plain.sql == #"SELECT count(*) FROM "app"."bucket_list_item""#)
        let paged = try renderer.count(FetchRequest(entity: "BucketListItem", limit: 3))
        #expect(paged.sql == #"SELECT count(*) FROM (SELECT 1 FROM "app"."bucket_list_item" ORDER BY "id" ASC LIMIT $1) AS page"#)
    }

    @Test func negativeLimitIsRejected() {
        #expect { try renderer.select(FetchRequest(entity: "BucketListItem", limit: -1)) }
            throws: { ($0 as? PGModelError)?.code == .invalidField }
    }

    @Test func unknownEntityAndAttributeAreTypedErrors() {
        #expect { try renderer.select(FetchRequest(entity: "Nope")) }
            throws: { ($0 as? PGModelError)?.code == .unknownEntity }
        #expect { try renderer.select(FetchRequest(entity: "BucketListItem", sort: [SortKey("nope")])) }
            throws: { ($0 as? PGModelError)?.code == .unknownAttribute && ($0 as? PGModelError)?.keyPath == "nope" }
    }

    var values: [String: PGValue] {
        ["title": .string("Paris"), "startDate": .date(Date(timeIntervalSince1970: 0)), "id": .string("x"), "cost": .int(12)]
    }

    @Test func insertOfEntityWithUniquenessIsOnConflictDoNothing() throws {
        let s = try renderer.insert(RowValues(entity: "BucketListItem", id: rowID, values: values), owner: owner)
        #expect(s.sql == #"INSERT INTO "app"."bucket_list_item" ("id", "entity", "owner_id", "title", "start_date", "notes", "attr_id", "cost") VALUES ($1, $2, $3, $4, $5, NULL, $6, $7) ON CONFLICT DO NOTHING RETURNING "id""#)
        #expect(s.binds == [.uuid(rowID), .string("BucketListItem"), .uuid(owner), .string("Paris"),
                            .date(Date(timeIntervalSince1970: 0)), .string("x"), .decimal(12)])
    }

    @Test func insertOfManyRowsIsOneUnnestOfArrayParameters() throws {
        let second = UUID(uuidString: "00000000-0000-7000-8000-0000000000bb")!
        var other = values
        other["notes"] = .string("n")
        let s = try #require(try renderer.insert([RowValues(entity: "BucketListItem", id: rowID, values: values),
                                                  RowValues(entity: "BucketListItem", id: second, values: other)], owners: [owner, nil]))
        // One class: its name is one value; two owners: an array of them.
        #expect(s.sql == #"INSERT INTO "app"."bucket_list_item" ("id", "entity", "owner_id", "title", "start_date", "notes", "attr_id", "cost") SELECT "v"."c1", $1::text, "v"."c2", "v"."c3", "v"."c4", "v"."c5", "v"."c6", "v"."c7" FROM unnest($2::uuid[], $3::uuid[], $4::text[], $5::timestamptz[], $6::text[], $7::text[], $8::numeric[]) WITH ORDINALITY AS "v"("c1", "c2", "c3", "c4", "c5", "c6", "c7", "n") ORDER BY "v"."n" ON CONFLICT DO NOTHING RETURNING "id""#)
        #expect(s.binds == [.string("BucketListItem")])
        #expect(s.arrays == [SQLArray(.uuid, [.uuid(rowID), .uuid(second)]),
                             SQLArray(.uuid, [.uuid(owner), .null]), SQLArray(.text, [.string("Paris"), .string("Paris")]),
                             SQLArray(.timestamptz, [.date(Date(timeIntervalSince1970: 0)), .date(Date(timeIntervalSince1970: 0))]),
                             SQLArray(.text, [.null, .string("n")]), SQLArray(.text, [.string("x"), .string("x")]),
                             SQLArray(.numeric, [.decimal(12), .decimal(12)])])
        #expect(s.description.hasSuffix("arrays: [uuid[2], uuid[2], text[2], timestamptz[2], text[2], text[2], numeric[2]]"))
        // A grantee's rows for another owner: no ordering, no ON CONFLICT, no RETURNING.
        let plain = try #require(try renderer.insert([RowValues(entity: "BucketListItem", id: rowID, values: values),
                                                      RowValues(entity: "BucketListItem", id: second, values: other)], owners: [owner, owner], upserting: false))
        #expect(plain.sql.hasSuffix(#"SELECT "v"."c1", $1::text, $2::uuid, "v"."c2", "v"."c3", "v"."c4", "v"."c5", "v"."c6" FROM unnest($3::uuid[], $4::text[], $5::timestamptz[], $6::text[], $7::text[], $8::numeric[]) AS "v"("c1", "c2", "c3", "c4", "c5", "c6")"#))
        #expect(plain.binds == [.string("BucketListItem"), .uuid(owner)])
        // Wrong values fail exactly as in a one-row insert.
        var wrong = values
        wrong["title"] = .int(3)
        #expect { try renderer.insert([RowValues(entity: "BucketListItem", id: rowID, values: values),
                                       RowValues(entity: "BucketListItem", id: second, values: wrong)], owners: [nil, nil]) }
            throws: { ($0 as? PGModelError)?.code == .typeMismatch && ($0 as? PGModelError)?.keyPath == "title" }
    }

    /// Rows built positionally (``RowKeys`` shared by a class's rows, as a context builds inserts) are
    /// checked and found once per keys: they insert, validate and fail exactly as rows by name.
    @Test func positionalRowsInsertValidateAndFailAsRowsByName() throws {
        let ids = (1...4).map { UUID(uuidString: "00000000-0000-7000-8000-00000000000\($0)")! }
        var other = values
        other["notes"] = .string("n")
        let keys = RowKeys(values.keys.sorted()), otherKeys = RowKeys(other.keys.sorted())
        func positional(_ id: UUID, _ v: [String: PGValue], _ k: RowKeys) -> RowValues {
            RowValues(entity: "BucketListItem", id: id, keys: k, values: k.names.map { v[$0] ?? .null })
        }
        let named = [RowValues(entity: "BucketListItem", id: ids[0], values: values), RowValues(entity: "BucketListItem", id: ids[1], values: other),
                     RowValues(entity: "BucketListItem", id: ids[2], values: values), RowValues(entity: "BucketListItem", id: ids[3], values: other)]
        let mixed = [positional(ids[0], values, keys), positional(ids[1], other, otherKeys), positional(ids[2], values, keys),
                     RowValues(entity: "BucketListItem", id: ids[3], values: other)]
        #expect(mixed[0].positionalValues != nil)
        let owners: [UUID?] = [owner, nil, owner, nil]
        #expect(try renderer.insert(mixed, owners: owners) == renderer.insert(named, owners: owners))
        let schema = SchemaDescription(entities: [Self.trip])
        #expect(throws: Never.self) { try SaveRequest(inserts: mixed).validate(against: schema) }

        func failure(_ body: () throws -> Void) -> String? {
            do { try body() } catch let error as PGModelError { return "\(error.code) \(error.keyPath ?? "") \(error.message)" } catch { return "\(error)" }
            return nil
        }
        // A wrong value, an unknown name, a missing non-optional value: the same error either way.
        var wrong = values
        wrong["title"] = .int(3)
        var unknown = values
        unknown["nope"] = .int(1)
        var missing = values
        missing["title"] = nil
        var null = values
        null["cost"] = .null
        for bad in [wrong, unknown, missing, null] {
            let badKeys = RowKeys(bad.keys.sorted())
            let byName = [named[0], RowValues(entity: "BucketListItem", id: ids[1], values: bad)]
            let byPosition = [mixed[0], positional(ids[1], bad, badKeys)]
            let renderFailure = failure { _ = try renderer.insert(byPosition, owners: [nil, nil]) }
            #expect(renderFailure != nil)
            #expect(renderFailure == failure { _ = try renderer.insert(byName, owners: [nil, nil]) })
            let validateFailure = failure { try SaveRequest(inserts: byPosition).validate(against: schema) }
            #expect(validateFailure == failure { try SaveRequest(inserts: byName).validate(against: schema) })
        }
    }

    @Test func insertOfManyRowsConvertsJSONAndArrayColumnsAndFillsOtherClassesColumnsWithNull() throws {
        let schema = SchemaDescription(entities: [
            EntityDescription(name: "Doc", attributes: [AttributeDescription(name: "body", type: .json, isOptional: true),
                                                        AttributeDescription(name: "tags", type: .stringArray, isOptional: true)]),
            EntityDescription(name: "Memo", attributes: [AttributeDescription(name: "body", type: .json, isOptional: true),
                                                         AttributeDescription(name: "tags", type: .stringArray, isOptional: true),
                                                         AttributeDescription(name: "level", type: .int16)], superentity: "Doc"),
        ])
        let renderer = try SQLRenderer(schema: schema, schemaName: "app")
        let a = UUID(uuidString: "00000000-0000-7000-8000-0000000000a1")!, b = UUID(uuidString: "00000000-0000-7000-8000-0000000000b2")!
        let s = try #require(try renderer.insert([RowValues(entity: "Doc", id: a, values: ["body": .string("{}"), "tags": .null]),
                                                  RowValues(entity: "Memo", id: b, values: ["tags": .string(#"["x"]"#), "level": .int(2)])], owners: [nil, nil]))
        // Two classes: an array of names; no owner: one NULL.
        #expect(s.sql == #"INSERT INTO "app"."doc" ("id", "entity", "owner_id", "body", "tags", "level") SELECT "v"."c1", "v"."c2", $1::uuid, "v"."c3"::jsonb, CASE WHEN "v"."c4" IS NULL THEN NULL ELSE ARRAY(SELECT e::text FROM jsonb_array_elements_text("v"."c4"::jsonb) AS e)::text[] END, "v"."c5" FROM unnest($2::uuid[], $3::text[], $4::text[], $5::text[], $6::int8[]) AS "v"("c1", "c2", "c3", "c4", "c5")"#)
        #expect(s.binds == [.null])
        // No uniqueness constraint: every row is inserted or the statement fails, so no ids come back.
        #expect(!renderer.insertReturnsIDs(of: ["Doc", "Memo"], upserting: true))
        #expect(s.arrays[1] == SQLArray(.text, [.string("Doc"), .string("Memo")]))
        #expect(s.arrays[2] == SQLArray(.text, [.string("{}"), .null]))
        #expect(s.arrays[4] == SQLArray(.int8, [.null, .int(2)]))
    }

    @Test func upsertUpdateMatchesOnlyGroupsWithoutNil() throws {
        let s = try #require(try renderer.upsertUpdate(RowValues(entity: "BucketListItem", id: rowID, values: values), owner: owner))
        // The (startDate, notes) group has a nil, and NULLs never conflict: only `title` can match. The
        // matched row comes back with what the upsert replaced in it, for history.
        #expect(s.sql == #"UPDATE "app"."bucket_list_item" SET "title" = $1, "start_date" = $2, "notes" = NULL, "attr_id" = $3, "cost" = $4 FROM (SELECT "id", "title", "start_date", "notes", "attr_id", "cost" FROM "app"."bucket_list_item" WHERE (("title" = $5)) AND "owner_id" = $6 ORDER BY "id" LIMIT 1 FOR UPDATE) AS "replaced" WHERE "app"."bucket_list_item"."id" = "replaced"."id" RETURNING "app"."bucket_list_item"."id", "replaced"."title", "replaced"."start_date", "replaced"."notes", "replaced"."attr_id", "replaced"."cost""#)
        #expect(try renderer.storedColumns(of: "BucketListItem").map(\.name) == ["title", "startDate", "notes", "id", "cost"])
    }

    @Test func updateWritesOnlyGivenColumns() throws {
        let s = try renderer.update(RowValues(entity: "BucketListItem", id: rowID, values: ["notes": .null, "cost": .double(1.5)]))
        #expect(s.sql == #"UPDATE "app"."bucket_list_item" SET "notes" = NULL, "cost" = $1 WHERE "id" = $2 RETURNING "id", "owner_id""#)
        #expect(s.binds == [.decimal(Decimal(1.5)), .uuid(rowID)])
    }

    @Test func updateReturningReplacedLocksTheRowAndReturnsWhatItOverwrites() throws {
        let row = RowValues(entity: "BucketListItem", id: rowID, values: ["notes": .null, "cost": .double(1.5)])
        let s = try renderer.updateReturningReplaced(row)
        #expect(s.sql == #"UPDATE "app"."bucket_list_item" SET "notes" = NULL, "cost" = $1 FROM (SELECT "id", "notes", "cost" FROM "app"."bucket_list_item" WHERE "id" = $2 FOR UPDATE) AS "replaced" WHERE "app"."bucket_list_item"."id" = "replaced"."id" RETURNING "app"."bucket_list_item"."id", "app"."bucket_list_item"."owner_id", "replaced"."notes", "replaced"."cost""#)
        #expect(s.binds == [.decimal(Decimal(1.5)), .uuid(rowID)])
        #expect(try renderer.replacedColumns(of: row).map(\.name) == ["notes", "cost"])
        // And the whole row as the update leaves it, after what it replaced.
        let whole = try renderer.updateReturningReplaced(row, returningStored: true)
        #expect(whole.sql == s.sql + #", "app"."bucket_list_item"."title", "app"."bucket_list_item"."start_date", "app"."bucket_list_item"."notes", "app"."bucket_list_item"."attr_id", "app"."bucket_list_item"."cost""#)
        #expect(whole.binds == s.binds)
    }

    @Test func deleteByID() throws {
        let s = try renderer.delete(RowReference(entity: "BucketListItem", id: rowID))
        #expect(s.sql == #"DELETE FROM "app"."bucket_list_item" WHERE "id" = $1 RETURNING "id""#)
    }

    @Test func writesRejectWrongTypesMissingValuesAndUnknownKeys() {
        func code(_ body: () throws -> Any) -> PGModelError.Code? {
            do { _ = try body(); return nil } catch { return (error as? PGModelError)?.code }
        }
        var wrong = values
        wrong["title"] = .int(3)
        #expect(code { try renderer.insert(RowValues(entity: "BucketListItem", id: rowID, values: wrong), owner: nil) } == .typeMismatch)
        var missing = values
        missing["title"] = nil
        #expect(code { try renderer.insert(RowValues(entity: "BucketListItem", id: rowID, values: missing), owner: nil) } == .missingField)
        var nilled = values
        nilled["title"] = .null
        #expect(code { try renderer.insert(RowValues(entity: "BucketListItem", id: rowID, values: nilled), owner: nil) } == .typeMismatch)
        var extra = values
        extra["owner_id"] = .null
        #expect(code { try renderer.insert(RowValues(entity: "BucketListItem", id: rowID, values: extra), owner: nil) } == .unknownAttribute)
    }

    @Test func errorDescriptionsNeverContainBoundValues() {
        var wrong = values
        wrong["title"] = .int(424242)
        do {
            _ = try renderer.insert(RowValues(entity: "BucketListItem", id: rowID, values: wrong), owner: nil)
            Issue.record("expected a type mismatch")
        } catch {
            #expect(!"\(error)".contains("424242"))
            #expect("\(error)".contains("BucketListItem.title"))
        }
        let statement = SQLStatement(sql: "SELECT $1", binds: [.string("secret")])
        #expect(!statement.description.contains("secret"))
    }

    @Test func ddlCreatesTableColumnsConstraintsIndexesAndComments() throws {
        let ddl = renderer.createStatements(for: Self.trip)
        #expect(ddl[0] == #"CREATE SCHEMA IF NOT EXISTS "app""#)
        #expect(ddl[1] == #"CREATE TABLE IF NOT EXISTS "app"."bucket_list_item" ("id" uuid PRIMARY KEY, "entity" text NOT NULL, "owner_id" uuid REFERENCES pgmodel.users ("id"))"#)
        #expect(ddl.contains(#"ALTER TABLE "app"."bucket_list_item" ADD COLUMN IF NOT EXISTS "start_date" timestamptz NOT NULL"#))
        #expect(ddl.contains(#"ALTER TABLE "app"."bucket_list_item" ADD COLUMN IF NOT EXISTS "notes" text"#))
        #expect(ddl.contains(#"ALTER TABLE "app"."bucket_list_item" ADD COLUMN IF NOT EXISTS "cost" numeric NOT NULL"#))
        #expect(ddl.contains { $0.contains(#"ADD CONSTRAINT "bucket_list_item_title_key" UNIQUE ("owner_id", "title")"#) })
        #expect(ddl.contains { $0.contains(#"ADD CONSTRAINT "bucket_list_item_start_date_notes_key" UNIQUE ("owner_id", "start_date", "notes")"#) })
        #expect(ddl.contains(#"CREATE INDEX IF NOT EXISTS "bucket_list_item_start_date_idx" ON "app"."bucket_list_item" ("start_date")"#))
        #expect(ddl.contains(#"COMMENT ON COLUMN "app"."bucket_list_item"."start_date" IS 'BucketListItem.startDate: date'"#))
        #expect(ddl.contains(#"COMMENT ON TABLE "app"."bucket_list_item" IS 'PGModel entity BucketListItem'"#))
    }

    @Test func longObjectNamesStayWithinPostgresLimit() throws {
        let long = String(repeating: "veryLongAttributeName", count: 3)
        let entity = EntityDescription(name: "E", attributes: [AttributeDescription(name: long, type: .int64)], indexes: [[long]])
        let r = try SQLRenderer(schema: SchemaDescription(entities: [entity]))
        let index = try #require(r.createStatements(for: entity).first { $0.hasPrefix("CREATE INDEX IF NOT EXISTS \"e_very") })
        let name = index.split(separator: "\"")[1]
        #expect(name.utf8.count <= 63)
    }

    @Test func schemaNameMustBeAnIdentifier() {
        #expect { try SQLRenderer(schema: SchemaDescription(entities: []), schemaName: "a\"; DROP") }
            throws: { ($0 as? PGModelError)?.code == .invalidConfiguration }
    }

    @Test func schemaValidationRejectsBadNames() {
        let bad = SchemaDescription(entities: [EntityDescription(name: "Trip; DROP", attributes: [])])
        #expect { try bad.validate() } throws: { ($0 as? PGModelError)?.code == .invalidSchema }
        let dup = SchemaDescription(entities: [EntityDescription(name: "T", attributes: [
            AttributeDescription(name: "a", type: .string), AttributeDescription(name: "a", type: .int64)])])
        #expect { try dup.validate() } throws: { ($0 as? PGModelError)?.code == .invalidSchema }
        let unknown = SchemaDescription(entities: [EntityDescription(name: "T", attributes: [], indexes: [["x"]])])
        #expect { try unknown.validate() } throws: { ($0 as? PGModelError)?.code == .invalidSchema }
    }

    /// A subclass's view named like its root's table failed in DDL as `database_error` (42809).
    @Test func twoClassesCannotShareATableName() {
        let clash = SchemaDescription(entities: [
            EntityDescription(name: "Trip", attributes: [AttributeDescription(name: "name", type: .string)]),
            EntityDescription(name: "BusinessTrip", tableName: "trip", attributes: [AttributeDescription(name: "perdiem", type: .double)],
                              superentity: "Trip"),
        ])
        #expect { try clash.validate() } throws: { error in
            guard let error = error as? PGModelError else { return false }
            return error.code == .invalidSchema && error.model == "BusinessTrip" && error.message.contains("'trip'")
        }
        let distinct = SchemaDescription(entities: [
            EntityDescription(name: "Trip", attributes: [AttributeDescription(name: "name", type: .string)]),
            EntityDescription(name: "BusinessTrip", attributes: [AttributeDescription(name: "perdiem", type: .double)], superentity: "Trip"),
        ])
        #expect(throws: Never.self) { try distinct.validate() }
    }
}
