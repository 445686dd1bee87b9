import Foundation
@_spi(PGModelInternals) import PGModelCore
@_spi(PGModelInternals) import PGModelSQL
import PostgresNIO

@_spi(PGModelInternals) extension PostgresStoreEngine {
    /// Applies `request` in one transaction: deletes and batch deletes (with delete rules), then updates,
    /// then inserts, then join-table links — so a model renamed away from a unique value frees it for an
    /// insert in the same save. An insert that meets a uniqueness constraint updates the existing row of
    /// the same owner (SwiftData's upsert) and is reported in ``SaveResult/remappedIdentifiers``; values
    /// unique across all users that another user's row holds are `unique_violation`
    /// (``PGModelError/valueTaken(model:attributes:)``), for an insert and an update alike. Every deleted row,
    /// cascades included, is reported in ``SaveResult/deleted``. Any failure rolls back everything.
    public func save(_ request: SaveRequest, in schema: SchemaDescription, as requester: Requester, on connection: EngineConnection) async throws -> SaveResult {
        guard !request.isEmpty else { return SaveResult() }
        // Before BEGIN: a request the renderer cannot handle fails whole, with a code, and costs no transaction.
        try request.validate(against: schema)
        let renderer = try SQLRenderer(schema: schema, schemaName: schemaName)
        do {
            return try await applySave(request, renderer, as: requester, on: connection)
        } catch let error as PGModelError where error.code == .uniqueViolation {
            // Whichever statement met a constraint across all users (an insert, an upsert's update, an
            // update), the answer is the one that names its model and attributes and nothing else.
            throw error.constraint.flatMap { renderer.valueTaken(constraint: $0, model: error.model) } ?? error
        }
    }

