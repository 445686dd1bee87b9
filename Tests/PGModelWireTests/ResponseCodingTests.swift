import Foundation
@_spi(PGModelInternals) import PGModelCore
import PGModelTestSupport
import Testing

@_spi(PGModelInternals) @testable import PGModelWire

@Suite("Response and event encoding and decoding")
struct ResponseCodingTests {
    static let row = RowValues(
        entity: "BusinessTrip", id: WireTest.tripID,
        values: ["name": .string("Paris"), "perdiem": .double(120.5), "start": .date(Date(timeIntervalSince1970: 0))])

    static let everyResult: [ResponseResult] = [
        .hello(HelloResult(user: "alice", userID: WireTest.userID)),
        .hello(HelloResult(user: "alice", userID: WireTest.userID, isAdmin: true, maxLineBytes: 1 << 20, maxSaveBytes: 1 << 26, store: "app")),
        .shares(RecordSharing(owner: "alice", shares: [ModelShare(user: "bob", permission: .readWrite, grantedBy: "alice",
                                                                  createdAt: Date(timeIntervalSince1970: 1_700_000_000))])),
        .shares(RecordSharing(owner: nil, shares: [])),
        .pong,
        .registered(entities: ["Trip", "BucketListItem"]),
        .rows([row, RowValues(entity: "Trip", id: WireTest.otherID, values: [:])]),
        .rows([]),
        .rows([RowValues(entity: "Track", id: WireTest.tripID, values: ["album": .uuid(WireTest.otherID)], via: WireTest.otherID)]),
        .saved(SaveResult(deleted: [RowReference(entity: "Album", id: WireTest.tripID), RowReference(entity: "Track", id: WireTest.otherID)])),
        .count(42),
        .ids([RowReference(entity: "Trip", id: WireTest.tripID)]),
        .saved(SaveResult(remappedIdentifiers: [WireTest.tripID: WireTest.otherID])),
        .saved(SaveResult()),
        .acknowledged,
    ]

    @Test("every result survives encode → decode", arguments: everyResult)
    func roundTrip(result: ResponseResult) throws {
        let response = Response(id: 9, result)
        let decoded = try ServerMessage.decode(line: response.encodedLine().dropLast())
        #expect(decoded == .response(response))
    }

    @Test("errors survive encode → decode with every detail")
    func errorRoundTrip() throws {
        let errors = [
            Response(id: nil, error: WireError(.malformedMessage, "the line is not valid UTF-8 JSON")),
            Response(id: "q", error: WireError(.missingField, "missing field 'entity'", field: "entity")),
            Response(
                id: 5,
                error: WireError(.uniqueViolation, "Trip.name must be unique", model: "Trip", keyPath: "name", sqlState: "23505")),
        ]
        for response in errors {
            #expect(try ServerMessage.decode(line: response.encodedLine().dropLast()) == .response(response))
        }
    }

    @Test("exact response lines")
    func snapshots() throws {
        func line(_ response: Response) throws -> String { try WireTest.text(response.encodedLine()) }
        #expect(try line(Response(id: 1, .hello(HelloResult(user: "alice", userID: WireTest.userID))))
            == #"{"admin":false,"id":1,"ok":true,"server":"pgmodel/0.1","user":"alice","userID":"0193a7c4-0000-7000-8000-00000000a11c"}"#)
        #expect(try line(Response(id: 1, .hello(HelloResult(user: "alice", userID: WireTest.userID, store: "app"))))
            == #"{"admin":false,"id":1,"ok":true,"server":"pgmodel/0.1","store":"app","user":"alice","userID":"0193a7c4-0000-7000-8000-00000000a11c"}"#)
        #expect(try line(Response(id: 2, .pong)) == #"{"id":2,"ok":true,"pong":true}"#)
        #expect(try line(Response(id: 2, .shares(RecordSharing(owner: nil, shares: []))))
            == #"{"id":2,"ok":true,"owner":null,"shares":[]}"#)
        #expect(try line(Response(id: 3, .registered(entities: ["Trip"]))) == #"{"entities":["Trip"],"id":3,"ok":true}"#)
        #expect(try line(Response(id: 4, .rows([RowValues(entity: "BusinessTrip", id: WireTest.tripID, values: ["name": .string("Rome"), "perdiem": .double(120.5)])])))
            == #"{"id":4,"ok":true,"rows":[{"entity":"BusinessTrip","id":"0193a7c4-5e6f-7a8b-9c0d-1e2f3a4b5c6d","values":{"name":"Rome","perdiem":120.5}}]}"#)
        #expect(try line(Response(id: 5, .count(12))) == #"{"count":12,"id":5,"ok":true}"#)
        #expect(try line(Response(id: 6, .ids([RowReference(entity: "Trip", id: WireTest.otherID)])))
            == #"{"id":6,"ids":[{"entity":"Trip","id":"0193a7c4-5e6f-7a8b-9c0d-000000000001"}],"ok":true}"#)
        #expect(try line(Response(id: 7, .saved(SaveResult(remappedIdentifiers: [WireTest.tripID: WireTest.otherID]))))
            == #"{"id":7,"ok":true,"remapped":{"0193a7c4-5e6f-7a8b-9c0d-1e2f3a4b5c6d":"0193a7c4-5e6f-7a8b-9c0d-000000000001"}}"#)
        #expect(try line(Response(id: 8, .acknowledged)) == #"{"id":8,"ok":true}"#)
        #expect(try line(Response(id: nil, error: WireError(.lineTooLong, "line longer than 10 bytes")))
            == #"{"error":{"code":"line_too_long","message":"line longer than 10 bytes"},"id":null,"ok":false}"#)
    }

