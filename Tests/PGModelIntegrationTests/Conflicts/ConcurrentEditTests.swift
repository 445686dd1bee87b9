import Foundation
@_spi(PGModelInternals) import PGModelCore
import Testing

@_spi(PGModelInternals) @testable import PGModel
import PGModelTesting

/// Models whose attributes merge by each rule, and plain ones that the context's policy decides.
enum ConflictModels {
    @Model final class EditedMemo {
        /// Never edited: how a test finds its memo.
        var key: String
        var title: String
        var body: String
        @Attribute(.merge(.sum)) var views: Int
        @Attribute(.merge(.union)) var tags: [String]
        @Attribute(.merge(.lastWriter)) var seenBy: String
        /// A counter without a rule: concurrent increments conflict, and a client retries.
        var edits: Int = 0

        init(key: String, title: String, body: String = "", views: Int = 0, tags: [String] = [], seenBy: String = "") {
            self.key = key
            self.title = title
            self.body = body
            self.views = views
            self.tags = tags
            self.seenBy = seenBy
        }
    }

    /// A trip two people plan at once: attributes and a to-one relationship (a foreign key in its row).
    @Model final class PlannedTrip {
        /// Never edited: how a test finds its trip.
        var key: String
        var name: String
        var budget: Double
        var guide: TripGuide?

        init(key: String, name: String, budget: Double) {
            self.key = key
            self.name = name
            self.budget = budget
        }
    }

    @Model final class TripGuide {
        var key: String
        var name: String

        init(key: String, name: String) {
            self.key = key
            self.name = name
        }
    }

    static let models: [any PersistentModel.Type] = [EditedMemo.self, PlannedTrip.self, TripGuide.self]
}

/// Two contexts (the second on another container: another process, or through the service another
/// client of the same user) edit one record: the same attribute follows the policy exactly, different
/// attributes both stay, a delete meets an update with a typed outcome, and rules merge counters and sets.
@Suite("Concurrent edits: nothing lost silently")
struct ConcurrentEditTests {
    typealias Memo = ConflictModels.EditedMemo

    /// A memo saved by a first context, and the same memo as a second process reads it.
    func twoCopies(_ f: StoreFixture, title: String = "read") throws -> (mine: ModelContext, memo: Memo, theirs: ModelContext, theirMemo: Memo) {
        let mine = f.newContext()
        let memo = Memo(key: "\(f.token)-\(title)", title: title, body: "body", views: 0, tags: ["x"])
        mine.insert(memo)
        try mine.save()
        let theirs = ModelContext(try f.otherProcess())
        let key = memo.key
        let theirMemo = try #require(try theirs.fetch(FetchDescriptor<Memo>(predicate: #Predicate { $0.key == key })).first)
        return (mine, memo, theirs, theirMemo)
    }

    func stored(_ f: StoreFixture, _ memo: Memo) throws -> Memo? {
        let key = memo.key
        return try f.newContext().fetch(FetchDescriptor<Memo>(predicate: #Predicate { $0.key == key })).first
    }

    @Test(arguments: StoreKind.tested)
    func theSameAttributeThrowsWithAllThreeValuesAndWritesNothing(kind: StoreKind) async throws {
        let f = try await StoreFixture.make(kind, ConflictModels.models)
        try await offCooperativePool {
            let (mine, memo, theirs, theirMemo) = try twoCopies(f)
            let read = memo.title
            theirMemo.title = "theirs"
            try theirs.save()
            memo.title = "mine"
            memo.body = "my body"
            var thrown: PGModelError?
            do { try mine.save() } catch let error as PGModelError { thrown = error }
            let error = try #require(thrown, "the default policy throws")
            #expect(error.code == .saveConflict)
            #expect(error.conflicts == [SaveConflict(entity: "EditedMemo", id: memo.persistentModelID.uuid, kind: .changed, attributes: [
                SaveConflict.Attribute(name: "title", mine: .string("mine"), theirs: .string("theirs"), ancestor: .string(read)),
            ])])
            #expect(try stored(f, memo)?.title == "theirs")
            #expect(try stored(f, memo)?.body == "body", "nothing of the refused save is written, its other attributes included")
            #expect(mine.hasChanges, "the refused changes stay pending")

