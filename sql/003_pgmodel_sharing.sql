-- PGModel sharing and row-level security: the role service requests run as, the functions the
-- policies call, the shares table, and the policies of the system tables. Idempotent.
--
-- Every service request runs as pgmodel_app with pgmodel.user_id set to its user: session settings of
-- the pooled connection it runs on (set_config(..., false), changed only between requests, never while
-- one runs). pgmodel_app has no BYPASSRLS, so every model,
-- join and history row it touches passes the policies below (and those the store creates with each
-- model table). The database owner's own connections (the direct store, an admin's psql) see every row.

-- The role. Creating it needs CREATEROLE; scripts/ and docker-compose create it as the superuser,
-- so a store running as a plain database owner only checks that it is there.
DO $pgmodel$
BEGIN
    IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'pgmodel_app') THEN
        BEGIN
            CREATE ROLE pgmodel_app NOLOGIN NOBYPASSRLS;
        EXCEPTION WHEN insufficient_privilege THEN
            RAISE EXCEPTION 'PGModel needs the role pgmodel_app, and % may not create roles', current_user
                USING ERRCODE = 'insufficient_privilege',
                      HINT = format('As a superuser: CREATE ROLE pgmodel_app NOLOGIN NOBYPASSRLS; GRANT pgmodel_app TO %I;', current_user);
        END;
    END IF;
    IF EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'pgmodel_app' AND (rolbypassrls OR rolsuper)) THEN
        RAISE EXCEPTION 'the role pgmodel_app must not have BYPASSRLS or SUPERUSER: row-level security would not apply'
            USING ERRCODE = 'insufficient_privilege', HINT = 'ALTER ROLE pgmodel_app NOSUPERUSER NOBYPASSRLS;';
    END IF;
    IF NOT pg_has_role(current_user, 'pgmodel_app', 'MEMBER') THEN
        BEGIN
            EXECUTE format('GRANT pgmodel_app TO %I', current_user);
        EXCEPTION WHEN insufficient_privilege THEN
            RAISE EXCEPTION 'PGModel''s service role % must be a member of pgmodel_app', current_user
                USING ERRCODE = 'insufficient_privilege',
                      HINT = format('As a superuser: GRANT pgmodel_app TO %I;', current_user);
        END;
    END IF;
END
$pgmodel$;

-- History follows visibility: a change is also visible to the users in its audience (those a record
-- was shared with when it was deleted), and an audience-only change (a record appearing for a user
-- when shared with them, disappearing when revoked) only to them.
DO $pgmodel$
BEGIN
    IF NOT EXISTS (SELECT 1 FROM pg_attribute WHERE attrelid = 'pgmodel.changes'::regclass AND attname = 'audience') THEN
        ALTER TABLE pgmodel.changes ADD COLUMN audience uuid[], ADD COLUMN audience_only boolean NOT NULL DEFAULT false;
        COMMENT ON COLUMN pgmodel.changes.audience IS 'users besides the owner who see this change: grantees of a deleted shared row, or the user a share or revocation is for';
        COMMENT ON COLUMN pgmodel.changes.audience_only IS 'true for a record appearing (insert) or disappearing (delete) for the audience because of a share or revocation';
    END IF;
END
$pgmodel$;

