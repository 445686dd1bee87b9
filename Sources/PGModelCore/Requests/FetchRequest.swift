import Foundation

/// A fetch in IR form: which entity, which rows, in which order, how many.
///
/// ```swift
/// let request = FetchRequest(entity: "Trip",
///                            predicate: .compare(.equal, .key("destination"), .value(.string("Paris"))),
///                            sort: [SortKey("startDate")], limit: 10)
/// ```
@_spi(PGModelInternals) public struct FetchRequest: Codable, Hashable, Sendable {
    /// The entity (Swift class name).
    public var entity: String
    /// The filter; `nil` fetches every visible row.
    public var predicate: QueryExpression?
    /// Sort keys, most significant first. The row id always breaks ties so pages are stable.
    public var sort: [SortKey]
    /// `fetchLimit`.
    public var limit: Int?
    /// `fetchOffset`.
    public var offset: Int?
    /// Only rows with these ids (`model(for:)`, refetches); `nil` for no such restriction.
    public var identifiers: [UUID]?
    /// Only rows related to some source rows through one relationship (faulting and prefetching); each
    /// returned row's ``RowValues/via`` names the source row it was reached from. A row related to several
    /// sources comes once per source.
    public var related: RelatedScope?
    /// `propertiesToFetch`: only these attributes (by Swift name) are read; `nil` reads all. Foreign keys
    /// of to-one relationships are always read.
    public var properties: [String]?
    /// Keyset paging: only rows strictly after this position in the request's order (its sort keys, then
    /// the id), so the next batch of an enumeration starts where the last one ended however many rows
    /// precede it. `nil` for no such restriction.
    public var after: FetchCursor?
    /// Only the requesting user's own rows, or only other users' rows shared with them; `nil` for every
    /// visible row.
    public var ownership: RowOwnership?

    private enum CodingKeys: String, CodingKey {
        case entity, predicate = "where", sort, limit, offset, identifiers = "ids", related, properties, after, ownership
    }

    public init(entity: String, predicate: QueryExpression? = nil, sort: [SortKey] = [], limit: Int? = nil, offset: Int? = nil,
                identifiers: [UUID]? = nil, related: RelatedScope? = nil, properties: [String]? = nil, after: FetchCursor? = nil,
                ownership: RowOwnership? = nil) {
        self.entity = entity
        self.ownership = ownership
        self.after = after
        self.related = related
        self.properties = properties
        self.identifiers = identifiers
        self.predicate = predicate
        self.sort = sort
        self.limit = limit
        self.offset = offset
    }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        entity = try c.decode(String.self, forKey: .entity)
        predicate = try c.decodeIfPresent(QueryExpression.self, forKey: .predicate)
        sort = try c.decodeIfPresent([SortKey].self, forKey: .sort) ?? []
        limit = try c.decodeIfPresent(Int.self, forKey: .limit)
        offset = try c.decodeIfPresent(Int.self, forKey: .offset)
        identifiers = try c.decodeIfPresent([UUID].self, forKey: .identifiers)
        related = try c.decodeIfPresent(RelatedScope.self, forKey: .related)
        properties = try c.decodeIfPresent([String].self, forKey: .properties)
        after = try c.decodeIfPresent(FetchCursor.self, forKey: .after)
        ownership = try c.decodeIfPresent(RowOwnership.self, forKey: .ownership)
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(entity, forKey: .entity)
        try c.encodeIfPresent(predicate, forKey: .predicate)
        if !sort.isEmpty { try c.encode(sort, forKey: .sort) }
        try c.encodeIfPresent(limit, forKey: .limit)
        try c.encodeIfPresent(offset, forKey: .offset)
        try c.encodeIfPresent(identifiers, forKey: .identifiers)
        try c.encodeIfPresent(related, forKey: .related)
        try c.encodeIfPresent(properties, forKey: .properties)
        try c.encodeIfPresent(after, forKey: .after)
        try c.encodeIfPresent(ownership, forKey: .ownership)
    }
}

/// A position in a fetch's order: the values of its sort keys (one per ``FetchRequest/sort`` key, in
/// order, ``PGValue/null`` for a missing value) and the row id that breaks ties.
/// `{"values":["Paris",{"date":"2024-05-01T10:00:00.000Z"}],"id":"0193…"}`
///
/// ```swift
/// // the rows after the last one of a page sorted by name
/// FetchRequest(entity: "Trip", sort: [SortKey("name")], limit: 1000,
///              after: FetchCursor(values: [.string("Paris")], id: lastID))
/// ```
@_spi(PGModelInternals) public struct FetchCursor: Codable, Hashable, Sendable {
    /// The sort keys' values of the row the page starts after.
    public var values: [PGValue]
    /// That row's id.
    public var id: UUID

    public init(values: [PGValue], id: UUID) {
        self.values = values
        self.id = id
    }
}

/// "The models that these source rows reach through this relationship": the rows of a fault or a prefetch.
///
/// ```swift
/// // the tracks of two albums, in one query
/// FetchRequest(entity: "Track", related: RelatedScope(entity: "Album", relationship: "tracks", ids: [a, b]))
/// ```
@_spi(PGModelInternals) public struct RelatedScope: Codable, Hashable, Sendable {
    /// The source entity, which declares ``relationship``.
    public var entity: String
    /// The relationship of ``entity`` whose destination is the fetched entity.
    public var relationship: String
    /// The source rows.
    public var ids: [UUID]

    public init(entity: String, relationship: String, ids: [UUID]) {
        self.entity = entity
        self.relationship = relationship
        self.ids = ids
    }
}

/// One sort key: `{"key":"startDate"}` or `{"key":"startDate","order":"reverse"}`.
@_spi(PGModelInternals) public struct SortKey: Codable, Hashable, Sendable {
    /// The attribute's Swift property name.
    public var key: String
    /// `true` for `.forward` (ascending).
    public var ascending: Bool
    /// Set when the key reaches into a Codable (`jsonb`) attribute: `location.latitude` sorts by the
    /// `latitude` field of `location`, compared as this type.
    public var field: AttributeType?

    private enum CodingKeys: String, CodingKey { case key, order, field = "as" }

    public init(_ key: String, ascending: Bool = true, field: AttributeType? = nil) {
        self.key = key
        self.ascending = ascending
        self.field = field
    }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        key = try c.decode(String.self, forKey: .key)
        field = try c.decodeIfPresent(AttributeType.self, forKey: .field)
        let order = try c.decodeIfPresent(String.self, forKey: .order) ?? "forward"
        switch order {
        case "forward": ascending = true
        case "reverse": ascending = false
        default:
            throw DecodingError.dataCorruptedError(forKey: .order, in: c, debugDescription: "order is 'forward' or 'reverse'")
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(key, forKey: .key)
        if !ascending { try c.encode("reverse", forKey: .order) }
        try c.encodeIfPresent(field, forKey: .field)
    }
}
