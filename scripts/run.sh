#!/usr/bin/env bash
# Starts PostgreSQL (embedded cluster unless DATABASE_URL is set), builds the release server and
# runs it in the foreground. Safe to run again: the cluster, role and databases are reused.
#
#   PGMODEL_HOST     address the service listens on (default 127.0.0.1)
#   PGMODEL_PORT     its TCP port (default 7432)
#   PGMODEL_PG_PORT  port of the embedded PostgreSQL (default 55432)
#   DATABASE_URL     use this PostgreSQL instead of the embedded one
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
# shellcheck source=scripts/lib.sh
. scripts/lib.sh

host="${PGMODEL_HOST:-127.0.0.1}"
port="${PGMODEL_PORT:-7432}"

pgm_setup

swift build -c release --product pgmodel
bin="$(swift build -c release --show-bin-path)/pgmodel"
[ -x "$bin" ] || pgm_die "swift build did not produce $bin"

# A second copy would only die on "address in use"; say why instead.
if pgm_port_busy "$port"; then
    pgm_die "127.0.0.1:$port is already in use (is pgmodel already running?); set PGMODEL_PORT to use another port"
fi

cat <<EOF

PGModel service:  $host:$port   (line protocol, one JSON object per line)
PostgreSQL:       psql $DATABASE_URL
Create a user:    DATABASE_URL=$DATABASE_URL \\
                    .build/release/pgmodel user add alice --password-stdin <<<'secret'
                  (or pass --database-url $DATABASE_URL)
Stop PostgreSQL:  scripts/pg.sh stop   (after stopping the service with Ctrl-C)

EOF

# The database URL (with its password) travels in the environment, never on the command line, where
# every user of the machine could read it in ps.
DATABASE_URL="$DATABASE_URL" exec "$bin" serve --host "$host" --port "$port"
