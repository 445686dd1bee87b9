import Foundation
@_spi(PGModelInternals) import PGModelCore

/// The SQL of record sharing (`pgmodel.shares`): granting, revoking, listing. Every value is bound; the
/// only identifiers are PGModel's own tables. Row-level security decides which shares a service user
/// reads or changes.
///
/// ```swift
/// let sql = ShareSQL(schemaName: "public")
/// let grant = sql.grant(record: trip, concrete: "Trip", owner: alice, grantee: bob, permission: .readOnly, grantedBy: "alice")
/// ```
@_spi(PGModelInternals) public struct ShareSQL: Sendable {
    /// The store whose records are shared (`pgmodel.shares.schema_name`).
    public let schemaName: String

    public init(schemaName: String) {
        self.schemaName = schemaName
    }

    /// `SELECT id` of the service user named `name`.
    public func userID(named name: String) -> SQLStatement {
        SQLStatement(sql: "SELECT \"id\" FROM \"pgmodel\".\"users\" WHERE \"name\" = $1", binds: [.string(name)])
    }

    /// Shares `record` (of root class `root`) with `grantee`, or changes the permission; returns one
    /// boolean, whether the share is new. `grantedBy` nil records the database role (the direct store, the
    /// CLI). A share names its record by root class and id: ids may repeat across classes, and a share of
    /// one never touches another's.
    public func grant(record: RowReference, root: String, concrete: String, owner: UUID?, grantee: UUID, permission: SharePermission,
                      grantedBy: String?) -> SQLStatement {
        SQLStatement(sql: """
            INSERT INTO "pgmodel"."shares" ("schema_name", "root_entity", "entity", "row_id", "owner_id", "grantee_id", "permission", "granted_by") \
            VALUES ($1, $2, $3, $4, $5::uuid, $6, $7, coalesce($8::text, session_user::text)) \
            ON CONFLICT ("schema_name", "root_entity", "row_id", "grantee_id") DO UPDATE SET "permission" = EXCLUDED."permission", "granted_by" = EXCLUDED."granted_by" \
            RETURNING ("xmax" = 0)
            """, binds: [.string(schemaName), .string(root), .string(concrete), .uuid(record.id), owner.map(PGValue.uuid) ?? .null,
                         .uuid(grantee), .string(permission.rawValue), grantedBy.map(PGValue.string) ?? .null])
    }

    /// Revokes `grantee`'s share of `record` (of root class `root`); returns a row when there was one.
    public func revoke(record: RowReference, root: String, grantee: UUID) -> SQLStatement {
        SQLStatement(sql: """
            DELETE FROM "pgmodel"."shares" WHERE "schema_name" = $1 AND "root_entity" = $2 AND "row_id" = $3 AND "grantee_id" = $4 RETURNING 1
            """, binds: [.string(schemaName), .string(root), .uuid(record.id), .uuid(grantee)])
    }

    /// `user, permission, granted_by, created_at` of every share of `record` (of root class `root`), by user name.
    public func shares(of record: RowReference, root: String) -> SQLStatement {
        SQLStatement(sql: """
            SELECT g."name", s."permission", s."granted_by", s."created_at" FROM "pgmodel"."shares" s \
            JOIN "pgmodel"."users" g ON g."id" = s."grantee_id" WHERE s."schema_name" = $1 AND s."root_entity" = $2 AND s."row_id" = $3 ORDER BY g."name"
            """, binds: [.string(schemaName), .string(root), .uuid(record.id)])
    }

    /// `schema_name, entity, row_id, owner, grantee, permission, granted_by, created_at` of `pgmodel.share_list`,
    /// of one record and/or with one user.
    public func list(record: RowReference?, user: String?) -> SQLStatement {
        var b = SQLBuilder()
        var sql = """
            SELECT s."schema_name", s."entity", s."row_id", s."owner", s."grantee", s."permission", s."granted_by", s."created_at" \
            FROM "pgmodel"."share_list" s WHERE s."schema_name" = \(b.bind(.string(schemaName)))
            """
        if let record {
            // The CLI names a record by any class of its hierarchy: the class itself or the share's root.
            let entity = b.bind(.string(record.entity))
            sql += " AND s.\"row_id\" = \(b.bind(.uuid(record.id))) AND (s.\"entity\" = \(entity) OR s.\"root_entity\" = \(entity))"
        }
        if let user { sql += " AND s.\"grantee\" = \(b.bind(.string(user)))" }
        b.sql = sql + " ORDER BY s.\"entity\", s.\"row_id\", s.\"grantee\""
        return b.statement
    }
}
