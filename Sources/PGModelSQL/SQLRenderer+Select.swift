import PGModelCore

extension SQLRenderer {
    /// `SELECT id, entity, <attributes>` for `request`. With `ownerID`, only that user's rows.
    ///
    /// ```swift
    /// let s = try renderer.select(FetchRequest(entity: "Trip", limit: 10), ownerID: nil)
    /// ```
    public func select(_ request: FetchRequest, ownerID: UUID?) throws -> SQLStatement {
        let entity = try self.entity(request.entity)
        var b = SQLBuilder()
        let columns = ["\"id\"", "\"entity\""] + entity.attributes.map { Naming.quoted($0.columnName) }
        b.sql = "SELECT \(columns.joined(separator: ", ")) FROM \(qualifiedTable(entity))"
        try appendFilterOrderAndPage(request, entity: entity, ownerID: ownerID, &b)
        return b.statement
    }

    /// `SELECT id, entity` for `request`, in its order.
    public func selectIdentifiers(_ request: FetchRequest, ownerID: UUID?) throws -> SQLStatement {
        let entity = try self.entity(request.entity)
        var b = SQLBuilder()
        b.sql = "SELECT \"id\", \"entity\" FROM \(qualifiedTable(entity))"
        try appendFilterOrderAndPage(request, entity: entity, ownerID: ownerID, &b)
        return b.statement
    }

    /// `SELECT count(*)` of `request`; limit and offset count as SwiftData's `fetchCount` does.
    public func count(_ request: FetchRequest, ownerID: UUID?) throws -> SQLStatement {
        let entity = try self.entity(request.entity)
        var b = SQLBuilder()
        if request.limit == nil && request.offset == nil {
            b.sql = "SELECT count(*) FROM \(qualifiedTable(entity))"
            try appendFilter(request, entity: entity, ownerID: ownerID, &b)
        } else {
            b.sql = "SELECT count(*) FROM (SELECT 1 FROM \(qualifiedTable(entity))"
            try appendFilterOrderAndPage(request, entity: entity, ownerID: ownerID, &b)
            b.sql += ") AS page"
        }
        return b.statement
    }

    private func appendFilter(_ request: FetchRequest, entity: EntityDescription, ownerID: UUID?, _ b: inout SQLBuilder) throws {
        var conditions: [String] = []
        if let predicate = request.predicate {
            conditions.append(try render(predicate, in: entity, &b))
        }
        if let ids = request.identifiers {
            guard ids.count <= Self.maximumInListCount else {
                throw PGModelError(.invalidField, "a fetch of \(entity.name) names more than \(Self.maximumInListCount) ids", model: entity.name)
            }
            conditions.append(ids.isEmpty ? "FALSE" : "\"id\" IN (\(ids.map { b.bind(.uuid($0)) }.joined(separator: ", ")))")
        }
        if let ownerID {
            conditions.append("\"owner_id\" = \(b.bind(.uuid(ownerID)))")
        }
        if !conditions.isEmpty {
            b.sql += " WHERE " + conditions.joined(separator: " AND ")
        }
    }

    private func appendFilterOrderAndPage(_ request: FetchRequest, entity: EntityDescription, ownerID: UUID?, _ b: inout SQLBuilder) throws {
        try appendFilter(request, entity: entity, ownerID: ownerID, &b)
        var order: [String] = []
        for key in request.sort {
            let column = Naming.quoted(try attribute(key.key, of: entity).columnName)
            // Swift orders nil before any value; PostgreSQL's default is the opposite.
            order.append(key.ascending ? "\(column) ASC NULLS FIRST" : "\(column) DESC NULLS LAST")
        }
        // The id breaks ties so that pages (limit/offset) are stable across calls.
        order.append("\"id\" ASC")
        b.sql += " ORDER BY " + order.joined(separator: ", ")
        if let limit = request.limit {
            guard limit >= 0 else {
                throw PGModelError(.invalidField, "fetchLimit of a fetch of \(entity.name) must not be negative", model: entity.name)
            }
            b.sql += " LIMIT \(b.bind(.int(Int64(limit))))"
        }
        if let offset = request.offset {
            guard offset >= 0 else {
                throw PGModelError(.invalidField, "fetchOffset of a fetch of \(entity.name) must not be negative", model: entity.name)
            }
            b.sql += " OFFSET \(b.bind(.int(Int64(offset))))"
        }
    }
}

import Foundation