    /// The transaction of ``save(_:in:as:on:)``.
    private func applySave(_ request: SaveRequest, _ renderer: SQLRenderer, as requester: Requester,
                           on connection: EngineConnection) async throws -> SaveResult {
        var doorbell: SQLStatement?
        // Where the commit ends in the WAL, read by the doorbell's statement right behind COMMIT: a
        // standby that has replayed that far shows the save (read-your-writes on a replica).
        var commitLSN: LogSequenceNumber?
        // Inserts without RETURNING leave their last statement in flight while history is gathered
        // and its first chunk built; every statement that reads rows waits for it first. A small save's
        // history is sent ahead behind it, and the transaction awaits all of them with its COMMIT.
        var pipeline = StatementPipeline()
        var saved = try await transaction(as: requester, on: connection, outstanding: { pipeline.takeOutstanding() },
                                          afterCommit: { doorbell }, committed: { rows in
            commitLSN = rows.first.flatMap { try? $0.decode((String?, String?).self).1 }.flatMap(LogSequenceNumber.init)
        }) {
            var result = SaveResult()
            var history = HistoryLog()
            // Every update is one change (deletes and links mostly touch rows named there too); room for
            // the inserts is made once they are written, when the statements' arrays are gone.
            history.reserveCapacity(inserts: 0, others: request.updates.count)
            // Rows this save's deletes removed, cascades included: an update of one of them is moot.
            // Keyed by hierarchy and id: ids are the clients' and may repeat across hierarchies.
            var deletedRows = Set<RowKey>()
            // The link changes that added or removed a link: only those are history.
            var linked = Set<LinkChange>()
            let rowKey = renderer.schema.rowKeyer()
            func deletedKey(_ entity: String, _ id: UUID) -> RowKey { rowKey(entity, id) }
            // What the save's first write of each attribute replaced, by row: compared with what the
            // saving context read, and kept in history.
            var replaced: [RowKey: [String: PGValue]] = [:]
            // Under `.error`, every model someone else changed or deleted: thrown together, nothing written.
            var conflicts: [SaveConflict] = []
            if !request.deletes.isEmpty || !request.batchDeletes.isEmpty {
                // The graph as the app left it decides what a delete cascades to: children moved to another
                // parent (and links removed) in this save are out of the deleted row's reach before it goes.
                let moves = foreignKeyMoves(in: request.updates, renderer)
                if !moves.isEmpty {
                    for (key, row) in try await applyUpdates(moves, renderer, connection, returning: .replacedValues) { replaced[key] = row.replaced }
                }
                let unlinks = request.links.filter { !$0.isAdded }
                if !unlinks.isEmpty { linked = try await applyLinks(unlinks, renderer, connection) }
                var deleting = request
                let changed = try await changedBeforeDelete(request, renderer, connection)
                if !changed.isEmpty {
                    switch request.mergePolicy {
                    case .error:
                        conflicts += changed
                    case .mergeByPropertyStoreTrump:
                        // The other side's change wins: the row stays.
                        let kept = Set(changed.map { rowKey($0.entity, $0.id) })
                        deleting.deletes.removeAll { kept.contains(rowKey($0.entity, $0.id)) }
                        result.dropped += changed.map { RowReference(entity: $0.entity, id: $0.id) }
                    default:
                        break
                    }
                }
                let (deleted, nullified) = try await applyDeletes(deleting, renderer, connection)
                deletedRows = Set(deleted.lazy.map { deletedKey($0.reference.entity, $0.reference.id) })
                result.deleted = deleted.map(\.reference)
                for row in nullified {
                    history.record(.update, row.reference.entity, row.reference.id, owner: row.owner, values: [row.relationship: .null],
                                   previous: [row.relationship: .uuid(row.target)])
                }
                for row in deleted {
                    history.record(.delete, row.reference.entity, row.reference.id, owner: row.owner, tombstone: row.tombstone, audience: row.audience)
                }
            }
            if !request.updates.isEmpty {
                let updates = deletedRows.isEmpty ? request.updates : request.updates.filter { !deletedRows.contains(deletedKey($0.entity, $0.id)) }
                // Each row whole, as this save leaves it: the saving context shows what others changed too.
                let updated = try await applyUpdates(updates, renderer, connection, returning: .replacedAndStored)
                var written: [RowValues] = []
                written.reserveCapacity(updates.count)
                for row in updates {
                    let key = rowKey(row.entity, row.id)
                    if let done = updated[key] {
                        // A foreign key a move set first: what the move replaced is what this update replaced.
                        if let earlier = replaced[key] {
                            replaced[key] = earlier.merging(done.replaced) { first, _ in first }
                        } else {
                            replaced[key] = done.replaced
                        }
                        written.append(row)
                        continue
                    }
                    // Row-level security hides what the user may not see, and a row they see but may not
                    // change is not updated: only the second is `forbidden`, so nobody learns of others' rows.
                    if try await exists(RowReference(entity: row.entity, id: row.id), renderer, connection) {
                        throw PGModelError(.forbidden, "this user may not change this \(row.entity): it is shared read-only or belongs to another user",
                                           model: row.entity)
                    }
                    // Gone since the context read it: a conflict under `.error`, else the update is dropped.
                    // Without an ancestor (a client that does not track what it read), as it always was.
                    guard row.ancestor != nil else {
                        throw PGModelError(.notFound, "an updated \(row.entity) no longer exists", model: row.entity)
                    }
                    if request.mergePolicy == .error {
                        conflicts.append(SaveConflict(entity: row.entity, id: row.id, kind: .deleted))
                    } else {
                        result.dropped.append(RowReference(entity: row.entity, id: row.id))
                    }
                }
                let resolution = resolve(written, replaced: replaced, rowKey: rowKey, request, renderer)
                conflicts += resolution.conflicts
                if !conflicts.isEmpty { throw Self.saveConflict(conflicts) }
                var corrections: [RowKey: [String: PGValue]] = [:]
                if !resolution.corrections.isEmpty {
                    _ = try await applyUpdates(resolution.corrections, renderer, connection)
                    for row in resolution.corrections { corrections[rowKey(row.entity, row.id)] = row.values }
                    result.merged = resolution.corrections
                }
                for row in written {
                    let key = rowKey(row.entity, row.id)
                    var values = row.values
                    if let corrected = corrections[key] { values.merge(corrected) { _, new in new } }
                    history.record(.update, row.entity, row.id, owner: updated[key]?.owner ?? nil, values: values,
                                   previous: replaced[key].map { before in before.filter { values[$0.key] != nil } })
                }
                result.stored = try storedRows(written, updated, corrections: corrections, rowKey: rowKey, renderer)
            }
            if !conflicts.isEmpty { throw Self.saveConflict(conflicts) }
            let owners = try await insertOwners(request, renderer, requester, connection)
            do {
                let outcomes = try await applyInserts(request, owners, renderer, requester, connection, &pipeline)
                // The inserts' ids are read from the request's rows: no copy of them in the log.
                history.reserveCapacity(inserts: 0, others: outcomes.merged.count)
                history.insertsCome(from: request.inserts)
                // History and remapped ids in the request's order, as if each row had been inserted in turn.
                // By index: a row's fields are read in place, not each row copied.
                for i in request.inserts.indices {
                    let owner = i < outcomes.owners.count ? outcomes.owners[i] : requester.newRowOwner
                    if let existing = outcomes.merged[i] {
                        let id = request.inserts[i].id
                        if existing != id { result.remappedIdentifiers[id] = existing }
                        let values = request.inserts[i].values
                        history.record(.update, request.inserts[i].entity, existing, owner: owner, values: values,
                                       previous: outcomes.replaced[i].map { before in before.filter { values[$0.key] != nil } })
                    } else {
                        history.recordInsert(ofRow: i, owner: owner)
                    }
                }
                if !request.links.isEmpty || !request.shares.isEmpty { try await pipeline.drain() }
            } catch {
                throw await pipeline.settle(after: error)
            }
            if !request.links.isEmpty {
                var sourceOwners = owners
                let unknown = request.links.filter { sourceOwners[rowKey($0.entity, $0.source)] == nil }
                    .map { RowReference(entity: $0.entity, id: $0.source) }
                for (key, owner) in try await existingOwners(unknown, renderer, connection) { sourceOwners[key] = owner }
                // Links removed before the deletes are not removed again; links of deleted rows went with them.
                func isGone(_ change: LinkChange) -> (source: Bool, destination: Bool) {
                    guard !deletedRows.isEmpty else { return (false, false) }
                    let destination = renderer.schema.entity(named: change.entity)?.relationship(named: change.relationship)?.destination
                    return (deletedRows.contains(deletedKey(change.entity, change.source)),
                            destination.map { deletedRows.contains(deletedKey($0, change.destination)) } ?? false)
                }
                let links = request.deletes.isEmpty && request.batchDeletes.isEmpty
                    ? request.links
                    : request.links.filter { change in
                        let gone = isGone(change)
                        return change.isAdded && !gone.source && !gone.destination
                    }
                if !links.isEmpty { linked.formUnion(try await applyLinks(links, renderer, connection)) }
                for change in request.links where linked.contains(change) && !isGone(change).source {
                    let owner = sourceOwners[rowKey(change.entity, change.source)] ?? requester.newRowOwner
                    history.record(.update, change.entity, change.source, owner: owner, values: [:], attributes: [change.relationship])
                }
            }
            // A share or revocation writes the grantee's audience events, so the history's own doorbell
            // names the classes it makes appear or disappear; a new permission changes nothing visible.
            try await applyShares(request.shares, renderer, requester, connection, &history)
            do {
                doorbell = try await writeHistory(history, request: request, as: requester, on: connection, &pipeline)
            } catch {
                throw await pipeline.settle(after: error)
            }
            return result
        }
        saved.commitLSN = commitLSN
        return saved
    }

