@_spi(PGModelInternals) import PGModelCore
@_spi(PGModelInternals) import PGModelWire

/// The subscriptions of one connection and the events waiting to be written, without sockets.
///
/// Signals from the database are merged, never queued: each subscription has at most one pending
/// event, and further signals add their entity names to it until the server takes it to write. A slow
/// client therefore costs one event per subscription, however many saves happen meanwhile — events
/// are doorbells, and one ring means "fetch history from your token", which covers every save since.
///
/// A subscription is registered before its `subscribe` response is written but only *activated* after
/// it: signals in between are kept, and no event ever precedes the response that announces its id.
///
/// ```swift
/// var subscriptions = SubscriptionStateMachine()
/// _ = subscriptions.subscribe(id: 7, entities: nil)     // then write {"id":7,"ok":true,"subscription":7}
/// subscriptions.activate(id: 7)
/// subscriptions.receive(ChangeSignal(.committed, entities: ["Trip"]))
/// subscriptions.receive(ChangeSignal(.committed, entities: ["Stay"]))
/// subscriptions.takeEvents()   // [{"event":"changes","subscription":7,"entities":["Stay","Trip"]}]
/// ```
@_spi(PGModelInternals) public struct SubscriptionStateMachine: Sendable {
    /// What a subscription has waiting to be written.
    private enum Pending: Hashable, Sendable {
        /// Saves touched these entities; `nil` when a signal did not say which (anything may have changed).
        /// With the history the signals carried, while each continued where the one before ended.
        case changes(Set<String>?, history: ChangeSignal.VisibleHistory?)
        /// The listener reconnected: the client must catch up, which also covers any pending changes.
        case reconnected
    }

    private struct Subscription: Sendable {
        /// Only signals about these entities; `nil` for all.
        var entities: Set<String>?
        var isActive = false
        var pending: Pending?
    }

    /// The most subscriptions one connection may hold; each costs a little memory on the server.
    public static let defaultMaxSubscriptions = 64

    public let maxSubscriptions: Int
    private var subscriptions: [RequestID: Subscription] = [:]
    /// Subscription ids in subscribing order, so events come out in a stable order.
    private var order: [RequestID] = []

    public init(maxSubscriptions: Int = SubscriptionStateMachine.defaultMaxSubscriptions) {
        self.maxSubscriptions = max(1, maxSubscriptions)
    }

    /// How many subscriptions are open.
    public var count: Int { order.count }

    /// Whether any subscription is open.
    public var isEmpty: Bool { order.isEmpty }

    /// Whether an active subscription has an event waiting.
    public var hasPendingEvents: Bool {
        order.contains { subscriptions[$0]?.isActive == true && subscriptions[$0]?.pending != nil }
    }

    /// Opens subscription `id` (the `subscribe` request's id), for `entities` or all entities.
    /// Fails with `invalid_field` when `id` is already a subscription, `too_many_subscriptions` past the limit.
    public mutating func subscribe(id: RequestID, entities: [String]?) -> Result<Void, WireError> {
        guard subscriptions[id] == nil else {
            return .failure(WireError(
                .invalidField, "subscription \(id) already exists; use a new request id", field: "id"))
        }
        guard order.count < maxSubscriptions else {
            return .failure(WireError(
                .tooManySubscriptions, "a connection may hold at most \(maxSubscriptions) subscriptions"))
        }
        subscriptions[id] = Subscription(entities: entities.map(Set.init))
        order.append(id)
        return .success(())
    }

    /// The `subscribe` response of `id` was written: its events may follow now.
    public mutating func activate(id: RequestID) {
        subscriptions[id]?.isActive = true
    }

    /// Closes subscription `id`, dropping its pending event; `not_found` when there is none.
    public mutating func unsubscribe(id: RequestID) -> Result<Void, WireError> {
        guard subscriptions.removeValue(forKey: id) != nil else {
            return .failure(WireError(.notFound, "there is no subscription \(id) on this connection", field: "subscription"))
        }
        order.removeAll { $0 == id }
        return .success(())
    }

    /// Closes every subscription (the connection is closing).
    public mutating func removeAll() {
        subscriptions = [:]
        order = []
    }

    /// Merges `signal` into the pending event of every subscription it concerns. Returns whether an
    /// active subscription now has an event to write.
    @discardableResult
    public mutating func receive(_ signal: ChangeSignal) -> Bool {
        for id in order {
            guard var subscription = subscriptions[id] else { continue }
            subscription.pending = Self.merge(subscription.pending, signal, filter: subscription.entities)
            subscriptions[id] = subscription
        }
        return hasPendingEvents
    }

    /// The events to write now, one per active subscription with something pending; they are no longer pending.
    public mutating func takeEvents() -> [Event] {
        var events: [Event] = []
        for id in order {
            guard var subscription = subscriptions[id], subscription.isActive, let pending = subscription.pending else {
                continue
            }
            switch pending {
            case .reconnected:
                events.append(.reconnected(subscription: id))
            case .changes(let entities, let history):
                events.append(.changes(subscription: id, entities: (entities ?? []).sorted(), history: history))
            }
            subscription.pending = nil
            subscriptions[id] = subscription
        }
        return events
    }

    private static func merge(_ pending: Pending?, _ signal: ChangeSignal, filter: Set<String>?) -> Pending? {
        switch signal.kind {
        case .reconnected:
            return .reconnected
        case .committed:
            // A signal naming no entity may concern any, so it reaches filtered subscriptions too.
            // A signal a filter drops leaves a gap in the history pending here: what follows it no longer
            // continues that history, so the merge below drops it, and the client reads for itself.
            var touched: Set<String>? = signal.entities.isEmpty ? nil : Set(signal.entities)
            if let names = touched, let filter {
                touched = names.intersection(filter)
                if touched?.isEmpty == true { return pending }
            }
            switch pending {
            case .reconnected:
                return .reconnected
            case nil:
                return .changes(touched, history: signal.history)
            case .changes(let existing, let history):
                let merged = history.flatMap { earlier in signal.history.flatMap { earlier.followed(by: $0) } }
                guard let existing, let touched else { return .changes(nil, history: merged) }
                return .changes(existing.union(touched), history: merged)
            }
        }
    }
}
