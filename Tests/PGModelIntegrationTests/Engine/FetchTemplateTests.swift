import Foundation
@_spi(PGModelInternals) import PGModel
import Testing
import PGModelTesting

/// A fetch call site run again and again: its predicate is translated and its SQL rendered once
/// per shape, then filled with each call's values. These check that every call still gets its own
/// answer: other captured values, other sorts, limits and predicates, and unsaved changes.
@Model final class TemplateItem {
    var name: String
    var rank: Int
    var note: String?

    init(name: String, rank: Int, note: String? = nil) {
        self.name = name
        self.rank = rank
        self.note = note
    }
}

@Suite("Fetch templates")
struct FetchTemplateTests {
    static func seeded() async throws -> ModelContainer {
        let url = try TestDatabase.schemaURL()
        return try await offCooperativePool {
            let container = try ModelContainer(for: TemplateItem.self, configurations: ModelConfiguration(url: url))
            let context = ModelContext(container)
            for i in 0..<20 {
                context.insert(TemplateItem(name: "item \(i)", rank: i, note: i % 2 == 0 ? nil : "odd \(i)"))
            }
            try context.save()
            return container
        }
    }

    // One call site each: every call below reuses its shape's template after the first.
    static func ranks(_ context: ModelContext, from lo: Int, below hi: Int, descending: Bool = false,
                      limit: Int? = nil, offset: Int? = nil) throws -> [Int] {
        var descriptor = FetchDescriptor<TemplateItem>(predicate: #Predicate { $0.rank >= lo && $0.rank < hi },
                                                       sortBy: [SortDescriptor(\.rank, order: descending ? .reverse : .forward)])
        descriptor.fetchLimit = limit
        descriptor.fetchOffset = offset
        return try context.fetch(descriptor).map(\.rank)
    }

    static func named(_ context: ModelContext, _ name: String) throws -> [Int] {
        try context.fetch(FetchDescriptor<TemplateItem>(predicate: #Predicate { $0.name == name })).map(\.rank)
    }

    static func noted(_ context: ModelContext, _ note: String?) throws -> [Int] {
        try context.fetch(FetchDescriptor<TemplateItem>(predicate: #Predicate { $0.note == note }, sortBy: [SortDescriptor(\.rank)]))
            .map(\.rank)
    }

    static func searching(_ context: ModelContext, _ text: String) throws -> Int {
        try context.fetchCount(FetchDescriptor<TemplateItem>(predicate: #Predicate { $0.name.localizedStandardContains(text) }))
    }

    @Test("one call site with other captured values gets other rows, every time")
    func capturedValues() async throws {
        let container = try await Self.seeded()
        try await offCooperativePool { () throws -> Void in
            for (lo, hi) in [(0, 3), (5, 8), (17, 40), (3, 3), (-5, 1), (10, 11), (0, 3)] {
                #expect(try Self.ranks(ModelContext(container), from: lo, below: hi) == Array(max(lo, 0)..<min(max(hi, lo), 20)))
            }
            for i in [4, 9, 4, 19] {
                #expect(try Self.named(ModelContext(container), "item \(i)") == [i])
            }
            #expect(try Self.named(ModelContext(container), "").isEmpty)
            // nil and a value are different SQL (IS NULL / =): each call gets its own.
            #expect(try Self.noted(ModelContext(container), "odd 3") == [3])
            #expect(try Self.noted(ModelContext(container), nil) == Array(stride(from: 0, to: 20, by: 2)))
            #expect(try Self.noted(ModelContext(container), "odd 5") == [5])
            // localizedStandardContains("") matches nothing (Foundation's answer), any other text its rows.
            #expect(try Self.searching(ModelContext(container), "item 1") == 11)
            #expect(try Self.searching(ModelContext(container), "") == 0)
            #expect(try Self.searching(ModelContext(container), "ITEM 19") == 1)
        }
        await container.close()
    }

    @Test("descriptors that differ in sort, limit, offset or predicate never share a template")
    func descriptorsStayApart() async throws {
        let container = try await Self.seeded()
        try await offCooperativePool { () throws -> Void in
            let context = ModelContext(container)
            for _ in 0..<2 {
                #expect(try Self.ranks(context, from: 0, below: 10) == Array(0..<10))
                #expect(try Self.ranks(context, from: 0, below: 10, descending: true) == Array((0..<10).reversed()))
                #expect(try Self.ranks(context, from: 0, below: 10, limit: 3) == [0, 1, 2])
                #expect(try Self.ranks(context, from: 0, below: 10, limit: 2, offset: 4) == [4, 5])
                #expect(try Self.ranks(context, from: 0, below: 10, descending: true, limit: 2, offset: 1) == [8, 7])
                #expect(try Self.ranks(context, from: 0, below: 10, offset: 8) == [8, 9])
            }
            // The same expression type with another key path or operator.
            let byRank = try context.fetch(FetchDescriptor<TemplateItem>(predicate: #Predicate { $0.rank == 7 })).map(\.rank)
            let byName = try context.fetch(FetchDescriptor<TemplateItem>(predicate: #Predicate { $0.name == "item 7" })).map(\.rank)
            let above = try context.fetch(FetchDescriptor<TemplateItem>(predicate: #Predicate { $0.rank > 17 }, sortBy: [SortDescriptor(\.rank)]))
            let below = try context.fetch(FetchDescriptor<TemplateItem>(predicate: #Predicate { $0.rank < 2 }, sortBy: [SortDescriptor(\.rank)]))
            #expect(byRank == [7])
            #expect(byName == [7])
            #expect(above.map(\.rank) == [18, 19])
            #expect(below.map(\.rank) == [0, 1])
            #expect(try context.fetchCount(FetchDescriptor<TemplateItem>(predicate: #Predicate { $0.rank >= 15 })) == 5)
            #expect(try context.fetchCount(FetchDescriptor<TemplateItem>()) == 20)
        }
        await container.close()
    }

    @Test("unsaved inserts, changes and deletes are merged as before at a cached call site")
    func pendingChanges() async throws {
        let container = try await Self.seeded()
        try await offCooperativePool { () throws -> Void in
            let context = ModelContext(container)
            #expect(try Self.ranks(context, from: 0, below: 5) == [0, 1, 2, 3, 4])
            context.insert(TemplateItem(name: "new", rank: 2))
            let four = try #require(try context.fetch(FetchDescriptor<TemplateItem>(predicate: #Predicate { $0.rank == 4 })).first)
            four.rank = 40
            let one = try #require(try context.fetch(FetchDescriptor<TemplateItem>(predicate: #Predicate { $0.rank == 1 })).first)
            context.delete(one)
            // Pending changes included (the default): the insert, not the deleted or moved-away rows.
            #expect(try Self.ranks(context, from: 0, below: 5) == [0, 2, 2, 3])
            #expect(try Self.ranks(context, from: 0, below: 5, limit: 2, offset: 1) == [2, 2])
            #expect(try Self.ranks(context, from: 35, below: 45) == [40])
            // Left out: the store's rows as saved, through the same call site.
            var stored = FetchDescriptor<TemplateItem>(predicate: #Predicate { $0.rank < 5 }, sortBy: [SortDescriptor(\.rank)])
            stored.includePendingChanges = false
            #expect(try context.fetch(stored).count == 5)   // every stored row below 5, unsaved changes or not
            // A new context sees only what was saved.
            #expect(try Self.ranks(ModelContext(container), from: 0, below: 5) == [0, 1, 2, 3, 4])
        }
        await container.close()
    }
}