    /// The foreign keys among `updates`' values (to-one relationships stored in the row's own table), as
    /// updates of their own: applied before a save's deletes, so re-parenting takes effect before delete
    /// rules follow the relationships.
    func foreignKeyMoves(in updates: [RowValues], _ renderer: SQLRenderer) -> [RowValues] {
        var keysByEntity: [String: [String]] = [:]
        var moves: [RowValues] = []
        for row in updates {
            let keys: [String]
            if let known = keysByEntity[row.entity] {
                keys = known
            } else {
                guard let entity = renderer.schema.entity(named: row.entity) else { continue }
                keys = entity.relationships.compactMap { relationship in
                    if case .foreignKey = renderer.schema.storage(of: relationship, in: entity) { return relationship.name }
                    return nil
                }
                keysByEntity[row.entity] = keys
            }
            var values: [String: PGValue] = [:]
            for key in keys { if let value = row[key] { values[key] = value } }
            if !values.isEmpty { moves.append(RowValues(entity: row.entity, id: row.id, values: values)) }
        }
        return moves
    }

    /// The rows `written` updated, whole, as the save leaves them (``SaveResult/stored``): what each update
    /// returned of the row, with `corrections` written over it. One shape per class, a row once.
    private func storedRows(_ written: [RowValues], _ updated: [RowKey: UpdatedRow], corrections: [RowKey: [String: PGValue]],
                            rowKey: (String, UUID) -> RowKey, _ renderer: SQLRenderer) throws -> FetchedTable {
        var table = FetchedTable()
        var shapes: [String: (index: Int, positions: [String: Int])] = [:]
        var seen = Set<RowKey>(minimumCapacity: written.count)
        table.rows.reserveCapacity(written.count)
        for row in written {
            let key = rowKey(row.entity, row.id)
            guard let done = updated[key], var values = done.stored, seen.insert(key).inserted else { continue }
            let shape: (index: Int, positions: [String: Int])
            if let known = shapes[row.entity] {
                shape = known
            } else {
                let names = try renderer.storedColumns(of: row.entity).map(\.name)
                var positions: [String: Int] = [:]
                for (i, name) in names.enumerated() { positions[name] = i }
                shape = (table.shapes.count, positions)
                shapes[row.entity] = shape
                table.shapes.append(FetchedTable.Shape(entity: row.entity, keys: names))
            }
            guard values.count == table.shapes[shape.index].keys.count else { continue }
            for (name, value) in corrections[key] ?? [:] {
                if let i = shape.positions[name] { values[i] = value }
            }
            table.rows.append(FetchedTable.Row(shape: shape.index, id: row.id, values: values))
        }
        return table
    }

