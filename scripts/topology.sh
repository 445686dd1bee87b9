#!/usr/bin/env bash
# The scaled-out system of docker-compose.yml, without Docker, on this machine:
#
#   PostgreSQL (the embedded cluster, or DATABASE_URL)
#     ├─ a streaming standby (scripts/standby.sh)                    reads that have caught up
#     └─ PgBouncer in transaction mode                               every service connection
#   two `pgmodel serve` instances, each LISTENing on PostgreSQL directly
#   HAProxy in front of both, speaking the PROXY protocol to them     what clients connect to
#
#   scripts/topology.sh start [DIR]    start it all (DIR default /tmp/pgm-topo); prints the address to use
#   scripts/topology.sh stop [DIR]     stop it all and remove DIR
#   scripts/topology.sh status [DIR]   which parts run, where
#
#   PGMODEL_BIN             the pgmodel executable (default .build/release/pgmodel, else .build/debug/pgmodel)
#   PGMODEL_TOPOLOGY_PORT   HAProxy's port (default 7440); the instances take the next two, and their
#                           metrics and health endpoints (/metrics, /health/ready) base+11 and base+12
#   PGMODEL_TOPOLOGY_STANDBY_PORT  the standby's port (default 55440); 0 starts none (a DATABASE_URL whose
#                           cluster has no unix socket on this machine needs 0: its standbys are its own)
set -euo pipefail

# shellcheck source=scripts/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

usage() {
    sed -n '2,19s/^# \{0,1\}//p' "${BASH_SOURCE[0]}" >&2
    exit 2
}

cmd="${1:-}"
dir="${2:-/tmp/pgm-topo}"
case "$dir" in /tmp/?*) ;; *) pgm_die "DIR must be under /tmp (it holds unix sockets, whose paths must stay short)" ;; esac
base="${PGMODEL_TOPOLOGY_PORT:-7440}"
standby_port="${PGMODEL_TOPOLOGY_STANDBY_PORT:-55440}"
case "$base$standby_port" in *[!0-9]*) pgm_die "PGMODEL_TOPOLOGY_PORT and PGMODEL_TOPOLOGY_STANDBY_PORT are port numbers" ;; esac

# Stops the process whose pid is in FILE, politely first.
stop_pid_file() {
    local file="$1" pid wait
    [ -s "$file" ] || return 0
    pid="$(cat "$file")"
    case "$pid" in *[!0-9]* | "") return 0 ;; esac
    kill "$pid" 2>/dev/null || return 0
    for wait in $(seq 1 100); do
        kill -0 "$pid" 2>/dev/null || return 0
        sleep 0.1
    done
    kill -9 "$pid" 2>/dev/null || true
}

# Waits until 127.0.0.1:PORT accepts connections, or fails naming LOG.
wait_for_port() {
    local port="$1" what="$2" log="$3" wait
    for wait in $(seq 1 300); do
        pgm_port_busy "$port" && return 0
        sleep 0.1
    done
    pgm_die "$what did not start listening on 127.0.0.1:$port; see $log"
}

