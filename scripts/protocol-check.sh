#!/usr/bin/env bash
# Runs scripts/protocol_check.py, the independent Python client written from docs/PROTOCOL.md alone,
# against `pgmodel serve`, as one self-contained phase:
#   * a fresh database on the scripts' cluster (or on DATABASE_URL's server), dropped at exit;
#   * users alice, bob, carol and the admin root in it (`pgmodel user add … --password-stdin`);
#   * three services on free ports: the main one (default limits), a "limits" one
#     (--max-connections 3 --max-response-rows 2 --max-response-bytes 4096 --idle-timeout 3
#     --max-line-bytes 1000 --max-save-bytes 3000 --max-history-transactions 2), a "proxy" one
#     (--trusted-proxy 127.0.0.1: every connection starts with a PROXY protocol header) and, when `openssl`
#     is installed, a TLS one with a throwaway certificate;
#   * the Python checks; every service is stopped and the database dropped however the run ends.
# The exit status is the Python script's (1: a check failed, 2: it could not start), or 1 if the set-up
# failed. The binary is $PGMODEL_BIN, else .build/debug/pgmodel (built beforehand; this script never builds).
# Needs python3 (3.8+, standard library only) and psql.
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
# shellcheck source=scripts/lib.sh
. scripts/lib.sh

BIN="${PGMODEL_BIN:-$PWD/.build/debug/pgmodel}"
[ -x "$BIN" ] || pgm_die "no pgmodel binary at $BIN; build it first (swift build) or set PGMODEL_BIN"
command -v python3 >/dev/null 2>&1 || pgm_die "python3 is needed to run scripts/protocol_check.py"

external_database="${DATABASE_URL:+yes}"
work="$(mktemp -d /tmp/pgmodel-protocol-check-XXXXXX)"
db="pgmodel_protocol_check_$$_$RANDOM"
db_created=""
server_pids=()
started_cluster=0

# The set-up's psql: the cluster's superuser over the private socket on the embedded cluster, else
# DATABASE_URL's own role (it needs CREATEDB, which lib.sh gives the embedded cluster's role as well).
admin_sql() {
    if [ -n "$external_database" ]; then
        psql -X -q -v ON_ERROR_STOP=1 -d "$DATABASE_URL" "$@"
    else
        pgm_psql_admin "$@"
    fi
}

