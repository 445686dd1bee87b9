#!/usr/bin/env bash
# Runs the README tour's shell steps as a newcomer pastes them: every ```sh block that directly follows a
# `<!-- ci: ... -->` line in README.md, in order, in one bash with -euo pipefail, from the checkout's root
# and with no DATABASE_URL. Then it checks that the service those steps started lets alice log in, and
# stops it.
#
# The steps run against the checkout's cluster but in a database of their own (PGMODEL_LOCAL_DATABASE,
# made afresh each run) and with the service on a free port (PGMODEL_PORT): what a developer made by hand
# in the `pgmodel` database, and a service they run on 7432, are never touched.
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
# shellcheck source=scripts/lib.sh
. scripts/lib.sh

steps="$(mktemp /tmp/pgmodel-readme-XXXXXX.sh)"
cleanup() { rm -f "$steps"; }
trap cleanup EXIT

# A marker arms the next fence only: the Swift and SQL blocks CI takes too (scripts/first-hour.sh) are not
# shell steps.
awk '
    /^<!-- ci: / { armed = 1; next }
    armed && /^```/ { inside = ($0 == "```sh"); armed = 0; next }
    inside && /^```$/ { inside = 0; next }
    inside { print }
' README.md >"$steps"
[ -s "$steps" ] || pgm_die "README.md has no shell steps marked <!-- ci: ... -->"
echo "== the README's shell steps:"
sed 's/^/   | /' "$steps"

port=17432
while pgm_port_busy "$port"; do port=$((port + 1)); done
export PGMODEL_LOCAL_DATABASE=pgmodel_readme PGMODEL_PORT="$port"
# The tour's database from an earlier run goes first, loudly if it cannot (in a subshell: pgm_setup
# exports the URLs; it starts the cluster if it is not running, as the steps' first line would).
(
    unset DATABASE_URL
    pgm_setup >/dev/null
    pgm_psql_admin -c "DROP DATABASE IF EXISTS $PGMODEL_LOCAL_DATABASE WITH (FORCE)"
)
# A newcomer's shell: nothing exported by the scripts.
unset DATABASE_URL PGMODEL_TEST_DATABASE_URL PGMODEL_TEST_PG_SSLROOTCERT PGMODEL_URL

{
    echo 'set -euo pipefail'
    # The tour backgrounds the service; stop it however the steps end.
    echo 'trap '"'"'kill $(jobs -p) 2>/dev/null || true; wait 2>/dev/null || true'"'"' EXIT'
    cat "$steps"
    # The service is up once alice can log in; give it the time a cold start needs.
    echo 'for attempt in $(seq 1 120); do'
    echo "    if PGMODEL_URL=pgmodel://alice:secret@127.0.0.1:$port .build/debug/pgmodel status; then exit 0; fi"
    echo '    sleep 0.5'
    echo 'done'
    echo 'echo "the service the README starts never let alice log in" >&2; exit 1'
} >"$steps.run"
trap 'rm -f "$steps" "$steps.run"' EXIT
bash "$steps.run"
echo "== the README's shell steps work as written (database $PGMODEL_LOCAL_DATABASE, service port $port)"