    /// What became of an inserted row: inserted, or merged into an existing row with its unique values
    /// (with the values the merge replaced there, for history).
    enum InsertOutcome {
        case inserted(owner: UUID?)
        case merged(into: UUID, owner: UUID?, replaced: [String: PGValue])
    }

    /// What became of a save's inserted rows, by their index in the request: each row's owner, and the
    /// existing row each merged one went into (the rest were inserted) with what it replaced there. Not
    /// one ``InsertOutcome`` per row: a large save would hold one per row, for the few upserts.
    struct InsertOutcomes {
        var owners: [UUID?]
        var merged: [Int: UUID] = [:]
        var replaced: [Int: [String: PGValue]] = [:]

        mutating func set(_ i: Int, _ outcome: InsertOutcome) {
            switch outcome {
            case .inserted(let owner):
                owners[i] = owner
                merged[i] = nil
                replaced[i] = nil
            case .merged(let existing, let owner, let before):
                owners[i] = owner
                merged[i] = existing
                replaced[i] = before
            }
        }
    }

    /// The most rows one set-based insert statement carries: bounds the message and the memory of its binds.
    static let insertChunkSize = 5_000

    /// Inserts the request's rows set-based: one statement per hierarchy table (per class where the table has
    /// no uniqueness constraints, so errors name the class) and per kind of row (the requester's own, or
    /// children of a record shared with them), each column one array parameter. A group of one row is the
    /// one-row statement, so a one-model save costs what it always did. A row the set-based insert skipped
    /// (it met a uniqueness constraint) takes the one-row path: SwiftData's upsert, or the error.
    /// Foreign keys are checked at commit, so the order of the groups does not matter.
    /// A statement without RETURNING goes through `pipeline`: the next chunk is built while it runs, and
    /// the last one may still run when this returns.
    private func applyInserts(_ request: SaveRequest, _ owners: [RowKey: UUID?], _ renderer: SQLRenderer, _ requester: Requester,
                              _ connection: EngineConnection, _ pipeline: inout StatementPipeline) async throws -> InsertOutcomes {
        let rows = request.inserts
        var rowOwners = [UUID?](repeating: nil, count: rows.count)
        var groups: [(key: InsertGroupKey, indices: [Int])] = []
        var groupIndex: [InsertGroupKey: Int] = [:]
        var constrainedTables: [String: Bool] = [:]
        let ownerKey = renderer.schema.rowKeyer()
        // A row's group follows from its class and owner: most rows share the previous row's.
        var last: (entity: String, owner: UUID?, group: Int)?
        for i in rows.indices {
            let row = (id: rows[i].id, entity: rows[i].entity)
            let owner = owners.isEmpty ? requester.newRowOwner : owners[ownerKey(row.entity, row.id)] ?? requester.newRowOwner
            rowOwners[i] = owner
            if let last, last.entity == row.entity, last.owner == owner {
                groups[last.group].indices.append(i)
                continue
            }
            // A child of a record shared with the user: it belongs to the record's owner, whose rows the
            // user may not read back until the row is linked, so no RETURNING and no upsert.
            let upserting = !(requester.userID != nil && owner != requester.userID && !requester.isAdmin)
            let table = renderer.schema.tableName(of: row.entity) ?? row.entity
            let constrained: Bool
            if let known = constrainedTables[table] { constrained = known } else {
                constrained = renderer.schema.entityNames(inHierarchyOf: renderer.schema.rootEntity(of: row.entity)?.name ?? row.entity)
                    .contains { !(renderer.schema.entity(named: $0)?.uniquenessConstraints.isEmpty ?? true) }
                constrainedTables[table] = constrained
            }
            // Rows that may meet a uniqueness constraint keep their order across classes; others group by class.
            let key = InsertGroupKey(table: table, entity: upserting && constrained ? nil : row.entity, upserting: upserting)
            if let g = groupIndex[key] {
                groups[g].indices.append(i)
                last = (row.entity, owner, g)
            } else {
                groupIndex[key] = groups.count
                last = (row.entity, owner, groups.count)
                groups.append((key, [i]))
            }
        }
        // Every row is inserted with the owner worked out above unless it merges (below).
        var outcomes = InsertOutcomes(owners: rowOwners)
        rowOwners = []
        for (key, indices) in groups {
            var start = 0
            while start < indices.count {
                let chunk = Array(indices[start..<min(start + Self.insertChunkSize, indices.count)])
                start += chunk.count
                let model = key.entity ?? renderer.schema.rootEntity(of: rows[chunk[0]].entity)?.name ?? rows[chunk[0]].entity
                let statement = chunk.count > 1
                    ? try renderer.insert(chunk.map { rows[$0] }, owners: chunk.map { outcomes.owners[$0] }, upserting: key.upserting) : nil
                guard let statement else {
                    try await pipeline.drain()
                    for i in chunk {
                        let outcome = try await insertOne(rows[i], owner: outcomes.owners[i], upserting: key.upserting, renderer, connection)
                        outcomes.set(i, outcome)
                    }
                    continue
                }
                // Without a uniqueness constraint every row is inserted or the statement fails: no ids back.
                guard renderer.insertReturnsIDs(of: Set(chunk.lazy.map { rows[$0].entity }), upserting: key.upserting) else {
                    try await pipeline.send(statement, self, on: connection, model: model)
                    continue
                }
                try await pipeline.drain()
                var inserted = Set<UUID>(minimumCapacity: chunk.count)
                for row in try await query(statement, on: connection, model: model) { inserted.insert(try row.decode(UUID.self)) }
                for i in chunk {
                    let row = rows[i], owner = outcomes.owners[i]
                    // `remove`: of two rows with one id, only the first was inserted.
                    if inserted.remove(row.id) != nil {
                        continue
                    } else if try renderer.uniquenessConstraints(of: renderer.entity(row.entity)).isEmpty {
                        // Only its id can have collided: the one-row insert reports it as it always did.
                        let outcome = try await insertOne(row, owner: owner, upserting: true, renderer, connection)
                        outcomes.set(i, outcome)
                    } else {
                        let outcome = try await upsert(row, owner: owner, renderer, connection)
                        outcomes.set(i, outcome)
                    }
                }
            }
        }
        return outcomes
    }

