# shellcheck shell=bash
# Shared database set-up for scripts/run.sh, scripts/test.sh and scripts/pg.sh.
# Source it, then call `pgm_setup`. Sourcing alone changes nothing on the machine.
#
# With DATABASE_URL set, that server is used as is. Without it, a private PostgreSQL cluster
# ("the embedded cluster") lives in $REPO/.pgdata and listens on 127.0.0.1:$PGMODEL_PG_PORT.
#
# After pgm_setup these are exported:
#   DATABASE_URL               postgres://pgmodel:pgmodel@127.0.0.1:55432/pgmodel ($PGMODEL_LOCAL_DATABASE, if set)
#   PGMODEL_TEST_DATABASE_URL  postgres://pgmodel:pgmodel@127.0.0.1:55432/pgmodel_test
#   PGMODEL_TEST_PG_SSLROOTCERT  the embedded cluster's TLS certificate (not with DATABASE_URL)

PGM_REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd -P)"
# One hash of the checkout's real path names everything this checkout owns outside of it,
# so two clones on one machine never share a socket directory or a fallback data directory.
PGM_HASH="$(printf '%s' "$PGM_REPO" | sha256sum | cut -c1-8)"
PGM_DEFAULT_PORT=55432
PGM_ROLE=pgmodel
PGM_PASSWORD=pgmodel
# The database commands without a URL use; PGMODEL_LOCAL_DATABASE names another (the README check runs
# the tour in a database of its own, so it never meets what a developer made by hand).
PGM_DB="${PGMODEL_LOCAL_DATABASE:-pgmodel}"
case "$PGM_DB" in *[!a-z0-9_]* | "") echo "[pgmodel] error: PGMODEL_LOCAL_DATABASE must be lowercase letters, digits and _" >&2; exit 1 ;; esac
PGM_TEST_DB=pgmodel_test
PGM_MARKER=PGMODEL_CLUSTER
PGM_CLUSTERS_ROOT=/var/lib/pgmodel-clusters
# Unix socket paths are limited to 107 bytes and CI's checkout path is unknown: keep it in /tmp.
PGM_SOCKDIR="/tmp/pgm-$PGM_HASH"
PGM_LOCK="/tmp/pgm-$PGM_HASH.lock"
PGM_LINK="$PGM_REPO/.pgdata"
# Set to 1 when pgm_setup started the server itself, so a caller can stop it again.
# shellcheck disable=SC2034
PGM_STARTED=0
PGM_BIN=""
PGM_LOCK_FD=""

pgm_log() { printf '[pgmodel] %s\n' "$*" >&2; }
pgm_die() { printf '[pgmodel] error: %s\n' "$*" >&2; exit 1; }

pgm_is_root() { [ "$(id -u)" -eq 0 ]; }

# The server refuses to run as root, so when we are root the cluster belongs to `postgres`;
# otherwise it belongs to whoever runs the scripts. `cd /` because postgres may not be able
# to enter the caller's working directory (a checkout under /root).
pgm_as_owner() {
    if pgm_is_root; then
        (cd / && runuser -u postgres -- "$@")
    else
        "$@"
    fi
}

pgm_owner_name() {
    if pgm_is_root; then echo postgres; else id -un; fi
}

pgm_apt_install() {
    local sudo=()
    if ! pgm_is_root; then
        if ! command -v sudo >/dev/null 2>&1 || ! sudo -n true 2>/dev/null; then
            pgm_die "missing packages ($*); install them as root: apt-get install -y $*"
        fi
        sudo=(sudo -n)
    fi
    pgm_log "installing $* with apt-get"
    "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update -qq
    "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "$@" >/dev/null
}

# Newest installed server, unless the data directory was made by a specific major version.
pgm_find_bin() {
    local want="${1:-}" dir
    if [ -n "$want" ]; then
        dir="/usr/lib/postgresql/$want/bin"
        [ -x "$dir/postgres" ] && { echo "$dir"; return 0; }
        return 1
    fi
    dir="$(find /usr/lib/postgresql -mindepth 2 -maxdepth 2 -name bin -type d 2>/dev/null | sort -V | tail -n 1)"
    [ -n "$dir" ] && [ -x "$dir/initdb" ] && [ -x "$dir/pg_ctl" ] || return 1
    echo "$dir"
}

