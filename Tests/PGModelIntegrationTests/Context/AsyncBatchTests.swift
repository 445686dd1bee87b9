import Foundation
@_spi(PGModelInternals) @testable import PGModel
import Testing
import PGModelTesting

@Model final class AsyncBatchCard {
    var deck: String
    var rank: Int
    init(deck: String, rank: Int) {
        self.deck = deck
        self.rank = rank
    }
}

/// Only the erase test writes this class: erasing deletes every row of it.
@Model final class AsyncEraseNote {
    var text: String
    init(text: String) { self.text = text }
}

/// Hands a non-Sendable value to one other thread while the test waits for it.
private struct Handed<Value>: @unchecked Sendable {
    let value: Value
}

/// `enumerateAsync`, `fetchAsync(_:batchSize:)`, `transactionAsync` and `eraseAsync` give what their
/// synchronous forms give, with the same errors, on both stores.
@Suite("ModelContext async batches, transactions and erase")
struct AsyncBatchTests {
    nonisolated(unsafe) static let types: [any PersistentModel.Type] = [AsyncBatchCard.self]

    /// A deck of `count` cards ranked 0..<count, saved; its name.
    static func deal(_ fixture: StoreFixture, count: Int) async throws -> String {
        let deck = "deck-\(fixture.token)"
        let context = fixture.newContext()
        for rank in 0..<count { context.insert(AsyncBatchCard(deck: deck, rank: rank)) }
        try await context.saveAsync()
        return deck
    }

