import Foundation
@_spi(PGModelInternals) import PGModelCore

/// How much history one store keeps (`pgmodel.history_retention`): transactions saved longer ago than
/// ``maxAge`` go, and so do the oldest beyond the newest ``maxChanges`` changes. At least one is set.
///
/// ```swift
/// let retention = try HistoryRetention(store: "public", maxAge: HistoryAge(parsing: "30d"), maxChanges: nil)
/// try await engine.setHistoryRetention(retention, on: connection)
/// ```
@_spi(PGModelInternals) public struct HistoryRetention: Sendable, Hashable, Codable {
    /// The store (PostgreSQL schema) whose history this bounds.
    public var store: String
    /// The oldest history kept; nil is no age limit.
    public var maxAge: HistoryAge?
    /// The most changes kept (a run of inserts counts one per insert); nil is no count limit.
    public var maxChanges: Int64?
    /// When the setting was stored; nil for one not read from the database.
    public var updatedAt: Date?

    /// A setting with at least one limit; throws `invalidConfiguration` for none, or a negative count.
    ///
    /// ```swift
    /// let retention = try HistoryRetention(store: "public", maxAge: nil, maxChanges: 1_000_000)
    /// ```
    public init(store: String, maxAge: HistoryAge?, maxChanges: Int64?, updatedAt: Date? = nil) throws {
        guard maxAge != nil || maxChanges != nil else {
            throw PGModelError(.invalidConfiguration, "a history retention needs a longest age, a most changes, or both")
        }
        if let maxChanges, maxChanges < 0 {
            throw PGModelError(.invalidConfiguration, "the most history changes to keep cannot be negative")
        }
        self.store = store
        self.maxAge = maxAge
        self.maxChanges = maxChanges
        self.updatedAt = updatedAt
    }

    private enum CodingKeys: String, CodingKey {
        case store, maxAge = "max_age", maxAgeSeconds = "max_age_seconds", maxChanges = "max_changes", updatedAt = "updated_at"
    }

    /// Decodes the shape ``encode(to:)`` writes (the age as seconds).
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        store = try container.decode(String.self, forKey: .store)
        maxAge = try container.decodeIfPresent(Int64.self, forKey: .maxAgeSeconds).flatMap { HistoryAge(seconds: $0) }
        maxChanges = try container.decodeIfPresent(Int64.self, forKey: .maxChanges)
        updatedAt = try container.decodeIfPresent(Date.self, forKey: .updatedAt)
    }

    /// `{"store":…, "max_age":"30d", "max_age_seconds":2592000, "max_changes":null, "updated_at":…}`: nulls kept,
    /// so every object has every key.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(store, forKey: .store)
        try container.encode(maxAge?.description, forKey: .maxAge)
        try container.encode(maxAge?.seconds, forKey: .maxAgeSeconds)
        try container.encode(maxChanges, forKey: .maxChanges)
        try container.encode(updatedAt, forKey: .updatedAt)
    }
}

/// A history age limit: a whole number of seconds, written and read as `30d`, `12h`, `90m` or `45s`.
///
/// ```swift
/// let age = try HistoryAge(parsing: "12h")   // age.seconds == 43_200
/// print(HistoryAge(seconds: 5_400)!)         // 90m
/// ```
@_spi(PGModelInternals) public struct HistoryAge: Sendable, Hashable, CustomStringConvertible {
    /// The age in seconds, more than zero.
    public let seconds: Int64

    /// The longest age accepted: a hundred years, far beyond any retention and far within PostgreSQL's interval.
    public static let maximumSeconds: Int64 = 100 * 366 * 86_400

    private static let units: [(suffix: Character, seconds: Int64)] = [("d", 86_400), ("h", 3_600), ("m", 60), ("s", 1)]

    /// An age of `seconds`; nil unless it is between one second and ``maximumSeconds``.
    public init?(seconds: Int64) {
        guard seconds > 0, seconds <= Self.maximumSeconds else { return nil }
        self.seconds = seconds
    }

    /// Reads `<count><unit>`: a positive whole number and one of `d` (days), `h` (hours), `m` (minutes)
    /// or `s` (seconds), such as `30d`. Throws `invalidConfiguration` for anything else.
    public init(parsing text: String) throws {
        let trimmed = text.trimmingCharacters(in: .whitespaces).lowercased()
        guard let suffix = trimmed.last, let unit = Self.units.first(where: { $0.suffix == suffix }),
              case let digits = trimmed.dropLast(), !digits.isEmpty, digits.allSatisfy({ $0.isASCII && $0.isNumber }),
              let count = Int64(digits), count > 0
        else {
            throw PGModelError(.invalidConfiguration, "'\(text)' is not an age: give a positive whole number and d, h, m or s, such as 30d, 12h or 90m")
        }
        let (product, overflow) = count.multipliedReportingOverflow(by: unit.seconds)
        guard !overflow, let age = HistoryAge(seconds: product) else {
            throw PGModelError(.invalidConfiguration, "'\(text)' is longer than the longest history age accepted (36600d)")
        }
        self = age
    }

