#!/usr/bin/env bash
# Plays a newcomer's first hour in a fresh clone, with the commands and code the docs show, as written.
#
#   scripts/first-hour.sh tour       README.md's tour: its shell steps (PostgreSQL, the debug build of
#                                    pgmodel, alice and bob, the service on 7432), then a package `Trips`
#                                    beside the checkout made of the tour's Package.swift, main.swift (with
#                                    the sharing and async snippets appended, as a reader pastes them) and
#                                    test file; `swift run Trips` and `swift test` there; the tour's psql lines
#   scripts/first-hour.sh examples   examples/README.md's commands, after the tour (and the tests)
#
# Blocks are taken from the documents by their `<!-- ci: … -->` markers, so what CI runs is what a reader
# copies. The tour uses the default database and ports the README names, so it needs a checkout whose
# cluster was never started (CI's clean clone) and free ports 55432, 7432 and 7433. Every line of output
# is checked for the macro plugin's "Internal Error", which a newcomer reads as a broken install.
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
# shellcheck source=scripts/lib.sh
. scripts/lib.sh

part="${1:-}"
case "$part" in tour | examples) ;; *) pgm_die "usage: scripts/first-hour.sh tour|examples" ;; esac

checkout="$(pwd -P)"
# The Trips package lives beside a checkout named PGModel, as the README's Package.swift says.
work=/tmp/pgm-first-hour-$PGM_HASH
log_dir=.pgmodel/first-hour
mkdir -p "$log_dir"
# A newcomer's shell: nothing exported by the scripts or the test runner.
unset DATABASE_URL PGMODEL_TEST_DATABASE_URL PGMODEL_TEST_PG_SSLROOTCERT PGMODEL_URL PGMODEL_LOCAL_DATABASE PGMODEL_PORT

# Prints the blocks of $1 whose marker is exactly `<!-- ci: $2 -->`, one after another.
blocks() {
    awk -v want="<!-- ci: $2 -->" '
        $0 == want { armed = 1; next }
        /^<!-- ci: / { armed = 0; next }
        armed && /^```/ { inside = 1; armed = 0; next }
        inside && /^```$/ { inside = 0; next }
        inside { print }
    ' "$1"
}

# Runs `$@`, its output shown and kept in $log_dir/$name.log; fails on a non-zero status or an
# "Internal Error" line.
step() {
    local name="$1" log="$log_dir/$1.log" status=0
    shift
    echo "== first hour: $name"
    "$@" 2>&1 | tee "$log" || status=$?
    if [ "$status" -ne 0 ]; then pgm_die "$name failed (status $status; log: $log)"; fi
    if grep -q "Internal Error" "$log"; then pgm_die "$name printed an \"Internal Error\" line (log: $log)"; fi
}

# Fails unless $2 (a fixed string) is in the log of step $1.
expect_output() {
    grep -qF -- "$2" "$log_dir/$1.log" || pgm_die "$1 did not print $2 (log: $log_dir/$1.log)"
}

wait_for_port() {
    local port="$1" attempt
    for attempt in $(seq 1 240); do
        if pgm_port_busy "$port"; then return 0; fi
        sleep 0.5
    done
    pgm_die "nothing listens on 127.0.0.1:$port after two minutes"
}

# Stops the services the steps started in the background, however the script ends.
services=()
stop_services() {
    local pid
    for pid in "${services[@]}"; do kill "$pid" 2>/dev/null || true; done
    for pid in "${services[@]}"; do wait "$pid" 2>/dev/null || true; done
}
trap stop_services EXIT

