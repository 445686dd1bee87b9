import Foundation

/// A history fetch or delete: `HistoryDescriptor` translated for the store.
///
/// A save gets its history position (its token) as its last step, under its store's commit lock, so
/// positions become visible in commit order and a reader always sees a gap-free prefix: a transaction
/// that commits late can never land behind a token a reader has already passed, and no other
/// transaction holds history back. Tokens are safe as cursors.
///
/// ```swift
/// var request = HistoryRequest(filter: .and([.token(.greater, saved), .entities(["Trip"])]))
/// request.newestFirst = true
/// request.limit = 1
/// ```
@_spi(PGModelInternals) public struct HistoryRequest: Codable, Hashable, Sendable {
    /// Which transactions; ``HistoryFilter/all`` for every one.
    public var filter: HistoryFilter
    /// Newest (highest token) first instead of oldest first.
    public var newestFirst: Bool
    /// At most this many transactions.
    public var limit: Int?
    /// Only changes of these entities (by concrete class name) are returned inside each transaction;
    /// `nil` for all. Transactions left with no change are still returned.
    public var changedEntities: [String]?
    /// Keys ordered before the token, most significant first; empty for token order alone. The token
    /// (in ``newestFirst``'s direction) always comes last, so the order is total and pages are stable.
    public var sort: [HistorySortKey]

    public init(filter: HistoryFilter = .all, newestFirst: Bool = false, limit: Int? = nil, changedEntities: [String]? = nil,
                sort: [HistorySortKey] = []) {
        self.filter = filter
        self.newestFirst = newestFirst
        self.limit = limit
        self.changedEntities = changedEntities
        self.sort = sort
    }

    /// The token this request resumes after (`token > t` or `token >= t`, alone or in a top-level `and`):
    /// history deleted beyond it makes the request's answer incomplete.
    public var resumeToken: UInt64? {
        func bound(_ filter: HistoryFilter) -> UInt64? {
            switch filter {
            case .token(.greater, let t), .token(.greaterOrEqual, let t): return t
            case .and(let parts): return parts.compactMap(bound).max()
            default: return nil
            }
        }
        return bound(filter)
    }

    private enum CodingKeys: String, CodingKey { case filter = "where", newestFirst, limit, changedEntities, sort }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        filter = try c.decodeIfPresent(HistoryFilter.self, forKey: .filter) ?? .all
        newestFirst = try c.decodeIfPresent(Bool.self, forKey: .newestFirst) ?? false
        limit = try c.decodeIfPresent(Int.self, forKey: .limit)
        changedEntities = try c.decodeIfPresent([String].self, forKey: .changedEntities)
        sort = try c.decodeIfPresent([HistorySortKey].self, forKey: .sort) ?? []
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(filter, forKey: .filter)
        try c.encode(newestFirst, forKey: .newestFirst)
        try c.encodeIfPresent(limit, forKey: .limit)
        try c.encodeIfPresent(changedEntities, forKey: .changedEntities)
        // Absent in token order: a request without keys reads the same to a server that predates them.
        if !sort.isEmpty { try c.encode(sort, forKey: .sort) }
    }

    /// The condition selecting what comes strictly after `record` in this request's order: how a reader
    /// pages through a sorted history (keyset paging, as `fetch`'s `after`).
    ///
    /// ```swift
    /// var next = request
    /// next.filter = .and([request.filter, request.condition(after: page.transactions[page.transactions.count - 1])])
    /// ```
    public func condition(after record: HistoryRecord) -> HistoryFilter {
        func all(_ parts: [HistoryFilter]) -> HistoryFilter { parts.count == 1 ? parts[0] : .and(parts) }
        var alternatives: [HistoryFilter] = []
        var equalSoFar: [HistoryFilter] = []
        for key in sort {
            switch key.key {
            case .author:
                let after = Self.authorAfter(record.author, ascending: key.ascending)
                if after != .none { alternatives.append(all(equalSoFar + [after])) }
                equalSoFar.append(.author(.equal, record.author))
            }
        }
        alternatives.append(all(equalSoFar + [.token(newestFirst ? .less : .greater, record.token)]))
        return alternatives.count == 1 ? alternatives[0] : .or(alternatives)
    }

    /// Authors after `author` in Swift's order of optionals: `nil` first when ascending, last when not.
    private static func authorAfter(_ author: String?, ascending: Bool) -> HistoryFilter {
        switch (author, ascending) {
        case (nil, true): return .author(.notEqual, nil)
        case (nil, false): return .none
        case (let value?, true): return .author(.greater, value)
        case (let value?, false): return .or([.author(.less, value), .author(.equal, nil)])
        }
    }
}

/// One key a history request sorts by before the token: `{"key":"author"}` or
/// `{"key":"author","order":"reverse"}`. The token, transaction identifier and timestamp all follow
/// commit order, so they are the request's token order, not keys.
///
/// ```swift
/// HistoryRequest(newestFirst: true, sort: [HistorySortKey(.author)])   // by author, newest first within one
/// ```
@_spi(PGModelInternals) public struct HistorySortKey: Codable, Hashable, Sendable {
    /// What can be sorted by besides commit order.
    public enum Key: String, Codable, Hashable, Sendable, CaseIterable {
        /// `ModelContext.author`; no author sorts before every author, as Swift orders `nil`.
        case author
    }

