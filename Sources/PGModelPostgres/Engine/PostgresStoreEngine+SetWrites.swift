import Foundation
@_spi(PGModelInternals) import PGModelCore
@_spi(PGModelInternals) import PGModelSQL
import PostgresNIO

/// Updates and join-table links of a save, set-based: one statement per class (updates) or per
/// relationship and direction (links) and per chunk, whatever the number of rows. A group of one row is
/// the one-row statement, so a one-model save costs what it always did.
@_spi(PGModelInternals) extension PostgresStoreEngine {
    /// The most rows one set-based update or link statement carries: bounds the message and its binds.
    static let updateChunkSize = 10_000

    /// One row an update changed: its owner, (when asked for) the values the update replaced, of the
    /// attributes it set, as the row held them once locked, and (when asked for) every stored column's
    /// value after the update, in the order of ``SQLRenderer/storedColumns(of:)``.
    struct UpdatedRow {
        var owner: UUID?
        var replaced: [String: PGValue]
        var stored: [PGValue]? = nil
    }

    /// What an update statement returns besides each row's id and owner.
    struct UpdateReturns {
        /// The values each update replaced (the rows are locked first).
        var replaced: Bool
        /// Every stored column's new value: the whole row as the save leaves it.
        var stored: Bool

        static let idsOnly = UpdateReturns(replaced: false, stored: false)
        static let replacedValues = UpdateReturns(replaced: true, stored: false)
        static let replacedAndStored = UpdateReturns(replaced: true, stored: true)
    }

    /// Updates `rows` set-based and returns every row updated, with its owner and what `returning` asks
    /// for: the values each update replaced, the whole row it left. A row missing from the result was not
    /// updated: it is gone, or row-level security does not let the requester change it (the caller tells
    /// which, for the first such row in the request's order).
    ///
    /// Rows are grouped by class; a group never holds one id twice (a second update of a row starts the
    /// next group, so the updates of one row apply in the request's order). Where a group changes a column
    /// of a uniqueness constraint, it runs under a savepoint: PostgreSQL checks such a constraint row by row
    /// in the order the join meets the rows, so when the set-based statement breaks the constraint the group
    /// is replayed one row at a time in the request's order, and the error (or success) is exactly the
    /// one-row path's.
    func applyUpdates(_ rows: [RowValues], _ renderer: SQLRenderer, _ connection: EngineConnection,
                      returning: UpdateReturns = .idsOnly) async throws -> [RowKey: UpdatedRow] {
        var updated: [RowKey: UpdatedRow] = [:]
        updated.reserveCapacity(rows.count)
        // A class's stored columns, looked up once per class.
        var storedByEntity: [String: [(name: String, type: AttributeType)]] = [:]
        for batch in Self.batches(of: rows.indices, key: { rows[$0].entity }, id: { rows[$0].id }, limit: Self.updateChunkSize) {
            let entity = rows[batch[0]].entity
            // A batch is of one class: its rows' keys share the hierarchy's root.
            let root = renderer.schema.rowKey(entity, rows[batch[0]].id).root
            var stored: [(name: String, type: AttributeType)] = []
            if returning.stored {
                if let known = storedByEntity[entity] { stored = known } else {
                    stored = try renderer.storedColumns(of: entity)
                    storedByEntity[entity] = stored
                }
            }
            guard batch.count > 1 else {
                try await updateOne(rows[batch[0]], renderer, connection, root: root, returning: returning, stored: stored, into: &updated)
                continue
            }
            let group = batch.map { rows[$0] }
            let statement = try renderer.update(group, returningReplaced: returning.replaced, returningStored: returning.stored)
            let columns = ReturnedColumns(replaced: returning.replaced ? try renderer.replacedColumns(of: group) : [], stored: stored)
            guard touchesUniqueness(group, renderer) else {
                try record(try await query(statement, on: connection, model: entity), columns, root: root, into: &updated)
                continue
            }
            try await execute(SQLStatement(sql: "SAVEPOINT \"pgmodel_set_update\""), on: connection)
            do {
                try record(try await query(statement, on: connection, model: entity), columns, root: root, into: &updated)
            } catch let error as PGModelError where error.code == .uniqueViolation {
                try await execute(SQLStatement(sql: "ROLLBACK TO SAVEPOINT \"pgmodel_set_update\""), on: connection)
                for row in group {
                    try await updateOne(row, renderer, connection, root: root, returning: returning, stored: stored, into: &updated)
                }
            }
            try await execute(SQLStatement(sql: "RELEASE SAVEPOINT \"pgmodel_set_update\""), on: connection)
        }
        return updated
    }