DO $pgmodel$
BEGIN
    IF to_regclass('pgmodel.shares') IS NULL THEN
        CREATE TABLE pgmodel.shares (
            schema_name  text NOT NULL,
            entity       text NOT NULL,
            row_id       uuid NOT NULL,
            owner_id     uuid REFERENCES pgmodel.users (id) ON DELETE CASCADE,
            grantee_id   uuid NOT NULL REFERENCES pgmodel.users (id) ON DELETE CASCADE,
            permission   text NOT NULL CHECK (permission IN ('readOnly', 'readWrite')),
            granted_by   text NOT NULL,
            created_at   timestamptz NOT NULL DEFAULT now(),
            PRIMARY KEY (schema_name, row_id, grantee_id)
        );
        CREATE INDEX shares_grantee ON pgmodel.shares (grantee_id, schema_name);
        CREATE INDEX shares_owner ON pgmodel.shares (owner_id);
        COMMENT ON TABLE pgmodel.shares IS 'PGModel record sharing: the root record (schema_name, entity, row_id) and every row it owns through .cascade relationships are visible to grantee_id';
        COMMENT ON COLUMN pgmodel.shares.owner_id IS 'the owner of the shared root record (NULL: a row the direct store inserted)';
        COMMENT ON COLUMN pgmodel.shares.permission IS 'readOnly: read; readWrite: also update the records and insert and delete children';
        COMMENT ON COLUMN pgmodel.shares.granted_by IS 'the service user (or database role) who shared';
    END IF;
    IF to_regclass('pgmodel.share_list') IS NULL THEN
        -- What an admin reads: every share with user names. security_invoker: pgmodel_app reading it
        -- passes the shares policies.
        CREATE VIEW pgmodel.share_list WITH (security_invoker = true) AS
            SELECT s.schema_name, s.entity, s.row_id, o.name AS owner, g.name AS grantee, s.permission, s.granted_by, s.created_at
              FROM pgmodel.shares s
              JOIN pgmodel.users g ON g.id = s.grantee_id
              LEFT JOIN pgmodel.users o ON o.id = s.owner_id;
        COMMENT ON VIEW pgmodel.share_list IS 'pgmodel.shares with the owner''s and the grantee''s names';
    END IF;
END
$pgmodel$;

-- The requesting service user, set by the service on the connection of each request. NULL outside
-- the service, and for the service's own work ('' there).
CREATE OR REPLACE FUNCTION pgmodel.current_user_id() RETURNS uuid
    LANGUAGE sql STABLE PARALLEL SAFE
    AS $f$ SELECT nullif(current_setting('pgmodel.user_id', true), '')::uuid $f$;

-- Whether the requesting service user is an admin: read from pgmodel.users, never from a setting,
-- so pgmodel_app cannot make itself an admin.
--
-- This and the other SECURITY DEFINER functions that policies call once per statement are plpgsql, not
-- sql: PostgreSQL plans a sql function with a SET clause again on every call (0.1-0.3 ms, more than a
-- point fetch's own work), while plpgsql keeps its statements' plans for the session.
CREATE OR REPLACE FUNCTION pgmodel.current_user_is_admin() RETURNS boolean
    LANGUAGE plpgsql STABLE SECURITY DEFINER SET search_path = pg_catalog, pg_temp
    AS $f$ BEGIN RETURN coalesce((SELECT u.is_admin FROM pgmodel.users u WHERE u.id = pgmodel.current_user_id()), false); END $f$;

-- The owners who shared something read-write with the requesting user in a store: whose rows the
-- user may insert (children of those records; a commit-time check makes sure they are).
CREATE OR REPLACE FUNCTION pgmodel.read_write_sharers(p_schema text) RETURNS uuid[]
    LANGUAGE plpgsql STABLE SECURITY DEFINER SET search_path = pg_catalog, pg_temp
    AS $f$ BEGIN RETURN (SELECT coalesce(array_agg(DISTINCT s.owner_id), '{}') FROM pgmodel.shares s
            WHERE s.schema_name = p_schema AND s.grantee_id = pgmodel.current_user_id()
              AND s.permission = 'readWrite' AND s.owner_id IS NOT NULL); END $f$;

-- Every row of every store shared with the requesting user, by id alone (see shared_row_keys in 010:
-- the exact test matches class and store too). A cheap first test before the exact one.
CREATE OR REPLACE FUNCTION pgmodel.shared_row_ids() RETURNS uuid[]
    LANGUAGE plpgsql STABLE SECURITY DEFINER SET search_path = pg_catalog, pg_temp
    AS $f$ BEGIN RETURN (SELECT coalesce(array_agg(DISTINCT left(k, 36)::uuid), '{}') FROM unnest(pgmodel.shared_row_keys()) AS k); END $f$;

-- Whether history transaction p_id is the requesting user's, written by this SQL transaction: where
-- a service user's history changes may go. (A function: a policy reading pgmodel.transactions from
-- pgmodel.changes would recurse through the transactions policy.)
CREATE OR REPLACE FUNCTION pgmodel.is_own_transaction(p_id bigint) RETURNS boolean
    LANGUAGE plpgsql STABLE SECURITY DEFINER SET search_path = pg_catalog, pg_temp
    AS $f$ BEGIN RETURN EXISTS (SELECT 1 FROM pgmodel.transactions t WHERE t.id = p_id AND t.xid = pg_current_xact_id()
                                AND t.user_id = pgmodel.current_user_id()); END $f$;