pgm_ensure_server_packages() {
    local bin ver
    if ! bin="$(pgm_find_bin)"; then
        pgm_apt_install postgresql postgresql-contrib
        bin="$(pgm_find_bin)" || pgm_die "apt-get installed postgresql but no /usr/lib/postgresql/*/bin/initdb exists"
    fi
    ver="$(basename "$(dirname "$bin")")"
    # pgcrypto hashes passwords and unaccent folds diacritics; both ship in contrib.
    if [ ! -f "/usr/share/postgresql/$ver/extension/pgcrypto.control" ] \
        || [ ! -f "/usr/share/postgresql/$ver/extension/unaccent.control" ]; then
        pgm_apt_install postgresql-contrib
    fi
}

# Programs the tests run for real besides PostgreSQL: HAProxy (the PROXY protocol tests put the real
# balancer in front of the service) and PgBouncer (the pooling tests run the service behind it in
# transaction mode).
pgm_ensure_test_programs() {
    command -v haproxy >/dev/null 2>&1 || [ -x /usr/sbin/haproxy ] || pgm_apt_install haproxy
    command -v pgbouncer >/dev/null 2>&1 || [ -x /usr/sbin/pgbouncer ] || pgm_apt_install pgbouncer
}

# Closes every descriptor above standard error in the calling (sub)shell.
pgm_close_inherited_fds() {
    local fd
    for fd in $(ls /proc/"$BASHPID"/fd 2>/dev/null); do
        [ "$fd" -gt 2 ] && eval "exec $fd>&-" 2>/dev/null
    done
    return 0
}

pgm_pgbouncer_bin() {
    command -v pgbouncer 2>/dev/null || { [ -x /usr/sbin/pgbouncer ] && echo /usr/sbin/pgbouncer; }
}

# Starts a PgBouncer in transaction mode in front of the PostgreSQL database UPSTREAM_URL
# (postgres://user:password@host:port/database), for tests only: its files, pid and unix socket live in
# DIR (short, under /tmp), it listens on 127.0.0.1 at a free port, lets in only UPSTREAM_URL's role with
# UPSTREAM_URL's password (SCRAM) and opens at most POOL_SIZE (default 3) server connections, so that
# many clients' transactions take turns on few sessions. Prints the URL that reaches the database
# through it. The service logs in as one role and switches to pgmodel_app per transaction, so that one
# role is all PgBouncer needs to know.
#   pgm_pgbouncer_start /tmp/pgb-1 postgres://pgmodel:pgmodel@127.0.0.1:55432/pgmodel_test 2
pgm_pgbouncer_start() {
    local dir="$1" upstream="$2" pool="${3:-3}" bin owner rest user password host port database try listen wait
    bin="$(pgm_pgbouncer_bin)" || pgm_die "pgbouncer is not installed (apt-get install -y pgbouncer)"
    rest="${upstream#*://}"
    user="${rest%%:*}"; rest="${rest#*:}"
    password="${rest%%@*}"; rest="${rest#*@}"
    host="${rest%%:*}"; rest="${rest#*:}"
    port="${rest%%/*}"; database="${rest#*/}"; database="${database%%\?*}"
    case "$user$password$database" in *[!A-Za-z0-9_]*) pgm_die "pgm_pgbouncer_start: user, password and database must be plain words" ;; esac
    case "$port" in *[!0-9]* | "") pgm_die "pgm_pgbouncer_start: the upstream URL needs an explicit port" ;; esac
    case "$pool" in *[!0-9]* | "") pgm_die "pgm_pgbouncer_start: the pool size is a number" ;; esac
    owner="$(pgm_owner_name)"
    [ ! -e "$dir/pgbouncer.pid" ] || pgm_die "$dir already holds a PgBouncer (pgm_pgbouncer_stop $dir first)"
    install -d -m 700 -o "$owner" -g "$(id -gn "$owner")" "$dir"
    printf '"%s" "%s"\n' "$user" "$password" | pgm_as_owner tee "$dir/userlist.txt" >/dev/null
    pgm_as_owner chmod 600 "$dir/userlist.txt"
    # Two tests may start one at once: a port taken meanwhile makes PgBouncer exit, and another is tried.
    for try in $(seq 1 20); do
        listen=$((20000 + RANDOM % 30000))
        pgm_port_busy "$listen" && continue
        pgm_as_owner tee "$dir/pgbouncer.ini" >/dev/null <<EOF
; Written by scripts/lib.sh (pgm_pgbouncer_start) for tests.
[databases]
; search_path is a startup parameter PgBouncer 1.18 cannot pass on: every server connection sets
; PGModel's path itself (the same for every client, so it carries nothing of one client to another).
$database = host=$host port=$port dbname=$database connect_query='SET search_path = "\$user", public'

