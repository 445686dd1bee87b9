-- PGModel shares keyed by entity, write checks judged as of before the statement, and fingerprinted
-- policies on the system tables. Idempotent, and silent once applied.
--
-- Row ids are chosen by clients and may repeat across the class hierarchies of a store: a Note and a
-- Trip may have one id. A share therefore names its record by (schema_name, root_entity, row_id), where
-- root_entity is the root class of the record's hierarchy (its table), and covers a row only while that row
-- has the share's owner. Every function that expands shares (each store's pgmodel_shared_ids,
-- pgmodel_shared_keys, pgmodel_share_members and pgmodel_share_audience, created with its tables) and
-- everything that reads them (forget_shares, history visibility, change events) match on the entity too.
--
-- Existing shares keep their meaning: they were made for the class recorded in their entity column, and
-- root_entity starts as that class; registering a store's schema replaces a subclass there by its root.
--
-- Rows a service transaction inserted are listed in a temporary table that only the definer of the
-- functions below can write (pgmodel_new_rows, emptied at every commit), never judged by xmin: xmin is
-- also the current transaction's on a row that ON DELETE SET NULL rewrote in the same save.

DO $pgmodel$
BEGIN
    IF NOT EXISTS (SELECT 1 FROM pg_attribute WHERE attrelid = 'pgmodel.shares'::regclass AND attname = 'root_entity' AND NOT attisdropped) THEN
        ALTER TABLE pgmodel.shares ADD COLUMN root_entity text;
        UPDATE pgmodel.shares SET root_entity = entity;
        ALTER TABLE pgmodel.shares ALTER COLUMN root_entity SET NOT NULL;
        ALTER TABLE pgmodel.shares DROP CONSTRAINT IF EXISTS shares_pkey;
        ALTER TABLE pgmodel.shares ADD CONSTRAINT shares_pkey PRIMARY KEY (schema_name, root_entity, row_id, grantee_id);
        COMMENT ON COLUMN pgmodel.shares.root_entity IS 'the root class of the shared record''s hierarchy: with schema_name and row_id, the record a share names (ids may repeat across classes)';
        COMMENT ON COLUMN pgmodel.shares.entity IS 'the shared record''s class';
    END IF;
    IF NOT EXISTS (SELECT 1 FROM pg_attribute WHERE attrelid = 'pgmodel.share_list'::regclass AND attname = 'root_entity' AND NOT attisdropped) THEN
        CREATE OR REPLACE VIEW pgmodel.share_list WITH (security_invoker = true) AS
            SELECT s.schema_name, s.entity, s.row_id, o.name AS owner, g.name AS grantee, s.permission, s.granted_by, s.created_at, s.root_entity
              FROM pgmodel.shares s
              JOIN pgmodel.users g ON g.id = s.grantee_id
              LEFT JOIN pgmodel.users o ON o.id = s.owner_id;
        COMMENT ON COLUMN pgmodel.share_list.root_entity IS 'the root class of the shared record''s hierarchy';
    END IF;
END
$pgmodel$;

-- Every row shared with the requesting user, in every store, as 'id entity schema' keys (the row's
-- concrete class): what history matches a change against. Each store's pgmodel_shared_keys lists its own.
CREATE OR REPLACE FUNCTION pgmodel.shared_row_keys() RETURNS text[]
    LANGUAGE plpgsql STABLE SECURITY DEFINER SET search_path = pg_catalog, pg_temp
    AS $f$
DECLARE
    store text;
    keys text[] := '{}';
    more text[];
BEGIN
    FOR store IN SELECT DISTINCT s.schema_name FROM pgmodel.shares s WHERE s.grantee_id = pgmodel.current_user_id() LOOP
        IF to_regprocedure(format('%I.pgmodel_shared_keys()', store)) IS NOT NULL THEN
            EXECUTE format('SELECT %I.pgmodel_shared_keys()', store) INTO more;
            keys := keys || ARRAY(SELECT k || ' ' || store FROM unnest(more) AS k);
        END IF;
    END LOOP;
    RETURN keys;
END
$f$;


