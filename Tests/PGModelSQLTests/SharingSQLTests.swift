import Foundation
@_spi(PGModelInternals) import PGModelCore
@_spi(PGModelInternals) @testable import PGModelSQL
import PGModelTestSupport
import Testing

/// The row-level security DDL, the share closure's edges, and the schema helpers sharing relies on:
/// exact SQL, no database.
@Suite("SQL renderer: row-level security and sharing")
struct SharingSQLTests {
    let r: SQLRenderer
    let schema = GraphTestSchema.schema

    init() throws {
        try GraphTestSchema.schema.validate()
        r = try SQLRenderer(schema: GraphTestSchema.schema, schemaName: "app")
    }

    @Test("every .cascade edge is in the links view, whatever its storage, and nothing else is")
    func cascadeEdges() {
        let sql = r.cascadeLinksSelect()
        let parts = sql.components(separatedBy: " UNION ALL ")
        #expect(parts.count == 4)
        // One-to-one, key on the child: Trip.livingAccommodation.
        // Each edge names both sides' root classes: ids may repeat across hierarchies.
        #expect(parts.contains(#"SELECT "c"."trip_id" AS "parent_id", "c"."id" AS "child_id", "c"."owner_id" AS "child_owner", "c"."entity" AS "child_entity", 'Trip'::text AS "parent_root", 'LivingAccommodation'::text AS "child_root" FROM "app"."living_accommodation" AS "c" WHERE "c"."trip_id" IS NOT NULL"#))
        // To-many with an inverse: Album.tracks, Folder.children.
        #expect(parts.contains { $0.contains(#"FROM "app"."track" AS "c" WHERE "c"."album_id" IS NOT NULL"#) })
        #expect(parts.contains { $0.contains(#"FROM "app"."folder" AS "c" WHERE "c"."parent_id" IS NOT NULL"#) })
        // To-one without inverse, key on the parent: Folder.shortcut.
        #expect(parts.contains(#"SELECT "p"."id" AS "parent_id", "c"."id" AS "child_id", "c"."owner_id" AS "child_owner", "c"."entity" AS "child_entity", 'Folder'::text AS "parent_root", 'Folder'::text AS "child_root" FROM "app"."folder" AS "p" JOIN "app"."folder" AS "c" ON "c"."id" = "p"."shortcut_id""#))
        // .nullify and .deny relationships share nothing.
        #expect(!sql.contains("bucket_list_item") && !sql.contains("publisher") && !sql.contains("playlist"))
        let empty = try? SQLRenderer(schema: SchemaDescription(entities: [EntityDescription(name: "Note", attributes: [AttributeDescription(name: "x", type: .string)])]), schemaName: "app")
        #expect(empty?.cascadeLinksSelect().hasSuffix("WHERE false") == true)
    }

