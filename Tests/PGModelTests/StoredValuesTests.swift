import Foundation
@_spi(PGModelInternals) import PGModelCore
import Testing
@_spi(PGModelInternals) @testable import PGModel

@Suite("Positional stored values and table rows")
struct StoredValuesTests {
    static let keys = StoredKeys(["front", "back", "creationDate"])

    @Test("values are found by name, by guessed position and outside the shape")
    func lookups() {
        var stored = StoredValues(keys: Self.keys, values: [.string("Q"), .string("A"), .null])
        #expect(stored["back"] == .string("A"))
        #expect(stored["missing"] == nil)
        var cursor = 0
        #expect(stored.value(forKey: "front", cursor: &cursor) == .string("Q"))
        #expect(cursor == 1)
        // Out of order: found by name, and the cursor follows.
        #expect(stored.value(forKey: "creationDate", cursor: &cursor) == .null)
        #expect(cursor == 3)
        #expect(stored.value(forKey: "front", cursor: &cursor) == .string("Q"))
        stored["back"] = .string("Answer")
        stored["extra"] = .int(3)
        #expect(stored.dictionary == ["front": .string("Q"), "back": .string("Answer"), "creationDate": .null, "extra": .int(3)])
        stored["front"] = nil
        #expect(stored["front"] == nil)
        #expect(stored.dictionary == ["back": .string("Answer"), "creationDate": .null, "extra": .int(3)])
    }

    @Test("a refresh merges a newer row, partial or of the same shape")
    func merge() {
        var stored = StoredValues(keys: Self.keys, values: [.string("Q"), .string("A"), .null])
        stored.merge(StoredValues(keys: Self.keys, values: [.string("Q2"), .string("A2"), .int(1)]))
        #expect(stored.dictionary == ["front": .string("Q2"), "back": .string("A2"), "creationDate": .int(1)])
        stored.merge(["back": .string("A3"), "note": .bool(true)])
        #expect(stored.dictionary == ["front": .string("Q2"), "back": .string("A3"), "creationDate": .int(1), "note": .bool(true)])
    }

    @Test("table rows become store rows, and a row that does not match its shape is an error")
    func rows() throws {
        let id = UUID()
        let table = FetchedTable(shapes: [.init(entity: "Card", keys: ["front", "back"])],
                                 rows: [.init(shape: 0, id: id, values: [.string("Q"), .string("A")])])
        let rows = try StoreRow.rows(of: table)
        #expect(rows.count == 1)
        #expect(rows[0].entity == "Card" && rows[0].id == id && rows[0].values["back"] == .string("A"))
        #expect(table.rowValues == [RowValues(entity: "Card", id: id, values: ["front": .string("Q"), "back": .string("A")])])
        // Back from names: the keys come sorted, the rows say the same.
        #expect(FetchedTable(rows: table.rowValues).rowValues == table.rowValues)
        var broken = table
        broken.rows[0].values.removeLast()
        #expect(!broken.isConsistent)
        #expect(throws: PGModelError.self) { try StoreRow.rows(of: broken) }
        broken.rows[0].shape = 4
        #expect(throws: PGModelError.self) { try StoreRow.rows(of: broken) }
    }
}
