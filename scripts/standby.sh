#!/usr/bin/env bash
# A streaming standby (hot, read-only) of a test cluster, for the replica tests (and by hand).
#   scripts/standby.sh start DIR PORT PRIMARY_URL   pg_basebackup -R into DIR, started on 127.0.0.1:PORT
#   scripts/standby.sh stop DIR                     stops it and removes DIR
#   scripts/standby.sh pause DIR | resume DIR       pauses or resumes its WAL replay (a lagging standby)
# DIR is short and under /tmp (it holds the unix socket); PRIMARY_URL is postgres://user:password@host:port/db.
set -euo pipefail
# shellcheck source=scripts/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

usage() { sed -n '2,7s/^# \{0,1\}//p' "${BASH_SOURCE[0]}" >&2; exit 2; }

case "${1:-}" in
    start) [ $# -ge 4 ] || usage; pgm_standby_start "$2" "$3" "$4" ;;
    stop) [ $# -ge 2 ] || usage; pgm_standby_stop "$2" ;;
    pause | resume) [ $# -ge 2 ] || usage; pgm_standby_replay "$2" "$1" ;;
    *) usage ;;
esac
