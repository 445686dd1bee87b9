-- PGModel history retention: how much history each store keeps, and the pruning that enforces it.
-- Idempotent, and silent once applied.
--
-- A store's history grows with every save. pgmodel.history_retention holds, per store, a longest age and
-- a most changes to keep; `pgmodel history prune` and `pgmodel serve --history-retention-interval` remove
-- the oldest committed transactions beyond them. Pruning removes history exactly as deleteHistory does:
-- it records the newest removed position in pgmodel.history_deletions, in the same transaction as the
-- delete, so a reader resuming from an older token gets history_token_expired instead of silently
-- missing changes. A transaction whose position is NULL (its save is still committing) is never removed.
--
-- pgmodel.prune_history removes one bounded batch per call (one SQL transaction): a caller loops until
-- a call removes nothing, so no call holds the rows' locks, or the table's WAL, for long.

DO $pgmodel$
BEGIN
    IF to_regclass('pgmodel.history_retention') IS NULL THEN
        CREATE TABLE pgmodel.history_retention (
            schema_name  text PRIMARY KEY,
            max_age      interval CHECK (max_age > interval '0'),
            max_changes  bigint CHECK (max_changes >= 0),
            updated_at   timestamptz NOT NULL DEFAULT now(),
            CONSTRAINT history_retention_some_limit CHECK (max_age IS NOT NULL OR max_changes IS NOT NULL)
        );
        -- Only the tables' owner (the admin's role, what the CLI and the service log in as) reads and
        -- writes it: service users never see retention.
        REVOKE ALL ON pgmodel.history_retention FROM PUBLIC;
        COMMENT ON TABLE pgmodel.history_retention IS 'per store, how much history to keep: pgmodel history prune and pgmodel serve --history-retention-interval remove the oldest committed transactions beyond it';
        COMMENT ON COLUMN pgmodel.history_retention.schema_name IS 'the store (pgmodel.transactions.schema_name)';
        COMMENT ON COLUMN pgmodel.history_retention.max_age IS 'transactions saved longer ago than this are removed (NULL: no age limit)';
        COMMENT ON COLUMN pgmodel.history_retention.max_changes IS 'only the transactions holding the newest this many changes are kept, a run of inserts counting one per insert (NULL: no count limit)';
        COMMENT ON COLUMN pgmodel.history_retention.updated_at IS 'when the setting was last set';
    END IF;
    -- Pruning by age finds the oldest transactions of a store without reading the rest. Built once, on
    -- the first start with this file; on a large history an admin may build it beforehand with
    -- CREATE INDEX CONCURRENTLY under this name, so that start does not hold saves back while it builds.
    IF to_regclass('pgmodel.transactions_schema_created') IS NULL THEN
        CREATE INDEX transactions_schema_created ON pgmodel.transactions (schema_name, created_at);
        COMMENT ON INDEX pgmodel.transactions_schema_created IS 'history retention: a store''s oldest transactions by age (pgmodel.prune_history)';
    END IF;
END
$pgmodel$;

-- The newest position a count limit removes: walking the store's committed transactions from the newest,
-- the first one whose changes no longer fit within p_max_changes (NULL when everything fits). Whole
-- transactions only: one straddling the limit goes. It reads the kept transactions' change counts through
-- the changes_transaction index, so its cost grows with p_max_changes, not with the history removed.
CREATE OR REPLACE FUNCTION pgmodel.history_count_horizon(p_schema text, p_max_changes bigint) RETURNS bigint
    LANGUAGE sql STABLE SECURITY DEFINER SET search_path = pg_catalog, pg_temp
    AS $f$
    SELECT s.position FROM (
        SELECT t.position, sum(n.changes) OVER (ORDER BY t.position DESC ROWS UNBOUNDED PRECEDING) AS kept
          FROM pgmodel.transactions t
         CROSS JOIN LATERAL (SELECT coalesce(sum(coalesce(cardinality(c.row_ids), 1)), 0) AS changes
                               FROM pgmodel.changes c WHERE c.transaction_id = t.id) n
         WHERE t.schema_name = p_schema AND t.position IS NOT NULL
         ORDER BY t.position DESC
    ) s
    WHERE s.kept > p_max_changes
    LIMIT 1
    $f$;

