import Foundation
@_spi(PGModelInternals) import PGModelCore

extension ModelContext {
    /// The history transactions `descriptor` selects, oldest first unless it sorts in reverse.
    ///
    /// Tokens are positions in commit order, assigned as each save commits, so a token taken from the
    /// result is a safe cursor: a transaction that commits late is never skipped by `$0.token > saved`,
    /// and a save is in the result as soon as `save()` returned.
    ///
    /// ```swift
    /// let names = ["Trip", "LivingAccommodation"]
    /// let descriptor = HistoryDescriptor<DefaultHistoryTransaction>(predicate: #Predicate {
    ///     $0.token > saved && $0.changes.contains { names.contains($0.changedPersistentIdentifier.entityName) }
    /// })
    /// let transactions = try context.fetchHistory(descriptor)
    /// ```
    ///
    /// Throws `history_token_expired` when the predicate resumes from a token older than history
    /// removed with ``deleteHistory(_:)``, and `unsupported_history_query` for predicates and sorts
    /// outside ``HistoryDescriptor``'s vocabulary.
    public func fetchHistory<T: HistoryTransaction>(_ descriptor: HistoryDescriptor<T>) throws -> [T] {
        let request = try Self.historyRequest(descriptor)
        let store = container.store
        let page = try roundTrip { try await store.fetchHistory(request) }
        let schema = container.schema
        return try DefaultHistoryTransaction.transactions(page.transactions, as: T.self, schema: schema)
    }

    /// Deletes the history transactions `descriptor` selects (its sort and limit are ignored). Readers
    /// that later resume from a token older than the deleted history get `history_token_expired`.
    ///
    /// ```swift
    /// try context.deleteHistory(HistoryDescriptor<DefaultHistoryTransaction>(predicate: #Predicate { $0.token <= processed }))
    /// ```
    public func deleteHistory<T: HistoryTransaction>(_ descriptor: HistoryDescriptor<T>) throws {
        let request = try Self.deleteHistoryRequest(descriptor)
        let store = container.store
        _ = try roundTrip { try await store.deleteHistory(request) }
    }

    /// The request of a history delete: the descriptor's filter, without its sort and limit.
    static func deleteHistoryRequest<T: HistoryTransaction>(_ descriptor: HistoryDescriptor<T>) throws -> HistoryRequest {
        var request = try historyRequest(descriptor)
        request.limit = nil
        request.newestFirst = false
        request.sort = []
        return request
    }

    static func historyRequest<T: HistoryTransaction>(_ descriptor: HistoryDescriptor<T>) throws -> HistoryRequest {
        guard let descriptor = descriptor as? HistoryDescriptor<DefaultHistoryTransaction> else {
            throw PGModelError(.unsupportedHistoryQuery, "PGModel stores history as DefaultHistoryTransaction; \(T.self) is not supported",
                               model: "\(T.self)")
        }
        return try HistoryPredicateTranslator.request(for: descriptor)
    }
}
