-- PGModel admins run as their own role, pgmodel_admin, so that a plain user's policies need no
-- "or the user is an admin" arm. PostgreSQL cannot use an index for an OR whose one arm is a
-- per-statement boolean: with that arm, every user's fetch scanned the whole model table
-- (measured: 6.6 ms for a user's 741 of 38,528 rows, 0.7 ms with the owner_id and id indexes).
--
-- Every service request of an admin runs as pgmodel_admin; everyone else's as pgmodel_app (the
-- role of the pooled connection's session). pgmodel_admin is a member of pgmodel_app (it holds the same table
-- privileges) and has no BYPASSRLS: its policies let it see every row only while the requesting user is an
-- admin in pgmodel.users, so a connection that took the role for a non-admin sees nothing. Idempotent.

-- The role. Creating it needs CREATEROLE; scripts/ and docker-compose create it as the superuser,
-- so a store running as a plain database owner only checks that it is there.
DO $pgmodel$
BEGIN
    IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'pgmodel_admin') THEN
        BEGIN
            CREATE ROLE pgmodel_admin NOLOGIN NOBYPASSRLS;
        EXCEPTION WHEN insufficient_privilege THEN
            RAISE EXCEPTION 'PGModel needs the role pgmodel_admin, and % may not create roles', current_user
                USING ERRCODE = 'insufficient_privilege',
                      HINT = format('As a superuser: CREATE ROLE pgmodel_admin NOLOGIN NOBYPASSRLS; GRANT pgmodel_app TO pgmodel_admin; GRANT pgmodel_admin TO %I;', current_user);
        END;
    END IF;
    IF EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'pgmodel_admin' AND (rolbypassrls OR rolsuper)) THEN
        RAISE EXCEPTION 'the role pgmodel_admin must not have BYPASSRLS or SUPERUSER: row-level security would not apply'
            USING ERRCODE = 'insufficient_privilege', HINT = 'ALTER ROLE pgmodel_admin NOSUPERUSER NOBYPASSRLS;';
    END IF;
    IF NOT pg_has_role('pgmodel_admin', 'pgmodel_app', 'MEMBER') THEN
        BEGIN
            GRANT pgmodel_app TO pgmodel_admin;
        EXCEPTION WHEN insufficient_privilege THEN
            RAISE EXCEPTION 'the role pgmodel_admin must be a member of pgmodel_app'
                USING ERRCODE = 'insufficient_privilege', HINT = 'As a superuser: GRANT pgmodel_app TO pgmodel_admin;';
        END;
    END IF;
    IF NOT pg_has_role(current_user, 'pgmodel_admin', 'MEMBER') THEN
        BEGIN
            EXECUTE format('GRANT pgmodel_admin TO %I', current_user);
        EXCEPTION WHEN insufficient_privilege THEN
            RAISE EXCEPTION 'PGModel''s service role % must be a member of pgmodel_admin', current_user
                USING ERRCODE = 'insufficient_privilege',
                      HINT = format('As a superuser: GRANT pgmodel_admin TO %I;', current_user);
        END;
    END IF;
END
$pgmodel$;

-- An admin's policies on the system tables: what the pgmodel_app policies allow an admin, under the
-- admin role. History rows are still written only into the writer's own transaction.
DO $pgmodel$
DECLARE
    is_admin constant text := '(current_user = ''pgmodel_admin'' AND (SELECT pgmodel.current_user_is_admin()))';
BEGIN
    IF NOT EXISTS (SELECT 1 FROM pg_policy WHERE polrelid = 'pgmodel.shares'::regclass AND polname = 'pgmodel_admin_all') THEN
        EXECUTE format('CREATE POLICY pgmodel_admin_all ON pgmodel.shares TO pgmodel_admin USING (%s) WITH CHECK (%s)', is_admin, is_admin);

        EXECUTE format('CREATE POLICY pgmodel_admin_select ON pgmodel.changes FOR SELECT TO pgmodel_admin USING (%s)', is_admin);
        CREATE POLICY pgmodel_admin_insert ON pgmodel.changes FOR INSERT TO pgmodel_admin
            WITH CHECK (current_user = 'pgmodel_admin' AND pgmodel.is_own_transaction(transaction_id));
        EXECUTE format('CREATE POLICY pgmodel_admin_delete ON pgmodel.changes FOR DELETE TO pgmodel_admin USING (%s)', is_admin);

        EXECUTE format('CREATE POLICY pgmodel_admin_select ON pgmodel.transactions FOR SELECT TO pgmodel_admin USING (%s)', is_admin);
        CREATE POLICY pgmodel_admin_insert ON pgmodel.transactions FOR INSERT TO pgmodel_admin
            WITH CHECK (current_user = 'pgmodel_admin' AND user_id = (SELECT pgmodel.current_user_id()) AND xid = pg_current_xact_id());
        EXECUTE format('CREATE POLICY pgmodel_admin_delete ON pgmodel.transactions FOR DELETE TO pgmodel_admin USING (%s)', is_admin);

        CREATE POLICY pgmodel_admin_select ON pgmodel.history_deletions FOR SELECT TO pgmodel_admin USING (current_user = 'pgmodel_admin');
        EXECUTE format('CREATE POLICY pgmodel_admin_insert ON pgmodel.history_deletions FOR INSERT TO pgmodel_admin WITH CHECK (%s)', is_admin);
        EXECUTE format('CREATE POLICY pgmodel_admin_update ON pgmodel.history_deletions FOR UPDATE TO pgmodel_admin USING (%s) WITH CHECK (%s)', is_admin, is_admin);
    END IF;
END
$pgmodel$;