-- Whether the change of row p_id (class p_entity) in history transaction p_transaction is of a row shared
-- with the user: p_keys is pgmodel.shared_row_keys(), computed once per statement by the caller.
CREATE OR REPLACE FUNCTION pgmodel.is_shared_change(p_transaction bigint, p_entity text, p_id uuid, p_keys text[]) RETURNS boolean
    LANGUAGE plpgsql STABLE SECURITY DEFINER SET search_path = pg_catalog, pg_temp
    AS $f$ BEGIN RETURN (SELECT (p_id::text || ' ' || p_entity || ' ' || t.schema_name) = ANY (p_keys) FROM pgmodel.transactions t WHERE t.id = p_transaction); END $f$;

-- The same for a run of inserts: whether any of its rows is shared with the user.
CREATE OR REPLACE FUNCTION pgmodel.is_shared_run(p_transaction bigint, p_entity text, p_ids uuid[], p_keys text[]) RETURNS boolean
    LANGUAGE plpgsql STABLE SECURITY DEFINER SET search_path = pg_catalog, pg_temp
    AS $f$ BEGIN RETURN EXISTS (SELECT 1 FROM pgmodel.transactions t, unnest(p_ids) AS x
                                WHERE t.id = p_transaction AND (x::text || ' ' || p_entity || ' ' || t.schema_name) = ANY (p_keys)); END $f$;

-- The list of rows this transaction inserted ('n') and of rows it referenced while it could not see them
-- ('r'), a temporary table of the definer's: pgmodel_app cannot write it. A temporary table of the same
-- name that someone else made first is never trusted.
CREATE OR REPLACE FUNCTION pgmodel.row_marks() RETURNS regclass
    LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp
    AS $f$
DECLARE
    marks regclass := to_regclass('pg_temp.pgmodel_new_rows');
BEGIN
    IF marks IS NULL THEN
        CREATE TEMPORARY TABLE pgmodel_new_rows (relid oid NOT NULL, id uuid NOT NULL, kind "char" NOT NULL, PRIMARY KEY (relid, id, kind))
            ON COMMIT DELETE ROWS;
        marks := to_regclass('pg_temp.pgmodel_new_rows');
    END IF;
    IF (SELECT c.relowner FROM pg_class c WHERE c.oid = marks) <> (SELECT r.oid FROM pg_roles r WHERE r.rolname = current_user) THEN
        RAISE EXCEPTION 'pg_temp.pgmodel_new_rows is not PGModel''s' USING ERRCODE = 'insufficient_privilege';
    END IF;
    RETURN marks;
END
$f$;


-- A statement trigger on every model table: lists the rows of other owners a service user's statement
-- inserted (children of records shared with them). Their own rows are visible to them anyway.
CREATE OR REPLACE FUNCTION pgmodel.note_new_rows() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp
    AS $f$
BEGIN
    IF current_setting('role') NOT IN ('pgmodel_app', 'pgmodel_admin') THEN
        RETURN NULL;
    END IF;
    IF EXISTS (SELECT 1 FROM pgmodel_inserted_rows n WHERE n.owner_id IS DISTINCT FROM pgmodel.current_user_id()) THEN
        EXECUTE format('INSERT INTO %s SELECT $1, n.id, ''n'' FROM pgmodel_inserted_rows n WHERE n.owner_id IS DISTINCT FROM $2 '
                       'ON CONFLICT DO NOTHING', pgmodel.row_marks()) USING TG_RELID, pgmodel.current_user_id();
    END IF;
    RETURN NULL;
END
$f$;

-- Called by check_references for a reference to a row the user could not see when the statement ran:
-- at commit that row must be one the transaction inserted.
CREATE OR REPLACE FUNCTION pgmodel.note_unseen_reference(p_table regclass, p_id uuid) RETURNS void
    LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp
    AS $f$
BEGIN
    EXECUTE format('INSERT INTO %s VALUES ($1, $2, ''r'') ON CONFLICT DO NOTHING', pgmodel.row_marks()) USING p_table, p_id;
END
$f$;

-- Whether a reference to row p_id of p_table may stay at commit: the row was visible when the reference
-- was written, or this transaction inserted it.
CREATE OR REPLACE FUNCTION pgmodel.reference_allowed(p_table regclass, p_id uuid) RETURNS boolean
    LANGUAGE plpgsql STABLE SECURITY DEFINER SET search_path = pg_catalog, pg_temp
    AS $f$
