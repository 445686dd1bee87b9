import Foundation

/// Which history transactions `fetchHistory` and `deleteHistory` work on.
///
/// The predicate may compare `token`, `transactionIdentifier`, `author` and `timestamp`, and ask
/// whether `changes` contain a given entity (`$0.changes.contains { names.contains($0.changedPersistentIdentifier.entityName) }`);
/// `sortBy` may use `token`, `transactionIdentifier` or `timestamp` (all follow commit visibility order).
/// Anything else throws `unsupported_history_query`.
///
/// ```swift
/// var descriptor = HistoryDescriptor<DefaultHistoryTransaction>(predicate: #Predicate { $0.token > saved })
/// descriptor.sortBy = [.init(\.transactionIdentifier, order: .reverse)]
/// descriptor.fetchLimit = 1
/// ```
public struct HistoryDescriptor<T: HistoryTransaction> {
    public var predicate: Predicate<T>?
    public var sortBy: [SortDescriptor<T>]
    /// At most this many transactions; 0 for no limit.
    public var fetchLimit: Int

    /// Transactions matching `predicate` (all when nil), in `sortBy` order (commit order when empty).
    public init(predicate: Predicate<T>? = nil, sortBy: [SortDescriptor<T>] = []) {
        self.predicate = predicate
        self.sortBy = sortBy
        self.fetchLimit = 0
    }
}
