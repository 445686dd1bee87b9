import Foundation

/// One committed save as recorded in `pgmodel.transactions`: the history transaction behind
/// `DefaultHistoryTransaction`.
///
/// ```swift
/// let page = try await store.fetchHistory(HistoryRequest(filter: .token(.greater, saved)))
/// for record in page.transactions { print(record.token, record.author ?? "-", record.changes.count) }
/// ```
@_spi(PGModelInternals) public struct HistoryRecord: Codable, Hashable, Sendable {
    /// The position of this transaction in its store's history, assigned in commit order (tokens of
    /// older PGModel builds, `xid8` values, are the positions of the transactions they wrote). Tokens
    /// order transactions and are safe as cursors (see ``HistoryRequest``).
    public var token: UInt64
    /// `pgmodel.transactions.id`, unique per history transaction.
    public var transactionIdentifier: Int64
    /// `ModelContext.author` of the saving context.
    public var author: String?
    /// The service user who saved, when the save came through the service.
    public var userName: String?
    /// The saving program, as the save recorded it (see ``SaveRequest/bundleIdentifier``); nil when the
    /// save named none. A reader other than the saving service user sees it qualified (see ``ProcessIdentity``).
    public var bundleIdentifier: String?
    /// The saving process's id as text, as the save recorded it; qualified as ``bundleIdentifier`` is.
    public var processIdentifier: String?
    /// When the save committed (the transaction's start time, as PostgreSQL's `now()`).
    public var timestamp: Date
    /// What the save changed, in the order it changed it.
    public var changes: [HistoryChangeRecord]
    /// The PostgreSQL schema of the model tables this transaction wrote.
    public var storeIdentifier: String

    public init(token: UInt64, transactionIdentifier: Int64, author: String? = nil, userName: String? = nil,
                timestamp: Date, changes: [HistoryChangeRecord] = [], storeIdentifier: String = "public",
                bundleIdentifier: String? = nil, processIdentifier: String? = nil) {
        self.token = token
        self.transactionIdentifier = transactionIdentifier
        self.author = author
        self.userName = userName
        self.timestamp = timestamp
        self.changes = changes
        self.storeIdentifier = storeIdentifier
        self.bundleIdentifier = bundleIdentifier
        self.processIdentifier = processIdentifier
    }
}

/// One inserted, updated or deleted row of a ``HistoryRecord`` (`pgmodel.change_rows`).
///
/// ```swift
/// HistoryChangeRecord(changeIdentifier: 7, kind: .update, entity: "Trip", id: tripID, updatedAttributes: ["name"])
/// ```
@_spi(PGModelInternals) public struct HistoryChangeRecord: Codable, Hashable, Sendable {
    public enum Kind: String, Codable, Hashable, Sendable, CaseIterable {
        case insert, update, delete
    }

    /// `pgmodel.change_rows.id`, unique per change (a run of inserts' k-th insert has its row's `id` + k − 1).
    public var changeIdentifier: Int64
    public var kind: Kind
    /// The concrete class of the changed row.
    public var entity: String
    /// The changed row's id.
    public var id: UUID
    /// For updates: the Swift names of the attributes and to-one relationships the save changed.
    public var updatedAttributes: [String]
    /// For updates: the new values of ``updatedAttributes`` (beyond SwiftData, which records names only).
    public var values: [String: PGValue]
    /// For deletes: the `.preserveValueOnDeletion` attributes as they were when the row was deleted.
    public var tombstone: [String: PGValue]

    public init(changeIdentifier: Int64, kind: Kind, entity: String, id: UUID, updatedAttributes: [String] = [],
                values: [String: PGValue] = [:], tombstone: [String: PGValue] = [:]) {
        self.changeIdentifier = changeIdentifier
        self.kind = kind
        self.entity = entity
        self.id = id
        self.updatedAttributes = updatedAttributes
        self.values = values
        self.tombstone = tombstone
    }

    private enum CodingKeys: String, CodingKey { case changeIdentifier, kind, entity, id, updatedAttributes, values, tombstone }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        changeIdentifier = try c.decode(Int64.self, forKey: .changeIdentifier)
        kind = try c.decode(Kind.self, forKey: .kind)
        entity = try c.decode(String.self, forKey: .entity)
        id = try c.decode(UUID.self, forKey: .id)
        updatedAttributes = try c.decodeIfPresent([String].self, forKey: .updatedAttributes) ?? []
        values = try c.decodeIfPresent([String: PGValue].self, forKey: .values) ?? [:]
        tombstone = try c.decodeIfPresent([String: PGValue].self, forKey: .tombstone) ?? [:]
    }
}
