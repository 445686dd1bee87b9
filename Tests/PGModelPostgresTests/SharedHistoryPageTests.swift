import Foundation
@_spi(PGModelInternals) import PGModelCore
@_spi(PGModelInternals) import PGModelPostgres
import Testing

/// Cutting one reader's page out of a page read once for many: only the transactions and changes the
/// visibility query listed for that reader, with another user's process identity prefixed.
@Suite("Shared history page")
struct SharedHistoryPageTests {
    static let alice = AuthenticatedUser(id: UUID(), name: "alice", isAdmin: false)
    static let bob = AuthenticatedUser(id: UUID(), name: "bob", isAdmin: false)

    static func change(_ id: Int64, _ entity: String) -> HistoryChangeRecord {
        HistoryChangeRecord(changeIdentifier: id, kind: .insert, entity: entity, id: UUID())
    }

    static let transactions = [
        HistoryRecord(token: 10, transactionIdentifier: 1, userName: "alice", timestamp: Date(timeIntervalSince1970: 0),
                      changes: [change(100, "Trip"), change(101, "Secret")], storeIdentifier: "s",
                      bundleIdentifier: "app", processIdentifier: "7"),
        HistoryRecord(token: 11, transactionIdentifier: 2, userName: "bob", timestamp: Date(timeIntervalSince1970: 0),
                      changes: [change(102, "Trip"), change(103, "Trip")], storeIdentifier: "s",
                      bundleIdentifier: "tool", processIdentifier: "8"),
    ]

    static let page = SharedHistoryPage(
        readers: [.user(alice), .user(bob), .trusted], transactions: transactions,
        transactionReaders: [1: [0], 2: [0, 1]], changeReaders: [100: [0], 101: [0], 102: [0, 1], 103: [1]],
        audienceOnlyChanges: [103], readThrough: 20)

    @Test("each reader gets only the transactions and changes listed for them")
    func readersSeeTheirPart() {
        let alices = Self.page.page(for: 0).transactions
        #expect(alices.map(\.token) == [10, 11])
        #expect(alices.map { $0.changes.map(\.changeIdentifier) } == [[100, 101], [102]])
        let bobs = Self.page.page(for: 1).transactions
        #expect(bobs.map(\.token) == [11], "alice's transaction is not bob's to see")
        #expect(bobs.first?.changes.map(\.changeIdentifier) == [102, 103])
    }

    @Test("another user's bundle and process are shown with their name, one's own as saved")
    func processIdentityShown() {
        let alices = Self.page.page(for: 0).transactions
        #expect(alices[0].bundleIdentifier == "app" && alices[0].processIdentifier == "7")
        #expect(alices[1].bundleIdentifier == "bob@tool" && alices[1].processIdentifier == "bob@8")
        let bobs = Self.page.page(for: 1).transactions
        #expect(bobs[0].bundleIdentifier == "tool")
    }

    @Test("the direct store sees every transaction and change but audience events; an unknown reader nothing")
    func trustedAndOutOfRange() {
        let trusted = Self.page.page(for: 2).transactions
        #expect(trusted.map { $0.changes.map(\.changeIdentifier) } == [[100, 101], [102]])
        #expect(Self.page.page(for: 3).transactions.isEmpty)
        #expect(Self.page.page(for: -1).transactions.isEmpty)
    }

    @Test("reader lists are 1-based positions; anything else is dropped")
    func readerPositions() {
        #expect(SharedHistoryPage.readerPositions("1,3", count: 3) == [0, 2])
        #expect(SharedHistoryPage.readerPositions("0,4,x,,2", count: 3) == [1])
        #expect(SharedHistoryPage.readerPositions("", count: 3).isEmpty)
    }
}
