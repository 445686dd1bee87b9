-- What a delete rule's nullify replaces. pgmodel.nullified_references (003) names the rows whose foreign
-- key a delete sets to NULL; this one also returns the deleted row each of them referenced, so history
-- records, as for any update, the value the change replaced (pgmodel.changes.previous_values). A new
-- function beside the old one, which an older build may still call. Idempotent.

CREATE OR REPLACE FUNCTION pgmodel.nullified_reference_targets(p_target regclass, p_root text, p_ids uuid[], p_table regclass, p_column text)
    RETURNS TABLE (id uuid, entity text, owner_id uuid, target uuid)
    LANGUAGE plpgsql STABLE SECURITY DEFINER SET search_path = pg_catalog, pg_temp
    AS $f$
DECLARE
    target_schema text;
    allowed uuid[] := p_ids;
BEGIN
    -- A service user nullifies references only to rows they may delete (their own, shared, or any for an
    -- admin): the same filter as nullified_references.
    IF current_setting('role') = 'pgmodel_app' THEN
        SELECT n.nspname INTO target_schema FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE c.oid = p_target;
        EXECUTE format('SELECT coalesce(array_agg(t.id), ''{}'') FROM %s t WHERE t.id = ANY ($1) '
                       'AND (t.owner_id = $2 OR $3 OR t.id = ANY (%I.pgmodel_shared_ids($4, true, true)))', p_target, target_schema)
            INTO allowed USING p_ids, pgmodel.current_user_id(), pgmodel.current_user_is_admin(), p_root;
    END IF;
    RETURN QUERY EXECUTE format('SELECT r.id, r.entity, r.owner_id, r.%I FROM %s r WHERE r.%I = ANY ($1)', p_column, p_table, p_column) USING allowed;
END
$f$;

-- Granted once (GRANT rewrites the catalog row each time, and this file runs at every start); a SECURITY
-- DEFINER function is not for PUBLIC.
DO $pgmodel$
BEGIN
    IF (SELECT proacl IS NULL FROM pg_proc WHERE oid = 'pgmodel.nullified_reference_targets(regclass, text, uuid[], regclass, text)'::regprocedure) THEN
        REVOKE ALL ON FUNCTION pgmodel.nullified_reference_targets(regclass, text, uuid[], regclass, text) FROM PUBLIC;
        GRANT EXECUTE ON FUNCTION pgmodel.nullified_reference_targets(regclass, text, uuid[], regclass, text) TO pgmodel_app;
    END IF;
END
$pgmodel$;
