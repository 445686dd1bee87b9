import Foundation
@_spi(PGModelInternals) import PGModelCore

/// A committed save as persistent history records it.
///
/// ```swift
/// for transaction in try context.fetchHistory(HistoryDescriptor<DefaultHistoryTransaction>()) {
///     print(transaction.author ?? "-", transaction.changes.count)
/// }
/// ```
public protocol HistoryTransaction: Hashable, Identifiable, Sendable {
    associatedtype TokenType: Comparable, Hashable, Identifiable, Sendable
    associatedtype TransactionIdentifier: Comparable, Hashable, Sendable
    var author: String? { get }
    var changes: [HistoryChange] { get }
    var storeIdentifier: String { get }
    var timestamp: Date { get }
    var token: TokenType { get }
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

    public let author: String?
    public let changes: [HistoryChange]
    /// The PostgreSQL schema of the store.
    public let storeIdentifier: String
    public let timestamp: Date
    public let token: DefaultHistoryToken
    public let transactionIdentifier: Int64
    /// The service user who saved, when the save came through the service (beyond SwiftData).
    public let userName: String?
    /// Kept for SwiftData compatibility: PGModel has no bundles; always the empty string.
    public let bundleIdentifier: String
    /// Kept for SwiftData compatibility: always the empty string.
    public let processIdentifier: String

    public var id: Int64 { transactionIdentifier }

    /// A transaction from a stored history record; `schema` resolves entity names to model types.
    init(record: HistoryRecord, schema: Schema) {
        author = record.author
        storeIdentifier = record.storeIdentifier
        timestamp = record.timestamp
        token = DefaultHistoryToken(value: record.token, storeIdentifier: record.storeIdentifier)
        transactionIdentifier = record.transactionIdentifier
        userName = record.userName
        bundleIdentifier = ""
        processIdentifier = ""
        changes = record.changes.compactMap { HistoryChange(record: $0, transaction: record.transactionIdentifier, schema: schema) }
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
