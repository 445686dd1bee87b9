import Foundation
import NIOCore
import NIOPosix
@_spi(PGModelInternals) import PGModelCore

/// A time limit on an async operation that does not itself stop in time (a pooled connection that
/// never comes, a statement on a server that stopped answering).
///
/// The caller gets the operation's result or, once `timeout` has passed, a `timeout` error; the
/// operation is then cancelled and left to finish on its own. Use it where an answer must come whatever
/// happens below (the service answers every request); where a connection can be closed instead, closing
/// it (`ConnectionDeadline`) also frees what the operation holds.
///
/// ```swift
/// let rows = try await Deadline(.seconds(30), operation: "fetch of Trip").run { try await engine.fetch(...) }
/// ```
@_spi(PGModelInternals) public struct Deadline: Sendable {
    /// How long the operation may take.
    public var timeout: Duration
    /// What the operation is, for the error message.
    public var operation: String

    /// Where the operation runs after its first suspension; nil is the global concurrent executor. The
    /// service passes its connection's event loop, so a short request stays on the thread its bytes
    /// arrived on.
    public var executor: EventLoopTaskExecutor?

    public init(_ timeout: Duration, operation: String, executor: EventLoopTaskExecutor? = nil) {
        self.timeout = timeout
        self.operation = operation
        self.executor = executor
    }

    /// Runs `body`; throws `timeout` when it has not finished in time.
    ///
    /// `body` starts at once on the caller's thread (`Task.immediate`) and runs there until it first
    /// suspends; the deadline counts from before it starts. Its time is kept as every deadline of
    /// PGModel's is, by a task scheduled on an event loop — the executor's own when there is one, so a
    /// short request schedules and cancels it without waking another thread — never by a sleeping task,
    /// which would cost two more jobs on Swift's thread pool.
    public func run<T: Sendable>(_ body: @escaping @Sendable () async throws -> T) async throws -> T {
        let outcome = OnceOutcome<T>()
        let deadline = self
        let loop = executor?.eventLoop ?? MultiThreadedEventLoopGroup.singleton.any()
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<T, any Error>) in
                outcome.install(continuation)
                // Cancelled before it began: the work never starts (`Task.immediate` would run it
                // before it could be told).
                guard !outcome.isResolved else { return }
                let timer = loop.scheduleTask(in: ConnectionDeadline.timeAmount(timeout)) {
                    // Formatted only when needed: a Duration's description costs microseconds.
                    if outcome.resume(.failure(deadline.timeoutError)) { outcome.cancelWork() }
                }
                outcome.onResolve { timer.cancel() }
                let work = Task.immediate(executorPreference: deadline.executor) {
                    do { outcome.resume(.success(try await body())) } catch { outcome.resume(.failure(error)) }
                }
                outcome.attachWork { work.cancel() }
            }
        } onCancel: {
            // The caller stopped waiting: so does the work, as far as it checks for cancellation.
            if outcome.resume(.failure(CancellationError())) { outcome.cancelWork() }
        }
    }

    /// The error a call past its deadline throws.
    public var timeoutError: PGModelError {
        PGModelError(.timeout, "\(operation) did not finish within \(timeout)")
    }
}

/// A continuation resumed by whichever comes first: the result, the deadline or cancellation; and the
/// work's cancellation, for the latter two.
private final class OnceOutcome<T: Sendable>: @unchecked Sendable {
    // @unchecked: every field is read and written under `lock`.
    private let lock = NSLock()
    private var continuation: CheckedContinuation<T, any Error>?
    private var early: Result<T, any Error>?
    private var isResolvedFlag = false
    private var resolved: [@Sendable () -> Void] = []
    private var isWorkCancelled = false
    private var workCancellation: (@Sendable () -> Void)?

    /// Whether the caller has been answered (by the result, the deadline or cancellation).
    var isResolved: Bool {
        lock.lock()
        defer { lock.unlock() }
        return isResolvedFlag
    }

    func install(_ continuation: CheckedContinuation<T, any Error>) {
        lock.lock()
        if let early {
            lock.unlock()
            continuation.resume(with: early)
            return
        }
        self.continuation = continuation
        lock.unlock()
    }

    /// Resumes the caller with `result` if nothing did yet; returns whether this call did.
    @discardableResult
    func resume(_ result: Result<T, any Error>) -> Bool {
        lock.lock()
        guard !isResolvedFlag else {
            lock.unlock()
            return false
        }
        isResolvedFlag = true
        let continuation = self.continuation
        self.continuation = nil
        if continuation == nil { early = result }
        let callbacks = resolved
        resolved = []
        lock.unlock()
        // The timer is cancelled before the caller resumes: once it has its answer, nothing of the call
        // is left scheduled.
        for callback in callbacks { callback() }
        continuation?.resume(with: result)
        return true
    }

    /// Keeps the way to cancel the work; cancels it at once if ``cancelWork()`` came first.
    func attachWork(_ cancel: @escaping @Sendable () -> Void) {
        lock.lock()
        guard !isWorkCancelled else {
            lock.unlock()
            cancel()
            return
        }
        workCancellation = cancel
        lock.unlock()
    }

    /// Cancels the work (the deadline passed or the caller was cancelled), now or once it is attached.
    func cancelWork() {
        lock.lock()
        isWorkCancelled = true
        let cancel = workCancellation
        workCancellation = nil
        lock.unlock()
        cancel?()
    }

    func onResolve(_ callback: @escaping @Sendable () -> Void) {
        lock.lock()
        guard !isResolvedFlag else {
            lock.unlock()
            callback()
            return
        }
        resolved.append(callback)
        lock.unlock()
    }
}
