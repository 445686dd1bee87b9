-- Which program and process saved: SwiftData's bundleIdentifier and processIdentifier of a history
-- transaction. A direct store records its own process; through the service these are what the client says
-- about itself (as its author is), and readers other than the saving user see them qualified by that
-- user's name, so no service user passes for another program. NULL for saves made before this file, or
-- by clients that name no process. Idempotent.

DO $pgmodel$
BEGIN
    IF NOT EXISTS (SELECT 1 FROM pg_attribute WHERE attrelid = 'pgmodel.transactions'::regclass AND attname = 'bundle_identifier' AND NOT attisdropped) THEN
        ALTER TABLE pgmodel.transactions ADD COLUMN bundle_identifier text;
        COMMENT ON COLUMN pgmodel.transactions.bundle_identifier IS 'the saving program: its bundle identifier, else its executable name (as the client says, through the service)';
    END IF;
    IF NOT EXISTS (SELECT 1 FROM pg_attribute WHERE attrelid = 'pgmodel.transactions'::regclass AND attname = 'process_identifier' AND NOT attisdropped) THEN
        ALTER TABLE pgmodel.transactions ADD COLUMN process_identifier text;
        COMMENT ON COLUMN pgmodel.transactions.process_identifier IS 'the saving process id, as text (as the client says, through the service)';
    END IF;
END
$pgmodel$;
