import Foundation

/// Which history transactions `fetchHistory` and `deleteHistory` work on.
///
/// The predicate may compare `token`, `transactionIdentifier`, `author` and `timestamp`, and ask
/// whether `changes` contain a given entity (`$0.changes.contains { names.contains($0.changedPersistentIdentifier.entityName) }`);
/// `sortBy` may hold any number of keys among `token`, `transactionIdentifier` and `timestamp` (all three
/// are commit order, and the first of them settles the order), `author` (no author first, as Swift orders
/// `nil`) and `storeIdentifier` (one value per store); the store sorts in SQL, before `fetchLimit`.
/// Anything else throws `unsupported_history_query`.
///
/// ```swift
/// var descriptor = HistoryDescriptor<DefaultHistoryTransaction>(predicate: #Predicate { $0.token > saved })
/// descriptor.sortBy = [.init(\.transactionIdentifier, order: .reverse)]
/// descriptor.fetchLimit = 1
///
/// let byAuthor = HistoryDescriptor<DefaultHistoryTransaction>(sortBy: [.init(\.author), .init(\.token, order: .reverse)])
/// ```
public struct HistoryDescriptor<TransactionType: HistoryTransaction> {
    public var predicate: Predicate<TransactionType>?
    public var sortBy: [SortDescriptor<TransactionType>]
    /// At most this many transactions; 0 for no limit.
    public var fetchLimit: Int

    /// Transactions matching `predicate` (all when nil), in `sortBy` order (commit order when empty).
    public init(predicate: Predicate<TransactionType>? = nil, sortBy: [SortDescriptor<TransactionType>] = []) {
        self.predicate = predicate
        self.sortBy = sortBy
        self.fetchLimit = 0
    }
}
