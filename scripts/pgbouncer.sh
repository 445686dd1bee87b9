#!/usr/bin/env bash
# A PgBouncer in transaction mode in front of a test database, for the pooling tests (and by hand).
#   scripts/pgbouncer.sh start DIR UPSTREAM_URL [POOL_SIZE]   prints the URL through it (?pgmodel_pooling=transaction)
#   scripts/pgbouncer.sh stop DIR                             stops it (by its pid file) and removes DIR
# DIR is short and under /tmp (it holds the unix socket); UPSTREAM_URL is postgres://user:password@host:port/db.
set -euo pipefail
# shellcheck source=scripts/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

case "${1:-}" in
    start)
        [ $# -ge 3 ] || { sed -n '3,4s/^# \{0,1\}//p' "${BASH_SOURCE[0]}" >&2; exit 2; }
        pgm_pgbouncer_start "$2" "$3" "${4:-3}"
        ;;
    stop)
        [ $# -ge 2 ] || { sed -n '3,4s/^# \{0,1\}//p' "${BASH_SOURCE[0]}" >&2; exit 2; }
        pgm_pgbouncer_stop "$2"
        ;;
    *)
        sed -n '2,5s/^# \{0,1\}//p' "${BASH_SOURCE[0]}" >&2
        exit 2
        ;;
esac
