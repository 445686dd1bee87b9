-- PGModel history integrity, checked per statement instead of per row. Idempotent, and silent
-- once applied: every lock-taking change runs only when it is still to do.
--
-- Until this file, pgmodel.changes.transaction_id was a FOREIGN KEY to pgmodel.transactions (id) ON
-- DELETE CASCADE. PostgreSQL checks a foreign key row by row: a save of 100,000 new models spent ~0.9 s
-- (a third of its history insert) on 100,000 lookups of its one transactions row. The same guarantees now
-- come from statement triggers, which see every row of a statement at once (a transition table):
--
-- * pgmodel_changes_transaction (AFTER INSERT or UPDATE on changes): every transaction_id names an
--   existing transactions row, which it locks FOR KEY SHARE as the foreign key did, so a concurrent
--   DELETE of that transaction waits for the writer (or the writer fails, if the DELETE committed first).
--   Violations raise foreign_key_violation (23503), the foreign key's error.
-- * pgmodel_transactions_delete (AFTER DELETE on transactions): deletes the changes of the deleted
--   transactions, in one statement (ON DELETE CASCADE deleted them one transaction at a time).
-- * pgmodel_transactions_truncate (AFTER TRUNCATE on transactions): truncates changes too.
-- * pgmodel_transactions_id (AFTER UPDATE OF id on transactions): a transaction with changes keeps its id.
--
-- The insert policies of pgmodel_app and pgmodel_admin on changes ask for the writer's own history
-- transaction once per statement (transaction_id = (SELECT pgmodel.own_transaction_id())) instead of
-- calling pgmodel.is_own_transaction for every row; the two agree (one transactions row per xid).
--
-- The functions are SECURITY DEFINER (the tables' owner), as the foreign key's checks and cascades ran
-- as the owner: they see and delete what the caller's policies would hide.

CREATE OR REPLACE FUNCTION pgmodel.check_change_transactions() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp
    AS $f$
DECLARE
    wanted bigint;
    locked bigint;
    missing bigint;
BEGIN
    SELECT count(DISTINCT n.transaction_id) INTO wanted FROM new_changes n;
    -- Locked like a foreign key's check: a concurrent DELETE of the transaction waits for this one.
    SELECT count(*) INTO locked FROM (
        SELECT 1 FROM pgmodel.transactions t WHERE t.id IN (SELECT n.transaction_id FROM new_changes n) FOR KEY SHARE OF t
    ) l;
    IF locked < wanted THEN
        SELECT n.transaction_id INTO missing FROM new_changes n
            WHERE NOT EXISTS (SELECT 1 FROM pgmodel.transactions t WHERE t.id = n.transaction_id) LIMIT 1;
        RAISE EXCEPTION 'insert or update on table "changes" violates its reference to "transactions"'
            USING ERRCODE = 'foreign_key_violation', TABLE = 'changes', SCHEMA = 'pgmodel',
                  DETAIL = format('Key (transaction_id)=(%s) is not present in table "transactions".', missing);
    END IF;
    RETURN NULL;
END
$f$;

CREATE OR REPLACE FUNCTION pgmodel.delete_transaction_changes() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp
    AS $f$
BEGIN
    DELETE FROM pgmodel.changes c WHERE c.transaction_id IN (SELECT o.id FROM old_transactions o);
    RETURN NULL;
END
$f$;

CREATE OR REPLACE FUNCTION pgmodel.truncate_transaction_changes() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp
    AS $f$
BEGIN
    TRUNCATE pgmodel.changes;
    RETURN NULL;
END
$f$;

CREATE OR REPLACE FUNCTION pgmodel.keep_transaction_id() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp
    AS $f$
BEGIN
    IF EXISTS (SELECT 1 FROM pgmodel.changes c WHERE c.transaction_id = OLD.id) THEN
        RAISE EXCEPTION 'update on table "transactions" violates the reference from "changes"'
            USING ERRCODE = 'foreign_key_violation', TABLE = 'transactions', SCHEMA = 'pgmodel',
                  DETAIL = format('Key (id)=(%s) is still referenced from table "changes".', OLD.id);
    END IF;
    RETURN NULL;
END
$f$;

-- The writer's own history transaction of this SQL transaction (NULL when it has none): what the insert
-- policies compare transaction_id with, once per statement.
-- plpgsql so its plan is kept for the session (see current_user_is_admin in 003).
CREATE OR REPLACE FUNCTION pgmodel.own_transaction_id() RETURNS bigint
    LANGUAGE plpgsql STABLE SECURITY DEFINER SET search_path = pg_catalog, pg_temp
    AS $f$ BEGIN RETURN (SELECT t.id FROM pgmodel.transactions t WHERE t.xid = pg_current_xact_id() AND t.user_id = pgmodel.current_user_id()); END $f$;

DO $pgmodel$
BEGIN
    -- The triggers first, then the foreign key goes: in one transaction, so no moment is unchecked.
    IF NOT EXISTS (SELECT 1 FROM pg_trigger WHERE tgrelid = 'pgmodel.changes'::regclass AND tgname = 'pgmodel_changes_transaction') THEN
        CREATE TRIGGER pgmodel_changes_transaction AFTER INSERT ON pgmodel.changes
            REFERENCING NEW TABLE AS new_changes FOR EACH STATEMENT EXECUTE FUNCTION pgmodel.check_change_transactions();
    END IF;
    IF NOT EXISTS (SELECT 1 FROM pg_trigger WHERE tgrelid = 'pgmodel.changes'::regclass AND tgname = 'pgmodel_changes_transaction_update') THEN
        CREATE TRIGGER pgmodel_changes_transaction_update AFTER UPDATE ON pgmodel.changes
            REFERENCING NEW TABLE AS new_changes FOR EACH STATEMENT EXECUTE FUNCTION pgmodel.check_change_transactions();
    END IF;
    IF NOT EXISTS (SELECT 1 FROM pg_trigger WHERE tgrelid = 'pgmodel.transactions'::regclass AND tgname = 'pgmodel_transactions_delete') THEN
        CREATE TRIGGER pgmodel_transactions_delete AFTER DELETE ON pgmodel.transactions
            REFERENCING OLD TABLE AS old_transactions FOR EACH STATEMENT EXECUTE FUNCTION pgmodel.delete_transaction_changes();
    END IF;
    IF NOT EXISTS (SELECT 1 FROM pg_trigger WHERE tgrelid = 'pgmodel.transactions'::regclass AND tgname = 'pgmodel_transactions_truncate') THEN
        CREATE TRIGGER pgmodel_transactions_truncate AFTER TRUNCATE ON pgmodel.transactions
            FOR EACH STATEMENT EXECUTE FUNCTION pgmodel.truncate_transaction_changes();
    END IF;
    IF NOT EXISTS (SELECT 1 FROM pg_trigger WHERE tgrelid = 'pgmodel.transactions'::regclass AND tgname = 'pgmodel_transactions_id') THEN
        CREATE TRIGGER pgmodel_transactions_id AFTER UPDATE OF id ON pgmodel.transactions
            FOR EACH ROW WHEN (OLD.id IS DISTINCT FROM NEW.id) EXECUTE FUNCTION pgmodel.keep_transaction_id();
    END IF;
    IF EXISTS (SELECT 1 FROM pg_constraint WHERE conrelid = 'pgmodel.changes'::regclass AND contype = 'f'
               AND conkey = ARRAY[(SELECT attnum FROM pg_attribute WHERE attrelid = 'pgmodel.changes'::regclass AND attname = 'transaction_id')]) THEN
        EXECUTE (SELECT string_agg(format('ALTER TABLE pgmodel.changes DROP CONSTRAINT %I', conname), '; ')
                 FROM pg_constraint WHERE conrelid = 'pgmodel.changes'::regclass AND contype = 'f'
                 AND conkey = ARRAY[(SELECT attnum FROM pg_attribute WHERE attrelid = 'pgmodel.changes'::regclass AND attname = 'transaction_id')]);
        COMMENT ON COLUMN pgmodel.changes.transaction_id IS 'the history transaction (pgmodel.transactions.id) it belongs to; checked per statement by the pgmodel_changes_transaction trigger, deleted with it by pgmodel_transactions_delete';
    END IF;
    IF (SELECT proacl IS NULL FROM pg_proc WHERE oid = 'pgmodel.own_transaction_id()'::regprocedure) THEN
        REVOKE ALL ON FUNCTION pgmodel.check_change_transactions(), pgmodel.delete_transaction_changes(),
            pgmodel.truncate_transaction_changes(), pgmodel.keep_transaction_id(), pgmodel.own_transaction_id() FROM PUBLIC;
        IF EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'pgmodel_app') THEN
            GRANT EXECUTE ON FUNCTION pgmodel.own_transaction_id() TO pgmodel_app;
        END IF;
    END IF;
    -- The insert policies: one lookup per statement.
    IF EXISTS (SELECT 1 FROM pg_policies WHERE schemaname = 'pgmodel' AND tablename = 'changes' AND policyname = 'pgmodel_app_insert'
               AND with_check LIKE '%is_own_transaction%') THEN
        ALTER POLICY pgmodel_app_insert ON pgmodel.changes
            WITH CHECK (current_user = 'pgmodel_app' AND transaction_id = (SELECT pgmodel.own_transaction_id()));
    END IF;
    IF EXISTS (SELECT 1 FROM pg_policies WHERE schemaname = 'pgmodel' AND tablename = 'changes' AND policyname = 'pgmodel_admin_insert'
               AND with_check LIKE '%is_own_transaction%') THEN
        ALTER POLICY pgmodel_admin_insert ON pgmodel.changes
            WITH CHECK (current_user = 'pgmodel_admin' AND transaction_id = (SELECT pgmodel.own_transaction_id()));
    END IF;
END
$pgmodel$;
