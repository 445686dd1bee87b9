import Foundation
@_spi(PGModelInternals) import PGModelCore
@_spi(PGModelInternals) import PGModelSQL
import PGModelTestSupport
import Testing

/// Exact SQL for relationships and single-table inheritance: DDL, subclass filters, related fetches,
/// dotted keys, `is`, aggregates over the three storages, links and the delete-rule queries.
@Suite("SQL renderer: relationships and inheritance")
struct SQLRendererGraphTests {
    let r: SQLRenderer
    let owner = UUID(uuidString: "00000000-0000-7000-8000-000000000001")!
    let a = UUID(uuidString: "00000000-0000-7000-8000-0000000000aa")!
    var ids: PGValue { .string("{00000000-0000-7000-8000-0000000000aa}") }

    init() throws {
        try GraphTestSchema.schema.validate()
        r = try SQLRenderer(schema: GraphTestSchema.schema, schemaName: "app")
    }

    func sql(_ request: FetchRequest) throws -> SQLStatement { try r.select(request) }
    func count(_ entity: String, _ predicate: QueryExpression) throws -> SQLStatement {
        try r.count(FetchRequest(entity: entity, predicate: predicate))
    }

    // MARK: storage

    @Test func storageIsTheSameFromEveryClassOfAHierarchy() throws {
        let s = GraphTestSchema.schema
        for name in ["Trip", "BusinessTrip", "PersonalTrip"] {
            let e = try #require(s.entity(named: name))
            #expect(s.storage(of: e.relationship(named: "bucketList")!, in: e) == .inverseForeignKey(column: "trip_id"))
            #expect(s.storage(of: e.relationship(named: "livingAccommodation")!, in: e) == .inverseForeignKey(column: "trip_id"))
        }
        let user = try #require(s.entity(named: "User"))
        #expect(s.storage(of: user.relationship(named: "followers")!, in: user) == .joinTable(table: "user_followers", sourceColumn: "user_id", destinationColumn: "followers_id"))
        #expect(s.storage(of: user.relationship(named: "following")!, in: user) == .joinTable(table: "user_followers", sourceColumn: "followers_id", destinationColumn: "user_id"))
        #expect(Naming.shortened(String(repeating: "x", count: 80)).utf8.count == 63)
    }

    // MARK: DDL

    @Test func hierarchyTableHoldsEveryClassColumnWithChecks() {
        let ddl = r.createStatements()
        #expect(ddl.contains(#"ALTER TABLE "app"."trip" ADD COLUMN IF NOT EXISTS "name" text NOT NULL"#))
        #expect(ddl.contains(#"ALTER TABLE "app"."trip" ADD COLUMN IF NOT EXISTS "perdiem" double precision"#))
        #expect(ddl.contains(#"ALTER TABLE "app"."trip" ADD COLUMN IF NOT EXISTS "reason" text"#))
        #expect(ddl.contains(#"DO $pgmodel$ BEGIN IF NOT EXISTS (SELECT 1 FROM pg_constraint WHERE conname = 'trip_perdiem_check' AND conrelid = '"app"."trip"'::regclass) THEN ALTER TABLE "app"."trip" ADD CONSTRAINT "trip_perdiem_check" CHECK ("entity" NOT IN ('BusinessTrip') OR "perdiem" IS NOT NULL); END IF; END $pgmodel$"#))
        #expect(!ddl.contains { $0.contains("trip_reason_check") }, "optional subclass columns need no check")
        #expect(!ddl.contains { $0.contains(#"CREATE TABLE IF NOT EXISTS "app"."business_trip""#) })
        #expect(ddl.contains(#"COMMENT ON COLUMN "app"."trip"."perdiem" IS 'BusinessTrip.perdiem: double'"#))
    }

