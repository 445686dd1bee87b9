import Foundation
@_spi(PGModelInternals) import PGModelCore
import Testing

@_spi(PGModelInternals) @testable import PGModelWire
@_spi(PGModelInternals) @testable import PGModelServer

@Suite("Subscription state machine: coalesced doorbells")
struct SubscriptionStateMachineTests {
    @Test("events wait for activation, so none precedes the subscribe response")
    func heldUntilActive() throws {
        var machine = SubscriptionStateMachine()
        try machine.subscribe(id: 7, entities: nil).get()
        let ready = machine.receive(ChangeSignal(.committed, entities: ["Trip"]))
        #expect(!ready)
        let events1 = machine.takeEvents()
        #expect(events1.isEmpty)
        machine.activate(id: 7)
        #expect(machine.hasPendingEvents)
        let events2 = machine.takeEvents()
        #expect(events2 == [.changes(subscription: 7, entities: ["Trip"])])
        let events3 = machine.takeEvents()
        #expect(events3.isEmpty)
    }

    @Test("many signals before a flush become one event with the union of entities")
    func coalesces() throws {
        var machine = SubscriptionStateMachine()
        try machine.subscribe(id: 7, entities: nil).get()
        machine.activate(id: 7)
        for index in 0..<1000 {
            machine.receive(ChangeSignal(.committed, entities: [index.isMultiple(of: 2) ? "Trip" : "Stay"]))
        }
        let events4 = machine.takeEvents()
        #expect(events4 == [.changes(subscription: 7, entities: ["Stay", "Trip"])])
    }

    @Test("a signal naming no entity makes the pending event say 'anything'")
    func unknownEntities() throws {
        var machine = SubscriptionStateMachine()
        try machine.subscribe(id: 1, entities: ["Trip"]).get()
        machine.activate(id: 1)
        machine.receive(ChangeSignal(.committed, entities: ["Trip"]))
        machine.receive(ChangeSignal(.committed))
        let events5 = machine.takeEvents()
        #expect(events5 == [.changes(subscription: 1, entities: [])])
    }

    @Test("reconnected absorbs pending changes and is not downgraded by later ones")
    func reconnectedWins() throws {
        var machine = SubscriptionStateMachine()
        try machine.subscribe(id: 1, entities: nil).get()
        machine.activate(id: 1)
        machine.receive(ChangeSignal(.committed, entities: ["Trip"]))
        machine.receive(ChangeSignal(.reconnected))
        machine.receive(ChangeSignal(.committed, entities: ["Stay"]))
        let events6 = machine.takeEvents()
        #expect(events6 == [.reconnected(subscription: 1)])
    }

    @Test("entity filters keep only the names asked for; other saves ring nothing")
    func filters() throws {
        var machine = SubscriptionStateMachine()
        try machine.subscribe(id: 1, entities: ["Trip"]).get()
        try machine.subscribe(id: 2, entities: nil).get()
        machine.activate(id: 1)
        machine.activate(id: 2)
        machine.receive(ChangeSignal(.committed, entities: ["Stay"]))
        let events7 = machine.takeEvents()
        #expect(events7 == [.changes(subscription: 2, entities: ["Stay"])])
        machine.receive(ChangeSignal(.committed, entities: ["Stay", "Trip"]))
        let events8 = machine.takeEvents()
        #expect(events8 == [
            .changes(subscription: 1, entities: ["Trip"]), .changes(subscription: 2, entities: ["Stay", "Trip"]),
        ])
    }

    @Test("unsubscribe drops the subscription and its pending event; errors are typed")
    func unsubscribe() throws {
        var machine = SubscriptionStateMachine(maxSubscriptions: 2)
        try machine.subscribe(id: 1, entities: nil).get()
        machine.activate(id: 1)
        #expect(throws: WireError.self) { try machine.subscribe(id: 1, entities: nil).get() }
        try machine.subscribe(id: 2, entities: nil).get()
        do {
            try machine.subscribe(id: 3, entities: nil).get()
            Issue.record("a third subscription was accepted")
        } catch {
            #expect(error.code == .tooManySubscriptions)
        }
        machine.receive(ChangeSignal(.committed, entities: ["Trip"]))
        try machine.unsubscribe(id: 1).get()
        let events9 = machine.takeEvents()
        #expect(events9.isEmpty, "subscription 2 is not active yet, 1 is gone")
        do {
            try machine.unsubscribe(id: 1).get()
            Issue.record("a second unsubscribe succeeded")
        } catch {
            #expect(error.code == .notFound)
            #expect(error.field == "subscription")
        }
        try machine.unsubscribe(id: 2).get()
        #expect(machine.isEmpty)
    }

    static func history(after: UInt64, _ tokens: [UInt64]) -> ChangeSignal.VisibleHistory {
        ChangeSignal.VisibleHistory(after: after, transactions: tokens.map {
            HistoryRecord(token: $0, transactionIdentifier: Int64($0), timestamp: Date(timeIntervalSince1970: 0))
        })
    }

    @Test("coalesced signals keep their history while each continues the one before, and drop it at a gap")
    func coalescesHistory() throws {
        var machine = SubscriptionStateMachine()
        try machine.subscribe(id: 7, entities: nil).get()
        try machine.subscribe(id: 8, entities: ["Stay"]).get()
        machine.activate(id: 7)
        machine.activate(id: 8)
        machine.receive(ChangeSignal(.committed, entities: ["Trip"], history: Self.history(after: 10, [11, 12])))
        machine.receive(ChangeSignal(.committed, entities: ["Stay"], history: Self.history(after: 12, [14])))
        // Subscription 8 missed the Trip signal: its pending history starts at 12, not where its client is.
        #expect(machine.takeEvents() == [
            .changes(subscription: 7, entities: ["Stay", "Trip"], history: Self.history(after: 10, [11, 12, 14])),
            .changes(subscription: 8, entities: ["Stay"], history: Self.history(after: 12, [14])),
        ])
        machine.receive(ChangeSignal(.committed, entities: ["Trip"], history: Self.history(after: 14, [15])))
        machine.receive(ChangeSignal(.committed, entities: ["Trip"], history: Self.history(after: 16, [17])))
        machine.receive(ChangeSignal(.committed, entities: ["Stay"]))
        #expect(machine.takeEvents() == [.changes(subscription: 7, entities: ["Trip", "Stay"].sorted()),
                                         .changes(subscription: 8, entities: ["Stay"])],
                "a gap (15 to 16) or a signal without history leaves the event without one")
    }
}
