import Foundation
import NIOConcurrencyHelpers
import Observation
@_spi(PGModelInternals) import PGModelCore
import Testing

@_spi(PGModelInternals) @testable import PGModel
import PGModelTesting

/// `withContinuousObservation` over PGModel's observers: a change that lands while the closure is still
/// running (after it read the observer, before observation tracking took effect) runs the closure again.
/// Without that, the seed's `ServerSync` sat on a transaction that arrived while it fetched the previous
/// one, until the next one came (seen once in CI's parallel integration phase).
@Suite("withContinuousObservation: changes while the closure runs")
struct ObservationDuringRunTests {
    typealias Note = HistoryNotes.Note
    typealias Folder = HistoryNotes.Folder

    func notes(_ kind: StoreKind) async throws -> StoreFixture {
        try await StoreFixture.make(kind, [Folder.self, Note.self], service: kind == .service ? try await TestService.seeds() : nil)
    }

    /// Runs of the closure, and the counter each saw.
    final class Runs: @unchecked Sendable {
        // @unchecked: behind `lock`.
        private let lock = NIOLock()
        private var seen: [Int] = []
        func append(_ counter: Int) { lock.withLock { seen.append(counter) } }
        var all: [Int] { lock.withLock { seen } }
    }

    @Test(arguments: StoreKind.observed)
    func aHistoryEventDuringTheClosureRunsItAgain(kind: StoreKind) async throws {
        let f = try await notes(kind)
        try await offCooperativePool {
            let observer = try HistoryObserver(authors: ["App"], modelContainer: f.container)
            let writer = f.newContext()
            writer.author = "App"
            let runs = Runs()
            var first = true
            let token = withContinuousObservation(options: .didSet) { _ in
                let counter = observer.eventCounter
                runs.append(counter)
                guard first else { return }
                first = false
                // The closure is still running when this save's event reaches the observer.
                writer.insert(Note(title: "\(f.token)-during", body: ""))
                do { try writer.save() } catch { Issue.record("save failed: \(error)") }
                let deadline = Date().addingTimeInterval(20)
                while observer.eventCounter == counter, Date() < deadline { usleep(1_000) }
            }
            defer { token.cancel() }
            #expect(runs.all.first == 0)
            #expect(observer.eventCounter == 1, "the event arrived while the closure ran")
            // The run after it, which nothing but the change during the first can cause (bounded).
            let deadline = Date().addingTimeInterval(20)
            while runs.all.count < 2, Date() < deadline { usleep(1_000) }
            #expect(runs.all == [0, 1])
        }
    }

    @Test func aResultsObserverInvalidatedDuringTheClosureRunsItAgain() async throws {
        let f = try await notes(.direct)
        try await offCooperativePool {
            let context = f.newContext()
            let prefix = f.token
            let observer = try ResultsObserver<Note, Never>(
                fetchDescriptor: FetchDescriptor(predicate: #Predicate { $0.title.starts(with: prefix) }), modelContext: context)
            let writer = ModelContext(try f.otherProcess())
            let runs = Runs()
            var first = true
            let token = withContinuousObservation(options: .didSet) { _ in
                let count = observer.results.count
                runs.append(count)
                guard first else { return }
                first = false
                writer.insert(Note(title: "\(prefix)-during", body: ""))
                do { try writer.save() } catch { Issue.record("save failed: \(error)") }
                // Until the feed has marked the results stale (their next read would re-query).
                let deadline = Date().addingTimeInterval(20)
                let before = observer.invalidationCount
                while observer.invalidationCount == before, Date() < deadline { usleep(1_000) }
            }
            defer { token.cancel() }
            let deadline = Date().addingTimeInterval(20)
            while runs.all.count < 2, Date() < deadline { usleep(1_000) }
            // Saves of other tests to the same table may invalidate the results again: every run after the
            // first sees the row saved during it.
            let seen = runs.all
            #expect(seen.first == 0 && seen.count >= 2 && seen.dropFirst().allSatisfy { $0 == 1 },
                    "runs saw \(seen); last refresh error: \(String(describing: observer.lastError)); invalidations: \(observer.invalidationCount)")
        }
    }
}
