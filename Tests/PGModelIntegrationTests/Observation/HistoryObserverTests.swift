import Foundation
import Observation
@_spi(PGModelInternals) import PGModelCore
import Testing

@_spi(PGModelInternals) @testable import PGModel
import PGModelTesting

/// Persistent history, sections and observers on both stores, porting the seeds' examples: the
/// token-then-changes fetch, sectioned trips, a ResultsObserver that sees deletes made elsewhere, and a
/// HistoryObserver that counts the App's saves but not the Server's.
@Suite("History, sections and observers")
struct HistoryObserverTests {
    typealias Trip = SampleTrips.Trip
    typealias BucketListItem = SampleTrips.BucketListItem
    typealias LivingAccommodation = SampleTrips.LivingAccommodation
    typealias Note = HistoryNotes.Note
    typealias Folder = HistoryNotes.Folder

    let day: TimeInterval = 86_400
    let base = Date(timeIntervalSince1970: 1_750_000_000)

    func trips(_ kind: StoreKind) async throws -> StoreFixture {
        try await StoreFixture.make(kind, SampleTrips.models, service: kind == .service ? try await TestService.seeds() : nil)
    }

    func notes(_ kind: StoreKind) async throws -> StoreFixture {
        try await StoreFixture.make(kind, [Folder.self, Note.self], service: kind == .service ? try await TestService.seeds() : nil)
    }

    // MARK: Persistent history

    @Test(arguments: StoreKind.observed)
    func everySaveIsOneHistoryTransactionWithItsChanges(kind: StoreKind) async throws {
        let f = try await notes(kind)
        try await offCooperativePool {
            let context = f.newContext()
            context.author = "App"
            let folder = Folder(name: "\(f.token)-inbox")
            let first = Note(title: "First", body: "a")
            let second = Note(title: "Second", body: "b")
            folder.notes = [first, second]
            context.insert(folder)
            try context.save()
            first.title = "First, renamed"
            try context.save()
            context.delete(folder)   // cascades to both notes
            try context.save()

            let history = try context.fetchHistory(HistoryDescriptor<DefaultHistoryTransaction>())
            #expect(history.count == 3)
            #expect(history.allSatisfy { $0.author == "App" })
            #expect(history.map(\.token) == history.map(\.token).sorted())
            guard history.count == 3 else { return }

            let inserts = history[0].changes.compactMap { change -> PersistentIdentifier? in
                if case .insert(let insert) = change { return insert.changedPersistentIdentifier } else { return nil }
            }
            #expect(Set(inserts) == [folder.persistentModelID, first.persistentModelID, second.persistentModelID])

            let updates = history[1].changes.compactMap { change -> DefaultHistoryUpdate<Note>? in
                if case .update(let update) = change { return update as? DefaultHistoryUpdate<Note> } else { return nil }
            }
            #expect(updates.count == 1)
            #expect(updates.first?.changedPersistentIdentifier == first.persistentModelID)
            #expect(updates.first?.updatedAttributes == [\Note.title])
            #expect(updates.first?.newValue(\.title) == "First, renamed")

            let deletes = history[2].changes.compactMap { change -> DefaultHistoryDelete<Note>? in
                if case .delete(let delete) = change { return delete as? DefaultHistoryDelete<Note> } else { return nil }
            }
            // The cascade is recorded too, with the preserved title and without the body.
            #expect(Set(deletes.map(\.changedPersistentIdentifier)) == [first.persistentModelID, second.persistentModelID])
            #expect(Set(deletes.compactMap { $0.tombstone[\.title] as? String }) == ["First, renamed", "Second"])
            #expect(deletes.allSatisfy { $0.tombstone[\.body] == nil })
            #expect(history[2].changes.contains { $0.changedPersistentIdentifier == folder.persistentModelID })
        }
    }

