/// One relationship of an entity, as the Swift property declares it (`@Relationship` or a property whose
/// type is a model, an optional model or an array of models).
///
/// The storage is derived, never sent: ``SchemaDescription/storage(of:in:)`` decides from both sides
/// of the pair where the foreign key or join table lives, so a client cannot point the server at an
/// arbitrary column.
///
/// ```swift
/// RelationshipDescription(name: "album", destination: "Album", isToMany: false, inverse: "tracks")
/// ```
@_spi(PGModelInternals) public struct RelationshipDescription: Codable, Hashable, Sendable {
    /// The Swift property name, e.g. `livingAccommodation`.
    public var name: String
    /// The destination entity (Swift class name); subclasses of it are valid members.
    public var destination: String
    /// `[Model]` rather than `Model?`.
    public var isToMany: Bool
    /// Whether `nil` is allowed (to-one) — to-many relationships are always optional in storage.
    public var isOptional: Bool
    /// The inverse property on the destination, declared on either side or inferred.
    public var inverse: String?
    /// What deleting a model does to the models this relationship reaches.
    public var deleteRule: DeleteRule
    /// `minimumModelCount` (0 or nil: no minimum).
    public var minimumModelCount: Int?
    /// `maximumModelCount` (0 or nil: no maximum).
    public var maximumModelCount: Int?
    /// `originalName:`, for migrations.
    public var originalName: String?

    public init(
        name: String, destination: String, isToMany: Bool, isOptional: Bool = true, inverse: String? = nil,
        deleteRule: DeleteRule = .nullify, minimumModelCount: Int? = nil, maximumModelCount: Int? = nil,
        originalName: String? = nil
    ) {
        self.name = name
        self.destination = destination
        self.isToMany = isToMany
        self.isOptional = isOptional
        self.inverse = inverse
        self.deleteRule = deleteRule
        self.minimumModelCount = minimumModelCount
        self.maximumModelCount = maximumModelCount
        self.originalName = originalName
    }

    /// The foreign-key column this relationship uses when it holds the key: `album` → `album_id`.
    public var foreignKeyColumn: String { Naming.shortened(Naming.snakeCase(name) + "_id") }

    /// SwiftData's delete rules.
    public typealias DeleteRule = RelationshipDeleteRule
}

/// SwiftData's delete rules: what deleting a model does to the models a relationship reaches. Apps
/// spell it `Schema.Relationship.DeleteRule`.
///
/// ```swift
/// @Relationship(deleteRule: .cascade) var stops: [Stop] = []
/// ```
public enum RelationshipDeleteRule: String, Codable, Hashable, Sendable, CaseIterable {
    /// Delete the related models too (recursively, in the same transaction).
    case cascade
    /// Remove the reference from the related models (the default).
    case nullify
    /// Refuse to delete while related models exist: the save throws `delete_denied`.
    case deny
    /// Leave the related models as they are.
    case noAction
}

/// Where a relationship's links live, as seen from the side that asks.
@_spi(PGModelInternals) public enum RelationshipStorage: Hashable, Sendable {
    /// This entity's table has `column`, a foreign key to the destination's `id`.
    case foreignKey(column: String)
    /// The destination's table has `column`, a foreign key to this entity's `id` (the inverse's key).
    case inverseForeignKey(column: String)
    /// A join table: `sourceColumn` holds this entity's id, `destinationColumn` the destination's.
    case joinTable(table: String, sourceColumn: String, destinationColumn: String)
}
