#!/usr/bin/env bash
# Stop the single-host Slurm cluster .ci/slurm-up.sh started (slurmd, slurmctld, munged).
set -uo pipefail
state=${GPURENT_SLURM_STATE:-/var/tmp/gpurent-slurm}
scancel --user="$(id -un)" 2>/dev/null || true
for pidfile in "$state/slurmd.pid" "$state/slurmctld.pid"; do
    [ -s "$pidfile" ] && kill "$(cat "$pidfile")" 2>/dev/null
done
munge_pid=/run/munge/munged.pid
[ -s "$munge_pid" ] && kill "$(cat "$munge_pid")" 2>/dev/null
exit 0
