import Foundation

/// One model a save found changed or deleted by someone else since the saving context read it, with
/// the attributes both sides changed: what a `save_conflict` error lists (``PGModelError/conflicts``).
///
/// ```swift
/// do { try context.save() }
/// catch let error as PGModelError where error.code == .saveConflict {
///     for conflict in error.conflicts {
///         for attribute in conflict.attributes {
///             print(conflict.entity, attribute.name, attribute.mine, attribute.theirs, attribute.ancestor)
///         }
///     }
/// }
/// ```
public struct SaveConflict: Hashable, Sendable, Codable {
    /// What happened to the model.
    public struct Kind: RawRepresentable, Hashable, Sendable, Codable, CustomStringConvertible {
        /// The kind's name on the wire.
        public let rawValue: String
        private init(_ rawValue: String) { self.rawValue = rawValue }
        /// The kind named `rawValue`, nil for any other name (so decoding one fails).
        public init?(rawValue: String) {
            guard let kind = Self.all.first(where: { $0.rawValue == rawValue }) else { return nil }
            self = kind
        }
        /// This context changed attributes that someone else changed too.
        public static let changed = Kind("changed")
        /// This context changed a model whose row someone else deleted.
        public static let deleted = Kind("deleted")
        /// This context deleted a model whose row someone else changed since it was read.
        public static let changedBeforeDelete = Kind("changed_before_delete")
        public static let all: [Kind] = [.changed, .deleted, .changedBeforeDelete]
        public var description: String { rawValue }
    }

    /// One attribute (or to-one relationship, as the related model's id) changed on both sides.
    public struct Attribute: Hashable, Sendable, Codable {
        /// The Swift property name.
        public var name: String
        /// This context's value: what the save would have written (nil for a delete).
        public var mine: PGValue?
        /// The store's value now (nil when the row is gone).
        public var theirs: PGValue?
        /// The value this context had read: what both sides changed.
        public var ancestor: PGValue?

        public init(name: String, mine: PGValue?, theirs: PGValue?, ancestor: PGValue?) {
            self.name = name
            self.mine = mine
            self.theirs = theirs
            self.ancestor = ancestor
        }
    }

    /// The model's class.
    public var entity: String
    /// The model's row id (its `persistentModelID.id`).
    public var id: UUID
    public var kind: Kind
    /// The attributes both sides changed; empty for ``Kind/deleted``.
    public var attributes: [Attribute]

    public init(entity: String, id: UUID, kind: Kind, attributes: [Attribute] = []) {
        self.entity = entity
        self.id = id
        self.kind = kind
        self.attributes = attributes
    }

    private enum CodingKeys: String, CodingKey { case entity, id, kind, attributes }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        entity = try c.decode(String.self, forKey: .entity)
        id = try c.decode(UUID.self, forKey: .id)
        kind = try c.decode(Kind.self, forKey: .kind)
        attributes = try c.decodeIfPresent([Attribute].self, forKey: .attributes) ?? []
    }

    /// `{"entity":"Trip","id":"0193…","kind":"changed","attributes":[{"name":"title","mine":…,"theirs":…,"ancestor":…}]}`,
    /// the id in lowercase as every id on the wire.
    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(entity, forKey: .entity)
        try c.encode(id.uuidString.lowercased(), forKey: .id)
        try c.encode(kind, forKey: .kind)
        try c.encode(attributes, forKey: .attributes)
    }
}
