import NIOConcurrencyHelpers
import NIOCore
@_spi(PGModelInternals) import PGModelCore
@_spi(PGModelInternals) import PGModelIO
import PostgresNIO

/// Past the limit the connection is closed: that fails the statement in flight at once (PostgresNIO
/// fails every pending query of a closed connection), so the caller gets `timeout` instead of waiting on a
/// stalled server, and the connection is never handed out again. The timer is a NIO scheduled task on the
/// connection's own event loop, so a deadline needs no thread of Swift's cooperative pool.
@_spi(PGModelInternals) extension ConnectionDeadline {
    /// Runs `body` on `connection`; throws `timeout` (and closes the connection) if it is not done in time.
    /// `body` gets the deadline's watch, through which every statement it sends must be awaited.
    package func run<T: Sendable>(on connection: PostgresConnection,
                                  _ body: (StatementWatch) async throws -> T) async throws -> T {
        let expired = NIOLockedValueBox(false)
        let watch = StatementWatch()
        let deadline = self
        let timer = connection.eventLoop.scheduleTask(in: timeout) {
            // Formatted only when it fires: the message's strings cost every statement a microsecond.
            let error = deadline.timeoutError
            expired.withLockedValue { $0 = true }
            connection.close().whenComplete { _ in watch.abort(error) }
            // A statement whose request reached the channel after it closed never fails by itself.
            watch.abort(error)
        }
        do {
            let result = try await body(watch)
            timer.cancel()
            return result
        } catch {
            timer.cancel()
            if expired.withLockedValue({ $0 }) { throw timeoutError }
            throw error
        }
    }

}