    public var key: Key
    /// `true` for `.forward`.
    public var ascending: Bool

    private enum CodingKeys: String, CodingKey { case key, order }

    public init(_ key: Key, ascending: Bool = true) {
        self.key = key
        self.ascending = ascending
    }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        key = try c.decode(Key.self, forKey: .key)
        switch try c.decodeIfPresent(String.self, forKey: .order) ?? "forward" {
        case "forward": ascending = true
        case "reverse": ascending = false
        default: throw DecodingError.dataCorruptedError(forKey: .order, in: c, debugDescription: "order is 'forward' or 'reverse'")
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(key, forKey: .key)
        if !ascending { try c.encode("reverse", forKey: .order) }
    }
}

/// What a history fetch returns.
@_spi(PGModelInternals) public struct HistoryPage: Codable, Hashable, Sendable {
    /// Matching transactions, in the request's order.
    public var transactions: [HistoryRecord]

    public init(transactions: [HistoryRecord]) {
        self.transactions = transactions
    }
}

/// The conditions a history predicate can express, translated from `#Predicate<DefaultHistoryTransaction>`.
///
/// ```swift
/// // #Predicate<DefaultHistoryTransaction> { $0.token > saved && $0.author == "App" }
/// HistoryFilter.and([.token(.greater, saved.value), .author(.equal, "App")])
/// ```
@_spi(PGModelInternals) public indirect enum HistoryFilter: Codable, Hashable, Sendable {
    /// Every transaction.
    case all
    /// No transaction.
    case none
    /// `token <op> value` (tokens are history positions).
    case token(ComparisonOperator, UInt64)
    /// `transactionIdentifier <op> value`.
    case transactionIdentifier(ComparisonOperator, Int64)
    /// `author == value` / `!=` (`nil` is a context without an author).
    case author(ComparisonOperator, String?)
    /// `authors.contains($0.author)`.
    case authorIn([String])
    /// `timestamp <op> value`.
    case timestamp(ComparisonOperator, Date)
    /// The transaction has at least one change of one of these entities (concrete class names).
    case entities([String])
    case and([HistoryFilter])
    case or([HistoryFilter])
    case not(HistoryFilter)

    private enum CodingKeys: String, CodingKey {
        case all, none, token, transactionIdentifier = "transaction", author, authorIn, timestamp, entities, and, or, not
    }

    private struct Comparison<Value: Codable>: Codable {
        var op: ComparisonOperator
        var value: Value
    }

    public init(from decoder: any Decoder) throws {
        guard decoder.codingPath.count <= QueryExpression.maximumDecodingDepth else {
            throw DecodingError.dataCorrupted(.init(codingPath: decoder.codingPath,
                debugDescription: "a history filter may nest at most \(QueryExpression.maximumDecodingDepth) levels deep"))
        }
        let c = try decoder.container(keyedBy: CodingKeys.self)
        guard let key = c.allKeys.first, c.allKeys.count == 1 else {
            throw DecodingError.dataCorrupted(.init(codingPath: c.codingPath, debugDescription: "a history filter has exactly one key"))
        }
        switch key {
        case .all: self = .all
        case .none: self = .none
        case .token: let v = try c.decode(Comparison<UInt64>.self, forKey: key); self = .token(v.op, v.value)
        case .transactionIdentifier: let v = try c.decode(Comparison<Int64>.self, forKey: key); self = .transactionIdentifier(v.op, v.value)
        case .author: let v = try c.decode(Comparison<String?>.self, forKey: key); self = .author(v.op, v.value)
        case .authorIn: self = .authorIn(try c.decode([String].self, forKey: key))
        case .timestamp: let v = try c.decode(Comparison<Date>.self, forKey: key); self = .timestamp(v.op, v.value)
        case .entities: self = .entities(try c.decode([String].self, forKey: key))
        case .and: self = .and(try c.decode([HistoryFilter].self, forKey: key))
        case .or: self = .or(try c.decode([HistoryFilter].self, forKey: key))
        case .not: self = .not(try c.decode(HistoryFilter.self, forKey: key))
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        switch self {
        case .all: try c.encode(true, forKey: .all)
        case .none: try c.encode(true, forKey: .none)
        case .token(let op, let v): try c.encode(Comparison(op: op, value: v), forKey: .token)
        case .transactionIdentifier(let op, let v): try c.encode(Comparison(op: op, value: v), forKey: .transactionIdentifier)
        case .author(let op, let v): try c.encode(Comparison(op: op, value: v), forKey: .author)
        case .authorIn(let v): try c.encode(v, forKey: .authorIn)
        case .timestamp(let op, let v): try c.encode(Comparison(op: op, value: v), forKey: .timestamp)
        case .entities(let v): try c.encode(v, forKey: .entities)
        case .and(let v): try c.encode(v, forKey: .and)
        case .or(let v): try c.encode(v, forKey: .or)
        case .not(let v): try c.encode(v, forKey: .not)
        }
    }
}
