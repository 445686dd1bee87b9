import NIOConcurrencyHelpers
import NIOCore
@_spi(PGModelInternals) import PGModelCore
@_spi(PGModelInternals) import PGModelIO
import PostgresNIO

/// Lets a ``ConnectionDeadline`` end the statement its operation is waiting for.
///
/// Closing a connection fails the statements PostgresNIO has started on it, but not one whose request
/// reached the channel after it closed: PostgresNIO drops that write, and its result never comes. A
/// server whose database restarts mid-request would then hold that pooled connection forever. The
/// engine therefore awaits each statement through the watch of the deadline it runs under (the pool
/// hands it over in each lease's ``EngineConnection``), and the deadline, after closing the connection,
/// fails whatever statement is still waiting.
///
/// ```swift
/// let rows = try await watch.await(connection.query(query, logger: logger)).rows
/// ```
package final class StatementWatch: Sendable {
    private struct State {
        /// Fails the promise of the statement being awaited.
        var waiting: (@Sendable (PGModelError) -> Void)?
        var abort: PGModelError?
    }

    private let state = NIOLockedValueBox(State())

    package init() {}

    /// Awaits `result` unless the watch is or gets aborted; then throws the abort's error.
    package func await<Result: Sendable>(_ result: EventLoopFuture<Result>) async throws -> Result {
        if let abort = state.withLockedValue({ $0.abort }) { throw abort }
        let promise = result.eventLoop.makePromise(of: Result.self)
        if let abort = state.withLockedValue({ state -> PGModelError? in
            if let abort = state.abort { return abort }
            state.waiting = { promise.fail($0) }
            return nil
        }) {
            promise.fail(abort)
            throw abort
        }
        // A promise completes once: whichever of the result and the abort comes first wins.
        result.cascade(to: promise)
        defer { state.withLockedValue { $0.waiting = nil } }
        return try await promise.futureResult.get()
    }

    /// Fails the statement waiting now, and every later one, with `error`.
    package func abort(_ error: PGModelError) {
        let waiting = state.withLockedValue { state -> (@Sendable (PGModelError) -> Void)? in
            state.abort = error
            defer { state.waiting = nil }
            return state.waiting
        }
        waiting?(error)
    }
}
