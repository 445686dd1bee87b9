#!/usr/bin/env bash
# Runs the README tour's shell steps as a newcomer pastes them (issue 16): every ```sh block that follows a
# `<!-- ci: ... -->` line in README.md, in order, in one bash with -euo pipefail, from the checkout's root
# and with no DATABASE_URL. Then it checks that the service those steps started lets alice log in, and
# stops it. The tour's users are made on the scripts' own cluster; ones an earlier run left there are
# removed first, so the steps run as on a fresh machine.
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
# shellcheck source=scripts/lib.sh
. scripts/lib.sh

steps="$(mktemp /tmp/pgmodel-readme-XXXXXX.sh)"
cleanup() { rm -f "$steps"; }
trap cleanup EXIT

awk '
    /^<!-- ci: / { armed = 1; next }
    armed && /^```sh$/ { inside = 1; armed = 0; next }
    inside && /^```$/ { inside = 0; next }
    inside { print }
' README.md >"$steps"
[ -s "$steps" ] || pgm_die "README.md has no shell steps marked <!-- ci: ... -->"
echo "== the README's shell steps:"
sed 's/^/   | /' "$steps"

if pgm_port_busy 7432; then
    pgm_die "port 7432 is in use; the tour's service needs it (stop the other service first)"
fi

# The tour's users, left by an earlier run, go first (in a subshell: pgm_setup exports the URLs).
(
    unset DATABASE_URL
    pgm_setup >/dev/null 2>&1
    pgm_psql_admin -d "$PGM_DB" -qAt -c "DELETE FROM pgmodel.users WHERE name IN ('alice', 'bob')" >/dev/null 2>&1 || true
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
    echo '    if PGMODEL_URL=pgmodel://alice:secret@127.0.0.1:7432 .build/debug/pgmodel status; then exit 0; fi'
    echo '    sleep 0.5'
    echo 'done'
    echo 'echo "the service the README starts never let alice log in" >&2; exit 1'
} >"$steps.run"
trap 'rm -f "$steps" "$steps.run"' EXIT
bash "$steps.run"
echo "== the README's shell steps work as written"
