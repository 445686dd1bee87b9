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
    /// Deleted rows. Delete rules run in the same transaction: `.cascade` deletes what the rows reach,
    /// `.nullify` clears references to them, `.deny` fails the whole save with `delete_denied`.
    public var deletes: [RowReference]
    /// Links added to or removed from join-table relationships (to-many without a to-one inverse).
    public var links: [LinkChange]
    /// `delete(model:where:)`: every row matching each request is deleted, with delete rules, after
    /// ``deletes``.
    public var batchDeletes: [FetchRequest]
    /// Shares and revocations of records (`ModelContext.share` / `unshare`), applied after every row
    /// change. Only a record's owner (or an admin) may change its shares.
    public var shares: [ShareChange]
    /// `ModelContext.author`, kept for history.
    public var author: String?

    public init(inserts: [RowValues] = [], updates: [RowValues] = [], deletes: [RowReference] = [], links: [LinkChange] = [],
                batchDeletes: [FetchRequest] = [], shares: [ShareChange] = [], author: String? = nil) {
        self.links = links
        self.shares = shares
        self.batchDeletes = batchDeletes
        self.inserts = inserts
        self.updates = updates
        self.deletes = deletes
        self.author = author
    }

    /// `true` when there is nothing to write.
    /// Every entity the save writes, deletes, links or shares: what the store must know before it runs.
    ///
    /// ```swift
    /// SaveRequest(inserts: [RowValues(entity: "Trip", id: id, values: [:])]).entityNames   // ["Trip"]
    /// ```
    public var entityNames: Set<String> {
        Set(inserts.map(\.entity) + updates.map(\.entity) + deletes.map(\.entity)
            + batchDeletes.map(\.entity) + links.map(\.entity) + shares.map(\.record.entity))
    }

    public var isEmpty: Bool { inserts.isEmpty && updates.isEmpty && deletes.isEmpty && links.isEmpty && batchDeletes.isEmpty && shares.isEmpty }

    private enum CodingKeys: String, CodingKey { case inserts, updates, deletes, links, batchDeletes, shares, author }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        shares = try c.decodeIfPresent([ShareChange].self, forKey: .shares) ?? []
        inserts = try c.decodeIfPresent([RowValues].self, forKey: .inserts) ?? []
        updates = try c.decodeIfPresent([RowValues].self, forKey: .updates) ?? []
        deletes = try c.decodeIfPresent([RowReference].self, forKey: .deletes) ?? []
        links = try c.decodeIfPresent([LinkChange].self, forKey: .links) ?? []
        batchDeletes = try c.decodeIfPresent([FetchRequest].self, forKey: .batchDeletes) ?? []
        author = try c.decodeIfPresent(String.self, forKey: .author)
    }
}

/// One link of a join-table relationship, added or removed. Either side of a many-to-many pair may
/// name it; the store normalizes to the owning side. Adding an existing link or removing a missing one
/// does nothing.
///
/// ```swift
/// // user1.following.append(user2)
/// LinkChange(entity: "User", relationship: "following", source: user1, destination: user2, isAdded: true)
/// ```
public struct LinkChange: Codable, Hashable, Sendable {
    /// The entity declaring ``relationship``.
    public var entity: String
    public var relationship: String
    public var source: UUID
    public var destination: UUID
    /// `true` to add the link, `false` to remove it.
    public var isAdded: Bool

    public init(entity: String, relationship: String, source: UUID, destination: UUID, isAdded: Bool) {
        self.entity = entity
        self.relationship = relationship
        self.source = source
        self.destination = destination
        self.isAdded = isAdded
    }
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

/// A row's identity and values by Swift property name: attributes, and to-one relationships stored as a
/// foreign key (`"album": .uuid(…)` or `.null`).
public struct RowValues: Codable, Hashable, Sendable {
    /// The concrete class.
    public var entity: String
    public var id: UUID
    public var values: [String: PGValue]
    /// For rows fetched with ``FetchRequest/related``: the source row this one was reached from.
    public var via: UUID?
    public init(entity: String, id: UUID, values: [String: PGValue], via: UUID? = nil) {
        self.entity = entity
        self.id = id
        self.values = values
        self.via = via
    }
}

/// What a save reports back.
public struct SaveResult: Codable, Hashable, Sendable {
    /// Inserted ids that became an existing row's id because a uniqueness constraint matched (upsert).
    public var remappedIdentifiers: [UUID: UUID]
    /// Every row the save deleted: the requested deletes, batch deletes and cascades.
    public var deleted: [RowReference]
    public init(remappedIdentifiers: [UUID: UUID] = [:], deleted: [RowReference] = []) {
        self.remappedIdentifiers = remappedIdentifiers
        self.deleted = deleted
    }

    private enum CodingKeys: String, CodingKey { case remappedIdentifiers, deleted }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        remappedIdentifiers = try c.decodeIfPresent([UUID: UUID].self, forKey: .remappedIdentifiers) ?? [:]
        deleted = try c.decodeIfPresent([RowReference].self, forKey: .deleted) ?? []
    }
}

/// A fetched row: identity, concrete entity and attribute values by Swift property name.
public typealias FetchedRow = RowValues