-- Whether row p_id of p_table was inserted by the current transaction: a join row may point at a row
-- the writer just created (a child they add to a shared record belongs to its owner, and is visible to
-- them only once linked).
CREATE OR REPLACE FUNCTION pgmodel.is_new_row(p_table regclass, p_id uuid) RETURNS boolean
    LANGUAGE plpgsql STABLE SECURITY DEFINER SET search_path = pg_catalog, pg_temp
    AS $f$
DECLARE
    marks regclass := to_regclass('pg_temp.pgmodel_new_rows');
    found_row boolean;
BEGIN
    IF marks IS NULL OR (SELECT c.relowner FROM pg_class c WHERE c.oid = marks) <> (SELECT r.oid FROM pg_roles r WHERE r.rolname = current_user) THEN
        RETURN false;
    END IF;
    EXECUTE format('SELECT EXISTS (SELECT 1 FROM %s WHERE relid = $1 AND id = $2 AND kind = ''n'')', marks) INTO found_row USING p_table, p_id;
    RETURN found_row;
END
$f$;

-- The rows of p_table whose reference p_column points at one of p_ids, rows of p_target (root class
-- p_root) about to be deleted: the references the delete sets to NULL, which history records under each
-- row's owner even when the deleting user cannot see the row. A service user learns this only about
-- rows they may delete.
CREATE OR REPLACE FUNCTION pgmodel.nullified_references(p_target regclass, p_root text, p_ids uuid[], p_table regclass, p_column text)
    RETURNS TABLE (id uuid, entity text, owner_id uuid)
    LANGUAGE plpgsql STABLE SECURITY DEFINER SET search_path = pg_catalog, pg_temp
    AS $f$
DECLARE
    target_schema text;
    allowed uuid[] := p_ids;
BEGIN
    IF current_setting('role') = 'pgmodel_app' THEN
        SELECT n.nspname INTO target_schema FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE c.oid = p_target;
        EXECUTE format('SELECT coalesce(array_agg(t.id), ''{}'') FROM %s t WHERE t.id = ANY ($1) '
                       'AND (t.owner_id = $2 OR $3 OR t.id = ANY (%I.pgmodel_shared_ids($4, true, true)))', p_target, target_schema)
            INTO allowed USING p_ids, pgmodel.current_user_id(), pgmodel.current_user_is_admin(), p_root;
    END IF;
    RETURN QUERY EXECUTE format('SELECT r.id, r.entity, r.owner_id FROM %s r WHERE r.%I = ANY ($1)', p_table, p_column) USING allowed;
END
$f$;

-- Commit-time checks of a row a service user inserted or updated (a deferred constraint trigger on
-- every model table, with check_references' arguments: 'v3', the root class, the unique columns, then
-- triples of foreign-key column, referenced table and referenced root class; 'v2' tables, not yet
-- registered again, have pairs without the class):
-- * every reference points at a row the user can see, and one written while its row was hidden from
--   them points at a row this transaction inserted; both fail as a reference to no row does;
-- * a row the user inserted for another owner (a child of a record shared read-write) is, at
--   commit, part of a record shared read-write with the user.
CREATE OR REPLACE FUNCTION pgmodel.check_row() RETURNS trigger
    LANGUAGE plpgsql
    AS $f$
