#!/usr/bin/env bash
# A one-host Slurm of two nodes for tests: munged, slurmctld and two slurmd on this machine,
# each slurmd a node of its own (n1 and n2, NodeHostname this host), with their configuration,
# state and logs under one directory. `start` prints the SLURM_CONF to export; `stop` ends the
# daemons it started (by the pids it recorded) and removes the directory.
#
#   tools/launch/slurm-one-host.sh start    # then: export SLURM_CONF=$DIR/slurm.conf
#   srun -N 1 -n 4 --mpi=pmix ./prog        # four ranks on one node
#   srun -N 2 -n 4 --mpi=pmi2 ./prog        # two ranks on each node: they talk over libfabric
#   tools/launch/slurm-one-host.sh stop
#
# Slurm runs one slurmd per node name given with -N when the nodes share a host; each needs
# its own port, spool directory, pid file, log and TmpFS (PMIx makes its directories there by
# job step, which two nodes of one host would otherwise share), written with %n, the node name.
# Needs root and Debian's slurmctld, slurmd, slurm-client and munge. Each node declares more
# CPUs than the machine has (SlurmdParameters=config_overrides) so that a 2-core machine runs
# 4 ranks; tasks are tracked by their parents (proctrack/linuxproc), with no cgroups; a task
# that fails ends its step (KillOnBadExit), as mpirun does.
set -euo pipefail

dir=${RSHMEM_SLURM_DIR:-/tmp/rshmem-slurm}
host=$(hostname -s)

die() { echo "slurm-one-host.sh: $*" >&2; exit 1; }

stop() {
    for pidfile in n1/slurmd n2/slurmd slurmctld munged; do
        if [ -f "$dir/$pidfile.pid" ]; then
            pid=$(cat "$dir/$pidfile.pid")
            kill "$pid" 2>/dev/null || true
            for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
        fi
    done
    rm -rf "$dir"
}

start() {
    for tool in munged slurmctld slurmd srun sinfo; do
        command -v "$tool" >/dev/null || die "$tool is missing: apt-get install -y slurmctld slurmd slurm-client munge"
    done
    [ "$(id -u)" -eq 0 ] || die "the daemons run as root here; run this as root"
    [ -e "$dir" ] && stop
    mkdir -p "$dir/state" "$dir/munge" "$dir"/n{1,2}/{spool,tmp}
    chmod 700 "$dir/munge"
    cat >"$dir/slurm.conf" <<CONF
ClusterName=rshmem
SlurmctldHost=$host
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket=$dir/munge/munge.socket
CredType=cred/munge
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/%n/spool
SlurmctldPidFile=$dir/slurmctld.pid
SlurmdPidFile=$dir/%n/slurmd.pid
SlurmctldLogFile=$dir/slurmctld.log
SlurmdLogFile=$dir/%n/slurmd.log
SlurmctldPort=16817
TmpFS=$dir/%n/tmp
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SlurmdParameters=config_overrides
ReturnToService=2
KillOnBadExit=1
MpiDefault=none
NodeName=n1 NodeHostname=$host Port=16818 CPUs=16 State=UNKNOWN
NodeName=n2 NodeHostname=$host Port=16819 CPUs=16 State=UNKNOWN
PartitionName=two Nodes=n1,n2 Default=YES MaxTime=INFINITE State=UP OverSubscribe=YES
CONF
    munged --force --socket="$dir/munge/munge.socket" --pid-file="$dir/munged.pid" \
        --log-file="$dir/munged.log" --seed-file="$dir/munge/seed"
    export SLURM_CONF=$dir/slurm.conf
    slurmctld -f "$SLURM_CONF"
    slurmd -f "$SLURM_CONF" -N n1
    slurmd -f "$SLURM_CONF" -N n2
    for _ in $(seq 100); do
        if [ "$(sinfo -h -N -o %t 2>/dev/null | grep -cx idle)" = 2 ]; then
            echo "SLURM_CONF=$SLURM_CONF"
            return 0
        fi
        sleep 0.2
    done
    echo "slurm-one-host.sh: the nodes did not become idle in 20 s; logs:" >&2
    tail -n 20 "$dir"/*.log "$dir"/n?/*.log >&2 || true
    stop
    exit 1
}

case ${1:-} in
    start) start ;;
    stop) stop ;;
    *) die "usage: $0 start|stop (RSHMEM_SLURM_DIR, default /tmp/rshmem-slurm)" ;;
esac
