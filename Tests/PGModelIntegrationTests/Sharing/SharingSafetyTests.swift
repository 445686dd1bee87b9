import Foundation
import Logging
@_spi(PGModelInternals) import PGModel
@_spi(PGModelInternals) import PGModelCore
@_spi(PGModelInternals) @testable import PGModelPostgres
@_spi(PGModelInternals) import PGModelSQL
import PostgresNIO
import Testing

/// Correctness must not depend on any filter the service adds: the service's own rendered SQL, and
/// hand-written SQL, run as `pgmodel_app` for a stranger see and change nothing of anyone else.
@Suite("Sharing: PostgreSQL itself keeps users apart")
struct SharingSafetyTests {
    static let schema = Schema(SharingModels.types).schemaDescription
    static let logger: Logger = {
        var logger = Logger(label: "pgmodel.test.sharing")
        logger.logLevel = .warning
        return logger
    }()

    /// The result of running `statement` inside a transaction as `user` (pgmodel_app, their id), or the
    /// error's SQLSTATE. Rolled back: nothing a probe does stays.
    static func asUser(_ user: UUID?, _ connection: EngineConnection, _ statement: SQLStatement) async -> Result<Int, PGModelError> {
        let result: Result<Int, PGModelError>
        do {
            try await run(connection, SQLStatement(sql: "BEGIN"))
            if let user {
                try await run(connection, SQLStatement(
                    sql: "SELECT set_config('role', 'pgmodel_app', true), set_config('pgmodel.user_id', $1, true)",
                    binds: [.string(user.uuidString.lowercased())]))
            } else {
                try await run(connection, SQLStatement(sql: "SET LOCAL ROLE pgmodel_app"))
            }
            result = .success(try await run(connection, statement))
        } catch let error as PGModelError {
            result = .failure(error)
        } catch {
            result = .failure(PGModelError(.internalError, "\(error)"))
        }
        _ = try? await run(connection, SQLStatement(sql: "ROLLBACK"))
        return result
    }

    @discardableResult
    static func run(_ connection: EngineConnection, _ statement: SQLStatement) async throws -> Int {
        do {
            var count = 0
            for try await _ in try await connection.connection.query(try PostgresValueCoding.query(statement), logger: logger) { count += 1 }
            return count
        } catch {
            throw PostgresErrorMapping.map(error)
        }
    }

