import Foundation
import NIOConcurrencyHelpers
import NIOCore
import PGModelCore
import PostgresNIO

/// A time limit on one store operation on one PostgreSQL connection.
///
/// Past the limit the connection is closed: that fails the statement in flight at once (PostgresNIO
/// fails every pending query of a closed connection), so the caller gets `timeout` instead of waiting on a
/// stalled server, and the connection is never handed out again. The timer is a NIO scheduled task on the
/// connection's own event loop, so a deadline needs no thread of Swift's cooperative pool.
///
/// ```swift
/// let rows = try await ConnectionDeadline(.seconds(30), operation: "fetch of Trip").run(on: connection) { connection in
///     try await engine.fetch(request, in: schema, scope: scope, on: connection)
/// }
/// ```
public struct ConnectionDeadline: Sendable {
    /// How long the operation may take.
    public var timeout: TimeAmount
    /// What the operation is, for the error message ("fetch of Trip").
    public var operation: String

    public init(_ timeout: TimeAmount, operation: String) {
        self.timeout = timeout
        self.operation = operation
    }

    /// Runs `body` on `connection`; throws `timeout` (and closes the connection) if it is not done in time.
    public func run<T: Sendable>(on connection: PostgresConnection,
                                 _ body: (PostgresConnection) async throws -> T) async throws -> T {
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
            let result = try await StatementWatch.$current.withValue(watch) { try await body(connection) }
            timer.cancel()
            return result
        } catch {
            timer.cancel()
            if expired.withLockedValue({ $0 }) { throw timeoutError }
            throw error
        }
    }

    /// The error a call past its deadline throws.
    public var timeoutError: PGModelError {
        PGModelError(.timeout, "\(operation) did not finish within \(Self.describe(timeout)); its connection was closed")
    }

    /// `30 s`, `250 ms`.
    public static func describe(_ amount: TimeAmount) -> String {
        let nanoseconds = amount.nanoseconds
        if nanoseconds % 1_000_000_000 == 0 { return "\(nanoseconds / 1_000_000_000) s" }
        return "\(nanoseconds / 1_000_000) ms"
    }
}

extension ConnectionDeadline {
    /// How long schema work (creating tables and indexes on a large table) may take at least, whatever
    /// the request timeout: it runs once per container, not per request.
    public static let minimumSchemaDuration: Duration = .seconds(300)

    /// The deadline of schema work for a store whose requests have `requestTimeout`.
    public static func schemaTimeout(for requestTimeout: TimeAmount) -> TimeAmount {
        max(requestTimeout, timeAmount(minimumSchemaDuration))
    }

    /// `duration` as NIO's `TimeAmount` (nanoseconds, saturating).
    public static func timeAmount(_ duration: Duration) -> TimeAmount {
        let (seconds, attoseconds) = duration.components
        let (whole, overflow) = seconds.multipliedReportingOverflow(by: 1_000_000_000)
        guard !overflow else { return .nanoseconds(seconds < 0 ? .min : .max) }
        return .nanoseconds(whole.addingReportingOverflow(attoseconds / 1_000_000_000).partialValue)
    }
}