    @Test(arguments: StoreKind.observed)
    func theSeedsLastTokenThenChangesFetch(kind: StoreKind) async throws {
        let f = try await trips(kind)
        try await offCooperativePool {
            let context = f.newContext()
            let trip = Trip(name: "\(f.token)-Oslo", destination: "Oslo", startDate: base, endDate: base + day)
            context.insert(trip)
            try context.save()

            // Fetch history with sortBy and fetchLimit to get the last token
            var historyDesc = HistoryDescriptor<DefaultHistoryTransaction>()
            historyDesc.sortBy = [.init(\.transactionIdentifier, order: .reverse)]
            historyDesc.fetchLimit = 1
            let transactions = try context.fetchHistory(historyDesc)
            let last = try #require(transactions.last)
            let historyToken = last.token

            // A change of an entity of no concern, then one of concern.
            let item = BucketListItem(title: "\(f.token)-museum")
            context.insert(item)
            try context.save()
            trip.livingAccommodation = LivingAccommodation(address: "Karl Johans gate 1", placeName: "Grand")
            try context.save()

            // Changes AFTER the last known token, for ONLY entities of concern. Linux Foundation has no
            // Predicate.evaluate inside #Predicate, so the seed's two predicates are written as one.
            let entityNames = [Schema.entityName(for: LivingAccommodation.self), Schema.entityName(for: Trip.self)]
            let fullPredicate = #Predicate<DefaultHistoryTransaction> {
                $0.token > historyToken
                    && $0.changes.contains { change in entityNames.contains(change.changedPersistentIdentifier.entityName) }
            }
            let concerned = try context.fetchHistory(HistoryDescriptor<DefaultHistoryTransaction>(predicate: fullPredicate))
            #expect(concerned.count == 1)
            #expect(concerned.first.map { $0.token > historyToken } == true)
            #expect(concerned.first?.changes.contains { $0.changedPersistentIdentifier.entityName == "LivingAccommodation" } == true)

            let everythingAfter = try context.fetchHistory(HistoryDescriptor<DefaultHistoryTransaction>(predicate: #Predicate { $0.token > historyToken }))
            #expect(everythingAfter.count == 2)
        }
    }

    @Test func deletedHistoryExpiresOlderTokens() async throws {
        let f = try await notes(.direct)
        try await offCooperativePool {
            let context = f.newContext()
            for i in 0..<3 {
                context.insert(Note(title: "n\(i)", body: ""))
                try context.save()
            }
            let history = try context.fetchHistory(HistoryDescriptor<DefaultHistoryTransaction>())
            #expect(history.count == 3)
            let first = try #require(history.first?.token)
            let second = try #require(history.dropFirst().first?.token)
            try context.deleteHistory(HistoryDescriptor<DefaultHistoryTransaction>(predicate: #Predicate { $0.token <= second }))
            #expect(try context.fetchHistory(HistoryDescriptor<DefaultHistoryTransaction>()).count == 1)
            #expect(try context.fetchHistory(HistoryDescriptor<DefaultHistoryTransaction>(predicate: #Predicate { $0.token > second })).count == 1)
            #expect {
                try context.fetchHistory(HistoryDescriptor<DefaultHistoryTransaction>(predicate: #Predicate { $0.token > first }))
            } throws: { ($0 as? PGModelError)?.code == .historyTokenExpired }
        }
    }

    // MARK: Sections

    @Test(arguments: StoreKind.observed)
    func sectionedTripsByDestination(kind: StoreKind) async throws {
        let f = try await trips(kind)
        try await offCooperativePool {
            let context = f.newContext()
            let plan: [(String, String, Double)] = [("Paris", "a", 5), ("Rome", "b", 1), ("Paris", "c", 2), ("Berlin", "d", 3), ("Rome", "e", 4)]
            for (destination, name, offset) in plan {
                context.insert(Trip(name: "\(f.token)-\(name)", destination: destination,
                                    startDate: base + offset * day, endDate: base + (offset + 1) * day))
            }
            try context.save()

            let sections = try context.fetch(FetchDescriptor<Trip>(sortBy: [SortDescriptor(\.startDate)]), sectionBy: \.destination)
            #expect(sections.map(\.id) == ["Berlin", "Paris", "Rome"])
            #expect(sections[sectionTitle: "Paris"]?.map(\.name) == ["\(f.token)-c", "\(f.token)-a"])
            #expect(sections[sectionTitle: "Rome"]?.map(\.name) == ["\(f.token)-b", "\(f.token)-e"])
            #expect(sections[sectionTitle: "Oslo"] == nil)

            let observer = try ResultsObserver<Trip, String>(sortBy: [SortDescriptor(\.startDate)], sectionBy: \.destination, modelContext: context)
            #expect(observer.sections?.map(\.title) == ["Berlin", "Paris", "Rome"])
            #expect(observer.results.count == 5)
            let unsectioned = try ResultsObserver<Trip, Never>(modelContext: context)
            #expect(unsectioned.sections == nil)

            // A new destination shows up as a new section once saved.
            let changed = waitForChange(reading: { _ = observer.sections }) {
                context.insert(Trip(name: "\(f.token)-f", destination: "Athens", startDate: base, endDate: base + day))
                try? context.save()
            }
            #expect(changed)
            #expect(observer.sections?.map(\.title) == ["Athens", "Berlin", "Paris", "Rome"])
        }
    }

    @Test func optionalSectionKeysPutNilInTheEmptySection() async throws {
        let f = try await notes(.direct)
        try await offCooperativePool {
            let context = f.newContext()
            for (title, topic) in [("a", "work"), ("b", nil), ("c", "home"), ("d", "work"), ("e", nil)] as [(String, String?)] {
                context.insert(Note(title: title, body: "", topic: topic))
            }
            try context.save()
            let sections = try context.fetch(FetchDescriptor<Note>(sortBy: [SortDescriptor(\.title)]), sectionBy: \.topic)
            #expect(Set(sections.map(\.id)) == ["", "home", "work"])
            #expect(sections.count == 3, "nil and \"\" are one section")
            #expect(sections[sectionTitle: ""]?.map(\.title) == ["b", "e"])
            #expect(sections[sectionTitle: "work"]?.map(\.title) == ["a", "d"])
            let observer = try ResultsObserver<Note, String>(sectionBy: \.topic, modelContext: context)
            #expect(observer.sections?.map(\.id) == sections.map(\.id))
        }
    }

    // MARK: ResultsObserver

    @Test(arguments: StoreKind.observed)
    func resultsObserverSeesADeleteByAnotherContext(kind: StoreKind) async throws {
        let f = try await trips(kind)
        try await offCooperativePool {
            let context = f.newContext()
            for name in ["a", "b", "c"] {
                context.insert(Trip(name: "\(f.token)-\(name)", destination: "Lisbon", startDate: base, endDate: base + day))
            }
            try context.save()
            let observer = try ResultsObserver<Trip, Never>(modelContext: context)
            #expect(observer.results.count == 3)

            let changed = try waitForChange(reading: { _ = observer.results }) {
                let other = f.newContext()
                let doomed = try #require(try other.fetch(FetchDescriptor<Trip>(predicate: #Predicate { $0.name.contains("-b") })).first)
                other.delete(doomed)
                try other.save()
            }
            #expect(changed)
            #expect(observer.results.map(\.name).sorted() == ["\(f.token)-a", "\(f.token)-c"])
        }
    }

    @Test(arguments: StoreKind.observed)
    func resultsObserverSeesADeleteByAnotherProcess(kind: StoreKind) async throws {
        let f = try await trips(kind)
        try await offCooperativePool {
            let context = f.newContext()
            for name in ["a", "b"] {
                context.insert(Trip(name: "\(f.token)-\(name)", destination: "Porto", startDate: base, endDate: base + day))
            }
            try context.save()
            let observer = try ResultsObserver<Trip, Never>(filterBy: #Predicate { $0.destination == "Porto" }, modelContext: context)
            #expect(observer.results.count == 2)

            // Another container: its own connections, as another process on the same database has
            // (through the service: another client of the same user).
            let otherProcess = try f.otherProcess()
            let changed = try waitForChange(reading: { _ = observer.results }) {
                let other = ModelContext(otherProcess)
                let doomed = try #require(try other.fetch(FetchDescriptor<Trip>(predicate: #Predicate { $0.name.contains("-a") })).first)
                other.delete(doomed)
                try other.save()
            }
            #expect(changed)
            #expect(observer.results.map(\.name) == ["\(f.token)-b"])
        }
    }

    @Test func resultsObserverRequeriesOnlyForEntitiesItDependsOn() async throws {
        let f = try await trips(.direct)
        try await offCooperativePool {
            let context = f.newContext()
            let trip = Trip(name: "\(f.token)-t", destination: "Nice", startDate: base, endDate: base + day)
            context.insert(trip)
            try context.save()
            let plain = try ResultsObserver<Trip, Never>(modelContext: context)
            let throughRelationship = try ResultsObserver<Trip, Never>(
                filterBy: #Predicate { $0.livingAccommodation?.placeName == "Negresco" }, modelContext: context)
            #expect(plain.results.count == 1 && throughRelationship.results.isEmpty)

            // A bucket-list item alone touches neither fetch; the stay touches the second one's predicate.
            context.insert(BucketListItem(title: "\(f.token)-beach"))
            try context.save()
            // The bucket-list save invalidated neither observer here (its own context's save), and the
            // feed's delivery of it, before or after this point, would not either.
            #expect(throughRelationship.invalidationCount == 0)
            let changed = waitForChange(reading: { _ = throughRelationship.results }) {
                trip.livingAccommodation = LivingAccommodation(address: "Promenade des Anglais", placeName: "Negresco")
                try? context.save()
            }
            #expect(changed)
            #expect(throughRelationship.results.count == 1)
            // The stay's save invalidated the relationship observer: once at the save (read-your-writes),
            // and once more if the feed has delivered the same transaction by now (a race with this line).
            #expect((1...2).contains(throughRelationship.invalidationCount))
            // The plain observer was invalidated only if the stay's save changed a Trip row (where the
            // foreign key lives), never by the bucket-list item.
            let last = try #require(try context.fetchHistory(HistoryDescriptor<DefaultHistoryTransaction>()).last)
            let touchedTrip = last.changes.contains { $0.changedPersistentIdentifier.entityName == "Trip" }
            #expect(touchedTrip ? (1...2).contains(plain.invalidationCount) : plain.invalidationCount == 0)
        }
    }

    // MARK: HistoryObserver

    @Test(arguments: StoreKind.observed)
    func historyObserverCountsTheAppsSavesAndIgnoresTheServers(kind: StoreKind) async throws {
        let f = try await trips(kind)
        try await offCooperativePool {
            let observer = try HistoryObserver(authors: ["App"], modelContainer: f.container)
            #expect(observer.eventCounter == 0)
            let app = f.newContext()
            app.author = "App"
            let server = ModelContext(try f.otherProcess())
            server.author = "Server"

            app.insert(Trip(name: "\(f.token)-1", destination: "Bern", startDate: base, endDate: base + day))
            try app.save()
            server.insert(Trip(name: "\(f.token)-2", destination: "Bern", startDate: base, endDate: base + day))
            try server.save()
            app.insert(Trip(name: "\(f.token)-3", destination: "Bern", startDate: base, endDate: base + day))
            try app.save()
            let lastAppToken = try app.fetchHistory(HistoryDescriptor<DefaultHistoryTransaction>(predicate: #Predicate { $0.author == "App" })).last?.token

            #expect(waitUntil(reading: { _ = observer.eventCounter }) { observer.eventCounter >= 2 })
            // Delivery is in token order and the Server's save came before the App's second one, so by
            // now it has been seen — and not counted.
            #expect(observer.eventCounter == 2)
            #expect(observer.historyTokens.values.first as? DefaultHistoryToken == lastAppToken)
        }
    }

    @Test func historyObserverResumesFromSavedTokens() async throws {
        let f = try await notes(.direct)
        try await offCooperativePool {
            let context = f.newContext()
            context.author = "App"
            context.insert(Note(title: "before", body: ""))
            try context.save()
            let saved = try #require(try context.fetchHistory(HistoryDescriptor<DefaultHistoryTransaction>()).last?.token)
            for i in 0..<2 {
                context.insert(Note(title: "missed \(i)", body: ""))
                try context.save()
            }
            // Created later with the saved token: it counts what it missed, exactly once each.
            let observer = try HistoryObserver(historyTokens: [saved.storeIdentifier: saved], observedModels: [Note.self], modelContainer: f.container)
            #expect(observer.eventCounter == 2)
            context.insert(Folder(name: "not observed"))
            try context.save()
            context.insert(Note(title: "after", body: ""))
            try context.save()
            #expect(waitUntil(reading: { _ = observer.eventCounter }) { observer.eventCounter >= 3 })
            #expect(observer.eventCounter == 3)
        }
    }
}
