import Foundation
@_spi(PGModelInternals) import PGModelCore

/// One page of history read once for many readers, with who of them may see which part: what a
/// service instance hands its subscribers, each the page its own history read would have returned.
///
/// `transactions` are every transaction of the page as the database owner reads them (bundle and
/// process as saved, audience events included); `transactionReaders` and `changeReaders` list, per
/// transaction and change identifier, the positions in `readers` that row-level security would show it
/// to (``PostgresStoreEngine/fetchSharedHistory(after:limit:for:on:)`` computes them in one query).
/// ``page(for:)`` cuts one reader's page out of it.
///
/// ```swift
/// let shared = try await gateway.fetchSharedHistory(after: 4711, limit: 500, for: [.user(alice), .user(bob)])
/// let alices = shared.page(for: 0)      // exactly what alice's own read after 4711 returns
/// let next = shared.readThrough          // the position every reader has now been checked through
/// ```
@_spi(PGModelInternals) public struct SharedHistoryPage: Sendable, Hashable {
    /// The readers, in the order the reader positions refer to.
    public var readers: [Requester]
    /// The page's transactions, oldest first, with every change, as saved.
    public var transactions: [HistoryRecord]
    /// Per transaction identifier, the reader positions that may see it.
    public var transactionReaders: [Int64: Set<Int>]
    /// Per change identifier, the reader positions that may see it.
    public var changeReaders: [Int64: Set<Int>]
    /// Change identifiers of audience events (a share or revocation, shown to its audience only).
    public var audienceOnlyChanges: Set<Int64>
    /// The newest position the page covers: its last token when full, else the horizon it was read up
    /// to (nothing newer than `after` and not past it exists that the page lacks).
    public var readThrough: UInt64
    /// Whether the page ended at its limit, so newer history may wait past ``readThrough``.
    public var isFull: Bool
    /// Set when history was deleted past the position read from: the position deletion reached, and no
    /// transactions.
    public var expiredThrough: UInt64?

    public init(readers: [Requester], transactions: [HistoryRecord] = [], transactionReaders: [Int64: Set<Int>] = [:],
                changeReaders: [Int64: Set<Int>] = [:], audienceOnlyChanges: Set<Int64> = [], readThrough: UInt64,
                isFull: Bool = false, expiredThrough: UInt64? = nil) {
        self.readers = readers
        self.transactions = transactions
        self.transactionReaders = transactionReaders
        self.changeReaders = changeReaders
        self.audienceOnlyChanges = audienceOnlyChanges
        self.readThrough = readThrough
        self.isFull = isFull
        self.expiredThrough = expiredThrough
    }

    /// The page reader `index` may see, as their own history read shows it: only transactions and
    /// changes visible to them, another user's bundle and process prefixed with that user's name
    /// (``ProcessIdentity/shown(_:savedBy:readBy:)``). The direct store (``Requester/trusted``) sees every
    /// change but audience events, as its own read does. Empty for an index out of range.
    public func page(for index: Int) -> HistoryPage {
        guard readers.indices.contains(index) else { return HistoryPage(transactions: []) }
        let reader = readers[index]
        let everything = reader == .trusted
        var visible: [HistoryRecord] = []
        for transaction in transactions {
            guard everything || transactionReaders[transaction.transactionIdentifier]?.contains(index) == true else { continue }
            var record = transaction
            record.changes = transaction.changes.filter { change in
                everything ? !audienceOnlyChanges.contains(change.changeIdentifier)
                    : changeReaders[change.changeIdentifier]?.contains(index) == true
            }
            record.bundleIdentifier = ProcessIdentity.shown(transaction.bundleIdentifier, savedBy: transaction.userName, readBy: reader.userName)
            record.processIdentifier = ProcessIdentity.shown(transaction.processIdentifier, savedBy: transaction.userName, readBy: reader.userName)
            visible.append(record)
        }
        return HistoryPage(transactions: visible)
    }

    /// Reads the `readers` column of ``HistorySQL/audienceVisibility(users:adminRoles:transactionIDs:)``
    /// (1-based positions, comma-separated) as 0-based positions below `count`; anything else is dropped.
    ///
    /// ```swift
    /// SharedHistoryPage.readerPositions("1,3", count: 3)   // [0, 2]
    /// ```
    public static func readerPositions(_ text: String, count: Int) -> Set<Int> {
        var positions = Set<Int>()
        for part in text.split(separator: ",") {
            guard let position = Int(part), position >= 1, position <= count else { continue }
            positions.insert(position - 1)
        }
        return positions
    }
}