-- One batch of pruning: removes the oldest committed transactions of p_schema that were created before
-- p_older_than or whose position is at most p_through_position (either may be NULL: no such limit),
-- at most p_batch_rows pgmodel.changes rows a call (at least one transaction, however large), and
-- records the newest removed position in pgmodel.history_deletions as deleteHistory does. Returns what
-- it removed (changes count one per insert of a run); 0 transactions means nothing is left to remove.
-- busy is true, and nothing is removed, while another session prunes the same store (another service
-- instance's pass): that pass finishes the job.
CREATE OR REPLACE FUNCTION pgmodel.prune_history(p_schema text, p_older_than timestamptz, p_through_position bigint,
                                                 p_batch_rows integer DEFAULT 10000)
    RETURNS TABLE (transactions bigint, changes bigint, deleted_through bigint, busy boolean)
    LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp
    AS $f$
DECLARE
    ids bigint[];
    newest bigint;
    removed bigint;
    counted bigint;
BEGIN
    IF p_batch_rows IS NULL OR p_batch_rows < 1 THEN
        RAISE EXCEPTION 'p_batch_rows must be at least 1' USING ERRCODE = 'invalid_parameter_value';
    END IF;
    IF NOT pg_try_advisory_xact_lock(1885693550, hashtext(p_schema)) THEN
        RETURN QUERY SELECT 0::bigint, 0::bigint, NULL::bigint, true;
        RETURN;
    END IF;
    -- The oldest candidates by position (count limit) and by age, each through its index, then as many
    -- of them in position order as fit in the batch.
    WITH candidates AS (
        (SELECT t.id, t.position FROM pgmodel.transactions t
          WHERE t.schema_name = p_schema AND t.position IS NOT NULL AND t.position <= p_through_position
          ORDER BY t.position LIMIT p_batch_rows)
        UNION
        (SELECT t.id, t.position FROM pgmodel.transactions t
          WHERE t.schema_name = p_schema AND t.position IS NOT NULL AND t.created_at < p_older_than
          ORDER BY t.created_at LIMIT p_batch_rows)
    ), sized AS (
        SELECT c.id, c.position, sum(n.rows) OVER (ORDER BY c.position ROWS UNBOUNDED PRECEDING) - n.rows AS before
          FROM candidates c
         CROSS JOIN LATERAL (SELECT count(*) AS rows FROM pgmodel.changes ch WHERE ch.transaction_id = c.id) n
    )
    SELECT array_agg(s.id), max(s.position) INTO ids, newest FROM sized s WHERE s.before < p_batch_rows;
    IF ids IS NULL THEN
        RETURN QUERY SELECT 0::bigint, 0::bigint, NULL::bigint, false;
        RETURN;
    END IF;
    SELECT coalesce(sum(coalesce(cardinality(ch.row_ids), 1)), 0) INTO counted
      FROM pgmodel.changes ch WHERE ch.transaction_id = ANY (ids);
    -- The pgmodel_transactions_delete trigger deletes their changes in the same statement.
    DELETE FROM pgmodel.transactions t WHERE t.id = ANY (ids);
    GET DIAGNOSTICS removed = ROW_COUNT;
    INSERT INTO pgmodel.history_deletions (schema_name, deleted_through_position) VALUES (p_schema, newest)
        ON CONFLICT (schema_name) DO UPDATE SET deleted_through_position =
            greatest(pgmodel.history_deletions.deleted_through_position, EXCLUDED.deleted_through_position);
    RETURN QUERY SELECT removed, counted, newest, false;
END
$f$;

-- Granted once; a SECURITY DEFINER function is not for PUBLIC. Only the owner (the admin's role) prunes.
DO $pgmodel$
BEGIN
    IF (SELECT proacl IS NULL FROM pg_proc WHERE oid = 'pgmodel.prune_history(text, timestamptz, bigint, integer)'::regprocedure) THEN
        REVOKE ALL ON FUNCTION pgmodel.prune_history(text, timestamptz, bigint, integer),
            pgmodel.history_count_horizon(text, bigint) FROM PUBLIC;
        COMMENT ON FUNCTION pgmodel.prune_history(text, timestamptz, bigint, integer) IS 'history retention: removes one bounded batch of a store''s oldest committed transactions (older than p_older_than or at most p_through_position) and records the newest removed position in pgmodel.history_deletions; call until it removes nothing';
        COMMENT ON FUNCTION pgmodel.history_count_horizon(text, bigint) IS 'history retention: the newest position to remove so that a store keeps at most p_max_changes changes (NULL: nothing to remove)';
    END IF;
END
$pgmodel$;
