@_spi(PGModelInternals) import PGModelCore

/// The identity of a model: its entity and its row id. Stable, Codable, Sendable; safe to pass
/// between contexts and actors where models themselves are not.
///
/// ```swift
/// let id = trip.persistentModelID
/// let same: Trip? = otherContext.registeredModel(for: id)
/// ```
public struct PersistentIdentifier: Hashable, Comparable, Codable, Sendable, CustomStringConvertible {
    /// The model's class name.
    public var entityName: String
    /// The row's primary key (`id uuid` in its table).
    public var id: UUID
    /// Identifies the store; PGModel has one store per container, so this is a constant.
    public var storeIdentifier: String? { "pgmodel" }

    public init(entityName: String, id: UUID) {
        self.entityName = entityName
        self.id = id
    }

    public static func < (lhs: Self, rhs: Self) -> Bool {
        (lhs.entityName, lhs.id.uuidString) < (rhs.entityName, rhs.id.uuidString)
    }

    public var description: String { "\(entityName)(\(id.uuidString.lowercased()))" }
}
