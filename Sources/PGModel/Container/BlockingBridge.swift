import Dispatch
import Foundation
import NIOPosix
@_spi(PGModelInternals) import PGModelClient
@_spi(PGModelInternals) import PGModelIO
@_spi(PGModelInternals) import PGModelPostgres
import NIOCore
@_spi(PGModelInternals) import PGModelCore

/// Runs async store work from SwiftData's synchronous API (`fetch`, `save`) without deadlocking.
///
/// The work runs as a task whose executor is a NIO event loop, never Swift's cooperative pool, so a
/// caller may block any thread — including cooperative ones, of which a 2-core machine has two — while
/// it waits. A caller on *any* NIO event loop thread would stall that loop and everything it serves (a
/// server's connections, another container's store) and could wait on itself, so it gets
/// `wouldDeadlock` at once instead.
///
/// Every call has a deadline: the stores enforce `requestTimeout` themselves (closing the connection
/// that stalled); the bridge stops waiting a grace period later whatever happens below, so no
/// synchronous call can block forever.
///
/// ```swift
/// let rows = try bridge.run { try await store.fetch(request) }
/// ```
public struct BlockingBridge: Sendable {
    package let eventLoop: any EventLoop
    package let executor: EventLoopTaskExecutor
    /// The stores' deadline; the bridge waits this plus ``grace``.
    package let timeout: TimeAmount
    /// How much longer than a store's own deadline the bridge waits, so the store's error wins.
    package let grace: TimeAmount

    /// The deadline of schema work (creating tables and indexes), which may take longer than a request.
    package var schemaTimeout: TimeAmount { ConnectionDeadline.schemaTimeout(for: timeout) }

    public init(eventLoop: any EventLoop, timeout: TimeAmount = .seconds(30), grace: TimeAmount = .seconds(5)) {
        self.eventLoop = eventLoop
        self.executor = EventLoopTaskExecutor(eventLoop: eventLoop)
        self.timeout = timeout
        self.grace = grace
    }

    /// Whether the calling thread is one of NIO's event loops, where blocking is never allowed.
    static var isOnEventLoop: Bool { MultiThreadedEventLoopGroup.currentEventLoop != nil }

    /// Runs `operation` to completion and returns its result or rethrows its error; throws `timeout`
    /// when it takes longer than `timeout` (the bridge's own by default) plus ``grace``.
    public func run<T: Sendable>(timeout: TimeAmount? = nil, _ operation: @escaping @Sendable () async throws -> T) throws -> T {
        guard !eventLoop.inEventLoop, !Self.isOnEventLoop else {
            throw PGModelError(.wouldDeadlock, "a synchronous PGModel call was made on a NIO event loop thread, which it would block; call it from another thread or task")
        }
        let outcome = OutcomeBox<T>()
        let done = DispatchSemaphore(value: 0)
        let task = Task(executorPreference: executor) {
            do {
                outcome.set(.success(try await operation()))
            } catch {
                outcome.set(.failure(error))
            }
            done.signal()
        }
        let limit = (timeout ?? self.timeout) + grace
        if done.wait(timeout: .now() + .nanoseconds(Int(max(0, limit.nanoseconds)))) == .timedOut {
            task.cancel()
            throw PGModelError(.timeout, "a PGModel call did not finish within \(ConnectionDeadline.describe(limit)); the store did not answer")
        }
        return try outcome.get()
    }
}

/// The result of a bridged call, handed from the event loop to the waiting thread.
private final class OutcomeBox<T: Sendable>: @unchecked Sendable {
    // @unchecked: every access holds `lock` (a call that timed out may still be written to later).
    private let lock = NSLock()
    private var outcome: Result<T, any Error>?

    func set(_ value: Result<T, any Error>) { lock.withLock { outcome = value } }

    func get() throws -> T {
        guard let outcome = lock.withLock({ outcome }) else {
            throw PGModelError(.internalError, "a bridged call finished without a result")
        }
        return try outcome.get()
    }
}
