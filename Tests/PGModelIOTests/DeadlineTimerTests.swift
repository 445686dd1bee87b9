@_spi(PGModelInternals) @testable import PGModelIO
import Synchronization
import Testing
@_spi(PGModelInternals) @testable import PGModelCore

/// The one thread behind every service request's deadline: callbacks fire in deadline order, a cancelled
/// one never fires, and a deadline earlier than the one the thread sleeps until still fires on time.
@Suite("DeadlineTimer", .timeLimit(.minutes(1)))
struct DeadlineTimerTests {
    @Test func callbacksFireInDeadlineOrderNotSchedulingOrder() async {
        let timer = DeadlineTimer()
        let (fired, continuation) = AsyncStream.makeStream(of: Int.self)
        for (label, milliseconds) in [(3, 60), (1, 20), (2, 40)] {
            _ = timer.schedule(after: .milliseconds(milliseconds)) { continuation.yield(label) }
        }
        var order: [Int] = []
        for await label in fired {
            order.append(label)
            if order.count == 3 { break }
        }
        #expect(order == [1, 2, 3])
        #expect(timer.pendingCount == 0)
    }

    @Test func aCancelledCallbackNeverFires() async {
        let timer = DeadlineTimer()
        let (fired, continuation) = AsyncStream.makeStream(of: String.self)
        let cancelled = timer.schedule(after: .milliseconds(10)) { continuation.yield("cancelled one") }
        timer.cancel(cancelled)
        #expect(timer.pendingCount == 0)
        // Callbacks fire in deadline order, so the cancelled one would have come first.
        _ = timer.schedule(after: .milliseconds(50)) { continuation.yield("later one") }
        var iterator = fired.makeAsyncIterator()
        #expect(await iterator.next() == "later one")
    }

    @Test func anEarlierDeadlineWakesTheSleepingThread() async {
        let timer = DeadlineTimer()
        let (fired, continuation) = AsyncStream.makeStream(of: String.self)
        let far = timer.schedule(after: .seconds(3600)) { continuation.yield("far") }
        // The thread now sleeps until the far deadline: the near one must wake it (or the test times out).
        _ = timer.schedule(after: .milliseconds(20)) { continuation.yield("near") }
        var iterator = fired.makeAsyncIterator()
        #expect(await iterator.next() == "near")
        #expect(timer.pendingCount == 1)
        timer.cancel(far)
        #expect(timer.pendingCount == 0)
    }

    @Test func aDeadlineThatEndsInTimeLeavesNothingScheduled() async throws {
        var deadline = Deadline(.seconds(30), operation: "quick")
        deadline.timer = DeadlineTimer()
        #expect(try await deadline.run { 7 } == 7)
        #expect(deadline.timer.pendingCount == 0)
        await #expect(throws: PGModelError.self) {
            try await deadline.run { () async throws -> Int in throw PGModelError(.notFound, "gone") }
        }
        #expect(deadline.timer.pendingCount == 0)
    }

    @Test func negativeAndHugeDelaysAreClamped() async {
        let timer = DeadlineTimer()
        let (fired, continuation) = AsyncStream.makeStream(of: String.self)
        let huge = timer.schedule(after: .seconds(Int64.max)) { continuation.yield("huge") }
        // Whole seconds that fit in UInt64 nanoseconds, plus a fraction that does not: still far away.
        let edge = timer.schedule(after: .seconds(18_446_744_073) + .nanoseconds(999_999_999)) { continuation.yield("edge") }
        _ = timer.schedule(after: .seconds(-5)) { continuation.yield("past") }
        var iterator = fired.makeAsyncIterator()
        #expect(await iterator.next() == "past")
        // Had the edge wrapped around, it would fire ~0.3 s from now, before this one.
        _ = timer.schedule(after: .seconds(1)) { continuation.yield("later") }
        #expect(await iterator.next() == "later")
        timer.cancel(huge)
        timer.cancel(edge)
    }

    @Test func manyConcurrentDeadlinesAllAnswerAndLeaveNothingScheduled() async throws {
        let timer = DeadlineTimer()
        let total = try await withThrowingTaskGroup(of: Int.self) { group in
            for n in 0..<1_000 {
                group.addTask {
                    var deadline = Deadline(.seconds(30), operation: "call \(n)")
                    deadline.timer = timer
                    return try await deadline.run {
                        if n % 3 == 0 { await Task.yield() }
                        return n
                    }
                }
            }
            return try await group.reduce(0, +)
        }
        #expect(total == (0..<1_000).reduce(0, +))
        #expect(timer.pendingCount == 0)
    }

    @Test func aCallerCancelledBeforeTheCallGetsCancellationAndTheWorkNeverStarts() async throws {
        let timer = DeadlineTimer()
        let started = Mutex(false)
        let caller = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            var deadline = Deadline(.seconds(30), operation: "late")
            deadline.timer = timer
            return try await deadline.run {
                started.withLock { $0 = true }
                return 1
            }
        }
        await #expect(throws: CancellationError.self) { try await caller.value }
        // The work would have started on the caller's thread before `run` returned.
        #expect(started.withLock { $0 } == false)
        #expect(timer.pendingCount == 0)
    }
}
