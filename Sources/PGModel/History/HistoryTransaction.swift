import Foundation
@_spi(PGModelInternals) import PGModelCore

/// A committed save as persistent history records it: SwiftData's protocol, with exactly its
/// requirements, so an app's own type can conform as it can to SwiftData's.
///
/// PGModel's stores record ``DefaultHistoryTransaction``s and build them themselves; `fetchHistory`
/// and `deleteHistory` with a `HistoryDescriptor` of any other conforming type throw
/// `unsupported_history_query` (SwiftData's default store answers only its own type too).
///
/// ```swift
/// for transaction in try context.fetchHistory(HistoryDescriptor<DefaultHistoryTransaction>()) {
///     print(transaction.author ?? "-", transaction.changes.count)
/// }
/// ```
public protocol HistoryTransaction: Hashable, Identifiable, Sendable {
    /// The type of ``token``: a position in history that orders transactions.
    associatedtype TokenType: Comparable, Hashable, Identifiable, Sendable
    /// The type of ``transactionIdentifier``.
    associatedtype TransactionIdentifier: Comparable, Hashable, Sendable
    /// `ModelContext.author` of the context that saved, if it had one.
    var author: String? { get }
    /// What the save inserted, updated and deleted, in the order it did.
    var changes: [HistoryChange] { get }
    /// The store the transaction belongs to.
    var storeIdentifier: String { get }
    /// When the save committed.
    var timestamp: Date { get }
    /// The transaction's place in history: fetch what came after it with `$0.token > token`.
    var token: TokenType { get }
    /// The transaction's identifier within its store.
    var transactionIdentifier: TransactionIdentifier { get }
}

/// PGModel's history transaction: one row of `pgmodel.transactions` with its changes.
///
/// ```swift
/// var descriptor = HistoryDescriptor<DefaultHistoryTransaction>()
/// descriptor.sortBy = [.init(\.transactionIdentifier, order: .reverse)]
/// descriptor.fetchLimit = 1
/// let newest = try context.fetchHistory(descriptor).last?.token
/// ```
public struct DefaultHistoryTransaction: HistoryTransaction {
    public typealias TokenType = DefaultHistoryToken
    public typealias TransactionIdentifier = Int64

    /// `ModelContext.author` of the saving context, if it had one.
    public let author: String?
    /// What the save changed, in the order it changed it.
    public let changes: [HistoryChange]
    /// The PostgreSQL schema of the store.
    public let storeIdentifier: String
    /// When the save committed (its transaction's start, as PostgreSQL's `now()`).
    public let timestamp: Date
    /// The transaction's position in its store's history, in commit order.
    public let token: DefaultHistoryToken
    /// `pgmodel.transactions.id`.
    public let transactionIdentifier: Int64
    /// The service user who saved, when the save came through the service (beyond SwiftData).
    public let userName: String?
    /// The program that saved: its bundle identifier, or its executable's name where it has none (as
    /// on Linux); empty for saves that named none. Through the service it is what the saving client
    /// said, shown as `user@name` to everyone but that user, so no user passes for another program.
    public let bundleIdentifier: String
    /// The saving process's id, as text (`ProcessInfo.processInfo.processIdentifier`); empty for saves
    /// that named none, qualified through the service as ``bundleIdentifier`` is.
    public let processIdentifier: String

    /// The transaction identifier.
    public var id: Int64 { transactionIdentifier }

    /// A transaction from a stored history record; `schema` resolves entity names to model types.
    init(record: HistoryRecord, schema: Schema) {
        author = record.author
        storeIdentifier = record.storeIdentifier
        timestamp = record.timestamp
        token = DefaultHistoryToken(value: record.token, storeIdentifier: record.storeIdentifier)
        transactionIdentifier = record.transactionIdentifier
        userName = record.userName
        bundleIdentifier = record.bundleIdentifier ?? ""
        processIdentifier = record.processIdentifier ?? ""
        changes = record.changes.compactMap { HistoryChange(record: $0, transaction: record.transactionIdentifier,
                                                             storeIdentifier: record.storeIdentifier, schema: schema) }
    }

    public static func == (lhs: Self, rhs: Self) -> Bool {
        lhs.transactionIdentifier == rhs.transactionIdentifier && lhs.storeIdentifier == rhs.storeIdentifier
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(transactionIdentifier)
        hasher.combine(storeIdentifier)
    }
}

extension DefaultHistoryTransaction {
    /// `records` as transactions of the type a descriptor asks for. The store records
    /// ``DefaultHistoryTransaction``s; another type is `unsupported_history_query`, not an empty answer.
    static func transactions<T: HistoryTransaction>(_ records: [HistoryRecord], as _: T.Type, schema: Schema) throws -> [T] {
        try records.map { record in
            guard let transaction = DefaultHistoryTransaction(record: record, schema: schema) as? T else {
                throw PGModelError(.unsupportedHistoryQuery,
                                   "history is read as DefaultHistoryTransaction; HistoryDescriptor<\(T.self)> cannot be answered")
            }
            return transaction
        }
    }
}
