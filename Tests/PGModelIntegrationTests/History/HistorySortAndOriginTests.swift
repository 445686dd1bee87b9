import Foundation
@_spi(PGModelInternals) import PGModelClient
@_spi(PGModelInternals) import PGModelCore
@_spi(PGModelInternals) import PGModelPostgres
import Testing
import PGModelTesting

@_spi(PGModelInternals) @testable import PGModel

@Model final class HistorySortNote {
    var text: String
    init(text: String) { self.text = text }
}

/// An app's own transaction type, conforming as Apple's protocol allows: the store cannot build it.
private struct AppTransaction: HistoryTransaction {
    struct Token: Codable, Comparable, Hashable, Identifiable, Sendable {
        let id: Int
        static func < (lhs: Self, rhs: Self) -> Bool { lhs.id < rhs.id }
    }

    let author: String?
    let changes: [HistoryChange]
    let storeIdentifier: String
    let timestamp: Date
    let token: Token
    let transactionIdentifier: Int
    var id: Int { transactionIdentifier }
}

/// `HistoryDescriptor.sortBy` with several keys, sorted in SQL before `fetchLimit`; the saving program
/// and process recorded on each transaction; an app's own `HistoryTransaction` type refused with a typed
/// error. On both stores.
@Suite("History: sorting by several keys, the saving process, other transaction types")
struct HistorySortAndOriginTests {
    nonisolated(unsafe) static let types: [any PersistentModel.Type] = [HistorySortNote.self]

