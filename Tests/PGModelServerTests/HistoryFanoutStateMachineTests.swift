import Foundation
@_spi(PGModelInternals) import PGModelCore
@_spi(PGModelInternals) import PGModelPostgres
import Testing

@_spi(PGModelInternals) @testable import PGModelServer

@Suite("History fanout state machine: one read a round for every user, each listener from its own position")
struct HistoryFanoutStateMachineTests {
    static let alice = Requester.user(AuthenticatedUser(id: UUID(), name: "alice", isAdmin: false))
    static let bob = Requester.user(AuthenticatedUser(id: UUID(), name: "bob", isAdmin: false))
    static let admin = Requester.user(AuthenticatedUser(id: UUID(), name: "root", isAdmin: true))

    static func transaction(_ token: UInt64, _ entity: String = "Trip") -> HistoryRecord {
        HistoryRecord(token: token, transactionIdentifier: Int64(token), timestamp: Date(timeIntervalSince1970: 0),
                      changes: [HistoryChangeRecord(changeIdentifier: Int64(token), kind: .insert, entity: entity, id: UUID())],
                      storeIdentifier: "test")
    }

    /// A shared page of `transactions` in which each reader sees the tokens `visible` lists for it.
    static func shared(_ read: HistoryFanoutStateMachine.Read, _ transactions: [HistoryRecord], visible: [Requester: Set<UInt64>],
                       readThrough: UInt64, isFull: Bool = false) -> SharedHistoryPage {
        var transactionReaders: [Int64: Set<Int>] = [:]
        var changeReaders: [Int64: Set<Int>] = [:]
        for (index, reader) in read.readers.enumerated() {
            for transaction in transactions where visible[reader]?.contains(transaction.token) == true {
                transactionReaders[transaction.transactionIdentifier, default: []].insert(index)
                for change in transaction.changes { changeReaders[change.changeIdentifier, default: []].insert(index) }
            }
        }
        return SharedHistoryPage(readers: read.readers, transactions: transactions, transactionReaders: transactionReaders,
                                 changeReaders: changeReaders, readThrough: readThrough, isFull: isFull)
    }

    static func read(_ round: HistoryFanoutStateMachine.Round?) -> HistoryFanoutStateMachine.Read? {
        guard case .read(let read)? = round else { return nil }
        return read
    }

    @Test("one read a round for every user, from the oldest checked position; readers listed once each")
    func oneReadForAll() throws {
        var machine = HistoryFanoutStateMachine()
        machine.register(1, as: Self.alice, told: 40, checked: 90)
        machine.register(2, as: Self.bob, told: 41, checked: 88)
        machine.register(3, as: Self.alice, told: 38, checked: 90)
        machine.register(4, as: Self.admin, told: 41, checked: 95)
        let starts = machine.ring(ChangeSignal(.committed))
        #expect(starts)
        let read = try #require(Self.read(machine.beginRound()))
        #expect(read == .init(after: 88, readers: [Self.alice, Self.bob, Self.admin], listeners: [1, 2, 3, 4]))
    }