    @Test func foreignKeysAreDeferredSetNullAndIndexed() {
        let ddl = r.createStatements()
        #expect(ddl.contains(#"ALTER TABLE "app"."track" ADD COLUMN IF NOT EXISTS "album_id" uuid"#))
        #expect(ddl.contains(#"DO $pgmodel$ BEGIN IF NOT EXISTS (SELECT 1 FROM pg_constraint WHERE conname = 'track_album_id_fkey' AND conrelid = '"app"."track"'::regclass) THEN ALTER TABLE "app"."track" ADD CONSTRAINT "track_album_id_fkey" FOREIGN KEY ("album_id") REFERENCES "app"."album" ("id") ON DELETE SET NULL DEFERRABLE INITIALLY DEFERRED; END IF; END $pgmodel$"#))
        #expect(ddl.contains(#"CREATE INDEX IF NOT EXISTS "track_album_id_idx" ON "app"."track" ("album_id")"#))
        #expect(ddl.contains(#"COMMENT ON COLUMN "app"."track"."album_id" IS 'Track.album: Album? (inverse Album.tracks), deleteRule nullify'"#))
        // Every table exists before the first foreign key refers to one.
        let lastTable = ddl.lastIndex { $0.hasPrefix("CREATE TABLE IF NOT EXISTS \"app\".\"folder\"") }!
        let firstKey = ddl.firstIndex { $0.contains("FOREIGN KEY") }!
        #expect(lastTable < firstKey)
    }