DECLARE
    marks regclass := to_regclass('pg_temp.pgmodel_new_rows');
    unseen boolean;
BEGIN
    IF marks IS NULL THEN
        RETURN true;
    END IF;
    IF (SELECT c.relowner FROM pg_class c WHERE c.oid = marks) <> (SELECT r.oid FROM pg_roles r WHERE r.rolname = current_user) THEN
        RETURN false;
    END IF;
    EXECUTE format('SELECT EXISTS (SELECT 1 FROM %s WHERE relid = $1 AND id = $2 AND kind = ''r'')', marks) INTO unseen USING p_table, p_id;
    RETURN NOT unseen OR pgmodel.is_new_row(p_table, p_id);
END
$f$;

-- Before a service user's row of another owner is written (a row trigger on every model table; TG_ARGV:
-- 'v3', the hierarchy's root class, its unique columns as one comma-separated list, then triples of
-- foreign-key column, referenced table, and the referenced root class when the key is a .cascade edge
-- (either way) or ''; a 'v2' trigger has pairs without the class):
-- * a reference to a row the user cannot see as the statement runs is noted; at commit check_row
--   accepts it only if this transaction inserted that row. Visibility is judged before the statement, so
--   the edge a statement makes never vouches for itself;
-- * a .cascade edge is one of ownership (a share of the parent covers the child), so it may point only
--   at a row the user may write or inserted: a row shared read-only with them never becomes writable
--   through a read-write share, and a record shared read-only never gains a member;
-- * a row of another owner (a child of a record shared with the user) gets no unique values from the user
--   and none changed: the owner's private rows would otherwise answer whether they hold that value.
CREATE OR REPLACE FUNCTION pgmodel.check_references() RETURNS trigger
    LANGUAGE plpgsql
    AS $f$
DECLARE
    i integer := 3;
    step integer := CASE WHEN TG_NARGS >= 1 AND TG_ARGV[0] = 'v3' THEN 3 ELSE 2 END;
    target uuid;
    previous uuid;
    found_row boolean;
    unique_column text;
    value_now text;
    value_before text;
BEGIN
    IF current_user::text <> 'pgmodel_app' THEN
        RETURN NEW;
    END IF;
    IF TG_NARGS < 3 OR TG_ARGV[0] NOT IN ('v2', 'v3') THEN
        RAISE EXCEPTION 'the tables of % were secured by an older PGModel: register the schema again', TG_TABLE_SCHEMA
            USING ERRCODE = 'insufficient_privilege';
    END IF;
    WHILE i < TG_NARGS LOOP
        EXECUTE format('SELECT ($1).%I', TG_ARGV[i]) INTO target USING NEW;
        previous := NULL;
        IF TG_OP = 'UPDATE' THEN
            EXECUTE format('SELECT ($1).%I', TG_ARGV[i]) INTO previous USING OLD;
        END IF;
        IF target IS NOT NULL AND target IS DISTINCT FROM previous THEN
            EXECUTE format('SELECT EXISTS (SELECT 1 FROM %s WHERE id = $1)', TG_ARGV[i + 1]) INTO found_row USING target;
            IF NOT found_row AND NOT pgmodel.is_new_row(TG_ARGV[i + 1]::regclass, target) THEN
                PERFORM pgmodel.note_unseen_reference(TG_ARGV[i + 1]::regclass, target);
            ELSIF found_row AND step = 3 AND TG_ARGV[i + 2] <> '' AND NOT pgmodel.is_new_row(TG_ARGV[i + 1]::regclass, target) THEN
                EXECUTE format('SELECT EXISTS (SELECT 1 FROM %s WHERE id = $1 AND (owner_id = $2 OR id = ANY (%I.pgmodel_shared_ids($3, true, false))))',
                               TG_ARGV[i + 1], TG_TABLE_SCHEMA)
                    INTO found_row USING target, pgmodel.current_user_id(), TG_ARGV[i + 2];
                IF NOT found_row THEN
                    RAISE EXCEPTION 'a row shared read-only is not attached to a record by a user it is shared with (%)', TG_TABLE_NAME
                        USING ERRCODE = 'insufficient_privilege';
                END IF;
            END IF;
        END IF;
        i := i + step;
    END LOOP;
    IF TG_ARGV[2] <> '' AND NEW.owner_id IS DISTINCT FROM pgmodel.current_user_id() THEN
        FOREACH unique_column IN ARRAY string_to_array(TG_ARGV[2], ',') LOOP
            EXECUTE format('SELECT ($1).%I::text', unique_column) INTO value_now USING NEW;
            value_before := NULL;
            IF TG_OP = 'UPDATE' THEN
                EXECUTE format('SELECT ($1).%I::text', unique_column) INTO value_before USING OLD;
            END IF;
            IF value_now IS DISTINCT FROM value_before THEN
                RAISE EXCEPTION 'a user a record is shared with does not set unique values of the owner''s rows (%)', TG_TABLE_NAME
                    USING ERRCODE = 'insufficient_privilege';
            END IF;
        END LOOP;
    END IF;
    RETURN NEW;
