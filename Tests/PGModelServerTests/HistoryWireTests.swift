import Foundation
@_spi(PGModelInternals) import PGModelCore
@_spi(PGModelInternals) @testable import PGModelServer
import PGModelTestSupport
import Testing

@_spi(PGModelInternals) @testable import PGModelWire

@Suite("History and subscription ops: requests, results, events and their errors")
struct HistoryWireTests {
    static let record = HistoryRecord(
        token: 4711, transactionIdentifier: 12, author: "App", userName: "alice",
        timestamp: Date(timeIntervalSince1970: 1_714_557_600.25),
        changes: [
            HistoryChangeRecord(changeIdentifier: 1, kind: .insert, entity: "Trip", id: WireTest.tripID),
            HistoryChangeRecord(
                changeIdentifier: 2, kind: .update, entity: "Trip", id: WireTest.tripID, updatedAttributes: ["name"],
                values: ["name": .string("Rome")]),
            HistoryChangeRecord(
                changeIdentifier: 3, kind: .delete, entity: "Stay", id: WireTest.otherID, tombstone: ["code": .string("x")]),
        ])

    static let everyRequest: [Request.Operation] = [
        .history(HistoryRequest()),
        .history(HistoryRequest(
            filter: .and([.token(.greater, 4711), .author(.equal, "App"), .entities(["Trip"]),
                          .timestamp(.less, Date(timeIntervalSince1970: 1_714_557_600.5))]),
            newestFirst: true, limit: 10, changedEntities: ["Trip"])),
        .deleteHistory(HistoryRequest(filter: .token(.lessOrEqual, 10))),
        .subscribe(entities: nil),
        .subscribe(entities: ["Trip", "Stay"]),
        .unsubscribe(subscription: 7),
        .unsubscribe(subscription: "s-1"),
    ]

    @Test("every new request survives encode → decode", arguments: everyRequest)
    func requestRoundTrip(operation: Request.Operation) throws {
        let request = Request(id: 5, operation: operation)
        let decoded = try WireTest.decode(try WireTest.text(request.encodedLine())).get()
        #expect(decoded == request)
    }

