import Foundation
@_spi(PGModelInternals) import PGModelCore
@_spi(PGModelInternals) import PGModelPostgres
import Testing

@_spi(PGModelInternals) @testable import PGModelServer

@Suite("History fanout state machine: one read per user, each listener from its own token")
struct HistoryFanoutStateMachineTests {
    static let alice = Requester.user(AuthenticatedUser(id: UUID(), name: "alice", isAdmin: false))
    static let bob = Requester.user(AuthenticatedUser(id: UUID(), name: "bob", isAdmin: false))
    static let admin = Requester.user(AuthenticatedUser(id: UUID(), name: "root", isAdmin: true))

    static func transaction(_ token: UInt64, _ entity: String = "Trip") -> HistoryRecord {
        HistoryRecord(token: token, transactionIdentifier: Int64(token), timestamp: Date(timeIntervalSince1970: 0),
                      changes: [HistoryChangeRecord(changeIdentifier: Int64(token), kind: .insert, entity: entity, id: UUID())],
                      storeIdentifier: "test")
    }

    static func reads(_ round: HistoryFanoutStateMachine.Round?) -> [HistoryFanoutStateMachine.Read] {
        guard case .read(let reads)? = round else { return [] }
        return reads
    }

    @Test("listeners of one user share one read from the smallest token; each user reads once")
    func oneReadPerUser() {
        var machine = HistoryFanoutStateMachine()
        machine.register(1, as: Self.alice, told: 40)
        machine.register(2, as: Self.bob, told: 41)
        machine.register(3, as: Self.alice, told: 38)
        machine.register(4, as: Self.admin, told: 41)
        let outcome1 = machine.ring(ChangeSignal(.committed))
        #expect(outcome1)
        let reads = Self.reads(machine.beginRound())
        #expect(reads.count == 3)
        #expect(reads.first { $0.requester == Self.alice } == .init(requester: Self.alice, after: 38, listeners: [1, 3]))
        #expect(reads.first { $0.requester == Self.bob } == .init(requester: Self.bob, after: 41, listeners: [2]))
        #expect(reads.first { $0.requester == Self.admin } == .init(requester: Self.admin, after: 41, listeners: [4]))
    }

    @Test("each listener is handed the transactions after its own token, and its token advances")
    func partsAfterOwnToken() throws {
        var machine = HistoryFanoutStateMachine()
        machine.register(1, as: Self.alice, told: 40)
        machine.register(2, as: Self.alice, told: 42)
        machine.register(3, as: Self.alice, told: 43)
        _ = machine.ring(ChangeSignal(.committed))
        let read = try #require(Self.reads(machine.beginRound()).first)
        #expect(read.after == 40)
        let page = HistoryPage(transactions: [Self.transaction(41, "Stay"), Self.transaction(43)])
        let handed = Dictionary(uniqueKeysWithValues: machine.deliver(.success(page), to: read))
        #expect(handed[1] == ChangeSignal(.committed, entities: ["Stay", "Trip"],
                                          history: .init(after: 40, transactions: page.transactions)))
        #expect(handed[2] == ChangeSignal(.committed, entities: ["Trip"],
                                          history: .init(after: 42, transactions: [page.transactions[1]])))
        #expect(handed[3] == nil, "nothing visible after 43")
        let outcome2 = machine.endRound()
        #expect(!outcome2)

        // Every token is now 43: the next round reads from there for all three.
        _ = machine.ring(ChangeSignal(.committed))
        let next = Self.reads(machine.beginRound())
        #expect(next.first?.after == 43)
    }

    @Test("rings during a round merge into one more round; reconnected absorbs committed and reads nothing")
    func ringsMerge() throws {
        var machine = HistoryFanoutStateMachine()
        machine.register(1, as: Self.alice, told: 5)
        let outcome3 = machine.ring(ChangeSignal(.committed))
        #expect(outcome3)
        let read = try #require(Self.reads(machine.beginRound()).first)
        for _ in 0..<50 {
            let outcome4 = machine.ring(ChangeSignal(.committed))
            #expect(!outcome4, "a round runs: no second one starts")
        }
        let outcome5 = machine.beginRound()
        #expect(outcome5 == nil, "one round at a time")
        _ = machine.deliver(.success(HistoryPage(transactions: [Self.transaction(6)])), to: read)
        let outcome6 = machine.endRound()
        #expect(outcome6, "the burst left one more round")
        let merged = Self.reads(machine.beginRound())
        #expect(merged == [.init(requester: Self.alice, after: 6, listeners: [1])])
        let outcome7 = machine.endRound()
        #expect(!outcome7)
        let outcome8 = machine.beginRound()
        #expect(outcome8 == nil)

        _ = machine.ring(ChangeSignal(.committed))
        _ = machine.ring(ChangeSignal(.reconnected))
        _ = machine.ring(ChangeSignal(.committed))
        let outcome9 = machine.beginRound()
        #expect(outcome9 == .reconnected([1]))
        let outcome10 = machine.endRound()
        #expect(!outcome10)
    }

    @Test("a listener removed during a round, or added after it began, is handed nothing from it")
    func membershipDuringRound() throws {
        var machine = HistoryFanoutStateMachine()
        machine.register(1, as: Self.alice, told: 1)
        machine.register(2, as: Self.alice, told: 1)
        _ = machine.ring(ChangeSignal(.committed))
        let read = try #require(Self.reads(machine.beginRound()).first)
        machine.remove(2)
        machine.register(3, as: Self.alice, told: 1)
        let handed = machine.deliver(.success(HistoryPage(transactions: [Self.transaction(2)])), to: read)
        #expect(handed.map(\.0) == [1])
        let outcome11 = machine.endRound()
        #expect(!outcome11)
        #expect(machine.count == 2)
    }

    @Test("a failed read or a full page rings without classes and history; a failed read keeps tokens")
    func failureAndFullPage() throws {
        struct Failure: Error {}
        var machine = HistoryFanoutStateMachine()
        machine.register(1, as: Self.bob, told: 0)
        _ = machine.ring(ChangeSignal(.committed))
        let read = try #require(Self.reads(machine.beginRound()).first)
        let outcome12 = machine.deliver(.failure(Failure()), to: read).map(\.1)
        #expect(outcome12 == [ChangeSignal(.committed)])
        let outcome13 = machine.endRound()
        #expect(!outcome13)
        _ = machine.ring(ChangeSignal(.committed))
        let again = try #require(Self.reads(machine.beginRound()).first)
        #expect(again.after == 0)
        let full = HistoryPage(transactions: (1...UInt64(HistoryFanoutStateMachine.pageSize)).map { Self.transaction($0) })
        let outcome14 = machine.deliver(.success(full), to: again).map(\.1)
        #expect(outcome14 == [ChangeSignal(.committed)])
        _ = machine.endRound()
        _ = machine.ring(ChangeSignal(.committed))
        let afterFull = Self.reads(machine.beginRound())
        #expect(afterFull.first?.after == UInt64(HistoryFanoutStateMachine.pageSize))
    }

    @Test("no listeners: a ring starts no read")
    func noListeners() {
        var machine = HistoryFanoutStateMachine()
        let outcome15 = machine.ring(ChangeSignal(.committed))
        #expect(outcome15)
        let outcome16 = machine.beginRound()
        #expect(outcome16 == nil)
        machine.register(1, as: Self.alice, told: 0)
        let outcome17 = machine.beginRound()
        #expect(outcome17 == nil, "the ring before it registered was consumed")
    }
}
