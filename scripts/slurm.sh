#!/usr/bin/env bash
# Starts a throwaway Slurm cluster of three nodes on this one machine for
# the multi-host tests and prints its configuration file's path on standard
# output: Debian's slurmctld, slurmd and slurm-client (22.05, installed if
# missing), one slurmctld and three `slurmd -N nodeK` (Debian builds slurmd
# with multiple-slurmd support), each on its own port, without systemd or
# munge (auth/none), under a temporary directory. Each slurmd runs in its
# own UTS and mount namespace: its host name is its node name, /etc/hosts
# names the nodes, and /proc/sys/kernel/random/boot_id is the node's own
# (DIR/nodeK.boot_id), so a test can reboot one node.
#   export SLURM_CONF=$(scripts/slurm.sh start)
#   srun -N3 hostname                 # node1, node2, node3
#   scripts/slurm.sh reboot node2     # a new boot id, slurmd restarted
#   scripts/slurm.sh status           # each daemon, and sinfo
#   scripts/slurm.sh stop             # jobs cancelled, nothing left running
# CLOCKGATE_SLURM_PORT (default 16817) is slurmctld's port; the nodes take
# the next three. CLOCKGATE_SLURM_DIR (default /tmp/clockgate-slurm-PORT)
# holds slurm.conf, state, spool, logs and pid files.
set -euo pipefail
port=${CLOCKGATE_SLURM_PORT:-16817}
dir=${CLOCKGATE_SLURM_DIR:-/tmp/clockgate-slurm-$port}
nodes=(node1 node2 node3)
conf=$dir/slurm.conf
export SLURM_CONF=$conf

installed() {
  command -v slurmctld >/dev/null 2>&1 && command -v slurmd >/dev/null 2>&1 &&
    command -v srun >/dev/null 2>&1
}

# install_quietly installs Debian packages without starting their system
# services (where an init would run them: ours run on their own terms),
# through a policy-rc.d denying starts for the install's length unless the
# machine has one.
install_quietly() {
  local policy=/usr/sbin/policy-rc.d own=
  if [ ! -e "$policy" ]; then
    printf '#!/bin/sh\nexit 101\n' >"$policy" && chmod 0755 "$policy" && own=1
  fi
  apt-get update -qq >&2 &&
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "$@" >&2
  local rc=$?
  [ -n "$own" ] && rm -f "$policy"
  return "$rc"
}

