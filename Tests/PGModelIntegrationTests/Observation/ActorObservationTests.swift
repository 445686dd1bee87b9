import Foundation
import NIOConcurrencyHelpers
import Observation
import Testing

@_spi(PGModelInternals) @testable import PGModel
import PGModelTesting

@Model final class WatchedVisit {
    var place: String
    init(place: String) { self.place = place }
}

/// Observation from an actor: `withContinuousObservation` runs its body on the observing actor, for the
/// initial call and for every change, whatever thread the history feed delivered on.
@Suite("Observers report to their own actor")
struct ActorObservationTests {
    @Test(arguments: StoreKind.observed)
    func anObserverReportsToItsOwnActor(kind: StoreKind) async throws {
        let f = try await StoreFixture.make(kind, [WatchedVisit.self])
        let watcher = VisitWatcher(container: f.container)
        try await watcher.start()
        try await offCooperativePool {
            let context = f.newContext()
            context.insert(WatchedVisit(place: "Quito"))
            try context.save()
        }
        let seen = await watcher.waitForPlaces(count: 1)
        #expect(seen == ["Quito"])
    }
}

/// Observes from inside its own isolation; `assertIsolated()` traps if a change ever ran elsewhere.
///
/// Its executor is a dispatch queue, as an app's background actor's would be here: it makes synchronous
/// PGModel calls, and on the cooperative pool those would starve the in-process test service they wait
/// for (two threads on a 2-core machine).
actor VisitWatcher {
    private nonisolated let executor = QueueExecutor()
    nonisolated var unownedExecutor: UnownedSerialExecutor { executor.asUnownedSerialExecutor() }
    let container: ModelContainer
    private var observer: ResultsObserver<WatchedVisit, Never>?
    private var token: ObservationTracking.Token?
    private var latest: [String] = []
    private var waiters: [(Int, CheckedContinuation<[String], Never>)] = []

    init(container: ModelContainer) { self.container = container }

    func start() throws {
        let observer = try ResultsObserver<WatchedVisit, Never>(modelContext: ModelContext(container))
        self.observer = observer
        token = withContinuousObservation { [self] _ in
            assertIsolated()
            latest = observer.results.map(\.place)
            let ready = waiters.filter { $0.0 <= latest.count }
            waiters.removeAll { $0.0 <= latest.count }
            for (_, waiter) in ready { waiter.resume(returning: latest) }
        }
    }

    func waitForPlaces(count: Int) async -> [String] {
        if latest.count >= count { return latest }
        return await withCheckedContinuation { waiters.append((count, $0)) }
    }
}