    @Test("each listener is handed its user's part past its own position; the event's after is its told token")
    func partsPerUser() throws {
        var machine = HistoryFanoutStateMachine()
        machine.register(1, as: Self.alice, told: 40, checked: 50)
        machine.register(2, as: Self.alice, told: 52, checked: 52)
        machine.register(3, as: Self.bob, told: 10, checked: 50)
        _ = machine.ring(ChangeSignal(.committed))
        let read = try #require(Self.read(machine.beginRound()))
        #expect(read.after == 50)
        let transactions = [Self.transaction(51, "Stay"), Self.transaction(53), Self.transaction(54, "Secret")]
        let page = Self.shared(read, transactions, visible: [Self.alice: [51, 53], Self.bob: [54]], readThrough: 60)
        let handed = Dictionary(uniqueKeysWithValues: machine.deliver(.success(page), to: read))
        #expect(handed[1] == ChangeSignal(.committed, entities: ["Stay", "Trip"],
                                          history: .init(after: 40, transactions: [transactions[0], transactions[1]])))
        #expect(handed[2] == ChangeSignal(.committed, entities: ["Trip"], history: .init(after: 52, transactions: [transactions[1]])),
                "only what lies past its own position")
        #expect(handed[3] == ChangeSignal(.committed, entities: ["Secret"], history: .init(after: 10, transactions: [transactions[2]])))
        #expect(handed[1]?.entities.contains("Secret") == false && handed[2]?.entities.contains("Secret") == false,
                "alice is told nothing of what only bob may see")
        let outcome1 = machine.endRound()
        #expect(!outcome1)

        // Everyone was checked through 60: the next read starts there, and the events' after moved on.
        _ = machine.ring(ChangeSignal(.committed))
        let next = try #require(Self.read(machine.beginRound()))
        #expect(next.after == 60)
        let later = Self.shared(next, [Self.transaction(61)], visible: [Self.alice: [61], Self.bob: [61]], readThrough: 61)
        let second = Dictionary(uniqueKeysWithValues: machine.deliver(.success(later), to: next))
        #expect(second[1]?.history?.after == 53)
        #expect(second[3]?.history?.after == 54)
    }

    @Test("history a listener may not see moves its position on, hands it nothing and keeps its told token")
    func invisibleHistoryAdvances() throws {
        var machine = HistoryFanoutStateMachine()
        machine.register(1, as: Self.bob, told: 3, checked: 3)
        for round in 0..<3 {
            _ = machine.ring(ChangeSignal(.committed))
            let read = try #require(Self.read(machine.beginRound()))
            #expect(read.after == 3 + UInt64(round) * 500, "each round starts where the last one stopped")
            let transactions = (1...500).map { Self.transaction(read.after + UInt64($0)) }
            let page = Self.shared(read, transactions, visible: [:], readThrough: read.after + 500, isFull: true)
            let outcome2 = machine.deliver(.success(page), to: read)
            #expect(outcome2.isEmpty)
            let outcome3 = machine.endRound()
            #expect(outcome3, "a full page reads on at once")
        }
        let read = try #require(Self.read(machine.beginRound()))
        let visible = Self.transaction(1_504)
        let page = Self.shared(read, [visible], visible: [Self.bob: [1_504]], readThrough: 1_510)
        let handed = machine.deliver(.success(page), to: read)
        #expect(handed.map(\.1) == [ChangeSignal(.committed, entities: ["Trip"], history: .init(after: 3, transactions: [visible]))])
        let outcome4 = machine.endRound()
        #expect(!outcome4)
    }

    @Test("rings during a round merge into one more round; reconnected absorbs committed and reads nothing")
    func ringsMerge() throws {
        var machine = HistoryFanoutStateMachine()
        machine.register(1, as: Self.alice, told: 5, checked: 5)
        let outcome5 = machine.ring(ChangeSignal(.committed))
        #expect(outcome5)
        let read = try #require(Self.read(machine.beginRound()))
        for _ in 0..<50 {
            let outcome6 = machine.ring(ChangeSignal(.committed))
            #expect(!outcome6, "a round runs: no second one starts")
        }
        let outcome7 = machine.beginRound()
        #expect(outcome7 == nil, "one round at a time")
        _ = machine.deliver(.success(Self.shared(read, [Self.transaction(6)], visible: [Self.alice: [6]], readThrough: 6)), to: read)
        let outcome8 = machine.endRound()
        #expect(outcome8, "the burst left one more round")
        let merged = try #require(Self.read(machine.beginRound()))
        #expect(merged == .init(after: 6, readers: [Self.alice], listeners: [1]))
        let outcome9 = machine.endRound()
        #expect(!outcome9)
        let outcome10 = machine.beginRound()
        #expect(outcome10 == nil)

        _ = machine.ring(ChangeSignal(.committed))
        _ = machine.ring(ChangeSignal(.reconnected))
        _ = machine.ring(ChangeSignal(.committed))
        let outcome11 = machine.beginRound()
        #expect(outcome11 == .reconnected([1]))
        let outcome12 = machine.endRound()
        #expect(!outcome12)
    }

    @Test("a listener removed during a round, or added after it began, is handed nothing from it")
    func membershipDuringRound() throws {
        var machine = HistoryFanoutStateMachine()
        machine.register(1, as: Self.alice, told: 1, checked: 1)
        machine.register(2, as: Self.alice, told: 1, checked: 1)
        _ = machine.ring(ChangeSignal(.committed))
        let read = try #require(Self.read(machine.beginRound()))
        machine.remove(2)
        machine.register(3, as: Self.alice, told: 1, checked: 1)
        let handed = machine.deliver(.success(Self.shared(read, [Self.transaction(2)], visible: [Self.alice: [2]], readThrough: 2)), to: read)
        #expect(handed.map(\.0) == [1])
        let outcome13 = machine.endRound()
        #expect(!outcome13)
        #expect(machine.count == 2)
        // The newcomer is still at 1: the next read starts there.
        _ = machine.ring(ChangeSignal(.committed))
        let newcomerRead = Self.read(machine.beginRound())
        #expect(newcomerRead?.after == 1)
    }

    @Test("a failed read rings without classes and keeps positions; deleted history rings and skips past it")
    func failureAndDeletion() throws {
        struct Failure: Error {}
        var machine = HistoryFanoutStateMachine()
        machine.register(1, as: Self.bob, told: 0, checked: 0)
        _ = machine.ring(ChangeSignal(.committed))
        let read = try #require(Self.read(machine.beginRound()))
        let outcome14 = machine.deliver(.failure(Failure()), to: read).map(\.1)
        #expect(outcome14 == [ChangeSignal(.committed)])
        let outcome15 = machine.endRound()
        #expect(!outcome15)
        _ = machine.ring(ChangeSignal(.committed))
        let again = try #require(Self.read(machine.beginRound()))
        #expect(again.after == 0)
        let expired = SharedHistoryPage(readers: again.readers, readThrough: 70, expiredThrough: 70)
        let outcome16 = machine.deliver(.success(expired), to: again).map(\.1)
        #expect(outcome16 == [ChangeSignal(.committed)])
        let outcome17 = machine.endRound()
        #expect(outcome17, "reads on past the deleted history")
        let pastDeleted = Self.read(machine.beginRound())
        #expect(pastDeleted?.after == 70)
    }

    @Test("a long visible part is announced without its history")
    func longPartNotCarried() throws {
        var machine = HistoryFanoutStateMachine()
        machine.register(1, as: Self.alice, told: 0, checked: 0)
        _ = machine.ring(ChangeSignal(.committed))
        let read = try #require(Self.read(machine.beginRound()))
        let transactions = (1...UInt64(HistoryFanoutStateMachine.maxEventTransactions + 1)).map { Self.transaction($0) }
        let page = Self.shared(read, transactions, visible: [Self.alice: Set(transactions.map(\.token))], readThrough: 200)
        let outcome18 = machine.deliver(.success(page), to: read).map(\.1)
        #expect(outcome18 == [ChangeSignal(.committed, entities: ["Trip"])])
    }

    @Test("no listeners: a ring starts no read")
    func noListeners() {
        var machine = HistoryFanoutStateMachine()
        let outcome19 = machine.ring(ChangeSignal(.committed))
        #expect(outcome19)
        let outcome20 = machine.beginRound()
        #expect(outcome20 == nil)
        machine.register(1, as: Self.alice, told: 0, checked: 0)
        let outcome21 = machine.beginRound()
        #expect(outcome21 == nil, "the ring before it registered was consumed")
    }
}