# Runs the shell lines of a block file in this shell (so `cmd &` stays a job of ours), echoing each,
# logged as step $1.
run_lines() {
    local name="$1" file="$2" line
    echo "== first hour: $name"
    while IFS= read -r line; do
        [ -n "${line// /}" ] || continue
        echo "   \$ $line"
        if [[ "$line" =~ \&[[:space:]]*(#.*)?$ ]]; then
            # A service the reader starts in the background: its output to a log of its own.
            bash -c "exec ${line%%&*}" >"$log_dir/$name.service-$((${#services[@]} + 1)).log" 2>&1 &
            services+=("$!")
        else
            bash -euo pipefail -c "$line" 2>&1 | tee -a "$log_dir/$name.log" ||
                pgm_die "$name: this line failed: $line (log: $log_dir/$name.log)"
        fi
    done <"$file"
    if grep -qs "Internal Error" "$log_dir/$name.log"; then pgm_die "$name printed an \"Internal Error\" line"; fi
}

if [ "$part" = tour ]; then
    [ ! -e "$PGM_LINK" ] || pgm_die "the tour needs a checkout whose cluster was never started (CI's clean clone): this one has $PGM_LINK. Try: git clone $checkout /tmp/pgmodel-fresh && cd /tmp/pgmodel-fresh && bash scripts/first-hour.sh tour"
    for port in 55432 7432 7433; do
        ! pgm_port_busy "$port" || pgm_die "127.0.0.1:$port is in use; the README's URLs name it, so the tour needs it free"
    done
    rm -rf "$work"
    mkdir -p "$work/Trips/Sources/Trips" "$work/Trips/Tests/TripsTests"
    ln -s "$checkout" "$work/PGModel"
    : >"$log_dir/tour-steps.log"

    blocks README.md "the tour's shell steps" >"$work/tour-steps.sh"
    [ -s "$work/tour-steps.sh" ] || pgm_die "README.md has no tour shell steps"
    run_lines tour-steps "$work/tour-steps.sh"
    wait_for_port 7432

    blocks README.md "file Package.swift" >"$work/Trips/Package.swift"
    blocks README.md "file Sources/Trips/main.swift" >"$work/Trips/Sources/Trips/main.swift"
    blocks README.md "append Sources/Trips/main.swift" >>"$work/Trips/Sources/Trips/main.swift"
    blocks README.md "file Tests/TripsTests/TripsTests.swift" >"$work/Trips/Tests/TripsTests/TripsTests.swift"
    for file in Package.swift Sources/Trips/main.swift Tests/TripsTests/TripsTests.swift; do
        [ -s "$work/Trips/$file" ] || pgm_die "README.md has no block marked for $file"
    done

    step tour-run bash -c "cd '$work/Trips' && swift run Trips"
    expect_output tour-run '["Spring in Paris"]'
    expect_output tour-run '["bob"]'
    expect_output tour-run '["Alice in Oslo"]'
    step tour-test bash -c "cd '$work/Trips' && swift test"
    blocks README.md sql >"$work/tour.sql"
    step tour-psql psql -v ON_ERROR_STOP=1 "postgres://pgmodel:pgmodel@127.0.0.1:55432/pgmodel" -f "$work/tour.sql"
    expect_output tour-psql 'Spring in Paris'
    echo "== first hour: the README's tour works as written (package $work/Trips)"
else
    [ -x .build/debug/pgmodel ] || pgm_die "run scripts/first-hour.sh tour first: the examples follow the tour"
    for port in 7433 8088; do
        ! pgm_port_busy "$port" || pgm_die "127.0.0.1:$port is in use; examples/README.md names it"
    done
    mkdir -p "$work"
    : >"$log_dir/examples.log"
    blocks examples/README.md examples >"$work/examples.sh"
    [ -s "$work/examples.sh" ] || pgm_die "examples/README.md has no marked commands"
    # The lines run one by one; a service started in the background is waited for before the next line.
    while IFS= read -r line; do
        printf '%s\n' "$line" >"$work/examples-line.sh"
        run_lines examples "$work/examples-line.sh"
        if [[ "$line" =~ --port[[:space:]]+([0-9]+).*\&[[:space:]]*(#.*)?$ ]]; then wait_for_port "${BASH_REMATCH[1]}"; fi
    done <"$work/examples.sh"
    expect_output examples 'store: postgres (schema sample_trips)'
    expect_output examples 'store: pgmodel'
    expect_output examples 'done'
    # TripsAPI's list, filtered by destination, has the trip its POST created (201, or 409 on a rerun).
    expect_output examples '"name":"Spring in Paris"'
    echo "== first hour: examples/README.md works as written"
fi