    /// The largest unit that divides the age evenly: `30d`, `36h`, `90m`, `45s`.
    public var description: String {
        for unit in Self.units where seconds % unit.seconds == 0 {
            return "\(seconds / unit.seconds)\(unit.suffix)"
        }
        return "\(seconds)s"
    }
}

/// What one prune of a store's history removed.
///
/// ```swift
/// let report = try await engine.pruneHistory(store: "public", on: connection)
/// print(report.transactions, report.changes, report.deletedThrough ?? 0)
/// ```
@_spi(PGModelInternals) public struct HistoryPruneReport: Sendable, Hashable, Codable {
    /// The store pruned.
    public var store: String
    /// The limits the prune applied (given, or the store's setting).
    public var maxAge: HistoryAge?
    /// The change limit the prune applied.
    public var maxChanges: Int64?
    /// History transactions removed.
    public var transactions: Int64 = 0
    /// Changes removed, a run of inserts counting one per insert.
    public var changes: Int64 = 0
    /// The newest history token removed: readers resuming from an older one get `history_token_expired`.
    public var deletedThrough: UInt64?
    /// How many batches (SQL transactions) it took.
    public var batches = 0
    /// True when another session (another service instance) was pruning the store, so this one stopped.
    public var busy = false
    /// Wall-clock seconds the prune took.
    public var seconds: Double = 0

    /// An empty report for `store` under the given limits, counted up batch by batch.
    public init(store: String, maxAge: HistoryAge?, maxChanges: Int64?) {
        self.store = store
        self.maxAge = maxAge
        self.maxChanges = maxChanges
    }

    /// Adds what one batch removed; returns whether the pass should go on (the batch removed something).
    ///
    /// ```swift
    /// while report.add(try await engine.pruneBatch(bounds, on: connection)) {}
    /// ```
    public mutating func add(_ batch: HistoryPruneBatch) -> Bool {
        if batch.busy {
            busy = true
            return false
        }
        guard batch.transactions > 0 else { return false }
        transactions += batch.transactions
        changes += batch.changes
        batches += 1
        if let through = batch.deletedThrough { deletedThrough = max(deletedThrough ?? 0, through) }
        return true
    }

    private enum CodingKeys: String, CodingKey {
        case store, maxAge = "max_age", maxChanges = "max_changes", transactions, changes
        case deletedThrough = "deleted_through_token", batches, busy, seconds
    }

    /// Decodes the shape ``encode(to:)`` writes.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        store = try container.decode(String.self, forKey: .store)
        maxAge = try container.decodeIfPresent(String.self, forKey: .maxAge).flatMap { try? HistoryAge(parsing: $0) }
        maxChanges = try container.decodeIfPresent(Int64.self, forKey: .maxChanges)
        transactions = try container.decode(Int64.self, forKey: .transactions)
        changes = try container.decode(Int64.self, forKey: .changes)
        deletedThrough = try container.decodeIfPresent(String.self, forKey: .deletedThrough).flatMap { UInt64($0) }
        batches = try container.decode(Int.self, forKey: .batches)
        busy = try container.decode(Bool.self, forKey: .busy)
        seconds = try container.decode(Double.self, forKey: .seconds)
    }

    /// The token as a string, as the line protocol sends tokens; nulls kept.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(store, forKey: .store)
        try container.encode(maxAge?.description, forKey: .maxAge)
        try container.encode(maxChanges, forKey: .maxChanges)
        try container.encode(transactions, forKey: .transactions)
        try container.encode(changes, forKey: .changes)
        try container.encode(deletedThrough.map(String.init), forKey: .deletedThrough)
        try container.encode(batches, forKey: .batches)
        try container.encode(busy, forKey: .busy)
        try container.encode(seconds, forKey: .seconds)
    }
}

/// What one prune batch (`pgmodel.prune_history`) removed.
///
/// ```swift
/// let batch = try await engine.pruneBatch(bounds, on: connection)
/// if batch.transactions == 0 { print("done") }
/// ```
@_spi(PGModelInternals) public struct HistoryPruneBatch: Sendable, Hashable {
    /// History transactions removed.
    public var transactions: Int64
    /// Changes removed, one per insert of a run.
    public var changes: Int64
    /// The newest position removed.
    public var deletedThrough: UInt64?
    /// True when another session was pruning the store: nothing was removed.
    public var busy: Bool

    /// A batch's outcome: `HistoryPruneBatch()` is one that removed nothing.
    public init(transactions: Int64 = 0, changes: Int64 = 0, deletedThrough: UInt64? = nil, busy: Bool = false) {
        self.transactions = transactions
        self.changes = changes
        self.deletedThrough = deletedThrough
        self.busy = busy
    }
}
