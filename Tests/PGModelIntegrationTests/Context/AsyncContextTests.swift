import Foundation
@_spi(PGModelInternals) @testable import PGModel
import Testing
import PGModelTesting

@Model final class AsyncShelf {
    @Attribute(.unique) var label: String
    @Relationship(deleteRule: .deny, inverse: \AsyncBook.shelf) var books: [AsyncBook] = []
    init(label: String) { self.label = label }
}

@Model final class AsyncBook {
    var title: String
    var pages: Int
    var shelf: AsyncShelf?
    init(title: String, pages: Int, shelf: AsyncShelf? = nil) {
        self.title = title
        self.pages = pages
        self.shelf = shelf
    }
}

/// The async forms of the store calls (`fetchAsync`, `saveAsync`, …) behave as their synchronous forms:
/// the same results, the same errors, the same context state afterwards — and they suspend, so they run
/// on the cooperative pool that the in-process service needs, with no `offCooperativePool`.
@Suite("ModelContext async forms")
struct AsyncContextTests {
    nonisolated(unsafe) static let types: [any PersistentModel.Type] = [AsyncShelf.self, AsyncBook.self]

    @Test("fetch, count, identifiers, model(for:) and prefetching match the synchronous forms", arguments: StoreKind.allCases)
    func fetchesMatchSynchronousForms(_ kind: StoreKind) async throws {
        let fixture = try await StoreFixture.make(kind, Self.types)
        let context = fixture.newContext()
        let shelf = AsyncShelf(label: "a-\(fixture.token)")
        context.insert(shelf)
        for index in 0..<12 {
            context.insert(AsyncBook(title: "book \(index)", pages: 100 + index, shelf: shelf))
        }
        try await context.saveAsync()
        #expect(!context.hasChanges)

        let label = shelf.label
        let descriptor = FetchDescriptor<AsyncBook>(
            predicate: #Predicate { $0.pages >= 105 && $0.shelf?.label == label },
            sortBy: [SortDescriptor(\.pages, order: .reverse)])
        var limited = descriptor
        limited.fetchLimit = 3
        let reader = fixture.newContext()
        let books = try await reader.fetchAsync(limited)
        #expect(books.map(\.pages) == [111, 110, 109])
        #expect(try await reader.fetchCountAsync(descriptor) == 7)
        let ids = try await reader.fetchIdentifiersAsync(descriptor)
        #expect(ids.count == 7)
        #expect(ids.first == books.first?.persistentModelID)

        // The same instance per identifier, as the synchronous fetch keeps it.
        let again = try await reader.modelAsync(for: ids[0])
        #expect(again as? AsyncBook === books[0])

        // Prefetching loads the relationship in the same call: reading it later makes no round trip.
        var prefetching = FetchDescriptor<AsyncShelf>(predicate: #Predicate { $0.label == label })
        prefetching.relationshipKeyPathsForPrefetching = [\.books]
        let prefetcher = fixture.newContext()
        let shelves = try await prefetcher.fetchAsync(prefetching)
        #expect(shelves.count == 1)
        #expect(prefetcher.storeRoundTrips == 2)
        #expect(shelves.first?.books.count == 12)
        #expect(prefetcher.storeRoundTrips == 2, "the books were prefetched")

        // Unsaved changes take part as in the synchronous fetch.
        let readerShelf: AsyncShelf? = try await reader.fetchAsync(prefetching).first
        reader.insert(AsyncBook(title: "unsaved", pages: 999, shelf: try #require(readerShelf)))
        reader.delete(books[2])
        let merged = try await reader.fetchAsync(limited)
        #expect(merged.map(\.pages) == [999, 111, 110])
        #expect(try await reader.fetchCountAsync(descriptor) == 7)
        await fixture.container.close()
    }

    @Test("saveAsync writes like save(), and its errors are the same typed errors with nothing written", arguments: StoreKind.allCases)
    func saveMatchesSynchronousForm(_ kind: StoreKind) async throws {
        let fixture = try await StoreFixture.make(kind, Self.types)
        let context = fixture.newContext()
        let label = "u-\(fixture.token)"
        context.insert(AsyncShelf(label: label))
        try await context.saveAsync()

        // A `.unique` duplicate is an upsert, as in the synchronous save: the existing row, no second one.
        let upserting = fixture.newContext()
        let duplicate = AsyncShelf(label: label)
        upserting.insert(duplicate)
        try await upserting.saveAsync()
        #expect(try await fixture.newContext().fetchCountAsync(FetchDescriptor<AsyncShelf>(predicate: #Predicate { $0.label == label })) == 1)

        // A `.deny` delete: the same typed error as the synchronous save, nothing written, the changes pending.
        let denied = fixture.newContext()
        let held = try #require(try await denied.fetchAsync(FetchDescriptor<AsyncShelf>(predicate: #Predicate { $0.label == label })).first)
        denied.insert(AsyncBook(title: "orphan", pages: 1))
        denied.insert(AsyncBook(title: "held", pages: 1, shelf: held))
        try await denied.saveAsync()
        denied.insert(AsyncBook(title: "orphan", pages: 2))
        denied.delete(held)
        await #expect { try await denied.saveAsync() } throws: { ($0 as? PGModelError)?.code == .deleteDenied }
        #expect(denied.hasChanges)
        let synchronous = try await offCooperativePool { () -> PGModelError.Code? in
            let context = ModelContext(fixture.container)
            guard let shelf = try context.fetch(FetchDescriptor<AsyncShelf>(predicate: #Predicate { $0.label == label })).first else { return nil }
            context.delete(shelf)
            do { try context.save(); return nil } catch let error as PGModelError { return error.code }
        }
        #expect(synchronous == .deleteDenied)
        #expect(try await fixture.newContext().fetchCountAsync(FetchDescriptor<AsyncBook>(predicate: #Predicate { $0.title == "orphan" })) == 1)
        denied.rollback()
        #expect(!denied.hasChanges)
        let heldBook = try #require(try await context.fetchAsync(FetchDescriptor<AsyncBook>(predicate: #Predicate { $0.title == "held" })).first)
        context.delete(heldBook)
        try await context.saveAsync()

        // Update and delete through the async forms.
        let shelf = try #require(try await context.fetchAsync(FetchDescriptor<AsyncShelf>(predicate: #Predicate { $0.label == label })).first)
        shelf.label = label + "-renamed"
        try await context.saveAsync()
        let renamed = label + "-renamed"
        #expect(try await fixture.newContext().fetchCountAsync(FetchDescriptor<AsyncShelf>(predicate: #Predicate { $0.label == renamed })) == 1)
        context.delete(shelf)
        try await context.saveAsync()
        #expect(try await fixture.newContext().fetchCountAsync(FetchDescriptor<AsyncShelf>(predicate: #Predicate { $0.label == renamed })) == 0)
        await fixture.container.close()
    }

    @Test("a change made while saveAsync() is suspended stays pending for the next save", arguments: StoreKind.allCases)
    @MainActor
    func changesDuringASuspendedSaveStayPending(_ kind: StoreKind) async throws {
        let fixture = try await StoreFixture.make(kind, Self.types)
        let context = fixture.newContext()
        let first = AsyncBook(title: "first", pages: 1)
        context.insert(first)
        let label = "s-\(fixture.token)"
        // Both run on the main actor: the save is enqueued first, builds its request and suspends on the
        // store; only then does this body run again (its yield queued it behind the save), while the save
        // cannot resume before it has finished.
        let save = Task { @MainActor in try await context.saveAsync() }
        await Task.yield()
        first.pages = 2
        context.insert(AsyncBook(title: "second", pages: 2))
        context.insert(AsyncShelf(label: label))
        try await save.value
        #expect(context.hasChanges, "what changed during the save is still pending")
        #expect(context.insertedModelsArray.count == 2)
        #expect(context.changedModelsArray.count == 1)
        try await context.saveAsync()
        #expect(!context.hasChanges)
        let reader = fixture.newContext()
        let books = try await reader.fetchAsync(FetchDescriptor<AsyncBook>(predicate: #Predicate { $0.title == "first" || $0.title == "second" }, sortBy: [SortDescriptor(\.title)]))
        #expect(books.map(\.title) == ["first", "second"])
        #expect(books.first?.pages == 2)
        #expect(try await reader.fetchCountAsync(FetchDescriptor<AsyncShelf>(predicate: #Predicate { $0.label == label })) == 1)
        await fixture.container.close()
    }

    @Test("history reads and deletes through the async forms match the synchronous ones", arguments: StoreKind.allCases)
    func historyMatchesSynchronousForms(_ kind: StoreKind) async throws {
        let fixture = try await StoreFixture.make(kind, Self.types)
        let context = fixture.newContext()
        context.author = "async-\(fixture.token)"
        context.insert(AsyncBook(title: "history", pages: 3))
        try await context.saveAsync()
        let author = context.author
        let descriptor = HistoryDescriptor<DefaultHistoryTransaction>(predicate: #Predicate { $0.author == author })
        let asyncTransactions = try await context.fetchHistoryAsync(descriptor)
        let syncTransactions = try await offCooperativePool {
            try ModelContext(fixture.container).fetchHistory(HistoryDescriptor<DefaultHistoryTransaction>(predicate: #Predicate { $0.author == author })).map(\.token)
        }
        #expect(asyncTransactions.count == 1)
        #expect(asyncTransactions.map(\.token) == syncTransactions)
        if kind == .direct {
            try await context.deleteHistoryAsync(descriptor)
            #expect(try await context.fetchHistoryAsync(descriptor).isEmpty)
        } else {
            // Through the service only admins delete history: the same `forbidden` as the synchronous form.
            await #expect { try await context.deleteHistoryAsync(descriptor) } throws: { ($0 as? PGModelError)?.code == .forbidden }
        }
        await fixture.container.close()
    }
}