DECLARE
    i integer := 3;
    step integer := CASE WHEN TG_NARGS >= 1 AND TG_ARGV[0] = 'v3' THEN 3 ELSE 2 END;
    target uuid;
    previous uuid;
    found_row boolean;
BEGIN
    IF current_user::text <> 'pgmodel_app' THEN
        RETURN NULL;
    END IF;
    IF TG_NARGS >= 3 AND TG_ARGV[0] IN ('v2', 'v3') THEN
        WHILE i < TG_NARGS LOOP
            EXECUTE format('SELECT ($1).%I', TG_ARGV[i]) INTO target USING NEW;
            previous := NULL;
            IF TG_OP = 'UPDATE' THEN
                EXECUTE format('SELECT ($1).%I', TG_ARGV[i]) INTO previous USING OLD;
            END IF;
            IF target IS NOT NULL AND target IS DISTINCT FROM previous THEN
                EXECUTE format('SELECT EXISTS (SELECT 1 FROM %s WHERE id = $1)', TG_ARGV[i + 1]) INTO found_row USING target;
                IF NOT found_row OR (NEW.owner_id IS DISTINCT FROM pgmodel.current_user_id()
                                     AND NOT pgmodel.reference_allowed(TG_ARGV[i + 1]::regclass, target)) THEN
                    RAISE EXCEPTION 'a reference points at a row that does not exist'
                        USING ERRCODE = 'foreign_key_violation';
                END IF;
            END IF;
            i := i + step;
        END LOOP;
        IF TG_OP = 'INSERT' AND NEW.owner_id IS DISTINCT FROM pgmodel.current_user_id() AND NOT pgmodel.current_user_is_admin() THEN
            EXECUTE format('SELECT $1 = ANY (%I.pgmodel_shared_ids($2, true, false))', TG_TABLE_SCHEMA) INTO found_row USING NEW.id, TG_ARGV[1];
            IF NOT coalesce(found_row, false) THEN
                RAISE EXCEPTION 'a row of % inserted for another owner is not part of a record shared read-write', TG_TABLE_NAME
                    USING ERRCODE = 'insufficient_privilege';
            END IF;
        END IF;
        RETURN NULL;
    END IF;
    -- A trigger made by an older PGModel (pairs only, no root class): it vouches for nothing, so a
    -- service user's writes wait for the schema's next registration, which replaces it.
    RAISE EXCEPTION 'the tables of % were secured by an older PGModel: register the schema again', TG_TABLE_SCHEMA
        USING ERRCODE = 'insufficient_privilege';
END
$f$;