    @Test("an error answer's requestID: sent when set, read into PGModelError, outside its equality")
    func errorRequestID() throws {
        var error = WireError(.notFound, "no such Trip", model: "Trip")
        error.requestID = "5f0c2a9e41d7-12"
        let text = try WireTest.text(Response(id: 3, error: error).encodedLine())
        #expect(text == #"{"error":{"code":"not_found","message":"no such Trip","model":"Trip","requestID":"5f0c2a9e41d7-12"},"id":3,"ok":false}"#)
        let decoded = try WireJSON.sharedDecoder.decode(Response.self, from: Data(text.utf8))
        guard case .failure(let read) = decoded.result else {
            Issue.record("decoded as a success")
            return
        }
        #expect(read.requestID == "5f0c2a9e41d7-12")
        let thrown = read.modelError
        #expect(thrown.requestID == "5f0c2a9e41d7-12")
        #expect(thrown == PGModelError(.notFound, "no such Trip", model: "Trip"), "the id is no part of equality")
        #expect(thrown.hashValue == PGModelError(.notFound, "no such Trip", model: "Trip").hashValue)
        #expect(thrown.description.contains("5f0c2a9e41d7-12"))
        // A malformed id is dropped, the answer still read.
        let odd = #"{"error":{"code":"not_found","message":"m","requestID":7},"id":3,"ok":false}"#
        let oddResponse = try WireJSON.sharedDecoder.decode(Response.self, from: Data(odd.utf8))
        guard case .failure(let oddError) = oddResponse.result else {
            Issue.record("decoded as a success")
            return
        }
        #expect(oddError.requestID == nil && oddError.code == .notFound)
    }

    @Test("events: exact line, round trip, told apart from responses")
    func events() throws {
        let event = Event(name: "changes", subscription: 9, entities: ["Trip"],
                          history: ChangeSignal.VisibleHistory(after: 4711, transactions: []))
        let data = try WireJSON.encodeLine(event)
        #expect(try WireTest.text(data) == #"{"after":4711,"entities":["Trip"],"event":"changes","subscription":9,"transactions":[]}"#)
        #expect(try ServerMessage.decode(line: data.dropLast()) == .event(event))
    }

    @Test("server lines that are not responses throw malformed_message", arguments: [
        "not json", "[]", #"{"id":1}"#, #"{"id":1,"ok":false}"#, #"{"id":1,"ok":true,"count":"many"}"#,
        #"{"id":1,"ok":true,"remapped":{"a":"b"}}"#, #"{"id":1.5,"ok":true}"#,
    ])
    func malformedServerLines(line: String) {
        #expect(throws: PGModelError.self) { try ServerMessage.decode(line: Data(line.utf8)) }
        do {
            _ = try ServerMessage.decode(line: Data(line.utf8))
        } catch {
            #expect(error.code == .malformedMessage)
        }
    }

    @Test("NaN cannot travel as JSON: encoding throws instead of writing an invalid line")
    func nanThrows() {
        let response = Response(id: 1, .rows([RowValues(entity: "T", id: WireTest.tripID, values: ["x": .double(.nan)])]))
        #expect(throws: (any Error).self) { try response.encodedLine() }
    }

    @Test("wire errors map to PGModelError with the server's code and message")
    func modelError() {
        let error = WireError(.forbidden, "Trip belongs to another user", model: "Trip").modelError
        #expect(error.code == .forbidden)
        #expect(error.message == "Trip belongs to another user")
        #expect(error.model == "Trip")
        #expect(WireError(.missingField, "missing field 'entity'", field: "entity").modelError.keyPath == "entity")
        let back = WireError(PGModelError(.uniqueViolation, "dup", model: "Trip", keyPath: "name", sqlState: "23505"))
        #expect(back == WireError(.uniqueViolation, "dup", model: "Trip", keyPath: "name", sqlState: "23505"))
    }

    @Test("result kinds name the op they answer")
    func operationNames() {
        #expect(ResponseResult.rows([]).operationName == .fetch)
        #expect(ResponseResult.pong.operationName == .ping)
        #expect(ResponseResult.saved(SaveResult()).operationName == .save)
    }
}

extension ResponseResult: CustomTestStringConvertible {
    public var testDescription: String {
        switch self {
        case .rows(let rows): return "rows(\(rows.count))"
        default: return String(describing: operationName?.rawValue ?? "?")
        }
    }
}
