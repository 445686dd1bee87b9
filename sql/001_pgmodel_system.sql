-- PGModel system objects: schema "pgmodel" with users, registered entities and schema versions.
-- Idempotent: applied by the store at start (unless schema pgmodel's comment says these exact files are in
-- place: docs/ADMIN.md), by scripts/ and by docker-compose's init.
-- Model tables themselves are created from registered schemas by the store, not here.

CREATE SCHEMA IF NOT EXISTS pgmodel;

-- pgcrypto for password hashes (crypt + gen_salt('bf')); unaccent for localizedStandardContains.
-- Both are "trusted" extensions: the database owner may create them without superuser rights.
CREATE EXTENSION IF NOT EXISTS pgcrypto;
CREATE EXTENSION IF NOT EXISTS unaccent;

CREATE TABLE IF NOT EXISTS pgmodel.users (
    id            uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    name          text NOT NULL UNIQUE CHECK (length(name) BETWEEN 1 AND 128),
    password_hash text NOT NULL,
    is_admin      boolean NOT NULL DEFAULT false,
    created_at    timestamptz NOT NULL DEFAULT now()
);
COMMENT ON TABLE pgmodel.users IS 'PGModel service users; password_hash is crypt(password, gen_salt(''bf''))';

CREATE TABLE IF NOT EXISTS pgmodel.entities (
    schema_name  text NOT NULL,
    name         text NOT NULL,
    table_name   text NOT NULL,
    description  jsonb NOT NULL,
    updated_at   timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (schema_name, name)
);
COMMENT ON TABLE pgmodel.entities IS 'Registered PGModel entities: Swift class name, table and attribute description';

CREATE TABLE IF NOT EXISTS pgmodel.schema_versions (
    id           bigserial PRIMARY KEY,
    schema_name  text NOT NULL,
    version      text NOT NULL,
    description  jsonb NOT NULL,
    applied_at   timestamptz NOT NULL DEFAULT now()
);
COMMENT ON TABLE pgmodel.schema_versions IS 'Every schema registration that changed the registered entities';

-- Case- and diacritic-insensitive folding for localizedStandardContains. unaccent is looked up
-- through the extension's own schema so the function works whatever the caller's search_path is.
-- Created once: CREATE OR REPLACE would fail for roles that do not own the function.
DO $pgmodel$
DECLARE ext_schema text;
BEGIN
    IF EXISTS (SELECT 1 FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
                WHERE n.nspname = 'pgmodel' AND p.proname = 'fold') THEN
        RETURN;
    END IF;
    SELECT n.nspname INTO ext_schema
      FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace
     WHERE e.extname = 'unaccent';
    EXECUTE format(
        'CREATE OR REPLACE FUNCTION pgmodel.fold(text) RETURNS text '
        'LANGUAGE sql STABLE PARALLEL SAFE RETURNS NULL ON NULL INPUT '
        'AS $f$ SELECT lower(%I.unaccent(%L::regdictionary, $1)) $f$',
        ext_schema, ext_schema || '.unaccent');
END
$pgmodel$;