    struct InsertGroupKey: Hashable {
        var table: String
        var entity: String?
        var upserting: Bool
    }

    /// The one-row insert: the statement a save of one model sends, then the upsert if it met a constraint.
    private func insertOne(_ row: RowValues, owner: UUID?, upserting: Bool, _ renderer: SQLRenderer,
                           _ connection: EngineConnection) async throws -> InsertOutcome {
        guard upserting else {
            try await execute(try renderer.insert(row, owner: owner, upserting: false), on: connection, model: row.entity)
            return .inserted(owner: owner)
        }
        let inserted = try await query(try renderer.insert(row, owner: owner), on: connection, model: row.entity)
        if !inserted.isEmpty { return .inserted(owner: owner) }
        return try await upsert(row, owner: owner, renderer, connection)
    }

    /// SwiftData's upsert of an inserted row that met a uniqueness constraint: the row of the same owner with
    /// its unique values takes its attributes.
    ///
    /// Where the class has a constraint across all users and no row of the owner matched, the values are
    /// held by a row the user may not change (another user's, seen or not): the row is inserted again
    /// without `ON CONFLICT`, so PostgreSQL names the constraint it breaks and the save fails with the
    /// one answer for it (``SQLRenderer/valueTaken(constraint:model:)``), read the same whoever holds the
    /// value. `INSERT … ON CONFLICT DO UPDATE` is never used: against a row the update policy of row-level
    /// security hides it raises an error of its own instead of skipping it.
    private func upsert(_ row: RowValues, owner: UUID?, _ renderer: SQLRenderer, _ connection: EngineConnection) async throws -> InsertOutcome {
        guard let upsert = try renderer.upsertUpdate(row, owner: owner) else {
            throw PGModelError(.uniqueViolation, "an inserted \(row.entity) collides with an existing row's id", model: row.entity)
        }
        let merged = try await query(upsert, on: connection, model: row.entity)
        guard let first = merged.first else {
            if renderer.hasGlobalUniqueness(try renderer.entity(row.entity)) {
                // Fails (ending the save) unless the row holding the values went away meanwhile.
                try await execute(try renderer.insert(row, owner: owner, upserting: false), on: connection, model: row.entity)
                return .inserted(owner: owner)
            }
            throw PGModelError(.uniqueViolation,
                "an inserted \(row.entity) has the unique values of a row this user cannot change", model: row.entity)
        }
        var cells = first.makeIterator()
        guard let idCell = cells.next() else {
            throw PGModelError(.internalError, "an upsert returned fewer columns than it names")
        }
        // What the merge replaced in the existing row: history keeps it, as for any update.
        var replaced: [String: PGValue] = [:]
        for column in try renderer.storedColumns(of: row.entity) {
            guard let cell = cells.next() else {
                throw PGModelError(.internalError, "an upsert returned fewer columns than it names")
            }
            replaced[column.name] = try PostgresValueCoding.decode(cell, as: column.type)
        }
        return .merged(into: try idCell.decode(UUID.self), owner: owner, replaced: replaced)
    }

