import NIOCore
import NIOPosix
import Observation
@_spi(PGModelInternals) import PGModelIO
import Synchronization
@_spi(PGModelInternals) import PGModel
import Testing

@Observable final class ObservedCounter {
    var value = 0
}

/// Collects the values a continuous observation saw, in order; the test awaits them instead of sleeping.
final class ObservationLog: Sendable {
    private struct State {
        var seen: [Int] = []
        var waiters: [(count: Int, continuation: CheckedContinuation<Void, Never>)] = []
    }
    private let state = Mutex(State())

    func record(_ value: Int) {
        let ready = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            state.seen.append(value)
            let ready = state.waiters.filter { state.seen.count >= $0.count }.map(\.continuation)
            state.waiters.removeAll { state.seen.count >= $0.count }
            return ready
        }
        for continuation in ready { continuation.resume() }
    }

    func values(atLeast count: Int) async -> [Int] {
        await withCheckedContinuation { continuation in
            let isReady = state.withLock { state -> Bool in
                if state.seen.count >= count { return true }
                state.waiters.append((count, continuation))
                return false
            }
            if isReady { continuation.resume() }
        }
        return state.withLock { $0.seen }
    }
}

@Suite("withContinuousObservation")
struct ContinuousObservationTests {
    @Test func runsNowAndAfterEveryChangeUntilCancelled() async throws {
        let counter = ObservedCounter()
        let log = ObservationLog()
        let token = withContinuousObservation(options: .didSet) { event in
            let value = counter.value
            log.record(event.kind == .initial ? -value - 1 : value)
        }
        #expect(await log.values(atLeast: 1) == [-1])
        counter.value = 5
        #expect(await log.values(atLeast: 2) == [-1, 5])
        counter.value = 7
        #expect(await log.values(atLeast: 3) == [-1, 5, 7])
        token.cancel()
        #expect(token.isCancelled)
    }

    /// PGModel's history feed changes its observers from tasks that prefer an event loop; a run of the
    /// closure started from there must not inherit that preference, or the closure's synchronous
    /// `ModelContext` calls would run on the event loop (where they refuse to block) and fail.
    @Test func aChangeMadeOnAnEventLoopRunsTheClosureElsewhere() async throws {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let counter = ObservedCounter()
        let log = ObservationLog()
        let token = withContinuousObservation(options: .didSet) { _ in
            let value = counter.value
            log.record(MultiThreadedEventLoopGroup.currentEventLoop == nil ? value : -1_000 - value)
        }
        #expect(await log.values(atLeast: 1) == [0])
        let executor = EventLoopTaskExecutor(eventLoop: group.next())
        await Task(executorPreference: executor) {
            #expect(MultiThreadedEventLoopGroup.currentEventLoop != nil)
            counter.value = 3
        }.value
        #expect(await log.values(atLeast: 2) == [0, 3], "a negative value ran on the event loop")
        token.cancel()
        try await group.shutdownGracefully()
    }
}
