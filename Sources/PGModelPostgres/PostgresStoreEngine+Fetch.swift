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
        let statement = try renderer.select(request)
        let rows = try await scoped(requester, on: connection) { try await query(statement, on: connection, model: entity.name) }
        var table = FetchedTable()
        table.rows.reserveCapacity(rows.count)
        // Shapes by the `entity` text as stored; rows of one class usually come in runs, so the last
        // one is tried before the dictionary.
        var shapeOfStored: [String: (index: Int, fields: [SelectLayout.Field])] = [:]
        var last: (stored: String, index: Int, fields: [SelectLayout.Field])?
        for row in rows {
            let cells = row.makeRandomAccess()
            do {
                let id = try cells[0].decode(UUID.self)
                let stored = try cells[1].decode(String.self)
                let shape: (index: Int, fields: [SelectLayout.Field])
                if let last, last.stored == stored {
                    shape = (last.index, last.fields)
                } else if let known = shapeOfStored[stored] {
                    shape = known
                } else {
                    // Rows are decoded as their concrete class; a class no longer registered reads as the fetched one.
                    let concrete = layout.fieldsByEntity[stored] == nil ? entity.name : stored
                    let fields = layout.fields(of: concrete)
                    shape = (table.shapes.count, fields)
                    table.shapes.append(FetchedTable.Shape(entity: concrete, keys: fields.map(\.name)))
                    shapeOfStored[stored] = shape
                }
                last = (stored, shape.index, shape.fields)
                var values: [PGValue] = []
                values.reserveCapacity(shape.fields.count)
                for field in shape.fields {
                    values.append(try PostgresValueCoding.decode(cells[field.index], as: field.type))
                }
                let via = try layout.viaIndex.map { try cells[$0].decode(UUID.self) }
                table.rows.append(FetchedTable.Row(shape: shape.index, id: id, values: values, via: via))
            } catch let error as PGModelError {
                throw error
            } catch {
                throw PGModelError(.typeMismatch, "a row of \(entity.name) does not match the registered column types", model: entity.name)
            }
        }
        return table
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
