import Foundation
import Logging
import NIOPosix
@_spi(PGModelInternals) @testable import PGModelClient
@_spi(PGModelInternals) import PGModelCore
@_spi(PGModelInternals) @testable import PGModelIO
@_spi(PGModelInternals) @testable import PGModelPostgres
import PostgresNIO
import PGModelTestSupport
import Testing

/// Relationships and single-table inheritance against a real PostgreSQL, through `PostgresStoreEngine`
/// directly with a hand-written schema (``GraphTestSchema``). Each test gets a PostgreSQL schema of its own.
@Suite("Engine graph")
struct EngineGraphTests: EngineTestSuite {
    static let storePrefix = "g"
    let schema = GraphTestSchema.schema
    static let long: QueryExpression = .compare(.greater, .key("duration"), .value(.int(150)))

    func strings(_ c: EngineConnection, _ sql: String) async throws -> [String] {
        var result: [String] = []
        do {
            for try await row in try await c.connection.query(PostgresQuery(unsafeSQL: sql), logger: Logger(label: "q")) {
                result.append(try row.decode(String.self))
            }
        } catch {
            Issue.record("\(String(reflecting: error)) in \(sql)")
            throw error
        }
        return result
    }

    func row(_ entity: String, _ id: UUID, _ values: [String: PGValue]) -> RowValues {
        RowValues(entity: entity, id: id, values: values)
    }

    func row(_ entity: String, _ values: [String: PGValue]) -> RowValues {
        RowValues(entity: entity, id: .v7(), values: values)
    }

    // MARK: DDL