    /// The columns an update returns after each row's id and owner, in order.
    private struct ReturnedColumns {
        var replaced: [(name: String, type: AttributeType)]
        /// Empty unless the statement returns the whole row.
        var stored: [(name: String, type: AttributeType)]
    }

    /// The one-row update: what a group of one row, and a replayed group, runs.
    private func updateOne(_ row: RowValues, _ renderer: SQLRenderer, _ connection: EngineConnection, root: String,
                           returning: UpdateReturns, stored: [(name: String, type: AttributeType)],
                           into updated: inout [RowKey: UpdatedRow]) async throws {
        guard returning.replaced else {
            // Only corrections take this path, and they need nothing back but the ids.
            try record(try await query(try renderer.update(row), on: connection, model: row.entity), ReturnedColumns(replaced: [], stored: []),
                       root: root, into: &updated)
            return
        }
        let statement = try renderer.updateReturningReplaced(row, returningStored: returning.stored)
        try record(try await query(statement, on: connection, model: row.entity),
                   ReturnedColumns(replaced: try renderer.replacedColumns(of: row), stored: returning.stored ? stored : []),
                   root: root, into: &updated)
    }

    private func record(_ rows: [PostgresRow], _ columns: ReturnedColumns, root: String,
                        into updated: inout [RowKey: UpdatedRow]) throws {
        for row in rows {
            var cells = row.makeIterator()
            guard let idCell = cells.next(), let ownerCell = cells.next() else {
                throw PGModelError(.internalError, "an update returned fewer columns than it names")
            }
            let id = try idCell.decode(UUID.self)
            let owner = try ownerCell.decode(UUID?.self)
            var replaced: [String: PGValue] = [:]
            for column in columns.replaced {
                guard let cell = cells.next() else {
                    throw PGModelError(.internalError, "an update returned fewer columns than it names")
                }
                replaced[column.name] = try PostgresValueCoding.decode(cell, as: column.type)
            }
            var stored: [PGValue]?
            if !columns.stored.isEmpty {
                var values: [PGValue] = []
                values.reserveCapacity(columns.stored.count)
                for column in columns.stored {
                    guard let cell = cells.next() else {
                        throw PGModelError(.internalError, "an update returned fewer columns than it names")
                    }
                    values.append(try PostgresValueCoding.decode(cell, as: column.type))
                }
                stored = values
            }
            updated[RowKey(root: root, id: id)] = UpdatedRow(owner: owner, replaced: replaced, stored: stored)
        }
    }

    /// Whether any of `rows` (of one class) changes a column of one of its uniqueness constraints.
    private func touchesUniqueness(_ rows: [RowValues], _ renderer: SQLRenderer) -> Bool {
        guard let first = rows.first, let entity = renderer.schema.entity(named: first.entity) else { return false }
        let constrained = Set(renderer.uniquenessConstraints(of: entity).flatMap(\.attributes))
        guard !constrained.isEmpty else { return false }
        return rows.contains { (row: RowValues) -> Bool in constrained.contains { (key: String) -> Bool in row[key] != nil } }
    }