cleanup() {
    local rc=$? pid waited
    trap - EXIT INT TERM
    for pid in "${server_pids[@]}"; do
        kill -TERM "$pid" 2>/dev/null || true
    done
    # Graceful stop (--shutdown-grace 2 below); a service still there after 15 s is killed.
    for pid in "${server_pids[@]}"; do
        waited=0
        while kill -0 "$pid" 2>/dev/null && [ "$waited" -lt 150 ]; do
            sleep 0.1
            waited=$((waited + 1))
        done
        if kill -0 "$pid" 2>/dev/null; then
            pgm_log "service $pid did not stop within 15 s; killing it"
            kill -KILL "$pid" 2>/dev/null || true
        fi
        wait "$pid" 2>/dev/null || true
    done
    if [ -n "$db_created" ]; then
        admin_sql -c "DROP DATABASE IF EXISTS \"$db\" WITH (FORCE)" >/dev/null 2>&1 \
            || pgm_log "warning: could not drop database $db"
    fi
    if [ "$started_cluster" = 1 ] && [ "${CI:-}" = true ]; then
        pgm_stop_cluster || true
    fi
    rm -rf "$work"
    exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# The cluster test.sh and run.sh use (started if it is not running), or DATABASE_URL's server.
pgm_setup
started_cluster="$PGM_STARTED"

# The same server and role, another database: postgres://user:pw@host:port/<db>?params
url="$(printf '%s' "$DATABASE_URL" | sed -E "s#^([a-z]+://[^/]*)(/[^?]*)?#\1/$db#")"
if [ -n "$external_database" ]; then
    admin_sql -c "CREATE DATABASE \"$db\""
else
    admin_sql -c "CREATE DATABASE \"$db\" OWNER \"$PGM_ROLE\""
fi
db_created=yes
pgm_log "fresh database $db"

# One password for every user of this run, handed to the Python script in the environment.
PGMODEL_PASSWORD="$(python3 -c 'import secrets; print(secrets.token_urlsafe(18))')"
export PGMODEL_PASSWORD
unset PGMODEL_PASSWORD2 PGMODEL_PASSWORD3 PGMODEL_ADMIN_PASSWORD
for user in alice bob carol; do
    printf '%s\n' "$PGMODEL_PASSWORD" | "$BIN" user add "$user" --password-stdin --database-url "$url" >/dev/null
done
printf '%s\n' "$PGMODEL_PASSWORD" | "$BIN" user add root --admin --password-stdin --database-url "$url" >/dev/null

# Free ports, chosen by the kernel (all four held at once, so they differ).
read -r port limits_port tls_port proxy_port < <(python3 - <<'EOF'
import socket
socks = [socket.socket() for _ in range(4)]
for s in socks:
    s.bind(("127.0.0.1", 0))
print(*(s.getsockname()[1] for s in socks))
EOF
)

# start NAME PORT ARGS...: a service in the background, its output in $work/NAME.log
start() {
    local name="$1" p="$2"
    shift 2
    "$BIN" serve --host 127.0.0.1 --port "$p" --database-url "$url" --shutdown-grace 2 "$@" \
        >"$work/$name.log" 2>&1 &
    server_pids+=("$!")
    eval "${name}_pid=$!"
}

# wait_ready NAME PORT PID [PREFIX]: until the service answers a line on PORT (any line: the TLS service
# answers plain text with tls_required), sent after PREFIX (a PROXY header for a service that trusts this
# host as a proxy), at most 60 s; fails at once if the process exits.
wait_ready() {
    local name="$1" p="$2" pid="$3" prefix="${4:-}" deadline=$((SECONDS + 60))
    while :; do
        if ! kill -0 "$pid" 2>/dev/null; then
            tail -n 30 "$work/$name.log" >&2
            pgm_die "the $name service exited before answering on port $p"
        fi
        if python3 - "$p" "$prefix" <<'EOF' 2>/dev/null; then
import socket, sys
with socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=2) as s:
    s.sendall(sys.argv[2].encode().replace(b"\\r\\n", b"\r\n") + b'{"id":0,"op":"ping"}\n')
    s.settimeout(5)
    data = b""
    while b"\n" not in data:
        chunk = s.recv(4096)
        if not chunk:
            sys.exit(1)
        data += chunk
EOF
            return 0
        fi
        if [ "$SECONDS" -ge "$deadline" ]; then
            tail -n 30 "$work/$name.log" >&2
            pgm_die "the $name service did not answer on port $p within 60 s"
        fi
        sleep 0.2
    done
}

start main "$port"
start limits "$limits_port" --max-connections 3 --max-response-rows 2 --max-response-bytes 4096 \
    --idle-timeout 3 --max-line-bytes 1000 --max-save-bytes 3000 --max-history-transactions 2
start proxy "$proxy_port" --trusted-proxy 127.0.0.1
tls_args=()
if command -v openssl >/dev/null 2>&1 \
    && openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 2 -subj /CN=localhost \
        -addext "subjectAltName=DNS:localhost,IP:127.0.0.1" -keyout "$work/tls.key" -out "$work/tls.pem" \
        >/dev/null 2>&1; then
    start tls "$tls_port" --tls-certificate "$work/tls.pem" --tls-key "$work/tls.key"
    tls_args=(--tls-port "$tls_port")
else
    pgm_log "no openssl: skipping the TLS checks"
fi
# shellcheck disable=SC2154  # set by start's eval
wait_ready main "$port" "$main_pid"
# shellcheck disable=SC2154
wait_ready limits "$limits_port" "$limits_pid"
# shellcheck disable=SC2154
wait_ready proxy "$proxy_port" "$proxy_pid" 'PROXY UNKNOWN\r\n'
if [ "${#tls_args[@]}" -gt 0 ]; then
    # shellcheck disable=SC2154
    wait_ready tls "$tls_port" "$tls_pid"
fi

pgm_log "services on 127.0.0.1:$port (main), :$limits_port (limits), :$proxy_port (proxy)${tls_args:+, :$tls_port (TLS)}; database $db"
set +e
python3 scripts/protocol_check.py --host 127.0.0.1 --port "$port" --limits-port "$limits_port" --proxy-port "$proxy_port" "${tls_args[@]}" \
    --user alice --user2 bob --user3 carol --admin-user root
rc=$?
set -e
if [ "$rc" -ne 0 ]; then
    for name in main limits proxy tls; do
        [ -s "$work/$name.log" ] || continue
        echo "== last lines of the $name service's log"
        tail -n 20 "$work/$name.log"
    done
fi
exit "$rc"
