import Foundation
@_spi(PGModelInternals) import PGModelCore
@_spi(PGModelInternals) import PGModelPostgres
import Testing

/// Requests that once trapped the whole server process: each now gets a coded error, and the same
/// connection (and so the process) keeps answering.
@Suite("Hostile input: no request line can crash the server")
struct HostileInputTests {
    /// A schema with a decimal, as the JSON a client sends in `register`.
    static func schemaJSON(_ entity: String) throws -> String {
        let schema = SchemaDescription(entities: [
            EntityDescription(name: entity, attributes: [
                AttributeDescription(name: "name", type: .string),
                AttributeDescription(name: "amount", type: .decimal, isOptional: true),
                AttributeDescription(name: "due", type: .date, isOptional: true),
            ]),
        ])
        return String(decoding: try JSONEncoder().encode(schema), as: UTF8.self)
    }

    @Test("empty or dotted sort keys with a cast, huge timestamps, NaN decimals, deep nesting: coded errors")
    func trapsAreErrors() async throws {
        let user = try await ServerTestHarness.makeUser()
        let entity = ServerTestHarness.uniqueEntity("Price")
        try await ServerTestHarness.withServer { port in
            let client = try await RawProtocolClient.connect(port: port)
            defer { Task { await client.close() } }
            #expect(try await RawProtocolTests.hello(client, user.name, "secret").ok == true)
            try await ServerTestHarness.register(json: try Self.schemaJSON(entity))
            let registered = try await client.request(#"{"id":2,"op":"register","schema":\#(try Self.schemaJSON(entity))}"#)
            #expect(registered.ok == true, "\(registered)")

            var id = 10
            func expectCode(_ line: (Int) -> String, _ codes: Set<String>, _ comment: Comment) async throws {
                id += 1
                let response = try await client.request(line(id))
                #expect(response.ok == false, comment)
                #expect(response.idNumber == id, comment)
                #expect(response.code.map(codes.contains) == true, "\(comment): \(response)")
            }
            for key in ["", ".", "..", "name.", ".name"] {
                try await expectCode({ #"{"id":\#($0),"op":"fetch","entity":"\#(entity)","sort":[{"key":"\#(key)","as":"double"}]}"# },
                                     ["unsupported_sort", "unknown_attribute", "invalid_field"], "sort key '\(key)' with a cast")
            }
            try await expectCode({ #"{"id":\#($0),"op":"save","batchDeletes":[{"entity":"\#(entity)","sort":[{"key":".","as":"string"}]}]}"# },
                                 ["unsupported_sort", "invalid_field"], "a batch delete sorted by '.'")
            try await expectCode({ #"{"id":\#($0),"op":"history","history":{"where":{"timestamp":{"op":"lt","value":1e13}}}}"# },
                                 ["invalid_field", "type_mismatch"], "a timestamp 300,000 years away")
            try await expectCode({ #"{"id":\#($0),"op":"fetch","entity":"\#(entity)","where":{"lt":[{"key":"due"},{"value":{"date":1e300}}]}}"# },
                                 ["invalid_field", "type_mismatch", "malformed_message"], "a date value beyond Int64 microseconds")
            let row = UUID.v7().uuidString.lowercased()
            try await expectCode({ #"{"id":\#($0),"op":"save","inserts":[{"entity":"\#(entity)","id":"\#(row)","values":{"name":"x","amount":1e300}}]}"# },
                                 ["type_mismatch"], "a decimal too large for Decimal")
            try await expectCode({ #"{"id":\#($0),"op":"save","inserts":[{"entity":"\#(entity)","id":"\#(row)","values":{"name":"x","amount":1e-300}}]}"# },
                                 ["type_mismatch"], "a decimal too small for Decimal")
            let depth = 400
            let deep = String(repeating: #"{"not":"#, count: depth) + #"{"value":true}"# + String(repeating: "}", count: depth)
            try await expectCode({ #"{"id":\#($0),"op":"fetch","entity":"\#(entity)","where":\#(deep)}"# },
                                 ["invalid_field", "malformed_message"], "a predicate nested \(depth) deep")
            let deepHistory = String(repeating: #"{"not":"#, count: depth) + #"{"author":{"op":"eq","value":"x"}}"# + String(repeating: "}", count: depth)
            try await expectCode({ #"{"id":\#($0),"op":"history","history":{"where":\#(deepHistory)}}"# },
                                 ["invalid_field", "malformed_message"], "a history filter nested \(depth) deep")

            // Nothing was written, and the process still serves the connection.
            let count = try await client.request(#"{"id":99,"op":"count","entity":"\#(entity)"}"#)
            #expect(count.ok == true, "\(count)")
            #expect(count.object["count"] as? Int == 0)
        }
    }
}