[pgbouncer]
listen_addr = 127.0.0.1
listen_port = $listen
unix_socket_dir = $dir
auth_type = scram-sha-256
auth_file = $dir/userlist.txt
pool_mode = transaction
default_pool_size = $pool
min_pool_size = 0
reserve_pool_size = 0
max_client_conn = 500
; Transaction mode: PGModel leaves nothing in a server connection's session, so there is nothing to reset.
server_reset_query =
ignore_startup_parameters = extra_float_digits,options,search_path
query_wait_timeout = 60
pidfile = $dir/pgbouncer.pid
logfile = $dir/pgbouncer.log
EOF
        # The daemon must not keep the caller's descriptors: a test runner waiting for this script's
        # output or exit would wait for PgBouncer's.
        (pgm_close_inherited_fds && pgm_as_owner "$bin" -q -d "$dir/pgbouncer.ini") </dev/null >/dev/null 2>>"$dir/start.err" || continue
        for wait in $(seq 1 50); do
            pgm_port_busy "$listen" && break
            sleep 0.1
        done
        if pgm_port_busy "$listen" && [ -s "$dir/pgbouncer.pid" ]; then
            printf 'postgres://%s:%s@127.0.0.1:%s/%s?pgmodel_pooling=transaction\n' "$user" "$password" "$listen" "$database"
            return 0
        fi
    done
    pgm_die "PgBouncer did not start; see $dir/pgbouncer.log"
}

# Stops the PgBouncer pgm_pgbouncer_start started in DIR (by its pid file) and removes DIR.
pgm_pgbouncer_stop() {
    local dir="$1" pid wait
    [ -f "$dir/pgbouncer.ini" ] || pgm_die "$dir holds no PgBouncer of pgm_pgbouncer_start"
    if [ -s "$dir/pgbouncer.pid" ]; then
        pid="$(cat "$dir/pgbouncer.pid")"
        case "$pid" in
            *[!0-9]* | "") ;;
            *)
                kill "$pid" 2>/dev/null || true
                for wait in $(seq 1 50); do
                    kill -0 "$pid" 2>/dev/null || break
                    sleep 0.1
                done
                kill -9 "$pid" 2>/dev/null || true
                ;;
        esac
    fi
    rm -rf "$dir"
}

# Starts a streaming standby of the PostgreSQL cluster behind PRIMARY_URL, for tests only: a
# pg_basebackup (-R, WAL streamed alongside) into DIR (short, under /tmp: it also holds the standby's unix
# socket), started on 127.0.0.1:PORT as a hot standby. The backup and the replication connection use the
# cluster owner's superuser over the primary's unix socket (peer authentication on `local replication`,
# which initdb's default pg_hba.conf allows), so PRIMARY_URL's role needs no REPLICATION attribute.
# Returns once the standby answers pg_is_in_recovery(). The standby has the primary's roles, so
# PRIMARY_URL with PORT in place of the primary's port reaches the same database on it.
#   pgm_standby_start /tmp/pgr-1 55501 postgres://pgmodel:pgmodel@127.0.0.1:55432/pgmodel_test
pgm_standby_start() {
    local dir="$1" port="$2" primary="$3" bin owner socket primary_port wait state
    case "$port" in *[!0-9]* | "") pgm_die "pgm_standby_start: the port is a number" ;; esac
    bin="$(pgm_find_bin)" || pgm_die "no PostgreSQL server programs (pg_basebackup, pg_ctl) are installed"
    owner="$(pgm_owner_name)"
    [ ! -e "$dir/postmaster.pid" ] || pgm_die "$dir already holds a running standby (pgm_standby_stop $dir first)"
    pgm_port_busy "$port" && pgm_die "port $port is already in use"
    # The primary's port, asked of the primary itself, and its unix socket by that port: only a superuser
    # may read unix_socket_directories. PGMODEL_PRIMARY_SOCKET_DIR names the directory outright.
    primary_port="$("$bin/psql" -X -A -t -d "$primary" -c "SHOW port")" || pgm_die "cannot reach the primary at $(pgm_redact "$primary")"
    socket="${PGMODEL_PRIMARY_SOCKET_DIR:-}"
    if [ -z "$socket" ]; then
        socket="$(find /tmp /var/run/postgresql -maxdepth 2 -type s -name ".s.PGSQL.$primary_port" -user "$owner" 2>/dev/null | head -n 1)"
        socket="${socket%/*}"
    fi
    [ -n "$socket" ] && [ -S "$socket/.s.PGSQL.$primary_port" ] \
        || pgm_die "no unix socket of the primary (port $primary_port) owned by $owner; set PGMODEL_PRIMARY_SOCKET_DIR"
    rm -rf "$dir"
    install -d -m 700 -o "$owner" -g "$(id -gn "$owner")" "$dir"
    pgm_as_owner "$bin/pg_basebackup" -h "$socket" -p "$primary_port" -U "$owner" -D "$dir" -R -X stream -c fast --no-sync >"/tmp/pgm-standby-$port.log" 2>&1 \
        || { cat "/tmp/pgm-standby-$port.log" >&2; pgm_die "pg_basebackup failed"; }
    rm -f "/tmp/pgm-standby-$port.log"
    pgm_as_owner rm -f "$dir/PGMODEL_CLUSTER" "$dir/postmaster.opts" "$dir/postgresql.log"
    # The primary's pgmodel.conf came with the backup; the standby keeps its settings (a hot standby
    # needs max_connections at least the primary's) but listens elsewhere.
    pgm_as_owner tee "$dir/pgmodel.conf" >/dev/null <<EOF
