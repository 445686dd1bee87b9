import Foundation
import PGModelCore
import PGModelSQL
import PostgresNIO

extension PostgresStoreEngine {
    /// Applies `request` in one transaction: deletes and batch deletes (with delete rules), then updates,
    /// then inserts, then join-table links — so a model renamed away from a unique value frees it for an
    /// insert in the same save. An insert that meets a uniqueness constraint updates the existing row
    /// (SwiftData's upsert) and is reported in ``SaveResult/remappedIdentifiers``. Every deleted row,
    /// cascades included, is reported in ``SaveResult/deleted``. Any failure rolls back everything.
    public func save(_ request: SaveRequest, in schema: SchemaDescription, as requester: Requester, on connection: PostgresConnection) async throws -> SaveResult {
        guard !request.isEmpty else { return SaveResult() }
        let renderer = try SQLRenderer(schema: schema, schemaName: schemaName)
        let visibility = requester.visibility
        return try await transaction(on: connection) {
            var result = SaveResult()
            var history = HistoryLog()
            if !request.deletes.isEmpty || !request.batchDeletes.isEmpty {
                let deleted = try await applyDeletes(request, renderer, visibility, connection)
                result.deleted = deleted.map(\.reference)
                for row in deleted {
                    history.record(.delete, row.reference.entity, row.reference.id, owner: row.owner, tombstone: row.tombstone)
                }
            }
            for row in request.updates {
                let updated = try await query(try renderer.update(row, visibility: visibility), on: connection, model: row.entity)
                if let first = updated.first {
                    let rowOwner = try? first.decode((UUID, UUID?).self).1
                    history.record(.update, row.entity, row.id, owner: rowOwner ?? requester.newRowOwner, values: row.values)
                }
                if updated.isEmpty {
                    if visibility != .allRows, try await exists(RowReference(entity: row.entity, id: row.id), renderer, connection) {
                        throw PGModelError(.forbidden, "this \(row.entity) belongs to another user", model: row.entity)
                    }
                    throw PGModelError(.notFound, "an updated \(row.entity) no longer exists", model: row.entity)
                }
            }
            for row in request.inserts {
                let inserted = try await query(try renderer.insert(row, owner: requester.newRowOwner), on: connection, model: row.entity)
                if !inserted.isEmpty {
                    history.record(.insert, row.entity, row.id, owner: requester.newRowOwner)
                    continue
                }
                guard let upsert = try renderer.upsertUpdate(row, visibility: visibility) else {
                    throw PGModelError(.uniqueViolation, "an inserted \(row.entity) collides with an existing row's id", model: row.entity)
                }
                let merged = try await query(upsert, on: connection, model: row.entity)
                guard let first = merged.first else {
                    throw PGModelError(.uniqueViolation,
                        "an inserted \(row.entity) has the unique values of a row this user cannot change", model: row.entity)
                }
                let existing = try first.decode(UUID.self)
                if existing != row.id { result.remappedIdentifiers[row.id] = existing }
                history.record(.update, row.entity, existing, owner: requester.newRowOwner, values: row.values)
            }
            for change in request.links {
                if case .ownedBy(let owner) = visibility {
                    let rows = try await query(try renderer.linkEndsOwned(change, ownerID: owner), on: connection, model: change.entity)
                    guard let row = rows.first, try row.decode(Bool.self) else {
                        throw PGModelError(.forbidden, "a link of \(change.entity).\(change.relationship) names a row this user does not own",
                                           model: change.entity, keyPath: change.relationship)
                    }
                }
                try await execute(try renderer.link(change), on: connection, model: change.entity)
                history.record(.update, change.entity, change.source, owner: requester.newRowOwner, values: [:], attributes: [change.relationship])
            }
            try await writeHistory(history, request: request, as: requester, on: connection)
            return result
        }
    }

