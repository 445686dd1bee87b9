import Foundation
import NIOConcurrencyHelpers
import NIOPosix
import Observation
import Testing

@_spi(PGModelInternals) @testable import PGModel
import PGModelTesting

/// Observation callbacks reach user code, and user code reads `results` (a fetch) right there: they
/// must never run on an event loop, where a synchronous call would throw `wouldDeadlock`.
@Suite("Observer callbacks run off the event loops")
struct ObserverThreadTests {
    typealias Note = HistoryNotes.Note
    typealias Folder = HistoryNotes.Folder

    struct Seen: Sendable {
        var onEventLoop = true
        var count = -1
        var error: String?
    }

    @Test(arguments: StoreKind.observed)
    func aChangeCallbackMayReadResultsAtOnce(kind: StoreKind) async throws {
        let f = try await StoreFixture.make(kind, [Folder.self, Note.self], service: kind == .service ? try await TestService.seeds() : nil)
        try await offCooperativePool {
            let context = f.newContext()
            let observer = try ResultsObserver<Note, Never>(filterBy: #Predicate { $0.body == "thread" }, modelContext: context)
            #expect(observer.results.isEmpty)
            let seen = NIOLockedValueBox(Seen())
            let latch = ChangeLatch()
            // `observer` and its context are used from the callback while this thread waits on the latch.
            nonisolated(unsafe) let unsafeObserver = observer
            withObservationTracking {
                _ = observer.results
            } onChange: {
                let onLoop = MultiThreadedEventLoopGroup.currentEventLoop != nil
                let count = unsafeObserver.results.count
                let error = unsafeObserver.lastError.map { "\($0)" }
                seen.withLockedValue { $0 = Seen(onEventLoop: onLoop, count: count, error: error) }
                latch.signal()
            }
            let writer = f.newContext()
            writer.insert(Note(title: "\(f.token)", body: "thread"))
            try writer.save()
            #expect(latch.wait())
            let result = seen.withLockedValue { $0 }
            #expect(result.onEventLoop == false)
            #expect(result.error == nil)
            #expect(result.count == 1, "the callback's own read saw the save that announced it")
        }
    }
}
