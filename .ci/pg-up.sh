#!/usr/bin/env bash
# A throwaway PostgreSQL server for the store tests (tests/store/): Debian's postgresql, a cluster
# initdb'd in a temporary directory, listening on 127.0.0.1 only (trust auth, loopback only), with
# its unix socket in that directory. Needs root and apt (CI); prints how long it took.
# Writes GPURENT_TEST_PG_URL=... and GPURENT_PG_DIR=... to $GPURENT_PG_ENV (default
# /tmp/gpurent-pg.env) for `.ci/run` to source and `.ci/pg-down.sh` to stop.
# Durability is off (fsync, synchronous_commit): the data is thrown away at the end.
set -euo pipefail
started=$(date +%s.%N)
port=${GPURENT_PG_PORT:-55432}
env_file=${GPURENT_PG_ENV:-/tmp/gpurent-pg.env}
bindir=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1 || true)
if [ -z "$bindir" ] || [ ! -x "$bindir/initdb" ]; then
    export DEBIAN_FRONTEND=noninteractive
    # no default "main" cluster on 5432 (postgresql-common's switch): ours is made below
    mkdir -p /etc/postgresql-common
    [ -e /etc/postgresql-common/createcluster.conf ] \
        || echo "create_main_cluster = false" >/etc/postgresql-common/createcluster.conf
    apt-get update -qq
    apt-get install -y -qq --no-install-recommends -o Dpkg::Options::=--force-confold \
        postgresql >/dev/null
    bindir=$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -1)
fi
installed=$(date +%s.%N)

if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
    echo "pg-up: 127.0.0.1:$port is taken; stop what listens there or set GPURENT_PG_PORT" >&2
    exit 1
fi
dir=$(mktemp -d /tmp/gpurent-pg.XXXXXX)
chown postgres:postgres "$dir"
# written now, so that pg-down.sh cleans up even if a step below fails
printf 'GPURENT_PG_DIR=%s\nGPURENT_PG_BIN=%s\n' "$dir" "$bindir" >"$env_file"
as_pg() { runuser -u postgres -- "$@"; }
as_pg "$bindir/initdb" -D "$dir/data" -U postgres --auth=trust --no-sync -E UTF8 \
    --locale=C.UTF-8 >"$dir/initdb.log" 2>&1 \
    || { echo "pg-up: initdb failed; see $dir/initdb.log" >&2; cat "$dir/initdb.log" >&2; exit 1; }
as_pg "$bindir/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 30 start -o \
    "-c listen_addresses=127.0.0.1 -p $port -c unix_socket_directories=$dir -c fsync=off \
     -c synchronous_commit=off -c full_page_writes=off -c max_connections=200" >/dev/null \
    || { echo "pg-up: the server did not start; its log:" >&2; cat "$dir/server.log" >&2; exit 1; }
as_pg "$bindir/createdb" -h 127.0.0.1 -p "$port" -U postgres gpurent_test
url="postgresql+psycopg://postgres@127.0.0.1:$port/gpurent_test"
printf 'GPURENT_TEST_PG_URL=%s\n' "$url" >>"$env_file"
ready=$(date +%s.%N)
awk -v s="$started" -v i="$installed" -v r="$ready" -v u="$url" \
    'BEGIN { printf "postgres up: install %.1f s, start %.1f s; GPURENT_TEST_PG_URL=%s\n", i - s, r - i, u }'