    /// The owner of each inserted row that goes into a `.cascade` relationship of another record in this
    /// save (a child's foreign key, a parent's to-one, a link): that record's owner, so a child a user
    /// adds to a record shared with them belongs to the record's owner and stays in the share.
    private func insertOwners(_ request: SaveRequest, _ renderer: SQLRenderer, _ requester: Requester,
                              _ connection: EngineConnection) async throws -> [RowKey: UUID?] {
        let schema = renderer.schema
        let parents = schema.cascadeParents(in: request)
        guard !parents.isEmpty else { return [:] }
        // Keyed by hierarchy and id: a child may have the id of its parent, or of any other row.
        let key = schema.rowKeyer()
        let inserted = Set(request.inserts.map { key($0.entity, $0.id) })
        let outside = Set(parents.values.filter { !inserted.contains(key($0.entity, $0.id)) })
        let known = try await existingOwners(Array(outside), renderer, connection)
        var owners: [RowKey: UUID?] = [:]
        func owner(of child: RowKey, depth: Int) -> UUID? {
            if let cached = owners[child] { return cached }
            guard depth < 64, let parent = parents[child] else { return requester.newRowOwner }
            let parentKey = key(parent.entity, parent.id)
            let result: UUID?
            if inserted.contains(parentKey) {
                result = owner(of: parentKey, depth: depth + 1)
            } else if let existing = known[parentKey] {
                result = existing
            } else {
                result = requester.newRowOwner
            }
            owners[child] = .some(result)
            return result
        }
        for row in request.inserts {
            let rowKey = key(row.entity, row.id)
            if parents[rowKey] != nil { _ = owner(of: rowKey, depth: 0) }
        }
        return owners
    }

    /// The owners of existing rows the connection can see, by hierarchy and id.
    private func existingOwners(_ references: [RowReference], _ renderer: SQLRenderer,
                                _ connection: EngineConnection) async throws -> [RowKey: UUID?] {
        var byRoot: [String: [UUID]] = [:]
        for reference in references {
            guard let root = renderer.schema.rootEntity(of: reference.entity) else { continue }
            byRoot[root.name, default: []].append(reference.id)
        }
        var result: [RowKey: UUID?] = [:]
        for (root, ids) in byRoot.sorted(by: { $0.key < $1.key }) {
            for row in try await query(try renderer.owners(of: root, ids: ids), on: connection, model: root) {
                let (id, owner, _) = try row.decode((UUID, UUID?, String).self)
                result[RowKey(root: root, id: id)] = .some(owner)
            }
        }
        return result
    }

    /// Applies shares and revocations: each names a record the requester owns (or any, for an admin or
    /// the direct store) and an existing user; anything else fails the whole save.
    private func applyShares(_ changes: [ShareChange], _ renderer: SQLRenderer, _ requester: Requester,
                             _ connection: EngineConnection, _ history: inout HistoryLog) async throws {
        let sql = ShareSQL(schemaName: schemaName)
        for change in changes {
            let entity = try renderer.entity(change.record.entity)
            guard let root = renderer.schema.rootEntity(of: entity.name) else { continue }
            let rows = try await query(try renderer.owners(of: root.name, ids: [change.record.id]), on: connection, model: entity.name)
            guard let row = rows.first else {
                throw PGModelError(.notFound, "the \(entity.name) to share does not exist", model: entity.name)
            }
            let (_, owner, concrete) = try row.decode((UUID, UUID?, String).self)
            if let me = requester.userID, !requester.isAdmin, owner != me {
                throw PGModelError(.forbidden, "only the owner of this \(entity.name) (or an admin) may share it or revoke its shares", model: entity.name)
            }
            let users = try await query(sql.userID(named: change.user), on: connection, model: entity.name)
            guard let grantee = try users.first?.decode(UUID.self) else {
                throw PGModelError(.notFound, "sharing a \(entity.name) names a user that does not exist", model: entity.name)
            }
            if grantee == owner {
                throw PGModelError(.invalidField, "a \(entity.name) cannot be shared with its owner", model: entity.name)
            }
            let changed: Bool
            if let permission = change.permission {
                let rows = try await query(sql.grant(record: change.record, root: root.name, concrete: concrete, owner: owner, grantee: grantee,
                                                     permission: permission, grantedBy: requester.userName), on: connection, model: entity.name)
                changed = try rows.first?.decode(Bool.self) ?? false   // a new share, not a new permission
            } else {
                changed = try await !query(sql.revoke(record: change.record, root: root.name, grantee: grantee), on: connection, model: entity.name).isEmpty
            }
            // The grantee's history: the record and what it owns appear (a share) or disappear (a revocation).
            if changed {
                let kind: HistoryChangeRecord.Kind = change.permission == nil ? .delete : .insert
                history.recordAudienceEvent(kind, concrete, change.record.id, for: grantee)
                for member in try await query(renderer.shareMembers(of: change.record.id, rootEntity: root.name, owner: owner),
                                              on: connection, model: entity.name) {
                    let (id, memberEntity) = try member.decode((UUID, String).self)
                    history.recordAudienceEvent(kind, memberEntity, id, for: grantee)
                }
            }
        }
    }