END
$f$;




DO $pgmodel$
BEGIN
    -- The form without the root class matched ids alone.
    IF to_regprocedure('pgmodel.nullified_references(regclass, uuid[], regclass, text)') IS NOT NULL THEN
        DROP FUNCTION pgmodel.nullified_references(regclass, uuid[], regclass, text);
    END IF;
    IF (SELECT proacl IS NULL FROM pg_proc WHERE oid = 'pgmodel.reference_allowed(regclass, uuid)'::regprocedure) THEN
        REVOKE ALL ON FUNCTION pgmodel.shared_row_keys(), pgmodel.is_shared_change(bigint, text, uuid, text[]),
            pgmodel.is_shared_run(bigint, text, uuid[], text[]), pgmodel.row_marks(), pgmodel.note_new_rows(),
            pgmodel.note_unseen_reference(regclass, uuid), pgmodel.reference_allowed(regclass, uuid) FROM PUBLIC;
        IF EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'pgmodel_app') THEN
            GRANT EXECUTE ON FUNCTION pgmodel.shared_row_keys(), pgmodel.is_shared_change(bigint, text, uuid, text[]),
                pgmodel.is_shared_run(bigint, text, uuid[], text[]), pgmodel.note_unseen_reference(regclass, uuid),
                pgmodel.reference_allowed(regclass, uuid) TO pgmodel_app;
        END IF;
    END IF;
END
$pgmodel$;

