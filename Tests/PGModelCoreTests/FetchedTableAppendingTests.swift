import Foundation
@_spi(PGModelInternals) import PGModelCore
import Testing

/// Halves of a large result decoded apart are joined into one table: rows in order, shapes merged.
@Suite("FetchedTable.appending")
struct FetchedTableAppendingTests {
    @Test func sharedShapesAreListedOnceAndRowsFollowTheirShape() {
        let trip = FetchedTable.Shape(entity: "Trip", keys: ["name"])
        let business = FetchedTable.Shape(entity: "BusinessTrip", keys: ["name", "perdiem"])
        let personal = FetchedTable.Shape(entity: "PersonalTrip", keys: ["name", "reason"])
        let ids = (0..<5).map { _ in UUID() }
        let first = FetchedTable(shapes: [trip, business], rows: [
            .init(shape: 0, id: ids[0], values: [.string("a")]),
            .init(shape: 1, id: ids[1], values: [.string("b"), .double(1)]),
        ])
        let second = FetchedTable(shapes: [personal, trip], rows: [
            .init(shape: 0, id: ids[2], values: [.string("c"), .null]),
            .init(shape: 1, id: ids[3], values: [.string("d")], via: ids[0]),
            .init(shape: 0, id: ids[4], values: [.string("e"), .string("r")]),
        ])
        let joined = first.appending(second)
        #expect(joined.shapes == [trip, business, personal])
        #expect(joined.rows.map(\.id) == ids)
        #expect(joined.rows.map(\.shape) == [0, 1, 2, 0, 2])
        #expect(joined.rows[3].via == ids[0])
        #expect(joined.rowValues == first.rowValues + second.rowValues)
        // Same shapes in the same order: rows are appended as they are.
        #expect(first.appending(first).rows.map(\.shape) == [0, 1, 0, 1])
        #expect(FetchedTable().appending(second) == second)
    }
}
