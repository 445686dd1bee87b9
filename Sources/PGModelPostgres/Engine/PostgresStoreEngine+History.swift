import Foundation
@_spi(PGModelInternals) import PGModelCore
@_spi(PGModelInternals) import PGModelSQL
import PostgresNIO

@_spi(PGModelInternals) extension PostgresStoreEngine {
    /// Writes a save's history transaction and changes inside the save's SQL transaction, so history
    /// commits (or rolls back) with the data. The transaction's position (its token) is assigned at COMMIT
    /// by the `pgmodel_assign_position` trigger. A save that wrote nothing writes no history.
    ///
    /// Returns the doorbell to ring once the save has committed (sent right behind its COMMIT), or nil. A
    /// NOTIFY inside the save would take PostgreSQL's database-wide notification lock at COMMIT and hold
    /// it through the commit's WAL flush, so every notifying save of the database would commit one after
    /// another. Inside a migration (an enclosing transaction) it is sent at once: it is delivered at the
    /// migration's own commit.
    func writeHistory(_ log: HistoryLog, request: SaveRequest, as requester: Requester, on connection: EngineConnection,
                      _ pipeline: inout StatementPipeline) async throws -> SQLStatement? {
        guard !log.isEmpty else {
            try await pipeline.drain()
            return nil
        }
        let sql = HistorySQL(schemaName: schemaName)
        // At most `historyChunkSize` changes a statement, each chunk built while the statement before it
        // runs (the first while the save's last write may still run): bounds the binds' memory, and the
        // client's work overlaps the server's. A long stretch of plain inserts of one class and owner (a
        // bulk save's) is a chunk of its own, written as one row: a run.
        let ranges = log.statementRanges(size: Self.historyChunkSize, minimumRun: Self.historyMinimumRun)
        func chunk(_ range: Range<Int>) throws -> HistorySQL.HistoryChanges {
            if let inserts = log.insertColumns(in: range) { return .inserts(inserts) }
            return .columns(try log.columns(encoder: Self.historyEncoder, in: range))
        }
        guard let first = ranges.first else {
            try await pipeline.drain()
            return nil
        }
        var next = try chunk(first)
        // A direct store runs in the saving process: what it says of itself is true, and a request
        // built without it (a CLI's, a migration's) gets it here. Through the service it is the client's word.
        let trusted = requester == .trusted
        let bundle = request.bundleIdentifier ?? (trusted ? ProcessIdentity.bundleIdentifier : nil)
        let process = request.processIdentifier ?? (trusted ? ProcessIdentity.processIdentifier : nil)
        let payload = sql.notifyPayload(entities: log.entities)
        let doorbell = sql.notifyWithCommitPosition(payload: payload)
        func transaction(with changes: HistorySQL.HistoryChanges? = nil) -> SQLStatement {
            sql.insertTransaction(author: request.author, userID: requester.newRowOwner, userName: requester.userName,
                                  bundleIdentifier: bundle, processIdentifier: process, joining: isEnclosed, changes: changes)
        }
        if ranges.count == 1, !isEnclosed {
            // The transaction and its changes queued behind the save's last write without waiting for any
            // of them: the transaction awaits them with its COMMIT, so a small save wakes its task once
            // instead of at each statement.
            if trusted {
                // The tables' owner: the transaction and its changes in one statement, a round trip less
                // (PostgresNIO sends each statement when the one before it is answered).
                try pipeline.sendAhead(transaction(with: next), self, on: connection)
            } else {
                // A user's insert policy on the changes looks their transaction up with a query of its own,
                // which would not see it inserted by the same statement: the changes come next and name
                // it by this session's last id.
                try pipeline.sendAhead(transaction(), self, on: connection)
                try pipeline.sendAhead(sql.insertChangesOfLastTransaction(next), self, on: connection)
            }
            return doorbell
        }
        try await pipeline.drain()
        let rows = try await query(transaction(), on: connection)
        guard let id = try rows.first?.decode(Int64.self) else {
            throw PGModelError(.internalError, "writing the history transaction of schema \(schemaName) returned no id")
        }
        for index in ranges.indices {
            try await pipeline.send(sql.insertChanges(transactionID: id, changes: next), self, on: connection)
            if index + 1 < ranges.count { next = try chunk(ranges[index + 1]) }
        }
        try await pipeline.drain()
        guard !isEnclosed else {
            try await execute(sql.notify(payload: payload), on: connection)
            return nil
        }
        return doorbell
    }