    /// Deletes the requested rows and every row `.cascade` relationships reach (the caller's own rows only),
    /// after checking `.deny` relationships, set-based: one statement per class and relationship per wave.
    /// Returns every deleted row.
    private func applyDeletes(_ request: SaveRequest, _ renderer: SQLRenderer, _ visibility: RowVisibility,
                              _ connection: PostgresConnection) async throws -> [DeletedRow] {
        let schema = renderer.schema
        var targets: [UUID: String] = [:]   // id → concrete class
        var order: [UUID] = []
        func add(_ id: UUID, _ entity: String) -> Bool {
            guard targets[id] == nil else { return false }
            targets[id] = entity
            order.append(id)
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
            let rows = try await query(try renderer.lockRows(of: root, ids: references.map(\.id), visibility: visibility), on: connection, model: root)
            var found = Set<UUID>()
            for row in rows {
                let (id, entity) = try row.decode((UUID, String).self)
                found.insert(id)
                _ = add(id, entity)
            }
            // Deleting a row that is already gone is not an error (another context won the race);
            // deleting someone else's row is.
            if visibility != .allRows {
                for reference in references where !found.contains(reference.id) {
                    if try await exists(reference, renderer, connection) {
                        throw PGModelError(.forbidden, "this \(reference.entity) belongs to another user", model: reference.entity)
                    }
                }
            }
        }
        for fetch in request.batchDeletes {
            for row in try await query(try renderer.selectForDelete(fetch, visibility: visibility), on: connection, model: fetch.entity) {
                let cells = row.makeRandomAccess()
                _ = add(try cells[0].decode(UUID.self), try cells[1].decode(String.self))
            }
        }
        // 2. Cascades, wave by wave, until no new row is reached (the visited set ends cycles).
        var frontier = order
        while !frontier.isEmpty {
            var next: [UUID] = []
            for (entityName, ids) in group(frontier, targets) {
                guard let entity = schema.entity(named: entityName) else { continue }
                for relationship in entity.relationships where relationship.deleteRule == .cascade {
                    let statement = try renderer.relatedRows(relationship.name, of: entity.name, ids: ids, visibility: visibility)
                    for row in try await query(statement, on: connection, model: entity.name) {
                        let (id, concrete) = try row.decode((UUID, String).self)
                        if add(id, concrete) { next.append(id) }
                    }
                }
            }
            frontier = next
        }
        guard !order.isEmpty else { return [] }
        // 3. Deny rules: related rows that this save does not delete too.
        for (entityName, ids) in group(order, targets) {
            guard let entity = schema.entity(named: entityName) else { continue }
            for relationship in entity.relationships where relationship.deleteRule == .deny {
                let statement = try renderer.countRelated(relationship.name, of: entity.name, ids: ids, excluding: order, visibility: visibility)
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
        for (root, ids) in byRoot {
            let preserved = renderer.preservedAttributes(ofRoot: root)
            for row in try await query(try renderer.deleteRows(of: root, ids: ids, visibility: visibility), on: connection, model: root) {
                let cells = row.makeRandomAccess()
                let id = try cells[0].decode(UUID.self)
                let entity = try cells[1].decode(String.self)
                let rowOwner = try cells[2].decode(UUID?.self)
                var tombstone: [String: PGValue] = [:]
                for (offset, attribute) in preserved.enumerated() {
                    tombstone[attribute.name] = try PostgresValueCoding.decode(cells[3 + offset], as: attribute.type)
                }
                deleted.append(DeletedRow(reference: RowReference(entity: entity, id: id), owner: rowOwner, tombstone: tombstone))
            }
        }
        return deleted
    }

    /// A row a save deleted, with what history keeps of it.
    struct DeletedRow {
        var reference: RowReference
        var owner: UUID?
        var tombstone: [String: PGValue]
    }

    /// `ids` grouped by their class, in first-seen order.
    private func group(_ ids: [UUID], _ classes: [UUID: String]) -> [(String, [UUID])] {
        var result: [(String, [UUID])] = []
        for id in ids {
            guard let entity = classes[id] else { continue }   // every id was added with its class
            if let i = result.firstIndex(where: { $0.0 == entity }) { result[i].1.append(id) } else { result.append((entity, [id])) }
        }
        return result
    }

    private func exists(_ reference: RowReference, _ renderer: SQLRenderer, _ connection: PostgresConnection) async throws -> Bool {
        !(try await query(try renderer.exists(reference), on: connection, model: reference.entity)).isEmpty
    }
}