    @Test("the documented request lines decode")
    func documentedLines() throws {
        #expect(try WireTest.decode(#"{"id":5,"op":"history","history":{"where":{"token":{"op":"gt","value":4711}},"limit":100}}"#).get()
            == Request(id: 5, operation: .history(HistoryRequest(filter: .token(.greater, 4711), limit: 100))))
        #expect(try WireTest.decode(#"{"id":5,"op":"history","history":{}}"#).get()
            == Request(id: 5, operation: .history(HistoryRequest())))
        #expect(try WireTest.decode(#"{"id":6,"op":"deleteHistory","history":{"where":{"token":{"op":"le","value":10}}}}"#).get()
            == Request(id: 6, operation: .deleteHistory(HistoryRequest(filter: .token(.lessOrEqual, 10)))))
        #expect(try WireTest.decode(#"{"id":7,"op":"subscribe"}"#).get() == Request(id: 7, operation: .subscribe(entities: nil)))
        #expect(try WireTest.decode(#"{"id":7,"op":"subscribe","entities":null}"#).get() == Request(id: 7, operation: .subscribe(entities: nil)))
        #expect(try WireTest.decode(#"{"id":7,"op":"subscribe","entities":["Trip"]}"#).get()
            == Request(id: 7, operation: .subscribe(entities: ["Trip"])))
        #expect(try WireTest.decode(#"{"id":8,"op":"unsubscribe","subscription":7}"#).get()
            == Request(id: 8, operation: .unsubscribe(subscription: 7)))
        // Timestamps are ISO 8601 text; a number is read as seconds since 1970.
        let iso = try WireTest.decode(#"{"id":9,"op":"history","history":{"where":{"timestamp":{"op":"gt","value":"2024-05-01T10:00:00.500Z"}}}}"#).get()
        #expect(iso.operation == .history(HistoryRequest(filter: .timestamp(.greater, Date(timeIntervalSince1970: 1_714_557_600.5)))))
        let number = try WireTest.decode(#"{"id":9,"op":"history","history":{"where":{"timestamp":{"op":"gt","value":1714557600}}}}"#).get()
        #expect(number.operation == .history(HistoryRequest(filter: .timestamp(.greater, Date(timeIntervalSince1970: 1_714_557_600)))))
    }

    struct Case: CustomTestStringConvertible, Sendable {
        var line: String
        var code: PGModelError.Code
        var field: String?
        var testDescription: String { "\(code.rawValue): \(line.prefix(70))" }
    }

    static let failures: [Case] = [
        Case(line: #"{"id":5,"op":"history"}"#, code: .missingField, field: "history"),
        Case(line: #"{"id":5,"op":"deleteHistory"}"#, code: .missingField, field: "history"),
        Case(line: #"{"id":5,"op":"history","history":[]}"#, code: .invalidField, field: "history"),
        Case(line: #"{"id":5,"op":"history","history":{"limit":"ten"}}"#, code: .invalidField, field: "history.limit"),
        Case(line: #"{"id":5,"op":"history","history":{"limit":-1}}"#, code: .invalidField, field: "history.limit"),
        Case(line: #"{"id":5,"op":"history","history":{"limit":1e30}}"#, code: .invalidField, field: "history.limit"),
        Case(line: #"{"id":5,"op":"history","history":{"newestFirst":"yes"}}"#, code: .invalidField, field: "history.newestFirst"),
        Case(line: #"{"id":5,"op":"history","history":{"where":{"token":{"op":"gt"}}}}"#, code: .missingField, field: "history.where.token.value"),
        Case(line: #"{"id":5,"op":"history","history":{"where":{"token":{"op":"gt","value":"x"}}}}"#, code: .invalidField, field: "history.where.token.value"),
        Case(line: #"{"id":5,"op":"history","history":{"where":{"token":{"op":"about","value":1}}}}"#, code: .invalidField, field: "history.where.token.op"),
        Case(line: #"{"id":5,"op":"history","history":{"where":{"all":true,"none":true}}}"#, code: .invalidField, field: "history.where"),
        Case(line: #"{"id":5,"op":"history","history":{"where":{"timestamp":{"op":"gt","value":"yesterday"}}}}"#, code: .invalidField, field: "history.where.timestamp.value"),
        Case(line: #"{"id":5,"op":"history","history":{"changedEntities":"Trip"}}"#, code: .invalidField, field: "history.changedEntities"),
        Case(line: #"{"id":7,"op":"subscribe","entities":"Trip"}"#, code: .invalidField, field: "entities"),
        Case(line: #"{"id":7,"op":"subscribe","entities":[1]}"#, code: .invalidField, field: "entities[0]"),
        Case(line: #"{"id":7,"op":"subscribe","entities":[]}"#, code: .invalidField, field: "entities"),
        Case(line: #"{"id":8,"op":"unsubscribe"}"#, code: .missingField, field: "subscription"),
        Case(line: #"{"id":8,"op":"unsubscribe","subscription":true}"#, code: .invalidField, field: "subscription"),
    ]

    @Test("malformed history and subscription lines get typed errors naming the field", arguments: failures)
    func decodingFailure(_ c: Case) throws {
        let failure = try #require(WireTest.failure(c.line))
        #expect(failure.id != nil, "the id is echoed")
        #expect(failure.error.code == c.code, "\(failure.error)")
        #expect(failure.error.field == c.field, "\(failure.error)")
    }

    static let everyResult: [ResponseResult] = [
        .history(HistoryPage(transactions: [record])),
        .history(HistoryPage(transactions: [])),
        .subscribed(7),
        .subscribed("s-1"),
    ]

    @Test("every new result survives encode → decode", arguments: everyResult)
    func resultRoundTrip(result: ResponseResult) throws {
        let response = Response(id: 5, result)
        #expect(try ServerMessage.decode(line: response.encodedLine().dropLast()) == .response(response))
    }

    @Test("results have the documented shape")
    func resultShapes() throws {
        let empty = try WireTest.text(Response(id: 5, .history(HistoryPage(transactions: []))).encodedLine())
        #expect(empty == #"{"history":{"transactions":[]},"id":5,"ok":true}"#)
        #expect(try WireTest.text(Response(id: 6, .count(3)).encodedLine()) == #"{"count":3,"id":6,"ok":true}"#)
        #expect(try WireTest.text(Response(id: 7, .subscribed(7)).encodedLine()) == #"{"id":7,"ok":true,"subscription":7}"#)
        let full = try WireTest.text(Response(id: 5, .history(HistoryPage(transactions: [Self.record]))).encodedLine())
        #expect(full.contains(#""timestamp":"2024-05-01T10:00:00.250Z""#), "timestamps are ISO 8601: \(full)")
        #expect(full.contains(#""token":4711"#))
        #expect(full.contains(#""id":"\#(WireTest.tripID.uuidString.lowercased())""#), "row ids are lowercase like everywhere else")
    }

    @Test("deleteHistory is answered by count, unsubscribe by a bare ok")
    func sharedResults() {
        #expect(ResponseResult.count(3).answers(.deleteHistory))
        #expect(ResponseResult.count(3).answers(.count))
        #expect(!ResponseResult.count(3).answers(.history))
        #expect(ResponseResult.acknowledged.answers(.unsubscribe))
        #expect(ResponseResult.history(HistoryPage(transactions: [])).answers(.history))
        #expect(ResponseResult.subscribed(1).answers(.subscribe))
        #expect(!ResponseResult.subscribed(1).answers(.unsubscribe))
    }

    @Test("events encode as documented and decode to change signals")
    func events() throws {
        let changes = Event.changes(subscription: 7, entities: ["Trip"])
        #expect(try WireTest.text(WireJSON.encodeLine(changes)) == #"{"entities":["Trip"],"event":"changes","subscription":7}"#)
        let reconnected = Event.reconnected(subscription: 7)
        #expect(try WireTest.text(WireJSON.encodeLine(reconnected)) == #"{"event":"reconnected","subscription":7}"#)
        #expect(try ServerMessage.decode(line: Data(#"{"event":"changes","subscription":7,"entities":["Trip"]}"#.utf8)) == .event(changes))
        #expect(try ServerMessage.decode(line: Data(#"{"event":"reconnected","subscription":7}"#.utf8)) == .event(reconnected))
        #expect(changes.changeSignal == ChangeSignal(.committed, entities: ["Trip"]))
        #expect(reconnected.changeSignal == ChangeSignal(.reconnected))
        #expect(Event(name: "future", subscription: 7).changeSignal == nil)
        #expect(throws: PGModelError.self) { try ServerMessage.decode(line: Data(#"{"event":7}"#.utf8)) }
    }

    @Test("a changes event carries its history as a history answer gives it, and decodes to a signal with it")
    func eventWithHistory() throws {
        let record = HistoryRecord(token: 4712, transactionIdentifier: 13, author: "App", userName: "alice",
                                   timestamp: Date(timeIntervalSince1970: 1_714_557_600.25), changes: [
                                       HistoryChangeRecord(changeIdentifier: 88, kind: .insert, entity: "Trip",
                                                           id: UUID(uuidString: "0193A7C4-0000-7000-8000-000000000001") ?? UUID()),
                                   ])
        let history = ChangeSignal.VisibleHistory(after: 4711, transactions: [record])
        let event = Event.changes(subscription: 7, entities: ["Trip"], history: history)
        let line = try WireTest.text(WireJSON.encodeLine(event))
        #expect(line.hasPrefix(#"{"after":4711,"entities":["Trip"],"event":"changes","subscription":7,"transactions":[{"#))
        #expect(line.contains(#""id":"0193a7c4-0000-7000-8000-000000000001""#), "ids in lowercase, as in a history answer")
        let answer = try WireJSON.encodeLine(Response(id: 1, .history(HistoryPage(transactions: [record]))))
        let eventObject = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]
        let answerObject = try JSONSerialization.jsonObject(with: Data(WireTest.text(answer).utf8)) as? [String: Any]
        let carried = try #require(eventObject?["transactions"] as? NSArray)
        let answered = try #require((answerObject?["history"] as? [String: Any])?["transactions"] as? NSArray)
        #expect(carried == answered, "the event's transactions are the history answer's")
        guard case .event(let decoded) = try ServerMessage.decode(line: Data(line.utf8)) else {
            Issue.record("not an event: \(line)")
            return
        }
        #expect(decoded.changeSignal == ChangeSignal(.committed, entities: ["Trip"], history: history))
    }

    @Test("the session state machine refuses history and subscriptions before hello")
    func gatedByLogin() {
        var session = SessionStateMachine()
        for operation in Self.everyRequest {
            guard case .respond(let response) = session.receive(Request(id: 1, operation: operation)),
                case .failure(let error) = response.result
            else {
                Issue.record("\(operation) was not refused before hello")
                continue
            }
            #expect(error.code == .notAuthenticated)
        }
    }
}