    /// History transactions matching `request`, with their changes; a service user sees only changes of
    /// rows they may see. Every page is complete up to the store's horizon (``HistorySQL/horizon()``), and
    /// nothing but a save's own commit (another database's transaction, a long save) holds a reader back. Throws `historyTokenExpired`
    /// when the request resumes from a token older than deleted history.
    public func fetchHistory(_ request: HistoryRequest, as requester: Requester, on connection: EngineConnection) async throws -> HistoryPage {
        try request.validate()
        return try await readHistory(request, as: requester, on: connection)
    }

    /// Deletes the history transactions `request` matches and records the newest
    /// deleted token, so readers resuming from an older one get `historyTokenExpired`. Returns how many.
    public func deleteHistory(_ request: HistoryRequest, as requester: Requester, on connection: EngineConnection) async throws -> Int {
        guard requester.isAdmin else {
            throw PGModelError(.forbidden, "deleting history removes other users' history too; it needs an admin or a direct connection")
        }
        try request.validate()
        let sql = HistorySQL(schemaName: schemaName)
        return try await transaction(as: requester, on: connection) {
            let rows = try await query(sql.deleteTransactions(request.filter), on: connection)
            let tokens = try rows.compactMap { UInt64(try $0.decode(String.self)) }
            if let newest = tokens.max() {
                try await execute(sql.recordDeletion(through: newest), on: connection)
            }
            return tokens.count
        }
    }

    /// The store's history horizon on the primary and where the primary's WAL ends once it is taken
    /// (``HistorySQL/horizonWithWALPosition()``): a standby that has replayed that position has every
    /// commit up to the horizon, so ``fetchHistory(_:through:as:on:)`` may read the page there.
    ///
    /// ```swift
    /// let (horizon, wal) = try await engine.historyHorizonAndWALPosition(on: primaryConnection)
    /// let page = try await engine.fetchHistory(request, through: horizon, as: .trusted, on: standbyConnection)
    /// ```
    public func historyHorizonAndWALPosition(on connection: EngineConnection) async throws -> (horizon: UInt64, walPosition: LogSequenceNumber?) {
        let sql = HistorySQL(schemaName: schemaName)
        guard let row = try await query(sql.horizonWithWALPosition(), on: connection).first else {
            throw PGModelError(.internalError, "the history horizon of schema \(schemaName) could not be read")
        }
        let (horizonText, walText) = try row.decode((String?, String?).self)
        guard let horizon = horizonText.flatMap(UInt64.init) else {
            throw PGModelError(.internalError, "the history horizon of schema \(schemaName) could not be read")
        }
        return (horizon, walText.flatMap(LogSequenceNumber.init))
    }

    /// The page of ``fetchHistory(_:as:on:)`` up to a horizon taken before (``historyHorizonAndWALPosition(on:)``),
    /// on a connection to the primary or to a standby that has replayed the horizon's WAL position.
    ///
    /// ```swift
    /// let page = try await engine.fetchHistory(request, through: horizon, as: requester, on: connection)
    /// ```
    public func fetchHistory(_ request: HistoryRequest, through horizon: UInt64, as requester: Requester,
                             on connection: EngineConnection) async throws -> HistoryPage {
        try request.validate()
        return try await readHistory(request, through: horizon, as: requester, on: connection)
    }

    /// One consistent read: the deletion check, the transactions and their changes in one REPEATABLE
    /// READ snapshot.
    private func readHistory(_ request: HistoryRequest, as requester: Requester, on connection: EngineConnection) async throws -> HistoryPage {
        // Before the snapshot: every save of the store up to the horizon has committed by the time the
        // snapshot is taken (saves commit side by side, so a newer one may become visible before an older
        // one; the horizon leaves both out until both are settled).
        let horizon = try await historyHorizon(on: connection)
        return try await readHistory(request, through: horizon, as: requester, on: connection)
    }

