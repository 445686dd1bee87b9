import Foundation
@_spi(PGModelInternals) import PGModel
import Testing

/// `mainContext` saves by itself after changes; a failed autosave is kept, not lost.
@Suite("Autosave")
@MainActor
struct AutosaveTests {
    let base = Date(timeIntervalSince1970: 1_750_000_000)

    /// Lets the main actor run the autosave it scheduled; bounded, and done as soon as it happened.
    func drainMainActor(until done: () -> Bool) async {
        for _ in 0..<1_000 where !done() { await Task.yield() }
    }

    @Test func mainContextAutosavesInsertsAndChanges() async throws {
        let container = try ModelContainer(for: Voyage.self, configurations: ModelConfiguration(url: try TestDatabase.schemaURL()))
        let context = container.mainContext
        #expect(context.autosaveEnabled)
        #expect(!ModelContext(container).autosaveEnabled)

        let trip = Voyage(name: "auto", destination: "Lima", startDate: base, endDate: base)
        context.insert(trip)
        #expect(context.hasChanges)
        await drainMainActor { !context.hasChanges }
        #expect(!context.hasChanges)
        #expect(try ModelContext(container).fetchCount(FetchDescriptor<Voyage>()) == 1)

        trip.budget = 42
        await drainMainActor { !context.hasChanges }
        #expect(try ModelContext(container).fetch(FetchDescriptor<Voyage>()).first?.budget == 42)
    }

    @Test func failedAutosaveIsRecordedAndChangesStayPending() async throws {
        let url = try TestDatabase.schemaURL()
        _ = try ModelContainer(for: Voyage.self, configurations: ModelConfiguration(url: url))
        let readOnly = try ModelContainer(for: Voyage.self, configurations: ModelConfiguration(url: url, allowsSave: false))
        let context = readOnly.mainContext
        context.insert(Voyage(name: "never", destination: "X", startDate: base, endDate: base))
        await drainMainActor { context.lastAutosaveError != nil }
        #expect(context.lastAutosaveError?.code == .saveNotAllowed)
        #expect(context.hasChanges)
    }
}