# Written by scripts/lib.sh (pgm_standby_start) for tests.
port = $port
listen_addresses = '127.0.0.1'
unix_socket_directories = '$dir'
max_connections = 1000
password_encryption = 'scram-sha-256'
log_timezone = 'UTC'
timezone = 'UTC'
hot_standby = on
hot_standby_feedback = on
# A throwaway test standby: without fsync it starts without syncing the whole copied data directory
# first, which takes a minute on a developer's cluster of many test schemas.
fsync = off
EOF
    (pgm_close_inherited_fds && pgm_as_owner "$bin/pg_ctl" -D "$dir" -l "$dir/postgresql.log" -w -t 60 start) </dev/null >/dev/null 2>&1 \
        || { pgm_as_owner tail -n 30 "$dir/postgresql.log" >&2; pgm_die "the standby did not start"; }
    for wait in $(seq 1 100); do
        state="$(pgm_as_owner "$bin/psql" -X -A -t -h "$dir" -p "$port" -d postgres -c "SELECT pg_is_in_recovery()" 2>/dev/null || true)"
        [ "$state" = "t" ] && return 0
        sleep 0.1
    done
    pgm_die "the standby in $dir does not answer as a standby; see $dir/postgresql.log"
}

# Stops the standby pgm_standby_start started in DIR and removes DIR. Nothing to stop is no error.
pgm_standby_stop() {
    local dir="$1" bin
    bin="$(pgm_find_bin)" || pgm_die "no PostgreSQL server programs are installed"
    [ -d "$dir" ] || return 0
    [ -f "$dir/standby.signal" ] || pgm_die "$dir holds no standby of pgm_standby_start"
    if [ -e "$dir/postmaster.pid" ]; then
        (pgm_close_inherited_fds && pgm_as_owner "$bin/pg_ctl" -D "$dir" -m fast -w -t 60 stop) </dev/null >/dev/null 2>&1 || true
    fi
    rm -rf "$dir"
}

# Pauses (pause) or resumes (resume) WAL replay on the standby in DIR, as the cluster owner over its
# socket: a lagging standby, on demand.
pgm_standby_replay() {
    local dir="$1" what="$2" bin port
    bin="$(pgm_find_bin)" || pgm_die "no PostgreSQL server programs are installed"
    [ -s "$dir/postmaster.pid" ] || pgm_die "$dir holds no running standby"
    port="$(pgm_as_owner sed -n 4p "$dir/postmaster.pid")"
    case "$what" in
        pause) pgm_as_owner "$bin/psql" -X -A -t -q -h "$dir" -p "$port" -d postgres -c "SELECT pg_wal_replay_pause()" >/dev/null ;;
        resume) pgm_as_owner "$bin/psql" -X -A -t -q -h "$dir" -p "$port" -d postgres -c "SELECT pg_wal_replay_resume()" >/dev/null ;;
        *) pgm_die "pgm_standby_replay: pause or resume" ;;
    esac
}

pgm_ensure_client() {
    command -v psql >/dev/null 2>&1 || pgm_apt_install postgresql-client
}