-- Policies of the system tables, each with a fingerprint of its definition in its comment (as the model
-- tables' policies have): a store made by an older PGModel gets every fix at its next start. The
-- definitions below are the whole truth for these tables; earlier files made the first versions.
CREATE OR REPLACE FUNCTION pgmodel.ensure_policy(p_table regclass, p_name text, p_definition text) RETURNS void
    LANGUAGE plpgsql
    AS $f$
DECLARE
    fingerprint constant text := 'PGModel policy ' || md5(p_definition);
BEGIN
    IF NOT EXISTS (SELECT 1 FROM pg_policy WHERE polrelid = p_table AND polname = p_name AND obj_description(oid, 'pg_policy') = fingerprint) THEN
        EXECUTE format('DROP POLICY IF EXISTS %I ON %s', p_name, p_table);
        EXECUTE format('CREATE POLICY %I ON %s %s', p_name, p_table, p_definition);
        EXECUTE format('COMMENT ON POLICY %I ON %s IS %L', p_name, p_table, fingerprint);
    END IF;
END
$f$;

DO $pgmodel$
DECLARE
    me constant text := '(SELECT pgmodel.current_user_id())';
    is_app constant text := 'current_user = ''pgmodel_app''';
    is_admin constant text := '(current_user = ''pgmodel_admin'' AND (SELECT pgmodel.current_user_is_admin()))';
    owner_or_admin text;
    shared_change text;
BEGIN
    IF (SELECT proacl IS NULL FROM pg_proc WHERE oid = 'pgmodel.ensure_policy(regclass, text, text)'::regprocedure) THEN
        REVOKE ALL ON FUNCTION pgmodel.ensure_policy(regclass, text, text) FROM PUBLIC;
    END IF;
    owner_or_admin := format('%s AND (owner_id = %s OR (SELECT pgmodel.current_user_is_admin()))', is_app, me);

    -- Shares: the owner and an admin see a record's shares, a grantee those made to them; only the owner
    -- of the root record (or an admin) shares, changes or revokes.
    PERFORM pgmodel.ensure_policy('pgmodel.shares', 'pgmodel_app_select', format(
        'FOR SELECT TO pgmodel_app USING (%s AND (owner_id = %s OR grantee_id = %s OR (SELECT pgmodel.current_user_is_admin())))', is_app, me, me));
    PERFORM pgmodel.ensure_policy('pgmodel.shares', 'pgmodel_app_insert', format('FOR INSERT TO pgmodel_app WITH CHECK (%s)', owner_or_admin));
    PERFORM pgmodel.ensure_policy('pgmodel.shares', 'pgmodel_app_update', format('FOR UPDATE TO pgmodel_app USING (%s) WITH CHECK (%s)', owner_or_admin, owner_or_admin));
    PERFORM pgmodel.ensure_policy('pgmodel.shares', 'pgmodel_app_delete', format('FOR DELETE TO pgmodel_app USING (%s)', owner_or_admin));
    PERFORM pgmodel.ensure_policy('pgmodel.shares', 'pgmodel_admin_all', format('TO pgmodel_admin USING (%s) WITH CHECK (%s)', is_admin, is_admin));

    -- A change is visible to the changed row's owner, to admins, to users the row (that class, that id,
    -- that store) is shared with, and to its audience. The id test first: it is cheap and rarely true.
    shared_change := '(row_id = ANY ((SELECT pgmodel.shared_row_ids())::uuid[]) '
        || 'AND pgmodel.is_shared_change(transaction_id, entity, row_id, (SELECT pgmodel.shared_row_keys())::text[])) '
        || 'OR (row_ids && (SELECT pgmodel.shared_row_ids())::uuid[] '
        || 'AND pgmodel.is_shared_run(transaction_id, entity, row_ids, (SELECT pgmodel.shared_row_keys())::text[]))';
    PERFORM pgmodel.ensure_policy('pgmodel.changes', 'pgmodel_app_select', format(
        'FOR SELECT TO pgmodel_app USING (%s AND ((NOT audience_only AND (owner_id = %s OR (SELECT pgmodel.current_user_is_admin()) OR %s)) OR %s = ANY (audience)))',
        is_app, me, shared_change, me));
    PERFORM pgmodel.ensure_policy('pgmodel.changes', 'pgmodel_app_insert', format(
        'FOR INSERT TO pgmodel_app WITH CHECK (%s AND transaction_id = (SELECT pgmodel.own_transaction_id()))', is_app));
    PERFORM pgmodel.ensure_policy('pgmodel.changes', 'pgmodel_app_delete', format(
        'FOR DELETE TO pgmodel_app USING (%s AND (SELECT pgmodel.current_user_is_admin()))', is_app));
    PERFORM pgmodel.ensure_policy('pgmodel.changes', 'pgmodel_admin_select', format('FOR SELECT TO pgmodel_admin USING (%s)', is_admin));
    PERFORM pgmodel.ensure_policy('pgmodel.changes', 'pgmodel_admin_insert',
        'FOR INSERT TO pgmodel_admin WITH CHECK (current_user = ''pgmodel_admin'' AND transaction_id = (SELECT pgmodel.own_transaction_id()))');
    PERFORM pgmodel.ensure_policy('pgmodel.changes', 'pgmodel_admin_delete', format('FOR DELETE TO pgmodel_admin USING (%s)', is_admin));

    -- A history transaction is visible with any of its visible changes, and to the user who saved it.
    PERFORM pgmodel.ensure_policy('pgmodel.transactions', 'pgmodel_app_select', format(
        'FOR SELECT TO pgmodel_app USING (%s AND (user_id = %s OR (SELECT pgmodel.current_user_is_admin()) '
        'OR EXISTS (SELECT 1 FROM pgmodel.changes c WHERE c.transaction_id = transactions.id)))', is_app, me));
    PERFORM pgmodel.ensure_policy('pgmodel.transactions', 'pgmodel_app_insert', format(
        'FOR INSERT TO pgmodel_app WITH CHECK (%s AND user_id = %s AND xid = pg_current_xact_id())', is_app, me));
    PERFORM pgmodel.ensure_policy('pgmodel.transactions', 'pgmodel_app_delete', format(
        'FOR DELETE TO pgmodel_app USING (%s AND (SELECT pgmodel.current_user_is_admin()))', is_app));
    PERFORM pgmodel.ensure_policy('pgmodel.transactions', 'pgmodel_admin_select', format('FOR SELECT TO pgmodel_admin USING (%s)', is_admin));
    PERFORM pgmodel.ensure_policy('pgmodel.transactions', 'pgmodel_admin_insert', format(
        'FOR INSERT TO pgmodel_admin WITH CHECK (current_user = ''pgmodel_admin'' AND user_id = %s AND xid = pg_current_xact_id())', me));
    PERFORM pgmodel.ensure_policy('pgmodel.transactions', 'pgmodel_admin_delete', format('FOR DELETE TO pgmodel_admin USING (%s)', is_admin));

    -- Everyone reads how far history was deleted; only admins move it.
    PERFORM pgmodel.ensure_policy('pgmodel.history_deletions', 'pgmodel_app_select', format('FOR SELECT TO pgmodel_app USING (%s)', is_app));
    PERFORM pgmodel.ensure_policy('pgmodel.history_deletions', 'pgmodel_app_insert', format(
        'FOR INSERT TO pgmodel_app WITH CHECK (%s AND (SELECT pgmodel.current_user_is_admin()))', is_app));
    PERFORM pgmodel.ensure_policy('pgmodel.history_deletions', 'pgmodel_app_update', format(
        'FOR UPDATE TO pgmodel_app USING (%1$s AND (SELECT pgmodel.current_user_is_admin())) WITH CHECK (%1$s AND (SELECT pgmodel.current_user_is_admin()))', is_app));
    PERFORM pgmodel.ensure_policy('pgmodel.history_deletions', 'pgmodel_admin_select',
        'FOR SELECT TO pgmodel_admin USING (current_user = ''pgmodel_admin'')');
    PERFORM pgmodel.ensure_policy('pgmodel.history_deletions', 'pgmodel_admin_insert', format('FOR INSERT TO pgmodel_admin WITH CHECK (%s)', is_admin));
    PERFORM pgmodel.ensure_policy('pgmodel.history_deletions', 'pgmodel_admin_update', format(
        'FOR UPDATE TO pgmodel_admin USING (%1$s) WITH CHECK (%1$s)', is_admin));