start() {
    local bin primary direct pooled replica_option="" haproxy_bin instance port
    [ ! -e "$dir/topology" ] || pgm_die "$dir already holds a topology (scripts/topology.sh stop $dir first)"
    for port in "$base" $((base + 1)) $((base + 2)) $((base + 11)) $((base + 12)); do
        ! pgm_port_busy "$port" || pgm_die "127.0.0.1:$port is in use; set PGMODEL_TOPOLOGY_PORT to another base port"
    done
    bin="${PGMODEL_BIN:-}"
    if [ -z "$bin" ]; then
        if [ -x "$PGM_REPO/.build/release/pgmodel" ]; then bin="$PGM_REPO/.build/release/pgmodel"; else bin="$PGM_REPO/.build/debug/pgmodel"; fi
    fi
    [ -x "$bin" ] || pgm_die "no pgmodel executable at $bin: run 'swift build' (or set PGMODEL_BIN)"
    pgm_ensure_test_programs
    haproxy_bin="$(command -v haproxy 2>/dev/null || echo /usr/sbin/haproxy)"
    [ -x "$haproxy_bin" ] || pgm_die "haproxy is not installed (apt-get install -y haproxy)"

    pgm_setup
    primary="$DATABASE_URL"
    mkdir -p "$dir"
    chmod 755 "$dir"
    : >"$dir/topology"

    # Reads that have caught up go to the standby, made from the primary's cluster over its unix socket
    # (scripts/standby.sh): a PostgreSQL elsewhere brings its own standbys, and PORT 0 here.
    if [ "$standby_port" != 0 ]; then
        ! pgm_port_busy "$standby_port" || pgm_die "127.0.0.1:$standby_port is in use; set PGMODEL_TOPOLOGY_STANDBY_PORT to another port (or 0)"
        echo standby >>"$dir/topology"
        bash "$PGM_REPO/scripts/standby.sh" start "$dir/standby" "$standby_port" "$primary" >/dev/null
        replica_option="&pgmodel_replicas=127.0.0.1:$standby_port"
    fi

    # Every request's transaction goes through PgBouncer; LISTEN and migrations need a session, so
    # they go to PostgreSQL itself (the direct URL).
    pooled="$(pgm_pgbouncer_start "$dir/pgbouncer" "$primary" "${PGMODEL_TOPOLOGY_POOL_SIZE:-8}")"
    echo pgbouncer >>"$dir/topology"
    direct="$primary"

    # HAProxy connects from 127.0.0.2, the one address the instances take PROXY headers from: a client
    # connecting to an instance directly (an admin's tool) still talks plain protocol from 127.0.0.1.
    for instance in 1 2; do
        port=$((base + instance))
        (pgm_close_inherited_fds && DATABASE_URL="$pooled$replica_option" PGMODEL_DIRECT_DATABASE_URL="$direct" \
            PGMODEL_TRUSTED_PROXIES=127.0.0.2 exec "$bin" serve --host 127.0.0.1 --port "$port" --metrics-port $((base + 10 + instance))) \
            </dev/null >>"$dir/server$instance.log" 2>&1 &
        echo $! >"$dir/server$instance.pid"
        echo "server$instance" >>"$dir/topology"
    done
    for instance in 1 2; do
        wait_for_port $((base + instance)) "pgmodel serve ($instance)" "$dir/server$instance.log"
    done

    cat >"$dir/haproxy.cfg" <<EOF
# Written by scripts/topology.sh: TCP load balancing over the two instances, as docker-compose.yml's haproxy.
global
  maxconn 4096
defaults
  mode tcp
  timeout connect 5s
  # Subscribed clients may stay silent for hours: the service's own idle timeout decides, not HAProxy's.
  timeout client 12h
  timeout server 12h
  option tcpka
frontend pgmodel
  bind 127.0.0.1:$base
  default_backend instances
backend instances
  balance leastconn
  # An instance takes connections while it is ready: database reachable, schema loaded, listener connected.
  option httpchk GET /health/ready
  http-check expect status 200
  server server1 127.0.0.1:$((base + 1)) send-proxy-v2 source 127.0.0.2 check port $((base + 11)) inter 2s
  server server2 127.0.0.1:$((base + 2)) send-proxy-v2 source 127.0.0.2 check port $((base + 12)) inter 2s
EOF
    (pgm_close_inherited_fds && exec "$haproxy_bin" -f "$dir/haproxy.cfg" -db) </dev/null >>"$dir/haproxy.log" 2>&1 &
    echo $! >"$dir/haproxy.pid"
    echo haproxy >>"$dir/topology"
    wait_for_port "$base" haproxy "$dir/haproxy.log"

    pgm_log "pgmodel through HAProxy: 127.0.0.1:$base (instances 127.0.0.1:$((base + 1)) and :$((base + 2)))"
    pgm_log "PgBouncer: $(pgm_redact "$pooled")"
    [ -z "$replica_option" ] || pgm_log "standby: 127.0.0.1:$standby_port"
    echo "127.0.0.1:$base"
}

stop() {
    [ -f "$dir/topology" ] || pgm_die "$dir holds no topology of scripts/topology.sh"
    stop_pid_file "$dir/haproxy.pid"
    stop_pid_file "$dir/server1.pid"
    stop_pid_file "$dir/server2.pid"
    if [ -f "$dir/pgbouncer/pgbouncer.ini" ]; then pgm_pgbouncer_stop "$dir/pgbouncer"; fi
    if grep -qx standby "$dir/topology"; then
        bash "$PGM_REPO/scripts/standby.sh" stop "$dir/standby" || true
    fi
    rm -rf "$dir"
}

status() {
    local part pid
    [ -f "$dir/topology" ] || { echo "no topology in $dir"; return 0; }
    while read -r part; do
        case "$part" in
            pgbouncer) pid="$(cat "$dir/pgbouncer/pgbouncer.pid" 2>/dev/null || true)" ;;
            standby) pid="$(pgm_as_owner head -1 "$dir/standby/postmaster.pid" 2>/dev/null || true)" ;;
            *) pid="$(cat "$dir/$part.pid" 2>/dev/null || true)" ;;
        esac
        if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; then echo "$part: running (pid $pid)"; else echo "$part: not running"; fi
    done <"$dir/topology"
}

case "$cmd" in
    start) start ;;
    stop) stop ;;
    status) status ;;
    *) usage ;;
esac