pgm_port_busy() {
    (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null
}

# Decides where the data directory is without creating anything. Sets PGM_DATA.
pgm_resolve_datadir() {
    if [ -L "$PGM_LINK" ]; then
        PGM_DATA="$(readlink -f "$PGM_LINK" || true)"
        [ -n "$PGM_DATA" ] || PGM_DATA="$(readlink "$PGM_LINK")"
    elif [ -e "$PGM_LINK" ]; then
        [ -d "$PGM_LINK" ] || pgm_die "$PGM_LINK exists and is not a directory"
        PGM_DATA="$PGM_LINK"
    elif pgm_is_root && ! runuser -u postgres -- test -x "$PGM_REPO" 2>/dev/null; then
        PGM_DATA="$PGM_CLUSTERS_ROOT/$PGM_HASH"
    else
        PGM_DATA="$PGM_LINK"
    fi
}

pgm_has_marker() { [ -f "$PGM_DATA/$PGM_MARKER" ]; }

pgm_require_marker() {
    pgm_has_marker || pgm_die "refusing to touch $PGM_DATA: it has no $PGM_MARKER marker, so PGModel did not create it.
  Move it away (or delete it) to get a fresh embedded cluster, or set DATABASE_URL to use another server."
}

# Creates the data directory (and the fallback symlink) and runs initdb, unless one exists.
pgm_init_cluster() {
    local owner
    owner="$(pgm_owner_name)"
    if [ "$PGM_DATA" != "$PGM_LINK" ]; then
        case "$PGM_DATA" in
            "$PGM_CLUSTERS_ROOT"/*) ;;
            *) [ -d "$PGM_DATA" ] || pgm_die "$PGM_LINK points to $PGM_DATA, which does not exist; remove the link" ;;
        esac
        if [ ! -d "$PGM_DATA" ]; then
            mkdir -p "$PGM_CLUSTERS_ROOT"
            chmod 755 "$PGM_CLUSTERS_ROOT"
            install -d -m 700 -o "$owner" -g "$(id -gn "$owner")" "$PGM_DATA"
        fi
        if [ ! -L "$PGM_LINK" ]; then
            ln -s "$PGM_DATA" "$PGM_LINK"
            # A `/.pgdata/` ignore pattern matches directories only, not this symlink; keep
            # it out of `git add -A` in this clone.
            if [ -d "$PGM_REPO/.git/info" ] && ! grep -qx '/.pgdata' "$PGM_REPO/.git/info/exclude" 2>/dev/null; then
                echo '/.pgdata' >>"$PGM_REPO/.git/info/exclude"
            fi
            pgm_log "user $owner cannot reach $PGM_REPO, so the cluster lives in $PGM_DATA"
            pgm_log "  ($PGM_LINK is a symlink to it)"
        fi
    elif [ ! -d "$PGM_DATA" ]; then
        install -d -m 700 -o "$owner" -g "$(id -gn "$owner")" "$PGM_DATA"
    fi

    if [ -n "$(ls -A "$PGM_DATA" 2>/dev/null)" ]; then
        pgm_require_marker
        return 0
    fi
    if pgm_is_root && ! runuser -u postgres -- test -w "$PGM_DATA"; then
        chown postgres: "$PGM_DATA"
        chmod 700 "$PGM_DATA"
    fi

    pgm_log "creating the embedded cluster in $PGM_DATA"
    local out
    # Peer authentication on the socket lets the cluster owner administer without a stored
    # password; every TCP connection, the app's included, must present a SCRAM password.
    out="$(pgm_as_owner "$PGM_BIN/initdb" -D "$PGM_DATA" --encoding=UTF8 --locale=C.UTF-8 \
        --auth-local=peer --auth-host=scram-sha-256 2>&1)" \
        || { printf '%s\n' "$out" >&2; pgm_die "initdb failed"; }
    printf "\n# Settings that the PGModel scripts rewrite at every start.\ninclude_if_exists = 'pgmodel.conf'\n" \
        | pgm_as_owner tee -a "$PGM_DATA/postgresql.conf" >/dev/null
    printf 'This PostgreSQL cluster was created by PGModel scripts/lib.sh for %s on %s.\nThe scripts only start or stop a data directory that contains this file.\n' \
        "$PGM_REPO" "$(date -u +%Y-%m-%dT%H:%M:%SZ)" | pgm_as_owner tee "$PGM_DATA/$PGM_MARKER" >/dev/null
}

# The lock descriptor must not leak into the postmaster, or the lock would outlive this script.
pgm_pg_ctl() {
    if [ -n "${PGM_LOCK_FD:-}" ]; then
        pgm_as_owner "$PGM_BIN/pg_ctl" -D "$PGM_DATA" "$@" {PGM_LOCK_FD}>&-
    else
        pgm_as_owner "$PGM_BIN/pg_ctl" -D "$PGM_DATA" "$@"
    fi
}

pgm_is_running() {
    pgm_pg_ctl status >/dev/null 2>&1
}

# postmaster.pid line 4 is the port and line 5 the socket directory of the live server.
pgm_running_port() { pgm_as_owner sed -n 4p "$PGM_DATA/postmaster.pid"; }

pgm_prepare_sockdir() {
    local owner
    owner="$(pgm_owner_name)"
    if [ -e "$PGM_SOCKDIR" ]; then
        # /tmp is shared: never hand our socket to a directory someone else controls.
        if [ -L "$PGM_SOCKDIR" ] || [ ! -d "$PGM_SOCKDIR" ] || [ "$(stat -c %U "$PGM_SOCKDIR")" != "$owner" ]; then
            pgm_die "$PGM_SOCKDIR exists but is not a directory owned by $owner; remove it"
        fi
    else
        install -d -m 755 -o "$owner" -g "$(id -gn "$owner")" "$PGM_SOCKDIR"
    fi
}

pgm_start_cluster() {
    local port="${PGMODEL_PG_PORT:-}" try
    pgm_require_marker
    pgm_as_owner test -w "$PGM_DATA" \
        || pgm_die "user $(pgm_owner_name) cannot write $PGM_DATA; remove $PGM_LINK so the scripts can place the cluster in $PGM_CLUSTERS_ROOT"
    if pgm_is_running; then
        PGM_PORT="$(pgm_running_port)"
        if [ -n "$port" ] && [ "$port" != "$PGM_PORT" ]; then
            pgm_log "warning: the embedded cluster is already running on port $PGM_PORT, not PGMODEL_PG_PORT=$port;"
            pgm_log "  using $PGM_PORT (scripts/pg.sh stop, then run again, to move it)"
        fi
        if [ -S "$PGM_SOCKDIR/.s.PGSQL.$PGM_PORT" ]; then
            pgm_log "embedded cluster already running on 127.0.0.1:$PGM_PORT ($PGM_DATA)"
            return 0
        fi
        # Something cleaned /tmp under a live server; a restart recreates the socket.
        pgm_log "socket $PGM_SOCKDIR is gone; restarting the embedded cluster"
        pgm_prepare_sockdir
        pgm_pg_ctl -l "$PGM_DATA/postgresql.log" -w -t 120 -m fast restart >/dev/null \
            || { pgm_as_owner tail -n 30 "$PGM_DATA/postgresql.log" >&2; pgm_die "could not restart PostgreSQL"; }
        return 0
    fi

    if [ -z "$port" ]; then
        # Another clone's cluster may hold the default port; take the next free one rather than fail.
        port=$PGM_DEFAULT_PORT
        try=0
        while pgm_port_busy "$port"; do
            try=$((try + 1))
            [ "$try" -le 20 ] || pgm_die "ports $PGM_DEFAULT_PORT-$port are all in use; set PGMODEL_PG_PORT"
            port=$((port + 1))
        done
        [ "$port" = "$PGM_DEFAULT_PORT" ] || pgm_log "port $PGM_DEFAULT_PORT is in use; the embedded cluster takes $port"
    elif pgm_port_busy "$port"; then
        pgm_die "PGMODEL_PG_PORT=$port is already in use by another program"
    fi
    PGM_PORT="$port"

    pgm_prepare_sockdir
    pgm_as_owner tee "$PGM_DATA/pgmodel.conf" >/dev/null <<EOF
# Written by scripts/lib.sh at every start; edit lib.sh, not this file.
port = $PGM_PORT
listen_addresses = '127.0.0.1'
unix_socket_directories = '$PGM_SOCKDIR'
max_connections = 1000
password_encryption = 'scram-sha-256'
log_timezone = 'UTC'
timezone = 'UTC'
EOF
    pgm_log "starting the embedded cluster on 127.0.0.1:$PGM_PORT (data: $PGM_DATA, log: $PGM_DATA/postgresql.log)"
    pgm_pg_ctl -l "$PGM_DATA/postgresql.log" -w -t 120 start >/dev/null \
        || { pgm_as_owner tail -n 30 "$PGM_DATA/postgresql.log" >&2; pgm_die "could not start PostgreSQL"; }
    # shellcheck disable=SC2034
    PGM_STARTED=1
}

pgm_stop_cluster() {
    pgm_require_marker
    if pgm_is_running; then
        pgm_pg_ctl -m fast -w -t 120 stop >/dev/null
        pgm_log "stopped the embedded cluster ($PGM_DATA)"
    else
        pgm_log "the embedded cluster is not running ($PGM_DATA)"
    fi
}

# TLS for the embedded cluster, so that sslmode=require and verify-full work against it: a self-signed
# certificate (for localhost and 127.0.0.1) made the first time, then `ssl = on`. Idempotent, and safe on
# a running cluster that other clients share: ALTER SYSTEM and pg_reload_conf() turn TLS on without a
# restart. A public copy of the certificate goes next to the socket, where tests find it
# ($PGMODEL_TEST_PG_SSLROOTCERT) to check verify-full; the key never leaves the data directory.
pgm_enable_ssl() {
    local crt="$PGM_DATA/server.crt" key="$PGM_DATA/server.key" state try
    if ! pgm_as_owner test -s "$crt" || ! pgm_as_owner test -s "$key"; then
        command -v openssl >/dev/null 2>&1 || pgm_apt_install openssl
        pgm_log "creating a self-signed TLS certificate for the embedded cluster ($crt)"
        # umask 077: PostgreSQL refuses a key that others can read.
        # shellcheck disable=SC2016
        pgm_as_owner sh -c 'umask 077 && exec openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 \
            -nodes -days 3650 -subj "/CN=localhost" -addext "subjectAltName=DNS:localhost,IP:127.0.0.1" \
            -keyout "$1" -out "$2"' sh "$key" "$crt" >/dev/null 2>&1 \
            || pgm_die "openssl could not create $crt"
    fi
    state="$(pgm_psql_admin -At -c 'SHOW ssl')"
    if [ "$state" != on ]; then
        pgm_psql_admin -c 'ALTER SYSTEM SET ssl = on' -c 'SELECT pg_reload_conf()' >/dev/null
        # The reload is asynchronous: new sessions see it once the postmaster has read the files.
        for try in $(seq 1 50); do
            state="$(pgm_psql_admin -At -c 'SHOW ssl')"
            [ "$state" = on ] && break
            sleep 0.1
        done
        [ "$state" = on ] || pgm_die "PostgreSQL did not turn ssl on; see $PGM_DATA/postgresql.log"
        pgm_log "TLS is on for the embedded cluster (sslmode=require and verify-full work)"
    fi
    pgm_as_owner cat "$crt" >"$PGM_SOCKDIR/server.crt.$$" && mv -f "$PGM_SOCKDIR/server.crt.$$" "$PGM_SOCKDIR/server.crt"
    chmod 644 "$PGM_SOCKDIR/server.crt"
    PGMODEL_TEST_PG_SSLROOTCERT="$PGM_SOCKDIR/server.crt"
    export PGMODEL_TEST_PG_SSLROOTCERT
}

# psql as the cluster's superuser, over the private socket (peer authentication).
pgm_psql_admin() {
    # NOTICEs (a role already a member of another on a re-run) are not news.
    PGOPTIONS="-c client_min_messages=warning" pgm_as_owner "$PGM_BIN/psql" -X -q -v ON_ERROR_STOP=1 -h "$PGM_SOCKDIR" -p "$PGM_PORT" -d postgres "$@"
}

pgm_create_role_and_dbs() {
    # The server must stay subject to row-level security: never SUPERUSER or BYPASSRLS.
    # CREATEDB lets tests make throwaway databases; it grants no access to other data.
    pgm_psql_admin -f - <<EOF >/dev/null
DO \$\$
BEGIN
  IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = '$PGM_ROLE') THEN
    CREATE ROLE $PGM_ROLE LOGIN;
  END IF;
END
\$\$;
ALTER ROLE $PGM_ROLE WITH LOGIN NOSUPERUSER NOBYPASSRLS NOREPLICATION CREATEDB PASSWORD '$PGM_PASSWORD';
-- The role shares its name with the system schema, so the default search path ("\$user", public)
-- would put pgmodel's own tables beside the model tables in psql listings. PGModel's own sessions ask
-- for the default path when they connect.
ALTER ROLE $PGM_ROLE SET search_path = public;
-- The role every service request runs as (set on the pooled connection): row-level security decides its rows.
DO \$\$
BEGIN
  IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = 'pgmodel_app') THEN
    CREATE ROLE pgmodel_app NOLOGIN NOBYPASSRLS;
  END IF;
END
\$\$;
GRANT pgmodel_app TO $PGM_ROLE;
-- The role an admin's requests run as: a member of pgmodel_app whose policies show every row.
DO \$\$
BEGIN
  IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = 'pgmodel_admin') THEN
    CREATE ROLE pgmodel_admin NOLOGIN NOBYPASSRLS;
  END IF;
END
\$\$;
GRANT pgmodel_app TO pgmodel_admin;
GRANT pgmodel_admin TO $PGM_ROLE;
-- Lets the service keep passwords out of the statement logs in the transactions that carry them
-- (SET LOCAL log_statement = 'none' and friends; superuser-only settings otherwise). PostgreSQL 15+.
GRANT SET ON PARAMETER log_statement, log_min_duration_statement, log_min_duration_sample,
      log_transaction_sample_rate, log_parameter_max_length TO $PGM_ROLE;
SELECT format('CREATE DATABASE %I OWNER %I', d, '$PGM_ROLE')
  FROM unnest(ARRAY['$PGM_DB', '$PGM_TEST_DB']) AS d
 WHERE NOT EXISTS (SELECT FROM pg_database WHERE datname = d)
\gexec
EOF
}

# The app applies sql/ itself when it connects; applying it here too means psql users and
# tests see the system tables before the first app start. The files are idempotent.
pgm_apply_sql() {
    local url files f
    shopt -s nullglob
    files=("$PGM_REPO"/sql/*.sql)
    shopt -u nullglob
    [ "${#files[@]}" -gt 0 ] || return 0
    for url in "$@"; do
        for f in "${files[@]}"; do
            PGOPTIONS="-c client_min_messages=warning" "${PGM_BIN:+$PGM_BIN/}psql" -X -q -v ON_ERROR_STOP=1 -d "$url" -f "$f" >/dev/null \
                || pgm_die "applying $f to $(pgm_redact "$url") failed"
        done
    done
    pgm_log "applied ${#files[@]} file(s) from sql/ to $# database(s)"
}

pgm_redact() { printf '%s' "$1" | sed -E 's#(://[^:/@]*):[^@]*@#\1:***@#'; }

pgm_url() { printf 'postgres://%s:%s@127.0.0.1:%s/%s' "$PGM_ROLE" "$PGM_PASSWORD" "$PGM_PORT" "$1"; }

# Everything but the start: find or create the data directory and the binaries.
pgm_prepare_embedded() {
    local ver
    pgm_ensure_server_packages
    pgm_resolve_datadir
    if [ -f "$PGM_DATA/PG_VERSION" ]; then
        ver="$(cat "$PGM_DATA/PG_VERSION")"
        PGM_BIN="$(pgm_find_bin "$ver")" \
            || pgm_die "$PGM_DATA was made by PostgreSQL $ver, which is not installed (apt-get install postgresql-$ver)"
    else
        PGM_BIN="$(pgm_find_bin)"
    fi
    if pgm_is_root; then
        id postgres >/dev/null 2>&1 || pgm_die "there is no postgres user; reinstall the postgresql package"
    fi
}

pgm_lock() {
    exec {PGM_LOCK_FD}>>"$PGM_LOCK"
    flock "$PGM_LOCK_FD"
}

pgm_unlock() {
    [ -n "$PGM_LOCK_FD" ] || return 0
    exec {PGM_LOCK_FD}>&-
    PGM_LOCK_FD=""
}

pgm_setup() {
    if [ -n "${DATABASE_URL:-}" ]; then
        pgm_ensure_client
        export DATABASE_URL
        export PGMODEL_TEST_DATABASE_URL="${PGMODEL_TEST_DATABASE_URL:-$DATABASE_URL}"
        pgm_log "using DATABASE_URL=$(pgm_redact "$DATABASE_URL") (no embedded cluster)"
        if [ "$PGMODEL_TEST_DATABASE_URL" = "$DATABASE_URL" ]; then
            pgm_apply_sql "$DATABASE_URL"
        else
            pgm_apply_sql "$DATABASE_URL" "$PGMODEL_TEST_DATABASE_URL"
        fi
        return 0
    fi

    # Two scripts starting at once (two terminals, or run.sh beside test.sh) must not race
    # on initdb, CREATE DATABASE or the sql/ files.
    pgm_lock

    pgm_prepare_embedded
    pgm_init_cluster
    pgm_start_cluster
    pgm_enable_ssl
    pgm_create_role_and_dbs

    DATABASE_URL="$(pgm_url "$PGM_DB")"
    PGMODEL_TEST_DATABASE_URL="$(pgm_url "$PGM_TEST_DB")"
    export DATABASE_URL PGMODEL_TEST_DATABASE_URL
    pgm_apply_sql "$DATABASE_URL" "$PGMODEL_TEST_DATABASE_URL"

    pgm_unlock
    pgm_log "DATABASE_URL=$DATABASE_URL"
    pgm_log "PGMODEL_TEST_DATABASE_URL=$PGMODEL_TEST_DATABASE_URL"
    pgm_log "PGMODEL_TEST_PG_SSLROOTCERT=$PGMODEL_TEST_PG_SSLROOTCERT"
}
