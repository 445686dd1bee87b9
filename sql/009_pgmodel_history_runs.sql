-- PGModel history: a run of plain inserts is one pgmodel.changes row. Idempotent, and silent once
-- applied: every lock-taking change runs only when it is still to do.
--
-- One row per inserted model made a bulk save write twice the rows it saved, and a large part of its
-- time went to those history rows (three index entries, a heap tuple and a sequence value each). Now the plain inserts of one class and owner that a save writes together (up
-- to 5,000 a statement) are one row, a run:
--
-- * row_ids  the inserted rows' ids, in insertion order; row_id is NULL on a run.
-- * id       the run's first insert's change identifier; the k-th insert's is id + k - 1. The changes'
--            sequence counts in steps of 8,192, so the identifiers a run takes
--            are never another change's: every change identifier stays unique, and sorting by it
--            still gives change order. A run holds at most 8,192 inserts (checked).
--
-- Such a row is always kind 'insert' with no attributes, values, tombstone or audience. A single insert,
-- an update or a delete is one row as before (row_id set, row_ids NULL). pgmodel.change_rows shows every
-- change as one row, whichever way it is stored: what admins query (docs/ADMIN.md, History).
-- Do not set the sequence's increment back to 1: runs' identifiers would then be handed out again.
--
-- On a store with history, the first start with this file reads pgmodel.changes once (the two checks and
-- the changes_runs index) while it holds the table's lock: saves wait that long, once (about a second per
-- few million changes).

DO $pgmodel$
BEGIN
    IF NOT EXISTS (SELECT 1 FROM pg_attribute WHERE attrelid = 'pgmodel.changes'::regclass AND attname = 'row_ids' AND NOT attisdropped) THEN
        ALTER TABLE pgmodel.changes
            ADD COLUMN row_ids uuid[],
            ALTER COLUMN row_id DROP NOT NULL,
            ADD CONSTRAINT changes_row_or_rows CHECK ((row_id IS NULL) = (row_ids IS NOT NULL)),
            ADD CONSTRAINT changes_rows_shape CHECK (row_ids IS NULL OR (
                kind = 'insert' AND NOT audience_only AND audience IS NULL AND new_values IS NULL AND tombstone IS NULL
                AND array_ndims(row_ids) = 1 AND cardinality(row_ids) BETWEEN 1 AND 8192));
        COMMENT ON COLUMN pgmodel.changes.row_id IS 'the changed row''s id in its model table; NULL on a run of inserts (row_ids)';
        COMMENT ON COLUMN pgmodel.changes.row_ids IS 'a run of plain inserts of one class and owner: the inserted rows'' ids, in order (row_id is NULL; the k-th insert''s change identifier is id + k - 1); pgmodel.change_rows shows one row per insert';
    END IF;
    -- Room for a run's identifiers after each value the sequence hands out.
    IF (SELECT s.seqincrement FROM pg_sequence s WHERE s.seqrelid = 'pgmodel.changes_id_seq'::regclass) <> 8192 THEN
        ALTER SEQUENCE pgmodel.changes_id_seq INCREMENT BY 8192;
        COMMENT ON COLUMN pgmodel.changes.id IS 'the change''s identifier (changeIdentifier); a run''s k-th insert''s is id + k - 1 (the sequence counts in steps of 8,192)';
    END IF;
    -- The runs alone, a few rows among many: how a lookup by row id (pgmodel.change_rows) finds the runs
    -- to unnest without reading every change.
    IF to_regclass('pgmodel.changes_runs') IS NULL THEN
        CREATE INDEX changes_runs ON pgmodel.changes (transaction_id) WHERE row_ids IS NOT NULL;
    END IF;
END
$pgmodel$;

-- Every change as one row: a run of inserts unnested (order by id for change order). security_invoker, so
-- a role sees through it exactly the changes its policies on pgmodel.changes show it; of a run it sees
-- only the inserts it may see (a service user: their own rows and rows shared with them; everyone else,
-- every insert of the runs their policies show). PGModel's history reads go through this view. Two
-- branches rather than a LEFT JOIN with coalesce: a filter on row_id or id then still reaches the
-- changes_row and primary-key indexes for the rows that are not runs.
DO $pgmodel$
BEGIN
    IF to_regclass('pgmodel.change_rows') IS NULL THEN
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
                    OR r.row_id = ANY ((SELECT pgmodel.shared_row_ids())::uuid[]));
        COMMENT ON VIEW pgmodel.change_rows IS 'PGModel history: one row per inserted, updated or deleted model (pgmodel.changes with its runs of inserts unnested)';
        COMMENT ON COLUMN pgmodel.change_rows.id IS 'the change''s identifier (changeIdentifier): pgmodel.changes.id, or id + k - 1 for a run''s k-th insert';
        COMMENT ON COLUMN pgmodel.change_rows.transaction_id IS 'the history transaction (pgmodel.transactions.id) it belongs to';
        COMMENT ON COLUMN pgmodel.change_rows.entity IS 'the Swift class of the changed model';
        COMMENT ON COLUMN pgmodel.change_rows.row_id IS 'the changed row''s id in its model table';
        COMMENT ON COLUMN pgmodel.change_rows.kind IS 'insert, update or delete';
        COMMENT ON COLUMN pgmodel.change_rows.owner_id IS 'the owner of the changed row';
        COMMENT ON COLUMN pgmodel.change_rows.updated_attributes IS 'updates: the Swift names of the changed properties';
        COMMENT ON COLUMN pgmodel.change_rows.new_values IS 'updates: the new values of updated_attributes (PGModel value JSON)';
        COMMENT ON COLUMN pgmodel.change_rows.tombstone IS 'deletes: the .preserveValueOnDeletion attributes as they were (PGModel value JSON)';
        COMMENT ON COLUMN pgmodel.change_rows.audience IS 'users besides the owner who see this change';
        COMMENT ON COLUMN pgmodel.change_rows.audience_only IS 'true for a record appearing or disappearing for the audience because of a share or revocation';
    END IF;
END
$pgmodel$;

DO $pgmodel$
BEGIN
    IF EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'pgmodel_app')
       AND NOT has_table_privilege('pgmodel_app', 'pgmodel.change_rows', 'SELECT') THEN
        GRANT SELECT ON pgmodel.change_rows TO pgmodel_app;
    END IF;
    -- A user sees a run of inserts when they own it or one of its rows is shared with them; of a run
    -- shared in part, pgmodel.change_rows shows them only the shared rows' inserts.
    IF EXISTS (SELECT 1 FROM pg_policies WHERE schemaname = 'pgmodel' AND tablename = 'changes' AND policyname = 'pgmodel_app_select'
               AND qual NOT LIKE '%row_ids%') THEN
        ALTER POLICY pgmodel_app_select ON pgmodel.changes
            USING (current_user = 'pgmodel_app' AND (
                   (NOT audience_only AND (owner_id = (SELECT pgmodel.current_user_id()) OR (SELECT pgmodel.current_user_is_admin())
                                           OR row_id = ANY ((SELECT pgmodel.shared_row_ids())::uuid[])
                                           OR row_ids && (SELECT pgmodel.shared_row_ids())::uuid[]))
                   OR (SELECT pgmodel.current_user_id()) = ANY (audience)));
    END IF;
END
$pgmodel$;