            // Refresh keeping this context's changes: it now knows theirs, and the next save is deliberate.
            try mine.refresh(memo, mergeChanges: true)
            #expect(memo.title == "mine")
            try mine.save()
            #expect(try stored(f, memo)?.title == "mine")
            #expect(try stored(f, memo)?.body == "my body")
        }
    }

    @Test(arguments: StoreKind.tested)
    func refreshWithoutMergingTakesTheStoresValues(kind: StoreKind) async throws {
        let f = try await StoreFixture.make(kind, ConflictModels.models)
        try await offCooperativePool {
            let (mine, memo, theirs, theirMemo) = try twoCopies(f)
            theirMemo.title = "theirs"
            try theirs.save()
            memo.title = "mine"
            #expect(throws: PGModelError.self) { try mine.save() }
            try mine.refresh(memo, mergeChanges: false)
            #expect(memo.title == "theirs")
            #expect(!mine.hasChanges)
        }
    }

    @Test(arguments: StoreKind.tested)
    func differentAttributesBothStay(kind: StoreKind) async throws {
        let f = try await StoreFixture.make(kind, ConflictModels.models)
        try await offCooperativePool {
            let (mine, memo, theirs, theirMemo) = try twoCopies(f)
            theirMemo.title = "theirs"
            try theirs.save()
            memo.body = "mine"
            try mine.save()
            let now = try #require(try stored(f, memo))
            #expect(now.title == "theirs")
            #expect(now.body == "mine")
        }
    }

    @Test(arguments: StoreKind.tested)
    func aSaveShowsTheWholeStoredRowAndTakesItAsWhatItRead(kind: StoreKind) async throws {
        typealias Trip = ConflictModels.PlannedTrip
        typealias Guide = ConflictModels.TripGuide
        let f = try await StoreFixture.make(kind, ConflictModels.models)
        try await offCooperativePool {
            let a = f.newContext()
            let trip = Trip(key: "\(f.token)-trip", name: "read", budget: 100)
            let guide = Guide(key: "\(f.token)-guide", name: "Ann")
            a.insert(trip)
            a.insert(guide)
            try a.save()
            let b = ModelContext(try f.otherProcess())
            let tripKey = trip.key, guideKey = guide.key
            let theirTrip = try #require(try b.fetch(FetchDescriptor<Trip>(predicate: #Predicate { $0.key == tripKey })).first)
            let theirGuide = try #require(try b.fetch(FetchDescriptor<Guide>(predicate: #Predicate { $0.key == guideKey })).first)

            // B renames the trip and gives it a guide; A, which read neither change, saves its budget.
            theirTrip.name = "B1"
            theirTrip.guide = theirGuide
            try b.save()
            trip.budget = 200
            try a.save()
            #expect(trip.name == "B1", "A's model shows B's name as soon as A's own save returns, with no fetch")
            #expect(trip.guide?.persistentModelID == guide.persistentModelID, "and B's to-one relationship")
            #expect(trip.budget == 200)
            #expect(!a.hasChanges)

            // What A read is now the stored row: changing what B changed before A's save is no conflict.
            trip.guide = nil
            try a.save()
            let stored = try #require(try f.newContext().fetch(FetchDescriptor<Trip>(predicate: #Predicate { $0.key == tripKey })).first)
            #expect(stored.guide == nil && stored.name == "B1" && stored.budget == 200)

            // A change B makes after A's save still is one: A's ancestor for the name is B's first name.
            theirTrip.name = "B2"
            try b.save()
            trip.name = "A"
            var thrown: PGModelError?
            do { try a.save() } catch let error as PGModelError { thrown = error }
            let error = try #require(thrown, "the default policy throws")
            #expect(error.code == .saveConflict)
            #expect(error.conflicts == [SaveConflict(entity: "PlannedTrip", id: trip.persistentModelID.uuid, kind: .changed, attributes: [
                SaveConflict.Attribute(name: "name", mine: .string("A"), theirs: .string("B2"), ancestor: .string("B1")),
            ])])
        }
    }

    @Test(arguments: StoreKind.tested)
    func aSetBasedSaveShowsEveryRowWhole(kind: StoreKind) async throws {
        typealias Trip = ConflictModels.PlannedTrip
        let f = try await StoreFixture.make(kind, ConflictModels.models)
        try await offCooperativePool {
            let a = f.newContext()
            let prefix = "\(f.token)-set-"
            let trips = (0..<5).map { Trip(key: "\(prefix)\($0)", name: "read", budget: 100) }
            for trip in trips { a.insert(trip) }
            try a.save()
            let b = ModelContext(try f.otherProcess())
            let theirs = try b.fetch(FetchDescriptor<Trip>(predicate: #Predicate { $0.key.starts(with: prefix) }))
            #expect(theirs.count == 5)
            for trip in theirs { trip.name = "theirs \(trip.key)" }
            try b.save()
            // One statement updates all five (each a different budget): each comes back whole.
            for (i, trip) in trips.enumerated() { trip.budget = Double(200 + i) }
            try a.save()
            #expect(trips.allSatisfy { $0.name == "theirs \($0.key)" }, "every updated model shows the other context's name")
            #expect(trips.map(\.budget) == [200, 201, 202, 203, 204])
            #expect(!a.hasChanges)
        }
    }

    @Test(arguments: StoreKind.tested)
    func thePoliciesDecideTheSameAttribute(kind: StoreKind) async throws {
        let f = try await StoreFixture.make(kind, ConflictModels.models)
        try await offCooperativePool {
            // The store's value wins, and the loser's model shows it after the save.
            do {
                let (mine, memo, theirs, theirMemo) = try twoCopies(f, title: "a")
                theirMemo.title = "theirs"
                try theirs.save()
                mine.mergePolicy = .mergeByPropertyStoreTrump
                memo.title = "mine"
                memo.body = "kept"
                try mine.save()
                #expect(memo.title == "theirs", "the loser's view is the stored value")
                #expect(try stored(f, memo)?.title == "theirs")
                #expect(try stored(f, memo)?.body == "kept", "what did not conflict is saved")
                #expect(!mine.hasChanges)
            }
            // This context's value wins.
            for policy in [MergePolicy.mergeByPropertyObjectTrump, .overwrite] {
                let (mine, memo, theirs, theirMemo) = try twoCopies(f, title: policy.rawValue)
                theirMemo.title = "theirs"
                try theirs.save()
                mine.mergePolicy = policy
                memo.title = "mine"
                try mine.save()
                #expect(try stored(f, memo)?.title == "mine")
            }
        }
    }

    @Test(arguments: StoreKind.tested)
    func anUpdateOfADeletedRow(kind: StoreKind) async throws {
        let f = try await StoreFixture.make(kind, ConflictModels.models)
        try await offCooperativePool {
            let (mine, memo, theirs, theirMemo) = try twoCopies(f)
            theirs.delete(theirMemo)
            try theirs.save()
            memo.title = "mine"
            var thrown: PGModelError?
            do { try mine.save() } catch let error as PGModelError { thrown = error }
            #expect(thrown?.code == .saveConflict)
            #expect(thrown?.conflicts.map(\.kind) == [.deleted])
            #expect(try stored(f, memo) == nil, "a refused update brings nothing back")

            // Under any other policy the delete wins: the update is dropped and the model is gone here too.
            mine.mergePolicy = .mergeByPropertyObjectTrump
            try mine.save()
            #expect(memo.isDeleted || memo.modelContext == nil)
            #expect(!mine.hasChanges)
            #expect(try stored(f, memo) == nil)
        }
    }

    @Test(arguments: StoreKind.tested)
    func aDeleteOfAChangedRow(kind: StoreKind) async throws {
        let f = try await StoreFixture.make(kind, ConflictModels.models)
        try await offCooperativePool {
            let (mine, memo, theirs, theirMemo) = try twoCopies(f)
            theirMemo.body = "theirs"
            try theirs.save()
            mine.delete(memo)
            var thrown: PGModelError?
            do { try mine.save() } catch let error as PGModelError { thrown = error }
            #expect(thrown?.code == .saveConflict)
            #expect(thrown?.conflicts.first?.kind == .changedBeforeDelete)
            #expect(thrown?.conflicts.first?.attributes == [SaveConflict.Attribute(name: "body", mine: nil, theirs: .string("theirs"), ancestor: .string("body"))])
            #expect(try stored(f, memo)?.body == "theirs")

            // The store's change wins: the row stays.
            mine.mergePolicy = .mergeByPropertyStoreTrump
            try mine.save()
            #expect(try stored(f, memo)?.body == "theirs")
            // This context's delete wins.
            let (again, other, theirs2, theirOther) = try twoCopies(f, title: "second")
            theirOther.body = "theirs"
            try theirs2.save()
            again.mergePolicy = .mergeByPropertyObjectTrump
            again.delete(other)
            try again.save()
            #expect(try stored(f, other) == nil)
        }
    }

    @Test(arguments: StoreKind.tested)
    func rulesMergeCountersSetsAndLastWriters(kind: StoreKind) async throws {
        let f = try await StoreFixture.make(kind, ConflictModels.models)
        try await offCooperativePool {
            let (mine, memo, theirs, theirMemo) = try twoCopies(f)
            theirMemo.views += 1
            theirMemo.tags.append("theirs")
            theirMemo.seenBy = "them"
            try theirs.save()
            memo.views += 1
            memo.tags.append("mine")
            memo.tags.removeAll { $0 == "x" }
            memo.seenBy = "me"
            try mine.save()   // no conflict: every changed attribute has a rule
            let now = try #require(try stored(f, memo))
            #expect(now.views == 2, "both increments count")
            #expect(now.tags == ["theirs", "mine"], "both additions stay, this context's removal too")
            #expect(now.seenBy == "me")
            #expect(memo.views == 2 && memo.tags == ["theirs", "mine"], "the saving context shows what is stored")
        }
    }

    @Test(arguments: StoreKind.tested)
    func observersOfOtherContextsSeeTheMergedState(kind: StoreKind) async throws {
        let f = try await StoreFixture.make(kind, ConflictModels.models)
        try await offCooperativePool {
            let (mine, memo, theirs, theirMemo) = try twoCopies(f)
            let key = memo.key
            // An observer in a third context, on the other container: it learns of saves from history.
            let observer = try ResultsObserver<Memo, Never>(fetchDescriptor: FetchDescriptor(predicate: #Predicate { $0.key == key }),
                                                           modelContext: ModelContext(theirs.container))
            #expect(observer.results.first?.views == 0)
            theirMemo.views += 1
            theirMemo.title = "theirs"
            try theirs.save()
            memo.views += 1
            memo.title = "mine"
            mine.mergePolicy = .mergeByPropertyStoreTrump
            try mine.save()
            let merged = waitUntil(reading: { _ = observer.results }, seconds: 60) {
                observer.results.first?.views == 2
            }
            #expect(merged, "the observer sees the summed counter")
            #expect(observer.results.first?.title == "theirs", "and the store's title, which the merge kept")
        }
    }
}
