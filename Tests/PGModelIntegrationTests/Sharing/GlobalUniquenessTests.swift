import Foundation
import Logging
@_spi(PGModelInternals) import PGModel
@_spi(PGModelInternals) import PGModelCore
@_spi(PGModelInternals) import PGModelPostgres
@_spi(PGModelInternals) import PGModelServer
@_spi(PGModelInternals) import PGModelSQL
import PGModelTesting
import Testing

/// Uniqueness across all users (`@Attribute(.globallyUnique)`, `#Unique(…, scope: .allUsers)`) on both
/// stores and through the service: a value another user holds is `unique_violation` and nothing else, the
/// same answer whoever holds it and whether the user can see it; the user's own values still upsert; a
/// grantee may set such values on a shared record; a migration between the scopes changes the constraint.
@Suite("Uniqueness across all users")
struct GlobalUniquenessTests {
    typealias Member = GlobalUniquenessModels.Member
    typealias Post = GlobalUniquenessModels.Post

    static let schema = Schema(GlobalUniquenessModels.types).schemaDescription
    static let schemaJSON: String = {
        (try? String(decoding: JSONEncoder().encode(schema), as: UTF8.self)) ?? "{}"
    }()
    static let takenMessage = "Member.handle is taken: its value is unique across all users"

    /// The PostgreSQL schema a fixture's models live in: the direct store's own, or the shared service's.
    static func schemaName(of fixture: StoreFixture, _ kind: StoreKind) async throws -> String {
        switch kind {
        case .direct:
            let items = URLComponents(url: fixture.url, resolvingAgainstBaseURL: false)?.queryItems ?? []
            return try #require(items.first { $0.name == "schema" }?.value)
        case .service:
            return try await TestService.shared().service().schemaName
        }
    }

    /// Saves `request` as `user` straight through the engine on `schemaName`: another user's writes,
    /// beside the store under test.
    static func save(_ request: SaveRequest, as user: AuthenticatedUser, schemaName: String) async throws {
        try await ServerTestHarness.withDatabase(schemaName: schemaName) { engine, connection in
            _ = try await engine.save(request, in: schema, as: .user(user), on: connection)
        }
    }

