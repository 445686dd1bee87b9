#!/usr/bin/env bash
# Builds Benchmarks/ in release mode and runs the side-by-side suite against the embedded cluster
# (or DATABASE_URL): PGModel direct and through the service, raw PostgresNIO, Fluent 4 and psql \copy.
# Writes docs/PERFORMANCE.md and docs/performance.svg with the machine and PostgreSQL settings. On the
# embedded cluster the suite runs in a fresh database (pgmodel_bench), dropped at exit.
#
#   scripts/benchmark.sh [--quick] [--rows N] [--rounds N] [--large N] [--save-rows N] [--out FILE.md]
#   scripts/benchmark.sh --observers [--quick] [--point | --rls | --isolation | --history | --migration | --fetch]   the other benchmarks
#
# --quick is a smoke run (small sizes, 2 rounds); its report goes to a temporary directory unless --out
# is given, so it never replaces the committed figures.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
REPO="$(pwd -P)"
# shellcheck source=scripts/lib.sh
. scripts/lib.sh

observers=0
quick=0
out=""
suite_args=()
while [ $# -gt 0 ]; do
    case "$1" in
        --observers) observers=1 ;;
        --quick) quick=1; suite_args+=("$1") ;;
        --out) out="$2"; shift ;;
        --rows | --rounds | --large | --save-rows) suite_args+=("$1" "$2"); shift ;;
        --point | --rls | --isolation | --history | --migration | --fetch) observers=1; suite_args+=("$1") ;;
        *) pgm_die "unknown option $1 (see the header of scripts/benchmark.sh)" ;;
    esac
    shift
done

given_url="${DATABASE_URL:-}"
pgm_setup
(cd Benchmarks && swift build -c release)
bin="$REPO/Benchmarks/.build/release/PGModelBenchmarks"

if [ "$observers" = 1 ]; then
    exec "$bin" "${suite_args[@]}"
fi

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
if [ -z "$given_url" ]; then
    # The suite measures a fresh database on the embedded cluster: every insert adds to the shared
    # history table, so earlier runs' rows (millions after a day of benchmarks) would slow later runs'
    # inserts and make runs incomparable. Dropped at exit.
    bench_db=pgmodel_bench
    psql -X -q -d "$DATABASE_URL" -c "DROP DATABASE IF EXISTS $bench_db WITH (FORCE)" -c "CREATE DATABASE $bench_db"
    DATABASE_URL="$(pgm_url "$bench_db")"
    export DATABASE_URL
    pgm_apply_sql "$DATABASE_URL"
    trap 'rm -rf "$work"; psql -X -q -d "$(pgm_url "$PGM_DB")" -c "DROP DATABASE IF EXISTS $bench_db WITH (FORCE)" || true' EXIT
fi
if [ -z "$out" ]; then
    if [ "$quick" = 1 ]; then out="$work/PERFORMANCE.md"; else out="$REPO/docs/PERFORMANCE.md"; fi
fi
svg="$(dirname "$out")/performance.svg"

"$bin" --compare "${suite_args[@]}" --json "$work/results.json" | tee "$work/tables.md"

for setting in server_version shared_buffers fsync synchronous_commit wal_level work_mem max_connections; do
    printf '%s=%s\n' "$setting" "$(psql -X -At -d "$DATABASE_URL" -c "SHOW $setting")"
done >"$work/settings.txt"

command="scripts/benchmark.sh"
[ "${#suite_args[@]}" -gt 0 ] && command="$command ${suite_args[*]}"
python3 Benchmarks/report.py --json "$work/results.json" --tables "$work/tables.md" --settings "$work/settings.txt" \
    --out "$out" --svg "$svg" --command "$command" --commit "$(git rev-parse --short HEAD 2>/dev/null || echo unknown)"
if [ "$quick" = 1 ] && [ "$out" = "$work/PERFORMANCE.md" ]; then
    # The temporary directory goes at exit; keep the smoke run's report where it can be read.
    mkdir -p /tmp/pgmodel-benchmark
    cp "$out" "$svg" /tmp/pgmodel-benchmark/
    pgm_log "smoke-run report: /tmp/pgmodel-benchmark/PERFORMANCE.md"
else
    pgm_log "wrote $out and $svg"
fi
