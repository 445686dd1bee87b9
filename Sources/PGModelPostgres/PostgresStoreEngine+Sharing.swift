import Foundation
import PGModelCore
import PGModelSQL
import PostgresNIO

extension PostgresStoreEngine {
    /// Every share in this engine's store, of one record (`record`) and/or with one user (`user`), as the
    /// database owner sees them: the admin's view (`pgmodel shares`).
    ///
    /// ```swift
    /// let bobs = try await engine.listShares(user: "bob", on: connection)
    /// ```
    public func listShares(of record: RowReference? = nil, user: String? = nil, on connection: PostgresConnection) async throws -> [ShareListing] {
        var sql = """
            SELECT s."schema_name", s."entity", s."row_id", s."owner", s."grantee", s."permission", s."granted_by", s."created_at" \
            FROM "pgmodel"."share_list" s WHERE s."schema_name" = $1
            """
        var binds: [PGValue] = [.string(schemaName)]
        if let record {
            binds.append(.uuid(record.id))
            sql += " AND s.\"row_id\" = $\(binds.count)"
        }
        if let user {
            binds.append(.string(user))
            sql += " AND s.\"grantee\" = $\(binds.count)"
        }
        sql += " ORDER BY s.\"entity\", s.\"row_id\", s.\"grantee\""
        return try await query(SQLStatement(sql: sql, binds: binds), on: connection).map { row in
            let (schema, entity, id, owner, grantee, permission, grantedBy, createdAt) =
                try row.decode((String, String, UUID, String?, String, String, String, Date).self)
            return ShareListing(schemaName: schema, record: RowReference(entity: entity, id: id), owner: owner,
                                share: ModelShare(user: grantee, permission: SharePermission(rawValue: permission) ?? .readOnly,
                                                  grantedBy: grantedBy, createdAt: createdAt))
        }
    }

    /// Every share of `record` the requester may see: all of them for its owner or an admin, their own
    /// for a user it is shared with. `notFound` when the record is not visible.
    public func shares(of record: RowReference, in schema: SchemaDescription, as requester: Requester,
                       on connection: PostgresConnection) async throws -> [ModelShare] {
        let renderer = try SQLRenderer(schema: schema, schemaName: schemaName)
        let entity = try renderer.entity(record.entity)
        let root = schema.rootEntity(of: entity.name)?.name ?? entity.name
        return try await scoped(requester, on: connection) {
            guard try await !query(try renderer.owners(of: root, ids: [record.id]), on: connection, model: entity.name).isEmpty else {
                throw PGModelError(.notFound, "the \(entity.name) whose shares were asked for does not exist", model: entity.name)
            }
            let rows = try await query(SQLStatement(sql: """
                SELECT g."name", s."permission", s."granted_by", s."created_at" FROM "pgmodel"."shares" s \
                JOIN "pgmodel"."users" g ON g."id" = s."grantee_id" WHERE s."schema_name" = $1 AND s."row_id" = $2 ORDER BY g."name"
                """, binds: [.string(schemaName), .uuid(record.id)]), on: connection, model: entity.name)
            return try rows.map { row in
                let (user, permission, grantedBy, createdAt) = try row.decode((String, String, String, Date).self)
                return ModelShare(user: user, permission: SharePermission(rawValue: permission) ?? .readOnly, grantedBy: grantedBy, createdAt: createdAt)
            }
        }
    }
}
