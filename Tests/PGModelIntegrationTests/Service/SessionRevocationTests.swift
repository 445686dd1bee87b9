import Foundation
import Logging
import NIOCore
@_spi(PGModelInternals) import PGModelCore
@_spi(PGModelInternals) @testable import PGModelPostgres
@_spi(PGModelInternals) @testable import PGModelServer
import NIOPosix
@_spi(PGModelInternals) import PGModelWire
import PostgresNIO
import Testing

/// A logged-in connection keeps its user as read at login; when that user changes (password, admin flag,
/// removal) or an operator ends their sessions, every connection of theirs is closed with
/// `session_revoked` (sql/014_pgmodel_sessions.sql, SessionRegistry). Real PostgreSQL, a real LineServer
/// over TCP, and the real `pgmodel` binary for the commands.
@Suite("Session revocation")
struct SessionRevocationTests {
    static let logger = ServerTestHarness.logger

    static func login(_ client: RawProtocolClient, _ user: String, password: String = "secret") async throws -> RawResponse {
        let name = try #require(String(data: try JSONEncoder().encode(user), encoding: .utf8))
        let secret = try #require(String(data: try JSONEncoder().encode(password), encoding: .utf8))
        return try await client.request(#"{"id":0,"op":"hello","user":\#(name),"password":\#(secret),"protocol":1}"#)
    }

    /// Expects the server's closing notice (`session_revoked`, id null) and then the end of the connection,
    /// each within a bounded wait.
    static func expectRevoked(_ client: RawProtocolClient, _ comment: Comment) async throws {
        let notice = try RawResponse(try await client.readLine(timeout: .seconds(20)))
        #expect(notice.idIsNull && notice.code == "session_revoked", "\(comment): \(notice)")
        try await client.expectClosed(timeout: .seconds(20))
    }

    /// Runs plain SQL as the tables' owner; returns the rows as text.
    static func sql(_ text: String, _ binds: [String] = []) async throws -> [[String?]] {
        try await ServerTestHarness.withDatabase { _, connection in
            var bindings = PostgresBindings()
            for bind in binds { bindings.append(bind) }
            let rows = try await connection.connection.query(PostgresQuery(unsafeSQL: text, binds: bindings), logger: logger).collect()
            return try rows.map { row in try row.map { cell in try cell.decode(String?.self) } }
        }
    }

    static func databaseURL(schema: String? = nil) throws -> String {
        let url = try TestDatabase.url()
        guard let schema else { return url }
        return url + (url.contains("?") ? "&" : "?") + "schema=" + schema
    }

    @Test("pgmodel user passwd closes both of the user's connections with session_revoked; the new password logs in, the old one not")
    func passwordChangeClosesSessions() async throws {
        let alice = try await ServerTestHarness.makeUser("rev_alice")
        let bob = try await ServerTestHarness.makeUser("rev_bob")
        try await ServerTestHarness.withServer { port in
            let a = try await RawProtocolClient.connect(port: port)
            let b = try await RawProtocolClient.connect(port: port)
            let other = try await RawProtocolClient.connect(port: port)
            #expect(try await Self.login(a, alice.name).ok == true)
            #expect(try await Self.login(b, alice.name).ok == true)
            #expect(try await Self.login(other, bob.name).ok == true)

            let changed = try await ShareCommandTests.run(["user", "passwd", alice.name, "--password", "n3w-secret", "--database-url", try Self.databaseURL()])
            #expect(changed.status == 0, "\(changed.error)")
            try await Self.expectRevoked(a, "first connection")
            try await Self.expectRevoked(b, "second connection")

            // Another user's connection is untouched.
            #expect(try await other.request(#"{"id":1,"op":"ping"}"#).ok == true)

            let fresh = try await RawProtocolClient.connect(port: port)
            #expect(try await Self.login(fresh, alice.name).code == "authentication_failed")
            #expect(try await Self.login(fresh, alice.name, password: "n3w-secret").ok == true)
            #expect(try await fresh.request(#"{"id":2,"op":"ping"}"#).ok == true)
            for client in [a, b, other, fresh] { await client.close() }
        }
    }

    @Test("demoting an admin closes their sessions; a forged doorbell ring closes nothing")
    func demotionClosesSessions() async throws {
        let admin = try await ServerTestHarness.makeUser("rev_admin", admin: true)
        try await ServerTestHarness.withServer { port in
            let a = try await RawProtocolClient.connect(port: port)
            let hello = try await Self.login(a, admin.name)
            #expect(hello.ok == true)

            // Anyone with a database role may ring: the server re-reads the user, whose epoch is unchanged.
            _ = try await Self.sql("SELECT pg_notify('pgmodel_changes', $1)", [#"{"u":["\#(admin.id.uuidString.lowercased())"]}"#])
            #expect(try await a.request(#"{"id":1,"op":"ping"}"#).ok == true)

            _ = try await Self.sql("UPDATE pgmodel.users SET is_admin = false WHERE name = $1", [admin.name])
            // Hints are handled in order: the close proves the forged one came first and closed nothing.
            try await Self.expectRevoked(a, "demoted admin")
            await a.close()
        }
    }

    @Test("removing a user (pgmodel user remove) closes their sessions")
    func removalClosesSessions() async throws {
        let carol = try await ServerTestHarness.makeUser("rev_carol")
        try await ServerTestHarness.withServer { port in
            let a = try await RawProtocolClient.connect(port: port)
            #expect(try await Self.login(a, carol.name).ok == true)
            let removed = try await ShareCommandTests.run(["user", "remove", carol.name, "--delete-rows", "--json", "--database-url", try Self.databaseURL()])
            #expect(removed.status == 0, "\(removed.error)")
            try await Self.expectRevoked(a, "removed user")
            #expect(try await Self.sql("SELECT count(*)::text FROM pgmodel.users WHERE name = $1", [carol.name]) == [["0"]])
            await a.close()
        }
    }

    @Test("pgmodel sessions list shows a user's live sessions; sessions disconnect closes them on the server and they leave the list")
    func listAndDisconnect() async throws {
        let dave = try await ServerTestHarness.makeUser("rev_dave")
        try await ServerTestHarness.withServer { port in
            let a = try await RawProtocolClient.connect(port: port)
            let b = try await RawProtocolClient.connect(port: port)
            #expect(try await Self.login(a, dave.name).ok == true)
            #expect(try await Self.login(b, dave.name).ok == true)
            let url = try Self.databaseURL()

            let listed = try await ShareCommandTests.run(["sessions", "list", "--user", dave.name, "--json", "--database-url", url])
            #expect(listed.status == 0, "\(listed.error)")
            let sessions = try #require(try JSONSerialization.jsonObject(with: Data(listed.output.utf8)) as? [[String: Any]], "\(listed.output)")
            #expect(sessions.count == 2, "\(listed.output)")
            #expect(sessions.allSatisfy { $0["userName"] as? String == dave.name && $0["clientAddress"] as? String == "127.0.0.1" })
            let plain = try await ShareCommandTests.run(["sessions", "list", "--database-url", url])
            #expect(plain.output.contains(dave.name) && plain.output.hasPrefix("USER"), "\(plain.output)")

            let disconnected = try await ShareCommandTests.run(["sessions", "disconnect", dave.name, "--database-url", url])
            #expect(disconnected.status == 0, "\(disconnected.error)")
            #expect(disconnected.output.contains("disconnecting 2 sessions"), "\(disconnected.output)")
            try await Self.expectRevoked(a, "first connection")
            try await Self.expectRevoked(b, "second connection")

            // The rows go when the server has closed the connections: wait for that, bounded.
            let deadline = ContinuousClock.now + .seconds(20)
            var remaining = -1
            repeat {
                remaining = try await ServerTestHarness.withDatabase { engine, connection in
                    try await engine.listSessions(user: dave.name, on: connection).count
                }
                if remaining == 0 { break }
                try await Task.sleep(for: .milliseconds(50))
            } while ContinuousClock.now < deadline
            #expect(remaining == 0)

            let unknown = try await ShareCommandTests.run(["sessions", "disconnect", "nobody_\(ServerTestHarness.uniqueSuffix())", "--database-url", url])
            #expect(unknown.status != 0 && unknown.error.contains("[not_found]"), "\(unknown.error)")
            await a.close()
            await b.close()
        }
    }

    @Test("the trigger bumps session_epoch on a new password, admin flag or name, not on a login's re-hash; session_list hides a dead instance's sessions")
    func sqlLevel() async throws {
        let erin = try await ServerTestHarness.makeUser("rev_erin")
        let epoch = { try await Self.sql("SELECT session_epoch::text FROM pgmodel.users WHERE name = $1", [erin.name]).first?.first ?? nil }
        #expect(try await epoch() == "0")
        _ = try await Self.sql("UPDATE pgmodel.users SET password_hash = crypt('x', gen_salt('bf', 4)) WHERE name = $1", [erin.name])
        #expect(try await epoch() == "1")
        _ = try await Self.sql("UPDATE pgmodel.users SET is_admin = true WHERE name = $1", [erin.name])
        #expect(try await epoch() == "2")
        _ = try await Self.sql("UPDATE pgmodel.users SET created_at = created_at WHERE name = $1", [erin.name])
        #expect(try await epoch() == "2", "nothing a session relies on changed")
        _ = try await ServerTestHarness.withDatabase { engine, connection in
            // A cost-4 hash is raised at the next login: the same password, so the sessions stay.
            try await engine.setPassword(user: erin.name, password: "secret", on: connection)
        }
        #expect(try await epoch() == "3")
        _ = try await Self.sql("UPDATE pgmodel.users SET password_hash = crypt('secret', gen_salt('bf', 4)) WHERE name = $1", [erin.name])
        let before = try await epoch()
        _ = try await ServerTestHarness.withDatabase { engine, connection in
            try await engine.authenticate(user: erin.name, password: "secret", on: connection)
        }
        #expect(try await epoch() == before, "the login's re-hash kept the epoch")
        let cost = try await Self.sql("SELECT substring(password_hash from 5 for 2) FROM pgmodel.users WHERE name = $1", [erin.name])
        #expect(cost.first?.first ?? nil != "04", "the login did re-hash")

        // A dead instance (no such backend) with a session: hidden from session_list, purged by a start.
        let dead = UUID(), session = UUID()
        _ = try await Self.sql("""
            INSERT INTO pgmodel.service_instances (id, backend_pid, backend_start, host, version, schema_name)
            VALUES ($1::uuid, 0, now(), 'gone', 'test', 'public')
            """, [dead.uuidString])
        _ = try await Self.sql("INSERT INTO pgmodel.sessions (id, instance_id, user_id, client_address, tls) VALUES ($1::uuid, $2::uuid, $3::uuid, '192.0.2.1', false)",
                               [session.uuidString, dead.uuidString, erin.id.uuidString])
        #expect(try await Self.sql("SELECT count(*)::text FROM pgmodel.session_list WHERE id = $1::uuid", [session.uuidString]) == [["0"]])

        // A live one: this connection's own backend stands in for a doorbell connection.
        try await ServerTestHarness.withDatabase { engine, connection in
            let live = UUID(), mine = UUID()
            try await engine.registerInstance(id: live, host: "here", version: "test", on: connection)
            try await engine.recordSessions([RecordedSession(id: mine, userID: erin.id, clientAddress: "198.51.100.7", tls: true)], instance: live, on: connection)
            let listed = try await engine.listSessions(user: erin.name, on: connection)
            #expect(listed.map(\.id) == [mine] && listed.first?.tls == true && listed.first?.instanceHost == "here")
            try await engine.purgeDeadInstances(on: connection)
            #expect(try await engine.listSessions(user: erin.name, on: connection).map(\.id) == [mine], "a live instance is kept")
            try await engine.removeInstance(id: live, on: connection)
        }
        #expect(try await Self.sql("SELECT count(*)::text FROM pgmodel.service_instances WHERE id = $1::uuid", [dead.uuidString]) == [["0"]],
                "the purge removed the dead instance")
        #expect(try await Self.sql("SELECT count(*)::text FROM pgmodel.sessions WHERE id = $1::uuid", [session.uuidString]) == [["0"]])

        // Service users read nothing of it.
        let denied = try await Self.sql("""
            SELECT has_table_privilege('pgmodel_app', 'pgmodel.sessions', 'SELECT')::text,
                   has_table_privilege('pgmodel_app', 'pgmodel.session_list', 'SELECT')::text,
                   has_table_privilege('pgmodel_app', 'pgmodel.service_instances', 'SELECT')::text
            """)
        #expect(denied == [["false", "false", "false"]])
    }

    @Test("user remove: --hand-over-to gives rows and the shares granted on them to the other user; a per-owner unique value they both hold changes nothing")
    func removeHandsOver() async throws {
        let schemaName = TestDatabase.uniqueSchema("rm")
        try await ServerTestHarness.register(SharingTests.schema, schemaName: schemaName)
        let frank = try await ServerTestHarness.makeUser("rm_frank")
        let gina = try await ServerTestHarness.makeUser("rm_gina")
        let hal = try await ServerTestHarness.makeUser("rm_hal")
        let mine = UUID.v7(), clash = UUID.v7(), ginas = UUID.v7()
        try await ServerTestHarness.withDatabase(schemaName: schemaName) { engine, connection in
            _ = try await engine.save(SaveRequest(inserts: [
                RowValues(entity: "Expedition", id: mine, values: ["code": .string("A"), "title": .string("Frank's")]),
                RowValues(entity: "Expedition", id: clash, values: ["code": .string("SAME"), "title": .string("Frank's too")]),
            ]), in: SharingTests.schema, as: .user(frank), on: connection)
            _ = try await engine.save(SaveRequest(inserts: [
                RowValues(entity: "Expedition", id: ginas, values: ["code": .string("SAME"), "title": .string("Gina's")]),
            ]), in: SharingTests.schema, as: .user(gina), on: connection)
        }
        let url = try Self.databaseURL(schema: schemaName)
        #expect(try await ShareCommandTests.run(["share", "Expedition", mine.uuidString.lowercased(), hal.name, "--database-url", url]).status == 0)
        #expect(try await ShareCommandTests.run(["share", "Expedition", ginas.uuidString.lowercased(), frank.name, "--database-url", url]).status == 0)

        let both = try await ShareCommandTests.run(["user", "remove", frank.name, "--delete-rows", "--hand-over-to", gina.name, "--database-url", url])
        #expect(both.status != 0 && both.error.contains("exactly one"), "\(both.error)")

        let refused = try await ShareCommandTests.run(["user", "remove", frank.name, "--hand-over-to", gina.name, "--database-url", url])
        #expect(refused.status != 0 && refused.error.contains("Expedition") && refused.error.contains("[unique_violation]"), "\(refused.error)")
        let owners = "SELECT count(*)::text FROM \(Naming.quoted(schemaName)).expedition WHERE owner_id = $1::uuid"
        #expect(try await Self.sql(owners, [frank.id.uuidString]) == [["2"]], "nothing changed")

        _ = try await Self.sql("DELETE FROM \(Naming.quoted(schemaName)).expedition WHERE id = $1::uuid", [clash.uuidString])
        let handed = try await ShareCommandTests.run(["user", "remove", frank.name, "--hand-over-to", gina.name, "--database-url", url])
        #expect(handed.status == 0, "\(handed.error)")
        #expect(handed.error.contains("\(schemaName).expedition (Expedition): 1 row handed over"), "progress on stderr: \(handed.error)")
        #expect(try await Self.sql(owners, [gina.id.uuidString]) == [["2"]])
        let shares = try await Self.sql("SELECT owner, grantee FROM pgmodel.share_list WHERE schema_name = $1 ORDER BY grantee", [schemaName])
        #expect(shares == [[gina.name, hal.name]], "hal's share moved to gina; the share to frank went with him")
        #expect(try await Self.sql("SELECT count(*)::text FROM pgmodel.users WHERE id = $1::uuid", [frank.id.uuidString]) == [["0"]])
    }

    @Test("user remove --delete-rows deletes the user's rows and the shares on them")
    func removeDeletesRows() async throws {
        let schemaName = TestDatabase.uniqueSchema("rm")
        try await ServerTestHarness.register(SharingTests.schema, schemaName: schemaName)
        let ivy = try await ServerTestHarness.makeUser("rm_ivy")
        let jon = try await ServerTestHarness.makeUser("rm_jon")
        let hers = UUID.v7(), his = UUID.v7()
        try await ServerTestHarness.withDatabase(schemaName: schemaName) { engine, connection in
            _ = try await engine.save(SaveRequest(inserts: [RowValues(entity: "Expedition", id: hers, values: ["code": .string("I"), "title": .string("Ivy's")])]),
                                      in: SharingTests.schema, as: .user(ivy), on: connection)
            _ = try await engine.save(SaveRequest(inserts: [RowValues(entity: "Expedition", id: his, values: ["code": .string("J"), "title": .string("Jon's")])]),
                                      in: SharingTests.schema, as: .user(jon), on: connection)
        }
        let url = try Self.databaseURL(schema: schemaName)
        #expect(try await ShareCommandTests.run(["share", "Expedition", hers.uuidString.lowercased(), jon.name, "--database-url", url]).status == 0)
        let removed = try await ShareCommandTests.run(["user", "remove", ivy.name, "--delete-rows", "--json", "--database-url", url])
        #expect(removed.status == 0, "\(removed.error)")
        let report = try #require(try JSONSerialization.jsonObject(with: Data(removed.output.utf8)) as? [String: Any], "\(removed.output)")
        let tables = report["tables"] as? [[String: Any]] ?? []
        let expedition = tables.first { table in table["schema"] as? String == schemaName && table["table"] as? String == "expedition" }
        #expect(expedition?["rows"] as? Int == 1, "\(removed.output)")
        #expect(!removed.error.contains("deleted"), "no progress lines with --json")
        #expect(try await Self.sql("SELECT id::text FROM \(Naming.quoted(schemaName)).expedition") == [[his.uuidString.lowercased()]])
        #expect(try await Self.sql("SELECT count(*)::text FROM pgmodel.shares WHERE schema_name = $1", [schemaName]) == [["0"]])
    }

    /// The next element of `iterator`, or nil after `seconds`: a test fails instead of hanging.
    static func next<T: Sendable>(_ iterator: inout AsyncStream<T>.Iterator, within seconds: Int = 20) async -> T? {
        nonisolated(unsafe) var it = iterator
        let result = await withTaskGroup(of: T?.self) { group in
            group.addTask { await it.next() }
            group.addTask { try? await Task.sleep(for: .seconds(seconds)); return nil }
            let first = await group.next() ?? nil
            group.cancelAll()
            return first
        }
        iterator = it
        return result
    }

    @Test("the doorbell yields a re-check of every user whenever LISTEN takes effect, the ids of a user ring, and nothing for a foreign payload")
    func listenerYieldsUserHints() async throws {
        let configuration = try PostgresStoreConfiguration.parse(try TestDatabase.url())
        let schemaName = TestDatabase.uniqueSchema("ul")
        let listener = ChangeListener(configuration: configuration.connection, schemaName: schemaName,
                                      eventLoop: MultiThreadedEventLoopGroup.singleton.next(), logger: Self.logger)
        var hints = listener.userChanges().makeAsyncIterator()
        #expect(await Self.next(&hints) == .some(nil), "LISTEN took effect: re-check everyone")
        let someone = UUID()
        _ = try await Self.sql("SELECT pg_notify('pgmodel_changes', 'not json'), pg_notify('pgmodel_changes', $1)",
                               [#"{"u":["\#(someone.uuidString.lowercased())"]}"#])
        // Other tests change users meanwhile: their rings come through too; skip to this one's.
        var got: [UUID]??
        repeat { got = await Self.next(&hints) } while got != nil && got != .some([someone])
        #expect(got == .some([someone]), "the junk ring was skipped, the user ring came through")
        _ = try await Self.sql("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = $1",
                               [ChangeListener.applicationName(schemaName)])
        repeat { got = await Self.next(&hints) } while got != nil && got != .some(nil)
        #expect(got == .some(nil), "after a reconnect, rings may have been missed: re-check everyone")
        await listener.close()
    }

    @Test("a re-check of every user (after a reconnect) closes a session whose user changed while no ring could arrive")
    func recheckAfterReconnect() async throws {
        let kim = try await ServerTestHarness.makeUser("rev_kim")
        let lee = try await ServerTestHarness.makeUser("rev_lee")
        let configuration = try PostgresStoreConfiguration.parse(try TestDatabase.url())
        let gateway = DatabaseGateway(configuration: configuration, maximumConnections: 2, requestTimeout: .seconds(10),
                                      eventLoopGroup: MultiThreadedEventLoopGroup.singleton, logger: Self.logger)
        let registry = SessionRegistry(instanceID: UUID(), gateway: gateway, logger: Self.logger)
        let runner = Task { await registry.run() }
        let (closed, closing) = AsyncStream.makeStream(of: String.self)
        await registry.register(RecordedSession(id: UUID(), userID: kim.id, clientAddress: "192.0.2.9", tls: false), epoch: 0,
                                hintsBeforeLogin: registry.hintCount, revoke: { closing.yield("kim \($0.code.rawValue)") })
        await registry.register(RecordedSession(id: UUID(), userID: lee.id, clientAddress: "192.0.2.10", tls: false), epoch: 0,
                                hintsBeforeLogin: registry.hintCount, revoke: { closing.yield("lee \($0.code.rawValue)") })
        // The ring of this change never reaches the registry (as while its doorbell was down).
        _ = try await Self.sql("UPDATE pgmodel.users SET session_epoch = session_epoch + 1 WHERE id = $1::uuid", [kim.id.uuidString])
        registry.hint(nil)
        var iterator = closed.makeAsyncIterator()
        #expect(await Self.next(&iterator) == "kim session_revoked")
        #expect(registry.count == 1, "lee's session stays")
        registry.finish()
        await runner.value
        await gateway.close()
    }
}
