import Foundation
@_spi(PGModelInternals) import PGModelCore
@_spi(PGModelInternals) import PGModelSQL
import PostgresNIO

/// Conflict detection by attribute. Every update returns the values it replaced (read under the row's
/// lock, so a concurrent writer's commit is waited for and seen); each is compared with the value the
/// saving context had read (the row's ancestor). Equal: nobody else changed it. Different (even when
/// equal to the new value): the same attribute changed on both sides, and the attribute's ``MergeRule`` or
/// the save's ``MergePolicy`` decides. Attributes only one side changed never meet: each update sets only
/// what its context changed.
@_spi(PGModelInternals) extension PostgresStoreEngine {
    /// What comparing a save's updates with what they replaced decided.
    struct UpdateResolution {
        /// Under ``MergePolicy/error``: the models and attributes changed on both sides.
        var conflicts: [SaveConflict] = []
        /// Values to write over what the updates wrote (the store's value kept, a sum, a union), by row.
        var corrections: [RowValues] = []
    }

    /// Compares each updated row's replaced values with its ancestor. `replaced` holds, by row, what the
    /// save's first write of each attribute replaced.
    func resolve(_ updates: [RowValues], replaced: [RowKey: [String: PGValue]], rowKey: (String, UUID) -> RowKey,
                 _ request: SaveRequest, _ renderer: SQLRenderer) -> UpdateResolution {
        var resolution = UpdateResolution()
        let policy = request.mergePolicy
        for row in updates {
            guard let ancestor = row.ancestor, !ancestor.isEmpty, let before = replaced[rowKey(row.entity, row.id)] else { continue }
            let rules = request.mergeRules[row.entity]
            var attributes: [SaveConflict.Attribute] = []
            var corrected: [String: PGValue] = [:]
            row.forEachValue { key, mine in
                guard let read = ancestor[key], let theirs = before[key], let type = renderer.storedType(of: key, in: row.entity) else { return }
                // A stored value other than the one read is someone else's change, even when it equals
                // this save's: two clients that each read 5 and write 6 made two increments, not one.
                guard !Self.equivalent(theirs, read, as: type) else { return }
                switch rules?[key] {
                case .lastWriter?:
                    return
                case .sum?:
                    if let total = Self.sum(theirs: theirs, mine: mine, ancestor: read) { corrected[key] = total; return }
                case .union?:
                    if let union = Self.union(theirs: theirs, mine: mine, ancestor: read) { corrected[key] = union; return }
                default:
                    break
                }
                switch policy {
                case .error: attributes.append(SaveConflict.Attribute(name: key, mine: mine, theirs: theirs, ancestor: read))
                case .mergeByPropertyStoreTrump: corrected[key] = theirs
                default: return
                }
            }
            if !attributes.isEmpty {
                resolution.conflicts.append(SaveConflict(entity: row.entity, id: row.id, kind: .changed,
                                                         attributes: attributes.sorted { $0.name < $1.name }))
            }
            if !corrected.isEmpty { resolution.corrections.append(RowValues(entity: row.entity, id: row.id, values: corrected)) }
        }
        return resolution
    }

    /// The deletes of `request` whose rows someone else changed since the deleting context read them:
    /// their stored values (locked until the save ends) compared with each reference's ancestor.
    func changedBeforeDelete(_ request: SaveRequest, _ renderer: SQLRenderer, _ connection: EngineConnection) async throws -> [SaveConflict] {
        var byEntity: [String: [RowReference]] = [:]
        var order: [String] = []
        for reference in request.deletes {
            guard let ancestor = reference.ancestor, !ancestor.isEmpty else { continue }
            if byEntity[reference.entity] == nil { order.append(reference.entity) }
            byEntity[reference.entity, default: []].append(reference)
        }
        var conflicts: [SaveConflict] = []
        for entity in order {
            let references = byEntity[entity] ?? []
            var keys = Set<String>()
            for reference in references { for key in reference.ancestor?.keys ?? [:].keys { keys.insert(key) } }
            let rules = request.mergeRules[entity]
            keys = keys.filter { rules?[$0] != .lastWriter }
            let columns = try renderer.lockedValueColumns(of: entity, keys: keys)
            var stored: [UUID: [String: PGValue]] = [:]
            for row in try await query(try renderer.lockedValues(of: entity, ids: references.map(\.id), keys: keys), on: connection, model: entity) {
                var cells = row.makeIterator()
                guard let idCell = cells.next() else { continue }
                var values: [String: PGValue] = [:]
                for column in columns {
                    guard let cell = cells.next() else { break }
                    values[column.name] = try PostgresValueCoding.decode(cell, as: column.type)
                }
                stored[try idCell.decode(UUID.self)] = values
            }
            for reference in references {
                // A row that is gone (or hidden) is the delete's own business: it reports it as before.
                guard let now = stored[reference.id], let ancestor = reference.ancestor else { continue }
                var attributes: [SaveConflict.Attribute] = []
                for column in columns {
                    guard let read = ancestor[column.name], let theirs = now[column.name],
                          !Self.equivalent(theirs, read, as: column.type) else { continue }
                    attributes.append(SaveConflict.Attribute(name: column.name, mine: nil, theirs: theirs, ancestor: read))
                }
                if !attributes.isEmpty {
                    conflicts.append(SaveConflict(entity: reference.entity, id: reference.id, kind: .changedBeforeDelete, attributes: attributes))
                }
            }
        }
        return conflicts
    }

