-- PGModel schema migrations: pgmodel.schema_versions also records the versions a SchemaMigrationPlan
-- moved a store through. A row with a fingerprint is a version the store is known to have: its
-- entities (the plan's models) had exactly that shape when the row was written. Idempotent; columns
-- are added only when missing (ALTER TABLE locks the table even when nothing changes).
DO $pgmodel$
BEGIN
    IF NOT EXISTS (SELECT 1 FROM information_schema.columns
                    WHERE table_schema = 'pgmodel' AND table_name = 'schema_versions' AND column_name = 'fingerprint') THEN
        ALTER TABLE pgmodel.schema_versions
            ADD COLUMN fingerprint text,
            ADD COLUMN entities text[],
            ADD COLUMN stages jsonb,
            ADD COLUMN applied_by text DEFAULT current_user;
        COMMENT ON COLUMN pgmodel.schema_versions.fingerprint IS
            'sha256 of the version''s entity descriptions (shape only); NULL for plain registrations';
        COMMENT ON COLUMN pgmodel.schema_versions.entities IS 'the entities this version covers';
        COMMENT ON COLUMN pgmodel.schema_versions.stages IS
            'the migration stages that led here: [{from, to, kind, milliseconds, rows}]';
        COMMENT ON COLUMN pgmodel.schema_versions.applied_by IS 'the database role that applied the version';
        CREATE INDEX schema_versions_schema_name_idx ON pgmodel.schema_versions (schema_name, id);
    END IF;
END
$pgmodel$;
