@_spi(PGModelInternals) extension SystemSQL {
    /// Names this build's system SQL: FNV-1a (64 bits) over every file's name and contents. Not a
    /// security check (whoever may comment on schema `pgmodel` owns it anyway), only "these exact files".
    public static let fingerprint: String = {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for file in files {
            for byte in file.name.utf8 + [0] + file.sql.utf8 + [0] {
                hash ^= UInt64(byte)
                hash &*= 0x0000_0100_0000_01b3
            }
        }
        let hex = String(hash, radix: 16)
        return String(repeating: "0", count: 16 - hex.count) + hex
    }()

    /// The comment a full bootstrap leaves on schema `pgmodel`: what admins see in `\dn+`, and what the
    /// next start compares before it skips the files.
    public static var marker: String { "PGModel system objects (system SQL \(fingerprint))" }

    /// Sets ``marker``. Only the schema's owner may comment on it; a store that bootstraps as another
    /// role (an owner created the schema by hand) keeps working and simply runs the files at every start.
    static var markAppliedStatement: String {
        """
        DO $pgmodel$ BEGIN
            EXECUTE format('COMMENT ON SCHEMA pgmodel IS %L', '\(marker)');
        EXCEPTION WHEN insufficient_privilege THEN NULL;
        END $pgmodel$
        """
    }

    /// True when the marker is ``marker`` (bound as `$1`) and the role checks of 003 and 005 hold for the
    /// connecting role: both roles exist without SUPERUSER or BYPASSRLS, `pgmodel_admin` is a member of
    /// `pgmodel_app`, and the current user of both. Never fails on a database without any of it: roles
    /// are matched by OID, so a missing one makes a row count short, not an error.
    static let isAppliedQuery = """
        SELECT coalesce(obj_description(to_regnamespace('pgmodel'), 'pg_namespace') = $1, false)
            AND (SELECT count(*) FROM pg_roles r
                 WHERE r.rolname IN ('pgmodel_app', 'pgmodel_admin') AND NOT r.rolsuper AND NOT r.rolbypassrls
                   AND pg_has_role(current_user, r.oid, 'MEMBER')) = 2
            AND coalesce((SELECT pg_has_role(a.oid, b.oid, 'MEMBER') FROM pg_roles a, pg_roles b
                          WHERE a.rolname = 'pgmodel_admin' AND b.rolname = 'pgmodel_app'), false)
        """
}
