import Foundation

/// Everything one `ModelContext.save()` writes, applied in one SQL transaction: all or nothing.
///
/// ```swift
/// let save = SaveRequest(inserts: [RowValues(entity: "Trip", id: UUID.v7(), values: ["name": .string("Paris")])])
/// ```
@_spi(PGModelInternals) public struct SaveRequest: Codable, Hashable, Sendable {
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
    /// The saving program (`DefaultHistoryTransaction.bundleIdentifier`), kept for history: its bundle
    /// identifier, or its executable's name where it has none (see ``ProcessIdentity``).
    public var bundleIdentifier: String?
    /// The saving process's id as text (`DefaultHistoryTransaction.processIdentifier`), kept for history.
    public var processIdentifier: String?
    /// What the save does with an update or delete whose ``RowValues/ancestor`` (or
    /// ``RowReference/ancestor``) differs from what is stored: ``MergePolicy/error`` when absent.
    public var mergePolicy: MergePolicy
    /// Attributes that merge by a rule whatever ``mergePolicy`` says, by class and attribute name.
    public var mergeRules: [String: [String: MergeRule]]

    public init(inserts: [RowValues] = [], updates: [RowValues] = [], deletes: [RowReference] = [], links: [LinkChange] = [],
                batchDeletes: [FetchRequest] = [], shares: [ShareChange] = [], author: String? = nil,
                bundleIdentifier: String? = nil, processIdentifier: String? = nil,
                mergePolicy: MergePolicy = .error, mergeRules: [String: [String: MergeRule]] = [:]) {
        self.mergePolicy = mergePolicy
        self.mergeRules = mergeRules
        self.links = links
        self.shares = shares
        self.batchDeletes = batchDeletes
        self.inserts = inserts
        self.updates = updates
        self.deletes = deletes
        self.author = author
        self.bundleIdentifier = bundleIdentifier
        self.processIdentifier = processIdentifier
    }

    /// `true` when there is nothing to write.
    /// Every entity the save writes, deletes, links or shares: what the store must know before it runs.
    ///
    /// ```swift
    /// SaveRequest(inserts: [RowValues(entity: "Trip", id: id, values: [:])]).entityNames   // ["Trip"]
    /// ```
    public var entityNames: Set<String> {
        // One pass per list: no array of every row's name (100,000 of them in a bulk insert).
        var names = Set<String>()
        for row in inserts { names.insert(row.entity) }
        for row in updates { names.insert(row.entity) }
        for reference in deletes { names.insert(reference.entity) }
        for request in batchDeletes { names.insert(request.entity) }
        for link in links { names.insert(link.entity) }
        for share in shares { names.insert(share.record.entity) }
        return names
    }

    public var isEmpty: Bool { inserts.isEmpty && updates.isEmpty && deletes.isEmpty && links.isEmpty && batchDeletes.isEmpty && shares.isEmpty }

