-- PGModel history positions: a save's place in its store's history is assigned at its commit, under a
-- per-store lock held until the commit is visible (the pgmodel_assign_position trigger). Saves of a store
-- therefore become visible in position order, so a reader sees a gap-free prefix of positions and needs
-- no horizon: no other transaction (another database's, an admin's forgotten BEGIN, a long import)
-- can hold history back, and a long save delays nobody but itself. The position is the history token.
--
-- Migration from xid tokens (PGModel before this file): existing transactions get their xid as
-- position, which is their old token and their old order, and new positions continue above every
-- xid, so a token saved by an older build resumes where it was. Idempotent.
DO $pgmodel$
DECLARE
    start bigint;
BEGIN
    IF NOT EXISTS (SELECT 1 FROM pg_attribute WHERE attrelid = 'pgmodel.transactions'::regclass AND attname = 'position') THEN
        ALTER TABLE pgmodel.transactions ADD COLUMN position bigint;
        UPDATE pgmodel.transactions SET position = xid::text::bigint;
        CREATE UNIQUE INDEX transactions_schema_position ON pgmodel.transactions (schema_name, position);
        SELECT greatest(coalesce(max(xid::text::bigint), 0), pg_current_xact_id()::text::bigint) + 1 INTO start FROM pgmodel.transactions;
        EXECUTE format('CREATE SEQUENCE pgmodel.history_position START %s', start);
        COMMENT ON COLUMN pgmodel.transactions.position IS 'the history token: assigned at the end of the save under a per-store lock held until commit, so positions become visible in order; NULL only while the save runs';
        COMMENT ON SEQUENCE pgmodel.history_position IS 'history positions of every store (pgmodel.commit_position)';
    END IF;
    IF NOT EXISTS (SELECT 1 FROM pg_attribute WHERE attrelid = 'pgmodel.history_deletions'::regclass AND attname = 'deleted_through_position') THEN
        ALTER TABLE pgmodel.history_deletions ADD COLUMN deleted_through_position bigint;
        UPDATE pgmodel.history_deletions SET deleted_through_position = deleted_through::text::bigint;
        ALTER TABLE pgmodel.history_deletions ALTER COLUMN deleted_through DROP NOT NULL;
        COMMENT ON COLUMN pgmodel.history_deletions.deleted_through_position IS 'the newest history position removed by deleteHistory: older tokens are expired';
    END IF;
END
$pgmodel$;

-- A save's history position is assigned at its COMMIT, by a deferred constraint trigger on its
-- pgmodel.transactions row. It fires after every other deferred check of the save (it was queued last),
-- takes the store's commit lock, which the previous save of the store held until its commit was visible,
-- and gives the row the next position. No network round trip happens while the lock is held: it spans
-- only the commit itself.
CREATE OR REPLACE FUNCTION pgmodel.assign_position() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp
    AS $f$
BEGIN
    PERFORM pg_advisory_xact_lock(1885693549, hashtext(NEW.schema_name));
    UPDATE pgmodel.transactions SET position = nextval('pgmodel.history_position') WHERE id = NEW.id;
    RETURN NULL;
END
$f$;

DO $pgmodel$
BEGIN
    IF NOT EXISTS (SELECT 1 FROM pg_trigger WHERE tgrelid = 'pgmodel.transactions'::regclass AND tgname = 'pgmodel_assign_position') THEN
        CREATE CONSTRAINT TRIGGER pgmodel_assign_position AFTER INSERT ON pgmodel.transactions
            DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION pgmodel.assign_position();
    END IF;
    IF (SELECT proacl IS NULL FROM pg_proc WHERE oid = 'pgmodel.assign_position()'::regprocedure) THEN
        REVOKE ALL ON FUNCTION pgmodel.assign_position() FROM PUBLIC;
    END IF;
END
$pgmodel$;
