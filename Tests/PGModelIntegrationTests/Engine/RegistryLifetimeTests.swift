import Foundation
@_spi(PGModelInternals) import PGModel
import Synchronization
import Testing
import PGModelTesting

// The context's identity map: one instance per row while something holds it, forgotten once nothing
// does (the context holds its clean models weakly), for plain classes, a class with a `deinit` of its
// own, and a subclass; upserts, rollbacks and deletes leave no entry behind.

@Model
final class RegistryItem {
    @Attribute(.unique) var code: String
    var note: String

    init(code: String, note: String) {
        self.code = code
        self.note = note
    }
}

/// A `deinit` of its own, which must still run for fetched instances.
@Model
final class RegistryCountedItem {
    static let deinits = Mutex(0)
    var code: String

    init(code: String) { self.code = code }

    deinit { Self.deinits.withLock { $0 += 1 } }
}

@Model
class RegistryShape {
    var code: String

    init(code: String) { self.code = code }
}

@Model
final class RegistryCircle: RegistryShape {
    var radius: Double = 0

    init(code: String, radius: Double) {
        self.radius = radius
        super.init(code: code)
    }
}

@Suite("The identity map: one instance per row while held, forgotten once released")
struct RegistryLifetimeTests {
    private static let types: [any PersistentModel.Type] = [RegistryItem.self, RegistryCountedItem.self, RegistryShape.self, RegistryCircle.self]

    @Test(arguments: StoreKind.tested)
    func releasedModelsAreForgottenAndHeldOnesStayTheSameInstance(kind: StoreKind) async throws {
        let f = try await StoreFixture.make(kind, Self.types)
        try await offCooperativePool {
            let setup = f.newContext()
            for i in 0..<40 { setup.insert(RegistryItem(code: "\(f.token)-\(i)", note: "n\(i)")) }
            for i in 0..<10 { setup.insert(RegistryCountedItem(code: "\(f.token)-\(i)")) }
            for i in 0..<10 { setup.insert(RegistryCircle(code: "\(f.token)-\(i)", radius: Double(i))) }
            try setup.save()

            let context = f.newContext()
            var held: [any PersistentModel] = []
            var releasedIDs: [PersistentIdentifier] = []
            do {
                let items = try context.fetch(FetchDescriptor<RegistryItem>(sortBy: [SortDescriptor(\.code)]))
                let counted = try context.fetch(FetchDescriptor<RegistryCountedItem>())
                let shapes = try context.fetch(FetchDescriptor<RegistryShape>())
                #expect(items.count == 40 && counted.count == 10 && shapes.count == 10)
                #expect(shapes.allSatisfy { $0 is RegistryCircle })
                let all: [any PersistentModel] = items + counted + shapes
                for (i, model) in all.enumerated() {
                    if i % 3 == 0 { held.append(model) } else { releasedIDs.append(model.persistentModelID) }
                }
            }
            // Nothing else holds the released ones: the context forgot them, and kept the held ones.
            for id in releasedIDs {
                #expect(context.registeredModel(for: id) as RegistryItem? == nil)
                #expect(context.registeredModel(for: id) as RegistryCountedItem? == nil)
                #expect(context.registeredModel(for: id) as RegistryShape? == nil)
            }
            for model in held {
                let found: (any PersistentModel)? = switch model {
                case is RegistryItem: context.registeredModel(for: model.persistentModelID) as RegistryItem?
                case is RegistryCountedItem: context.registeredModel(for: model.persistentModelID) as RegistryCountedItem?
                default: context.registeredModel(for: model.persistentModelID) as RegistryShape?
                }
                #expect(found === model)
            }

            // A second fetch gives the held instances back and new ones for the rest, all usable.
            let again = try context.fetch(FetchDescriptor<RegistryItem>(sortBy: [SortDescriptor(\.code)]))
            let heldIDs = Set(held.map(\.persistentModelID))
            for item in again where heldIDs.contains(item.persistentModelID) {
                #expect(held.contains { $0 === item })
            }
            // Sorted by code, "<token>-10" before "<token>-2".
            #expect(again.map(\.note) == (0..<40).map { "\($0)" }.sorted().map { "n\($0)" })
            again[1].note = "changed"
            try context.save()
            #expect(try f.newContext().fetchCount(FetchDescriptor<RegistryItem>(predicate: #Predicate { $0.note == "changed" })) == 1)
        }
    }

