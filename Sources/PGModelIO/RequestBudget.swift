import NIOCore

/// The deadline of the request being served, when its client named one (`timeoutMs`), as a task-local
/// value the ``DatabaseGateway`` reads: every connection wait and transaction of the request ends by
/// then, so nothing it does starts or commits after its client stopped waiting.
///
/// ```swift
/// try await RequestBudget.$deadline.withValue(.now() + .seconds(5)) {
///     try await gateway.save(request, as: requester)   // leases, runs and commits within the 5 s
/// }
/// ```
package enum RequestBudget {
    /// The current request's deadline; `nil` outside a request with a client deadline.
    @TaskLocal package static var deadline: NIODeadline?

    /// `limit`, shortened to what is left of the current request's deadline (at least 1 ms, so the
    /// call fails with its own `timeout` rather than never start).
    package static func timeout(within limit: TimeAmount) -> TimeAmount {
        guard let deadline else { return limit }
        return min(limit, max(.milliseconds(1), deadline - .now()))
    }
}