# running: process $1 exists and has not exited (a zombie waiting for
# init to reap it has).
running() {
  local st
  st=$(cat "/proc/$1/stat" 2>/dev/null) || return 1
  st=${st##*) }
  [ "${st%% *}" != Z ]
}

alive() { [ -f "$1" ] && running "$(cat "$1")"; }

# ready waits until sinfo lists every node idle (or mixed/allocated).
ready() {
  local n
  for _ in $(seq 1 100); do
    n=$(sinfo -h -N -o '%N %t' 2>/dev/null | grep -cE ' (idle|mix|alloc)$' || true)
    [ "$n" = "${#nodes[@]}" ] && return 0
    sleep 0.05
  done
  echo "slurm.sh: the nodes did not become idle; sinfo and the logs under $dir:" >&2
  sinfo -N >&2 || true
  tail -n 20 "$dir"/*.log >&2 || true
  return 1
}

# start_node starts node $1's slurmd in a UTS and mount namespace of its
# own: its host name, /etc/hosts and boot id bound over the machine's.
start_node() {
  local node=$1
  # shellcheck disable=SC2016
  setsid unshare --uts --mount --propagation private sh -c '
    hostname "$1" &&
    mount --bind "$2/hosts" /etc/hosts &&
    mount --bind "$2/$1.boot_id" /proc/sys/kernel/random/boot_id &&
    exec slurmd -D -N "$1" -f "$3"' sh "$node" "$dir" "$conf" \
    </dev/null >>"$dir/slurmd-$node.out" 2>&1 &
  echo $! >"$dir/slurmd-$node.pid"
}

# stop_pids ends the processes named (SIGTERM to all, then SIGKILL to
# those left after 5 s).
stop_pids() {
  local p left
  [ $# = 0 ] && return 0
  kill "$@" 2>/dev/null || true
  for _ in $(seq 1 100); do
    left=
    for p in "$@"; do running "$p" && left=1; done
    [ -z "$left" ] && return 0
    sleep 0.05
  done
  kill -KILL "$@" 2>/dev/null || true
}

# namespace_pids lists the processes in node $1's UTS namespace (its
# slurmd, and the slurmstepd and tasks it started).
namespace_pids() {
  local pidf=$dir/slurmd-$1.pid ns p
  alive "$pidf" || return 0
  ns=$(readlink "/proc/$(cat "$pidf")/ns/uts") || return 0
  for p in /proc/[0-9]*; do
    [ "$(readlink "$p/ns/uts" 2>/dev/null)" = "$ns" ] && echo "${p#/proc/}"
  done
  return 0
}

# stop_all cancels every job and ends the daemons and every process in
# the nodes' namespaces.
stop_all() {
  local pids=() n
  if alive "$dir/slurmctld.pid"; then
    scancel --full --signal=KILL --user=root >/dev/null 2>&1 || true
  fi
  for n in "${nodes[@]}"; do
    # shellcheck disable=SC2207
    pids+=($(namespace_pids "$n"))
  done
  alive "$dir/slurmctld.pid" && pids+=("$(cat "$dir/slurmctld.pid")")
  stop_pids "${pids[@]}"
  rm -f "$dir"/slurmd-node?.pid "$dir/slurmctld.pid"
}

case "${1:-}" in
start)
  if ! installed; then
    install_quietly slurmctld slurmd slurm-client
  fi
  if alive "$dir/slurmctld.pid"; then
    echo "$conf"
    exit 0
  fi
  # A node left from a cluster whose slurmctld has gone holds its port.
  stop_all
  rm -rf "$dir"
  mkdir -p "$dir/state" "$dir/spool"
  ctl=$(hostname -s)
  {
    cat /etc/hosts
    for n in "${nodes[@]}"; do echo "127.0.0.1 $n"; done
  } >"$dir/hosts"
  for n in "${nodes[@]}"; do
    cat /proc/sys/kernel/random/uuid >"$dir/$n.boot_id"
  done
  cat >"$conf" <<CONF
ClusterName=clockgate
SlurmctldHost=$ctl(127.0.0.1)
SlurmctldPort=$port
SlurmUser=root
SlurmdUser=root
AuthType=auth/none
CredType=cred/none
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SwitchType=switch/none
MpiDefault=none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
SlurmdParameters=config_overrides
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
ReturnToService=2
SlurmdTimeout=30
SlurmctldTimeout=30
InactiveLimit=0
KillWait=5
MinJobAge=30
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool/%n
SlurmctldPidFile=$dir/slurmctld.daemon.pid
SlurmdPidFile=$dir/slurmd-%n.daemon.pid
SlurmctldLogFile=$dir/slurmctld.log
SlurmdLogFile=$dir/slurmd-%n.log
NodeName=node1 NodeHostname=node1 NodeAddr=127.0.0.1 Port=$((port + 1)) CPUs=4 RealMemory=1000 State=UNKNOWN
NodeName=node2 NodeHostname=node2 NodeAddr=127.0.0.1 Port=$((port + 2)) CPUs=4 RealMemory=1000 State=UNKNOWN
NodeName=node3 NodeHostname=node3 NodeAddr=127.0.0.1 Port=$((port + 3)) CPUs=4 RealMemory=1000 State=UNKNOWN
PartitionName=debug Nodes=node[1-3] Default=YES MaxTime=INFINITE OverSubscribe=YES State=UP
CONF
  setsid slurmctld -D -i -f "$conf" </dev/null >>"$dir/slurmctld.out" 2>&1 &
  echo $! >"$dir/slurmctld.pid"
  for n in "${nodes[@]}"; do start_node "$n"; done
  if ! ready; then
    stop_all
    exit 1
  fi
  echo "$conf"
  ;;
reboot)
  node=${2:-}
  case " ${nodes[*]} " in
  *" $node "*) ;;
  *) echo "usage: scripts/slurm.sh reboot node1|node2|node3" >&2; exit 2 ;;
  esac
  # shellcheck disable=SC2046
  stop_pids $(namespace_pids "$node")
  cat /proc/sys/kernel/random/uuid >"$dir/$node.boot_id"
  start_node "$node"
  ready
  cat "$dir/$node.boot_id"
  ;;
status)
  rc=0
  for d in slurmctld slurmd-node1 slurmd-node2 slurmd-node3; do
    if alive "$dir/$d.pid"; then
      echo "$d running (pid $(cat "$dir/$d.pid"))"
    else
      echo "$d not running"; rc=1
    fi
  done
  [ "$rc" = 0 ] && sinfo -N -o '%N %t' 2>&1
  exit "$rc"
  ;;
stop)
  stop_all
  ;;
*)
  echo "usage: scripts/slurm.sh start|stop|status|reboot NODE" >&2; exit 2 ;;
esac
