import Foundation
@_spi(PGModelInternals) import PGModelCore

/// The service's history fan-out: one read of each new history page for every subscribed user of an
/// instance, on a pooled connection in the direct store's scope (the database owner's), with row-level
/// security's answer for each user computed in the same snapshot.
extension DatabaseGateway {
    /// The history after `after` and who of `readers` may see which part of it
    /// (``PostgresStoreEngine/fetchSharedHistory(after:limit:for:on:)``).
    ///
    /// ```swift
    /// let shared = try await gateway.fetchSharedHistory(after: 4711, limit: 500, for: [.user(alice), .user(bob)])
    /// let bobs = shared.page(for: 1)
    /// ```
    package func fetchSharedHistory(after: UInt64, limit: Int, for readers: [Requester],
                                    budget: RequestBudget = RequestBudget()) async throws -> SharedHistoryPage {
        try await traced("sharedHistory", entity: nil, rows: { $0.transactions.count }) {
            try await pool.withConnection(scope: .trusted, deadline: callTimeout(budget), budget: budget, operation: "history fan-out") {
                try await self.engine.fetchSharedHistory(after: after, limit: limit, for: readers, on: $0)
            }
        }
    }

    /// The store's history horizon (``PostgresStoreEngine/historyHorizon(on:)``): a subscriber registered
    /// now is told of what commits past it.
    ///
    /// ```swift
    /// let horizon = try await gateway.historyHorizon()
    /// ```
    package func historyHorizon(budget: RequestBudget = RequestBudget()) async throws -> UInt64 {
        try await pool.withConnection(scope: .trusted, deadline: callTimeout(budget), budget: budget, operation: "history horizon") {
            try await self.engine.historyHorizon(on: $0)
        }
    }
}