    @Test("the service's SQL without its filters, and raw SQL, as pgmodel_app for a stranger: no foreign row")
    func strangerSeesNothing() async throws {
        try await EngineTestStore.with(Self.schema, prefix: "rls", logger: Self.logger) { engine, c, schemaName in
            let suffix = ServerTestHarness.uniqueSuffix()
            let alice = try await engine.createUser(name: "rls_alice_\(suffix)", password: "x", isAdmin: false, on: c)
            let rita = try await engine.createUser(name: "rls_rita_\(suffix)", password: "x", isAdmin: false, on: c)
            let sam = try await engine.createUser(name: "rls_sam_\(suffix)", password: "x", isAdmin: false, on: c)
            let e = UUID.v7(), u = UUID.v7(), w = UUID.v7(), s = UUID.v7()
            _ = try await engine.save(SaveRequest(
                inserts: [RowValues(entity: "Expedition", id: e, values: ["code": .string("E"), "title": .string("E")]),
                          RowValues(entity: "Expedition", id: u, values: ["code": .string("U"), "title": .string("U")]),
                          RowValues(entity: "Waypoint", id: w, values: ["name": .string("W"), "expedition": .uuid(e)]),
                          RowValues(entity: "Supply", id: s, values: ["item": .string("S")])],
                links: [LinkChange(entity: "Expedition", relationship: "supplies", source: e, destination: s, isAdded: true)],
                shares: [ShareChange(record: RowReference(entity: "Expedition", id: e), user: rita.name, permission: .readOnly)]),
                in: Self.schema, as: .user(alice), on: c)
            let renderer = try SQLRenderer(schema: Self.schema, schemaName: schemaName)
            let q = Naming.quoted(schemaName)

            // The renderer's own statements: no owner filter anywhere, and still nothing for Sam.
            let reads: [SQLStatement] = [
                try renderer.select(FetchRequest(entity: "Expedition")),
                try renderer.select(FetchRequest(entity: "Waypoint", predicate: .string(.startsWith, .key("expedition.title"), .value(.string("E"))))),
                try renderer.select(FetchRequest(entity: "Supply", related: RelatedScope(entity: "Expedition", relationship: "supplies", ids: [e]))),
                try renderer.selectIdentifiers(FetchRequest(entity: "Expedition", predicate: .compare(.greater,
                    .aggregate(Aggregate(.count, relationship: "waypoints")), .value(.int(0))))),
                try renderer.lockRows(of: "Expedition", ids: [e, u]),
                try renderer.owners(of: "Expedition", ids: [e, u]),
                SQLStatement(sql: "SELECT * FROM \(q).\"expedition_supplies\""),
                SQLStatement(sql: "SELECT * FROM pgmodel.changes WHERE row_id IN ('\(e)', '\(u)', '\(w)')"),
                SQLStatement(sql: "SELECT * FROM pgmodel.transactions WHERE user_id = '\(alice.id)'"),
                SQLStatement(sql: "SELECT * FROM pgmodel.shares"),
                SQLStatement(sql: "SELECT * FROM pgmodel.share_list"),
            ]
            for statement in reads {
                #expect(await Self.asUser(sam.id, c, statement) == .success(0), "\(statement.sql)")
                #expect(await Self.asUser(nil, c, statement) == .success(0), "no user: \(statement.sql)")
            }
            // The owner sees hers; the reader what is shared (E, its waypoint and supply, not U).
            #expect(await Self.asUser(alice.id, c, try renderer.select(FetchRequest(entity: "Expedition"))) == .success(2))
            #expect(await Self.asUser(rita.id, c, try renderer.select(FetchRequest(entity: "Expedition"))) == .success(1))
            #expect(await Self.asUser(rita.id, c, try renderer.select(FetchRequest(entity: "Waypoint"))) == .success(1))
            #expect(await Self.asUser(rita.id, c, SQLStatement(sql: "SELECT * FROM \(q).\"expedition_supplies\"")) == .success(1))
            #expect(await Self.asUser(rita.id, c, SQLStatement(sql: "SELECT * FROM pgmodel.shares")) == .success(1))

            // Writes: the renderer's, with no filter, change nothing; some are refused outright.
            #expect(await Self.asUser(sam.id, c, try renderer.update(RowValues(entity: "Expedition", id: e, values: ["title": .string("x")]))) == .success(0))
            #expect(await Self.asUser(rita.id, c, try renderer.update(RowValues(entity: "Expedition", id: e, values: ["title": .string("x")]))) == .success(0))
            #expect(await Self.asUser(sam.id, c, try renderer.deleteRows(of: "Expedition", ids: [e, u])) == .success(0))
            #expect(await Self.asUser(rita.id, c, try renderer.deleteRows(of: "Waypoint", ids: [w])) == .success(0))
            #expect(await Self.asUser(sam.id, c, SQLStatement(sql: "DELETE FROM \(q).\"expedition_supplies\"")) == .success(0))
            #expect(await Self.asUser(sam.id, c, SQLStatement(sql: "DELETE FROM pgmodel.shares")) == .success(0))
            #expect(await Self.asUser(sam.id, c, SQLStatement(sql: "DELETE FROM pgmodel.changes")) == .success(0))
            func code(_ result: Result<Int, PGModelError>) -> PGModelError.Code? {
                if case .failure(let error) = result { return error.code }
                return nil
            }
            // Rows for someone else, a new owner, admin rights, password hashes: refused by PostgreSQL.
            #expect(code(await Self.asUser(sam.id, c, try renderer.insert(RowValues(entity: "Expedition", id: UUID.v7(),
                values: ["code": .string("Z"), "title": .string("Z")]), owner: alice.id))) == .forbidden)
            #expect(code(await Self.asUser(alice.id, c, SQLStatement(sql: "UPDATE \(q).expedition SET owner_id = '\(sam.id)'"))) == .forbidden)
            #expect(code(await Self.asUser(sam.id, c, SQLStatement(sql: "UPDATE pgmodel.users SET is_admin = true"))) == .forbidden)
            #expect(code(await Self.asUser(sam.id, c, SQLStatement(sql: "SELECT password_hash FROM pgmodel.users"))) == .forbidden)
            #expect(code(await Self.asUser(sam.id, c, SQLStatement(sql:
                "INSERT INTO pgmodel.shares (schema_name, root_entity, entity, row_id, owner_id, grantee_id, permission, granted_by) VALUES ('\(schemaName)', 'Expedition', 'Expedition', '\(e)', '\(alice.id)', '\(sam.id)', 'readWrite', 'sam')"))) == .forbidden)
            #expect(code(await Self.asUser(sam.id, c, SQLStatement(sql: "CREATE TABLE \(q).sneaky (id int)"))) == .forbidden)
            // A setting is no way in: admin status is read from pgmodel.users.
            #expect(await Self.asUser(sam.id, c, SQLStatement(sql:
                "SELECT 1 FROM \(q).expedition WHERE set_config('pgmodel.is_admin', 'on', true) IS NOT NULL")) == .success(0))
            // The database owner (the direct store, an admin's psql) still sees every row.
            #expect(try await Self.run(c, try renderer.select(FetchRequest(entity: "Expedition"))) == 2)
        }
    }

    @Test("a grantee's and an admin's changes to Alice's rows are Alice's history; nullified references too")
    func historyFollowsTheRowsOwner() async throws {
        try await EngineTestStore.with(Self.schema, prefix: "rlh", logger: Self.logger) { engine, c, _ in
            let suffix = ServerTestHarness.uniqueSuffix()
            let alice = try await engine.createUser(name: "rlh_alice_\(suffix)", password: "x", isAdmin: false, on: c)
            let will = try await engine.createUser(name: "rlh_will_\(suffix)", password: "x", isAdmin: false, on: c)
            let ada = try await engine.createUser(name: "rlh_ada_\(suffix)", password: "x", isAdmin: true, on: c)
            let sam = try await engine.createUser(name: "rlh_sam_\(suffix)", password: "x", isAdmin: false, on: c)
            let e = UUID.v7(), w = UUID.v7(), marker = UUID.v7()
            _ = try await engine.save(SaveRequest(
                inserts: [RowValues(entity: "Expedition", id: e, values: ["code": .string("E"), "title": .string("E")]),
                          RowValues(entity: "Waypoint", id: w, values: ["name": .string("W"), "expedition": .uuid(e)]),
                          RowValues(entity: "Marker", id: marker, values: ["note": .string("M"), "waypoint": .uuid(w)])],
                shares: [ShareChange(record: RowReference(entity: "Expedition", id: e), user: will.name, permission: .readWrite)]),
                in: Self.schema, as: .user(alice), on: c)
            _ = try await engine.save(SaveRequest(updates: [RowValues(entity: "Expedition", id: e, values: ["title": .string("by will")])], author: "will"),
                                      in: Self.schema, as: .user(will), on: c)
            _ = try await engine.save(SaveRequest(updates: [RowValues(entity: "Waypoint", id: w, values: ["name": .string("by ada")])], author: "ada"),
                                      in: Self.schema, as: .user(ada), on: c)
            // Deleting the waypoint sets the marker's reference to NULL: an update of Alice's marker.
            _ = try await engine.save(SaveRequest(deletes: [RowReference(entity: "Waypoint", id: w)], author: "will-delete"),
                                      in: Self.schema, as: .user(will), on: c)
            func changes(as user: AuthenticatedUser) async throws -> [(author: String?, kind: HistoryChangeRecord.Kind, id: UUID, attributes: [String])] {
                let page = try await engine.fetchHistory(HistoryRequest(), as: .user(user), on: c)
                return page.transactions.flatMap { t in t.changes.map { (t.author, $0.kind, $0.id, $0.updatedAttributes) } }
            }
            let aliceSees = try await changes(as: alice)
            #expect(aliceSees.contains { $0.author == "will" && $0.kind == .update && $0.id == e })
            #expect(aliceSees.contains { $0.author == "ada" && $0.kind == .update && $0.id == w })
            #expect(aliceSees.contains { $0.author == "will-delete" && $0.kind == .delete && $0.id == w })
            #expect(aliceSees.contains { $0.author == "will-delete" && $0.kind == .update && $0.id == marker && $0.attributes == ["waypoint"] })
            // The owner of each change row is Alice, whoever saved it.
            let owners = try await SharingTests.trusted("public", "SELECT DISTINCT owner_id::text FROM pgmodel.changes WHERE NOT audience_only AND row_id IN ('\(e)', '\(w)', '\(marker)')")
            #expect(owners == [alice.id.uuidString.lowercased()])
            // Will's history: the shared records appearing for him (the share), his own changes, and the
            // delete of a row shared with him.
            let willSees = try await changes(as: will)
            #expect(willSees.contains { $0.author == nil && $0.kind == .insert && $0.id == e })
            #expect(willSees.contains { $0.author == "will" && $0.kind == .update && $0.id == e })
            #expect(willSees.contains { $0.author == "will-delete" && $0.kind == .delete && $0.id == w })
            // Sam sees none of it.
            #expect(try await changes(as: sam).filter { [e, w, marker].contains($0.id) }.isEmpty)
        }
    }

    @Test("tables registered without the row-level security layout (an older PGModel) get it at the next registration")
    func upgradeSecuresExistingTables() async throws {
        try await EngineTestStore.with(Self.schema, prefix: "rlu", logger: Self.logger) { engine, c, schemaName in
            let q = Naming.quoted(schemaName)
            try await Self.run(c, SQLStatement(sql: "ALTER TABLE \(q).expedition DISABLE ROW LEVEL SECURITY"))
            try await Self.run(c, SQLStatement(sql: "DROP FUNCTION \(q).pgmodel_share_audience(text[], uuid[])"))
            try await engine.prepare(Self.schema, on: c)   // registered with the same shape: still secured again
            #expect(try await Self.run(c, SQLStatement(sql:
                "SELECT 1 FROM pg_class WHERE oid = '\(q).expedition'::regclass AND relrowsecurity AND relforcerowsecurity")) == 1)
            #expect(try await Self.run(c, SQLStatement(sql: "SELECT to_regprocedure('\(q).pgmodel_share_audience(text[], uuid[])') WHERE to_regprocedure('\(q).pgmodel_share_audience(text[], uuid[])') IS NOT NULL")) == 1)
        }
    }

    @Test("schema rights: a user registers only what exists, with the same shape; nothing is altered")
    func usersDoNotChangeTables() async throws {
        let user = try await ServerTestHarness.makeUser("schemer")
        try await SharingTests.withService { port, schemaName in
            let store = try await SharingTests.store(user, port)   // the registered shape: fine
            defer { Task { await store.close() } }
            var changed = Self.schema
            if let i = changed.entities.firstIndex(where: { $0.name == "Expedition" }),
               let j = changed.entities[i].attributes.firstIndex(where: { $0.name == "title" }) {
                changed.entities[i].attributes[j].type = .int64
            }
            let retyped = await SharingTests.code { try await store.prepare(changed) }
            #expect(retyped == .forbidden)
            var cascade = Self.schema
            if let i = cascade.entities.firstIndex(where: { $0.name == "Marker" }),
               let j = cascade.entities[i].relationships.firstIndex(where: { $0.name == "waypoint" }) {
                cascade.entities[i].relationships[j].deleteRule = .cascade
            }
            #expect(await SharingTests.code { try await store.prepare(cascade) } == .forbidden)
            let newEntity = SchemaDescription(entities: [EntityDescription(name: "Sneaky", attributes: [AttributeDescription(name: "x", type: .string)])])
            #expect(await SharingTests.code { try await store.prepare(newEntity) } == .forbidden)
            #expect(try await SharingTests.trusted(schemaName,
                "SELECT data_type FROM information_schema.columns WHERE table_schema = '\(schemaName)' AND table_name = 'expedition' AND column_name = 'title'") == ["text"])
            #expect(try await SharingTests.trusted(schemaName, "SELECT count(*)::text FROM pg_tables WHERE schemaname = '\(schemaName)' AND tablename = 'sneaky'") == ["0"])
        }
    }

    @Test("hostile strings in shares: user names, entity names and ids never execute; errors are typed")
    func hostileShares() async throws {
        let alice = try await ServerTestHarness.makeUser("hostile")
        try await SharingTests.withService { port, schemaName in
            let store = try await SharingTests.store(alice, port)
            defer { Task { await store.close() } }
            let e = UUID.v7()
            _ = try await store.save(SaveRequest(inserts: [RowValues(entity: "Expedition", id: e, values: ["code": .string("'; DROP TABLE x; --"), "title": .string("\\\"")])]))
            for name in ["'; DROP TABLE pgmodel.users; --", "robert\"); DELETE FROM pgmodel.shares; --", "$1", "nobody"] {
                let outcome = await SharingTests.code {
                    _ = try await store.save(SaveRequest(shares: [ShareChange(record: RowReference(entity: "Expedition", id: e), user: name, permission: .readOnly)]))
                }
                #expect(outcome == .notFound, "\(name)")
            }
            #expect(await SharingTests.code {
                _ = try await store.save(SaveRequest(shares: [ShareChange(record: RowReference(entity: "Expedition\"; DROP TABLE x; --", id: e), user: alice.name, permission: .readOnly)]))
            } == .unknownEntity)
            #expect(await SharingTests.code {
                _ = try await store.save(SaveRequest(shares: [ShareChange(record: RowReference(entity: "Expedition", id: e), user: alice.name, permission: .readOnly)]))
            } == .invalidField)   // shared with its own owner
            #expect(try await SharingTests.trusted(schemaName, "SELECT count(*)::text FROM pgmodel.users WHERE id = '\(alice.id)'") == ["1"])
            #expect(try await SharingTests.trusted(schemaName, "SELECT code FROM \"\(schemaName)\".expedition WHERE id = '\(e)'") == ["'; DROP TABLE x; --"])
            // Over the raw protocol: a bad id, a missing permission, an unknown op field type.
            let client = try await RawProtocolClient.connect(port: port)
            defer { Task { await client.close() } }
            #expect(try await RawProtocolTests.hello(client, alice.name, "secret").ok == true)
            let badID = try await client.request(#"{"id":2,"op":"share","entity":"Expedition","rowID":"1; DROP","user":"bob","permission":"readOnly"}"#)
            #expect(badID.code == "invalid_field")
            let noPermission = try await client.request(#"{"id":3,"op":"share","entity":"Expedition","rowID":"\#(e.uuidString)","user":"bob"}"#)
            #expect(noPermission.code == "missing_field")
            let listed = try await client.request(#"{"id":4,"op":"shares","entity":"Expedition","rowID":"\#(e.uuidString)"}"#)
            #expect(listed.ok == true && (listed.object["shares"] as? [Any])?.isEmpty == true, "\(listed)")
        }
    }
}
