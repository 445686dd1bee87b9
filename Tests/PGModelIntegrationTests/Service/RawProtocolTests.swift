import Foundation
@_spi(PGModelInternals) import PGModelCore
@_spi(PGModelInternals) import PGModelPostgres
import Testing

/// The line protocol over a real socket, spoken by hand: every error path answers with its stable
/// code and the connection keeps working.
@Suite("Raw line protocol against a live server")
struct RawProtocolTests {
    /// A schema with one entity, as the JSON a client sends in `register`.
    static func schemaJSON(_ entity: String) throws -> String {
        let schema = SchemaDescription(entities: [
            EntityDescription(
                name: entity,
                attributes: [
                    AttributeDescription(name: "name", type: .string),
                    AttributeDescription(name: "rank", type: .int64),
                    AttributeDescription(name: "score", type: .double, isOptional: true),
                    AttributeDescription(name: "due", type: .date, isOptional: true),
                ]),
        ])
        return String(decoding: try JSONEncoder().encode(schema), as: UTF8.self)
    }

    static func hello(_ client: RawProtocolClient, _ user: String, _ password: String, id: Int = 1) async throws -> RawResponse {
        try await client.request(#"{"id":\#(id),"op":"hello","user":"\#(user)","password":"\#(password)","protocol":1}"#)
    }

    @Test("wrong password → authentication_failed; the same connection can then log in")
    func wrongPassword() async throws {
        let user = try await ServerTestHarness.makeUser(password: "right")
        // The login deadline is not under test: three password checks on a loaded machine may outlast 10 s.
        try await ServerTestHarness.withRunningServer(loginTimeout: .seconds(120)) { _, port in
            let client = try await RawProtocolClient.connect(port: port)
            defer { Task { await client.close() } }

            let denied = try await Self.hello(client, user.name, "Guess-0f-The-Day", id: 1)
            #expect(denied.ok == false)
            #expect(denied.idNumber == 1)
            #expect(denied.code == "authentication_failed")
            #expect(!denied.text.contains("Guess-0f-The-Day"), "the answer never echoes the password")

            let unknownUser = try await Self.hello(client, "nobody_\(ServerTestHarness.uniqueSuffix())", "right", id: 2)
            #expect(unknownUser.code == "authentication_failed", "unknown users and wrong passwords look the same")

            let pong = try await client.request(#"{"id":3,"op":"ping"}"#)
            #expect(pong.ok == true)
            #expect(pong.object["pong"] as? Bool == true)

            let welcome = try await Self.hello(client, user.name, "right", id: 4)
            #expect(welcome.ok == true)
            #expect(welcome.object["server"] as? String == "pgmodel/0.1")
            #expect(welcome.object["user"] as? String == user.name)
            #expect(welcome.object["userID"] as? String == user.id.uuidString.lowercased())

            let again = try await Self.hello(client, user.name, "right", id: 5)
            #expect(again.code == "already_authenticated")
        }
    }

    @Test("requests before hello → not_authenticated; ping works; unsupported protocol is refused")
    func beforeHello() async throws {
        try await ServerTestHarness.withServer { port in
            let client = try await RawProtocolClient.connect(port: port)
            defer { Task { await client.close() } }
            for (id, op) in ["fetch", "count", "ids"].enumerated() {
                let response = try await client.request(#"{"id":\#(id + 1),"op":"\#(op)","entity":"Trip"}"#)
                #expect(response.code == "not_authenticated")
                #expect(response.idNumber == id + 1)
            }
            let save = try await client.request(#"{"id":9,"op":"save","inserts":[]}"#)
            #expect(save.code == "not_authenticated")
            let version = try await client.request(#"{"id":10,"op":"hello","user":"a","password":"b","protocol":2}"#)
            #expect(version.code == "unsupported_protocol")
            let pong = try await client.request(#"{"id":11,"op":"ping"}"#)
            #expect(pong.ok == true)
        }
    }

    @Test("malformed JSON, unknown op, missing field, wrong type, oversized line: each its code, connection stays usable")
    func errorPaths() async throws {
        let user = try await ServerTestHarness.makeUser()
        try await ServerTestHarness.withServer(maxLineBytes: 4096) { port in
            let client = try await RawProtocolClient.connect(port: port)
            defer { Task { await client.close() } }
            #expect(try await Self.hello(client, user.name, "secret").ok == true)

            let malformed = try await client.request(#"{"id":2,"op":"ping""#)
            #expect(malformed.code == "malformed_message")
            #expect(malformed.idIsNull)

            let notObject = try await client.request("[1,2,3]")
            #expect(notObject.code == "malformed_message")

            let unknown = try await client.request(#"{"id":3,"op":"nonsense"}"#)
            #expect(unknown.code == "unknown_op")
            #expect(unknown.idNumber == 3)
            #expect(unknown.message == "unknown op 'nonsense'")

            let missingOp = try await client.request(#"{"id":4}"#)
            #expect(missingOp.code == "missing_field")
            #expect(missingOp.field == "op")

            let missingEntity = try await client.request(#"{"id":5,"op":"fetch","limit":3}"#)
            #expect(missingEntity.code == "missing_field")
            #expect(missingEntity.field == "entity")
            #expect(missingEntity.idNumber == 5)

            let wrongType = try await client.request(#"{"id":6,"op":"fetch","entity":"Trip","limit":"ten"}"#)
            #expect(wrongType.code == "invalid_field")
            #expect(wrongType.field == "limit")

            let badValue = try await client.request(
                #"{"id":7,"op":"save","inserts":[{"entity":"Trip","id":"not-a-uuid","values":{}}]}"#)
            #expect(badValue.code == "invalid_field")
            #expect(badValue.field == "inserts[0].id")

            let oversized = try await client.request(#"{"id":8,"op":"ping","pad":""# + String(repeating: "x", count: 10_000) + #""}"#)
            #expect(oversized.code == "line_too_long")
            #expect(oversized.idIsNull)

            let unknownEntity = try await client.request(#"{"id":9,"op":"count","entity":"NoSuchEntity_\#(ServerTestHarness.uniqueSuffix())"}"#)
            #expect(unknownEntity.code == "unknown_entity")

            // Blank lines are skipped, not answered: the next answer belongs to the ping.
            try await client.send("\n\r\n   \n")
            let pong = try await client.request(#"{"id":10,"op":"ping"}"#)
            #expect(pong.ok == true)
            #expect(pong.idNumber == 10)
        }
    }

    @Test("an over-long line sent in pieces gets one error, then the stream resynchronises")
    func oversizedInPieces() async throws {
        try await ServerTestHarness.withServer(maxLineBytes: 1024) { port in
            let client = try await RawProtocolClient.connect(port: port)
            defer { Task { await client.close() } }
            let chunk = String(repeating: "y", count: 700)
            try await client.send(#"{"id":1,"op":"ping","x":""#)
            for _ in 0..<5 { try await client.send(chunk) }
            try await client.send("\"}\n" + #"{"id":2,"op":"ping"}"# + "\n")
            let error = try RawResponse(try await client.readLine())
            #expect(error.code == "line_too_long")
            let pong = try RawResponse(try await client.readLine())
            #expect(pong.idNumber == 2)
            #expect(pong.ok == true)
        }
    }

    @Test("register, save, fetch, count, ids, update and delete work over the wire")
    func crud() async throws {
        let user = try await ServerTestHarness.makeUser()
        let entity = ServerTestHarness.uniqueEntity()
        let first = UUID.v7().uuidString.lowercased()
        let second = UUID.v7().uuidString.lowercased()
        try await ServerTestHarness.withServer { port in
            let client = try await RawProtocolClient.connect(port: port)
            defer { Task { await client.close() } }
            #expect(try await Self.hello(client, user.name, "secret").ok == true)

            // Only admins create tables; a user's register of what exists succeeds.
            try await ServerTestHarness.register(json: try Self.schemaJSON(entity))
            let registered = try await client.request(#"{"id":2,"op":"register","schema":\#(try Self.schemaJSON(entity))}"#)
            #expect(registered.ok == true, "\(registered)")
            #expect(registered.object["entities"] as? [String] == [entity])

            let saved = try await client.request(#"""
                {"id":3,"op":"save","author":"raw-test","inserts":[\#
                {"entity":"\#(entity)","id":"\#(first)","values":{"name":"Paris","rank":2,"score":120.5,"due":{"date":"2024-05-01T10:00:00Z"}}},\#
                {"entity":"\#(entity)","id":"\#(second)","values":{"name":"Rome","rank":1,"score":null,"due":null}}]}
                """#)
            #expect(saved.ok == true, "\(saved)")
            #expect(saved.object["remapped"] as? [String: String] == [:])

            let fetched = try await client.request(
                #"{"id":4,"op":"fetch","entity":"\#(entity)","where":{"gt":[{"key":"rank"},{"value":0}]},"sort":[{"key":"rank"}]}"#)
            #expect(fetched.ok == true, "\(fetched)")
            let names = fetched.rows?.compactMap { ($0["values"] as? [String: Any])?["name"] as? String }
            #expect(names == ["Rome", "Paris"])
            #expect(fetched.rows?.first?["id"] as? String == second)
            #expect(fetched.rows?.first?["entity"] as? String == entity)
            let paris = fetched.valuesByName["Paris"]
            #expect(paris?["score"] as? Double == 120.5)
            #expect((paris?["due"] as? [String: Any])?["date"] as? String != nil)
            #expect(fetched.valuesByName["Rome"]?["score"] is NSNull)

            let count = try await client.request(
                #"{"id":5,"op":"count","entity":"\#(entity)","where":{"eq":[{"key":"name"},{"value":"Paris"}]}}"#)
            #expect(count.count == 1)

            let ids = try await client.request(#"{"id":6,"op":"ids","entity":"\#(entity)","sort":[{"key":"name","order":"reverse"}],"limit":1}"#)
            let firstID = (ids.object["ids"] as? [[String: Any]])?.first
            #expect(firstID?["id"] as? String == second)
            #expect(firstID?["entity"] as? String == entity)

            let updated = try await client.request(
                #"{"id":7,"op":"save","updates":[{"entity":"\#(entity)","id":"\#(first)","values":{"rank":5}}],"deletes":[{"entity":"\#(entity)","id":"\#(second)"}]}"#)
            #expect(updated.ok == true, "\(updated)")

            let after = try await client.request(#"{"id":8,"op":"fetch","entity":"\#(entity)"}"#)
            #expect(after.rows?.count == 1)
            #expect(after.valuesByName["Paris"]?["rank"] as? Int == 5)

            let typeError = try await client.request(
                #"{"id":9,"op":"save","updates":[{"entity":"\#(entity)","id":"\#(first)","values":{"rank":"high"}}]}"#)
            #expect(typeError.ok == false)
            #expect(typeError.code == "type_mismatch", "\(typeError)")
        }
    }

    @Test("pipelined requests in one write are answered in order, one line each")
    func pipelining() async throws {
        let user = try await ServerTestHarness.makeUser()
        try await ServerTestHarness.withServer { port in
            let client = try await RawProtocolClient.connect(port: port)
            defer { Task { await client.close() } }
            let lines = [
                #"{"id":1,"op":"hello","user":"\#(user.name)","password":"secret","protocol":1}"#,
                #"{"id":2,"op":"ping"}"#,
                #"{"id":"three","op":"bogus"}"#,
                #"not json"#,
                #"{"id":5,"op":"count","entity":"Missing_\#(ServerTestHarness.uniqueSuffix())"}"#,
                #"{"id":6,"op":"ping"}"#,
            ]
            try await client.send(lines.joined(separator: "\n") + "\n")
            var responses: [RawResponse] = []
            for _ in lines { responses.append(try RawResponse(try await client.readLine())) }
            #expect(responses[0].ok == true, "hello first, so the later requests run logged in")
            #expect(responses[1].idNumber == 2)
            #expect(responses[2].object["id"] as? String == "three")
            #expect(responses[2].code == "unknown_op")
            #expect(responses[3].idIsNull)
            #expect(responses[4].code == "unknown_entity")
            #expect(responses[5].idNumber == 6)
        }
    }

    @Test("bye is answered, then the server closes; a half-closed client still gets its answers")
    func byeAndHalfClose() async throws {
        try await ServerTestHarness.withServer { port in
            let client = try await RawProtocolClient.connect(port: port)
            let bye = try await client.request(#"{"id":1,"op":"bye"}"#)
            #expect(bye.ok == true)
            #expect(bye.idNumber == 1)
            try await client.expectClosed()
            await client.close()

            let halfClosed = try await RawProtocolClient.connect(port: port)
            // The last line lacks its newline: the end of input completes it.
            try await halfClosed.send(#"{"id":1,"op":"ping"}"# + "\n" + #"{"id":2,"op":"ping"}"#)
            try await halfClosed.finishSending()
            #expect(try RawResponse(try await halfClosed.readLine()).idNumber == 1)
            #expect(try RawResponse(try await halfClosed.readLine()).idNumber == 2)
            try await halfClosed.expectClosed()
            await halfClosed.close()
        }
    }

    @Test("too many failed logins close the connection")
    func loginLimit() async throws {
        // The login deadline is not under test: five password checks on a loaded machine may outlast 10 s.
        try await ServerTestHarness.withRunningServer(loginTimeout: .seconds(120)) { _, port in
            let client = try await RawProtocolClient.connect(port: port)
            defer { Task { await client.close() } }
            for id in 1...5 {
                let response = try await Self.hello(client, "nobody_\(ServerTestHarness.uniqueSuffix())", "x", id: id)
                #expect(response.code == "authentication_failed")
            }
            try await client.expectClosed()
        }
    }

    @Test("connections beyond the limit get too_many_connections and are closed")
    func connectionLimit() async throws {
        try await ServerTestHarness.withServer(maxConnections: 1) { port in
            let first = try await RawProtocolClient.connect(port: port)
            defer { Task { await first.close() } }
            #expect(try await first.request(#"{"id":1,"op":"ping"}"#).ok == true, "the first connection is admitted")
            let second = try await RawProtocolClient.connect(port: port)
            defer { Task { await second.close() } }
            let refused = try RawResponse(try await second.readLine())
            #expect(refused.code == "too_many_connections")
            try await second.expectClosed()
            #expect(try await first.request(#"{"id":2,"op":"ping"}"#).ok == true, "the first connection is unaffected")
        }
    }
}
