import Foundation
import PGModelCore
import PGModelSQL
import PostgresNIO

extension PostgresStoreEngine {
    /// Rows of `request` visible to `requester`, in the request's order.
    public func fetch(_ request: FetchRequest, in schema: SchemaDescription, as requester: Requester, on connection: PostgresConnection) async throws -> [RowValues] {
        try await fetchTable(request, in: schema, as: requester, on: connection).rowValues
    }

    /// Rows of `request` visible to `requester`, in the request's order, positionally: each cell is
    /// decoded straight into its row's value array, and each class's value names are listed once.
    public func fetchTable(_ request: FetchRequest, in schema: SchemaDescription, as requester: Requester, on connection: PostgresConnection) async throws -> FetchedTable {
        let renderer = try SQLRenderer(schema: schema, schemaName: schemaName)
        let entity = try renderer.entity(request.entity)
        let layout = try renderer.selectLayout(request)
        let statement = try renderer.select(request, layout: layout)
        let rows = try await scoped(requester, on: connection) { try await query(statement, on: connection, model: entity.name) }
        var table = FetchedTable()
        table.rows.reserveCapacity(rows.count)
        // Shapes by the `entity` text as stored; rows of one class usually come in runs, so the last
        // one is tried before the dictionary.
        var shapeOfStored: [String: RowShape] = [:]
        var last: (stored: String, shape: RowShape)?
        let columnCount = 2 + layout.attributes.count + layout.foreignKeys.count + (layout.viaIndex == nil ? 0 : 1)
        for row in rows {
            // The cells in order, as the driver's own tuple decoding reads them: a random-access row
            // would copy every cell's buffer into an array first.
            var cells = row.makeIterator()
            do {
                guard let idCell = cells.next(), let entityCell = cells.next() else { throw PostgresDecodingError.Code.missingData }
                let id = try idCell.decode(UUID.self)
                let stored = try entityCell.decode(String.self)
                let shape: RowShape
                if let last, last.stored == stored {
                    shape = last.shape
                } else if let known = shapeOfStored[stored] {
                    shape = known
                } else {
                    // Rows are decoded as their concrete class; a class no longer registered reads as the fetched one.
                    let concrete = layout.fieldsByEntity[stored] == nil ? entity.name : stored
                    let fields = layout.fields(of: concrete)
                    shape = RowShape(index: table.shapes.count, fields: fields, columnCount: columnCount)
                    table.shapes.append(FetchedTable.Shape(entity: concrete, keys: fields.map(\.name)))
                    shapeOfStored[stored] = shape
                }
                last = (stored, shape)
                var values = [PGValue](repeating: .null, count: shape.types.count)
                var via: UUID?
                var column = 2
                while let cell = cells.next() {
                    defer { column += 1 }
                    if column == layout.viaIndex {
                        via = try cell.decode(UUID.self)
                    } else if column < shape.slots.count, case let slot = shape.slots[column], slot >= 0 {
                        values[slot] = try PostgresValueCoding.decode(cell, as: shape.types[slot])
                    }
                }
                guard column == columnCount else { throw PostgresDecodingError.Code.missingData }
                table.rows.append(FetchedTable.Row(shape: shape.index, id: id, values: values, via: via))
            } catch let error as PGModelError {
                throw error
            } catch {
                throw PGModelError(.typeMismatch, "a row of \(entity.name) does not match the registered column types", model: entity.name)
            }
        }
        return table
    }

    /// Where each cell of a row of one class goes: ``slots`` maps a cell's index to the position of
    /// its value in the row's values (-1 for a column of another class), ``types`` each value's type.
    struct RowShape {
        var index: Int
        var slots: [Int]
        var types: [AttributeType]

        init(index: Int, fields: [SelectLayout.Field], columnCount: Int) {
            self.index = index
            var slots = [Int](repeating: -1, count: columnCount)
            for (position, field) in fields.enumerated() where field.index >= 0 && field.index < columnCount {
                slots[field.index] = position
            }
            self.slots = slots
            self.types = fields.map(\.type)
        }
    }

    /// The number of rows of `request` visible to `requester`.
    public func count(_ request: FetchRequest, in schema: SchemaDescription, as requester: Requester, on connection: PostgresConnection) async throws -> Int {
        let renderer = try SQLRenderer(schema: schema, schemaName: schemaName)
        let statement = try renderer.count(request)
        let rows = try await scoped(requester, on: connection) { try await query(statement, on: connection, model: request.entity) }
        guard let row = rows.first else { return 0 }
        return Int(try row.decode(Int64.self))
    }

    /// The ids of rows of `request` visible to `requester`, in its order.
    public func fetchIdentifiers(_ request: FetchRequest, in schema: SchemaDescription, as requester: Requester, on connection: PostgresConnection) async throws -> [RowReference] {
        let renderer = try SQLRenderer(schema: schema, schemaName: schemaName)
        let statement = try renderer.selectIdentifiers(request)
        let rows = try await scoped(requester, on: connection) { try await query(statement, on: connection, model: request.entity) }
        return try rows.map { row in
            let cells = row.makeRandomAccess()   // a related fetch adds `via`
            return RowReference(entity: try cells[1].decode(String.self), id: try cells[0].decode(UUID.self))
        }
    }
}
