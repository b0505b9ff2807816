#!/usr/bin/env bash
# Runs every fuzz target in the module for a bounded time each, one after
# the other (go runs one -fuzz target per invocation, on every core).
#
#   scripts/fuzz.sh                      # every target, FUZZTIME each (15s)
#   FUZZTIME=2m scripts/fuzz.sh FuzzSummarizeTree   # targets whose name matches
#
# A failing input is minimized for at most FUZZMINIMIZETIME (5s: large
# inputs would otherwise stall for the minimizer's default minute) and
# written by go to <package>/testdata/fuzz/<Target>/; commit it, and
# `go test` runs it as a regression case from then on. Exits 1 if any
# target failed. A run that only hit Go 1.26's deadline race at the end
# of -fuzztime (no failing input written) is run again; see fuzz_once.
set -euo pipefail
cd "$(dirname "$0")/.."

fuzztime=${FUZZTIME:-15s}
minimize=${FUZZMINIMIZETIME:-5s}
only=${1:-.}

status=0
pkg_targets=$(go test -list '^Fuzz' ./... | awk '
  /^Fuzz/ { t[n++] = $1; next }
  /^ok/   { for (i = 0; i < n; i++) print $2, t[i]; n = 0 }')

# Go 1.26's fuzzing coordinator can report the end of a -fuzztime run as a
# failure, "context deadline exceeded", with no failing input written
# (go.dev/issue/75804, fixed in Go 1.27). A run that ends that way and
# wrote nothing under testdata/fuzz/<Target>/ is run again, at most
# twice; any other failure, or a failing input, fails at once.
fuzz_once() { # pkg target dir log
  local before after
  before=$(ls "$3" 2>/dev/null | sort)
  if go test -run '^$' -fuzz "^$2\$" -fuzztime "$fuzztime" -fuzzminimizetime "$minimize" "$1" >"$4" 2>&1; then
    return 0
  fi
  after=$(ls "$3" 2>/dev/null | sort)
  if [ "$before" = "$after" ] && grep -qx '    context deadline exceeded' "$4" &&
    [ "$(grep -c '^--- FAIL' "$4")" = 1 ]; then
    return 2
  fi
  return 1
}

log=/tmp/fuzz-$$.log
while read -r pkg target; do
  [ -n "$target" ] || continue
  [[ $target =~ $only ]] || continue
  dir="$(go list -f '{{.Dir}}' "$pkg" || echo "$pkg")/testdata/fuzz/$target"
  echo "== $target ($pkg, $fuzztime)"
  rc=0
  for try in 1 2 3; do
    rc=0
    fuzz_once "$pkg" "$target" "$dir" "$log" || rc=$?
    [ "$rc" = 2 ] || break
    echo "   run $try ended in Go's fuzztime deadline race (go.dev/issue/75804), no failing input written"
  done
  if [ "$rc" = 2 ]; then
    tail -30 "$log"
    echo "FAIL: $target ended in the deadline race three times running"
    status=1
  elif [ "$rc" != 0 ]; then
    tail -30 "$log"
    echo "FAIL: $target; the failing input is under $dir/"
    status=1
  else
    grep -E '^(ok|PASS)' "$log" | tail -1
  fi
done <<<"$pkg_targets"
rm -f "$log"
exit $status
