import Foundation
@_spi(PGModelInternals) import PGModel
import Testing
import PGModelTesting

@Model final class RequestNote {
    @Attribute(.unique) var title: String
    var body: String
    init(title: String, body: String) {
        self.title = title
        self.body = body
    }
}

/// `ModelContainer.withContext`, the request-scoped context of a web server: a fresh context per call,
/// saved when the body returns, rolled back when it throws, and never seen by another call.
@Suite("ModelContainer.withContext")
struct RequestContextTests {
    nonisolated(unsafe) static let types: [any PersistentModel.Type] = [RequestNote.self]

    struct Refused: Error {}

    static func titles(_ container: ModelContainer, _ token: String) async throws -> [String] {
        try await container.withContext { context in
            try await context.fetchAsync(FetchDescriptor<RequestNote>(
                predicate: #Predicate { $0.title.starts(with: token) }, sortBy: [SortDescriptor(\.title)])).map(\.title)
        }
    }

    @Test("what the body changes is saved when it returns; each call gets a fresh context with autosave off", arguments: StoreKind.allCases)
    func savesOnReturn(_ kind: StoreKind) async throws {
        let fixture = try await StoreFixture.make(kind, Self.types)
        let container = fixture.container
        let token = fixture.token
        var seen: [ObjectIdentifier] = []
        let title = try await container.withContext(author: "request-1") { context in
            #expect(!context.autosaveEnabled)
            #expect(context.author == "request-1")
            seen.append(ObjectIdentifier(context))
            let note = RequestNote(title: "\(token) a", body: "first")
            context.insert(note)
            return note.title
        }
        #expect(title == "\(token) a")
        try await container.withContext { context in
            seen.append(ObjectIdentifier(context))
            #expect(!context.hasChanges)
        }
        #expect(seen.count == 2)
        #expect(try await Self.titles(container, token) == ["\(token) a"])
    }

    @Test("a body that throws writes nothing, and its changes do not reach the next call", arguments: StoreKind.allCases)
    func rollsBackOnThrow(_ kind: StoreKind) async throws {
        let fixture = try await StoreFixture.make(kind, Self.types)
        let container = fixture.container
        let token = fixture.token
        try await container.withContext { context in
            context.insert(RequestNote(title: "\(token) kept", body: "original"))
        }
        var escaped: RequestNote?
        await #expect(throws: Refused.self) {
            try await container.withContext { context in
                let notes = try await context.fetchAsync(FetchDescriptor<RequestNote>(predicate: #Predicate { $0.title.starts(with: token) }))
                let note = try #require(notes.first)
                note.body = "changed, never saved"
                context.insert(RequestNote(title: "\(token) dropped", body: "never saved"))
                escaped = note
                throw Refused()
            }
        }
        // The body's model, had it kept one, holds the stored value again: nothing pending survives.
        #expect(escaped?.body == "original")
        #expect(try await Self.titles(container, token) == ["\(token) kept"])
        let body = try await container.withContext { context in
            try await context.fetchAsync(FetchDescriptor<RequestNote>(predicate: #Predicate { $0.title.starts(with: token) })).first?.body
        }
        #expect(body == "original")
    }

    @Test("a save that fails throws the typed error and rolls back: a rename to a taken unique value", arguments: StoreKind.allCases)
    func failedSaveRollsBack(_ kind: StoreKind) async throws {
        let fixture = try await StoreFixture.make(kind, Self.types)
        let container = fixture.container
        let token = fixture.token
        try await container.withContext { context in
            context.insert(RequestNote(title: "\(token) taken", body: "first"))
            context.insert(RequestNote(title: "\(token) other", body: "second"))
        }
        var renamed: RequestNote?
        let error = await #expect(throws: PGModelError.self) {
            try await container.withContext { context in
                let other = "\(token) other"
                let note = try #require(try await context.fetchAsync(FetchDescriptor<RequestNote>(predicate: #Predicate { $0.title == other })).first)
                note.title = "\(token) taken"
                renamed = note
            }
        }
        #expect(error?.code == .uniqueViolation)
        #expect(renamed?.title == "\(token) other")
        #expect(try await Self.titles(container, token) == ["\(token) other", "\(token) taken"])
    }

    @Test("concurrent calls do not see each other's unsaved changes", arguments: StoreKind.allCases)
    func concurrentCallsAreIsolated(_ kind: StoreKind) async throws {
        let fixture = try await StoreFixture.make(kind, Self.types)
        let container = fixture.container
        let token = fixture.token
        let (inserted, insertedSignal) = AsyncStream<Void>.makeStream()
        let (checked, checkedSignal) = AsyncStream<Void>.makeStream()
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask {
                try await container.withContext { context in
                    context.insert(RequestNote(title: "\(token) pending", body: "held"))
                    insertedSignal.yield()
                    // Hold the unsaved insert until the other request has looked.
                    for await _ in checked { break }
                }
            }
            group.addTask {
                for await _ in inserted { break }
                let seen = try await container.withContext { context in
                    try await context.fetchAsync(FetchDescriptor<RequestNote>(predicate: #Predicate { $0.title.starts(with: token) })).count
                }
                #expect(seen == 0)
                checkedSignal.yield()
            }
            try await group.waitForAll()
        }
        #expect(try await Self.titles(container, token) == ["\(token) pending"])
    }
}
