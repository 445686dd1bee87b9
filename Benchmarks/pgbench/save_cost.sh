#!/usr/bin/env bash
# What a one-row save costs PostgreSQL itself, statement by statement, against a one-row INSERT: pgbench
# (a C client, so the Swift process's own work is not in the figures) runs the statements a save sends,
# adding one step at a time, with the same number of clients each time. The ratio of a step to the raw
# insert is the most any client could reach for a save of that shape on this database.
#
#   DATABASE_URL=postgres://… Benchmarks/pgbench/save_cost.sh [clients] [seconds]
#
# It writes history transactions of a store named pgbench_save_cost (removed at the end) and a table
# public.pgbench_save_cost (dropped at the end). Run it on a bootstrapped database (a PGModel store).
set -euo pipefail
url="${DATABASE_URL:?set DATABASE_URL (scripts/pg.sh env prints it)}"
clients="${1:-32}"
seconds="${2:-8}"
work="$(mktemp -d)"
trap 'rm -rf "$work"; psql "$url" -qc "DELETE FROM pgmodel.transactions WHERE schema_name = '"'"'pgbench_save_cost'"'"'; DROP TABLE IF EXISTS public.pgbench_save_cost" >/dev/null' EXIT
psql "$url" -qc "CREATE TABLE IF NOT EXISTS public.pgbench_save_cost (id uuid PRIMARY KEY, label text NOT NULL)"

insert="INSERT INTO public.pgbench_save_cost (id, label) VALUES (gen_random_uuid(), 'x')"
transaction="INSERT INTO pgmodel.transactions (schema_name, author, user_id, user_name, bundle_identifier, process_identifier) VALUES ('pgbench_save_cost', NULL, NULL::uuid, NULL, NULL::text, NULL::text) RETURNING id"
changes="INSERT INTO pgmodel.changes (transaction_id, entity, row_id, kind, owner_id, updated_attributes, audience_only) VALUES (currval('pgmodel.transactions_id_seq'), 'Row'::text, gen_random_uuid(), 'insert', NULL::uuid, '{}', false)"
doorbell="SELECT pg_notify('pgbench_save_cost', 'x')::text, pg_current_wal_flush_lsn()::text"
# A direct store's save writes its history transaction and change as one statement.
history="WITH t AS (INSERT INTO pgmodel.transactions (schema_name, author, user_id, user_name, bundle_identifier, process_identifier) VALUES ('pgbench_save_cost', NULL, NULL::uuid, NULL, NULL::text, NULL::text) RETURNING id) INSERT INTO pgmodel.changes (transaction_id, entity, row_id, kind, owner_id, updated_attributes, audience_only) VALUES ((SELECT id FROM t), 'Row'::text, gen_random_uuid(), 'insert', NULL::uuid, '{}', false)"

printf '%s;\n' "$insert" > "$work/raw.sql"
printf 'BEGIN;\n%s;\nCOMMIT;\n' "$insert" > "$work/transaction.sql"
printf 'BEGIN;\n%s;\n%s;\nCOMMIT;\n' "$insert" "$transaction" > "$work/history_transaction.sql"
printf 'BEGIN;\n%s;\n%s;\n%s;\nCOMMIT;\n' "$insert" "$transaction" "$changes" > "$work/history_changes.sql"
printf 'BEGIN;\n%s;\n%s;\n%s;\nCOMMIT;\n%s;\n' "$insert" "$transaction" "$changes" "$doorbell" > "$work/save.sql"
printf 'BEGIN;\n%s;\n%s;\nCOMMIT;\n%s;\n' "$insert" "$history" "$doorbell" > "$work/direct_save.sql"

echo "| statements ($clients clients, ${seconds} s each) | per second | × one INSERT |"
echo "|---|---:|---:|"
raw=""
for step in raw transaction history_transaction history_changes save direct_save; do
    tps="$(pgbench -n -M prepared -c "$clients" -j 2 -T "$seconds" -f "$work/$step.sql" "$url" 2>/dev/null | sed -n 's/^tps = \([0-9.]*\).*/\1/p')"
    [ -z "$raw" ] && raw="$tps"
    label="$(case "$step" in
        raw) echo "INSERT (autocommit)";;
        transaction) echo "BEGIN; INSERT; COMMIT";;
        history_transaction) echo "… + history transaction (position at COMMIT)";;
        history_changes) echo "… + its change";;
        save) echo "… + doorbell and commit position (a service user's save)";;
        direct_save) echo "the same, history transaction and change as one statement (a direct save)";;
    esac)"
    awk -v label="$label" -v tps="$tps" -v raw="$raw" 'BEGIN { printf "| %s | %.0f | %.2f |\n", label, tps, tps / raw }'
done
