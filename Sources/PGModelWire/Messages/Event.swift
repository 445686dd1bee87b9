@_spi(PGModelInternals) import PGModelCore

/// A line the server pushes without a request, for a `subscribe`d connection. Events have an `"event"`
/// key and no `"ok"` key, so clients tell them from responses at a glance.
///
/// Events are doorbells: on `changes` (a save committed) or `reconnected` (the server's listener lost and
/// regained the database, so saves may have gone unannounced) a client fetches `history` from its last
/// token — unless a `changes` event carries that history already (`after` and `transactions`: what the
/// server read for this user before it rang, every transaction they may see after `after`).
///
/// ```swift
/// let event = Event.changes(subscription: 7, entities: ["Trip"])
/// // {"entities":["Trip"],"event":"changes","subscription":7}
/// let again = Event.reconnected(subscription: 7)
/// // {"event":"reconnected","subscription":7}
/// ```
@_spi(PGModelInternals) public struct Event: Hashable, Sendable, Codable {
    /// The kind of event, e.g. `"changes"`.
    public var name: String
    /// The id of the `subscribe` request this event belongs to.
    public var subscription: RequestID?
    /// The entities whose rows changed.
    public var entities: [String]
    /// The history the event announces, as the subscriber may see it; nil: fetch it.
    public var history: ChangeSignal.VisibleHistory?

    public init(name: String, subscription: RequestID? = nil, entities: [String] = [], history: ChangeSignal.VisibleHistory? = nil) {
        self.name = name
        self.subscription = subscription
        self.entities = entities
        self.history = history
    }

    /// The event names the server sends.
    public enum Name {
        /// A save committed in the session's schema; `entities` names the classes it touched.
        public static let changes = "changes"
        /// The server's change listener reconnected to the database: catch up from your token.
        public static let reconnected = "reconnected"
    }

    /// `{"event":"changes","subscription":…,"entities":[…]}`, with `"after"` and `"transactions"` when it
    /// carries `history`.
    public static func changes(subscription: RequestID, entities: [String], history: ChangeSignal.VisibleHistory? = nil) -> Event {
        Event(name: Name.changes, subscription: subscription, entities: entities, history: history)
    }

    /// `{"event":"reconnected","subscription":…}`.
    public static func reconnected(subscription: RequestID) -> Event {
        Event(name: Name.reconnected, subscription: subscription)
    }

    /// The store-level doorbell this event rings; `nil` for an event name this client does not know
    /// (newer servers may send more), which clients ignore.
    ///
    /// ```swift
    /// Event.changes(subscription: 7, entities: ["Trip"]).changeSignal   // ChangeSignal(.committed, entities: ["Trip"])
    /// ```
    public var changeSignal: ChangeSignal? {
        switch name {
        case Name.changes: return ChangeSignal(.committed, entities: entities, history: history)
        case Name.reconnected: return ChangeSignal(.reconnected)
        default: return nil
        }
    }

    private enum CodingKeys: String, CodingKey {
        case name = "event", subscription, entities, after, transactions
    }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        name = try c.decode(String.self, forKey: .name)
        subscription = try c.decodeIfPresent(RequestID.self, forKey: .subscription)
        entities = try c.decodeIfPresent([String].self, forKey: .entities) ?? []
        if let after = try c.decodeIfPresent(UInt64.self, forKey: .after) {
            let transactions = try c.decodeIfPresent([HistoryRecord].self, forKey: .transactions) ?? []
            history = ChangeSignal.VisibleHistory(after: after, transactions: transactions)
        } else {
            history = nil
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(name, forKey: .name)
        try c.encodeIfPresent(subscription, forKey: .subscription)
        // `reconnected` means "anything may have changed": an empty list would only mislead.
        if !(name == Name.reconnected && entities.isEmpty) {
            try c.encode(entities, forKey: .entities)
        }
        if let history {
            try c.encode(history.after, forKey: .after)
            var records = c.nestedUnkeyedContainer(forKey: .transactions) as any UnkeyedEncodingContainer
            try WireHistoryPage.encode(history.transactions, into: &records)
        }
    }
}
