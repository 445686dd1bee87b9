#!/usr/bin/env bash
# Entry point of docker-compose.yml's `pgbouncer` service (the Dockerfile's `pgbouncer` stage): writes
# PgBouncer's configuration from the environment and runs it in the foreground, in transaction mode in
# front of the `postgres` service, for the service role alone.
#
#   PGMODEL_DB_PASSWORD        the service role's password (letters and digits, as in .env.example)
#   PGBOUNCER_UPSTREAM_HOST    PostgreSQL's host (default postgres), PGBOUNCER_UPSTREAM_PORT (default 5432)
#   PGBOUNCER_POOL_SIZE        server connections per database (default 20)
#   PGBOUNCER_MAX_CLIENTS      client connections (default 2000)
set -euo pipefail

password="${PGMODEL_DB_PASSWORD:?PGMODEL_DB_PASSWORD is not set}"
case "$password" in *[!A-Za-z0-9]*) echo "PGMODEL_DB_PASSWORD must be letters and digits" >&2; exit 1 ;; esac
host="${PGBOUNCER_UPSTREAM_HOST:-postgres}"
port="${PGBOUNCER_UPSTREAM_PORT:-5432}"
pool="${PGBOUNCER_POOL_SIZE:-20}"
clients="${PGBOUNCER_MAX_CLIENTS:-2000}"
case "$port$pool$clients" in *[!0-9]*) echo "PGBOUNCER_UPSTREAM_PORT, PGBOUNCER_POOL_SIZE and PGBOUNCER_MAX_CLIENTS are numbers" >&2; exit 1 ;; esac

dir="$(mktemp -d)"
umask 077
printf '"pgmodel" "%s"\n' "$password" >"$dir/userlist.txt"
cat >"$dir/pgbouncer.ini" <<INI
[databases]
; PgBouncer cannot pass search_path on as a startup parameter: every server connection sets PGModel's.
* = host=$host port=$port connect_query='SET search_path = "\$user", public'

[pgbouncer]
listen_addr = 0.0.0.0
listen_port = 6432
unix_socket_dir =
auth_type = scram-sha-256
auth_file = $dir/userlist.txt
pool_mode = transaction
default_pool_size = $pool
max_client_conn = $clients
; PGModel leaves nothing in a server connection's session between transactions: nothing to reset.
server_reset_query =
ignore_startup_parameters = extra_float_digits,options,search_path
query_wait_timeout = 60
INI
exec pgbouncer "$dir/pgbouncer.ini"
