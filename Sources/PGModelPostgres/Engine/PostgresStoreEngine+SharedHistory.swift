import Foundation
@_spi(PGModelInternals) import PGModelCore
@_spi(PGModelInternals) import PGModelSQL
import PostgresNIO

@_spi(PGModelInternals) extension PostgresStoreEngine {
    /// The history after `after` (at most `limit` transactions, up to the store's horizon), read once as
    /// the database owner, with which of `readers` may see which transaction and change: one read for
    /// any number of readers, each of whom gets from ``SharedHistoryPage/page(for:)`` exactly what their
    /// own ``fetchHistory(_:as:on:)`` of the same range would return under row-level security. The
    /// horizon, the transactions, their changes and the visibility query share one REPEATABLE READ
    /// snapshot. Run on a connection in the direct store's scope (``ConnectionScope/trusted``).
    ///
    /// History deleted past `after` gives a page with ``SharedHistoryPage/expiredThrough`` set.
    ///
    /// ```swift
    /// let shared = try await engine.fetchSharedHistory(after: 4711, limit: 500, for: [.user(alice)], on: connection)
    /// ```
    public func fetchSharedHistory(after: UInt64, limit: Int, for readers: [Requester],
                                   on connection: EngineConnection) async throws -> SharedHistoryPage {
        let sql = HistorySQL(schemaName: schemaName)
        let limit = max(1, limit)
        let horizon = try await historyHorizon(on: connection)
        try await execute(SQLStatement(sql: "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY"), on: connection)
        do {
            let page = try await readSharedHistory(after: after, limit: limit, horizon: horizon, readers: readers, sql: sql, on: connection)
            try await execute(SQLStatement(sql: "COMMIT"), on: connection)
            return page
        } catch {
            await rollback(on: connection)
            throw PostgresErrorMapping.map(error)
        }
    }

    /// The history horizon of the store (``HistorySQL/horizon()``): every position up to it is committed
    /// or gone, so a reader that starts after it misses nothing committed before.
    ///
    /// ```swift
    /// let horizon = try await engine.historyHorizon(on: connection)
    /// ```
    public func historyHorizon(on connection: EngineConnection) async throws -> UInt64 {
        guard let text = try await query(HistorySQL(schemaName: schemaName).horizon(), on: connection).first?.decode(String?.self),
              let horizon = UInt64(text) else {
            throw PGModelError(.internalError, "the history horizon of schema \(schemaName) could not be read")
        }
        return horizon
    }

    private func readSharedHistory(after: UInt64, limit: Int, horizon: UInt64, readers: [Requester], sql: HistorySQL,
                                   on connection: EngineConnection) async throws -> SharedHistoryPage {
        guard let state = try await query(sql.deletionState(), on: connection).first else {
            throw PGModelError(.internalError, "the history deletion query of schema \(schemaName) returned no row")
        }
        if let deleted = try state.decode(String?.self).flatMap(UInt64.init), after < deleted {
            return SharedHistoryPage(readers: readers, readThrough: deleted, expiredThrough: deleted)
        }
        var records: [HistoryRecord] = []
        var positions: [Int64: Int] = [:]
        let request = HistoryRequest(filter: .token(.greater, after), limit: limit)
        for row in try await query(sql.selectTransactions(request, through: horizon), on: connection) {
            let record = try historyRecord(row)
            positions[record.transactionIdentifier] = records.count
            records.append(record)
        }
        let isFull = records.count >= limit
        let readThrough = isFull ? (records.last?.token ?? after) : max(after, horizon)
        guard !records.isEmpty else { return SharedHistoryPage(readers: readers, readThrough: readThrough) }
        let ids = records.map(\.transactionIdentifier)
        var audienceOnly = Set<Int64>()
        for row in try await query(sql.selectAllChanges(transactionIDs: ids), on: connection) {
            let (transaction, id, kind, entity, rowID, attributes, values, tombstone, onlyAudience) =
                try row.decode((Int64, Int64, String, String, UUID, [String], String?, String?, Bool).self)
            guard let position = positions[transaction], let kind = HistoryChangeRecord.Kind(rawValue: kind) else { continue }
            if onlyAudience { audienceOnly.insert(id) }
            records[position].changes.append(HistoryChangeRecord(
                changeIdentifier: id, kind: kind, entity: entity, id: rowID, updatedAttributes: attributes,
                values: try Self.decodeValues(values), tombstone: try Self.decodeValues(tombstone)))
        }
        var transactionReaders: [Int64: Set<Int>] = [:]
        var changeReaders: [Int64: Set<Int>] = [:]
        // Only service users are judged by the policies; the direct store sees what its own read shows.
        let users = readers.enumerated().compactMap { index, reader -> (Int, AuthenticatedUser)? in
            guard case .user(let user) = reader else { return nil }
            return (index, user)
        }
        if !users.isEmpty {
            let visibility = sql.audienceVisibility(users: users.map(\.1.id), adminRoles: users.map(\.1.isAdmin), transactionIDs: ids)
            for row in try await query(visibility, on: connection) {
                let (kind, id, list) = try row.decode((String, Int64, String?).self)
                let positions = SharedHistoryPage.readerPositions(list ?? "", count: users.count).map { users[$0].0 }
                if kind == "t" {
                    transactionReaders[id, default: []].formUnion(positions)
                } else {
                    changeReaders[id, default: []].formUnion(positions)
                }
            }
        }
        return SharedHistoryPage(readers: readers, transactions: records, transactionReaders: transactionReaders,
                                 changeReaders: changeReaders, audienceOnlyChanges: audienceOnly, readThrough: readThrough,
                                 isFull: isFull)
    }
}
