-- What an update overwrote. Every update change keeps, beside the new values of the attributes it set,
-- the values they replaced (as the row held them when the saving transaction locked it), so an admin or
-- an app can read back and restore a value someone overwrote, conflict or not. Idempotent.

DO $pgmodel$
BEGIN
    IF NOT EXISTS (SELECT 1 FROM pg_attribute WHERE attrelid = 'pgmodel.changes'::regclass AND attname = 'previous_values' AND NOT attisdropped) THEN
        ALTER TABLE pgmodel.changes ADD COLUMN previous_values jsonb;
        COMMENT ON COLUMN pgmodel.changes.previous_values IS 'updates: the values of updated_attributes this update replaced (PGModel value JSON)';
    END IF;
END
$pgmodel$;