    /// The page up to `horizon` in one snapshot, taken after the horizon was.
    private func readHistory(_ request: HistoryRequest, through horizon: UInt64, as requester: Requester,
                             on connection: EngineConnection) async throws -> HistoryPage {
        let sql = HistorySQL(schemaName: schemaName)
        // Inside a migration the reads see the migration's own transaction.
        if !isEnclosed { try await execute(SQLStatement(sql: "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY"), on: connection) }
        do {
            try await enterScope(of: requester, on: connection)
            let state = try await query(sql.deletionState(), on: connection)
            guard let first = state.first else {
                throw PGModelError(.internalError, "the history deletion query of schema \(schemaName) returned no row")
            }
            let deletedThrough = try first.decode(String?.self)
            if let resume = request.resumeToken, let deleted = deletedThrough.flatMap(UInt64.init), resume < deleted {
                throw PGModelError(.historyTokenExpired,
                    "history of store \(schemaName) was deleted beyond this token; fetch from a newer token or from the start")
            }
            var records: [HistoryRecord] = []
            var positions: [Int64: Int] = [:]
            for row in try await query(sql.selectTransactions(request, through: horizon), on: connection) {
                var record = try historyRecord(row)
                // Another user's word about their process is shown as theirs (see ProcessIdentity).
                record.bundleIdentifier = ProcessIdentity.shown(record.bundleIdentifier, savedBy: record.userName, readBy: requester.userName)
                record.processIdentifier = ProcessIdentity.shown(record.processIdentifier, savedBy: record.userName, readBy: requester.userName)
                positions[record.transactionIdentifier] = records.count
                records.append(record)
            }
            if !records.isEmpty {
                let changes = sql.selectChanges(transactionIDs: records.map(\.transactionIdentifier), entities: request.changedEntities)
                for row in try await query(changes, on: connection) {
                    let (transaction, id, kind, entity, rowID, attributes, values, tombstone) =
                        try row.decode((Int64, Int64, String, String, UUID, [String], String?, String?).self)
                    guard let position = positions[transaction], let kind = HistoryChangeRecord.Kind(rawValue: kind) else { continue }
                    records[position].changes.append(HistoryChangeRecord(
                        changeIdentifier: id, kind: kind, entity: entity, id: rowID, updatedAttributes: attributes,
                        values: try Self.decodeValues(values), tombstone: try Self.decodeValues(tombstone)))
                }
            }
            if !isEnclosed { try await execute(SQLStatement(sql: "COMMIT"), on: connection) }
            return HistoryPage(transactions: records)
        } catch {
            if !isEnclosed { await rollback(on: connection) }
            throw PostgresErrorMapping.map(error)
        }
    }

    /// A row of ``HistorySQL/selectTransactions(_:through:)`` as a record without changes, its bundle and
    /// process as stored.
    func historyRecord(_ row: PostgresRow) throws -> HistoryRecord {
        let (id, position, author, userName, createdAt, bundle, process) =
            try row.decode((Int64, String, String?, String?, Date, String?, String?).self)
        guard let token = UInt64(position) else {
            throw PGModelError(.internalError, "a history position of schema \(schemaName) is not a 64-bit number")
        }
        return HistoryRecord(token: token, transactionIdentifier: id, author: author, userName: userName, timestamp: createdAt,
                             storeIdentifier: schemaName, bundleIdentifier: bundle, processIdentifier: process)
    }

    static func decodeValues(_ json: String?) throws -> [String: PGValue] {
        guard let json, json != "null" else { return [:] }
        do {
            return try JSONDecoder().decode([String: PGValue].self, from: Data(json.utf8))
        } catch {
            throw PGModelError(.internalError, "a history value document could not be read: \(error)")
        }
    }

    /// The most history changes one statement carries, as ``insertChunkSize`` for rows; at most
    /// `HistorySQL.runCapacity`, since a chunk of plain inserts is one run.
    static let historyChunkSize = 5_000

    /// The fewest plain inserts of one class and owner in a row that get a history statement of their own
    /// (a run): fewer are written row by row with the changes around them, so a save that interleaves
    /// classes sends no more statements than it did.
    static let historyMinimumRun = 256

    static let historyEncoder: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        return encoder
    }()
}

