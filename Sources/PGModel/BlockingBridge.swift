import Dispatch
import NIOCore
import PGModelCore

/// Runs async store work from SwiftData's synchronous API (`fetch`, `save`) without deadlocking.
///
/// The work runs as a task whose executor is a NIO event loop, never Swift's cooperative pool, so a
/// caller may block any thread — including cooperative ones, of which a 2-core machine has two — while
/// it waits. Calling from that event loop itself would wait forever, so it throws `wouldDeadlock`.
///
/// ```swift
/// let rows = try bridge.run { try await store.fetch(request) }
/// ```
public struct BlockingBridge: Sendable {
    let eventLoop: any EventLoop
    let executor: EventLoopTaskExecutor

    public init(eventLoop: any EventLoop) {
        self.eventLoop = eventLoop
        self.executor = EventLoopTaskExecutor(eventLoop: eventLoop)
    }

    /// Runs `operation` to completion and returns its result or rethrows its error.
    public func run<T: Sendable>(_ operation: @escaping @Sendable () async throws -> T) throws -> T {
        guard !eventLoop.inEventLoop else {
            throw PGModelError(.wouldDeadlock, "a synchronous PGModel call was made on the event loop that serves it; call it from another thread or task")
        }
        let outcome = OutcomeBox<T>()
        let done = DispatchSemaphore(value: 0)
        Task(executorPreference: executor) {
            do {
                outcome.set(.success(try await operation()))
            } catch {
                outcome.set(.failure(error))
            }
            done.signal()
        }
        done.wait()
        return try outcome.get()
    }
}

/// A TaskExecutor that runs jobs on one NIO event loop.
final class EventLoopTaskExecutor: TaskExecutor, @unchecked Sendable {
    // @unchecked: the only state is the event loop, which is thread-safe.
    let eventLoop: any EventLoop

    init(eventLoop: any EventLoop) {
        self.eventLoop = eventLoop
    }

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        eventLoop.execute {
            job.runSynchronously(on: self.asUnownedTaskExecutor())
        }
    }
}

/// The result of a bridged call, handed from the event loop to the waiting thread.
private final class OutcomeBox<T: Sendable>: @unchecked Sendable {
    // @unchecked: written once before the semaphore is signalled, read once after it is waited on;
    // the semaphore orders the two accesses.
    private var outcome: Result<T, any Error>?

    func set(_ value: Result<T, any Error>) { outcome = value }

    func get() throws -> T {
        guard let outcome else {
            throw PGModelError(.internalError, "a bridged call finished without a result")
        }
        return try outcome.get()
    }
}
