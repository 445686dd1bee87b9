import Foundation
import PGModelCore
import PGModelSQL
import PostgresNIO

extension PostgresStoreEngine {
    /// Rows of `request` visible in `scope`, in the request's order.
    public func fetch(_ request: FetchRequest, in schema: SchemaDescription, scope: AccessScope, on connection: PostgresConnection) async throws -> [RowValues] {
        let renderer = try SQLRenderer(schema: schema, schemaName: schemaName)
        let entity = try renderer.entity(request.entity)
        let rows = try await query(try renderer.select(request, ownerID: scope.ownerFilter), on: connection, model: entity.name)
        var result: [RowValues] = []
        result.reserveCapacity(rows.count)
        for row in rows {
            let cells = row.makeRandomAccess()
            do {
                let id = try cells[0].decode(UUID.self)
                let concrete = try cells[1].decode(String.self)
                var values: [String: PGValue] = [:]
                values.reserveCapacity(entity.attributes.count)
                for (offset, attribute) in entity.attributes.enumerated() {
                    values[attribute.name] = try PostgresValueCoding.decode(cells[offset + 2], as: attribute.type)
                }
                result.append(RowValues(entity: concrete, id: id, values: values))
            } catch let error as PGModelError {
                throw error
            } catch {
                throw PGModelError(.typeMismatch, "a row of \(entity.name) does not match the registered column types", model: entity.name)
            }
        }
        return result
    }

    /// The number of rows of `request` visible in `scope`.
    public func count(_ request: FetchRequest, in schema: SchemaDescription, scope: AccessScope, on connection: PostgresConnection) async throws -> Int {
        let renderer = try SQLRenderer(schema: schema, schemaName: schemaName)
        let rows = try await query(try renderer.count(request, ownerID: scope.ownerFilter), on: connection, model: request.entity)
        guard let row = rows.first else { return 0 }
        return Int(try row.decode(Int64.self))
    }

    /// The ids of rows of `request` visible in `scope`, in its order.
    public func fetchIdentifiers(_ request: FetchRequest, in schema: SchemaDescription, scope: AccessScope, on connection: PostgresConnection) async throws -> [RowReference] {
        let renderer = try SQLRenderer(schema: schema, schemaName: schemaName)
        let rows = try await query(try renderer.selectIdentifiers(request, ownerID: scope.ownerFilter), on: connection, model: request.entity)
        return try rows.map { row in
            let (id, entity) = try row.decode((UUID, String).self)
            return RowReference(entity: entity, id: id)
        }
    }
}
