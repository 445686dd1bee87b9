import Foundation

/// A row's identity in a store: the root class of its hierarchy (which names its table) and its id.
///
/// Ids are chosen by clients and are unique per class hierarchy only: a `Note` and a `Trip` may have one
/// id. Everything that collects rows of several classes by id (a save's owners, deletes, links and
/// updates) keys them by this, so two rows that share an id never stand in for each other.
///
/// ```swift
/// let key = schema.rowKey("Cruise", id)   // RowKey(root: "Voyage", id: id)
/// ```
@_spi(PGModelInternals) public struct RowKey: Hashable, Sendable, CustomStringConvertible {
    /// The root class of the row's hierarchy.
    public var root: String
    public var id: UUID

    public init(root: String, id: UUID) {
        self.root = root
        self.id = id
    }

    public var description: String { "\(root) \(id)" }
}

@_spi(PGModelInternals) extension SchemaDescription {
    /// The ``RowKey`` of row `id` of class `entity` (an unknown class stands for itself).
    ///
    /// ```swift
    /// schema.rowKey("Trip", id)
    /// ```
    public func rowKey(_ entity: String, _ id: UUID) -> RowKey {
        RowKey(root: rootEntity(of: entity)?.name ?? entity, id: id)
    }

    /// ``rowKey(_:_:)`` that looks each class's root up once: for loops over a save's rows.
    ///
    /// ```swift
    /// let key = schema.rowKeyer()
    /// let keys = rows.map { key($0.entity, $0.id) }
    /// ```
    public func rowKeyer() -> (_ entity: String, _ id: UUID) -> RowKey {
        var roots: [String: String] = [:]
        return { entity, id in
            if let root = roots[entity] { return RowKey(root: root, id: id) }
            let root = rootEntity(of: entity)?.name ?? entity
            roots[entity] = root
            return RowKey(root: root, id: id)
        }
    }
}