    /// Applies join-table link changes set-based: one statement per relationship and direction (addition
    /// or removal) and per chunk. Changes run in *phases*: a change naming a link (from either side) that
    /// the current phase already changes starts the next phase, so adding and then removing one link
    /// applies in the request's order, and within a phase the statements commute. A removal that removed
    /// nothing while the link still exists for the requester is `forbidden`, as on the one-row path.
    ///
    /// Returns the changes that added or removed a link: adding one that exists, or removing one that is
    /// gone, changes nothing and goes into no one's history.
    @discardableResult
    func applyLinks(_ changes: [LinkChange], _ renderer: SQLRenderer, _ connection: EngineConnection) async throws -> Set<LinkChange> {
        var applied = Set<LinkChange>()
        var keys: [LinkKey] = []
        keys.reserveCapacity(changes.count)
        for change in changes {
            let (table, source, destination) = try renderer.joinColumns(of: change)
            // One key per link whichever side names it: the ids in the order of their column names.
            keys.append(source < destination ? LinkKey(table: table, first: change.source, second: change.destination)
                                             : LinkKey(table: table, first: change.destination, second: change.source))
        }
        var batches: [[Int]] = []
        var phase = Set<LinkKey>()
        var open: [LinkGroupKey: Int] = [:]
        for (i, change) in changes.enumerated() {
            if !phase.insert(keys[i]).inserted {
                phase = [keys[i]]
                open = [:]
            }
            let group = LinkGroupKey(entity: change.entity, relationship: change.relationship, isAdded: change.isAdded)
            if let b = open[group], batches[b].count < Self.updateChunkSize {
                batches[b].append(i)
            } else {
                open[group] = batches.count
                batches.append([i])
            }
        }
        for batch in batches {
            let group = batch.map { changes[$0] }
            let first = group[0]
            if group.count == 1 {
                let changed = try await query(try renderer.link(first), on: connection, model: first.entity)
                if !changed.isEmpty {
                    applied.insert(first)
                } else if !first.isAdded, try await !query(try renderer.linkExists(first), on: connection, model: first.entity).isEmpty {
                    throw Self.linkForbidden(first)
                }
                continue
            }
            let changed = try await query(try renderer.links(group), on: connection, model: first.entity)
            var done = Set<LinkPair>(minimumCapacity: changed.count)
            for row in changed {
                let (source, destination) = try row.decode((UUID, UUID).self)
                done.insert(LinkPair(source: source, destination: destination))
            }
            for change in group where done.contains(LinkPair(source: change.source, destination: change.destination)) { applied.insert(change) }
            guard !first.isAdded else { continue }
            let missing = group.filter { !done.contains(LinkPair(source: $0.source, destination: $0.destination)) }
            guard !missing.isEmpty else { continue }
            var existing = Set<LinkPair>()
            for row in try await query(try renderer.existingLinks(missing), on: connection, model: first.entity) {
                let (source, destination) = try row.decode((UUID, UUID).self)
                existing.insert(LinkPair(source: source, destination: destination))
            }
            if let denied = missing.first(where: { existing.contains(LinkPair(source: $0.source, destination: $0.destination)) }) {
                throw Self.linkForbidden(denied)
            }
        }
        return applied
    }

    private static func linkForbidden(_ change: LinkChange) -> PGModelError {
        PGModelError(.forbidden, "this user may not change \(change.entity).\(change.relationship) of this \(change.entity)",
                     model: change.entity, keyPath: change.relationship)
    }

    /// One link of a join table, whichever side names it.
    struct LinkKey: Hashable {
        var table: String
        var first: UUID
        var second: UUID
    }

    /// One link as one side names it.
    struct LinkPair: Hashable {
        var source: UUID
        var destination: UUID
    }

    struct LinkGroupKey: Hashable {
        var entity: String
        var relationship: String
        var isAdded: Bool
    }

    /// `indices` split into batches of one `key` each, in first-seen order, at most `limit` long and never
    /// with one `id` twice: an index whose id its key's open batch already holds closes that batch and
    /// opens the next, so batches run in order apply the changes of one id in the request's order.
    static func batches(of indices: Range<Int>, key: (Int) -> String, id: (Int) -> UUID, limit: Int) -> [[Int]] {
        var batches: [[Int]] = []
        var open: [String: (batch: Int, ids: Set<UUID>)] = [:]
        for i in indices {
            let k = key(i), rowID = id(i)
            if var current = open[k], batches[current.batch].count < limit, !current.ids.contains(rowID) {
                batches[current.batch].append(i)
                open[k] = nil   // keeps the set uniquely referenced while it grows
                current.ids.insert(rowID)
                open[k] = current
            } else {
                open[k] = (batches.count, [rowID])
                batches.append([i])
            }
        }
        return batches
    }
}
