-- PGModel history: every index of pgmodel.transactions is written by every save, so it keeps only those
-- a read uses. The (schema_name, xid) index of 002 goes: since positions (004) no read looks a store's
-- transactions up by xid, and a save's own lookup by xid (pgmodel.own_transaction_id) uses the unique
-- index on xid alone. Idempotent; once dropped, nothing here takes a lock again.
DO $pgmodel$
BEGIN
    IF to_regclass('pgmodel.transactions_schema_xid') IS NOT NULL THEN
        DROP INDEX pgmodel.transactions_schema_xid;
    END IF;
END
$pgmodel$;