    private enum CodingKeys: String, CodingKey {
        case inserts, updates, deletes, links, batchDeletes, shares, author, bundleIdentifier, processIdentifier, mergePolicy, mergeRules
    }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        mergePolicy = try c.decodeIfPresent(MergePolicy.self, forKey: .mergePolicy) ?? .error
        mergeRules = try c.decodeIfPresent([String: [String: MergeRule]].self, forKey: .mergeRules) ?? [:]
        shares = try c.decodeIfPresent([ShareChange].self, forKey: .shares) ?? []
        inserts = try c.decodeIfPresent([RowValues].self, forKey: .inserts) ?? []
        updates = try c.decodeIfPresent([RowValues].self, forKey: .updates) ?? []
        deletes = try c.decodeIfPresent([RowReference].self, forKey: .deletes) ?? []
        links = try c.decodeIfPresent([LinkChange].self, forKey: .links) ?? []
        batchDeletes = try c.decodeIfPresent([FetchRequest].self, forKey: .batchDeletes) ?? []
        author = try c.decodeIfPresent(String.self, forKey: .author)
        bundleIdentifier = try c.decodeIfPresent(String.self, forKey: .bundleIdentifier)
        processIdentifier = try c.decodeIfPresent(String.self, forKey: .processIdentifier)
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(inserts, forKey: .inserts)
        try c.encode(updates, forKey: .updates)
        try c.encode(deletes, forKey: .deletes)
        try c.encode(links, forKey: .links)
        try c.encode(batchDeletes, forKey: .batchDeletes)
        try c.encode(shares, forKey: .shares)
        try c.encodeIfPresent(author, forKey: .author)
        try c.encodeIfPresent(bundleIdentifier, forKey: .bundleIdentifier)
        try c.encodeIfPresent(processIdentifier, forKey: .processIdentifier)
        if mergePolicy != .error { try c.encode(mergePolicy, forKey: .mergePolicy) }
        if !mergeRules.isEmpty { try c.encode(mergeRules, forKey: .mergeRules) }
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
@_spi(PGModelInternals) public struct LinkChange: Codable, Hashable, Sendable {
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
@_spi(PGModelInternals) public struct RowReference: Codable, Hashable, Sendable {
    public var entity: String
    public var id: UUID
    /// For a delete: the values the deleting context had read, by property name. A row whose stored
    /// values differ was changed by someone else since; the save's ``SaveRequest/mergePolicy`` decides.
    public var ancestor: [String: PGValue]?
    public init(entity: String, id: UUID, ancestor: [String: PGValue]? = nil) {
        self.entity = entity
        self.id = id
        self.ancestor = ancestor
    }
}

/// A row's identity and values by Swift property name: attributes, and to-one relationships stored as a
/// foreign key (`"album": .uuid(…)` or `.null`).
///
/// A row built with ``init(entity:id:keys:values:via:)`` keeps its values in an array, their names in a
/// ``RowKeys`` shared by every row of its class: a save of many new models then holds one array per
/// row, not a dictionary of hashed keys. ``values`` reads either kind as a dictionary; the hot paths
/// read single values with ``subscript(_:)`` and every value with ``forEachValue(_:)``.
///
/// ```swift
/// let keys = RowKeys(["name", "note"])
/// let row = RowValues(entity: "Trip", id: id, keys: keys, values: [.string("Paris"), .null])
/// row["name"]   // .string("Paris")
/// ```
@_spi(PGModelInternals) public struct RowValues: Codable, Hashable, Sendable {
    /// The concrete class.
    public var entity: String
    public var id: UUID
    /// The names of ``positional``, or nil when the values are in ``named``.
    private var keys: RowKeys?
    private var positional: [PGValue]
    private var named: [String: PGValue]
    /// For rows fetched with ``FetchRequest/related``: the source row this one was reached from.
    public var via: UUID?
    /// For an update: the values the saving context had read of the attributes it sets (those it knows),
    /// by property name. A stored value that differs means someone else changed that attribute since:
    /// the save's ``SaveRequest/mergePolicy`` (or the attribute's ``MergeRule``) decides.
    public var ancestor: [String: PGValue]?

    public init(entity: String, id: UUID, values: [String: PGValue], via: UUID? = nil) {
        self.entity = entity
        self.id = id
        self.keys = nil
        self.positional = []
        self.named = values
        self.via = via
    }

    /// A row whose `values[i]` is named `keys.names[i]`. With a different count of values and names,
    /// the values are kept by name, each with its name (extra values or names are dropped).
    public init(entity: String, id: UUID, keys: RowKeys, values: [PGValue], via: UUID? = nil) {
        self.entity = entity
        self.id = id
        self.via = via
        if keys.names.count == values.count {
            self.keys = keys
            self.positional = values
            self.named = [:]
        } else {
            self.keys = nil
            self.positional = []
            self.named = Dictionary(zip(keys.names, values), uniquingKeysWith: { first, _ in first })
        }
    }

