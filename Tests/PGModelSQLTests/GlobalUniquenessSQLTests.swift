import Foundation
@_spi(PGModelInternals) import PGModelCore
@_spi(PGModelInternals) import PGModelSQL
import Testing

/// Uniqueness across all users beside uniqueness per owner: the DDL an admin sees, the migration between
/// the two, the upsert that never reaches another user's row, the grantee trigger's arguments, and the
/// schema's JSON.
@Suite("SQL renderer: uniqueness across all users")
struct GlobalUniquenessSQLTests {
    /// `@Attribute(.globallyUnique) var handle`, `@Attribute(.unique) var nickname`,
    /// `#Unique<Member>([\.slug, \.region], scope: .allUsers)`.
    static func member(handle: UniquenessScope? = .allUsers) -> EntityDescription {
        EntityDescription(
            name: "Member",
            attributes: [
                AttributeDescription(name: "handle", type: .string, isUnique: handle == .owner, isGloballyUnique: handle == .allUsers),
                AttributeDescription(name: "nickname", type: .string, isUnique: true),
                AttributeDescription(name: "slug", type: .string, isOptional: true),
                AttributeDescription(name: "region", type: .string, isOptional: true),
            ],
            uniquenessConstraints: [UniquenessConstraintDescription(["slug", "region"], scope: .allUsers)])
    }

    static func renderer(_ entity: EntityDescription = member()) throws -> SQLRenderer {
        try SQLRenderer(schema: SchemaDescription(entities: [entity]), schemaName: "app")
    }

