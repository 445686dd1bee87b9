import Foundation
import PGModelCore

/// The SQL of record sharing (`pgmodel.shares`): granting, revoking, listing. Every value is bound; the
/// only identifiers are PGModel's own tables. Row-level security decides which shares a service user
/// reads or changes.
///
/// ```swift
/// let sql = ShareSQL(schemaName: "public")
/// let grant = sql.grant(record: trip, concrete: "Trip", owner: alice, grantee: bob, permission: .readOnly, grantedBy: "alice")
/// ```
public struct ShareSQL: Sendable {
    /// The store whose records are shared (`pgmodel.shares.schema_name`).
    public let schemaName: String

    public init(schemaName: String) {
        self.schemaName = schemaName
    }

    /// `SELECT id` of the service user named `name`.
    public func userID(named name: String) -> SQLStatement {
        SQLStatement(sql: "SELECT \"id\" FROM \"pgmodel\".\"users\" WHERE \"name\" = $1", binds: [.string(name)])
    }

    /// Shares `record` with `grantee`, or changes the permission; returns one boolean, whether the share is
    /// new. `grantedBy` nil records the database role (the direct store, the CLI).
    public func grant(record: RowReference, concrete: String, owner: UUID?, grantee: UUID, permission: SharePermission,
                      grantedBy: String?) -> SQLStatement {
        SQLStatement(sql: """
            INSERT INTO "pgmodel"."shares" ("schema_name", "entity", "row_id", "owner_id", "grantee_id", "permission", "granted_by") \
            VALUES ($1, $2, $3, $4::uuid, $5, $6, coalesce($7::text, session_user::text)) \
            ON CONFLICT ("schema_name", "row_id", "grantee_id") DO UPDATE SET "permission" = EXCLUDED."permission", "granted_by" = EXCLUDED."granted_by" \
            RETURNING ("xmax" = 0)
            """, binds: [.string(schemaName), .string(concrete), .uuid(record.id), owner.map(PGValue.uuid) ?? .null,
                         .uuid(grantee), .string(permission.rawValue), grantedBy.map(PGValue.string) ?? .null])
    }

    /// Revokes `grantee`'s share of `record`; returns a row when there was one.
    public func revoke(record: RowReference, grantee: UUID) -> SQLStatement {
        SQLStatement(sql: "DELETE FROM \"pgmodel\".\"shares\" WHERE \"schema_name\" = $1 AND \"row_id\" = $2 AND \"grantee_id\" = $3 RETURNING 1",
                     binds: [.string(schemaName), .uuid(record.id), .uuid(grantee)])
    }

    /// `user, permission, granted_by, created_at` of every share of `record`, by user name.
    public func shares(of record: RowReference) -> SQLStatement {
        SQLStatement(sql: """
            SELECT g."name", s."permission", s."granted_by", s."created_at" FROM "pgmodel"."shares" s \
            JOIN "pgmodel"."users" g ON g."id" = s."grantee_id" WHERE s."schema_name" = $1 AND s."row_id" = $2 ORDER BY g."name"
            """, binds: [.string(schemaName), .uuid(record.id)])
    }

    /// `schema_name, entity, row_id, owner, grantee, permission, granted_by, created_at` of `pgmodel.share_list`,
    /// of one record and/or with one user.
    public func list(record: RowReference?, user: String?) -> SQLStatement {
        var b = SQLBuilder()
        var sql = """
            SELECT s."schema_name", s."entity", s."row_id", s."owner", s."grantee", s."permission", s."granted_by", s."created_at" \
            FROM "pgmodel"."share_list" s WHERE s."schema_name" = \(b.bind(.string(schemaName)))
            """
        if let record { sql += " AND s.\"row_id\" = \(b.bind(.uuid(record.id)))" }
        if let user { sql += " AND s.\"grantee\" = \(b.bind(.string(user)))" }
        b.sql = sql + " ORDER BY s.\"entity\", s.\"row_id\", s.\"grantee\""
        return b.statement
    }
}
