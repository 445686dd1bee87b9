@_spi(PGModelInternals) import PGModelCore

/// A line the server pushes without a request, for a `subscribe`d connection. Events have an `"event"`
/// key and no `"ok"` key, so clients tell them from responses at a glance.
///
/// Events are doorbells, never data: on `changes` (a save committed) or `reconnected` (the server's
/// listener lost and regained the database, so saves may have gone unannounced) a client fetches
/// `history` from its last token.
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
    /// The entities whose rows changed; a doorbell, never the data itself.
    public var entities: [String]
    /// The history position to resume from, when the event carries one.
    public var token: String?

    public init(name: String, subscription: RequestID? = nil, entities: [String] = [], token: String? = nil) {
        self.name = name
        self.subscription = subscription
        self.entities = entities
        self.token = token
    }

    /// The event names the server sends.
    public enum Name {
        /// A save committed in the session's schema; `entities` names the classes it touched.
        public static let changes = "changes"
        /// The server's change listener reconnected to the database: catch up from your token.
        public static let reconnected = "reconnected"
    }

    /// `{"event":"changes","subscription":…,"entities":[…]}`.
    public static func changes(subscription: RequestID, entities: [String]) -> Event {
        Event(name: Name.changes, subscription: subscription, entities: entities)
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
        case Name.changes: return ChangeSignal(.committed, entities: entities)
        case Name.reconnected: return ChangeSignal(.reconnected)
        default: return nil
        }
    }

    private enum CodingKeys: String, CodingKey {
        case name = "event", subscription, entities, token
    }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        name = try c.decode(String.self, forKey: .name)
        subscription = try c.decodeIfPresent(RequestID.self, forKey: .subscription)
        entities = try c.decodeIfPresent([String].self, forKey: .entities) ?? []
        token = try c.decodeIfPresent(String.self, forKey: .token)
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(name, forKey: .name)
        try c.encodeIfPresent(subscription, forKey: .subscription)
        // `reconnected` means "anything may have changed": an empty list would only mislead.
        if !(name == Name.reconnected && entities.isEmpty) {
            try c.encode(entities, forKey: .entities)
        }
        try c.encodeIfPresent(token, forKey: .token)
    }
}
