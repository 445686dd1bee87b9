#!/usr/bin/env bash
# Entry point of docker-compose.yml's `postgres-standby` service (the postgres image): on first start, an
# empty data volume is filled with pg_basebackup from the `postgres` service, as a streaming standby
# (`-R` writes standby.signal and primary_conninfo) with a replication slot, so the primary keeps the WAL
# the standby still needs (bounded by the primary's max_slot_wal_keep_size). Then the image's own entry
# point runs it. The role and its password are what scripts/docker-initdb.sh made on the primary.
set -euo pipefail

: "${PGMODEL_REPLICATION_PASSWORD:?set PGMODEL_REPLICATION_PASSWORD}"
data="${PGDATA:-/var/lib/postgresql/data}"
primary="${PGMODEL_PRIMARY_HOST:-postgres}"
slot=pgmodel_standby

if [ ! -s "$data/PG_VERSION" ]; then
    mkdir -p "$data"
    chown postgres:postgres "$data"
    chmod 700 "$data"
    until gosu postgres pg_isready -h "$primary" -p 5432 -q; do sleep 1; done
    export PGPASSWORD="$PGMODEL_REPLICATION_PASSWORD"
    # The slot survives a standby rebuilt from scratch: create it the first time, reuse it after.
    if ! gosu postgres pg_basebackup -h "$primary" -p 5432 -U pgmodel_replicator -D "$data" -X stream -R -C -S "$slot" -c fast; then
        rm -rf "${data:?}"/*
        gosu postgres pg_basebackup -h "$primary" -p 5432 -U pgmodel_replicator -D "$data" -X stream -R -S "$slot" -c fast
    fi
    unset PGPASSWORD
fi
exec docker-entrypoint.sh postgres
