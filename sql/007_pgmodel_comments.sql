-- Every system table and column says what it is in psql (\d+ pgmodel.users), as the model tables do.
-- Idempotent, and silent once applied: a comment is written only where none is (COMMENT ON takes a
-- lock on its table even when nothing changes, and this file runs at every store start-up).
DO $pgmodel$
DECLARE
    item text[];
BEGIN
    FOREACH item SLICE 1 IN ARRAY ARRAY[
        ['users', 'id', 'the user''s id: owner_id of the rows they insert, grantee_id of their shares'],
        ['users', 'name', 'login name (1 to 128 characters, unique)'],
        ['users', 'password_hash', 'crypt(password, gen_salt(''bf'')): bcrypt, never the password'],
        ['users', 'is_admin', 'admins see every row, create and change tables, migrate, delete history'],
        ['users', 'created_at', 'when the user was added'],
        ['entities', 'schema_name', 'the PostgreSQL schema of the model tables (a store)'],
        ['entities', 'name', 'the Swift class name (the entity)'],
        ['entities', 'table_name', 'the table of its class hierarchy (a view for a subclass)'],
        ['entities', 'description', 'the registered EntityDescription: attributes, relationships, constraints'],
        ['entities', 'updated_at', 'when the description last changed'],
        ['schema_versions', 'id', 'order of application'],
        ['schema_versions', 'schema_name', 'the store (PostgreSQL schema)'],
        ['schema_versions', 'version', 'the schema version (major.minor.patch)'],
        ['schema_versions', 'description', 'the registered SchemaDescription at that version'],
        ['schema_versions', 'applied_at', 'when it was applied'],
        ['transactions', 'created_at', 'when the save ran'],
        ['transactions', 'user_name', 'the service user who saved (NULL for the direct store)'],
        ['changes', 'id', 'the change''s identifier (changeIdentifier)'],
        ['changes', 'transaction_id', 'the history transaction (pgmodel.transactions.id) it belongs to'],
        ['changes', 'kind', 'insert, update or delete'],
        ['changes', 'row_id', 'the changed row''s id in its model table'],
        ['history_deletions', 'schema_name', 'the store whose history was deleted'],
        ['history_deletions', 'deleted_through', 'history up to this position was deleted: older tokens get history_token_expired'],
        ['shares', 'schema_name', 'the store of the shared record'],
        ['shares', 'entity', 'the shared record''s class'],
        ['shares', 'row_id', 'the shared record''s id'],
        ['shares', 'grantee_id', 'the pgmodel.users id the record is shared with'],
        ['shares', 'created_at', 'when it was shared'],
        ['share_list', 'schema_name', 'the store of the shared record'],
        ['share_list', 'entity', 'the shared record''s class'],
        ['share_list', 'row_id', 'the shared record''s id'],
        ['share_list', 'owner', 'the record owner''s user name'],
        ['share_list', 'grantee', 'the user name it is shared with'],
        ['share_list', 'permission', 'readOnly or readWrite'],
        ['share_list', 'granted_by', 'who shared it'],
        ['share_list', 'created_at', 'when it was shared']
    ] LOOP
        IF EXISTS (SELECT 1 FROM pg_attribute a
                    WHERE a.attrelid = to_regclass('pgmodel.' || quote_ident(item[1])) AND a.attname = item[2]
                      AND NOT a.attisdropped AND col_description(a.attrelid, a.attnum) IS NULL) THEN
            EXECUTE format('COMMENT ON COLUMN pgmodel.%I.%I IS %L', item[1], item[2], item[3]);
        END IF;
    END LOOP;
END
$pgmodel$;
