-- Live sessions of the service, and their revocation. Idempotent.
--
-- A logged-in connection keeps what it read of its user at login. pgmodel.users.session_epoch says when
-- that went stale: changing a user's password, admin flag or name bumps it (trigger below), and so may an
-- operator (`UPDATE pgmodel.users SET session_epoch = session_epoch + 1 WHERE name = 'alice'`). Every
-- service instance closes the sessions whose user is gone or whose epoch is not the one read at login.
-- The trigger rings the doorbell channel with the users' ids ({"u": ["<uuid>", …]}); that is only a
-- hint (anyone with a database role may NOTIFY): an instance re-reads pgmodel.users for those ids and
-- decides from what it reads, and it re-reads every session's user after its listener reconnects.

DO $pgmodel$
BEGIN
    IF NOT EXISTS (SELECT 1 FROM pg_attribute WHERE attrelid = 'pgmodel.users'::regclass
                    AND attname = 'session_epoch' AND NOT attisdropped) THEN
        ALTER TABLE pgmodel.users ADD COLUMN session_epoch bigint NOT NULL DEFAULT 0;
        COMMENT ON COLUMN pgmodel.users.session_epoch IS 'bumped when the password, admin flag or name changes, or to end the user''s sessions: sessions logged in with another epoch are closed';
    END IF;
END
$pgmodel$;

