import Foundation
@_spi(PGModelInternals) import PGModelCore

/// A fetched row as `ModelContext` uses it: identity, concrete class, values (positional, see
/// ``StoredValues``) and, for a related fetch, the source row.
struct StoreRow {
    var entity: String
    var id: UUID
    var values: StoredValues
    var via: UUID?

    /// A row given by name (tests, and rows built in memory).
    init(_ row: RowValues) {
        self.init(entity: row.entity, id: row.id, values: StoredValues(row.values), via: row.via)
    }

    init(entity: String, id: UUID, values: StoredValues, via: UUID?) {
        self.entity = entity
        self.id = id
        self.values = values
        self.via = via
    }

    /// The rows of `table`; rows whose shape is missing or whose value count differs from it are a
    /// store error, not something to index past.
    static func rows(of table: FetchedTable) throws -> [StoreRow] {
        let keys = table.shapes.map { StoredKeys($0.keys) }
        var rows: [StoreRow] = []
        rows.reserveCapacity(table.rows.count)
        for row in table.rows {
            guard row.shape >= 0, row.shape < keys.count, row.values.count == keys[row.shape].names.count else {
                throw PGModelError(.internalError, "the store returned a row that does not match its shape")
            }
            rows.append(StoreRow(entity: table.shapes[row.shape].entity, id: row.id,
                                 values: StoredValues(keys: keys[row.shape], values: row.values), via: row.via))
        }
        return rows
    }
}