-- Shares of deleted rows go with them (a statement trigger on every model table; TG_ARGV[0]: the
-- hierarchy's root class): only shares of that class, of rows with the share's owner.
CREATE OR REPLACE FUNCTION pgmodel.forget_shares() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp
    AS $f$
BEGIN
    IF TG_NARGS < 1 THEN
        RETURN NULL;   -- a trigger made by an older PGModel: registering the schema again replaces it
    END IF;
    DELETE FROM pgmodel.shares s USING pgmodel_deleted_rows d
     WHERE s.schema_name = TG_TABLE_SCHEMA AND s.root_entity = TG_ARGV[0] AND s.row_id = d.id
       AND s.owner_id IS NOT DISTINCT FROM d.owner_id;
    RETURN NULL;
END
$f$;

-- Granted once: GRANT rewrites the catalog row each time, and this file runs at every start.
-- SECURITY DEFINER functions are not for PUBLIC.
DO $pgmodel$
BEGIN
    -- A function without an ACL yet is executable by PUBLIC: the newest one tells whether this ran.
    -- (The REVOKE and GRANT below must list every function this file adds.)
    IF NOT has_table_privilege('pgmodel_app', 'pgmodel.share_list', 'SELECT')
       OR (SELECT proacl IS NULL FROM pg_proc WHERE oid = 'pgmodel.nullified_references(regclass, text, uuid[], regclass, text)'::regprocedure) THEN
        REVOKE ALL ON FUNCTION pgmodel.current_user_is_admin(), pgmodel.is_own_transaction(bigint), pgmodel.is_new_row(regclass, uuid), pgmodel.nullified_references(regclass, text, uuid[], regclass, text), pgmodel.read_write_sharers(text), pgmodel.shared_row_ids() FROM PUBLIC;
        GRANT EXECUTE ON FUNCTION pgmodel.current_user_id(), pgmodel.current_user_is_admin(), pgmodel.is_own_transaction(bigint), pgmodel.is_new_row(regclass, uuid), pgmodel.nullified_references(regclass, text, uuid[], regclass, text), pgmodel.read_write_sharers(text),
            pgmodel.shared_row_ids() TO pgmodel_app;
        GRANT USAGE ON SCHEMA pgmodel TO pgmodel_app;
        -- User names (never password hashes): sharing names a user.
        GRANT SELECT (id, name) ON pgmodel.users TO pgmodel_app;
        GRANT SELECT ON pgmodel.entities TO pgmodel_app;
        GRANT SELECT, INSERT, DELETE ON pgmodel.transactions, pgmodel.changes TO pgmodel_app;
        GRANT USAGE ON SEQUENCE pgmodel.transactions_id_seq, pgmodel.changes_id_seq TO pgmodel_app;
        GRANT SELECT, INSERT, UPDATE ON pgmodel.history_deletions TO pgmodel_app;
        GRANT SELECT, INSERT, UPDATE, DELETE ON pgmodel.shares TO pgmodel_app;
        GRANT SELECT ON pgmodel.share_list TO pgmodel_app;
    END IF;
END
$pgmodel$;

-- Policies of the system tables. Each table keeps one policy for its owner (the database owner's
-- connections see everything), created with the table owner's role, and policies for pgmodel_app.
DO $pgmodel$
DECLARE
    t text;
BEGIN
    FOREACH t IN ARRAY ARRAY['shares', 'transactions', 'changes', 'history_deletions'] LOOP
        -- Only when not yet on: ALTER TABLE takes an exclusive lock, and this runs at every start.
        IF NOT EXISTS (SELECT 1 FROM pg_class WHERE oid = format('pgmodel.%I', t)::regclass AND relrowsecurity AND relforcerowsecurity) THEN
            EXECUTE format('ALTER TABLE pgmodel.%I ENABLE ROW LEVEL SECURITY', t);
            EXECUTE format('ALTER TABLE pgmodel.%I FORCE ROW LEVEL SECURITY', t);
        END IF;
        IF NOT EXISTS (SELECT 1 FROM pg_policy WHERE polrelid = format('pgmodel.%I', t)::regclass AND polname = 'pgmodel_owner') THEN
            EXECUTE format('CREATE POLICY pgmodel_owner ON pgmodel.%I TO %I USING (true) WITH CHECK (true)',
                           t, (SELECT r.rolname FROM pg_class c JOIN pg_roles r ON r.oid = c.relowner WHERE c.oid = format('pgmodel.%I', t)::regclass));
        END IF;
    END LOOP;

    IF NOT EXISTS (SELECT 1 FROM pg_policy WHERE polrelid = 'pgmodel.shares'::regclass AND polname = 'pgmodel_app_select') THEN
        -- The owner and an admin see a record's shares; a grantee sees the shares made to them.
        CREATE POLICY pgmodel_app_select ON pgmodel.shares FOR SELECT TO pgmodel_app
            USING (current_user = 'pgmodel_app' AND (owner_id = (SELECT pgmodel.current_user_id())
                   OR grantee_id = (SELECT pgmodel.current_user_id()) OR (SELECT pgmodel.current_user_is_admin())));
        -- Only the owner of the root record (or an admin) shares, changes or revokes.
        CREATE POLICY pgmodel_app_insert ON pgmodel.shares FOR INSERT TO pgmodel_app
            WITH CHECK (current_user = 'pgmodel_app' AND (owner_id = (SELECT pgmodel.current_user_id()) OR (SELECT pgmodel.current_user_is_admin())));
        CREATE POLICY pgmodel_app_update ON pgmodel.shares FOR UPDATE TO pgmodel_app
            USING (current_user = 'pgmodel_app' AND (owner_id = (SELECT pgmodel.current_user_id()) OR (SELECT pgmodel.current_user_is_admin())))
            WITH CHECK (current_user = 'pgmodel_app' AND (owner_id = (SELECT pgmodel.current_user_id()) OR (SELECT pgmodel.current_user_is_admin())));
        CREATE POLICY pgmodel_app_delete ON pgmodel.shares FOR DELETE TO pgmodel_app
            USING (current_user = 'pgmodel_app' AND (owner_id = (SELECT pgmodel.current_user_id()) OR (SELECT pgmodel.current_user_is_admin())));
    END IF;

    IF NOT EXISTS (SELECT 1 FROM pg_policy WHERE polrelid = 'pgmodel.changes'::regclass AND polname = 'pgmodel_app_select') THEN
        -- A change is visible to the changed row's owner, to users the row is shared with, to admins.
        CREATE POLICY pgmodel_app_select ON pgmodel.changes FOR SELECT TO pgmodel_app
            USING (current_user = 'pgmodel_app' AND (
                   (NOT audience_only AND (owner_id = (SELECT pgmodel.current_user_id()) OR (SELECT pgmodel.current_user_is_admin())
                                           OR row_id = ANY ((SELECT pgmodel.shared_row_ids())::uuid[])))
                   OR (SELECT pgmodel.current_user_id()) = ANY (audience)));
        -- Changes are written only into the writer's own history transaction of this SQL transaction.
        CREATE POLICY pgmodel_app_insert ON pgmodel.changes FOR INSERT TO pgmodel_app
            WITH CHECK (current_user = 'pgmodel_app' AND pgmodel.is_own_transaction(transaction_id));
        CREATE POLICY pgmodel_app_delete ON pgmodel.changes FOR DELETE TO pgmodel_app
            USING (current_user = 'pgmodel_app' AND (SELECT pgmodel.current_user_is_admin()));

        -- A history transaction is visible with any of its visible changes, and to the user who saved it.
        CREATE POLICY pgmodel_app_select ON pgmodel.transactions FOR SELECT TO pgmodel_app
            USING (current_user = 'pgmodel_app' AND (user_id = (SELECT pgmodel.current_user_id()) OR (SELECT pgmodel.current_user_is_admin())
                   OR EXISTS (SELECT 1 FROM pgmodel.changes c WHERE c.transaction_id = transactions.id)));
        CREATE POLICY pgmodel_app_insert ON pgmodel.transactions FOR INSERT TO pgmodel_app
            WITH CHECK (current_user = 'pgmodel_app' AND user_id = (SELECT pgmodel.current_user_id()) AND xid = pg_current_xact_id());
        CREATE POLICY pgmodel_app_delete ON pgmodel.transactions FOR DELETE TO pgmodel_app
            USING (current_user = 'pgmodel_app' AND (SELECT pgmodel.current_user_is_admin()));

        -- Everyone reads how far history was deleted; only admins move it.
        CREATE POLICY pgmodel_app_select ON pgmodel.history_deletions FOR SELECT TO pgmodel_app USING (current_user = 'pgmodel_app');
        CREATE POLICY pgmodel_app_insert ON pgmodel.history_deletions FOR INSERT TO pgmodel_app
            WITH CHECK (current_user = 'pgmodel_app' AND (SELECT pgmodel.current_user_is_admin()));
        CREATE POLICY pgmodel_app_update ON pgmodel.history_deletions FOR UPDATE TO pgmodel_app
            USING (current_user = 'pgmodel_app' AND (SELECT pgmodel.current_user_is_admin()))
            WITH CHECK (current_user = 'pgmodel_app' AND (SELECT pgmodel.current_user_is_admin()));
    END IF;
END
$pgmodel$;