    /// Deletes the requested rows and every row `.cascade` relationships reach (as far as the requester may),
    /// after checking `.deny` relationships, set-based: one statement per class and relationship per wave.
    /// Returns every deleted row.
    private func applyDeletes(_ request: SaveRequest, _ renderer: SQLRenderer,
                              _ connection: EngineConnection) async throws -> (deleted: [DeletedRow], nullified: [NullifiedRow]) {
        let schema = renderer.schema
        // Rows are keyed by hierarchy and id: ids are the clients' and may repeat across hierarchies.
        let key = schema.rowKeyer()
        var targets: [RowKey: String] = [:]   // row → concrete class
        var order: [RowKey] = []
        func add(_ id: UUID, _ entity: String) -> Bool {
            let row = key(entity, id)
            guard targets[row] == nil else { return false }
            targets[row] = entity
            order.append(row)
            return true
        }
        // 1. The requested rows, locked, as the classes the database says they are.
        var byTable: [(root: String, references: [RowReference])] = []
        for reference in request.deletes {
            let root = schema.rootEntity(of: reference.entity)?.name ?? reference.entity
            if let i = byTable.firstIndex(where: { $0.root == root }) { byTable[i].references.append(reference) }
            else { byTable.append((root, [reference])) }
        }
        for (root, references) in byTable {
            let rows = try await query(try renderer.lockRows(of: root, ids: references.map(\.id)), on: connection, model: root)
            var found = Set<UUID>()
            for row in rows {
                let (id, entity) = try row.decode((UUID, String).self)
                found.insert(id)
                _ = add(id, entity)
            }
            // Deleting a row that is already gone (or that row-level security hides) is not an error:
            // another context won the race. Deleting a row the user sees but may not change is.
            // One lookup for all of them: the first one visible, in the request's order, is the error.
            let missing = references.filter { !found.contains($0.id) }
            if !missing.isEmpty {
                let visible = try await existingOwners(missing, renderer, connection)
                if let denied = missing.first(where: { visible[key($0.entity, $0.id)] != nil }) {
                    throw PGModelError(.forbidden, "this user may not delete this \(denied.entity): it is shared read-only or belongs to another user",
                                       model: denied.entity)
                }
            }
        }
        for fetch in request.batchDeletes {
            for row in try await query(try renderer.selectForDelete(fetch), on: connection, model: fetch.entity) {
                let cells = row.makeRandomAccess()
                _ = add(try cells[0].decode(UUID.self), try cells[1].decode(String.self))
            }
        }
        // 2. Cascades, wave by wave, until no new row is reached (the visited set ends cycles).
        var frontier = order
        while !frontier.isEmpty {
            var next: [RowKey] = []
            for (entityName, ids) in group(frontier, targets) {
                guard let entity = schema.entity(named: entityName) else { continue }
                for relationship in entity.relationships where relationship.deleteRule == .cascade {
                    let statement = try renderer.relatedRows(relationship.name, of: entity.name, ids: ids)
                    for row in try await query(statement, on: connection, model: entity.name) {
                        let (id, concrete) = try row.decode((UUID, String).self)
                        if add(id, concrete) { next.append(key(concrete, id)) }
                    }
                }
            }
            frontier = next
        }
        guard !order.isEmpty else { return ([], []) }
        // 3. Deny rules: related rows that this save does not delete too.
        for (entityName, ids) in group(order, targets) {
            guard let entity = schema.entity(named: entityName) else { continue }
            for relationship in entity.relationships where relationship.deleteRule == .deny {
                let destinationRoot = schema.rootEntity(of: relationship.destination)?.name ?? relationship.destination
                let excluded = order.lazy.filter { $0.root == destinationRoot }.map(\.id)
                let statement = try renderer.countRelated(relationship.name, of: entity.name, ids: ids, excluding: Array(excluded))
                let count = try await query(statement, on: connection, model: entity.name).first?.decode(Int64.self) ?? 0
                if count > 0 {
                    throw PGModelError(.deleteDenied,
                        "cannot delete \(entity.name): its relationship '\(relationship.name)' (deleteRule .deny) still reaches \(count) \(relationship.destination)",
                        model: entity.name, keyPath: relationship.name)
                }
            }
        }
        // 4. The deletes, one statement per hierarchy table; foreign keys nullify, join rows cascade.
        var deleted: [DeletedRow] = []
        var byRoot: [(root: String, ids: [UUID])] = []
        for (entity, ids) in group(order, targets) {
            let root = schema.rootEntity(of: entity)?.name ?? entity
            if let i = byRoot.firstIndex(where: { $0.root == root }) { byRoot[i].ids += ids } else { byRoot.append((root, ids)) }
        }
        // References the deletes will set to NULL (`.nullify`, the foreign keys' ON DELETE SET NULL), for
        // history: read before the rows go.
        var nullified: [NullifiedRow] = []
        for (root, ids) in byRoot {
            for statement in try renderer.referencingRows(to: root, ids: ids) {
                for row in try await query(statement.statement, on: connection, model: root) {
                    let (id, entity, owner, target) = try row.decode((UUID, String, UUID?, UUID).self)
                    guard targets[key(entity, id)] == nil else { continue }
                    nullified.append(NullifiedRow(reference: RowReference(entity: entity, id: id), owner: owner,
                                                  relationship: statement.relationship, target: target))
                }
            }
        }
        // Deepest tables first (cascade waves reach them last): a share reaches a child through its
        // parent, so a grantee may delete the child only while the parent is still there.
        // Who else sees these rows through shares: their history shows the deletes too.
        var audience: [RowKey: [UUID]] = [:]
        for row in try await query(renderer.shareAudience(of: order.map(\.id), roots: order.map(\.root)), on: connection) {
            let (root, id, grantees) = try row.decode((String, UUID, [UUID]).self)
            audience[RowKey(root: root, id: id)] = grantees
        }
        for (root, ids) in byRoot.reversed() {
            let preserved = renderer.preservedAttributes(ofRoot: root)
            for row in try await query(try renderer.deleteRows(of: root, ids: ids), on: connection, model: root) {
                let cells = row.makeRandomAccess()
                let id = try cells[0].decode(UUID.self)
                let entity = try cells[1].decode(String.self)
                let rowOwner = try cells[2].decode(UUID?.self)
                var tombstone: [String: PGValue] = [:]
                for (offset, attribute) in preserved.enumerated() {
                    tombstone[attribute.name] = try PostgresValueCoding.decodeInPlace(cells[3 + offset], as: attribute.type)
                }
                deleted.append(DeletedRow(reference: RowReference(entity: entity, id: id), owner: rowOwner, tombstone: tombstone,
                                          audience: audience[RowKey(root: root, id: id)] ?? []))
            }
        }
        // A row the save meant to delete and still sees but could not delete (the root of a record shared
        // with the user, a read-only share) fails the save rather than surviving silently.
        let gone = Set(deleted.map { key($0.reference.entity, $0.reference.id) })
        let survivors = order.compactMap { row in gone.contains(row) ? nil : targets[row].map { RowReference(entity: $0, id: row.id) } }
        if !survivors.isEmpty {
            let visible = try await existingOwners(survivors, renderer, connection)
            if let denied = survivors.first(where: { visible[key($0.entity, $0.id)] != nil }) {
                throw PGModelError(.forbidden, "this user may not delete this \(denied.entity): only its owner deletes a shared record", model: denied.entity)
            }
        }
        return (deleted, nullified)
    }

    /// A row whose reference to a deleted row the delete sets to NULL.
    struct NullifiedRow {
        var reference: RowReference
        var owner: UUID?
        var relationship: String
        /// The deleted row it referenced: what the delete replaces, for history.
        var target: UUID
    }

    /// A row a save deleted, with what history keeps of it.
    struct DeletedRow {
        var reference: RowReference
        var owner: UUID?
        var tombstone: [String: PGValue]
        /// Users the row was shared with.
        var audience: [UUID]
    }

    /// The ids of `rows` grouped by their class, in first-seen order.
    private func group(_ rows: [RowKey], _ classes: [RowKey: String]) -> [(String, [UUID])] {
        var result: [(String, [UUID])] = []
        for row in rows {
            guard let entity = classes[row] else { continue }   // every row was added with its class
            if let i = result.firstIndex(where: { $0.0 == entity }) { result[i].1.append(row.id) } else { result.append((entity, [row.id])) }
        }
        return result
    }

    func exists(_ reference: RowReference, _ renderer: SQLRenderer, _ connection: EngineConnection) async throws -> Bool {
        !(try await query(try renderer.exists(reference), on: connection, model: reference.entity)).isEmpty
    }
}
