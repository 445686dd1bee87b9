import NIOCore

/// The bounds of one request, passed explicitly from whoever serves it (the server's dispatcher) through
/// the ``DatabaseGateway`` and the pool to the engine: its client's deadline, how many bytes its result
/// may hold, and where a large result is decoded. The direct store's calls have none.
///
/// ```swift
/// let budget = RequestBudget(deadline: .now() + .seconds(5), maxResultBytes: 16 << 20)
/// let rows = try await gateway.fetch(FetchRequest(entity: "Trip"), as: requester, budget: budget)
/// ```
@_spi(PGModelInternals) public struct RequestBudget: Sendable {
    /// When the request's client stops waiting: every connection wait and transaction of the request
    /// ends by then, so nothing it does starts or commits afterwards. `nil`: the gateway's own timeout.
    public var deadline: NIODeadline?
    /// The most bytes a result may hold, counted row by row as they arrive: past it the read stops
    /// with `result_too_large`, so a result past the budget is never read whole. `nil`: no bound.
    public var maxResultBytes: Int?
    /// Where a fetch of many rows decodes them, off the connection's event loop (the server runs short
    /// requests there); `nil`: where the call runs.
    public var largeResultExecutor: (any TaskExecutor)?

    public init(deadline: NIODeadline? = nil, maxResultBytes: Int? = nil, largeResultExecutor: (any TaskExecutor)? = nil) {
        self.deadline = deadline
        self.maxResultBytes = maxResultBytes
        self.largeResultExecutor = largeResultExecutor
    }

    /// `limit`, shortened to what is left of ``deadline`` (at least 1 ms, so the call fails with its
    /// own `timeout` rather than never start).
    public func timeout(within limit: TimeAmount, now: NIODeadline = .now()) -> TimeAmount {
        guard let deadline else { return limit }
        return min(limit, max(.milliseconds(1), deadline - now))
    }
}