    /// Five saves by authors nil, b, a, b, nil (in that order); their tokens in save order.
    static func saveFive(_ fixture: StoreFixture) async throws -> (tokens: [DefaultHistoryToken], a: String, b: String) {
        let a = "a-\(fixture.token)"
        let b = "b-\(fixture.token)"
        var tokens: [DefaultHistoryToken] = []
        for (index, author) in [nil, b, a, b, nil].enumerated() {
            let context = fixture.newContext()
            context.author = author
            context.insert(HistorySortNote(text: "note \(index)"))
            try await context.saveAsync()
            var newest = HistoryDescriptor<DefaultHistoryTransaction>(sortBy: [SortDescriptor(\.token, order: .reverse)])
            newest.fetchLimit = 1
            tokens.append(try #require(try await context.fetchHistoryAsync(newest).first?.token))
        }
        return (tokens, a, b)
    }

    @Test("sortBy author then token (either direction) orders in SQL, before fetchLimit", arguments: StoreKind.allCases)
    func sortsByAuthorThenToken(_ kind: StoreKind) async throws {
        let fixture = try await StoreFixture.make(kind, Self.types)
        let (t, a, b) = try await Self.saveFive(fixture)
        let first = t[0]
        let context = fixture.newContext()
        func fetch(_ sort: [SortDescriptor<DefaultHistoryTransaction>], limit: Int = 0) async throws -> [(String?, DefaultHistoryToken)] {
            var descriptor = HistoryDescriptor<DefaultHistoryTransaction>(predicate: #Predicate { $0.token >= first }, sortBy: sort)
            descriptor.fetchLimit = limit
            return try await context.fetchHistoryAsync(descriptor).map { ($0.author, $0.token) }
        }
        func same(_ lhs: [(String?, DefaultHistoryToken)], _ rhs: [(String?, DefaultHistoryToken)]) -> Bool {
            lhs.count == rhs.count && zip(lhs, rhs).allSatisfy { $0.0 == $1.0 && $0.1 == $1.1 }
        }

        // No author first, as Swift orders nil; each author's transactions in commit order.
        let forward = try await fetch([SortDescriptor(\.author), SortDescriptor(\.token)])
        #expect(same(forward, [(nil, t[0]), (nil, t[4]), (a, t[2]), (b, t[1]), (b, t[3])]), "\(forward)")
        let reverse = try await fetch([SortDescriptor(\.author, order: .reverse), SortDescriptor(\.transactionIdentifier, order: .reverse)])
        #expect(same(reverse, [(b, t[3]), (b, t[1]), (a, t[2]), (nil, t[4]), (nil, t[0])]), "\(reverse)")
        // The limit applies after the sort, in the database.
        let firstThree = try await fetch([SortDescriptor(\.author, order: .reverse), SortDescriptor(\.token)], limit: 3)
        #expect(same(firstThree, [(b, t[1]), (b, t[3]), (a, t[2])]), "\(firstThree)")
        // A commit-order key settles the order: what follows it changes nothing.
        let byTime = try await fetch([SortDescriptor(\.timestamp, order: .reverse), SortDescriptor(\.author)])
        #expect(byTime.map(\.1) == t.reversed())
        // storeIdentifier is one value per store; author alone ends with commit order.
        let byStore = try await fetch([SortDescriptor(\.storeIdentifier), SortDescriptor(\.author)])
        #expect(same(byStore, forward), "\(byStore)")

        // The synchronous form sorts the same.
        let synchronous = try await offCooperativePool {
            try ModelContext(fixture.container).fetchHistory(HistoryDescriptor<DefaultHistoryTransaction>(
                predicate: #Predicate { $0.token >= first }, sortBy: [SortDescriptor(\.author), SortDescriptor(\.token)])).map(\.token)
        }
        #expect(synchronous == forward.map(\.1))

        // A key outside the vocabulary is refused, naming what is allowed.
        await #expect {
            _ = try await fetch([SortDescriptor(\.bundleIdentifier)])
        } throws: { ($0 as? PGModelError)?.code == .unsupportedHistoryQuery }
        await fixture.container.close()
    }

    @Test("a reader paging a sorted history resumes after its last transaction in that order", arguments: StoreKind.allCases)
    func pagesThroughSortedHistory(_ kind: StoreKind) async throws {
        let fixture = try await StoreFixture.make(kind, Self.types)
        let (t, _, _) = try await Self.saveFive(fixture)
        let store = fixture.container.store
        for newestFirst in [false, true] {
            for ascending in [true, false] {
                let base = HistoryRequest(filter: .token(.greaterOrEqual, t[0].value), newestFirst: newestFirst,
                                          sort: [HistorySortKey(.author, ascending: ascending)])
                let whole = try await store.fetchHistory(base).transactions.map(\.token)
                #expect(whole.count == 5)
                var paged: [UInt64] = []
                var page = base
                page.limit = 2
                while true {
                    let records = try await store.fetchHistory(page).transactions
                    paged += records.map(\.token)
                    guard let last = records.last, records.count == 2 else { break }
                    page.filter = .and([base.filter, base.condition(after: last)])
                }
                #expect(paged == whole, "newestFirst \(newestFirst), ascending \(ascending)")
            }
        }
        await fixture.container.close()
    }

    @Test("a transaction records the program and process that saved it", arguments: StoreKind.allCases)
    func recordsTheSavingProcess(_ kind: StoreKind) async throws {
        let fixture = try await StoreFixture.make(kind, Self.types)
        let context = fixture.newContext()
        context.insert(HistorySortNote(text: "origin"))
        try await context.saveAsync()
        var newest = HistoryDescriptor<DefaultHistoryTransaction>(sortBy: [SortDescriptor(\.token, order: .reverse)])
        newest.fetchLimit = 1
        let transaction = try #require(try await context.fetchHistoryAsync(newest).first)
        #expect(transaction.processIdentifier == String(ProcessInfo.processInfo.processIdentifier))
        #expect(transaction.bundleIdentifier == (Bundle.main.bundleIdentifier ?? ProcessInfo.processInfo.processName))
        #expect(!transaction.bundleIdentifier.isEmpty)
        await fixture.container.close()
    }

    @Test("HistoryDescriptor of an app's own transaction type compiles and is refused with a typed error", arguments: StoreKind.allCases)
    func ownTransactionTypeIsRefused(_ kind: StoreKind) async throws {
        let fixture = try await StoreFixture.make(kind, Self.types)
        let context = fixture.newContext()
        let token = AppTransaction.Token(id: 1)
        var descriptor = HistoryDescriptor<AppTransaction>(predicate: #Predicate { $0.token > token },
                                                           sortBy: [SortDescriptor(\.transactionIdentifier)])
        descriptor.fetchLimit = 1
        await #expect { _ = try await context.fetchHistoryAsync(descriptor) } throws: {
            ($0 as? PGModelError)?.code == .unsupportedHistoryQuery
        }
        let refused = try await offCooperativePool {
            do {
                _ = try ModelContext(fixture.container).fetchHistory(HistoryDescriptor<AppTransaction>())
                return PGModelError.Code?.none
            } catch let error as PGModelError {
                return error.code
            }
        }
        #expect(refused == .unsupportedHistoryQuery)
        await #expect { try await context.deleteHistoryAsync(HistoryDescriptor<AppTransaction>()) } throws: {
            ($0 as? PGModelError)?.code == .unsupportedHistoryQuery
        }
        await fixture.container.close()
    }
}

/// Through the service the saving process is the client's word: only its own user sees it as sent.
@Suite("Server: the saving process in history")
struct ServerHistoryOriginTests {
    @Test("a service user's stated process is shown as theirs to every other reader, and as sent to themselves")
    func statedProcessIsQualified() async throws {
        let alice = try await ServerTestHarness.makeUser("alice")
        let root = try await ServerTestHarness.makeUser("root", admin: true)
        let entity = ServerTestHarness.uniqueEntity("Origin")
        try await ServerTestHarness.register(ServerRemoteStoreTests.schema(entity))
        try await ServerTestHarness.withServer { port in
            let store = try RemoteModelStore(url: try ServerRemoteStoreTests.url(alice, port: port))
            try await store.prepare(ServerRemoteStoreTests.schema(entity))
            let row = ServerRemoteStoreTests.row(entity, "o_\(ServerTestHarness.uniqueSuffix())", rank: 1)
            _ = try await store.save(SaveRequest(inserts: [row], author: "origin-test", bundleIdentifier: "com.example.Other",
                                                 processIdentifier: "1"))
            let request = HistoryRequest(filter: .entities([entity]))
            let own = try #require(try await store.fetchHistory(request).transactions.last)
            #expect(own.bundleIdentifier == "com.example.Other")
            #expect(own.processIdentifier == "1")
            await store.close()

            // An admin through the service, and a direct connection, see it as alice's word.
            let admin = try RemoteModelStore(url: try ServerRemoteStoreTests.url(root, port: port))
            let seen = try #require(try await admin.fetchHistory(request).transactions.last)
            #expect(seen.bundleIdentifier == "\(alice.name)@com.example.Other")
            #expect(seen.processIdentifier == "\(alice.name)@1")
            await admin.close()
            let direct = try await ServerTestHarness.withDatabase { engine, connection in
                try await engine.fetchHistory(request, as: .trusted, on: connection)
            }
            #expect(direct.transactions.last?.processIdentifier == "\(alice.name)@1")

            // Too long an identifier is refused before anything is written.
            let again = try RemoteModelStore(url: try ServerRemoteStoreTests.url(alice, port: port))
            let other = ServerRemoteStoreTests.row(entity, "o_\(ServerTestHarness.uniqueSuffix())", rank: 2)
            await #expect {
                _ = try await again.save(SaveRequest(inserts: [other], processIdentifier: String(repeating: "9", count: 300)))
            } throws: { ($0 as? PGModelError)?.code == .invalidField }
            await again.close()
        }
    }
}
