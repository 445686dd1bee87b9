import Foundation
@_spi(PGModelInternals) import PGModelCore
import Testing

@_spi(PGModelInternals) @testable import PGModel
import PGModelTesting

/// A class without uniqueness constraints: its bulk insert sends no ids back.
@Model final class BulkInsertRow {
    var name: String
    var note: String?
    var score: Double
    var created: Date
    var rank: Int
    var active: Bool
    @Transient var scratch: Int = 0

    init(name: String, note: String?, score: Double, created: Date, rank: Int, active: Bool) {
        self.name = name
        self.note = note
        self.score = score
        self.created = created
        self.rank = rank
        self.active = active
    }
}

/// One save of many new models through ModelContext: the rows are built positionally and the
/// saved models keep the same arrays as their snapshots. Values round-trip exactly, the snapshots still
/// tell changes from unchanged values and restore on rollback, on both stores.
@Suite("Bulk inserts through ModelContext")
struct BulkInsertContextTests {
    static let base = Date(timeIntervalSince1970: 1_700_000_000.123456)
    static let scores: [Double] = [0, -0.0, 1.5, -.greatestFiniteMagnitude, .greatestFiniteMagnitude, .leastNonzeroMagnitude,
                                   -.leastNormalMagnitude, 1e-300, 0.1 + 0.2]
    static let names = ["", "naïve \"quoted\" {a,b} \\ 🚀", "日本語のテキスト", "tab\tnew\nline", "'; DROP TABLE x; --", String(repeating: "long ", count: 40)]

    static func row(_ i: Int, token: String) -> BulkInsertRow {
        BulkInsertRow(name: "\(token) \(names[i % names.count]) \(i)", note: i % 3 == 0 ? nil : "note \(i) ✓",
                      score: scores[i % scores.count], created: base.addingTimeInterval(Double(i) * 0.000_001 + Double(i % 5) * 86_400),
                      rank: i % 4 == 0 ? Int.min + i : i % 4 == 1 ? Int.max - i : i, active: i % 2 == 0)
    }

    @Test(arguments: StoreKind.tested)
    func oneSaveOfManyNewModelsRoundTripsEveryValueExactly(kind: StoreKind) async throws {
        let f = try await StoreFixture.make(kind, [BulkInsertRow.self])
        try await offCooperativePool {
            let context = f.newContext()
            let count = 250
            let rows = (0..<count).map { Self.row($0, token: f.token) }
            rows.forEach(context.insert)
            let trips = context.storeRoundTrips
            try context.save()
            #expect(context.storeRoundTrips - trips == 1, "one save is one round trip")
            #expect(!context.hasChanges)

            let reader = f.newContext()
            let stored = try reader.fetch(FetchDescriptor<BulkInsertRow>())
            let mine = stored.filter { $0.name.hasPrefix(f.token) }
            #expect(mine.count == count)
            let byID = Dictionary(uniqueKeysWithValues: mine.map { ($0.persistentModelID, $0) })
            for (i, row) in rows.enumerated() {
                let read = try #require(byID[row.persistentModelID], "row \(i)")
                #expect(read.name == row.name, "row \(i)")
                #expect(read.note == row.note, "row \(i)")
                #expect(read.score.bitPattern == row.score.bitPattern || (read.score == 0 && row.score == 0), "row \(i): \(read.score) vs \(row.score)")
                // timestamptz keeps whole microseconds: the same microsecond comes back (a Double of seconds
                // may differ in its last bit from the one computed here).
                #expect((read.created.timeIntervalSince1970 * 1e6).rounded() == (row.created.timeIntervalSince1970 * 1e6).rounded(),
                        "row \(i): \(read.created.timeIntervalSince1970) vs \(row.created.timeIntervalSince1970)")
                #expect(read.rank == row.rank && read.active == row.active, "row \(i)")
            }
        }
    }

    @Test(arguments: StoreKind.tested)
    func savedModelsSnapshotsTellChangesAndRestoreOnRollback(kind: StoreKind) async throws {
        let f = try await StoreFixture.make(kind, [BulkInsertRow.self])
        try await offCooperativePool {
            let context = f.newContext()
            let rows = (0..<40).map { Self.row($0, token: f.token) }
            rows.forEach(context.insert)
            try context.save()

            // Each saved model's snapshot holds what was written: every stored property, NULLs included,
            // none of the transient ones.
            for (i, row) in rows.enumerated() {
                let snapshot = row._$backingData.storedValues.dictionary
                #expect(snapshot == ["name": .string(row.name), "note": row.note.map(PGValue.string) ?? .null, "score": .double(row.score),
                                     "created": .date(row.created), "rank": .int(Int64(row.rank)), "active": .bool(row.active)], "row \(i)")
            }
            // The value it already has is no change worth writing.
            rows[1].note = rows[1].note
            rows[2].score = rows[2].score
            let prepared = try #require(try context.prepareSave())
            #expect(prepared.request.updates.isEmpty)
            context.rollback()

            // A change rolled back gets the saved value back from the snapshot, NULL included.
            rows[3].note = "changed"
            rows[4].name = "renamed"
            rows[4].created = .distantPast
            context.rollback()
            #expect(rows[3].note == nil)
            #expect(rows[4].name == Self.row(4, token: f.token).name)
            #expect(rows[4].created == Self.row(4, token: f.token).created)

            // A real change after the bulk save is written, and only it.
            rows[5].note = nil
            rows[6].rank = 42
            try context.save()
            let reader = f.newContext()
            let stored = Dictionary(uniqueKeysWithValues: try reader.fetch(FetchDescriptor<BulkInsertRow>())
                .filter { $0.name.hasPrefix(f.token) }.map { ($0.persistentModelID, $0) })
            #expect(stored[rows[5].persistentModelID]?.note == nil)
            #expect(stored[rows[6].persistentModelID]?.rank == 42)
            #expect(stored[rows[7].persistentModelID]?.note == rows[7].note)
            #expect(stored.count == 40)
        }
    }
}
