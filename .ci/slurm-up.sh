#!/usr/bin/env bash
# A single-host Slurm cluster (munge, slurmctld, slurmd on 127.0.0.1) from Debian's packages,
# for the tests in tests/runtime/test_slurm.py. Needs root and apt; prints how long it took.
# No cgroup plugins (CI hosts may have cgroup v1 only): proctrack/linuxproc, task/none.
set -euo pipefail
started=$(date +%s.%N)
if ! command -v slurmctld >/dev/null || ! command -v slurmd >/dev/null || ! command -v munged >/dev/null; then
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq --no-install-recommends munge slurmctld slurmd slurm-client >/dev/null
fi
installed=$(date +%s.%N)

state=${GPURENT_SLURM_STATE:-/var/tmp/gpurent-slurm}
mkdir -p "$state"/{ctld,d,log} /etc/slurm /run/munge /var/log/munge /var/lib/munge
cpus=${GPURENT_SLURM_CPUS:-2}
cat > /etc/slurm/slurm.conf <<CONF
ClusterName=gpurent-ci
SlurmctldHost=localhost(127.0.0.1)
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
SchedulerType=sched/backfill
MpiDefault=none
ReturnToService=2
JobRequeue=1
SlurmdParameters=config_overrides
StateSaveLocation=$state/ctld
SlurmdSpoolDir=$state/d
SlurmctldPidFile=$state/slurmctld.pid
SlurmdPidFile=$state/slurmd.pid
SlurmctldLogFile=$state/log/slurmctld.log
SlurmdLogFile=$state/log/slurmd.log
SlurmctldTimeout=30
SlurmdTimeout=30
InactiveLimit=0
MinJobAge=300
KillWait=5
NodeName=localhost NodeAddr=127.0.0.1 CPUs=$cpus State=UNKNOWN
PartitionName=debug Nodes=localhost Default=YES MaxTime=INFINITE State=UP
CONF

if [ ! -s /etc/munge/munge.key ]; then
    mkdir -p /etc/munge
    dd if=/dev/urandom of=/etc/munge/munge.key bs=1024 count=1 status=none
fi
chown -R munge:munge /etc/munge /run/munge /var/log/munge /var/lib/munge 2>/dev/null || true
chmod 0400 /etc/munge/munge.key
pgrep -x munged >/dev/null || runuser -u munge -- munged
pgrep -x slurmctld >/dev/null || slurmctld
pgrep -x slurmd >/dev/null || slurmd

for _ in $(seq 1 60); do
    if sinfo -h -N -o '%T' 2>/dev/null | grep -qx idle; then
        ready=$(date +%s.%N)
        awk -v s="$started" -v i="$installed" -v r="$ready" \
            'BEGIN { printf "slurm up: install %.1f s, start %.1f s\n", i - s, r - i }'
        exit 0
    fi
    sleep 1
done
echo "slurm did not come up: sinfo says $(sinfo -h -N -o '%T' 2>&1 | head -1); logs in $state/log" >&2
exit 1