    @Test func joinTablesOncePerPair() {
        let ddl = r.createStatements()
        #expect(ddl.filter { $0.hasPrefix(#"CREATE TABLE IF NOT EXISTS "app"."user_followers""#) } == [
            #"CREATE TABLE IF NOT EXISTS "app"."user_followers" ("user_id" uuid NOT NULL CONSTRAINT "user_followers_user_id_fkey" REFERENCES "app"."user" ("id") ON DELETE CASCADE, "followers_id" uuid NOT NULL CONSTRAINT "user_followers_followers_id_fkey" REFERENCES "app"."user" ("id") ON DELETE CASCADE, CONSTRAINT "user_followers_pkey" PRIMARY KEY ("user_id", "followers_id"))"#,
        ])
        #expect(ddl.contains(#"CREATE INDEX IF NOT EXISTS "user_followers_followers_id_idx" ON "app"."user_followers" ("followers_id")"#))
        #expect(ddl.contains(#"COMMENT ON TABLE "app"."user_followers" IS 'PGModel relationship User.followers (inverse User.following): user_id → followers_id'"#))
        #expect(ddl.contains(#"COMMENT ON TABLE "app"."playlist_tracks" IS 'PGModel relationship Playlist.tracks: playlist_id → tracks_id'"#))
    }

    @Test func oneViewPerSubclass() {
        let ddl = r.createStatements()
        #expect(ddl.contains(#"DO $pgmodel$ BEGIN CREATE OR REPLACE VIEW "app"."business_trip" WITH (security_invoker = true) AS SELECT "id", "entity", "owner_id", "name", "destination", "perdiem" FROM "app"."trip" WHERE "entity" IN ('BusinessTrip'); EXCEPTION WHEN invalid_table_definition THEN DROP VIEW "app"."business_trip"; CREATE VIEW "app"."business_trip" WITH (security_invoker = true) AS SELECT "id", "entity", "owner_id", "name", "destination", "perdiem" FROM "app"."trip" WHERE "entity" IN ('BusinessTrip'); END $pgmodel$"#))
        #expect(ddl.contains { $0.contains(#"VIEW "app"."personal_trip" WITH (security_invoker = true) AS SELECT "id", "entity", "owner_id", "name", "destination", "reason""#) })
        #expect(r.createStatements() == ddl, "deterministic")
    }

    // MARK: selects

    @Test func deepFetchReadsEveryClassColumnAndSubclassFetchFilters() throws {
        #expect(try sql(FetchRequest(entity: "Trip")).sql == #"SELECT "id", "entity", "name", "destination", "perdiem", "reason" FROM "app"."trip" ORDER BY "id" ASC"#)
        let business = try sql(FetchRequest(entity: "BusinessTrip", properties: ["perdiem"]))
        #expect(business.sql == #"SELECT "id", "entity", "perdiem" FROM "app"."trip" WHERE "entity" IN ($1) ORDER BY "id" ASC"#)
        #expect(business.binds == [.string("BusinessTrip")])
        let layout = try r.selectLayout(FetchRequest(entity: "Trip"))
        #expect(layout.fields(of: "BusinessTrip").map(\.name) == ["name", "destination", "perdiem"])
        #expect(layout.fields(of: "Trip").map(\.name) == ["name", "destination"])
        let track = try r.selectLayout(FetchRequest(entity: "Track"))
        #expect(track.fields(of: "Track").last == .init(name: "album", index: 4, type: .uuid, isRelationship: true))
    }

    @Test func relatedScopeForEachStorage() throws {
        let fk = try sql(FetchRequest(entity: "Album", related: RelatedScope(entity: "Track", relationship: "album", ids: [a])))
        #expect(fk.sql == #"SELECT "t0"."id", "t0"."entity", "t0"."title", "t0"."publisher_id", "t1"."id" FROM "app"."album" AS "t0" JOIN "app"."track" AS "t1" ON "t1"."album_id" = "t0"."id" WHERE "t1"."id" = ANY($1::uuid[]) ORDER BY "t0"."id" ASC, "t1"."id" ASC"#)
        #expect(fk.binds == [ids])
        let inverse = try sql(FetchRequest(entity: "Track", related: RelatedScope(entity: "Album", relationship: "tracks", ids: [a])))
        #expect(inverse.sql == #"SELECT "t0"."id", "t0"."entity", "t0"."title", "t0"."duration", "t0"."album_id", "t0"."album_id" FROM "app"."track" AS "t0" WHERE "t0"."album_id" = ANY($1::uuid[]) ORDER BY "t0"."id" ASC, "t0"."album_id" ASC"#)
        let join = try sql(FetchRequest(entity: "User", related: RelatedScope(entity: "User", relationship: "following", ids: [a])))
        #expect(join.sql == #"SELECT "t0"."id", "t0"."entity", "t0"."name", "t1"."followers_id" FROM "app"."user" AS "t0" JOIN "app"."user_followers" AS "t1" ON "t1"."user_id" = "t0"."id" WHERE "t1"."followers_id" = ANY($1::uuid[]) ORDER BY "t0"."id" ASC, "t1"."followers_id" ASC"#)
        #expect(try r.selectLayout(FetchRequest(entity: "User", related: RelatedScope(entity: "User", relationship: "following", ids: [a]))).viaIndex == 3)
    }

    @Test func dottedKeysJoinInPredicatesAndSorts() throws {
        let s = try sql(FetchRequest(entity: "Track", predicate: .compare(.equal, .key("album.title"), .value(.string("X"))), sort: [SortKey("album.publisher.name")]))
        #expect(s.sql == #"SELECT "t0"."id", "t0"."entity", "t0"."title", "t0"."duration", "t0"."album_id" FROM "app"."track" AS "t0" LEFT JOIN "app"."album" AS "t1" ON "t1"."id" = "t0"."album_id" LEFT JOIN "app"."publisher" AS "t2" ON "t2"."id" = "t1"."publisher_id" WHERE ("t1"."title" IS NOT DISTINCT FROM $1) ORDER BY "t2"."name" ASC NULLS FIRST, "t0"."id" ASC"#)
        // A keyset page through a to-one relationship compares the same joined column it orders by.
        let id = UUID(uuidString: "00000000-0000-7000-8000-0000000000aa")!
        let page = try sql(FetchRequest(entity: "Track", sort: [SortKey("album.title", ascending: false)], limit: 3,
                                        after: FetchCursor(values: [.string("X")], id: id)))
        #expect(page.sql == #"SELECT "t0"."id", "t0"."entity", "t0"."title", "t0"."duration", "t0"."album_id" FROM "app"."track" AS "t0" LEFT JOIN "app"."album" AS "t1" ON "t1"."id" = "t0"."album_id" WHERE ("t1"."title" < $2 OR "t1"."title" IS NULL OR ("t1"."title" = $2 AND "t0"."id" > $1)) ORDER BY "t1"."title" DESC NULLS LAST, "t0"."id" ASC LIMIT $3"#)
        #expect(s.binds == [.string("X")])
        let lateral = try r.selectIdentifiers(FetchRequest(entity: "BucketListItem", predicate: .compare(.equal, .key("trip.livingAccommodation.name"), .value(.string("X")))))
        #expect(lateral.sql == #"SELECT "t0"."id", "t0"."entity" FROM "app"."bucket_list_item" AS "t0" LEFT JOIN "app"."trip" AS "t1" ON "t1"."id" = "t0"."trip_id" LEFT JOIN LATERAL (SELECT * FROM "app"."living_accommodation" AS "t2" WHERE "t2"."trip_id" = "t1"."id" ORDER BY "t2"."id" LIMIT 1) AS "t2" ON TRUE WHERE ("t2"."name" IS NOT DISTINCT FROM $1) ORDER BY "t0"."id" ASC"#)
    }

    @Test func toManyInADottedKeyIsUnsupported() {
        #expect { try count("Album", .compare(.equal, .key("tracks.title"), .value(.string("x")))) }
            throws: { ($0 as? PGModelError)?.code == .unsupportedPredicate && ($0 as? PGModelError)?.keyPath == "tracks.title" }
        #expect { try r.select(FetchRequest(entity: "Album", sort: [SortKey("tracks.title")])) }
            throws: { ($0 as? PGModelError)?.code == .unsupportedSort }
        #expect { try count("Album", .compare(.equal, .key("publisher.nope"), .value(.string("x")))) }
            throws: { ($0 as? PGModelError)?.code == .unknownAttribute }
    }

    @Test func relationshipKeysCompareIDs() throws {
        let fk = try count("Track", .compare(.equal, .key("album"), .value(.uuid(a))))
        #expect(fk.sql == #"SELECT count(*) FROM "app"."track" AS "t0" WHERE ("t0"."album_id" IS NOT DISTINCT FROM $1)"#)
        let inverse = try count("Trip", .and([.compare(.equal, .key("livingAccommodation"), .value(.null)), .compare(.notEqual, .key("livingAccommodation"), .value(.null))]))
        #expect(inverse.sql == #"SELECT count(*) FROM "app"."trip" AS "t0" WHERE ((NOT EXISTS (SELECT 1 FROM "app"."living_accommodation" AS "t1" WHERE "t1"."trip_id" = "t0"."id")) AND EXISTS (SELECT 1 FROM "app"."living_accommodation" AS "t2" WHERE "t2"."trip_id" = "t0"."id"))"#)
    }

    @Test func isKindIsAnEntityList() throws {
        let s = try count("Trip", .isKind("PersonalTrip"))
        #expect(s.sql == #"SELECT count(*) FROM "app"."trip" WHERE "entity" IN ($1)"#)
        #expect(try count("Trip", .isKind("Trip")).binds == [.string("Trip"), .string("BusinessTrip"), .string("PersonalTrip")])
        #expect { try count("Trip", .isKind("Nope")) } throws: { ($0 as? PGModelError)?.code == .unknownEntity }
    }

    // MARK: aggregates

    let long: QueryExpression = .compare(.greater, .key("duration"), .value(.int(100)))

    @Test func aggregatesOverAnInverseForeignKey() throws {
        func agg(_ f: Aggregate.Function, _ value: QueryExpression? = nil) -> QueryExpression {
            .aggregate(Aggregate(f, relationship: "tracks", predicate: long, value: value))
        }
        let from = #"FROM "app"."track" AS "t1" WHERE "t1"."album_id" = "t0"."id" AND ("t1"."duration" > $1)"#
        #expect(try count("Album", .compare(.greater, agg(.count), .value(.int(1)))).sql == #"SELECT count(*) FROM "app"."album" AS "t0" WHERE ((SELECT count(*) "# + from + #") > $2)"#)
        #expect(try count("Album", agg(.any)).sql == #"SELECT count(*) FROM "app"."album" AS "t0" WHERE EXISTS (SELECT 1 "# + from + ")")
        #expect(try count("Album", agg(.all)).sql == #"SELECT count(*) FROM "app"."album" AS "t0" WHERE (NOT EXISTS (SELECT 1 FROM "app"."track" AS "t1" WHERE "t1"."album_id" = "t0"."id" AND (("t1"."duration" > $1)) IS NOT TRUE))"#)
        for (f, fold) in [(Aggregate.Function.min, #"min("t1"."duration")"#), (.max, #"max("t1"."duration")"#), (.sum, #"COALESCE(sum("t1"."duration"), 0)"#)] {
            #expect(try count("Album", .compare(.greater, agg(f, .key("duration")), .value(.int(1)))).sql
                    == #"SELECT count(*) FROM "app"."album" AS "t0" WHERE ((SELECT "# + fold + " " + from + #") > $2)"#)
        }
        #expect(try count("Album", .aggregate(Aggregate(.all, relationship: "tracks"))).sql == #"SELECT count(*) FROM "app"."album" AS "t0" WHERE TRUE"#)
        #expect { try count("Album", .aggregate(Aggregate(.sum, relationship: "tracks"))) } throws: { ($0 as? PGModelError)?.code == .unsupportedPredicate }
        #expect { try count("Track", .aggregate(Aggregate(.count, relationship: "album"))) } throws: { ($0 as? PGModelError)?.code == .unsupportedPredicate }
    }

    @Test func aggregatesOverAJoinTable() throws {
        let from = #"FROM "app"."playlist_tracks" AS "t2" JOIN "app"."track" AS "t1" ON "t1"."id" = "t2"."tracks_id" WHERE "t2"."playlist_id" = "t0"."id" AND ("t1"."duration" > $1)"#
        let count = try count("Playlist", .compare(.equal, .aggregate(Aggregate(.count, relationship: "tracks", predicate: long)), .value(.int(0))))
        #expect(count.sql == #"SELECT count(*) FROM "app"."playlist" AS "t0" WHERE ((SELECT count(*) "# + from + #") = $2)"#)
        #expect(count.binds == [.int(100), .int(0)])
        let all = try self.count("Playlist", .aggregate(Aggregate(.all, relationship: "tracks", predicate: long)))
        #expect(all.sql == #"SELECT count(*) FROM "app"."playlist" AS "t0" WHERE (NOT EXISTS (SELECT 1 FROM "app"."playlist_tracks" AS "t2" JOIN "app"."track" AS "t1" ON "t1"."id" = "t2"."tracks_id" WHERE "t2"."playlist_id" = "t0"."id" AND (("t1"."duration" > $1)) IS NOT TRUE))"#)
        let max = try self.count("Playlist", .compare(.less, .aggregate(Aggregate(.max, relationship: "tracks", predicate: long, value: .key("duration"))), .value(.int(9))))
        #expect(max.sql == #"SELECT count(*) FROM "app"."playlist" AS "t0" WHERE ((SELECT max("t1"."duration") "# + from + #") < $2)"#)
    }

    @Test func aggregatesOverAManyToManyAndThroughAToOne() throws {
        let any = try count("User", .aggregate(Aggregate(.any, relationship: "followers", predicate: .compare(.equal, .key("name"), .value(.string("x"))))))
        #expect(any.sql == #"SELECT count(*) FROM "app"."user" AS "t0" WHERE EXISTS (SELECT 1 FROM "app"."user_followers" AS "t2" JOIN "app"."user" AS "t1" ON "t1"."id" = "t2"."followers_id" WHERE "t2"."user_id" = "t0"."id" AND ("t1"."name" = $1))"#)
        let following = try count("User", .compare(.equal, .aggregate(Aggregate(.count, relationship: "following")), .value(.int(0))))
        #expect(following.sql == #"SELECT count(*) FROM "app"."user" AS "t0" WHERE ((SELECT count(*) FROM "app"."user_followers" AS "t2" JOIN "app"."user" AS "t1" ON "t1"."id" = "t2"."user_id" WHERE "t2"."followers_id" = "t0"."id") = $1)"#)
        let dotted = try count("Track", .compare(.greater, .aggregate(Aggregate(.count, relationship: "album.tracks")), .value(.int(3))))
        #expect(dotted.sql == #"SELECT count(*) FROM "app"."track" AS "t0" LEFT JOIN "app"."album" AS "t1" ON "t1"."id" = "t0"."album_id" WHERE ((SELECT count(*) FROM "app"."track" AS "t2" WHERE "t2"."album_id" = "t1"."id") > $1)"#)
    }

    // MARK: writes

    @Test func writesMapForeignKeys() throws {
        let insert = try r.insert(RowValues(entity: "Track", id: a, values: ["title": .string("t"), "duration": .int(3), "album": .uuid(owner)]), owner: nil)
        #expect(insert.sql == #"INSERT INTO "app"."track" ("id", "entity", "owner_id", "title", "duration", "album_id") VALUES ($1, $2, NULL, $3, $4, $5) RETURNING "id""#)
        let subclass = try r.insert(RowValues(entity: "BusinessTrip", id: a, values: ["name": .string("t"), "destination": .string("d"), "perdiem": .double(3)]), owner: nil)
        #expect(subclass.sql == #"INSERT INTO "app"."trip" ("id", "entity", "owner_id", "name", "destination", "perdiem") VALUES ($1, $2, NULL, $3, $4, $5) ON CONFLICT DO NOTHING RETURNING "id""#)
        #expect(subclass.binds[1] == .string("BusinessTrip"))
        #expect(try r.update(RowValues(entity: "Track", id: a, values: ["album": .null])).sql == #"UPDATE "app"."track" SET "album_id" = NULL WHERE "id" = $1 RETURNING "id", "owner_id""#)
        #expect { try r.update(RowValues(entity: "Album", id: a, values: ["tracks": .null])) } throws: { ($0 as? PGModelError)?.code == .invalidField }
        #expect { try r.update(RowValues(entity: "Track", id: a, values: ["album": .int(1)])) } throws: { ($0 as? PGModelError)?.code == .typeMismatch }
    }

    @Test func setBasedUpdatesReturnWhatTheyReplacedAndTheWholeRow() throws {
        let rows = [RowValues(entity: "Track", id: a, values: ["title": .string("t"), "album": .null]),
                    RowValues(entity: "Track", id: owner, values: ["title": .string("u")])]
        let plain = try r.update(rows)
        #expect(plain.sql == #"UPDATE "app"."track" AS "t" SET "title" = "v"."c1", "album_id" = CASE WHEN "v"."m2" THEN "v"."c2" ELSE "t"."album_id" END FROM unnest($1::uuid[], $2::text[], $3::uuid[], $4::bool[]) AS "v"("id", "c1", "c2", "m2") WHERE "t"."id" = "v"."id" RETURNING "t"."id", "t"."owner_id""#)
        let replaced = try r.update(rows, returningReplaced: true)
        #expect(replaced.sql == #"UPDATE "app"."track" AS "t" SET "title" = "v"."c1", "album_id" = CASE WHEN "v"."m2" THEN "v"."c2" ELSE "t"."album_id" END FROM unnest($1::uuid[], $2::text[], $3::uuid[], $4::bool[]) AS "v"("id", "c1", "c2", "m2"), (SELECT "id", "title", "album_id" FROM "app"."track" WHERE "id" = ANY($1::uuid[]) FOR UPDATE) AS "replaced" WHERE "t"."id" = "v"."id" AND "t"."id" = "replaced"."id" RETURNING "t"."id", "t"."owner_id", "replaced"."title", "replaced"."album_id""#)
        // The whole row after what it replaced: every attribute, then the foreign keys.
        let whole = try r.update(rows, returningReplaced: true, returningStored: true)
        #expect(whole.sql == replaced.sql + #", "t"."title", "t"."duration", "t"."album_id""#)
        #expect(try r.storedColumns(of: "Track").map(\.name) == ["title", "duration", "album"])
        #expect(try r.storedColumns(of: "Track").map(\.type) == [.string, .int64, .uuid])
        let one = try r.updateReturningReplaced(rows[1], returningStored: true)
        #expect(one.sql == #"UPDATE "app"."track" SET "title" = $1 FROM (SELECT "id", "title" FROM "app"."track" WHERE "id" = $2 FOR UPDATE) AS "replaced" WHERE "app"."track"."id" = "replaced"."id" RETURNING "app"."track"."id", "app"."track"."owner_id", "replaced"."title", "app"."track"."title", "app"."track"."duration", "app"."track"."album_id""#)
    }

    @Test func aNullifyReadsTheReferencesAndWhatTheyPointAt() throws {
        let statements = try r.referencingRows(to: "Album", ids: [a])
        #expect(statements.map(\.relationship) == ["album"])
        #expect(statements.first?.statement.sql == #"SELECT "id", "entity", "owner_id", "target" FROM "pgmodel"."nullified_reference_targets"($1::text::regclass, $2::text, $3::uuid[], $4::text::regclass, $5)"#)
    }

    @Test func linksNormalizeToTheJoinTable() throws {
        let following = try r.link(LinkChange(entity: "User", relationship: "following", source: a, destination: owner, isAdded: true))
        #expect(following.sql == #"INSERT INTO "app"."user_followers" ("followers_id", "user_id") VALUES ($1, $2) ON CONFLICT DO NOTHING RETURNING 1"#)
        #expect(following.binds == [.uuid(a), .uuid(owner)])
        let followers = try r.link(LinkChange(entity: "User", relationship: "followers", source: a, destination: owner, isAdded: true))
        #expect(followers.sql == #"INSERT INTO "app"."user_followers" ("user_id", "followers_id") VALUES ($1, $2) ON CONFLICT DO NOTHING RETURNING 1"#)
        let remove = try r.link(LinkChange(entity: "Playlist", relationship: "tracks", source: a, destination: owner, isAdded: false))
        #expect(remove.sql == #"DELETE FROM "app"."playlist_tracks" WHERE "playlist_id" = $1 AND "tracks_id" = $2 RETURNING 1"#)
        #expect { try r.link(LinkChange(entity: "Album", relationship: "tracks", source: a, destination: owner, isAdded: true)) }
            throws: { ($0 as? PGModelError)?.code == .invalidField }
    }

    // MARK: delete rules

    @Test func deleteRuleQueries() throws {
        #expect(try r.lockRows(of: "Album", ids: [a]).sql == #"SELECT "id", "entity" FROM "app"."album" WHERE "id" IN (SELECT unnest($1::uuid[])) ORDER BY "id" FOR UPDATE"#)
        let batch = try r.selectForDelete(FetchRequest(entity: "Track", predicate: .compare(.equal, .key("album.title"), .value(.string("X")))))
        #expect(batch.sql == #"SELECT "t0"."id", "t0"."entity" FROM "app"."track" AS "t0" LEFT JOIN "app"."album" AS "t1" ON "t1"."id" = "t0"."album_id" WHERE ("t1"."title" IS NOT DISTINCT FROM $1) ORDER BY "t0"."id" ASC FOR UPDATE OF "t0""#)
        #expect(try r.selectForDelete(FetchRequest(entity: "BusinessTrip")).sql == #"SELECT "id", "entity" FROM "app"."trip" WHERE "entity" IN ($1) ORDER BY "id" ASC FOR UPDATE"#)
        #expect(try r.relatedRows("album", of: "Track", ids: [a]).sql == #"SELECT "d"."id", "d"."entity" FROM "app"."album" AS "d" WHERE "d"."id" IN (SELECT "s"."album_id" FROM "app"."track" AS "s" WHERE "s"."id" IN (SELECT unnest($1::uuid[]))) ORDER BY "d"."id""#)
        let inverse = try r.relatedRows("tracks", of: "Album", ids: [a])
        #expect(inverse.sql == #"SELECT "d"."id", "d"."entity" FROM "app"."track" AS "d" WHERE "d"."album_id" IN (SELECT unnest($1::uuid[])) ORDER BY "d"."id""#)
        #expect(inverse.binds == [ids])
        #expect(try r.relatedRows("following", of: "User", ids: [a]).sql == #"SELECT "d"."id", "d"."entity" FROM "app"."user" AS "d" WHERE "d"."id" IN (SELECT "j"."user_id" FROM "app"."user_followers" AS "j" WHERE "j"."followers_id" IN (SELECT unnest($1::uuid[]))) ORDER BY "d"."id""#)
        let deny = try r.countRelated("albums", of: "Publisher", ids: [a], excluding: [a, owner])
        #expect(deny.sql == #"SELECT count(*) FROM "app"."album" AS "d" WHERE "d"."publisher_id" IN (SELECT unnest($1::uuid[])) AND "d"."id" NOT IN (SELECT unnest($2::uuid[]))"#)
        #expect(deny.binds == [ids, .string("{00000000-0000-7000-8000-0000000000aa,00000000-0000-7000-8000-000000000001}")])
        #expect(try r.deleteRows(of: "BusinessTrip", ids: [a]).sql == #"DELETE FROM "app"."trip" WHERE "id" IN (SELECT unnest($1::uuid[])) RETURNING "id", "entity", "owner_id""#)
    }
}
