-- PGModel history positions without a commit queue: saves of a store commit side by side.
--
-- A save's position is still assigned at its COMMIT (the pgmodel_assign_position trigger of 004), but
-- under a SHARED per-store lock, held until the commit is visible: saves of one store no longer wait for
-- each other's commit (and its WAL flush), so PostgreSQL flushes them together. Positions may therefore
-- become visible out of order for a moment. A history reader first takes its horizon,
-- pgmodel.history_horizon(store): it takes the same lock EXCLUSIVELY, which waits out the saves of the
-- store that are committing right now (their commits take a flush, not a network round trip), reads the
-- newest position handed out, and lets go. Every position of the store up to the horizon is then
-- committed or gone, and the reader reads in a snapshot taken afterwards, up to the horizon only: still a
-- gap-free prefix, and still nothing but a save's own commit can hold a reader back.
--
-- Why the lock is taken before the position: a save that waits behind a reader gets a position above
-- that reader's horizon, so no reader skips it. Idempotent.
CREATE OR REPLACE FUNCTION pgmodel.assign_position() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp
    AS $f$
BEGIN
    PERFORM pg_advisory_xact_lock_shared(1885693549, hashtext(NEW.schema_name));
    UPDATE pgmodel.transactions SET position = nextval('pgmodel.history_position') WHERE id = NEW.id;
    RETURN NULL;
END
$f$;

-- The newest history position below which every save of `store` is committed or rolled back: run it as a
-- statement of its own (its lock ends with its transaction), then read up to it in a snapshot taken later.
CREATE OR REPLACE FUNCTION pgmodel.history_horizon(store text) RETURNS bigint
    LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp
    AS $f$
DECLARE
    horizon bigint;
BEGIN
    PERFORM pg_advisory_xact_lock(1885693549, hashtext(store));
    SELECT last_value INTO horizon FROM pgmodel.history_position;
    RETURN horizon;
END
$f$;

COMMENT ON FUNCTION pgmodel.assign_position() IS 'gives a save its history position at COMMIT, under the store''s commit lock taken SHARED (saves of a store commit side by side)';
COMMENT ON FUNCTION pgmodel.history_horizon(text) IS 'a history reader''s horizon: waits out the store''s committing saves (the commit lock, EXCLUSIVE, for a moment) and returns the newest position handed out; read up to it in a later snapshot';
COMMENT ON COLUMN pgmodel.transactions.position IS 'the history token: assigned at the end of the save under the store''s commit lock (shared), NULL only while the save runs; readers read up to pgmodel.history_horizon(store)';

DO $pgmodel$
BEGIN
    IF (SELECT proacl IS NULL FROM pg_proc WHERE oid = 'pgmodel.history_horizon(text)'::regprocedure) THEN
        REVOKE ALL ON FUNCTION pgmodel.history_horizon(text) FROM PUBLIC;
        IF EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'pgmodel_app') THEN
            GRANT EXECUTE ON FUNCTION pgmodel.history_horizon(text) TO pgmodel_app;
        END IF;
    END IF;
END
$pgmodel$;