    @Test(arguments: StoreKind.tested)
    func aClassWithItsOwnDeinitStillRunsItAndIsForgotten(kind: StoreKind) async throws {
        let f = try await StoreFixture.make(kind, Self.types)
        try await offCooperativePool {
            let setup = f.newContext()
            setup.insert(RegistryCountedItem(code: "\(f.token)-solo"))
            try setup.save()
            let code = "\(f.token)-solo"
            let context = f.newContext()
            let before = RegistryCountedItem.deinits.withLock { $0 }
            var id: PersistentIdentifier?
            do {
                let fetched = try context.fetch(FetchDescriptor<RegistryCountedItem>(predicate: #Predicate { $0.code == code }))
                #expect(fetched.count == 1)
                id = fetched.first?.persistentModelID
                #expect((context.registeredModel(for: try #require(id)) as RegistryCountedItem?) === fetched.first)
            }
            #expect(RegistryCountedItem.deinits.withLock { $0 } > before)
            #expect(context.registeredModel(for: try #require(id)) as RegistryCountedItem? == nil)
        }
    }

    @Test(arguments: StoreKind.tested)
    func anUpsertKeepsOneEntryUnderTheExistingRowsIdentity(kind: StoreKind) async throws {
        let f = try await StoreFixture.make(kind, Self.types)
        try await offCooperativePool {
            let code = "\(f.token)-unique"
            let first = f.newContext()
            first.insert(RegistryItem(code: code, note: "first"))
            try first.save()
            let existing = try #require(try first.fetch(FetchDescriptor<RegistryItem>(predicate: #Predicate { $0.code == code })).first)
            let existingID = existing.persistentModelID

            let context = f.newContext()
            var insertedID: PersistentIdentifier?
            do {
                let duplicate = RegistryItem(code: code, note: "second")
                context.insert(duplicate)
                insertedID = duplicate.persistentModelID
                try context.save()
                // The insert became the existing row: registered under that row's id, not its own.
                #expect(duplicate.persistentModelID == existingID)
                #expect((context.registeredModel(for: existingID) as RegistryItem?) === duplicate)
                #expect(context.registeredModel(for: try #require(insertedID)) as RegistryItem? == nil)
            }
            // Released: nothing is left under either id, and the row is fetched afresh.
            #expect(context.registeredModel(for: existingID) as RegistryItem? == nil)
            let refetched = try context.fetch(FetchDescriptor<RegistryItem>(predicate: #Predicate { $0.code == code }))
            #expect(refetched.map(\.note) == ["second"])
            #expect((context.registeredModel(for: existingID) as RegistryItem?) === refetched.first)
        }
    }

    @Test(arguments: StoreKind.tested)
    func manyFetchesIntoOneContextKeepEveryLookupRight(kind: StoreKind) async throws {
        let f = try await StoreFixture.make(kind, Self.types)
        try await offCooperativePool {
            let setup = f.newContext()
            for i in 0..<60 { setup.insert(RegistryItem(code: "\(f.token)-\(i)", note: "n\(i)")) }
            try setup.save()
            let prefix = f.token
            let context = f.newContext()
            var held: [PersistentIdentifier: RegistryItem] = [:]
            var generator = SystemRandomNumberGenerator()
            for _ in 0..<30 {
                let fetched = try context.fetch(FetchDescriptor<RegistryItem>(predicate: #Predicate { $0.code.starts(with: prefix) }))
                #expect(fetched.count == 60)
                for item in fetched {
                    // A held model is the one the fetch gives back.
                    if let kept = held[item.persistentModelID] { #expect(kept === item) }
                }
                // Keep a random third, drop the rest of what was held.
                held = [:]
                for item in fetched where Int.random(in: 0..<3, using: &generator) == 0 { held[item.persistentModelID] = item }
            }
            for item in try f.newContext().fetch(FetchDescriptor<RegistryItem>(predicate: #Predicate { $0.code.starts(with: prefix) })) {
                let registered: RegistryItem? = context.registeredModel(for: item.persistentModelID)
                if let kept = held[item.persistentModelID] { #expect(registered === kept) } else { #expect(registered == nil) }
            }
        }
    }

    @Test(arguments: StoreKind.tested)
    func rollbackAndDeleteForgetTheirModels(kind: StoreKind) async throws {
        let f = try await StoreFixture.make(kind, Self.types)
        try await offCooperativePool {
            let context = f.newContext()
            let unsaved = RegistryItem(code: "\(f.token)-rolled", note: "x")
            context.insert(unsaved)
            let unsavedID = unsaved.persistentModelID
            context.rollback()
            #expect(unsaved.modelContext == nil)
            #expect(context.registeredModel(for: unsavedID) as RegistryItem? == nil)

            let kept = RegistryItem(code: "\(f.token)-kept", note: "y")
            context.insert(kept)
            try context.save()
            #expect((context.registeredModel(for: kept.persistentModelID) as RegistryItem?) === kept)
            context.delete(kept)
            try context.save()
            #expect(context.registeredModel(for: kept.persistentModelID) as RegistryItem? == nil)
            #expect(kept.isDeleted)
        }
    }
}
