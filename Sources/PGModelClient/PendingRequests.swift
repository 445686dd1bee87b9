@_spi(PGModelInternals) import PGModelIO
@_spi(PGModelInternals) import PGModelWire

/// Requests sent on one connection and not answered yet, matched to their responses by id — many may be
/// in flight (pipelining). The server answers in order, so a response it could not tag with an id
/// (`"id":null`, a line it could not parse, answered in order) belongs to the oldest request. Pure; the client's
/// `ResponseRouter` keeps one per channel.
///
/// ```swift
/// var pending = PendingRequests<String>()
/// _ = pending.add(.int(1), "first")
/// #expect(pending.take(.int(1)) == "first")
/// ```
package struct PendingRequests<Waiter> {
    private var waiting: [RequestID: Waiter] = [:]
    /// Ids in sending order.
    private var order: [RequestID] = []

    package init() {}

    package var count: Int { waiting.count }

    /// Adds a request; false (and nothing added) when its id is already in flight.
    package mutating func add(_ id: RequestID, _ waiter: Waiter) -> Bool {
        guard waiting[id] == nil else { return false }
        waiting[id] = waiter
        order.append(id)
        return true
    }

    /// The waiter of the response tagged `id`; nil for an id not in flight (a late answer to a request
    /// that already failed).
    package mutating func take(_ id: RequestID) -> Waiter? {
        guard let waiter = waiting.removeValue(forKey: id) else { return nil }
        if order.first == id { order.removeFirst() } else { order.removeAll { $0 == id } }
        return waiter
    }

    /// The oldest waiter: the one an untagged response answers.
    package mutating func takeOldest() -> Waiter? {
        while !order.isEmpty {
            if let waiter = waiting.removeValue(forKey: order.removeFirst()) { return waiter }
        }
        return nil
    }

    /// Every waiter, in sending order (the connection ended).
    package mutating func takeAll() -> [Waiter] {
        defer { waiting = [:]; order = [] }
        return order.compactMap { waiting[$0] }
    }
}
