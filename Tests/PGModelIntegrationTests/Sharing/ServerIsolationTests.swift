import Foundation
@_spi(PGModelInternals) import PGModelCore
@_spi(PGModelInternals) import PGModelPostgres
import Testing

/// Two users on two concurrent connections share one table but never each other's rows.
@Suite("Server: users are isolated from each other")
struct ServerIsolationTests {
    @Test("alice and bob see only their own rows and cannot change or delete the other's")
    func isolation() async throws {
        let alice = try await ServerTestHarness.makeUser("alice")
        let bob = try await ServerTestHarness.makeUser("bob")
        let entity = ServerTestHarness.uniqueEntity("Diary")
        let schema = try RawProtocolTests.schemaJSON(entity)
        let aliceRow = UUID.v7().uuidString.lowercased()
        let bobRow = UUID.v7().uuidString.lowercased()

        try await ServerTestHarness.withServer { port in
            let a = try await RawProtocolClient.connect(port: port)
            let b = try await RawProtocolClient.connect(port: port)
            defer { Task { await a.close(); await b.close() } }

            // Both log in, register and insert at the same time.
            async let aliceReady = Self.setUp(a, alice.name, schema, entity, aliceRow, "alice's secret")
            async let bobReady = Self.setUp(b, bob.name, schema, entity, bobRow, "bob's secret")
            let (aliceOK, bobOK) = try await (aliceReady, bobReady)
            #expect(aliceOK && bobOK)

            let aliceSees = try await a.request(#"{"id":10,"op":"fetch","entity":"\#(entity)"}"#)
            #expect(aliceSees.rows?.map { $0["id"] as? String } == [aliceRow])
            let bobSees = try await b.request(#"{"id":10,"op":"fetch","entity":"\#(entity)"}"#)
            #expect(bobSees.rows?.map { $0["id"] as? String } == [bobRow])
            #expect(try await b.request(#"{"id":11,"op":"count","entity":"\#(entity)"}"#).count == 1)
            let bobIDs = try await b.request(#"{"id":12,"op":"ids","entity":"\#(entity)"}"#)
            #expect((bobIDs.object["ids"] as? [[String: Any]])?.compactMap { $0["id"] as? String } == [bobRow])

            // Bob tries to change and to delete Alice's row: refused, and the whole save rolls back,
            // including his own valid insert in the same save.
            let sneakyInsert = UUID.v7().uuidString.lowercased()
            let update = try await b.request(#"""
                {"id":13,"op":"save","inserts":[{"entity":"\#(entity)","id":"\#(sneakyInsert)","values":{"name":"mine","rank":9}}],\#
                "updates":[{"entity":"\#(entity)","id":"\#(aliceRow)","values":{"name":"hacked"}}]}
                """#)
            #expect(update.ok == false)
            #expect(["forbidden", "not_found"].contains(update.code ?? ""), "\(update)")
            // To Bob, Alice's row does not exist: deleting it deletes nothing, as for a row already gone.
            let delete = try await b.request(
                #"{"id":14,"op":"save","deletes":[{"entity":"\#(entity)","id":"\#(aliceRow)"}]}"#)
            #expect(delete.ok == true, "\(delete)")
            #expect((delete.object["deleted"] as? [Any])?.isEmpty ?? true, "\(delete)")

            // Bob cannot find Alice's row by its id either.
            let probe = try await b.request(
                #"{"id":15,"op":"count","entity":"\#(entity)","where":{"eq":[{"key":"name"},{"value":"alice's secret"}]}}"#)
            #expect(probe.count == 0)

            // Nothing changed for Alice; Bob's rolled-back insert does not exist.
            let aliceAfter = try await a.request(#"{"id":16,"op":"fetch","entity":"\#(entity)"}"#)
            #expect(aliceAfter.valuesByName["alice's secret"] != nil)
            #expect(aliceAfter.rows?.count == 1)
            #expect(try await b.request(#"{"id":17,"op":"count","entity":"\#(entity)"}"#).count == 1)
        }
    }

    @Test("an admin sees every user's rows")
    func adminSeesAll() async throws {
        let carol = try await ServerTestHarness.makeUser("carol")
        let root = try await ServerTestHarness.makeUser("root", admin: true)
        let entity = ServerTestHarness.uniqueEntity("Ledger")
        try await ServerTestHarness.withServer { port in
            let c = try await RawProtocolClient.connect(port: port)
            defer { Task { await c.close() } }
            #expect(try await Self.setUp(c, carol.name, try RawProtocolTests.schemaJSON(entity), entity, UUID.v7().uuidString.lowercased(), "carol's"))
            // Connected only now: a connection must log in within the server's login timeout.
            let r = try await RawProtocolClient.connect(port: port)
            defer { Task { await r.close() } }
            #expect(try await RawProtocolTests.hello(r, root.name, "secret").ok == true)
            #expect(try await r.request(#"{"id":2,"op":"count","entity":"\#(entity)"}"#).count == 1)
        }
    }

    /// Logs in, registers and inserts one row named `name`; true when all three succeeded.
    static func setUp(
        _ client: RawProtocolClient, _ user: String, _ schema: String, _ entity: String, _ id: String, _ name: String
    ) async throws -> Bool {
        let hello = try await RawProtocolTests.hello(client, user, "secret")
        try await ServerTestHarness.register(json: schema)
        let register = try await client.request(#"{"id":2,"op":"register","schema":\#(schema)}"#)
        let insert = try await client.request(
            #"{"id":3,"op":"save","inserts":[{"entity":"\#(entity)","id":"\#(id)","values":{"name":"\#(name)","rank":1}}]}"#)
        return hello.ok == true && register.ok == true && insert.ok == true
    }
}
