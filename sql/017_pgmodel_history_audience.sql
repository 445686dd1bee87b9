-- PGModel history fan-out: which of many users may see which history change, in one query.
--
-- A service instance reads each new page of history once, as the database owner, and asks in one more
-- statement which of its subscribed users the row-level security of pgmodel.changes and
-- pgmodel.transactions would show each change and transaction to. The policies match a change against
-- pgmodel.shared_row_keys(), the share closure of the user in pgmodel.user_id; this function gives that
-- same closure for any user, by running the very same function under that user's id, so the fan-out
-- cannot drift from what the policies allow. Only the database owner may call it (it tells about
-- anyone's shares). An error ends the caller's transaction, and the setting with it. Idempotent.
CREATE OR REPLACE FUNCTION pgmodel.shared_row_keys_for(p_user uuid) RETURNS text[]
    LANGUAGE plpgsql VOLATILE SECURITY DEFINER SET search_path = pg_catalog, pg_temp
    AS $f$
DECLARE
    previous text := current_setting('pgmodel.user_id', true);
    keys text[];
BEGIN
    IF p_user IS NULL THEN
        RETURN '{}';
    END IF;
    PERFORM set_config('pgmodel.user_id', p_user::text, true);
    keys := pgmodel.shared_row_keys();
    PERFORM set_config('pgmodel.user_id', coalesce(previous, ''), true);
    RETURN keys;
END
$f$;

COMMENT ON FUNCTION pgmodel.shared_row_keys_for(uuid) IS 'the share closure pgmodel.shared_row_keys() gives the user p_user (as ''id class store'' keys), for the history fan-out''s one visibility query; the database owner''s only';

DO $pgmodel$
BEGIN
    IF (SELECT proacl IS NULL FROM pg_proc WHERE oid = 'pgmodel.shared_row_keys_for(uuid)'::regprocedure) THEN
        REVOKE ALL ON FUNCTION pgmodel.shared_row_keys_for(uuid) FROM PUBLIC;
    END IF;
END
$pgmodel$;
