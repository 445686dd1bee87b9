import Foundation
@_spi(PGModelInternals) import PGModelCore
@_spi(PGModelInternals) import PGModelSQL
import PostgresNIO

@_spi(PGModelInternals) extension PostgresStoreEngine {
    /// Every share in this engine's store, of one record (`record`) and/or with one user (`user`), as the
    /// database owner sees them: the admin's view (`pgmodel shares`).
    ///
    /// ```swift
    /// let bobs = try await engine.listShares(user: "bob", on: connection)
    /// ```
    public func listShares(of record: RowReference? = nil, user: String? = nil, on connection: EngineConnection) async throws -> [ShareListing] {
        return try await query(ShareSQL(schemaName: schemaName).list(record: record, user: user), on: connection).map { row in
            let (schema, entity, id, owner, grantee, permission, grantedBy, createdAt) =
                try row.decode((String, String, UUID, String?, String, String, String, Date).self)
            return ShareListing(schemaName: schema, record: RowReference(entity: entity, id: id), owner: owner,
                                share: ModelShare(user: grantee, permission: SharePermission(rawValue: permission) ?? .readOnly,
                                                  grantedBy: grantedBy, createdAt: createdAt))
        }
    }

    /// The owner of `record` and every share of it the requester may see: all of them for its owner or an
    /// admin, their own for a user it is shared with. `notFound` when the record is not visible.
    public func sharing(of record: RowReference, in schema: SchemaDescription, as requester: Requester,
                        on connection: EngineConnection) async throws -> RecordSharing {
        let renderer = try SQLRenderer(schema: schema, schemaName: schemaName)
        let entity = try renderer.entity(record.entity)
        let root = schema.rootEntity(of: entity.name)?.name ?? entity.name
        return try await scoped(requester, on: connection) {
            // Row-level security decides visibility: a row the requester may not read is not found.
            guard let ownerRow = try await query(try renderer.ownerName(of: root, id: record.id), on: connection, model: entity.name).first else {
                throw PGModelError(.notFound, "the \(entity.name) whose shares were asked for does not exist", model: entity.name)
            }
            let owner = try ownerRow.decode(String?.self)
            let rows = try await query(ShareSQL(schemaName: schemaName).shares(of: record, root: root), on: connection, model: entity.name)
            return RecordSharing(owner: owner, shares: try rows.map { row in
                let (user, permission, grantedBy, createdAt) = try row.decode((String, String, String, Date).self)
                return ModelShare(user: user, permission: SharePermission(rawValue: permission) ?? .readOnly, grantedBy: grantedBy, createdAt: createdAt)
            })
        }
    }
}