END
$pgmodel$;

-- Every change as one row (see 009), with a run's inserts matched by class and store as well as id.
DO $pgmodel$
BEGIN
    IF position('is_shared_change' IN pg_get_viewdef('pgmodel.change_rows'::regclass)) = 0 THEN
        CREATE OR REPLACE VIEW pgmodel.change_rows WITH (security_invoker = true) AS
            SELECT c.id, c.transaction_id, c.entity, c.row_id, c.kind, c.owner_id, c.updated_attributes,
                   c.new_values, c.tombstone, c.audience, c.audience_only
              FROM pgmodel.changes c
             WHERE c.row_ids IS NULL
            UNION ALL
            SELECT c.id + r.n - 1, c.transaction_id, c.entity, r.row_id, c.kind, c.owner_id, c.updated_attributes,
                   c.new_values, c.tombstone, c.audience, c.audience_only
              FROM pgmodel.changes c
             CROSS JOIN LATERAL unnest(c.row_ids) WITH ORDINALITY AS r(row_id, n)
             WHERE c.row_ids IS NOT NULL
               AND (current_user NOT IN ('pgmodel_app', 'pgmodel_admin')
                    OR c.owner_id = (SELECT pgmodel.current_user_id())
                    OR (SELECT pgmodel.current_user_is_admin())
                    OR (r.row_id = ANY ((SELECT pgmodel.shared_row_ids())::uuid[])
                        AND pgmodel.is_shared_change(c.transaction_id, c.entity, r.row_id, (SELECT pgmodel.shared_row_keys())::text[])));
    END IF;
END
$pgmodel$;
