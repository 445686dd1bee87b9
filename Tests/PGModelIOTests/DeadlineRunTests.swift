import Foundation
import NIOCore
@_spi(PGModelInternals) @testable import PGModelIO
import Testing
@_spi(PGModelInternals) import PGModelCore

/// `Deadline` answers by its time limit whatever the work does, and the work it leaves behind is
/// cancelled: a server request its client gave up on must not go on to change the database.
@Suite("Deadline", .timeLimit(.minutes(1)))
struct DeadlineRunTests {
    /// What the work saw: the stream gets one element when the work ends.
    private static func observedWork() -> (AsyncStream<String>, @Sendable () async -> Int) {
        let (stream, continuation) = AsyncStream.makeStream(of: String.self)
        return (stream, {
            do {
                try await Task.sleep(for: .seconds(600))
                continuation.yield("finished")
            } catch {
                continuation.yield(error is CancellationError ? "cancelled" : "failed")
            }
            return 1
        })
    }

    @Test func aResultBeforeTheDeadlineIsReturned() async throws {
        let value = try await Deadline(.seconds(30), operation: "quick").run { 42 }
        #expect(value == 42)
    }

    @Test func pastTheDeadlineTheCallerGetsTimeoutAndTheWorkIsCancelled() async throws {
        let (ended, work) = Self.observedWork()
        await #expect(throws: PGModelError.self) { try await Deadline(.milliseconds(50), operation: "'save'").run { await work() } }
        var iterator = ended.makeAsyncIterator()
        #expect(await iterator.next() == "cancelled")
    }

    @Test func aCancelledCallerStopsWaitingAndTheWorkIsCancelled() async throws {
        let (ended, work) = Self.observedWork()
        let (started, startedContinuation) = AsyncStream.makeStream(of: Void.self)
        let caller = Task {
            try await Deadline(.seconds(600), operation: "'save'").run {
                startedContinuation.yield()
                return await work()
            }
        }
        var startedIterator = started.makeAsyncIterator()
        _ = await startedIterator.next()
        caller.cancel()
        await #expect(throws: CancellationError.self) { try await caller.value }
        var iterator = ended.makeAsyncIterator()
        #expect(await iterator.next() == "cancelled")
    }
}
