import Foundation
@_spi(PGModelInternals) import PGModelCore
@_spi(PGModelInternals) import PGModelSQL

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
        var previous_values: [String: PGValue]?
        var tombstone: [String: PGValue]?
        var audience: [UUID]?
        var audience_only: Bool = false
    }

    /// Row changes other than plain inserts, in ``runs``' order.
    private var changes: [Entry] = []
    /// Where each of ``changes`` is, by row id.
    private var index: [UUID: Int] = [:]
    /// Inserted rows, in runs of one class and owner (an entry and an index entry per insert were most of
    /// a large save's peak memory; a run of the save's own rows keeps none): an insert never merges with a
    /// later change of its row, so it needs no entry to merge into, only its id to be found, which
    /// ``insertIndex`` gives once it is asked.
    private var insertRuns: [InsertRun] = []
    /// How many inserts ``insertRuns`` hold.
    private var insertCount = 0
    /// Ids of inserts recorded one by one (``record(_:_:_:owner:values:attributes:tombstone:audience:)``).
    private var insertedIDs: [UUID] = []
    /// The save's own inserted rows (``recordInsert(ofRow:owner:)``): their ids are read from here.
    private var requestRows: [RowValues] = []
    /// Each inserted row's position among the inserts: built only when a change arrives after inserts
    /// (a merged upsert, a link), so a save of new rows alone never builds it.
    private var insertIndex: [UUID: Int]?
    /// The classes and owners of the inserts, each once (a save has a few of each).
    private var insertedEntities: [String] = []
    private var insertedEntityIndex: [String: Int32] = [:]
    private var insertedOwners: [UUID?] = []
    private var insertedOwnerIndex: [UUID?: Int32] = [:]
    /// The order of row changes: runs of ``changes`` and of ``inserts``, as they were recorded.
    private var runs: [(isInsert: Bool, count: Int)] = []
    /// Records appearing or disappearing for a user because of a share or revocation: kept apart from
    /// the row changes, which they neither merge with nor replace.
    private var audienceEvents: [Entry] = []

    /// Consecutive inserts of one class and owner whose ids are consecutive in ``insertedIDs`` or in
    /// ``requestRows``.
    private struct InsertRun {
        var fromRequest: Bool
        var start: Int
        var count: Int
        var entity: Int32
        var owner: Int32

        func id(at offset: Int, _ log: HistoryLog) -> UUID {
            fromRequest ? log.requestRows[start + offset].id : log.insertedIDs[start + offset]
        }
    }

    /// How many row changes there are (not audience events).
    private var rowChangeCount: Int { changes.count + insertCount }

    /// Every change to write: row changes, then audience events.
    var entries: [Entry] { (0..<count).map(entry(at:)) }

    /// How many changes there are to write: row changes and audience events.
    var count: Int { rowChangeCount + audienceEvents.count }

    /// The change at `position` of every change to write (row changes in their order, then audience events).
    private func entry(at position: Int) -> Entry {
        var cursor = Cursor()
        return entry(at: position, &cursor)
    }

    /// Where the last lookup was in ``runs``: reading changes in order walks the runs once.
    private struct Cursor {
        var run = 0, runStart = 0, changesBefore = 0, insertsBefore = 0
        /// The insert run holding insert number `insertRunFirst` onwards.
        var insertRun = 0, insertRunFirst = 0
    }

    private func entry(at position: Int, _ cursor: inout Cursor) -> Entry {
        guard position < rowChangeCount else { return audienceEvents[position - rowChangeCount] }
        if position < cursor.runStart { cursor = Cursor() }
        while position >= cursor.runStart + runs[cursor.run].count {
            if runs[cursor.run].isInsert { cursor.insertsBefore += runs[cursor.run].count } else { cursor.changesBefore += runs[cursor.run].count }
            cursor.runStart += runs[cursor.run].count
            cursor.run += 1
        }
        let offset = position - cursor.runStart
        guard runs[cursor.run].isInsert else { return changes[cursor.changesBefore + offset] }
        let number = cursor.insertsBefore + offset
        if number < cursor.insertRunFirst { (cursor.insertRun, cursor.insertRunFirst) = (0, 0) }
        while number >= cursor.insertRunFirst + insertRuns[cursor.insertRun].count {
            cursor.insertRunFirst += insertRuns[cursor.insertRun].count
            cursor.insertRun += 1
        }
        let run = insertRuns[cursor.insertRun]
        return Entry(entity: insertedEntities[Int(run.entity)], row_id: run.id(at: number - cursor.insertRunFirst, self),
                     kind: HistoryChangeRecord.Kind.insert.rawValue, owner_id: insertedOwners[Int(run.owner)],
                     updated_attributes: [], new_values: nil, previous_values: nil, tombstone: nil, audience: nil)
    }

    /// Every insert's id, in order.
    private func forEachInsertedID(_ body: (Int, UUID) -> Void) {
        var number = 0
        for run in insertRuns {
            for offset in 0..<run.count {
                body(number, run.id(at: offset, self))
                number += 1
            }
        }
    }

    private mutating func appendRun(isInsert: Bool) {
        if let last = runs.last, last.isInsert == isInsert {
            runs[runs.count - 1].count += 1
        } else {
            runs.append((isInsert, 1))
        }
    }

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
        var cursor = Cursor()
        for i in range {
            let change = entry(at: i, &cursor)
            columns.append(entity: change.entity, rowID: change.row_id, kind: change.kind, owner: change.owner_id,
                           updatedAttributes: change.updated_attributes, newValues: try json(change.new_values),
                           previousValues: try json(change.previous_values),
                           tombstone: try json(change.tombstone), audience: change.audience, audienceOnly: change.audience_only)
        }
        return columns
    }

    /// The ranges of every change to write, one history statement each, in order: a stretch of at least
    /// `minimumRun` plain inserts of one class and owner is a statement of its own (a run, at most `size`
    /// a statement; a last piece shorter than `minimumRun` goes with what follows), and everything between
    /// such stretches goes in statements of up to `size` changes.
    /// A save that inserts albums, each with thousands of tracks, writes its tracks as runs; one that
    /// interleaves a few of each writes them row by row, in as few statements as before.
    ///
    /// ```swift
    /// log.statementRanges(size: 5_000, minimumRun: 256)   // [0..<1, 1..<2001, 2001..<2002, 2002..<4002]
    /// ```
    func statementRanges(size: Int, minimumRun: Int) -> [Range<Int>] {
        // Row changes as stretches: (count, whether they are plain inserts of one class and owner).
        var stretches: [(count: Int, isRun: Bool)] = []
        func add(_ count: Int, isRun: Bool) {
            guard count > 0 else { return }
            if isRun, count >= minimumRun {
                // A tail too short for a run of its own goes row by row with what follows.
                let tail = count % size
                if tail > 0, tail < minimumRun, count > tail {
                    stretches.append((count - tail, true))
                    add(tail, isRun: false)
                } else {
                    stretches.append((count, true))
                }
                return
            }
            if let last = stretches.last, !last.isRun {
                stretches[stretches.count - 1].count += count
            } else {
                stretches.append((count, false))
            }
        }
        var insertRun = 0, insertRunFirst = 0, insertsBefore = 0
        for run in runs {
            guard run.isInsert else {
                add(run.count, isRun: false)
                continue
            }
            // Inserts number insertsBefore ..< insertsBefore + run.count, split where class or owner changes.
            var number = insertsBefore, stretch = 0
            var key: (entity: Int32, owner: Int32)?
            let end = insertsBefore + run.count
            while number < end {
                while number >= insertRunFirst + insertRuns[insertRun].count {
                    insertRunFirst += insertRuns[insertRun].count
                    insertRun += 1
                }
                let piece = insertRuns[insertRun]
                let taken = min(end, insertRunFirst + piece.count) - number
                if let current = key, current.entity != piece.entity || current.owner != piece.owner {
                    add(stretch, isRun: true)
                    stretch = 0
                }
                key = (piece.entity, piece.owner)
                stretch += taken
                number += taken
            }
            add(stretch, isRun: true)
            insertsBefore = end
        }
        add(audienceEvents.count, isRun: false)
        var ranges: [Range<Int>] = []
        var start = 0
        for stretch in stretches {
            let end = start + stretch.count
            var low = start
            while low < end {
                let high = min(low + size, end)
                ranges.append(low..<high)
                low = high
            }
            start = end
        }
        return ranges
    }

    /// The changes at `range` as ``HistoryInsertColumns`` when every one is a plain insert of one class
    /// and owner (a bulk save's chunks are), else nil: ``columns(encoder:in:)`` then. Read from the
    /// insert runs, without an entry per change.
    func insertColumns(in range: Range<Int>) -> HistoryInsertColumns? {
        guard !range.isEmpty, range.upperBound <= rowChangeCount else { return nil }
        // The run of row changes holding the range's start must be inserts and hold its end too.
        var runStart = 0, insertsBefore = 0
        for run in runs {
            if range.lowerBound < runStart + run.count {
                guard run.isInsert, range.upperBound <= runStart + run.count else { return nil }
                let first = insertsBefore + (range.lowerBound - runStart)
                return insertColumns(ofInserts: first..<first + range.count)
            }
            if run.isInsert { insertsBefore += run.count }
            runStart += run.count
        }
        return nil
    }

    /// Inserts number `numbers` (counted among the inserts alone) as one class and owner's columns, or nil
    /// when they span several classes or owners.
    private func insertColumns(ofInserts numbers: Range<Int>) -> HistoryInsertColumns? {
        var columns: HistoryInsertColumns?
        var key: (entity: Int32, owner: Int32)?
        var runFirst = 0
        for run in insertRuns {
            let low = max(numbers.lowerBound, runFirst), high = min(numbers.upperBound, runFirst + run.count)
            if low < high {
                if let key, key.entity != run.entity || key.owner != run.owner { return nil }
                if key == nil {
                    key = (run.entity, run.owner)
                    columns = HistoryInsertColumns(entity: insertedEntities[Int(run.entity)], owner: insertedOwners[Int(run.owner)],
                                                   capacity: numbers.count)
                }
                for number in low..<high { columns?.append(run.id(at: number - runFirst, self)) }
            }
            runFirst += run.count
            if runFirst >= numbers.upperBound { break }
        }
        return columns?.count == numbers.count ? columns : nil
    }

    var isEmpty: Bool { changes.isEmpty && insertCount == 0 && audienceEvents.isEmpty }

    /// Makes room for `inserts` more inserted rows recorded one by one and `others` more other row
    /// changes at once: a bulk save's log then never holds an outgrown copy of itself while it doubles.
    /// (The save's own rows, ``recordInsert(ofRow:owner:)``, need no room.)
    mutating func reserveCapacity(inserts: Int, others: Int) {
        if inserts > 0 { insertedIDs.reserveCapacity(insertedIDs.count + inserts) }
        if others > 0 {
            changes.reserveCapacity(changes.count + others)
            index.reserveCapacity(index.count + others)
        }
    }

    /// A record of `entity` appearing for (`.insert`) or disappearing for (`.delete`) `user`.
    mutating func recordAudienceEvent(_ kind: HistoryChangeRecord.Kind, _ entity: String, _ id: UUID, for user: UUID) {
        audienceEvents.append(Entry(entity: entity, row_id: id, kind: kind.rawValue, owner_id: nil, updated_attributes: [],
                                    new_values: nil, previous_values: nil, tombstone: kind == .delete ? [:] : nil, audience: [user], audience_only: true))
    }

    /// The concrete classes touched, in first-touched order.
    var entities: [String] {
        // Not through `entries`: that copies every change of a large save.
        var seen = Set<String>(), names: [String] = []
        var changesBefore = 0, insertsBefore = 0
        var insertRun = 0, insertRunFirst = 0
        for run in runs {
            if run.isInsert {
                // The insert runs that overlap inserts insertsBefore..<insertsBefore + run.count.
                while insertRun < insertRuns.count, insertRunFirst < insertsBefore + run.count {
                    let entity = insertedEntities[Int(insertRuns[insertRun].entity)]
                    if seen.insert(entity).inserted { names.append(entity) }
                    if insertRunFirst + insertRuns[insertRun].count > insertsBefore + run.count { break }
                    insertRunFirst += insertRuns[insertRun].count
                    insertRun += 1
                }
                insertsBefore += run.count
            } else {
                for entry in changes[changesBefore..<changesBefore + run.count] where seen.insert(entry.entity).inserted { names.append(entry.entity) }
                changesBefore += run.count
            }
        }
        for entry in audienceEvents where seen.insert(entry.entity).inserted { names.append(entry.entity) }
        return names
    }

    /// The save's rows are `rows` (``SaveRequest/inserts``): ``recordInsert(ofRow:owner:)`` reads its ids
    /// from them instead of keeping a copy of each (the array is shared, not copied).
    mutating func insertsCome(from rows: [RowValues]) {
        requestRows = rows
    }

    /// The insert of `requestRows[row]` (see ``insertsCome(from:)``): what
    /// `record(.insert, rows[row].entity, rows[row].id, owner: owner)` records, without a copy of its id.
    mutating func recordInsert(ofRow row: Int, owner: UUID?) {
        guard row >= 0, row < requestRows.count else { return }
        appendInsert(requestRows[row].id, requestRows[row].entity, owner, fromRequest: true, at: row)
    }

    /// Appends an insert whose id is (or, for ``insertedIDs``, is about to be) at `position` of
    /// ``requestRows`` or ``insertedIDs``; false when the row already has a change in the log.
    @discardableResult
    private mutating func appendInsert(_ id: UUID, _ entity: String, _ owner: UUID?, fromRequest: Bool, at position: Int) -> Bool {
        // Not looked up among earlier inserts unless they are indexed already: a save inserts one id
        // once (a second row with it fails the save or merges into the first, an update).
        guard index[id] == nil, insertIndex?[id] == nil else { return false }
        let entityIndex = Self.position(of: entity, among: &insertedEntities, &insertedEntityIndex, guess: insertRuns.last?.entity)
        let ownerIndex = Self.position(of: owner, among: &insertedOwners, &insertedOwnerIndex, guess: insertRuns.last?.owner)
        if insertIndex != nil { insertIndex?[id] = insertCount }
        if let last = insertRuns.last, last.fromRequest == fromRequest, last.start + last.count == position,
           last.entity == entityIndex, last.owner == ownerIndex {
            insertRuns[insertRuns.count - 1].count += 1
        } else {
            insertRuns.append(InsertRun(fromRequest: fromRequest, start: position, count: 1, entity: entityIndex, owner: ownerIndex))
        }
        insertCount += 1
        appendRun(isInsert: true)
        return true
    }

    /// Where `value` is in `values` (a class or owner of the inserts), added if new; `guess` (the last
    /// run's) is tried before hashing, since a bulk insert is one run.
    private static func position<Value: Hashable>(of value: Value, among values: inout [Value], _ positions: inout [Value: Int32],
                                                  guess: Int32?) -> Int32 {
        if let guess, values[Int(guess)] == value { return guess }
        if let known = positions[value] { return known }
        let position = Int32(values.count)
        values.append(value)
        positions[value] = position
        return position
    }

    mutating func record(_ kind: HistoryChangeRecord.Kind, _ entity: String, _ id: UUID, owner: UUID?,
                         values: [String: PGValue] = [:], previous: [String: PGValue]? = nil, attributes: [String] = [],
                         tombstone: [String: PGValue] = [:], audience: [UUID]? = nil) {
        // An insert stays an insert and a delete a delete; a second update merges into the first.
        if kind == .insert && values.isEmpty && attributes.isEmpty && audience == nil {
            if appendInsert(id, entity, owner, fromRequest: false, at: insertedIDs.count) { insertedIDs.append(id) }
            return
        }
        if insertCount > 0 {
            if insertIndex == nil {
                var built = [UUID: Int](minimumCapacity: insertCount)
                forEachInsertedID { number, id in if built[id] == nil { built[id] = number } }
                insertIndex = built
            }
            if insertIndex?[id] != nil { return }
        }
        let names = Array(values.keys).sorted() + attributes
        if let i = index[id] {
            guard changes[i].kind == "update", kind == .update else { return }
            for name in names where !changes[i].updated_attributes.contains(name) { changes[i].updated_attributes.append(name) }
            for (key, value) in values { changes[i].new_values?[key] = value }
            // The first update of a row in the save replaced what was stored before it.
            for (key, value) in previous ?? [:] where changes[i].previous_values?[key] == nil {
                if changes[i].previous_values == nil { changes[i].previous_values = [:] }
                changes[i].previous_values?[key] = value
            }
            return
        }
        index[id] = changes.count
        appendRun(isInsert: false)
        changes.append(Entry(entity: entity, row_id: id, kind: kind.rawValue, owner_id: owner,
                             updated_attributes: kind == .update ? names : [],
                             new_values: kind == .update ? values : nil,
                             previous_values: kind == .update ? previous : nil,
                             tombstone: kind == .delete ? tombstone : nil,
                             audience: audience?.isEmpty == false ? audience : nil))
    }
}
