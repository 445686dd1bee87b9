import Foundation
@_spi(PGModelInternals) import PGModelCore

/// The identity of a model: its entity and its row id. Stable, Codable, Sendable; safe to pass
/// between contexts and actors where models themselves are not.
///
/// ```swift
/// let id = trip.persistentModelID
/// let same: Trip? = otherContext.registeredModel(for: id)
/// ```
///
/// Two identifiers are equal when they name the same entity and row: ``storeIdentifier`` and
/// ``isTemporary`` describe where and when the identifier was made, not which model it names, so an
/// identifier decoded from JSON, read from history or taken from a model before and after its first
/// save all compare equal and hash alike.
public struct PersistentIdentifier: Hashable, Comparable, Codable, Sendable, CustomStringConvertible {
    /// The model's class name.
    public var entityName: String
    /// The value that identifies the model within its store: the row's primary key.
    public let id: ID
    /// Identifies the store that holds the model: the PostgreSQL schema its tables live in, the same
    /// name history transactions and tokens carry. `nil` for an identifier made without a store (a model
    /// in no context, or ``init(entityName:id:)``) or whose store does not say (the service).
    public internal(set) var storeIdentifier: String?
    /// Whether the model was not saved yet when this identifier was made.
    ///
    /// PGModel gives a model its final id when it is created (a UUID chosen by the client), so a
    /// temporary identifier never has to be remapped: after the save, `persistentModelID` names the same
    /// row with `isTemporary == false`, and both compare equal. Decoded identifiers are not temporary.
    ///
    /// ```swift
    /// if model.persistentModelID.isTemporary {
    ///     try modelContext.save()
    /// }
    /// let data = try JSONEncoder().encode(model.persistentModelID)
    /// ```
    public var isTemporary: Bool { temporary }
    private var temporary: Bool

    /// The identifier of row `id` of `entityName`.
    ///
    /// ```swift
    /// let id = PersistentIdentifier(entityName: "Trip", id: UUID())
    /// ```
    public init(entityName: String, id: UUID) {
        self.init(entityName: entityName, id: id, storeIdentifier: nil, isTemporary: false)
    }

    init(entityName: String, id: UUID, storeIdentifier: String?, isTemporary: Bool) {
        self.entityName = entityName
        self.id = ID(uuid: id)
        self.storeIdentifier = storeIdentifier
        self.temporary = isTemporary
    }

    /// The row's primary key (`id uuid` in its table).
    @_spi(PGModelInternals) public var uuid: UUID { id.uuid }

    public static func == (lhs: Self, rhs: Self) -> Bool {
        lhs.id == rhs.id && lhs.entityName == rhs.entityName
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(entityName)
        hasher.combine(id)
    }

    public static func < (lhs: Self, rhs: Self) -> Bool {
        (lhs.entityName, lhs.id.uuid.uuidString) < (rhs.entityName, rhs.id.uuid.uuidString)
    }

    public var description: String { "\(entityName)(\(id.uuid.uuidString.lowercased()))" }

    private enum CodingKeys: String, CodingKey { case entityName, id, storeIdentifier }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        entityName = try c.decode(String.self, forKey: .entityName)
        id = try c.decode(ID.self, forKey: .id)
        storeIdentifier = try c.decodeIfPresent(String.self, forKey: .storeIdentifier)
        temporary = false
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(entityName, forKey: .entityName)
        try c.encode(id, forKey: .id)
        try c.encodeIfPresent(storeIdentifier, forKey: .storeIdentifier)
    }
}
