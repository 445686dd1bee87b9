import Foundation
@_spi(PGModelInternals) import PGModelCore
@_spi(PGModelInternals) import PGModelSQL
import PostgresNIO

/// History retention (`sql/015_pgmodel_history_retention.sql`): the per-store setting and the prune
/// that enforces it. These run as the connecting role, the tables' owner (the CLI's and the service's
/// own connection), never as a service user.
@_spi(PGModelInternals) extension PostgresStoreEngine {
    /// The most `pgmodel.changes` rows one prune batch (one SQL transaction) removes: bounds how long a
    /// batch holds its rows' locks and how much WAL one commit writes.
    public static let pruneBatchRows = 10_000

    /// Stores (or replaces) a store's retention setting and returns it as stored.
    ///
    /// ```swift
    /// try await engine.setHistoryRetention(HistoryRetention(store: "public", maxAge: HistoryAge(parsing: "30d"), maxChanges: nil), on: connection)
    /// ```
    public func setHistoryRetention(_ retention: HistoryRetention, on connection: EngineConnection) async throws -> HistoryRetention {
        let rows = try await query(HistoryRetentionSQL.setRetention(
            store: retention.store, maxAgeSeconds: retention.maxAge?.seconds, maxChanges: retention.maxChanges), on: connection)
        guard let stored = try rows.first.map(Self.retention) else {
            throw PGModelError(.internalError, "storing the history retention of store \(retention.store) returned no row")
        }
        return stored
    }

    /// Every store's retention setting in store order, or only `store`'s (empty when it has none).
    ///
    /// ```swift
    /// for retention in try await engine.historyRetentions(on: connection) { print(retention.store) }
    /// ```
    public func historyRetentions(store: String? = nil, on connection: EngineConnection) async throws -> [HistoryRetention] {
        try await query(HistoryRetentionSQL.selectRetention(store: store), on: connection).map(Self.retention)
    }

    /// Removes a store's retention setting; false when it had none. Its history is kept as it is.
    ///
    /// ```swift
    /// let removed = try await engine.clearHistoryRetention(store: "public", on: connection)
    /// ```
    public func clearHistoryRetention(store: String, on connection: EngineConnection) async throws -> Bool {
        !(try await query(HistoryRetentionSQL.clearRetention(store: store), on: connection)).isEmpty
    }

    /// The limits a prune of `store` applies: `limits` when given, else the store's setting. Throws
    /// `notFound` when neither is there.
    ///
    /// ```swift
    /// let limits = try await engine.pruneLimits(store: "public", given: nil, on: connection)
    /// ```
    public func pruneLimits(store: String, given limits: HistoryRetention?, on connection: EngineConnection) async throws -> HistoryRetention {
        if let limits { return limits }
        guard let stored = try await historyRetentions(store: store, on: connection).first else {
            throw PGModelError(.notFound, "store \(store) has no history retention setting: give --older-than or --keep-changes, or set one with pgmodel history retention set")
        }
        return stored
    }

    /// Where a prune pass stops, fixed at its start so that saves arriving meanwhile do not move it: the
    /// age cut-off on the database's clock and the newest position the change limit removes.
    ///
    /// ```swift
    /// let bounds = try await engine.pruneBounds(limits, on: connection)
    /// ```
    public func pruneBounds(_ limits: HistoryRetention, on connection: EngineConnection) async throws -> HistoryPruneBounds {
        let rows = try await query(HistoryRetentionSQL.pruneBounds(
            store: limits.store, maxAgeSeconds: limits.maxAge?.seconds, maxChanges: limits.maxChanges), on: connection)
        guard let row = rows.first else {
            throw PGModelError(.internalError, "the history prune bounds of store \(limits.store) returned no row")
        }
        let (olderThan, through) = try row.decode((Date?, Int64?).self)
        return HistoryPruneBounds(store: limits.store, olderThan: olderThan, throughPosition: through)
    }

