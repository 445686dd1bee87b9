import Foundation
import NIOConcurrencyHelpers
import NIOPosix
@_spi(PGModelInternals) import PGModelCore
@_spi(PGModelInternals) import PGModelIO
import Testing

@_spi(PGModelInternals) @testable import PGModel

/// The history feed takes the history a ring carries when it covers the feed's token, and reads the
/// store otherwise: without a database, against a store whose log and rings the test writes.
@Suite("History feed: rings that carry history")
struct HistoryFeedTests {
    /// A store with a history log and a doorbell the test controls; everything else is refused.
    final class ScriptedHistoryStore: ModelStore {
        private let log = NIOLockedValueBox([HistoryRecord]())
        let rings: AsyncStream<ChangeSignal>
        private let ring: AsyncStream<ChangeSignal>.Continuation

        init(_ tokens: [UInt64]) {
            (rings, ring) = AsyncStream.makeStream(of: ChangeSignal.self)
            log.withLockedValue { $0 = tokens.map { HistoryFeedTests.record($0, author: "read") } }
        }

        func append(_ token: UInt64) { log.withLockedValue { $0.append(HistoryFeedTests.record(token, author: "read")) } }
        func send(_ signal: ChangeSignal) { ring.yield(signal) }

        func fetchHistory(_ request: HistoryRequest) async throws -> HistoryPage {
            let all = log.withLockedValue { $0 }
            if request.newestFirst { return HistoryPage(transactions: all.last.map { [$0] } ?? []) }
            guard case .token(.greater, let after) = request.filter else {
                throw PGModelError(.unsupportedHistoryQuery, "the scripted store reads after a token only")
            }
            return HistoryPage(transactions: all.filter { $0.token > after })
        }

        func changeSignals() -> AsyncStream<ChangeSignal> { rings }
        func close() async { ring.finish() }
        func prepare(_ schema: SchemaDescription) async throws { throw Self.refused }
        func fetch(_ request: FetchRequest) async throws -> [FetchedRow] { throw Self.refused }
        func fetchTable(_ request: FetchRequest) async throws -> FetchedTable { throw Self.refused }
        func count(_ request: FetchRequest) async throws -> Int { throw Self.refused }
        func fetchIdentifiers(_ request: FetchRequest) async throws -> [RowReference] { throw Self.refused }
        func save(_ request: SaveRequest) async throws -> SaveResult { throw Self.refused }
        func deleteHistory(_ request: HistoryRequest) async throws -> Int { throw Self.refused }
        func sharing(of record: RowReference) async throws -> RecordSharing { throw Self.refused }
        static let refused = PGModelError(.internalError, "not part of this test")
    }

    static func record(_ token: UInt64, author: String) -> HistoryRecord {
        HistoryRecord(token: token, transactionIdentifier: Int64(token), author: author, timestamp: Date(timeIntervalSince1970: 0))
    }

    static func carried(after: UInt64, _ tokens: [UInt64]) -> ChangeSignal {
        ChangeSignal(.committed, entities: ["Trip"],
                     history: ChangeSignal.VisibleHistory(after: after, transactions: tokens.map { record($0, author: "ring") }))
    }

    @Test("a ring covering the token is delivered as carried; one past a gap makes the feed read; overlap is not repeated")
    func takesCarriedHistory() async throws {
        let store = ScriptedHistoryStore([1, 2])
        let feed = HistoryFeed(store: store, executor: EventLoopTaskExecutor(eventLoop: MultiThreadedEventLoopGroup.singleton.next()))
        defer { feed.stop() }
        let (deliveries, delivered) = AsyncStream.makeStream(of: [HistoryRecord].self)
        _ = try await feed.register { delivered.yield($0) }
        var received = deliveries.makeAsyncIterator()

        // Not in the store: only the ring can deliver them.
        store.send(Self.carried(after: 2, [3, 4]))
        let first = await received.next()
        #expect(first?.map(\.token) == [3, 4] && first?.allSatisfy { $0.author == "ring" } == true, "\(String(describing: first))")

        // Starts after 10 while the feed is at 4: what lies between is unknown, so the feed reads.
        store.append(11)
        store.send(Self.carried(after: 10, [11]))
        let second = await received.next()
        #expect(second?.map(\.token) == [11] && second?.first?.author == "read", "\(String(describing: second))")

        // Starts before the token: only what is past it is new.
        store.send(Self.carried(after: 3, [4, 11, 12]))
        let third = await received.next()
        #expect(third?.map(\.token) == [12] && third?.first?.author == "ring", "\(String(describing: third))")
    }
}
