#!/usr/bin/env bash
# Starts a real chronyd that makes the kernel clock synchronised, for the
# multi-host tests' synchronised case, and prints its directory on standard
# output (the kernel's state on standard error):
# Debian's chrony (installed if missing), configured under a temporary
# directory with one reference clock, a `refclock SOCK` that
# scripts/chronyfeed feeds zero offsets (chrony's `local` directive alone
# leaves the kernel unsynchronised), and `rtcsync`, which has chronyd mark
# the kernel synchronised (adjtimex TIME_OK). A zero offset says the clock
# is right, so chronyd never steps or slews it: other programs on the
# machine see the same time.
#   export CLOCKGATE_TEST_CHRONY=$(scripts/chrony.sh start)   # waits for TIME_OK
#   scripts/chrony.sh status   # exit 0 when chronyd runs and the kernel is synchronised
#   scripts/chrony.sh stop     # chronyd gone, the kernel unsynchronised again
# A hypervisor that pauses the machine and steps its clock resets the
# kernel to unsynchronised; chronyd marks it synchronised again at its next
# update (within a second), so a test checks `status` right before
# it relies on the state. `chronyc -c tracking` answers on chronyd's
# default socket while it runs. CLOCKGATE_CHRONY_DIR (default
# /tmp/clockgate-chrony) holds the configuration, the helper, the log and
# the kernel state saved at start.
set -euo pipefail
cd "$(dirname "$0")/.."
dir=${CLOCKGATE_CHRONY_DIR:-/tmp/clockgate-chrony}

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

# synced waits up to $1 tenths of a second for the kernel to be synchronised.
synced() {
  for _ in $(seq 1 "$1"); do
    "$dir/chronyfeed" status >/dev/null && return 0
    sleep 0.1
  done
  return 1
}

stop_pid() {
  local pid
  [ -f "$1" ] || return 0
  pid=$(cat "$1")
  rm -f "$1"
  kill "$pid" 2>/dev/null || return 0
  for _ in $(seq 1 50); do
    running "$pid" || return 0
    sleep 0.1
  done
  kill -KILL "$pid" 2>/dev/null || true
}

# stop_all ends chronyd and the feed, and gives the kernel back the state
# saved at start.
stop_all() {
  stop_pid "$dir/chronyd.pid.own"
  stop_pid "$dir/feed.pid"
  if [ -x "$dir/chronyfeed" ]; then
    "$dir/chronyfeed" restore "$dir/kernel.saved"
  fi
}

case "${1:-}" in
start)
  if ! command -v chronyd >/dev/null 2>&1; then
    install_quietly chrony
  fi
  if alive "$dir/chronyd.pid.own"; then
    synced 50 || true
    "$dir/chronyfeed" status >&2 || true
    echo "$dir"
    exit 0
  fi
  if pid=$(pidof chronyd); then
    echo "clockgate: a chronyd not started by scripts/chrony.sh runs (pid $pid): stop it first, or test against it" >&2
    exit 1
  fi
  rm -rf "$dir"
  mkdir -p "$dir" /run/chrony
  # chronyd refuses a command socket directory others can read.
  chmod 0750 /run/chrony
  go build -o "$dir/chronyfeed" ./scripts/chronyfeed
  "$dir/chronyfeed" save "$dir/kernel.saved"
  cat >"$dir/chrony.conf" <<CONF
# The only source: zero offsets from scripts/chronyfeed, taken twice a
# second, two samples each (selected about 2 s after chronyd starts).
refclock SOCK $dir/refclock.sock refid CGZ poll -1 filter 2
rtcsync
# Never serve time; slew at most 1 ppm (the offsets are zero anyway).
maxslewrate 1
port 0
cmdport 0
driftfile $dir/drift
pidfile $dir/chronyd.pid
logdir $dir
CONF
  setsid chronyd -d -u root -f "$dir/chrony.conf" </dev/null >>"$dir/chronyd.log" 2>&1 &
  echo $! >"$dir/chronyd.pid.own"
  setsid "$dir/chronyfeed" feed "$dir/refclock.sock" </dev/null >>"$dir/feed.log" 2>&1 &
  echo $! >"$dir/feed.pid"
  if ! synced 100; then
    echo "clockgate: chronyd did not make the kernel synchronised in 10 s; its log:" >&2
    cat "$dir/chronyd.log" >&2
    stop_all
    exit 1
  fi
  "$dir/chronyfeed" status >&2
  echo "$dir"
  ;;
status)
  if ! alive "$dir/chronyd.pid.own"; then
    echo "chronyd not running"
    [ -x "$dir/chronyfeed" ] && "$dir/chronyfeed" status || true
    exit 1
  fi
  "$dir/chronyfeed" status
  ;;
stop)
  stop_all
  ;;
*)
  echo "usage: scripts/chrony.sh start|stop|status" >&2; exit 2 ;;
esac