    /// Every value by name. For a positional row this builds a dictionary: read single values with
    /// ``subscript(_:)`` where it matters.
    public var values: [String: PGValue] {
        get {
            guard let keys else { return named }
            var all = [String: PGValue](minimumCapacity: positional.count)
            for (name, value) in zip(keys.names, positional) where all[name] == nil { all[name] = value }
            return all
        }
        set {
            keys = nil
            positional = []
            named = newValue
        }
        // `row.values[key] = value` changes the dictionary in place, as it did when it was stored.
        _modify {
            if keys != nil {
                named = values
                keys = nil
                positional = []
            }
            yield &named
        }
    }

    /// The value named `key`, if the row has one.
    public subscript(key: String) -> PGValue? {
        guard let keys else { return named[key] }
        guard let i = keys.positions[key] else { return nil }
        return positional[i]
    }

    /// Whether the row has no values.
    public var isEmpty: Bool { keys == nil ? named.isEmpty : positional.isEmpty }

    /// Calls `body` with every name and value, in no particular order.
    public func forEachValue(_ body: (String, PGValue) throws -> Void) rethrows {
        if let keys {
            for (i, value) in positional.enumerated() where keys.positions[keys.names[i]] == i { try body(keys.names[i], value) }
        } else {
            for (name, value) in named { try body(name, value) }
        }
    }

    /// The names and values of a positional row (as built), or nil for a row kept by name: what a
    /// context keeps as the saved model's snapshot without copying the values.
    public var positionalValues: (keys: RowKeys, values: [PGValue])? {
        keys.map { ($0, positional) }
    }

    /// About how many bytes this row takes in memory beyond its own stride: its values' storage and heap
    /// payloads, and its ``RowKeys`` when `seen` does not hold them yet (they are then added to it, so rows
    /// sharing keys count them once).
    package func approximateHeapBytes(countingKeys seen: inout Set<ObjectIdentifier>) -> Int {
        var total = entity.approximateHeapBytes
        if let keys {
            total += MemoryMeasure.arrayHeader + positional.count * MemoryLayout<PGValue>.stride
            for value in positional { total += value.approximateHeapBytes }
            if seen.insert(ObjectIdentifier(keys)).inserted { total += keys.approximateHeapBytes }
        } else {
            total += MemoryMeasure.dictionary(count: named.count, entryBytes: MemoryLayout<String>.stride + MemoryLayout<PGValue>.stride)
            for (name, value) in named { total += name.approximateHeapBytes + value.approximateHeapBytes }
        }
        return total
    }

    private enum CodingKeys: String, CodingKey { case entity, id, values, via, ancestor }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        self.init(entity: try c.decode(String.self, forKey: .entity), id: try c.decode(UUID.self, forKey: .id),
                  values: try c.decode([String: PGValue].self, forKey: .values), via: try c.decodeIfPresent(UUID.self, forKey: .via))
        ancestor = try c.decodeIfPresent([String: PGValue].self, forKey: .ancestor)
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(entity, forKey: .entity)
        try c.encode(id, forKey: .id)
        try c.encode(values, forKey: .values)
        try c.encodeIfPresent(via, forKey: .via)
        try c.encodeIfPresent(ancestor, forKey: .ancestor)
    }

    public static func == (lhs: RowValues, rhs: RowValues) -> Bool {
        guard lhs.entity == rhs.entity, lhs.id == rhs.id, lhs.via == rhs.via, lhs.ancestor == rhs.ancestor else { return false }
        if let l = lhs.keys, let r = rhs.keys, l === r { return lhs.positional == rhs.positional }
        return lhs.values == rhs.values
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(entity)
        hasher.combine(id)
        hasher.combine(via)
        hasher.combine(values)
    }
}

/// The value names of positional ``RowValues``, shared by every row of one class: the names once, and
/// their positions for lookups by name.
///
/// ```swift
/// let keys = RowKeys(["name", "note"])
/// keys.positions["note"]   // 1
/// ```
@_spi(PGModelInternals) public final class RowKeys: @unchecked Sendable {
    // @unchecked: immutable after init.
    /// The names, in the order of a row's values.
    public let names: [String]
    /// Each name's position in ``names`` (the first, should a name repeat).
    public let positions: [String: Int]

