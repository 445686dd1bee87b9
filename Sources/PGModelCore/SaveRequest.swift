import Foundation

/// Everything one `ModelContext.save()` writes, applied in one SQL transaction: all or nothing.
///
/// ```swift
/// let save = SaveRequest(inserts: [RowValues(entity: "Trip", id: UUID.v7(), values: ["name": .string("Paris")])])
/// ```
public struct SaveRequest: Codable, Hashable, Sendable {
    /// New rows with every attribute. An insert that collides with a uniqueness constraint updates the
    /// existing row instead (SwiftData's upsert) and reports the existing id in ``SaveResult/remappedIdentifiers``.
    public var inserts: [RowValues]
    /// Changed rows with only their changed attributes.
    public var updates: [RowValues]
    /// Deleted rows.
    public var deletes: [RowReference]
    /// `ModelContext.author`, kept for history.
    public var author: String?

    public init(inserts: [RowValues] = [], updates: [RowValues] = [], deletes: [RowReference] = [], author: String? = nil) {
        self.inserts = inserts
        self.updates = updates
        self.deletes = deletes
        self.author = author
    }

    /// `true` when there is nothing to write.
    public var isEmpty: Bool { inserts.isEmpty && updates.isEmpty && deletes.isEmpty }
}

/// A row's identity.
public struct RowReference: Codable, Hashable, Sendable {
    public var entity: String
    public var id: UUID
    public init(entity: String, id: UUID) {
        self.entity = entity
        self.id = id
    }
}

/// A row's identity and attribute values by Swift property name.
public struct RowValues: Codable, Hashable, Sendable {
    public var entity: String
    public var id: UUID
    public var values: [String: PGValue]
    public init(entity: String, id: UUID, values: [String: PGValue]) {
        self.entity = entity
        self.id = id
        self.values = values
    }
}

/// What a save reports back.
public struct SaveResult: Codable, Hashable, Sendable {
    /// Inserted ids that became an existing row's id because a uniqueness constraint matched (upsert).
    public var remappedIdentifiers: [UUID: UUID]
    public init(remappedIdentifiers: [UUID: UUID] = [:]) {
        self.remappedIdentifiers = remappedIdentifiers
    }
}

/// A fetched row: identity, concrete entity and attribute values by Swift property name.
public typealias FetchedRow = RowValues
