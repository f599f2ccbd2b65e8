#!/usr/bin/env bash
# A throw-away single-node SLURM cluster on this machine, for testing the workflow's
# cluster path with Snakemake's SLURM executor plugin.
#
#   tests/cluster/slurm_single_node.sh RECORD_DIR -- COMMAND [ARGS...]
#
# Installs Debian's slurm-wlm and munge when missing (needs root), starts munged,
# slurmctld and slurmd on localhost, runs COMMAND against that cluster, then writes what
# the controller knows of the jobs to RECORD_DIR (squeue.txt: every job still held by
# slurmctld; jobcomp.txt: slurmctld's record of every finished job), stops every daemon
# it started and removes its files. Exits with COMMAND's status.
#
# The configuration goes to /etc/slurm/slurm.conf, the place every SLURM command reads
# (the plugin's job step drops SLURM_CONF before its srun), so the script refuses to run
# where a slurm.conf is already installed. State, spool and logs stay in a temporary
# folder.
#
# Accounting: there is no slurmdbd. The controller keeps finished jobs for MinJobAge
# (an hour here), so the plugin's documented alternative to sacct works: job status
# through squeue (--slurm-status-command squeue) and no account check
# (--slurm-no-account). jobcomp/filetxt keeps a completion record of every job.
# The partition is called "local".
set -euo pipefail

slurm_conf=/etc/slurm/slurm.conf

if [[ $# -lt 3 || $2 != "--" ]]; then
    echo "usage: $0 RECORD_DIR -- COMMAND [ARGS...]" >&2
    exit 2
fi
record_dir=$(realpath -m "$1")
shift 2
mkdir -p "$record_dir"

if ! command -v slurmctld >/dev/null || ! command -v slurmd >/dev/null || ! command -v munged >/dev/null; then
    if [[ $(id -u) -ne 0 ]]; then
        echo "error: slurm-wlm and munge are not installed and installing them needs root" >&2
        exit 1
    fi
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends slurm-wlm munge >/dev/null
fi

if [[ -e $slurm_conf ]]; then
    echo "error: $slurm_conf exists: this machine has a SLURM set-up of its own, which the test leaves alone" >&2
    exit 1
fi
cluster_dir=$(mktemp -d /tmp/plainsight-slurm.XXXXXX)
chmod 755 "$cluster_dir"
daemon_pids=()

stop_cluster() {
    local pid
    for pid in "${daemon_pids[@]}"; do
        kill "$pid" 2>/dev/null || true
    done
    for pid in "${daemon_pids[@]}"; do
        # daemons fork into the background: wait for the pid itself to disappear
        for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.2; done
        kill -9 "$pid" 2>/dev/null || true
    done
    rm -rf "$cluster_dir" "$slurm_conf"
}
trap stop_cluster EXIT

# munged with its own key, socket and files, so a system munged is left alone.
mkdir -p "$cluster_dir/munge"
chmod 700 "$cluster_dir/munge"
dd if=/dev/urandom of="$cluster_dir/munge/munge.key" bs=1024 count=1 status=none
chmod 400 "$cluster_dir/munge/munge.key"
munged --force --key-file="$cluster_dir/munge/munge.key" --socket="$cluster_dir/munge/munge.socket" \
    --pid-file="$cluster_dir/munge/munged.pid" --log-file="$cluster_dir/munge/munged.log" \
    --seed-file="$cluster_dir/munge/munged.seed"
daemon_pids+=("$(cat "$cluster_dir/munge/munged.pid")")

free_port() {
    python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

node=$(hostname -s)
memory_mb=$(awk '/^MemTotal/ {print int($2 / 1024 * 0.9)}' /proc/meminfo)
mkdir -p "$cluster_dir/state" "$cluster_dir/spool"
mkdir -p "$(dirname "$slurm_conf")"
cat >"$slurm_conf" <<EOF
ClusterName=plainsight
SlurmctldHost=$node(127.0.0.1)
SlurmctldPort=$(free_port)
SlurmdPort=$(free_port)
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$cluster_dir/munge/munge.socket
StateSaveLocation=$cluster_dir/state
SlurmdSpoolDir=$cluster_dir/spool
SlurmctldPidFile=$cluster_dir/slurmctld.pid
SlurmdPidFile=$cluster_dir/slurmd.pid
SlurmctldLogFile=$cluster_dir/slurmctld.log
SlurmdLogFile=$cluster_dir/slurmd.log
# no cgroups: plain process tracking works in containers
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/filetxt
JobCompLoc=$cluster_dir/jobcomp.txt
MinJobAge=3600
MpiDefault=none
ReturnToService=2
SchedulerType=sched/builtin
SelectType=select/cons_tres
SelectTypeParameters=CR_Core_Memory
NodeName=$node NodeAddr=127.0.0.1 CPUs=$(nproc) RealMemory=$memory_mb State=UNKNOWN
PartitionName=local Nodes=$node Default=YES MaxTime=INFINITE State=UP
EOF

slurmctld -i
for _ in $(seq 50); do [[ -s $cluster_dir/slurmctld.pid ]] && break; sleep 0.2; done
daemon_pids+=("$(cat "$cluster_dir/slurmctld.pid")")
slurmd
for _ in $(seq 50); do [[ -s $cluster_dir/slurmd.pid ]] && break; sleep 0.2; done
daemon_pids+=("$(cat "$cluster_dir/slurmd.pid")")

node_ready=false
for _ in $(seq 60); do
    if [[ $(sinfo --noheader --nodes="$node" --format=%t 2>/dev/null) == idle ]]; then
        node_ready=true
        break
    fi
    sleep 0.5
done
if ! $node_ready; then
    echo "error: the SLURM node did not come up; slurmctld and slurmd logs follow" >&2
    tail -n 20 "$cluster_dir/slurmctld.log" "$cluster_dir/slurmd.log" >&2
    exit 1
fi

command_status=0
"$@" || command_status=$?

squeue --states=all --noheader --format='%i|%j|%T|%P' >"$record_dir/squeue.txt"
cp "$cluster_dir/jobcomp.txt" "$record_dir/jobcomp.txt" 2>/dev/null || : >"$record_dir/jobcomp.txt"
exit "$command_status"
