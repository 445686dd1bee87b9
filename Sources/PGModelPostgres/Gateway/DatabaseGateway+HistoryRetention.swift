import Foundation
@_spi(PGModelInternals) import PGModelCore

/// The service's enforcement of history retention (`pgmodel serve --history-retention-interval`). Each
/// batch borrows a pooled connection of its own for one short SQL transaction, so a long prune never
/// keeps a connection from requests for more than a batch.
extension DatabaseGateway {
    /// Every store's retention setting (``PostgresStoreEngine/historyRetentions(store:on:)``).
    ///
    /// ```swift
    /// for retention in try await gateway.historyRetentions() { … }
    /// ```
    package func historyRetentions() async throws -> [HistoryRetention] {
        try await pool.withConnection(scope: .trusted, deadline: requestTimeout, operation: "reading history retention") {
            try await self.engine.historyRetentions(on: $0)
        }
    }

    /// Prunes one store under `retention`, batch after batch, until nothing within it is left or the task
    /// is cancelled (the batch running then still commits).
    ///
    /// ```swift
    /// let report = try await gateway.pruneHistory(retention)
    /// ```
    package func pruneHistory(_ retention: HistoryRetention, batchRows: Int = PostgresStoreEngine.pruneBatchRows) async throws -> HistoryPruneReport {
        try await PostgresStoreEngine.prune(retention, bounds: {
            try await pool.withConnection(scope: .trusted, deadline: requestTimeout, operation: "history prune bounds") {
                try await self.engine.pruneBounds(retention, on: $0)
            }
        }, batch: { bounds in
            try await pool.withConnection(scope: .trusted, deadline: requestTimeout, operation: "history prune") {
                try await self.engine.pruneBatch(bounds, batchRows: batchRows, on: $0)
            }
        })
    }
}
