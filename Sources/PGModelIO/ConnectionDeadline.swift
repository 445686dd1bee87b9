import Foundation
import NIOCore
@_spi(PGModelInternals) import PGModelCore

/// A time limit on one store operation on one connection, and the time arithmetic every layer shares
/// (NIO's `TimeAmount` from a `Duration`, the schema work's longer limit, `30 s` in messages).
///
/// PGModelPostgres runs an operation under it on a PostgreSQL connection (`run(on:_:)`): past the limit
/// the connection is closed, which fails the statement in flight at once.
///
/// ```swift
/// let rows = try await ConnectionDeadline(.seconds(30), operation: "fetch of Trip").run(on: connection) { connection in
///     try await engine.fetch(request, in: schema, scope: scope, on: connection)
/// }
/// ```
@_spi(PGModelInternals) public struct ConnectionDeadline: Sendable {
    /// How long the operation may take.
    public var timeout: TimeAmount
    /// What the operation is, for the error message ("fetch of Trip").
    public var operation: String

    public init(_ timeout: TimeAmount, operation: String) {
        self.timeout = timeout
        self.operation = operation
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

@_spi(PGModelInternals) extension ConnectionDeadline {
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