    @Test("enumerateAsync visits what enumerate visits, in order, batch by batch", arguments: StoreKind.allCases)
    func enumerateMatchesSynchronousForm(_ kind: StoreKind) async throws {
        let fixture = try await StoreFixture.make(kind, Self.types)
        let deck = try await Self.deal(fixture, count: 23)
        var limited = FetchDescriptor<AsyncBatchCard>(predicate: #Predicate { $0.deck == deck },
                                                      sortBy: [SortDescriptor(\.rank, order: .reverse)])
        limited.fetchLimit = 20
        let descriptor = limited
        let context = fixture.newContext()
        var seen: [Int] = []
        try await context.enumerateAsync(descriptor, batchSize: 6) { seen.append($0.rank) }
        #expect(seen == Array((3..<23).reversed()))
        let synchronous = try await offCooperativePool {
            var ranks: [Int] = []
            try ModelContext(fixture.container).enumerate(descriptor, batchSize: 6) { ranks.append($0.rank) }
            return ranks
        }
        #expect(seen == synchronous)
        // Six batches of four: each is a round trip, none blocks a thread.
        let counter = fixture.newContext()
        let before = counter.storeRoundTrips
        var count = 0
        try await counter.enumerateAsync(FetchDescriptor<AsyncBatchCard>(predicate: #Predicate { $0.deck == deck }), batchSize: 4) { _ in count += 1 }
        #expect(count == 23)
        #expect(counter.storeRoundTrips - before == 6)
        await fixture.container.close()
    }

    @Test("enumerateAsync throws enumerate's errors: a bad batch size, and changes left unsaved", arguments: StoreKind.allCases)
    func enumerateErrorsMatchSynchronousForm(_ kind: StoreKind) async throws {
        let fixture = try await StoreFixture.make(kind, Self.types)
        let deck = try await Self.deal(fixture, count: 5)
        let descriptor = FetchDescriptor<AsyncBatchCard>(predicate: #Predicate { $0.deck == deck }, sortBy: [SortDescriptor(\.rank)])
        let context = fixture.newContext()
        await #expect { try await context.enumerateAsync(descriptor, batchSize: 0) { _ in } } throws: {
            ($0 as? PGModelError)?.code == .invalidField
        }
        await #expect { try await context.enumerateAsync(descriptor, batchSize: 2) { $0.rank += 100 } } throws: {
            ($0 as? PGModelError)?.code == .invalidField
        }
        context.rollback()
        // Allowed, and saved inside the (suspending) block: every card moves to another deck once (a
        // change that kept it in the descriptor's range after the current batch would be seen again).
        let done = deck + "-done"
        try await context.enumerateAsync(descriptor, batchSize: 2, allowEscapingMutations: true) { card in
            card.deck = done
            try await context.saveAsync()
        }
        let moved = FetchDescriptor<AsyncBatchCard>(predicate: #Predicate { $0.deck == done }, sortBy: [SortDescriptor(\.rank)])
        #expect(try await fixture.newContext().fetchAsync(moved).map(\.rank) == [0, 1, 2, 3, 4])
        #expect(try await fixture.newContext().fetchCountAsync(descriptor) == 0)
        await fixture.container.close()
    }

    @Test("fetchAsync(_:batchSize:) is fetch(_:batchSize:)'s collection, its first batch already loaded", arguments: StoreKind.allCases)
    func batchedFetchMatchesSynchronousForm(_ kind: StoreKind) async throws {
        let fixture = try await StoreFixture.make(kind, Self.types)
        let deck = try await Self.deal(fixture, count: 11)
        let descriptor = FetchDescriptor<AsyncBatchCard>(predicate: #Predicate { $0.deck == deck }, sortBy: [SortDescriptor(\.rank)])
        let context = fixture.newContext()
        let cards = try await context.fetchAsync(descriptor, batchSize: 4)
        let afterFetch = context.storeRoundTrips
        #expect(cards.count == 11)
        #expect(cards.prefix(4).map(\.rank) == [0, 1, 2, 3])
        #expect(context.storeRoundTrips == afterFetch, "the first batch came with the fetch")
        // Later batches load when read, blocking as the synchronous collection's do: read them off the pool.
        let handed = Handed(value: cards)
        let all = try await offCooperativePool { handed.value.map(\.rank) }
        #expect(all == Array(0..<11))
        #expect(cards.lastError == nil)
        let synchronous = try await offCooperativePool {
            try ModelContext(fixture.container).fetch(descriptor, batchSize: 4).map(\.rank)
        }
        #expect(all == synchronous)
        await #expect { _ = try await context.fetchAsync(descriptor, batchSize: 0) } throws: { ($0 as? PGModelError)?.code == .invalidField }
        let none = try await context.fetchAsync(FetchDescriptor<AsyncBatchCard>(predicate: #Predicate { $0.deck == "no such deck" }), batchSize: 4)
        #expect(none.isEmpty)
        await fixture.container.close()
    }

    @Test("transactionAsync saves what its block did, and rolls everything back when the block or the save throws", arguments: StoreKind.allCases)
    func transactionMatchesSynchronousForm(_ kind: StoreKind) async throws {
        struct Refusal: Error {}
        let fixture = try await StoreFixture.make(kind, Self.types)
        let deck = "tx-\(fixture.token)"
        let descriptor = FetchDescriptor<AsyncBatchCard>(predicate: #Predicate { $0.deck == deck }, sortBy: [SortDescriptor(\.rank)])
        let context = fixture.newContext()
        try await context.transactionAsync {
            context.insert(AsyncBatchCard(deck: deck, rank: 1))
            let existing = try await context.fetchAsync(descriptor)   // the block may suspend
            #expect(existing.map(\.rank) == [1])
            context.insert(AsyncBatchCard(deck: deck, rank: 2))
        }
        #expect(!context.hasChanges)
        #expect(try await fixture.newContext().fetchAsync(descriptor).map(\.rank) == [1, 2])

        await #expect(throws: Refusal.self) {
            try await context.transactionAsync {
                context.insert(AsyncBatchCard(deck: deck, rank: 3))
                throw Refusal()
            }
        }
        #expect(!context.hasChanges, "the insert was rolled back")
        #expect(try await fixture.newContext().fetchAsync(descriptor).map(\.rank) == [1, 2])
        await fixture.container.close()
    }

    @Test("eraseAsync deletes what erase deletes, and refuses as it does", arguments: StoreKind.allCases)
    func eraseMatchesSynchronousForm(_ kind: StoreKind) async throws {
        let fixture = try await StoreFixture.make(kind, [AsyncEraseNote.self])
        let context = fixture.newContext()
        for index in 0..<3 { context.insert(AsyncEraseNote(text: "note \(index)")) }
        try await context.saveAsync()
        #expect(try await context.fetchCountAsync(FetchDescriptor<AsyncEraseNote>()) >= 3)
        try await fixture.container.eraseAsync()
        #expect(try await fixture.newContext().fetchCountAsync(FetchDescriptor<AsyncEraseNote>()) == 0)

        let url = fixture.url
        let readOnly = try await offCooperativePool {
            try ModelContainer(for: AsyncEraseNote.self, configurations: ModelConfiguration(url: url, allowsSave: false))
        }
        await #expect { try await readOnly.eraseAsync() } throws: { ($0 as? PGModelError)?.code == .saveNotAllowed }
        await readOnly.close()
        await fixture.container.close()
    }
}
