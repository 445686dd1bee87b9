import Foundation
import PGModelCore

/// What one save changed, gathered while it runs and written as its history transaction at the end.
/// A row touched twice in one save (updated, then linked) is one change with both attribute lists.
///
/// ```swift
/// var log = HistoryLog()
/// log.record(.insert, "Trip", id, owner: nil)
/// ```
struct HistoryLog {
    struct Entry: Encodable {
        var entity: String
        var row_id: UUID
        var kind: String
        var owner_id: UUID?
        var updated_attributes: [String]
        var new_values: [String: PGValue]?
        var tombstone: [String: PGValue]?
    }

    private(set) var entries: [Entry] = []
    private var index: [UUID: Int] = [:]

    var isEmpty: Bool { entries.isEmpty }

    /// The concrete classes touched, in first-touched order.
    var entities: [String] {
        var seen = Set<String>()
        return entries.map(\.entity).filter { seen.insert($0).inserted }
    }

    mutating func record(_ kind: HistoryChangeRecord.Kind, _ entity: String, _ id: UUID, owner: UUID?,
                         values: [String: PGValue] = [:], attributes: [String] = [], tombstone: [String: PGValue] = [:]) {
        let names = Array(values.keys).sorted() + attributes
        if let i = index[id] {
            // An insert stays an insert and a delete a delete; a second update merges into the first.
            guard entries[i].kind == "update", kind == .update else { return }
            for name in names where !entries[i].updated_attributes.contains(name) { entries[i].updated_attributes.append(name) }
            for (key, value) in values { entries[i].new_values?[key] = value }
            return
        }
        index[id] = entries.count
        entries.append(Entry(entity: entity, row_id: id, kind: kind.rawValue, owner_id: owner,
                             updated_attributes: kind == .update ? names : [],
                             new_values: kind == .update ? values : nil,
                             tombstone: kind == .delete ? tombstone : nil))
    }
}
