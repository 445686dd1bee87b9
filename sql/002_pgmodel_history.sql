-- PGModel persistent history: one row per save in pgmodel.transactions, one per changed model in
-- pgmodel.changes, both written inside the save's own transaction. Idempotent.
--
-- Readers never trust ids alone: transactions commit out of order. They read only rows whose xid is
-- below pg_snapshot_xmin(pg_current_snapshot()) (every older transaction has ended), ordered by xid.
-- That xid is the history token.

-- Everything is created only when missing, inside one DO block: CREATE INDEX and COMMENT ON take
-- table locks even when nothing changes, and this file runs at every store start-up while other
-- processes are saving (a queued ShareLock behind an open save blocks every later save).
DO $pgmodel$
BEGIN
    IF to_regclass('pgmodel.transactions') IS NULL THEN
        CREATE TABLE pgmodel.transactions (
            id           bigserial PRIMARY KEY,
            xid          xid8 NOT NULL UNIQUE DEFAULT pg_current_xact_id(),
            schema_name  text NOT NULL,
            author       text,
            user_id      uuid,
            user_name    text,
            created_at   timestamptz NOT NULL DEFAULT now()
        );
        CREATE INDEX transactions_schema_xid ON pgmodel.transactions (schema_name, xid);
        COMMENT ON TABLE pgmodel.transactions IS 'PGModel history: one row per ModelContext.save(), written in the save''s transaction';
        COMMENT ON COLUMN pgmodel.transactions.id IS 'transactionIdentifier of DefaultHistoryTransaction';
        COMMENT ON COLUMN pgmodel.transactions.xid IS 'the history token: the saving transaction''s xid8; readers stop below pg_snapshot_xmin';
        COMMENT ON COLUMN pgmodel.transactions.schema_name IS 'the PostgreSQL schema (store) whose model tables the save wrote';
        COMMENT ON COLUMN pgmodel.transactions.author IS 'ModelContext.author of the saving context';
        COMMENT ON COLUMN pgmodel.transactions.user_id IS 'the service user who saved (NULL for direct connections)';
    END IF;
    IF to_regclass('pgmodel.changes') IS NULL THEN
        CREATE TABLE pgmodel.changes (
            id                  bigserial PRIMARY KEY,
            transaction_id      bigint NOT NULL REFERENCES pgmodel.transactions (id) ON DELETE CASCADE,
            entity              text NOT NULL,
            row_id              uuid NOT NULL,
            kind                text NOT NULL CHECK (kind IN ('insert', 'update', 'delete')),
            owner_id            uuid,
            updated_attributes  text[] NOT NULL DEFAULT '{}',
            new_values          jsonb,
            tombstone           jsonb
        );
        CREATE INDEX changes_transaction ON pgmodel.changes (transaction_id);
        CREATE INDEX changes_row ON pgmodel.changes (row_id);
        COMMENT ON TABLE pgmodel.changes IS 'PGModel history: one row per inserted, updated or deleted model of a history transaction';
        COMMENT ON COLUMN pgmodel.changes.entity IS 'the Swift class of the changed model';
        COMMENT ON COLUMN pgmodel.changes.updated_attributes IS 'updates: the Swift names of the changed properties';
        COMMENT ON COLUMN pgmodel.changes.new_values IS 'updates: the new values of updated_attributes (PGModel value JSON)';
        COMMENT ON COLUMN pgmodel.changes.tombstone IS 'deletes: the .preserveValueOnDeletion attributes as they were (PGModel value JSON)';
        COMMENT ON COLUMN pgmodel.changes.owner_id IS 'the owner of the changed row; service users see only history of their own rows';
    END IF;
    IF to_regclass('pgmodel.history_deletions') IS NULL THEN
        CREATE TABLE pgmodel.history_deletions (
            schema_name      text PRIMARY KEY,
            deleted_through  xid8 NOT NULL
        );
        COMMENT ON TABLE pgmodel.history_deletions IS 'per store, the newest history token removed by deleteHistory: older tokens are expired';
    END IF;
END
$pgmodel$;