    @Test("a constraint across all users is UNIQUE without owner_id, named …_all_users_key; per owner stays as it was")
    func ddl() throws {
        let entity = Self.member()
        #expect(entity.uniquenessConstraints == [UniquenessConstraintDescription(["slug", "region"], scope: .allUsers), ["nickname"],
                                                 UniquenessConstraintDescription(["handle"], scope: .allUsers)])
        let ddl = try Self.renderer().createStatements()
        #expect(ddl.contains(#"DO $pgmodel$ BEGIN IF NOT EXISTS (SELECT 1 FROM pg_constraint WHERE conname = 'member_handle_all_users_key' AND conrelid = '"app"."member"'::regclass) THEN ALTER TABLE "app"."member" ADD CONSTRAINT "member_handle_all_users_key" UNIQUE ("handle"); END IF; END $pgmodel$"#))
        #expect(ddl.contains { $0.contains(#"ADD CONSTRAINT "member_slug_region_all_users_key" UNIQUE ("slug", "region")"#) })
        // No per-owner constraint or partial index for them: the one constraint covers owned and unowned rows.
        #expect(!ddl.contains { $0.contains("member_handle_key") || $0.contains("member_handle_unowned_key") })
        #expect(!ddl.contains { $0.contains("member_slug_region_key") })
        #expect(ddl.contains { $0.contains(#"ADD CONSTRAINT "member_nickname_key" UNIQUE ("owner_id", "nickname")"#) })
        #expect(ddl.contains(#"CREATE UNIQUE INDEX IF NOT EXISTS "member_nickname_unowned_key" ON "app"."member" ("nickname") WHERE "owner_id" IS NULL"#))
    }

    @Test("a grantee is refused only the columns of constraints per owner")
    func granteeTrigger() throws {
        let security = try Self.renderer().securityStatements()
        #expect(security.contains { $0.contains(#"EXECUTE FUNCTION "pgmodel"."check_references"('v3', 'Member', 'nickname')"#) })
        // A column in both kinds of constraint is refused: the per-owner comparison would tell.
        var both = Self.member()
        both.uniquenessConstraints.append(["slug"])
        let refused = try Self.renderer(both).securityStatements()
        #expect(refused.contains { $0.contains(#""check_references"('v3', 'Member', 'nickname,slug')"#) })
    }

    @Test("a lightweight migration between the scopes drops one constraint and adds the other")
    func migration() throws {
        func statements(from old: UniquenessScope, to new: UniquenessScope) throws -> [String] {
            try Self.renderer(Self.member(handle: new))
                .migrationStatements(from: SchemaDescription(entities: [Self.member(handle: old)])).map(\.sql)
        }
        let toGlobal = try statements(from: .owner, to: .allUsers)
        let dropOwner = try #require(toGlobal.firstIndex(of: #"ALTER TABLE "app"."member" DROP CONSTRAINT IF EXISTS "member_handle_key""#))
        #expect(toGlobal.contains(#"DROP INDEX IF EXISTS "app"."member_handle_unowned_key""#))
        let addGlobal = try #require(toGlobal.firstIndex { $0.contains(#"ADD CONSTRAINT "member_handle_all_users_key" UNIQUE ("handle")"#) })
        #expect(dropOwner < addGlobal)
        #expect(!toGlobal.contains { $0.contains("DROP CONSTRAINT IF EXISTS \"member_nickname_key\"") })

        let toOwner = try statements(from: .allUsers, to: .owner)
        #expect(toOwner.contains(#"ALTER TABLE "app"."member" DROP CONSTRAINT IF EXISTS "member_handle_all_users_key""#))
        #expect(toOwner.contains { $0.contains(#"ADD CONSTRAINT "member_handle_key" UNIQUE ("owner_id", "handle")"#) })
        #expect(toOwner.contains(#"CREATE UNIQUE INDEX IF NOT EXISTS "member_handle_unowned_key" ON "app"."member" ("handle") WHERE "owner_id" IS NULL"#))
        // Unchanged: nothing of the handle's constraints is dropped.
        #expect(!(try statements(from: .allUsers, to: .allUsers)).contains { $0.contains(#"DROP CONSTRAINT IF EXISTS "member_handle_all_users_key""#) })
    }

    @Test("an insert meeting either kind skips the row; the upsert then looks only among the owner's rows")
    func upsert() throws {
        let renderer = try Self.renderer(EntityDescription(
            name: "Member", attributes: [AttributeDescription(name: "handle", type: .string, isGloballyUnique: true)]))
        let owner = UUID(uuidString: "00000000-0000-7000-8000-000000000001")!
        let id = UUID(uuidString: "00000000-0000-7000-8000-0000000000aa")!
        let row = RowValues(entity: "Member", id: id, values: ["handle": .string("x")])
        #expect(try renderer.insert(row, owner: owner).sql == #"INSERT INTO "app"."member" ("id", "entity", "owner_id", "handle") VALUES ($1, $2, $3, $4) ON CONFLICT DO NOTHING RETURNING "id""#)
        #expect(renderer.insertReturnsIDs(of: ["Member"], upserting: true))
        let update = try #require(try renderer.upsertUpdate(row, owner: owner))
        #expect(update.sql == #"UPDATE "app"."member" SET "handle" = $1 FROM (SELECT "id", "handle" FROM "app"."member" WHERE (("handle" = $2)) AND "owner_id" = $3 ORDER BY "id" LIMIT 1 FOR UPDATE) AS "replaced" WHERE "app"."member"."id" = "replaced"."id" RETURNING "app"."member"."id", "replaced"."handle""#)
        let direct = try #require(try renderer.upsertUpdate(row, owner: nil))
        #expect(direct.sql.contains(#"AND "owner_id" IS NULL ORDER BY "id" LIMIT 1 FOR UPDATE) AS "replaced""#))
    }

    @Test("PostgreSQL's constraint name becomes the one answer naming the model and attributes; other constraints are left alone")
    func valueTaken() throws {
        let renderer = try Self.renderer()
        let taken = try #require(renderer.valueTaken(constraint: "member_handle_all_users_key", model: "Member"))
        #expect(taken.code == .uniqueViolation)
        #expect(taken.model == "Member")
        #expect(taken.keyPath == "handle")
        #expect(taken.message == "Member.handle is taken: its value is unique across all users")
        #expect(taken.isValueTaken)
        let group = try #require(renderer.valueTaken(constraint: "member_slug_region_all_users_key", model: nil))
        #expect(group.message == "Member.slug, Member.region are taken: their values are unique together across all users")
        #expect(group.isValueTaken)
        #expect(renderer.valueTaken(constraint: "member_nickname_key", model: "Member") == nil)
        #expect(renderer.valueTaken(constraint: "member_pkey", model: "Member") == nil)
        #expect(!PGModelError(.uniqueViolation, "a write on Member breaks uniqueness constraint member_nickname_key", model: "Member").isValueTaken)
    }

    @Test("the schema's JSON: constraints per owner keep their array form, a scope is an object; old registrations read per owner")
    func json() throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        let text = String(decoding: try encoder.encode(Self.member()), as: UTF8.self)
        #expect(text.contains(#""uniquenessConstraints":[{"attributes":["slug","region"],"scope":"allUsers"},["nickname"],{"attributes":["handle"],"scope":"allUsers"}]"#))
        #expect(text.contains(#"{"columnName":"handle","isExternal":false,"isGloballyUnique":true,"isOpaque":false"#))
        // An attribute without it encodes as before scopes existed.
        #expect(text.contains(#"{"columnName":"nickname","isExternal":false,"isOpaque":false"#))
        #expect(try JSONDecoder().decode(EntityDescription.self, from: Data(text.utf8)) == Self.member())
        let old = #"{"name":"Trip","tableName":"trip","attributes":[{"name":"name","columnName":"name","type":"string","isUnique":true}],"uniquenessConstraints":[["name"]]}"#
        let decoded = try JSONDecoder().decode(EntityDescription.self, from: Data(old.utf8))
        #expect(decoded.uniquenessConstraints == [UniquenessConstraintDescription(["name"], scope: .owner)])
        #expect(decoded.attributes.first?.isGloballyUnique == false)
        let noScope = #"{"name":"Trip","tableName":"trip","attributes":[],"uniquenessConstraints":[{"attributes":["name"]}]}"#
        #expect(try JSONDecoder().decode(EntityDescription.self, from: Data(noScope.utf8)).uniquenessConstraints.first?.scope == .owner)
        let unknown = #"{"name":"Trip","tableName":"trip","attributes":[],"uniquenessConstraints":[{"attributes":["name"],"scope":"world"}]}"#
        #expect(throws: (any Error).self) { try JSONDecoder().decode(EntityDescription.self, from: Data(unknown.utf8)) }
    }

    @Test("a registration that changes a constraint's scope is another shape")
    func difference() throws {
        let registered = SchemaDescription(entities: [Self.member(handle: .owner)])
        let difference = registered.firstDifference(registering: SchemaDescription(entities: [Self.member()]))
        #expect(difference?.description == "Member.handle is registered with other options")
        var sameAttributes = Self.member()
        sameAttributes.uniquenessConstraints[0].scope = .owner
        #expect(SchemaDescription(entities: [Self.member()]).firstDifference(registering: SchemaDescription(entities: [sameAttributes]))?.description
                == "Member is registered with other uniqueness constraints")
    }
}
