import Foundation
import PGModelCore
import PGModelSQL

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
        var audience: [UUID]?
        var audience_only: Bool = false
    }

    private var changes: [Entry] = []
    private var index: [UUID: Int] = [:]
    /// Records appearing or disappearing for a user because of a share or revocation: kept apart from
    /// the row changes, which they neither merge with nor replace.
    private var audienceEvents: [Entry] = []

    /// Every change to write: row changes, then audience events.
    var entries: [Entry] { changes + audienceEvents }

    /// How many changes there are to write: row changes and audience events.
    var count: Int { changes.count + audienceEvents.count }

    /// The changes at `range` of every change to write (row changes, then audience events) as columns of
    /// one set-based statement. Only values and tombstones are JSON, each encoded on its own with
    /// `encoder`: no document of the whole save is built, which for a large save was most of its memory.
    func columns(encoder: JSONEncoder, in range: Range<Int>? = nil) throws -> HistoryChangeColumns {
        let range = range ?? 0..<count
        var columns = HistoryChangeColumns(capacity: range.count)
        func json(_ values: [String: PGValue]?) throws -> String? {
            guard let values else { return nil }
            if values.isEmpty { return "{}" }
            return String(decoding: try encoder.encode(values), as: UTF8.self)
        }
        for i in range {
            let entry = i < changes.count ? changes[i] : audienceEvents[i - changes.count]
            columns.append(entity: entry.entity, rowID: entry.row_id, kind: entry.kind, owner: entry.owner_id,
                           updatedAttributes: entry.updated_attributes, newValues: try json(entry.new_values),
                           tombstone: try json(entry.tombstone), audience: entry.audience, audienceOnly: entry.audience_only)
        }
        return columns
    }

    var isEmpty: Bool { changes.isEmpty && audienceEvents.isEmpty }

    /// Makes room for `count` row changes at once: a bulk save's log then never holds an outgrown copy
    /// of itself while it doubles.
    mutating func reserveCapacity(_ count: Int) {
        changes.reserveCapacity(count)
        index.reserveCapacity(count)
    }

    /// A record of `entity` appearing for (`.insert`) or disappearing for (`.delete`) `user`.
    mutating func recordAudienceEvent(_ kind: HistoryChangeRecord.Kind, _ entity: String, _ id: UUID, for user: UUID) {
        audienceEvents.append(Entry(entity: entity, row_id: id, kind: kind.rawValue, owner_id: nil, updated_attributes: [],
                                    new_values: nil, tombstone: kind == .delete ? [:] : nil, audience: [user], audience_only: true))
    }

    /// The concrete classes touched, in first-touched order.
    var entities: [String] {
        // Not through `entries`: that copies every change of a large save.
        var seen = Set<String>(), names: [String] = []
        for entry in changes where seen.insert(entry.entity).inserted { names.append(entry.entity) }
        for entry in audienceEvents where seen.insert(entry.entity).inserted { names.append(entry.entity) }
        return names
    }

    mutating func record(_ kind: HistoryChangeRecord.Kind, _ entity: String, _ id: UUID, owner: UUID?,
                         values: [String: PGValue] = [:], attributes: [String] = [], tombstone: [String: PGValue] = [:],
                         audience: [UUID]? = nil) {
        let names = Array(values.keys).sorted() + attributes
        if let i = index[id] {
            // An insert stays an insert and a delete a delete; a second update merges into the first.
            guard changes[i].kind == "update", kind == .update else { return }
            for name in names where !changes[i].updated_attributes.contains(name) { changes[i].updated_attributes.append(name) }
            for (key, value) in values { changes[i].new_values?[key] = value }
            return
        }
        index[id] = changes.count
        changes.append(Entry(entity: entity, row_id: id, kind: kind.rawValue, owner_id: owner,
                             updated_attributes: kind == .update ? names : [],
                             new_values: kind == .update ? values : nil,
                             tombstone: kind == .delete ? tombstone : nil,
                             audience: audience?.isEmpty == false ? audience : nil))
    }
}
