import Foundation
import Logging
@_spi(PGModelInternals) import PGModelCore
@_spi(PGModelInternals) import PGModelPostgres

/// The server's history retention (``LineServerConfiguration/historyRetentionInterval``): a pass right
/// after start and then one every interval prunes every store with a setting in
/// `pgmodel.history_retention`, logs one line per store that lost history, and counts the removed
/// changes in `pgmodel_history_pruned_changes_total`. It runs until its task is cancelled, which the
/// listener does as the server stops.
///
/// ```swift
/// let worker = HistoryRetentionWorker(gateway: gateway, interval: .seconds(300), logger: logger, metrics: metrics)
/// let task = Task { await worker.run() }
/// task.cancel()
/// ```
struct HistoryRetentionWorker: Sendable {
    let gateway: DatabaseGateway
    let interval: Duration
    let logger: Logger
    let metrics: ServerMetrics

    /// Passes until cancelled. A failed pass is logged and the next one tries again.
    func run() async {
        while !Task.isCancelled {
            await pass()
            do {
                try await Task.sleep(for: interval)
            } catch {
                return
            }
        }
    }

    /// One pass over every store with a setting.
    func pass() async {
        let retentions: [HistoryRetention]
        do {
            retentions = try await gateway.historyRetentions()
        } catch {
            logger.warning("could not read history retention settings",
                           metadata: ["error": "\(LogText(PostgresErrorMapping.map(error).message))"])
            return
        }
        for retention in retentions where !Task.isCancelled {
            do {
                let report = try await gateway.pruneHistory(retention)
                metrics.recordHistoryPrune(report)
                // Quiet when nothing went: a line every interval per store would drown the log.
                guard report.transactions > 0 else { continue }
                logger.info("pruned history", metadata: [
                    "store": "\(LogText(retention.store))",
                    "transactions": "\(report.transactions)",
                    "changes": "\(report.changes)",
                    "deleted_through": "\(report.deletedThrough.map(String.init) ?? "-")",
                    "batches": "\(report.batches)",
                    "ms": "\(String(format: "%.1f", report.seconds * 1000))",
                ])
            } catch {
                logger.warning("could not prune history", metadata: [
                    "store": "\(LogText(retention.store))",
                    "error": "\(LogText(PostgresErrorMapping.map(error).message))",
                ])
            }
        }
    }
}
