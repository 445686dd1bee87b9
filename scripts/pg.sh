#!/usr/bin/env bash
# Convenience commands for the embedded PostgreSQL cluster of this checkout.
#
#   scripts/pg.sh start           set up and start it (what run.sh and test.sh do first)
#   scripts/pg.sh stop            stop it
#   scripts/pg.sh restart         kill it (immediate stop, as a crash would) and start it again
#   scripts/pg.sh status          is it running, where, on which port
#   scripts/pg.sh psql [args]     psql as role pgmodel on database pgmodel (honours DATABASE_URL)
#   scripts/pg.sh psql-test       psql as role pgmodel on database pgmodel_test
#   scripts/pg.sh admin [args]    psql as the cluster's superuser over the private socket
#   scripts/pg.sh env             print export lines: eval "$(scripts/pg.sh env)"
#   scripts/pg.sh log             follow the server log
set -euo pipefail

# shellcheck source=scripts/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

usage() {
    sed -n '2,12s/^# \{0,1\}//p' "${BASH_SOURCE[0]}" >&2
    exit 2
}

# Commands that only look must not create a cluster as a side effect.
existing_cluster() {
    pgm_prepare_embedded
    [ -n "$(ls -A "$PGM_DATA" 2>/dev/null)" ] || pgm_die "no embedded cluster at $PGM_DATA yet; run scripts/pg.sh start"
    pgm_require_marker
}

running_cluster() {
    existing_cluster
    pgm_is_running || pgm_die "the embedded cluster is not running; run scripts/pg.sh start"
    PGM_PORT="$(pgm_running_port)"
}

cmd="${1:-}"
[ $# -gt 0 ] && shift
case "$cmd" in
    start)
        pgm_setup
        ;;
    stop)
        existing_cluster
        pgm_stop_cluster
        ;;
    restart)
        running_cluster
        pgm_pg_ctl -m immediate -w -t 60 stop >/dev/null
        pgm_log "killed the embedded cluster (immediate stop)"
        # The caller's environment points at this cluster; pgm_setup would take it for an external one.
        unset DATABASE_URL PGMODEL_TEST_DATABASE_URL
        # Back on the same port, so clients reconnect to the URL they have.
        export PGMODEL_PG_PORT="$PGM_PORT"
        pgm_setup
        ;;
    status)
        existing_cluster
        if pgm_is_running; then
            PGM_PORT="$(pgm_running_port)"
            echo "running: 127.0.0.1:$PGM_PORT, socket $PGM_SOCKDIR, data $PGM_DATA"
            echo "DATABASE_URL=$(pgm_url "$PGM_DB")"
            echo "PGMODEL_TEST_DATABASE_URL=$(pgm_url "$PGM_TEST_DB")"
        else
            echo "stopped: data $PGM_DATA"
            exit 3
        fi
        ;;
    psql | psql-test)
        db="$PGM_DB"
        [ "$cmd" = psql-test ] && db="$PGM_TEST_DB"
        if [ -n "${DATABASE_URL:-}" ]; then
            url="$DATABASE_URL"
            [ "$cmd" = psql-test ] && url="${PGMODEL_TEST_DATABASE_URL:-$DATABASE_URL}"
        else
            running_cluster
            url="$(pgm_url "$db")"
        fi
        exec psql "$url" "$@"
        ;;
    admin)
        running_cluster
        pgm_as_owner "$PGM_BIN/psql" -X -h "$PGM_SOCKDIR" -p "$PGM_PORT" -d postgres "$@"
        ;;
    env)
        running_cluster
        printf 'export DATABASE_URL=%q\n' "$(pgm_url "$PGM_DB")"
        printf 'export PGMODEL_TEST_DATABASE_URL=%q\n' "$(pgm_url "$PGM_TEST_DB")"
        if [ -f "$PGM_SOCKDIR/server.crt" ]; then
            printf 'export PGMODEL_TEST_PG_SSLROOTCERT=%q\n' "$PGM_SOCKDIR/server.crt"
        fi
        ;;
    log)
        existing_cluster
        exec tail -n 50 -F "$PGM_DATA/postgresql.log"
        ;;
    *)
        usage
        ;;
esac