    /// The error a save under ``MergePolicy/error`` throws for `conflicts`; its transaction rolls back.
    static func saveConflict(_ conflicts: [SaveConflict]) -> PGModelError {
        guard let first = conflicts.first else {
            return PGModelError(.internalError, "a save conflict without a conflicting model")
        }
        let names = first.attributes.map(\.name).joined(separator: ", ")
        let what: String
        switch first.kind {
        case .deleted: what = "a \(first.entity) this save changes was deleted by someone else"
        case .changedBeforeDelete: what = "a \(first.entity) this save deletes was changed by someone else (\(names))"
        default: what = "someone else changed \(first.entity).\(names) since this context read it"
        }
        let more = conflicts.count > 1 ? " (and \(conflicts.count - 1) more)" : ""
        return PGModelError(.saveConflict, "\(what)\(more); nothing was saved", model: first.entity,
                            keyPath: first.attributes.first?.name, conflicts: conflicts)
    }

    /// Whether two values of one attribute are the same stored value (``PGValue/isStoredEquivalent(to:as:)``).
    static func equivalent(_ a: PGValue, _ b: PGValue, as type: AttributeType) -> Bool {
        a.isStoredEquivalent(to: b, as: type)
    }

    /// A counter's merge: the store's value plus this context's increment. Nil when the values are not
    /// numbers of one kind or the sum overflows.
    static func sum(theirs: PGValue, mine: PGValue, ancestor: PGValue) -> PGValue? {
        switch (theirs, mine, ancestor) {
        case (.int(let t), .int(let m), .int(let a)):
            let (delta, o1) = m.subtractingReportingOverflow(a)
            let (total, o2) = t.addingReportingOverflow(delta)
            return o1 || o2 ? nil : .int(total)
        case (.double(let t), .double(let m), .double(let a)):
            let total = t + (m - a)
            return total.isFinite ? .double(total) : nil
        case (.decimal(let t), .decimal(let m), .decimal(let a)):
            return .decimal(t + (m - a))
        case (.null, _, .null):
            return mine
        default:
            return nil
        }
    }

    /// A set's merge: the store's elements, plus those this context added, minus those it removed, in
    /// the store's order with additions at the end. Nil when a value is not a JSON array.
    static func union(theirs: PGValue, mine: PGValue, ancestor: PGValue) -> PGValue? {
        func elements(_ value: PGValue) -> [Any]? {
            if value.isNull { return [] }
            guard case .string(let text) = value else { return nil }
            return json(text) as? [Any]
        }
        guard let t = elements(theirs), let m = elements(mine), let a = elements(ancestor) else { return nil }
        func key(_ element: Any) -> String {
            guard let data = try? JSONSerialization.data(withJSONObject: [element], options: [.sortedKeys]) else { return "\(element)" }
            return String(decoding: data, as: UTF8.self)
        }
        let ancestorKeys = Set(a.map(key)), mineKeys = Set(m.map(key))
        let removed = ancestorKeys.subtracting(mineKeys)
        var seen = Set<String>()
        var result: [Any] = []
        for element in t + m.filter({ !ancestorKeys.contains(key($0)) }) {
            let k = key(element)
            guard !removed.contains(k), seen.insert(k).inserted else { continue }
            result.append(element)
        }
        guard let data = try? JSONSerialization.data(withJSONObject: result, options: [.fragmentsAllowed]) else { return nil }
        return .string(String(decoding: data, as: UTF8.self))
    }

    private static func json(_ text: String) -> NSObject? {
        (try? JSONSerialization.jsonObject(with: Data(text.utf8), options: [.fragmentsAllowed])) as? NSObject
    }
}
