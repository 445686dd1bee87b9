import Foundation
@_spi(PGModelInternals) import PGModelCore
import PGModelTestSupport
import Testing

@_spi(PGModelInternals) @testable import PGModelWire

@Suite("Request decoding errors: precise codes naming the field")
struct RequestDecodingErrorTests {
    struct Case: CustomTestStringConvertible, Sendable {
        var line: String
        var id: RequestID?
        var code: PGModelError.Code
        var field: String?
        var messageContains: String
        var testDescription: String { "\(code.rawValue): \(line.prefix(60))" }
    }

    static let cases: [Case] = [
        // Not parseable far enough to find an id.
        Case(line: "{not json", id: nil, code: .malformedMessage, field: nil, messageContains: "not valid JSON"),
        Case(line: "", id: nil, code: .malformedMessage, field: nil, messageContains: "not valid JSON"),
        Case(line: #"[1,2]"#, id: nil, code: .malformedMessage, field: nil, messageContains: "JSON object"),
        Case(line: #""ping""#, id: nil, code: .malformedMessage, field: nil, messageContains: "JSON object"),
        Case(line: "null", id: nil, code: .malformedMessage, field: nil, messageContains: "JSON object"),
        Case(line: #"{"op":"ping"}"#, id: nil, code: .missingField, field: "id", messageContains: "'id'"),
        Case(line: #"{"id":null,"op":"ping"}"#, id: nil, code: .invalidField, field: "id", messageContains: "'id'"),
        Case(line: #"{"id":true,"op":"ping"}"#, id: nil, code: .invalidField, field: "id", messageContains: "integer or a string"),
        Case(line: #"{"id":1.5,"op":"ping"}"#, id: nil, code: .invalidField, field: "id", messageContains: "'id'"),
        Case(line: #"{"id":{"a":1},"op":"ping"}"#, id: nil, code: .invalidField, field: "id", messageContains: "'id'"),
        Case(
            line: #"{"id":""# + String(repeating: "x", count: 300) + #"","op":"ping"}"#, id: nil, code: .invalidField,
            field: "id", messageContains: "at most 256"),
        // The op.
        Case(line: #"{"id":3}"#, id: 3, code: .missingField, field: "op", messageContains: "'op'"),
        Case(line: #"{"id":3,"op":null}"#, id: 3, code: .missingField, field: "op", messageContains: "'op'"),
        Case(line: #"{"id":3,"op":7}"#, id: 3, code: .invalidField, field: "op", messageContains: "must be a string"),
        Case(line: #"{"id":3,"op":"nonsense"}"#, id: 3, code: .unknownOp, field: "op", messageContains: "unknown op 'nonsense'"),
        Case(line: #"{"id":"x","op":"FETCH"}"#, id: "x", code: .unknownOp, field: "op", messageContains: "'FETCH'"),
        // The client's deadline.
        Case(line: #"{"id":5,"op":"ping","timeoutMs":0}"#, id: 5, code: .invalidField, field: "timeoutMs", messageContains: "from 1 to 86400000"),
        Case(line: #"{"id":5,"op":"ping","timeoutMs":-5}"#, id: 5, code: .invalidField, field: "timeoutMs", messageContains: "milliseconds"),
        Case(line: #"{"id":5,"op":"count","entity":"T","timeoutMs":2.5}"#, id: 5, code: .invalidField, field: "timeoutMs", messageContains: "whole number"),
        Case(line: #"{"id":5,"op":"ping","timeoutMs":"5000"}"#, id: 5, code: .invalidField, field: "timeoutMs", messageContains: "'timeoutMs'"),
        Case(line: #"{"id":5,"op":"ping","timeoutMs":1e12}"#, id: 5, code: .invalidField, field: "timeoutMs", messageContains: "'timeoutMs'"),
        // hello.
        Case(line: #"{"id":4,"op":"hello","password":"p","protocol":1}"#, id: 4, code: .missingField, field: "user", messageContains: "'user'"),
        Case(line: #"{"id":4,"op":"hello","user":"a","protocol":1}"#, id: 4, code: .missingField, field: "password", messageContains: "'password'"),
        Case(line: #"{"id":4,"op":"hello","user":"a","password":"p"}"#, id: 4, code: .missingField, field: "protocol", messageContains: "'protocol'"),
        Case(line: #"{"id":4,"op":"hello","user":5,"password":"p","protocol":1}"#, id: 4, code: .invalidField, field: "user", messageContains: "must be a string"),
        Case(line: #"{"id":4,"op":"hello","user":"a","password":"p","protocol":"1"}"#, id: 4, code: .invalidField, field: "protocol", messageContains: "must be an integer"),
        Case(line: #"{"id":4,"op":"hello","user":null,"password":"p","protocol":1}"#, id: 4, code: .missingField, field: "user", messageContains: "null"),
        // fetch, count, ids.
        Case(line: #"{"id":5,"op":"fetch"}"#, id: 5, code: .missingField, field: "entity", messageContains: "'entity'"),
        Case(line: #"{"id":5,"op":"count","entity":["Trip"]}"#, id: 5, code: .invalidField, field: "entity", messageContains: "must be a string"),
        Case(line: #"{"id":5,"op":"ids","entity":"Trip","limit":"10"}"#, id: 5, code: .invalidField, field: "limit", messageContains: "must be an integer"),
        Case(line: #"{"id":5,"op":"fetch","entity":"Trip","limit":-1}"#, id: 5, code: .invalidField, field: "limit", messageContains: "negative"),
        Case(line: #"{"id":5,"op":"fetch","entity":"Trip","offset":-3}"#, id: 5, code: .invalidField, field: "offset", messageContains: "negative"),
        Case(line: #"{"id":5,"op":"fetch","entity":"Trip","limit":1e40}"#, id: 5, code: .invalidField, field: "limit", messageContains: "'limit' is out of range"),
        Case(line: #"{"id":5,"op":"fetch","entity":"Trip","limit":9223372036854775808}"#, id: 5, code: .invalidField, field: "limit", messageContains: "'limit' is out of range"),
        Case(line: #"{"id":5,"op":"fetch","entity":"Trip","offset":1e400}"#, id: 5, code: .invalidField, field: "offset", messageContains: "'offset' is out of range"),
        Case(line: #"{"id":5,"op":"fetch","entity":"Trip","limit":2.5}"#, id: 5, code: .invalidField, field: "limit", messageContains: "'limit' must be an integer"),
        Case(line: #"{"id":9,"op":"history","history":{"limit":9223372036854775808}}"#, id: 9, code: .invalidField, field: "history.limit", messageContains: "out of range"),
        Case(line: #"{"id":9,"op":"history","history":{"limit":-1}}"#, id: 9, code: .invalidField, field: "history.limit", messageContains: "non-negative"),
        Case(line: #"{"id":4,"op":"hello","user":"a","password":"p","protocol":1e40}"#, id: 4, code: .invalidField, field: nil, messageContains: "out of range"),
        Case(line: #"{"id":5,"op":"fetch","entity":"Trip","where":{"like":[{"key":"a"},{"value":1}]}}"#, id: 5, code: .invalidField, field: "where.like", messageContains: "unknown operator 'like'"),
        Case(line: #"{"id":5,"op":"fetch","entity":"Trip","where":{"eq":[{"key":"a"}]}}"#, id: 5, code: .invalidField, field: "where.eq", messageContains: "2 operands"),
        Case(line: #"{"id":5,"op":"fetch","entity":"Trip","where":{"and":[{"key":"a"},{"key":7}]}}"#, id: 5, code: .invalidField, field: "where.and[1].key", messageContains: "must be a string"),
        Case(line: #"{"id":5,"op":"fetch","entity":"Trip","sort":[{"order":"reverse"}]}"#, id: 5, code: .missingField, field: "sort[0].key", messageContains: "'sort[0].key'"),
        Case(line: #"{"id":5,"op":"fetch","entity":"Trip","sort":[{"key":"a","order":"up"}]}"#, id: 5, code: .invalidField, field: "sort[0].order", messageContains: "forward"),
        Case(line: #"{"id":5,"op":"fetch","entity":"Trip","sort":{"key":"a"}}"#, id: 5, code: .invalidField, field: "sort", messageContains: "must be an array"),
        Case(line: #"{"id":5,"op":"fetch","entity":"Trip","ids":["0193a7c4-5e6f-7a8b-9c0d-000000000001","nope"]}"#, id: 5, code: .invalidField, field: "ids[1]", messageContains: "'ids[1]'"),
        Case(line: #"{"id":5,"op":"fetch","entity":"Trip","ids":"0193a7c4-5e6f-7a8b-9c0d-000000000001"}"#, id: 5, code: .invalidField, field: "ids", messageContains: "must be an array"),
        // register.
        Case(line: #"{"id":6,"op":"register"}"#, id: 6, code: .missingField, field: "schema", messageContains: "'schema'"),
        Case(line: #"{"id":6,"op":"register","schema":{"version":"1"}}"#, id: 6, code: .missingField, field: "schema.entities", messageContains: "'schema.entities'"),
        Case(line: #"{"id":6,"op":"register","schema":"Trip"}"#, id: 6, code: .invalidField, field: "schema", messageContains: "'schema'"),
        // save.
        Case(line: #"{"id":7,"op":"save","inserts":{}}"#, id: 7, code: .invalidField, field: "inserts", messageContains: "must be an array"),
        Case(line: #"{"id":7,"op":"save","inserts":[{"entity":"Trip","values":{}}]}"#, id: 7, code: .missingField, field: "inserts[0].id", messageContains: "'inserts[0].id'"),
        Case(line: #"{"id":7,"op":"save","inserts":[{"entity":"Trip","id":"nope","values":{}}]}"#, id: 7, code: .invalidField, field: "inserts[0].id", messageContains: "'inserts[0].id'"),
        Case(line: #"{"id":7,"op":"save","updates":[{"entity":"Trip","id":"0193a7c4-5e6f-7a8b-9c0d-000000000001","values":{"a":[1]}}]}"#, id: 7, code: .invalidField, field: "updates[0].values.a", messageContains: "'updates[0].values.a'"),
        Case(line: #"{"id":7,"op":"save","updates":[{"entity":"Trip","id":"0193a7c4-5e6f-7a8b-9c0d-000000000001","values":{"d":{"date":"yesterday"}}}]}"#, id: 7, code: .invalidField, field: "updates[0].values.d.date", messageContains: "ISO 8601"),
        Case(line: #"{"id":7,"op":"save","updates":[{"entity":"Trip","id":"0193a7c4-5e6f-7a8b-9c0d-000000000001","values":{"d":{"date":"2024-05-01T10:00:00Z","x":1}}}]}"#, id: 7, code: .invalidField, field: "updates[0].values.d", messageContains: "exactly one of the keys"),
        Case(line: #"{"id":5,"op":"fetch","entity":"Trip","where":{"eq":[{"key":"d"},{"value":{"date":"2024-05-01T10:00:00Z","x":1}}]}}"#, id: 5, code: .invalidField, field: "where.eq[1].value", messageContains: "exactly one of the keys"),
        Case(line: #"{"id":7,"op":"save","deletes":[{"id":"0193a7c4-5e6f-7a8b-9c0d-000000000001"}]}"#, id: 7, code: .missingField, field: "deletes[0].entity", messageContains: "'deletes[0].entity'"),
        Case(line: #"{"id":7,"op":"save","author":42}"#, id: 7, code: .invalidField, field: "author", messageContains: "must be a string"),
    ]

    @Test("decoding failure", arguments: cases)
    func decodingFailure(_ c: Case) throws {
        let failure = try #require(WireTest.failure(c.line))
        #expect(failure.id == c.id)
        #expect(failure.error.code == c.code)
        #expect(failure.error.field == c.field)
        #expect(failure.error.message.contains(c.messageContains), "message: \(failure.error.message)")
    }

    /// PROTOCOL.md §8: `limit` and `offset` take 0 … 2⁶³−1, the largest included (it once went through a
    /// `Double`, which rounds 2⁶³−1 up to 2⁶³).
    @Test("the largest limit and offset a 64-bit integer holds are accepted")
    func largestLimitAndOffset() throws {
        let line = #"{"id":5,"op":"fetch","entity":"Trip","limit":9223372036854775807,"offset":9223372036854775807}"#
        guard case .success(let request) = Request.decode(line: Data(line.utf8)), case .fetch(let fetch) = request.operation else {
            Issue.record("the largest limit was refused")
            return
        }
        #expect(fetch.limit == Int.max)
        #expect(fetch.offset == Int.max)
        let history = #"{"id":9,"op":"history","history":{"limit":9223372036854775807}}"#
        guard case .success(let read) = Request.decode(line: Data(history.utf8)), case .history(let request) = read.operation else {
            Issue.record("the largest history limit was refused")
            return
        }
        #expect(request.limit == Int.max)
    }

    @Test("invalid UTF-8 is malformed")
    func invalidUTF8() {
        let bytes = Data([0x7B, 0x22, 0x69, 0x64, 0x22, 0x3A, 0x22, 0xFF, 0xFE, 0x22, 0x7D])
        guard case .failure(let failure) = Request.decode(line: bytes) else {
            Issue.record("invalid UTF-8 decoded")
            return
        }
        #expect(failure.id == nil)
        #expect(failure.error.code == .malformedMessage)
        #expect(failure.error.message == "the line is not valid UTF-8")
        guard case .failure(let broken) = Request.decode(line: Data([0x7B, 0xFF])) else {
            Issue.record("invalid UTF-8 decoded")
            return
        }
        #expect(broken.error.message == "the line is not valid UTF-8")
    }

    @Test("a decoding failure answers with the request's id and the stable code: exact line")
    func failureResponseSnapshot() throws {
        let failure = try #require(WireTest.failure(#"{"id":3,"op":"nonsense"}"#))
        let line = try WireTest.text(Response(id: failure.id, error: failure.error).encodedLine())
        #expect(line == #"{"error":{"code":"unknown_op","field":"op","message":"unknown op 'nonsense'"},"id":3,"ok":false}"#)

        let malformed = try #require(WireTest.failure("{oops"))
        let malformedLine = try WireTest.text(Response(id: malformed.id, error: malformed.error).encodedLine())
        #expect(malformedLine.hasPrefix(#"{"error":{"code":"malformed_message","#))
        #expect(malformedLine.hasSuffix(#""id":null,"ok":false}"#))
    }
}
