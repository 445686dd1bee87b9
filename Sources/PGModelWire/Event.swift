/// A line the server pushes without a request: reserved for subscriptions (protocol version 1 sends none yet).
/// Events have an `"event"` key and no `"ok"` key, so clients tell them from responses at a glance.
///
/// ```swift
/// let event = Event(name: "changes", subscription: 9, entities: ["Trip"], token: "4711:12")
/// // {"entities":["Trip"],"event":"changes","subscription":9,"token":"4711:12"}
/// ```
public struct Event: Hashable, Sendable, Codable {
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
        try c.encode(entities, forKey: .entities)
        try c.encodeIfPresent(token, forKey: .token)
    }
}