    public init(_ names: [String]) {
        self.names = names
        var positions: [String: Int] = [:]
        positions.reserveCapacity(names.count)
        for (i, name) in names.enumerated() where positions[name] == nil { positions[name] = i }
        self.positions = positions
    }
}

/// What a save reports back.
@_spi(PGModelInternals) public struct SaveResult: Codable, Hashable, Sendable {
    /// Inserted ids that became an existing row's id because a uniqueness constraint matched (upsert).
    public var remappedIdentifiers: [UUID: UUID]
    /// Every row the save deleted: the requested deletes, batch deletes and cascades.
    public var deleted: [RowReference]
    /// Updated rows whose stored values are not (all) those the request sent: a merge kept the store's
    /// value, summed a counter or joined a set. Each holds the values now stored for the attributes the
    /// update set, so the saving context shows them.
    public var merged: [RowValues]
    /// Updates and deletes the save dropped under its merge policy: updates of rows someone else deleted,
    /// and (``MergePolicy/mergeByPropertyStoreTrump``) deletes of rows someone else changed.
    public var dropped: [RowReference]
    /// Every row the save updated, whole, as the save leaves it: each stored attribute and to-one
    /// foreign key, including what others changed that this save did not touch (and ``merged``'s
    /// values). One shape per class. The saving context takes them as its models' values and as what it
    /// read, so its next save compares with them. Empty from a store that does not return them.
    public var stored: FetchedTable
    /// Where the save's commit ends in PostgreSQL's write-ahead log: a standby that has replayed this
    /// far shows the save. `nil` for a save that wrote nothing, and from a store that does not say.
    public var commitLSN: LogSequenceNumber?

    public init(remappedIdentifiers: [UUID: UUID] = [:], deleted: [RowReference] = [], merged: [RowValues] = [], dropped: [RowReference] = [],
                stored: FetchedTable = FetchedTable()) {
        self.remappedIdentifiers = remappedIdentifiers
        self.deleted = deleted
        self.merged = merged
        self.dropped = dropped
        self.stored = stored
    }

    private enum CodingKeys: String, CodingKey { case remappedIdentifiers, deleted, merged, dropped, stored, commitLSN }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        remappedIdentifiers = try c.decodeIfPresent([UUID: UUID].self, forKey: .remappedIdentifiers) ?? [:]
        deleted = try c.decodeIfPresent([RowReference].self, forKey: .deleted) ?? []
        merged = try c.decodeIfPresent([RowValues].self, forKey: .merged) ?? []
        dropped = try c.decodeIfPresent([RowReference].self, forKey: .dropped) ?? []
        stored = FetchedTable(rows: try c.decodeIfPresent([RowValues].self, forKey: .stored) ?? [])
        commitLSN = try c.decodeIfPresent(LogSequenceNumber.self, forKey: .commitLSN)
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(remappedIdentifiers, forKey: .remappedIdentifiers)
        try c.encode(deleted, forKey: .deleted)
        if !merged.isEmpty { try c.encode(merged, forKey: .merged) }
        if !dropped.isEmpty { try c.encode(dropped, forKey: .dropped) }
        if !stored.rows.isEmpty { try c.encode(stored.rowValues, forKey: .stored) }
        try c.encodeIfPresent(commitLSN, forKey: .commitLSN)
    }
}

/// A fetched row: identity, concrete entity and attribute values by Swift property name.
@_spi(PGModelInternals) public typealias FetchedRow = RowValues
