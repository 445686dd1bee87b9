#!/usr/bin/env bash
# First-run initialisation of the docker-compose `postgres` service, mounted as
# /docker-entrypoint-initdb.d/10-pgmodel.sh. The image runs it once, against a temporary
# socket-only server, when the data volume is empty; the same role, databases and sql/ files
# that scripts/lib.sh sets up for the embedded cluster.
#
# The image executes this file when it is executable and sources it otherwise; the subshell
# keeps our shell options out of the image's entrypoint in the second case.
(
    set -euo pipefail
    role=pgmodel
    password="${PGMODEL_DB_PASSWORD:-pgmodel}"

    # Not SUPERUSER and not BYPASSRLS: row-level security must apply to the service.
    psql -X -q -v ON_ERROR_STOP=1 -v role="$role" -v password="$password" \
        --username "$POSTGRES_USER" --dbname postgres <<'SQL'
SELECT format('CREATE ROLE %I LOGIN', :'role')
 WHERE NOT EXISTS (SELECT FROM pg_roles WHERE rolname = :'role')
\gexec
SELECT format('ALTER ROLE %I WITH LOGIN NOSUPERUSER NOBYPASSRLS NOREPLICATION CREATEDB PASSWORD %L',
              :'role', :'password')
\gexec
-- The role shares its name with the system schema: keep "$user" out of its search path, so psql
-- lists the model tables alone. PGModel's own sessions ask for the default path when they connect.
SELECT format('ALTER ROLE %I SET search_path = public', :'role')
\gexec
-- The role every service request runs as (set on the pooled connection): row-level security decides its rows.
SELECT 'CREATE ROLE pgmodel_app NOLOGIN NOBYPASSRLS'
 WHERE NOT EXISTS (SELECT FROM pg_roles WHERE rolname = 'pgmodel_app')
\gexec
SELECT format('GRANT pgmodel_app TO %I', :'role')
\gexec
-- The role an admin's requests run as: a member of pgmodel_app whose policies show every row.
SELECT 'CREATE ROLE pgmodel_admin NOLOGIN NOBYPASSRLS'
 WHERE NOT EXISTS (SELECT FROM pg_roles WHERE rolname = 'pgmodel_admin')
\gexec
GRANT pgmodel_app TO pgmodel_admin;
SELECT format('GRANT pgmodel_admin TO %I', :'role')
\gexec
-- Lets the service keep passwords out of the statement logs in the transactions that carry them
-- (SET LOCAL log_statement = 'none' and friends; superuser-only settings otherwise). PostgreSQL 15+.
SELECT format('GRANT SET ON PARAMETER log_statement, log_min_duration_statement, log_min_duration_sample, '
              'log_transaction_sample_rate, log_parameter_max_length TO %I', :'role')
\gexec
SELECT format('CREATE DATABASE %I OWNER %I', d, :'role')
  FROM unnest(ARRAY['pgmodel', 'pgmodel_test']) AS d
 WHERE NOT EXISTS (SELECT FROM pg_database WHERE datname = d)
\gexec
SQL

    # The streaming standby (docker-compose.yml's postgres-standby) copies the cluster and follows it
    # as this role: replication only, no database access of its own.
    if [ -n "${PGMODEL_REPLICATION_PASSWORD:-}" ]; then
        psql -X -q -v ON_ERROR_STOP=1 -v password="$PGMODEL_REPLICATION_PASSWORD" \
            --username "$POSTGRES_USER" --dbname postgres <<'SQL'
SELECT 'CREATE ROLE pgmodel_replicator LOGIN REPLICATION'
 WHERE NOT EXISTS (SELECT FROM pg_roles WHERE rolname = 'pgmodel_replicator')
\gexec
SELECT format('ALTER ROLE pgmodel_replicator WITH LOGIN REPLICATION NOSUPERUSER PASSWORD %L', :'password')
\gexec
SQL
        grep -q '^host replication pgmodel_replicator ' "$PGDATA/pg_hba.conf" \
            || echo 'host replication pgmodel_replicator all scram-sha-256' >>"$PGDATA/pg_hba.conf"
    fi

    # As the owner, so every object belongs to the role the service runs as.
    for db in pgmodel pgmodel_test; do
        for f in "${PGMODEL_SQL_DIR:-/pgmodel/sql}"/*.sql; do
            [ -e "$f" ] || continue
            echo "pgmodel: applying $f to $db"
            PGOPTIONS="-c client_min_messages=warning" \
                psql -X -q -v ON_ERROR_STOP=1 --username "$role" --dbname "$db" -f "$f"
        done
    done
)