    @Test("another user's value is taken and nothing of the save is written; the user's own values upsert; .unique stays per owner",
          arguments: StoreKind.tested)
    func takenAndUpserted(kind: StoreKind) async throws {
        let f = try await StoreFixture.make(kind, GlobalUniquenessModels.types)
        let schemaName = try await Self.schemaName(of: f, kind)
        let alice = try await ServerTestHarness.makeUser("gu_alice")
        let taken = "\(f.token)-taken", aliceNick = "\(f.token)-nick"
        let aliceMember = UUID.v7()
        try await Self.save(SaveRequest(inserts: [RowValues(entity: "Member", id: aliceMember, values: [
            "handle": .string(taken), "nickname": .string(aliceNick), "bio": .string("alice's")])]), as: alice, schemaName: schemaName)
        let aliceRow = "SELECT handle || ':' || nickname || ':' || bio || ':' || owner_id::text FROM \"\(schemaName)\".member WHERE id = '\(aliceMember)'"
        let aliceBefore = try await Inspect.strings(aliceRow)
        #expect(aliceBefore == ["\(taken):\(aliceNick):alice's:\(alice.id.uuidString.lowercased())"])
        func count(_ handle: String) async throws -> Int {
            try await Inspect.count("SELECT count(*) FROM \"\(schemaName)\".member WHERE handle = '\(handle)'")
        }

        // The insert of a taken handle fails, with the model and attribute only; the other insert of the
        // save is not written either, and Alice's row is as it was.
        let refused = try await offCooperativePool { () -> PGModelError? in
            let context = f.newContext()
            context.insert(Member(handle: taken, nickname: "\(f.token)-n1", bio: "mine"))
            context.insert(Member(handle: "\(f.token)-free", nickname: "\(f.token)-n2", bio: "free"))
            return #expect(throws: PGModelError.self) { try context.save() }
        }
        #expect(refused?.code == .uniqueViolation)
        #expect(refused?.model == "Member")
        #expect(refused?.keyPath == "handle")
        #expect(refused?.message == Self.takenMessage)
        #expect(refused?.sqlState == "23505")
        #expect(try await count("\(f.token)-free") == 0)
        #expect(try await count(taken) == 1)
        #expect(try await Inspect.strings(aliceRow) == aliceBefore)

        // The user's own handle: a second insert of it updates their row (SwiftData's upsert), matched by
        // the handle alone (the nicknames differ).
        let mine = "\(f.token)-mine"
        try await offCooperativePool {
            let first = f.newContext()
            let original = Member(handle: mine, nickname: "\(f.token)-n3", bio: "v1")
            first.insert(original)
            try first.save()
            let second = f.newContext()
            let again = Member(handle: mine, nickname: "\(f.token)-n4", bio: "v2")
            second.insert(again)
            try second.save()
            #expect(again.persistentModelID == original.persistentModelID)

            // Updating it to the taken handle is the same error, and leaves it as it was.
            original.handle = taken
            let update = #expect(throws: PGModelError.self) { try first.save() }
            #expect(update?.code == .uniqueViolation)
            #expect(update?.message == Self.takenMessage)
            #expect(update?.keyPath == "handle")
            first.rollback()
        }
        #expect(try await count(mine) == 1)
        #expect(try await Inspect.strings("SELECT bio || ':' || nickname FROM \"\(schemaName)\".member WHERE handle = '\(mine)'") == ["v2:\(f.token)-n4"])
        #expect(try await Inspect.strings(aliceRow) == aliceBefore)

        // `.unique` in the same model stays per owner: Alice's nickname is free for this user, and a
        // second insert of it updates this user's row, not hers.
        try await offCooperativePool {
            let context = f.newContext()
            context.insert(Member(handle: "\(f.token)-h5", nickname: aliceNick, bio: "same nickname"))
            try context.save()
            let again = f.newContext()
            again.insert(Member(handle: "\(f.token)-h6", nickname: aliceNick, bio: "merged"))
            try again.save()
        }
        #expect(try await Inspect.strings("SELECT handle || ':' || bio FROM \"\(schemaName)\".member WHERE nickname = '\(aliceNick)' ORDER BY (owner_id = '\(alice.id)') IS TRUE DESC")
                == ["\(taken):alice's", "\(f.token)-h6:merged"])
        // Alice, in turn, cannot take this user's handle.
        await #expect { try await Self.save(SaveRequest(inserts: [RowValues(entity: "Member", id: .v7(), values: [
            "handle": .string("\(f.token)-h6"), "nickname": .string("\(f.token)-n7"), "bio": .string("")])]), as: alice, schemaName: schemaName)
        } throws: { ($0 as? PGModelError)?.message == Self.takenMessage }
    }

    // MARK: Through the service, on raw connections

    /// The service on a fresh schema with the models, one logged-in raw connection per user.
    static func withService(_ users: [AuthenticatedUser], configure: @escaping (inout LineServerConfiguration) -> Void = {
        $0.takenValueProbeThrottle = .disabled
    }, _ body: @Sendable (_ wires: [EntityIsolationTests.Wire], _ schemaName: String) async throws -> Void) async throws {
        let schemaName = TestDatabase.uniqueSchema("gu")
        try await ServerTestHarness.register(schema, schemaName: schemaName)
        try await ServerTestHarness.withServer(schemaName: schemaName, configure: configure) { port in
            var wires: [EntityIsolationTests.Wire] = []
            for user in users {
                let client = try await RawProtocolClient.connect(port: port)
                let hello = try await RawProtocolTests.hello(client, user.name, "secret")
                try #require(hello.ok == true, "\(hello)")
                let wire = EntityIsolationTests.Wire(client, user.name)
                let registered = try await wire.send(#""op":"register","schema":\#(schemaJSON)"#)
                try #require(registered.ok == true, "\(registered)")
                wires.append(wire)
            }
            do {
                try await body(wires, schemaName)
            } catch {
                for wire in wires { await wire.client.close() }
                throw error
            }
            for wire in wires { await wire.client.close() }
        }
    }

    static func newID() -> String { EntityIsolationTests.newID() }

    static func member(_ id: String, _ handle: String, _ nickname: String, bio: String = "") -> String {
        #"{"entity":"Member","id":"\#(id)","values":{"handle":"\#(handle)","nickname":"\#(nickname)","bio":"\#(bio)"}}"#
    }

    static func post(_ id: String, slug: String?, code: String?, member: String?) -> String {
        func text(_ value: String?) -> String { value.map { #""\#($0)""# } ?? "null" }
        return #"{"entity":"Post","id":"\#(id)","values":{"title":"t","slug":\#(text(slug)),"code":\#(text(code)),"member":\#(text(member))}}"#
    }

    static func error(_ response: RawResponse) -> NSDictionary? {
        response.errorWithoutRequestID
    }

    @Test("the same answer whether the value is in a model hidden from the user, shared read-only, shared read-write, or their own")
    func sameAnswerWhoeverHoldsIt() async throws {
        let people = [try await ServerTestHarness.makeUser("gu_alice"), try await ServerTestHarness.makeUser("gu_bob")]
        try await Self.withService(people) { wires, schemaName in
            let (alice, bob) = (wires[0], wires[1])
            let tok = "g" + ServerTestHarness.uniqueSuffix()
            let (m1, m2, m3) = (Self.newID(), Self.newID(), Self.newID())
            let saved = try await alice.save(#"""
                "inserts":[\#(Self.member(m1, "\(tok)-h1", "a1", bio: "private")),\#(Self.member(m2, "\(tok)-h2", "a2", bio: "read")),\#(Self.member(m3, "\(tok)-h3", "a3", bio: "write"))],\#
                "shares":[{"entity":"Member","id":"\#(m2)","user":"\#(bob.name)","permission":"readOnly"},{"entity":"Member","id":"\#(m3)","user":"\#(bob.name)","permission":"readWrite"}]
                """#)
            try #require(saved.ok == true, "\(saved)")
            let aliceRows = "SELECT string_agg(handle || ':' || nickname || ':' || bio, ',' ORDER BY handle) FROM \"\(schemaName)\".member WHERE owner_id = (SELECT id FROM pgmodel.users WHERE name = '\(alice.name)')"
            let before = try await EntityIsolationTests.trusted(schemaName, aliceRows)

            func insert(_ handle: String) async throws -> RawResponse {
                try await bob.save(#""inserts":[\#(Self.member(Self.newID(), handle, "b-\(Self.newID())"))]"#)
            }
            let hidden = try await insert("\(tok)-h1")
            let readOnly = try await insert("\(tok)-h2")
            let readWrite = try await insert("\(tok)-h3")
            #expect(hidden.code == "unique_violation", "\(hidden)")
            #expect(hidden.message == Self.takenMessage, "\(hidden)")
            #expect(hidden.error?["keyPath"] as? String == "handle")
            #expect(Self.error(hidden) == Self.error(readOnly), "\(hidden) \(readOnly)")
            #expect(Self.error(hidden) == Self.error(readWrite), "\(hidden) \(readWrite)")
            for response in [hidden, readOnly, readWrite] {
                #expect(!response.text.contains(alice.name) && !response.text.contains(m1) && !response.text.contains("private"), "\(response)")
            }

            // Bob's own handles: an update to another user's value or to one of his own reads the same.
            let (b1, b2) = (Self.newID(), Self.newID())
            #expect(try await bob.save(#""inserts":[\#(Self.member(b1, "\(tok)-b1", "n1")),\#(Self.member(b2, "\(tok)-b2", "n2"))]"#).ok == true)
            let toHidden = try await bob.save(#""updates":[{"entity":"Member","id":"\#(b2)","values":{"handle":"\#(tok)-h1"}}]"#)
            let toOwn = try await bob.save(#""updates":[{"entity":"Member","id":"\#(b2)","values":{"handle":"\#(tok)-b1"}}]"#)
            #expect(Self.error(toHidden) == Self.error(hidden), "\(toHidden)")
            #expect(Self.error(toOwn) == Self.error(hidden), "\(toOwn)")
            // His own handle inserted again merges into his row.
            let upsert = try await bob.save(#""inserts":[\#(Self.member(Self.newID(), "\(tok)-b1", "n3", bio: "merged"))]"#)
            #expect(upsert.ok == true, "\(upsert)")
            #expect((upsert.object["remapped"] as? [String: String])?.values.first == b1, "\(upsert)")

            #expect(try await EntityIsolationTests.trusted(schemaName, aliceRows) == before)
            #expect(try await EntityIsolationTests.trusted(schemaName,
                "SELECT string_agg(handle || ':' || bio, ',' ORDER BY handle) FROM \"\(schemaName)\".member WHERE owner_id = (SELECT id FROM pgmodel.users WHERE name = '\(bob.name)')")
                == ["\(tok)-b1:merged,\(tok)-b2:"])
        }
    }

    @Test("a read-write grantee sets values unique across all users of a shared record (taken: the same answer), never those per owner")
    func granteeSetsGlobalValues() async throws {
        let people = [try await ServerTestHarness.makeUser("gu_alice"), try await ServerTestHarness.makeUser("gu_will")]
        try await Self.withService(people) { wires, schemaName in
            let (alice, will) = (wires[0], wires[1])
            let tok = "g" + ServerTestHarness.uniqueSuffix()
            let (m1, m3) = (Self.newID(), Self.newID())
            let saved = try await alice.save(#"""
                "inserts":[\#(Self.member(m1, "\(tok)-h1", "a1")),\#(Self.member(m3, "\(tok)-h3", "a3")),\#(Self.post(Self.newID(), slug: "\(tok)-s1", code: "c1", member: m1))],\#
                "shares":[{"entity":"Member","id":"\#(m3)","user":"\#(will.name)","permission":"readWrite"}]
                """#)
            try #require(saved.ok == true, "\(saved)")
            // What Will learns by inserting into his own data: the handle and the slug are taken.
            let ownHandle = try await will.save(#""inserts":[\#(Self.member(Self.newID(), "\(tok)-h1", "w1"))]"#)
            let ownSlug = try await will.save(#""inserts":[\#(Self.post(Self.newID(), slug: "\(tok)-s1", code: nil, member: nil))]"#)
            #expect(ownHandle.code == "unique_violation" && ownSlug.code == "unique_violation", "\(ownHandle) \(ownSlug)")
            #expect(ownSlug.message == "Post.slug is taken: its value is unique across all users", "\(ownSlug)")

            // On Alice's shared member: a free handle is set, a taken one answers exactly as above.
            let free = try await will.save(#""updates":[{"entity":"Member","id":"\#(m3)","values":{"handle":"\#(tok)-h3b"}}]"#)
            #expect(free.ok == true, "\(free)")
            let takenHandle = try await will.save(#""updates":[{"entity":"Member","id":"\#(m3)","values":{"handle":"\#(tok)-h1"}}]"#)
            #expect(Self.error(takenHandle) == Self.error(ownHandle), "\(takenHandle)")
            // A post he adds to it (it becomes Alice's) may carry a slug; a taken one answers as above.
            let freeSlug = try await will.save(#""inserts":[\#(Self.post(Self.newID(), slug: "\(tok)-s2", code: nil, member: m3))]"#)
            #expect(freeSlug.ok == true, "\(freeSlug)")
            let takenSlug = try await will.save(#""inserts":[\#(Self.post(Self.newID(), slug: "\(tok)-s1", code: nil, member: m3))]"#)
            #expect(Self.error(takenSlug) == Self.error(ownSlug), "\(takenSlug)")
            // Values unique per owner stay the owner's to set.
            let nickname = try await will.save(#""updates":[{"entity":"Member","id":"\#(m3)","values":{"nickname":"w-\#(tok)"}}]"#)
            #expect(nickname.code == "forbidden", "\(nickname)")
            let code = try await will.save(#""inserts":[\#(Self.post(Self.newID(), slug: nil, code: "c-\(tok)", member: m3))]"#)
            #expect(code.code == "forbidden", "\(code)")

            #expect(try await EntityIsolationTests.trusted(schemaName,
                "SELECT string_agg(m.handle || ':' || m.nickname || ':' || (m.owner_id = u.id)::text, ',' ORDER BY m.handle) FROM \"\(schemaName)\".member m, pgmodel.users u WHERE u.name = '\(alice.name)' AND m.owner_id = u.id")
                == ["\(tok)-h1:a1:true,\(tok)-h3b:a3:true"])
            #expect(try await EntityIsolationTests.trusted(schemaName,
                "SELECT string_agg(slug, ',' ORDER BY slug) FROM \"\(schemaName)\".post WHERE member_id = '\(m3)'") == ["\(tok)-s2"])
        }
    }

    @Test("saves answered 'taken' are slowed down like share probes; other unique violations do not count")
    func takenAnswersAreThrottled() async throws {
        let people = [try await ServerTestHarness.makeUser("gu_alice"), try await ServerTestHarness.makeUser("gu_mallory")]
        try await Self.withService(people, configure: {
            $0.takenValueProbeThrottle.freeFailuresPerUser = 3
            $0.takenValueProbeThrottle.freeFailuresPerAddress = 1_000
            $0.takenValueProbeThrottle.initialDelay = .seconds(60)
        }) { wires, schemaName in
            let (alice, mallory) = (wires[0], wires[1])
            let tok = "g" + ServerTestHarness.uniqueSuffix()
            #expect(try await alice.save(#""inserts":[\#(Self.member(Self.newID(), "\(tok)-alice", "a"))]"#).ok == true)
            // Two collisions between Mallory's own nicknames (unique per owner): not probes of anyone's values.
            let (n1, n2) = (Self.newID(), Self.newID())
            #expect(try await mallory.save(#""inserts":[\#(Self.member(n1, "\(tok)-m1", "x")),\#(Self.member(n2, "\(tok)-m2", "y"))]"#).ok == true)
            for _ in 0..<2 {
                let own = try await mallory.save(#""updates":[{"entity":"Member","id":"\#(n2)","values":{"nickname":"x"}}]"#)
                #expect(own.code == "unique_violation" && own.message != Self.takenMessage, "\(own)")
            }
            // Four probes are answered; then even a save that would succeed waits, and nothing of it runs.
            var codes: [String?] = []
            for i in 0..<4 {
                codes.append(try await mallory.save(#""inserts":[\#(Self.member(Self.newID(), "\(tok)-alice", "p\(i)"))]"#).code)
            }
            #expect(codes == Array(repeating: "unique_violation", count: 4), "\(codes)")
            let held = try await mallory.save(#""inserts":[\#(Self.member(Self.newID(), "\(tok)-fresh", "f"))]"#)
            #expect(held.code == "rate_limited", "\(held)")
            #expect(try await EntityIsolationTests.trusted(schemaName, "SELECT count(*)::text FROM \"\(schemaName)\".member WHERE handle = '\(tok)-fresh'") == ["0"])
            // Her reads, and other users, go on.
            #expect(try await mallory.fetchIDs("Member").count == 2)
            #expect(try await alice.save(#""inserts":[\#(Self.member(Self.newID(), "\(tok)-alice2", "a2"))]"#).ok == true)
        }
    }

    @Test("INSERT … ON CONFLICT DO UPDATE against another user's row is a row-level security error, not a skip; PGModel's insert answers 'taken'")
    func onConflictDoUpdateIsNotAnOption() async throws {
        try await EngineTestStore.with(Self.schema, prefix: "guc", logger: EntityIsolationTests.logger) { engine, c, schemaName in
            let suffix = ServerTestHarness.uniqueSuffix()
            let alice = try await engine.createUser(name: "guc_alice_\(suffix)", password: "x", isAdmin: false, on: c)
            let bob = try await engine.createUser(name: "guc_bob_\(suffix)", password: "x", isAdmin: false, on: c)
            let held = UUID.v7()
            _ = try await engine.save(SaveRequest(inserts: [RowValues(entity: "Member", id: held, values: [
                "handle": .string("x"), "nickname": .string("a"), "bio": .string("alice's")])]), in: Self.schema, as: .user(alice), on: c)
            // What PostgreSQL does with the upsert SwiftData's rule suggests: it raises, where a plain UPDATE skips.
            let q = Naming.quoted(schemaName)
            let raw = await SharingSafetyTests.asUser(bob.id, c, SQLStatement(sql: """
                INSERT INTO \(q).member (id, entity, owner_id, handle, nickname, bio) VALUES ('\(UUID.v7())', 'Member', '\(bob.id)', 'x', 'b', 'bob') \
                ON CONFLICT (handle) DO UPDATE SET bio = EXCLUDED.bio
                """))
            guard case .failure(let error) = raw else { Issue.record("the upsert went through: \(raw)"); return }
            #expect(error.sqlState == "42501")
            // PGModel never sends it: its save skips the conflict, finds no row of Bob's, and answers "taken".
            await #expect {
                _ = try await engine.save(SaveRequest(inserts: [RowValues(entity: "Member", id: .v7(), values: [
                    "handle": .string("x"), "nickname": .string("b"), "bio": .string("bob")])]), in: Self.schema, as: .user(bob), on: c)
            } throws: { ($0 as? PGModelError)?.message == Self.takenMessage }
            let rows = try await engine.fetch(FetchRequest(entity: "Member"), in: Self.schema, as: .trusted, on: c)
            #expect(rows.map(\.id) == [held])
            #expect(rows.first?["bio"] == .string("alice's"))
        }
    }

    // MARK: Migration between the scopes

    @Test("a lightweight migration from per owner to all users over duplicates fails and changes nothing; without them it swaps the constraint, and back")
    func migrationBetweenScopes() async throws {
        let schemaName = TestDatabase.uniqueSchema("gum")
        let url = try TestDatabase.schemaURL(schemaName)
        let v1 = try await offCooperativePool {
            try ModelContainer(for: Schema(versionedSchema: ProfileSchemaV1.self), configurations: ModelConfiguration(url: url))
        }
        try await offCooperativePool {
            let context = ModelContext(v1)
            context.insert(ProfileSchemaV1.Profile(handle: "dup", bio: "direct"))
            try context.save()
        }
        await v1.close()
        // Another user holds the same handle: allowed per owner.
        let alice = try await ServerTestHarness.makeUser("gu_alice")
        let v1Schema = Schema(versionedSchema: ProfileSchemaV1.self).schemaDescription
        try await ServerTestHarness.withDatabase(schemaName: schemaName) { engine, connection in
            _ = try await engine.save(SaveRequest(inserts: [RowValues(entity: "Profile", id: .v7(), values: ["handle": .string("dup"), "bio": .string("alice")])]),
                                      in: v1Schema, as: .user(alice), on: connection)
        }
        let constraints = "SELECT string_agg(conname, ',' ORDER BY conname) FROM pg_constraint WHERE conrelid = '\"\(schemaName)\".profile'::regclass AND contype = 'u'"
        let unowned = "SELECT count(*) FROM pg_indexes WHERE schemaname = '\(schemaName)' AND indexname = 'profile_handle_unowned_key'"
        #expect(try await Inspect.strings(constraints) == ["profile_handle_key"])

        func open(_ version: any VersionedSchema.Type) async throws -> ModelContainer {
            try await offCooperativePool {
                try ModelContainer(for: Schema(versionedSchema: version), migrationPlan: ProfileMigrationPlan.self, configurations: ModelConfiguration(url: url))
            }
        }
        let failed = await #expect(throws: PGModelError.self) { _ = try await open(ProfileSchemaV2.self) }
        #expect(failed?.code == .migrationFailed)
        #expect(failed?.sqlState == "23505")
        #expect(try await Inspect.strings(constraints) == ["profile_handle_key"])
        #expect(try await Inspect.count(unowned) == 1)
        #expect(try await Inspect.count("SELECT count(*) FROM \"\(schemaName)\".profile WHERE handle = 'dup'") == 2)

        // Without the duplicate the stage runs: the constraint per owner and its index make way for one across all users.
        _ = try await Inspect.strings("DELETE FROM \"\(schemaName)\".profile WHERE owner_id IS NOT NULL RETURNING id::text")
        let v2 = try await open(ProfileSchemaV2.self)
        await v2.close()
        #expect(try await Inspect.strings(constraints) == ["profile_handle_all_users_key"])
        #expect(try await Inspect.count(unowned) == 0)
        let v2Schema = Schema(versionedSchema: ProfileSchemaV2.self).schemaDescription
        let aliceTakes: @Sendable (SchemaDescription) async throws -> Void = { schema in
            try await ServerTestHarness.withDatabase(schemaName: schemaName) { engine, connection in
                _ = try await engine.save(SaveRequest(inserts: [RowValues(entity: "Profile", id: .v7(), values: ["handle": .string("dup"), "bio": .string("alice")])]),
                                          in: schema, as: .user(alice), on: connection)
            }
        }
        await #expect { try await aliceTakes(v2Schema) } throws: { ($0 as? PGModelError)?.message == "Profile.handle is taken: its value is unique across all users" }

        // And back to per owner.
        let v3 = try await open(ProfileSchemaV3.self)
        await v3.close()
        #expect(try await Inspect.strings(constraints) == ["profile_handle_key"])
        #expect(try await Inspect.count(unowned) == 1)
        try await aliceTakes(Schema(versionedSchema: ProfileSchemaV3.self).schemaDescription)
        #expect(try await Inspect.count("SELECT count(*) FROM \"\(schemaName)\".profile WHERE handle = 'dup'") == 2)
        try await Inspect.drop(schemaName)
    }
}
