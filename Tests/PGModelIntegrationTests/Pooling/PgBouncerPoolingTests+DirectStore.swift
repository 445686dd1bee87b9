import Foundation
@_spi(PGModelInternals) import PGModel
import PGModelTesting
import Testing

extension PgBouncerPoolingTests {
    typealias Note = HistoryNotes.Note
    typealias Folder = HistoryNotes.Folder

    @Test("a direct store behind PgBouncer in transaction mode, its LISTEN and migrations on pgmodel_direct: saves, fetches and observers work")
    func directStoreBehindThePooler() async throws {
        try await PgBouncer.with(poolSize: 3) { bouncer in
            let database = try #require(URLComponents(string: try TestDatabase.url()))
            let host = try #require(database.host.flatMap { $0.isEmpty ? nil : $0 }, "the test database is reached over TCP")
            let schema = TestDatabase.uniqueSchema("pgbd")
            let url = try #require(URL(string: bouncer.url + "&schema=\(schema)&pgmodel_direct=\(host):\(database.port ?? 5432)"))
            try await offCooperativePool {
                let observed = try ModelContainer(for: Folder.self, Note.self, configurations: ModelConfiguration(url: url))
                let writing = try ModelContainer(for: Folder.self, Note.self, configurations: ModelConfiguration(url: url))
                let history = try HistoryObserver(observedModels: [Note.self], modelContainer: observed)
                let writer = ModelContext(writing)
                writer.insert(Note(title: "through the pooler", body: ""))
                try writer.save()
                #expect(waitUntil(reading: { _ = history.eventCounter }) { history.eventCounter >= 1 },
                        "the other container's save reached the observer")
                let notes = try ModelContext(observed).fetch(FetchDescriptor<Note>())
                #expect(notes.map(\.title) == ["through the pooler"])
            }
        }
    }
}