    @Test("model tables: forced row-level security, owner/share policies and the admin role's, no update of id, entity or owner_id")
    func modelTablePolicies() {
        let ddl = r.securityStatements()
        let album = ddl.filter { $0.contains(#""app"."album""#) }
        #expect(album.contains { $0.contains(#"ALTER TABLE "app"."album" ENABLE ROW LEVEL SECURITY; ALTER TABLE "app"."album" FORCE ROW LEVEL SECURITY"#) })
        #expect(album.contains { $0.contains(#"CREATE POLICY "pgmodel_owner" ON "app"."album" TO CURRENT_USER USING (true) WITH CHECK (true)"#) })
        let select = #"CREATE POLICY "pgmodel_app_select" ON "app"."album" FOR SELECT TO pgmodel_app USING ((SELECT current_user = 'pgmodel_app') AND ("owner_id" = (SELECT "pgmodel"."current_user_id"()) OR "id" = ANY ((SELECT "app"."pgmodel_shared_ids"('Album', false, false))::uuid[])))"#
        #expect(album.contains { $0.contains(select) })
        #expect(album.contains { $0.contains(#"FOR UPDATE TO pgmodel_app USING ((SELECT current_user = 'pgmodel_app') AND ("owner_id" = (SELECT "pgmodel"."current_user_id"()) OR "id" = ANY ((SELECT "app"."pgmodel_shared_ids"('Album', true, false))::uuid[])))"#) })
        // An admin's requests run as pgmodel_admin: a user's policy has no admin arm to defeat its indexes.
        #expect(!album.contains { $0.contains("pgmodel_app_") && $0.contains("current_user_is_admin") })
        #expect(album.contains { $0.contains(#"CREATE POLICY "pgmodel_admin_all" ON "app"."album" TO pgmodel_admin USING ((SELECT current_user = 'pgmodel_admin') AND (SELECT "pgmodel"."current_user_is_admin"())) WITH CHECK ((SELECT current_user = 'pgmodel_admin') AND (SELECT "pgmodel"."current_user_is_admin"()))"#) })
        // A policy carries the fingerprint of its definition; another definition replaces it.
        #expect(album.contains { $0.contains(#"DROP POLICY IF EXISTS "pgmodel_app_select" ON "app"."album"; CREATE POLICY"#) && $0.contains("COMMENT ON POLICY") })
        // Only the owner (or an admin, through its own policy) deletes a shared root: grantees delete what it owns.
        #expect(album.contains { $0.contains(#"FOR DELETE TO pgmodel_app USING ((SELECT current_user = 'pgmodel_app') AND ("owner_id" = (SELECT "pgmodel"."current_user_id"()) OR "id" = ANY ((SELECT "app"."pgmodel_shared_ids"('Album', true, true))::uuid[])))"#) })
        #expect(album.contains { $0.contains(#""owner_id" = ANY ((SELECT "pgmodel"."read_write_sharers"('app'))::uuid[])"#) })
        #expect(album.contains { $0.contains(#"GRANT UPDATE ("title", "publisher_id") ON "app"."album" TO pgmodel_app"#) })
        #expect(!ddl.contains { $0.contains("GRANT UPDATE") && ($0.contains(#""owner_id")"#) || $0.contains(#"("id""#) || $0.contains(#""entity""#)) })
        // References are judged as the statement runs and checked at commit, for service users only; the
        // triggers know the hierarchy's root class and unique columns.
        let track = ddl.filter { $0.contains(#""app"."track""#) }
        #expect(track.contains { $0.contains(#"DEFERRABLE INITIALLY DEFERRED FOR EACH ROW WHEN (current_user = 'pgmodel_app') EXECUTE FUNCTION "pgmodel"."check_row"('v3', 'Track', '', 'album_id', '"app"."album"', 'Album')"#) })
        #expect(track.contains { $0.contains(#"BEFORE INSERT OR UPDATE ON "app"."track" FOR EACH ROW WHEN (current_user = 'pgmodel_app' AND NEW."owner_id" IS DISTINCT FROM "pgmodel"."current_user_id"()) EXECUTE FUNCTION "pgmodel"."check_references"('v3', 'Track', '', 'album_id', '"app"."album"', 'Album')"#) })
        #expect(track.contains { $0.contains(#"REFERENCING OLD TABLE AS "pgmodel_deleted_rows" FOR EACH STATEMENT EXECUTE FUNCTION "pgmodel"."forget_shares"('Track')"#) })
        #expect(track.contains { $0.contains(#"REFERENCING NEW TABLE AS "pgmodel_inserted_rows" FOR EACH STATEMENT EXECUTE FUNCTION "pgmodel"."note_new_rows"()"#) })
        // Every table of the schema, hierarchy roots only.
        for table in ["trip", "living_accommodation", "bucket_list_item", "publisher", "album", "track", "playlist", "user", "folder"] {
            #expect(ddl.contains { $0.contains(#"ALTER TABLE "app"."\#(table)" FORCE ROW LEVEL SECURITY"#) }, "\(table)")
        }
        #expect(!ddl.contains { $0.contains(#""app"."business_trip""#) })
    }

    @Test("a registration secures its own tables; the store-wide view and functions cover every entity")
    func registrationSecuresItsTables() {
        let ddl = r.securityStatements(tablesOf: ["Album"])
        #expect(ddl.contains { $0.contains(#"ALTER TABLE "app"."album" FORCE ROW LEVEL SECURITY"#) })
        #expect(!ddl.contains { $0.contains(#"ALTER TABLE "app"."trip" FORCE ROW LEVEL SECURITY"#) })
        // The cascade view is the store's: another app's cascades stay in it.
        let view = ddl.first { $0.contains("CREATE OR REPLACE VIEW") } ?? ""
        #expect(view.contains(#""app"."living_accommodation""#) && view.contains(#""app"."track""#))
        #expect(r.securedTableNames(of: ["Album"]) == [#""app"."album""#])
        #expect(r.securedTableNames(of: ["Playlist"]).contains(#""app"."playlist_tracks""#))
        #expect(ddl.contains { $0.contains("COMMENT ON FUNCTION") && $0.contains(r.securityMarker) })
    }

    @Test("join tables: both ends visible to read; to write, one end writable (or just inserted)")
    func joinTablePolicies() {
        let ddl = r.securityStatements()
        for table in ["playlist_tracks", "user_followers"] {
            #expect(ddl.contains { $0.contains(#"ALTER TABLE "app"."\#(table)" FORCE ROW LEVEL SECURITY"#) }, "\(table)")
        }
        let select = ddl.first { $0.contains(#"CREATE POLICY "pgmodel_app_select" ON "app"."playlist_tracks""#) } ?? ""
        #expect(select.contains(#"EXISTS (SELECT 1 FROM "app"."playlist" AS "r" WHERE "r"."id" = "playlist_tracks"."playlist_id")"#))
        #expect(select.contains(#"EXISTS (SELECT 1 FROM "app"."track" AS "r" WHERE "r"."id" = "playlist_tracks"."tracks_id")"#))
        let insert = ddl.first { $0.contains(#"CREATE POLICY "pgmodel_app_insert" ON "app"."playlist_tracks""#) } ?? ""
        #expect(insert.contains(#""pgmodel"."is_new_row"('"app"."track"'::regclass, "playlist_tracks"."tracks_id")"#))
        #expect(insert.contains(#"("w"."owner_id" = (SELECT "pgmodel"."current_user_id"()) OR "w"."id" = ANY ((SELECT "app"."pgmodel_shared_ids"('Track', true, false))::uuid[]))"#))
    }

    @Test("a .cascade join table: making a link needs write access to both ends, removing one to the parent")
    func cascadeJoinTablePolicies() throws {
        let schema = SchemaDescription(entities: [
            EntityDescription(name: "Crate", attributes: [AttributeDescription(name: "label", type: .string)],
                              relationships: [RelationshipDescription(name: "items", destination: "Item", isToMany: true, deleteRule: .cascade)]),
            EntityDescription(name: "Item", attributes: [AttributeDescription(name: "name", type: .string)]),
        ])
        try schema.validate()
        let ddl = try SQLRenderer(schema: schema, schemaName: "app").securityStatements()
        func writable(_ root: String, _ table: String, _ column: String) -> String {
            #"EXISTS (SELECT 1 FROM "app"."\#(table)" AS "w" WHERE "w"."id" = "crate_items"."\#(column)" AND ("w"."owner_id" = (SELECT "pgmodel"."current_user_id"()) OR "w"."id" = ANY ((SELECT "app"."pgmodel_shared_ids"('\#(root)', true, false))::uuid[])))"#
        }
        func new(_ table: String, _ column: String) -> String {
            #""pgmodel"."is_new_row"('"app"."\#(table)"'::regclass, "crate_items"."\#(column)")"#
        }
        let insert = ddl.first { $0.contains(#"CREATE POLICY "pgmodel_app_insert" ON "app"."crate_items""#) } ?? ""
        #expect(insert.contains(" AND (\(writable("Crate", "crate", "crate_id")) OR \(new("crate", "crate_id"))) AND (\(writable("Item", "item", "items_id")) OR \(new("item", "items_id")))"), "\(insert)")
        let delete = ddl.first { $0.contains(#"CREATE POLICY "pgmodel_app_delete" ON "app"."crate_items""#) } ?? ""
        #expect(delete.contains(" AND \(writable("Crate", "crate", "crate_id"))"), "\(delete)")
        // The plain many-to-many keeps "one end writable".
        let plain = r.securityStatements().first { $0.contains(#"CREATE POLICY "pgmodel_app_delete" ON "app"."playlist_tracks""#) } ?? ""
        #expect(!plain.contains("true)))) AND EXISTS"), "\(plain)")
    }

    @Test("every security statement checks the catalog first, so re-registering takes no table lock")
    func idempotentWithoutLocks() {
        for statement in r.securityStatements() {
            #expect(statement.hasPrefix("DO $pgmodel$"), "\(statement.prefix(80))")
            #expect(statement.contains("IF NOT"), "\(statement.prefix(80))")
        }
        #expect(SQLRenderer.fingerprint("a") != SQLRenderer.fingerprint("b"))
        #expect(SQLRenderer.fingerprint(r.cascadeLinksSelect()) == SQLRenderer.fingerprint(r.cascadeLinksSelect()))
    }

    @Test("uniqueness is per owner: a constraint with owner_id, and a partial index for the direct store's rows")
    func uniquenessPerOwner() {
        let ddl = r.createStatements()
        #expect(ddl.contains { $0.contains(#"ADD CONSTRAINT "trip_name_key" UNIQUE ("owner_id", "name")"#) })
        #expect(ddl.contains(#"CREATE UNIQUE INDEX IF NOT EXISTS "trip_name_unowned_key" ON "app"."trip" ("name") WHERE "owner_id" IS NULL"#))
        // An older constraint without owner_id is replaced.
        #expect(ddl.contains { $0.contains(#"ALTER TABLE "app"."trip" DROP CONSTRAINT "trip_name_key""#) && $0.contains("attname = 'owner_id'") })
    }

    @Test("the parent a save inserts each child under, however the save says it")
    func cascadeParents() {
        let album = UUID(), track = UUID(), folder = UUID(), shortcut = UUID(), child = UUID(), trip = UUID(), stay = UUID(), item = UUID()
        let save = SaveRequest(
            inserts: [
                RowValues(entity: "Track", id: track, values: ["title": .string("t"), "duration": .int(1), "album": .uuid(album)]),
                RowValues(entity: "Folder", id: shortcut, values: ["name": .string("s")]),
                RowValues(entity: "Folder", id: child, values: ["name": .string("c"), "parent": .string(folder.uuidString)]),
                RowValues(entity: "LivingAccommodation", id: stay, values: ["name": .string("n"), "address": .string("a"), "trip": .uuid(trip)]),
                RowValues(entity: "BucketListItem", id: item, values: ["title": .string("b"), "isInPlan": .bool(true), "trip": .uuid(trip)]),
            ],
            updates: [RowValues(entity: "Folder", id: folder, values: ["shortcut": .uuid(shortcut)])])
        let parents = schema.cascadeParents(in: save)
        #expect(parents[schema.rowKey("Track", track)] == RowReference(entity: "Album", id: album))
        #expect(parents[schema.rowKey("Folder", child)] == RowReference(entity: "Folder", id: folder))
        #expect(parents[schema.rowKey("Folder", shortcut)] == RowReference(entity: "Folder", id: folder))
        #expect(parents[schema.rowKey("LivingAccommodation", stay)] == RowReference(entity: "Trip", id: trip))
        #expect(parents[schema.rowKey("BucketListItem", item)] == nil)   // Trip.bucketList is .nullify: the item is not owned
        #expect(schema.cascadeParents(in: SaveRequest(updates: save.updates)).isEmpty)
    }

    @Test("a child with its parent's id is still that parent's child, and no other row is taken for it")
    func cascadeParentsWithRepeatedIDs() {
        let shared = UUID()
        // A track with the id of the album it goes into: keyed by class hierarchy, they stay two rows.
        let save = SaveRequest(inserts: [RowValues(entity: "Track", id: shared, values: ["title": .string("t"), "duration": .int(1), "album": .uuid(shared)])])
        let parents = schema.cascadeParents(in: save)
        #expect(parents[schema.rowKey("Track", shared)] == RowReference(entity: "Album", id: shared))
        #expect(parents[schema.rowKey("Album", shared)] == nil)
        #expect(parents.count == 1)
    }

    @Test("the classes a share of a record may reach")
    func entitiesOwned() {
        #expect(schema.entitiesOwned(by: ["Album"]).sorted() == ["Album", "Track"])
        #expect(Set(schema.entitiesOwned(by: ["Trip"])) == ["Trip", "BusinessTrip", "PersonalTrip", "LivingAccommodation"])
        #expect(schema.entitiesOwned(by: ["Folder"]) == ["Folder"])
        #expect(schema.entitiesOwned(by: ["Nope"]).isEmpty)
    }

    @Test("a user's registration: the first difference from what is registered, in words without values")
    func firstDifference() {
        #expect(schema.firstDifference(registering: schema) == nil)
        #expect(schema.firstDifference(registering: SchemaDescription(entities: [schema.entities[0]])) == nil)
        var retyped = schema
        retyped.entities[4].attributes[1].type = .string
        #expect(schema.firstDifference(registering: retyped)?.description == "BucketListItem.cost is registered as double, not string")
        var rule = schema
        if let i = rule.entities.firstIndex(where: { $0.name == "Album" }) { rule.entities[i].relationships[0].deleteRule = .nullify }
        #expect(schema.firstDifference(registering: rule)?.description == "Album.tracks is registered with deleteRule .cascade, not .nullify")
        let new = SchemaDescription(entities: [EntityDescription(name: "Sneaky", attributes: [])])
        #expect(schema.firstDifference(registering: new)?.description == "Sneaky is not registered")
        var renamed = schema
        renamed.entities[4].tableName = "elsewhere"
        #expect(schema.firstDifference(registering: renamed)?.entity == "BucketListItem")
        var fewer = schema
        fewer.entities[4].attributes.removeLast()
        #expect(schema.firstDifference(registering: fewer)?.description == "BucketListItem.isInPlan is registered but not in this schema")
    }

    @Test("share SQL: every value bound, placeholders numbered by what the listing filters on")
    func shareStatements() {
        let sql = ShareSQL(schemaName: "app")
        let record = RowReference(entity: "Trip", id: UUID(uuidString: "00000000-0000-7000-8000-0000000000aa")!)
        #expect(sql.list(record: nil, user: "bob").sql.hasSuffix(#"WHERE s."schema_name" = $1 AND s."grantee" = $2 ORDER BY s."entity", s."row_id", s."grantee""#))
        #expect(sql.list(record: record, user: "bob").binds == [.string("app"), .string("Trip"), .uuid(record.id), .string("bob")])
        #expect(sql.list(record: nil, user: nil).binds == [.string("app")])
        let grant = sql.grant(record: record, root: "Trip", concrete: "BusinessTrip", owner: nil, grantee: record.id, permission: .readWrite, grantedBy: nil)
        #expect(grant.binds == [.string("app"), .string("Trip"), .string("BusinessTrip"), .uuid(record.id), .null, .uuid(record.id), .string("readWrite"), .null])
        #expect(grant.sql.contains(#"ON CONFLICT ("schema_name", "root_entity", "row_id", "grantee_id")"#))
        #expect(sql.userID(named: "x'; --").binds == [.string("x'; --")])
        #expect(sql.revoke(record: record, root: "Trip", grantee: record.id).sql.hasSuffix("RETURNING 1"))
    }
}