-- Bumps the epoch when what a session relies on changes, and rings the doorbell for it. A password
-- re-hashed at login at a higher bcrypt cost is the same password: the login marks that update with the
-- transaction-local setting pgmodel.rehashing_user (the user's id), and it keeps the epoch.
CREATE OR REPLACE FUNCTION pgmodel.users_session_epoch() RETURNS trigger
    LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp
    AS $f$
BEGIN
    IF TG_OP = 'DELETE' THEN
        PERFORM pg_notify('pgmodel_changes', json_build_object('u', json_build_array(OLD.id))::text);
        RETURN OLD;
    END IF;
    IF (NEW.is_admin IS DISTINCT FROM OLD.is_admin OR NEW.name IS DISTINCT FROM OLD.name
        OR (NEW.password_hash IS DISTINCT FROM OLD.password_hash
            AND coalesce(current_setting('pgmodel.rehashing_user', true), '') <> OLD.id::text))
       AND NEW.session_epoch = OLD.session_epoch THEN
        NEW.session_epoch := OLD.session_epoch + 1;
    END IF;
    IF NEW.session_epoch IS DISTINCT FROM OLD.session_epoch OR NEW.id IS DISTINCT FROM OLD.id THEN
        PERFORM pg_notify('pgmodel_changes', json_build_object('u',
            CASE WHEN NEW.id = OLD.id THEN json_build_array(OLD.id) ELSE json_build_array(OLD.id, NEW.id) END)::text);
    END IF;
    RETURN NEW;
END
$f$;

DO $pgmodel$
BEGIN
    IF NOT EXISTS (SELECT 1 FROM pg_trigger WHERE tgrelid = 'pgmodel.users'::regclass AND tgname = 'pgmodel_users_session_epoch') THEN
        CREATE TRIGGER pgmodel_users_session_epoch BEFORE UPDATE OR DELETE ON pgmodel.users
            FOR EACH ROW EXECUTE FUNCTION pgmodel.users_session_epoch();
    END IF;
END
$pgmodel$;

-- The running service instances. Each registers with the backend of its doorbell connection (updated
-- when that connection is replaced): a row whose backend is no longer in pg_stat_activity is a dead
-- instance's, hidden by pgmodel.session_list and purged by the next instance that starts.
CREATE TABLE IF NOT EXISTS pgmodel.service_instances (
    id            uuid PRIMARY KEY,
    backend_pid   integer NOT NULL,
    backend_start timestamptz NOT NULL,
    host          text NOT NULL,
    version       text NOT NULL,
    schema_name   text NOT NULL,
    started_at    timestamptz NOT NULL DEFAULT now()
);
COMMENT ON TABLE pgmodel.service_instances IS 'Running pgmodel serve instances; backend_pid and backend_start name their doorbell connection in pg_stat_activity';

-- One row per logged-in connection: written at login and logout only, never by a request. Unlogged: it
-- describes processes, which a crash of PostgreSQL ends anyway.
CREATE UNLOGGED TABLE IF NOT EXISTS pgmodel.sessions (
    id             uuid PRIMARY KEY,
    instance_id    uuid NOT NULL REFERENCES pgmodel.service_instances (id) ON DELETE CASCADE,
    user_id        uuid NOT NULL REFERENCES pgmodel.users (id) ON DELETE CASCADE,
    client_address text NOT NULL,
    tls            boolean NOT NULL,
    logged_in_at   timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX IF NOT EXISTS sessions_instance ON pgmodel.sessions (instance_id);
CREATE INDEX IF NOT EXISTS sessions_user ON pgmodel.sessions (user_id);
COMMENT ON TABLE pgmodel.sessions IS 'Logged-in service connections (read pgmodel.session_list: only live instances'' sessions)';

-- Whether an instance's doorbell backend is alive. A backend_start this role may not see (another role's
-- connection, without pg_read_all_stats) counts as a match: a stale row shown beats a live one purged.
CREATE OR REPLACE FUNCTION pgmodel.instance_is_live(p_pid integer, p_start timestamptz) RETURNS boolean
    LANGUAGE sql STABLE SET search_path = pg_catalog, pg_temp
    AS $f$ SELECT EXISTS (SELECT 1 FROM pg_stat_activity a WHERE a.pid = p_pid AND (a.backend_start = p_start OR a.backend_start IS NULL)) $f$;

CREATE OR REPLACE VIEW pgmodel.session_list AS
    SELECT s.id, u.name AS user_name, s.user_id, s.client_address, s.tls, s.logged_in_at,
           s.instance_id, i.host AS instance_host, i.version AS instance_version, i.schema_name
      FROM pgmodel.sessions s
      JOIN pgmodel.users u ON u.id = s.user_id
      JOIN pgmodel.service_instances i ON i.id = s.instance_id
     WHERE pgmodel.instance_is_live(i.backend_pid, i.backend_start);
COMMENT ON VIEW pgmodel.session_list IS 'Sessions of live pgmodel serve instances, with user names';

COMMENT ON COLUMN pgmodel.service_instances.id IS 'the instance, drawn when pgmodel serve starts';
COMMENT ON COLUMN pgmodel.service_instances.backend_pid IS 'pg_stat_activity.pid of the instance''s doorbell (LISTEN) connection';
COMMENT ON COLUMN pgmodel.service_instances.backend_start IS 'pg_stat_activity.backend_start of that connection: with the pid, it tells a live instance from a dead one';
COMMENT ON COLUMN pgmodel.service_instances.host IS 'the host name the instance runs on';
COMMENT ON COLUMN pgmodel.service_instances.version IS 'the server''s name and version (pgmodel/…)';
COMMENT ON COLUMN pgmodel.service_instances.schema_name IS 'the PostgreSQL schema the instance serves (--schema)';
COMMENT ON COLUMN pgmodel.service_instances.started_at IS 'when the instance registered';
COMMENT ON COLUMN pgmodel.sessions.id IS 'the logged-in connection';
COMMENT ON COLUMN pgmodel.sessions.instance_id IS 'the instance holding the connection (pgmodel.service_instances)';
COMMENT ON COLUMN pgmodel.sessions.user_id IS 'the logged-in user (pgmodel.users)';
COMMENT ON COLUMN pgmodel.sessions.client_address IS 'the client''s address (behind a trusted proxy: the PROXY header''s)';
COMMENT ON COLUMN pgmodel.sessions.tls IS 'whether the connection is TLS';
COMMENT ON COLUMN pgmodel.sessions.logged_in_at IS 'when the user logged in on it';
COMMENT ON COLUMN pgmodel.session_list.id IS 'the logged-in connection';
COMMENT ON COLUMN pgmodel.session_list.user_name IS 'the logged-in user''s name';
COMMENT ON COLUMN pgmodel.session_list.user_id IS 'the logged-in user (pgmodel.users)';
COMMENT ON COLUMN pgmodel.session_list.client_address IS 'the client''s address';
COMMENT ON COLUMN pgmodel.session_list.tls IS 'whether the connection is TLS';
COMMENT ON COLUMN pgmodel.session_list.logged_in_at IS 'when the user logged in on it';
COMMENT ON COLUMN pgmodel.session_list.instance_id IS 'the instance holding the connection';
COMMENT ON COLUMN pgmodel.session_list.instance_host IS 'the host name that instance runs on';
COMMENT ON COLUMN pgmodel.session_list.instance_version IS 'that instance''s server name and version';
COMMENT ON COLUMN pgmodel.session_list.schema_name IS 'the PostgreSQL schema that instance serves';

-- Only the role that owns these (the service's) reads and writes them; pgmodel_app and PUBLIC get nothing,
-- so no service user reads other users' addresses through them. Revoked once: this file runs at every start.
DO $pgmodel$
BEGIN
    IF (SELECT relacl IS NULL FROM pg_class WHERE oid = 'pgmodel.sessions'::regclass) THEN
        REVOKE ALL ON pgmodel.service_instances, pgmodel.sessions, pgmodel.session_list FROM PUBLIC;
    END IF;
    IF (SELECT proacl IS NULL FROM pg_proc WHERE oid = 'pgmodel.instance_is_live(integer, timestamptz)'::regprocedure) THEN
        REVOKE ALL ON FUNCTION pgmodel.instance_is_live(integer, timestamptz) FROM PUBLIC;
    END IF;
END
$pgmodel$;