    /// Removes one batch (its own SQL transaction: call it outside any) of the oldest history within
    /// `bounds`. A batch that removed nothing (or found the store busy) ends the pass.
    ///
    /// ```swift
    /// while report.add(try await engine.pruneBatch(bounds, on: connection)) {}
    /// ```
    public func pruneBatch(_ bounds: HistoryPruneBounds, batchRows: Int = Self.pruneBatchRows,
                           on connection: EngineConnection) async throws -> HistoryPruneBatch {
        guard bounds.olderThan != nil || bounds.throughPosition != nil else { return HistoryPruneBatch() }
        let rows = try await query(HistoryRetentionSQL.pruneBatch(
            store: bounds.store, olderThan: bounds.olderThan, throughPosition: bounds.throughPosition, batchRows: max(1, batchRows)),
            on: connection)
        guard let row = rows.first else {
            throw PGModelError(.internalError, "a history prune batch of store \(bounds.store) returned no row")
        }
        let (transactions, changes, through, busy) = try row.decode((Int64, Int64, Int64?, Bool).self)
        return HistoryPruneBatch(transactions: transactions, changes: changes,
                                 deletedThrough: through.flatMap { $0 >= 0 ? UInt64($0) : nil }, busy: busy)
    }

    /// Prunes `store` on this one connection, batch after batch until nothing within the limits is left
    /// (`limits`, else the store's setting). Each batch commits on its own; a failure keeps what earlier
    /// batches removed.
    ///
    /// ```swift
    /// let report = try await engine.pruneHistory(store: "public", limits: nil, on: connection)
    /// ```
    public func pruneHistory(store: String, limits: HistoryRetention? = nil, batchRows: Int = Self.pruneBatchRows,
                             on connection: EngineConnection) async throws -> HistoryPruneReport {
        let limits = try await pruneLimits(store: store, given: limits, on: connection)
        return try await Self.prune(limits, bounds: { try await pruneBounds(limits, on: connection) },
                                    batch: { try await pruneBatch($0, batchRows: batchRows, on: connection) })
    }

    /// One prune pass under `limits`: its bounds once, then batch after batch until a batch removes nothing
    /// or the task is cancelled (the batch running then still commits). The caller says where each step
    /// runs: one connection (the CLI), or a pooled connection per batch (the service).
    static func prune(_ limits: HistoryRetention, bounds: () async throws -> HistoryPruneBounds,
                      batch: (HistoryPruneBounds) async throws -> HistoryPruneBatch) async throws -> HistoryPruneReport {
        let started = ContinuousClock.now
        var report = HistoryPruneReport(store: limits.store, maxAge: limits.maxAge, maxChanges: limits.maxChanges)
        let fixed = try await bounds()
        while !Task.isCancelled, report.add(try await batch(fixed)) {}
        let elapsed = (ContinuousClock.now - started).components
        report.seconds = Double(elapsed.seconds) + Double(elapsed.attoseconds) / 1e18
        return report
    }

    private static func retention(_ row: PostgresRow) throws -> HistoryRetention {
        let (store, ageSeconds, maxChanges, updatedAt) = try row.decode((String, Int64?, Int64?, Date).self)
        return try HistoryRetention(store: store, maxAge: ageSeconds.flatMap { HistoryAge(seconds: $0) }, maxChanges: maxChanges,
                                    updatedAt: updatedAt)
    }
}

/// Where one prune pass of a store stops (``PostgresStoreEngine/pruneBounds(_:on:)``): transactions
/// created before ``olderThan`` and those at or below ``throughPosition`` go.
///
/// ```swift
/// let bounds = HistoryPruneBounds(store: "public", olderThan: Date().addingTimeInterval(-86_400), throughPosition: nil)
/// ```
@_spi(PGModelInternals) public struct HistoryPruneBounds: Sendable, Hashable {
    /// The store pruned.
    public var store: String
    /// The age cut-off (database clock); nil without an age limit.
    public var olderThan: Date?
    /// The newest position the change limit removes; nil without one, or when the history fits.
    public var throughPosition: Int64?

    /// Bounds as ``PostgresStoreEngine/pruneBounds(_:on:)`` computes them, or by hand (tests, a one-off prune).
    public init(store: String, olderThan: Date?, throughPosition: Int64?) {
        self.store = store
        self.olderThan = olderThan
        self.throughPosition = throughPosition
    }
}
