#!/usr/bin/env bash
# Stop the PostgreSQL server .ci/pg-up.sh started and remove its temporary directory.
set -uo pipefail
env_file=${GPURENT_PG_ENV:-/tmp/gpurent-pg.env}
[ -s "$env_file" ] || exit 0
dir=$(sed -n 's/^GPURENT_PG_DIR=//p' "$env_file")
bindir=$(sed -n 's/^GPURENT_PG_BIN=//p' "$env_file")
case "$dir" in
/tmp/gpurent-pg.*) ;;
*) echo "pg-down: $env_file names $dir, not a pg-up directory; leaving it" >&2; exit 0 ;;
esac
if [ -d "$dir/data" ]; then
    runuser -u postgres -- "$bindir/pg_ctl" -D "$dir/data" -m fast -w -t 30 stop >/dev/null 2>&1
fi
rm -rf "$dir" "$env_file"
exit 0