    @Test func ddlCreatesHierarchyTableForeignKeysJoinTablesViewsAndChecks() async throws {
        try await withStore { engine, c, s in
            let columns = try await strings(c, """
                SELECT column_name || ':' || is_nullable FROM information_schema.columns
                WHERE table_schema = '\(s)' AND table_name = 'trip' ORDER BY column_name
                """)
            #expect(columns == ["destination:NO", "entity:NO", "id:NO", "name:NO", "owner_id:YES", "perdiem:YES", "reason:YES"])
            let foreignKeys = try await strings(c, """
                SELECT tc.table_name || '.' || kcu.column_name || '->' || ccu.table_name FROM information_schema.table_constraints tc
                JOIN information_schema.key_column_usage kcu ON kcu.constraint_name = tc.constraint_name AND kcu.table_schema = tc.table_schema
                JOIN information_schema.constraint_column_usage ccu ON ccu.constraint_name = tc.constraint_name AND ccu.table_schema = tc.table_schema
                WHERE tc.table_schema = '\(s)' AND tc.constraint_type = 'FOREIGN KEY' ORDER BY 1
                """)
            #expect(foreignKeys == [
                "album.publisher_id->publisher", "bucket_list_item.trip_id->trip", "folder.parent_id->folder", "folder.shortcut_id->folder",
                "living_accommodation.trip_id->trip", "playlist_tracks.playlist_id->playlist", "playlist_tracks.tracks_id->track",
                "track.album_id->album", "user_followers.followers_id->user", "user_followers.user_id->user",
            ])
            let rules = try await strings(c, """
                SELECT conname::text || ' ' || confdeltype::text || ' ' || condeferred::text FROM pg_constraint
                WHERE connamespace = '\(s)'::regnamespace AND conname IN ('track_album_id_fkey', 'user_followers_user_id_fkey') ORDER BY 1
                """)
            #expect(rules == ["track_album_id_fkey n true", "user_followers_user_id_fkey c false"])
            let views = try await strings(c, "SELECT table_name FROM information_schema.views WHERE table_schema = '\(s)' ORDER BY 1")
            #expect(views == ["business_trip", "personal_trip", "pgmodel_cascade_links"])
            let checks = try await strings(c, "SELECT conname::text FROM pg_constraint WHERE contype = 'c' AND conrelid = '\(s).trip'::regclass")
            #expect(checks == ["trip_perdiem_check"])
            // A BusinessTrip row without perdiem breaks the check; a plain Trip row is fine.
            await #expect(throws: (any Error).self) {
                _ = try await c.connection.query(PostgresQuery(unsafeSQL: "INSERT INTO \(s).trip (id, entity, name, destination) VALUES (gen_random_uuid(), 'BusinessTrip', 'b', 'x')"), logger: Logger(label: "q"))
            }
            _ = try await c.connection.query(PostgresQuery(unsafeSQL: "INSERT INTO \(s).trip (id, entity, name, destination) VALUES (gen_random_uuid(), 'Trip', 't', 'x')"), logger: Logger(label: "q"))
            // Preparing again changes nothing.
            let before = try await strings(c, "SELECT count(*)::text FROM pg_constraint WHERE connamespace = '\(s)'::regnamespace")
            try await engine.prepare(schema, on: c)
            try await engine.prepare(schema, on: c)
            #expect(try await strings(c, "SELECT count(*)::text FROM pg_constraint WHERE connamespace = '\(s)'::regnamespace") == before)
        }
    }

    @Test func aGrownSchemaAddsColumnsAndReplacesViews() async throws {
        try await withStore { engine, c, s in
            var grown = schema
            for i in grown.entities.indices where ["Trip", "BusinessTrip", "PersonalTrip"].contains(grown.entities[i].name) {
                // Before the subclass's own columns: the views cannot be replaced in place and are recreated.
                grown.entities[i].attributes.insert(AttributeDescription(name: "budget", type: .double, isOptional: true), at: 2)
            }
            try await engine.prepare(grown, on: c)
            let columns = try await strings(c, "SELECT column_name FROM information_schema.columns WHERE table_schema = '\(s)' AND table_name = 'business_trip' ORDER BY ordinal_position")
            #expect(columns == ["id", "entity", "owner_id", "name", "destination", "budget", "perdiem"])
            try await engine.prepare(grown, on: c)
        }
    }

    // MARK: Inheritance

    @Test func deepFetchReturnsConcreteEntities() async throws {
        try await withStore { engine, c, s in
            let trip = row("Trip", ["name": .string("t"), "destination": .string("Oslo")])
            let business = row("BusinessTrip", ["name": .string("b"), "destination": .string("Paris"), "perdiem": .double(120)])
            let personal = row("PersonalTrip", ["name": .string("p"), "destination": .string("Rome"), "reason": .string("sun")])
            _ = try await save(engine, c, SaveRequest(inserts: [trip, business, personal]))

            let all = try await fetch(engine, c, FetchRequest(entity: "Trip", sort: [SortKey("name")]))
            #expect(all.map(\.entity) == ["BusinessTrip", "PersonalTrip", "Trip"])
            #expect(all[0].values["perdiem"] == .double(120))
            #expect(all[0].values["reason"] == nil)
            #expect(all[1].values["reason"] == .string("sun"))
            #expect(all[2].values["perdiem"] == nil && all[2].values["reason"] == nil)
            #expect(all[2].values["livingAccommodation"] == nil, "the key of a one-to-one lives on the other side")

            let businessOnly = try await fetch(engine, c, FetchRequest(entity: "BusinessTrip"))
            #expect(businessOnly.map(\.id) == [business.id])
            #expect(try await engine.count(FetchRequest(entity: "Trip", predicate: .isKind("PersonalTrip")), in: schema, as: .trusted, on: c) == 1)
            #expect(try await engine.count(FetchRequest(entity: "Trip", predicate: .not(.isKind("Trip"))), in: schema, as: .trusted, on: c) == 0)
            let onlyPerdiem = try await fetch(engine, c, FetchRequest(entity: "BusinessTrip", properties: ["perdiem"]))
            #expect(onlyPerdiem.first?.values == ["perdiem": .double(120)])
            #expect(try await strings(c, "SELECT name FROM \(s).business_trip") == ["b"])
            #expect(try await strings(c, "SELECT name FROM \(s).personal_trip") == ["p"])
        }
    }

    // MARK: Relationships

    @Test func foreignKeysRelatedFetchesAndDottedKeys() async throws {
        try await withStore { engine, c, _ in
            let trip = row("BusinessTrip", ["name": .string("b"), "destination": .string("Paris"), "perdiem": .double(1)])
            let hotel = row("LivingAccommodation", ["name": .string("Ritz"), "address": .string("Place Vendôme"), "trip": .uuid(trip.id)])
            let items = (0..<3).map { i in
                row("BucketListItem", ["title": .string("item \(i)"), "isInPlan": .bool(i % 2 == 0), "trip": i < 2 ? .uuid(trip.id) : .null])
            }
            // Children before their parent in the same save: deferred foreign keys make the order irrelevant.
            _ = try await save(engine, c, SaveRequest(inserts: items + [hotel, trip]))

            let fetchedItems = try await fetch(engine, c, FetchRequest(entity: "BucketListItem", sort: [SortKey("title")]))
            #expect(fetchedItems.map { $0.values["trip"] } == [.uuid(trip.id), .uuid(trip.id), .null])

            // Inverse foreign key: the bucket list of the trip, with via.
            let list = try await fetch(engine, c, FetchRequest(entity: "BucketListItem", sort: [SortKey("title")],
                                                               related: RelatedScope(entity: "Trip", relationship: "bucketList", ids: [trip.id])))
            #expect(list.map(\.id) == [items[0].id, items[1].id])
            #expect(list.allSatisfy { $0.via == trip.id })
            // Foreign key on the source: the trip of two items (once per source).
            let trips = try await fetch(engine, c, FetchRequest(entity: "Trip",
                                                                related: RelatedScope(entity: "BucketListItem", relationship: "trip", ids: [items[0].id, items[1].id, items[2].id])))
            #expect(trips.count == 2 && Set(trips.compactMap(\.via)) == [items[0].id, items[1].id])
            #expect(trips.allSatisfy { $0.entity == "BusinessTrip" && $0.values["perdiem"] == .double(1) })
            // One-to-one, key on the other side.
            let stays = try await fetch(engine, c, FetchRequest(entity: "LivingAccommodation",
                                                                related: RelatedScope(entity: "Trip", relationship: "livingAccommodation", ids: [trip.id])))
            #expect(stays.map(\.id) == [hotel.id])

            // Dotted keys through a foreign key and through a one-to-one whose key is on the other side.
            let ritz = try await fetch(engine, c, FetchRequest(entity: "BucketListItem",
                predicate: .compare(.equal, .key("trip.livingAccommodation.name"), .value(.string("Ritz"))), sort: [SortKey("trip.name"), SortKey("title")]))
            #expect(ritz.map(\.id) == [items[0].id, items[1].id])
            let noTrip = try await fetch(engine, c, FetchRequest(entity: "BucketListItem", predicate: .compare(.equal, .key("trip"), .value(.null))))
            #expect(noTrip.map(\.id) == [items[2].id])
            let withStay = try await engine.count(FetchRequest(entity: "Trip", predicate: .compare(.notEqual, .key("livingAccommodation"), .value(.null))),
                                                  in: schema, as: .trusted, on: c)
            #expect(withStay == 1)
            let byID = try await engine.count(FetchRequest(entity: "Trip", predicate: .compare(.equal, .key("livingAccommodation"), .value(.uuid(hotel.id)))),
                                              in: schema, as: .trusted, on: c)
            #expect(byID == 1)

            // Changing a foreign key.
            _ = try await save(engine, c, SaveRequest(updates: [RowValues(entity: "BucketListItem", id: items[0].id, values: ["trip": .null])]))
            let after = try await fetch(engine, c, FetchRequest(entity: "BucketListItem", identifiers: [items[0].id]))
            #expect(after.first?.values["trip"] == .null)
        }
    }

    @Test func linksAreIdempotentAndEitherSideMayNameThem() async throws {
        try await withStore { engine, c, _ in
            let users = (0..<3).map { row("User", ["name": .string("u\($0)")]) }
            let (a, b, d) = (users[0].id, users[1].id, users[2].id)
            let follow = LinkChange(entity: "User", relationship: "following", source: a, destination: b, isAdded: true)
            _ = try await save(engine, c, SaveRequest(inserts: users, links: [follow, follow]))
            _ = try await save(engine, c, SaveRequest(links: [follow,
                LinkChange(entity: "User", relationship: "followers", source: b, destination: d, isAdded: true)]))  // d follows b
            let followersOfB = try await fetch(engine, c, FetchRequest(entity: "User", sort: [SortKey("name")],
                                                                       related: RelatedScope(entity: "User", relationship: "followers", ids: [b])))
            #expect(followersOfB.map(\.id) == [a, d])
            let aFollows = try await fetch(engine, c, FetchRequest(entity: "User", related: RelatedScope(entity: "User", relationship: "following", ids: [a, d])))
            #expect(aFollows.map(\.id) == [b, b] && Set(aFollows.compactMap(\.via)) == [a, d])
            // Removing from the other side, twice.
            let unfollow = LinkChange(entity: "User", relationship: "followers", source: b, destination: a, isAdded: false)
            _ = try await save(engine, c, SaveRequest(links: [unfollow, unfollow]))
            let left = try await fetch(engine, c, FetchRequest(entity: "User", related: RelatedScope(entity: "User", relationship: "following", ids: [a])))
            #expect(left.isEmpty)
            // Deleting a user removes its links (join rows cascade).
            _ = try await save(engine, c, SaveRequest(deletes: [RowReference(entity: "User", id: d)]))
            #expect(try await fetch(engine, c, FetchRequest(entity: "User", related: RelatedScope(entity: "User", relationship: "followers", ids: [b]))).isEmpty)
        }
    }

    // MARK: Delete rules

    @Test func cascadeIsRecursiveAndEndsOnCycles() async throws {
        try await withStore { engine, c, _ in
            let root = row("Folder", ["name": .string("root")])
            let child = row("Folder", ["name": .string("child"), "parent": .uuid(root.id)])
            let grandchild = row("Folder", ["name": .string("grandchild"), "parent": .uuid(child.id)])
            // A ring of shortcuts (cascade, to-one): x → y → z → x.
            let x = UUID.v7(), y = UUID.v7(), z = UUID.v7()
            let ring = [row("Folder", x, ["name": .string("x"), "shortcut": .uuid(y)]), row("Folder", y, ["name": .string("y"), "shortcut": .uuid(z)]),
                        row("Folder", z, ["name": .string("z"), "shortcut": .uuid(x)])]
            let other = row("Folder", ["name": .string("other")])
            // The grandchild's shortcut reaches the ring.
            var gc = grandchild
            gc.values["shortcut"] = .uuid(x)
            _ = try await save(engine, c, SaveRequest(inserts: [root, child, gc, other] + ring))

            let result = try await save(engine, c, SaveRequest(deletes: [RowReference(entity: "Folder", id: root.id)]))
            #expect(Set(result.deleted.map(\.id)) == [root.id, child.id, grandchild.id, x, y, z])
            #expect(result.deleted.allSatisfy { $0.entity == "Folder" })
            #expect(try await fetch(engine, c, FetchRequest(entity: "Folder")).map(\.id) == [other.id])

            // Album → tracks, by a batch delete.
            let album = row("Album", ["title": .string("A")])
            let tracks = (0..<3).map { row("Track", ["title": .string("t\($0)"), "duration": .int(100), "album": .uuid(album.id)]) }
            let single = row("Track", ["title": .string("single"), "duration": .int(1)])
            _ = try await save(engine, c, SaveRequest(inserts: [album, single] + tracks))
            let batch = try await save(engine, c, SaveRequest(batchDeletes: [FetchRequest(entity: "Album", predicate: .compare(.equal, .key("title"), .value(.string("A"))))]))
            #expect(Set(batch.deleted.map(\.id)) == Set([album.id] + tracks.map(\.id)))
            #expect(try await fetch(engine, c, FetchRequest(entity: "Track")).map(\.id) == [single.id])
        }
    }

    /// What any client may send: children moved to another album (one of them to one inserted in the same
    /// save) and the old album deleted, with no word of the children in the deletes. The delete's cascade
    /// follows the graph as the save leaves it; an update of a row the deletes removed is skipped.
    @Test func reparentingComesBeforeTheDeletesCascade() async throws {
        try await withStore { engine, c, _ in
            let old = row("Album", ["title": .string("old")]), keep = row("Album", ["title": .string("keep")])
            let moved = row("Track", ["title": .string("moved"), "duration": .int(1), "album": .uuid(old.id)])
            let toNew = row("Track", ["title": .string("to new"), "duration": .int(1), "album": .uuid(old.id)])
            let left = row("Track", ["title": .string("left"), "duration": .int(1), "album": .uuid(old.id)])
            _ = try await save(engine, c, SaveRequest(inserts: [old, keep, moved, toNew, left]))

            let new = row("Album", ["title": .string("new")])
            let result = try await save(engine, c, SaveRequest(
                inserts: [new],
                updates: [row("Track", moved.id, ["album": .uuid(keep.id), "title": .string("moved!")]), row("Track", toNew.id, ["album": .uuid(new.id)]),
                          row("Track", left.id, ["title": .string("renamed, then cascaded")])],
                deletes: [RowReference(entity: "Album", id: old.id)]))
            #expect(Set(result.deleted.map(\.id)) == [old.id, left.id])
            let tracks = try await fetch(engine, c, FetchRequest(entity: "Track", sort: [SortKey("title")]))
            #expect(tracks.map { $0.values["title"] } == [.string("moved!"), .string("to new")])
            #expect(tracks.map { $0.values["album"] } == [.uuid(keep.id), .uuid(new.id)])
        }
    }

    @Test func denyWritesNothing() async throws {
        try await withStore { engine, c, _ in
            let publisher = row("Publisher", ["name": .string("P")])
            let albums = (0..<2).map { row("Album", ["title": .string("a\($0)"), "publisher": .uuid(publisher.id)]) }
            let track = row("Track", ["title": .string("t"), "duration": .int(1)])
            _ = try await save(engine, c, SaveRequest(inserts: [publisher, track] + albums))

            let attempt = SaveRequest(inserts: [row("Track", ["title": .string("new"), "duration": .int(2)])],
                                      deletes: [RowReference(entity: "Track", id: track.id), RowReference(entity: "Publisher", id: publisher.id)])
            do {
                _ = try await save(engine, c, attempt)
                Issue.record("a delete denied by Publisher.albums succeeded")
            } catch let error as PGModelError {
                #expect(error.code == .deleteDenied)
                #expect(error.message == "cannot delete Publisher: its relationship 'albums' (deleteRule .deny) still reaches 2 Album")
                #expect(error.model == "Publisher" && error.keyPath == "albums")
            }
            #expect(try await fetch(engine, c, FetchRequest(entity: "Track")).map(\.id) == [track.id])
            #expect(try await fetch(engine, c, FetchRequest(entity: "Publisher")).count == 1)

            // Deleting the albums in the same save lifts the denial.
            let both = try await save(engine, c, SaveRequest(deletes: albums.map { RowReference(entity: "Album", id: $0.id) } + [RowReference(entity: "Publisher", id: publisher.id)]))
            #expect(both.deleted.count == 3)
        }
    }

    @Test func nullifySetsForeignKeysToNull() async throws {
        try await withStore { engine, c, _ in
            let trip = row("PersonalTrip", ["name": .string("p"), "destination": .string("Rome")])
            let hotel = row("LivingAccommodation", ["name": .string("h"), "address": .string("a"), "trip": .uuid(trip.id)])
            let item = row("BucketListItem", ["title": .string("i"), "isInPlan": .bool(true), "trip": .uuid(trip.id)])
            _ = try await save(engine, c, SaveRequest(inserts: [trip, hotel, item]))
            let result = try await save(engine, c, SaveRequest(deletes: [RowReference(entity: "Trip", id: trip.id)]))
            // bucketList is .nullify, livingAccommodation .cascade; the row reports its concrete class.
            #expect(Set(result.deleted) == [RowReference(entity: "PersonalTrip", id: trip.id), RowReference(entity: "LivingAccommodation", id: hotel.id)])
            let items = try await fetch(engine, c, FetchRequest(entity: "BucketListItem"))
            #expect(items.map(\.id) == [item.id] && items[0].values["trip"] == .null)
        }
    }

    @Test func rowLevelSecurityScopesReferencesAndCascades() async throws {
        try await withStore { engine, c, _ in
            let alice = try await engine.createUser(name: "g_alice_" + UUID().uuidString.prefix(8).lowercased(), password: "x", isAdmin: false, on: c)
            let bob = try await engine.createUser(name: "g_bob_" + UUID().uuidString.prefix(8).lowercased(), password: "x", isAdmin: false, on: c)
            let aliceScope = Requester.user(alice), bobScope = Requester.user(bob)
            let album = row("Album", ["title": .string("A")])
            let mine = row("Track", ["title": .string("mine"), "duration": .int(1), "album": .uuid(album.id)])
            _ = try await save(engine, c, SaveRequest(inserts: [album, mine]), as: aliceScope)
            // Bob's reference to Alice's album fails exactly as one to a row that does not exist, and
            // his whole save is rolled back.
            let theirs = row("Track", ["title": .string("theirs"), "duration": .int(1), "album": .uuid(album.id)])
            await #expect { _ = try await save(engine, c, SaveRequest(inserts: [theirs]), as: bobScope) }
                throws: { ($0 as? PGModelError)?.code == .constraintViolation }
            let ghost = row("Track", ["title": .string("ghost"), "duration": .int(1), "album": .uuid(UUID.v7())])
            await #expect { _ = try await save(engine, c, SaveRequest(inserts: [ghost]), as: bobScope) }
                throws: { ($0 as? PGModelError)?.code == .constraintViolation }
            #expect(try await fetch(engine, c, FetchRequest(entity: "Track"), as: bobScope).isEmpty)
            let own = row("Track", ["title": .string("own"), "duration": .int(1)])
            _ = try await save(engine, c, SaveRequest(inserts: [own]), as: bobScope)
            // Bob sees his track only, and cannot fetch through Alice's album.
            #expect(try await engine.count(FetchRequest(entity: "Track", predicate: .compare(.equal, .key("album.title"), .value(.string("A")))),
                                           in: schema, as: bobScope, on: c) == 0)
            let result = try await save(engine, c, SaveRequest(deletes: [RowReference(entity: "Album", id: album.id)]), as: aliceScope)
            #expect(Set(result.deleted.map(\.id)) == [album.id, mine.id])
            #expect(try await fetch(engine, c, FetchRequest(entity: "Track"), as: bobScope).map(\.id) == [own.id])
            // Bob cannot delete Alice's rows; to him they do not exist, so nothing happens and he learns
            // nothing; a batch delete simply does not see them.
            let other = row("Album", ["title": .string("B")])
            _ = try await save(engine, c, SaveRequest(inserts: [other]), as: aliceScope)
            let blind = try await save(engine, c, SaveRequest(deletes: [RowReference(entity: "Album", id: other.id)]), as: bobScope)
            #expect(blind.deleted.isEmpty)
            let none = try await save(engine, c, SaveRequest(batchDeletes: [FetchRequest(entity: "Album")]), as: bobScope)
            #expect(none.deleted.isEmpty)
            #expect(try await fetch(engine, c, FetchRequest(entity: "Album"), as: aliceScope).map(\.id) == [other.id])
            // Nor update them: not found, exactly as a row that does not exist.
            await #expect { _ = try await save(engine, c, SaveRequest(updates: [RowValues(entity: "Album", id: other.id, values: ["title": .string("X")])]), as: bobScope) }
                throws: { ($0 as? PGModelError)?.code == .notFound }
        }
    }

    // MARK: Aggregates

    /// The service's request deadline cancels the work it answered `timeout` for: a save whose task is
    /// cancelled rolls back instead of committing. (Where it stops depends on timing: PostgresNIO ends a
    /// cancelled task's row stream, `connection_failed`; else the engine's check before COMMIT, `timeout`.)
    @Test func aCancelledSaveRollsBackInsteadOfCommitting() async throws {
        try await withStore { engine, c, s in
            let trip = row("Trip", ["name": .string("abandoned"), "destination": .string("Oslo")])
            let schema = schema
            let outcome = await Task {
                withUnsafeCurrentTask { $0?.cancel() }
                return try await engine.save(SaveRequest(inserts: [trip]), in: schema, as: .trusted, on: c)
            }.result
            #expect(throws: PGModelError.self) { try outcome.get() }
            // Read on a connection of its own: the cancelled one may have been closed (the pool drops such).
            let other = try await EngineTestStore.connect(id: 2, logger: Logger(label: "pgmodel.test.graph"))
            let trips: Result<[RowValues], any Error>
            do { trips = .success(try await fetch(engine, EngineConnection(other), FetchRequest(entity: "Trip"))) } catch { trips = .failure(error) }
            try await other.close()
            #expect(try trips.get().isEmpty, "nothing committed")
        }
    }

    @Test func aggregatesMatchSwift() async throws {
        try await withStore { engine, c, _ in
            // Albums with 0…4 tracks, playlists holding some tracks, users following each other.
            var inserts: [RowValues] = []
            var links: [LinkChange] = []
            var albumTracks: [UUID: [Int64]] = [:]
            var playlistTracks: [UUID: [Int64]] = [:]
            var trackDuration: [UUID: Int64] = [:]
            var allTracks: [UUID] = []
            for a in 0..<5 {
                let album = row("Album", ["title": .string("album \(a)")])
                inserts.append(album)
                albumTracks[album.id] = []
                for t in 0..<a {
                    let duration = Int64((a * 37 + t * 61) % 300)
                    let track = row("Track", ["title": .string("t\(a).\(t)"), "duration": .int(duration), "album": .uuid(album.id)])
                    inserts.append(track)
                    albumTracks[album.id]!.append(duration)
                    trackDuration[track.id] = duration
                    allTracks.append(track.id)
                }
            }
            for p in 0..<4 {
                let playlist = row("Playlist", ["name": .string("p\(p)")])
                inserts.append(playlist)
                playlistTracks[playlist.id] = []
                for (i, track) in allTracks.enumerated() where i % (p + 2) == 0 && p != 3 {
                    links.append(LinkChange(entity: "Playlist", relationship: "tracks", source: playlist.id, destination: track, isAdded: true))
                    playlistTracks[playlist.id]!.append(trackDuration[track]!)
                }
            }
            let users = (0..<5).map { row("User", ["name": .string("user\($0)")]) }
            inserts += users
            var followers: [UUID: [String]] = [:]
            for (i, u) in users.enumerated() {
                followers[u.id] = []
                for (j, f) in users.enumerated() where i != j && (i + j) % 3 == 0 {
                    links.append(LinkChange(entity: "User", relationship: "following", source: f.id, destination: u.id, isAdded: true))
                    followers[u.id]!.append("user\(j)")
                }
            }
            _ = try await save(engine, c, SaveRequest(inserts: inserts, links: links))

            func ids(_ entity: String, _ predicate: QueryExpression) async throws -> Set<UUID> {
                Set(try await engine.fetchIdentifiers(FetchRequest(entity: entity, predicate: predicate), in: schema, as: .trusted, on: c).map(\.id))
            }
            func check(_ entity: String, _ relationship: String, _ data: [UUID: [Int64]]) async throws {
                func agg(_ f: Aggregate.Function, _ p: QueryExpression? = EngineGraphTests.long) -> QueryExpression {
                    .aggregate(Aggregate(f, relationship: relationship, predicate: p, value: [.min, .max, .sum].contains(f) ? .key("duration") : nil))
                }
                let expectations: [(QueryExpression, (([Int64]) -> Bool))] = [
                    (.compare(.greaterOrEqual, agg(.count, nil), .value(.int(2))), { $0.count >= 2 }),
                    (.compare(.equal, agg(.count), .value(.int(1))), { $0.filter { $0 > 150 }.count == 1 }),
                    (agg(.any), { $0.contains { $0 > 150 } }),
                    (.not(agg(.any, nil)), { $0.isEmpty }),
                    (agg(.all), { $0.allSatisfy { $0 > 150 } }),
                    (.compare(.less, agg(.min, nil), .value(.int(60))), { ($0.min() ?? Int64.max) < 60 }),
                    (.compare(.greater, agg(.max, nil), .value(.int(200))), { ($0.max() ?? Int64.min) > 200 }),
                    (.compare(.greater, agg(.sum), .value(.int(300))), { $0.filter { $0 > 150 }.reduce(0, +) > 300 }),
                    (.compare(.equal, agg(.sum), .value(.int(0))), { $0.filter { $0 > 150 }.isEmpty }),
                ]
                for (i, (predicate, swift)) in expectations.enumerated() {
                    let expected = Set(data.filter { swift($0.value) }.map(\.key))
                    #expect(try await ids(entity, predicate) == expected, "\(entity).\(relationship) case \(i)")
                }
            }
            try await check("Album", "tracks", albumTracks)
            try await check("Playlist", "tracks", playlistTracks)
            // Many-to-many: users with a follower named user1 / whose followers all have names below user3.
            let named = try await ids("User", .aggregate(Aggregate(.any, relationship: "followers", predicate: .compare(.equal, .key("name"), .value(.string("user1"))))))
            #expect(named == Set(followers.filter { $0.value.contains("user1") }.map(\.key)))
            let allLow = try await ids("User", .aggregate(Aggregate(.all, relationship: "followers", predicate: .compare(.less, .key("name"), .value(.string("user3"))))))
            #expect(allLow == Set(followers.filter { $0.value.allSatisfy { $0 < "user3" } }.map(\.key)))
            let counted = try await ids("User", .compare(.equal, .aggregate(Aggregate(.count, relationship: "followers")), .value(.int(2))))
            #expect(counted == Set(followers.filter { $0.value.count == 2 }.map(\.key)))
            // Through a to-one first: tracks whose album has more than 2 tracks.
            let crowded = try await ids("Track", .compare(.greater, .aggregate(Aggregate(.count, relationship: "album.tracks")), .value(.int(2))))
            #expect(crowded == Set(albumTracks.filter { $0.value.count > 2 }.flatMap { album in inserts.filter { $0.values["album"] == .uuid(album.key) }.map(\.id) }))
        }
    }
}
