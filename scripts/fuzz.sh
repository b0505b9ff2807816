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
# target failed.
set -euo pipefail
cd "$(dirname "$0")/.."

fuzztime=${FUZZTIME:-15s}
minimize=${FUZZMINIMIZETIME:-5s}
only=${1:-.}

status=0
pkg_targets=$(go test -list '^Fuzz' ./... | awk '
  /^Fuzz/ { t[n++] = $1; next }
  /^ok/   { for (i = 0; i < n; i++) print $2, t[i]; n = 0 }')
while read -r pkg target; do
  [ -n "$target" ] || continue
  [[ $target =~ $only ]] || continue
  echo "== $target ($pkg, $fuzztime)"
  if ! go test -run '^$' -fuzz "^${target}\$" -fuzztime "$fuzztime" -fuzzminimizetime "$minimize" "$pkg" >/tmp/fuzz-$$.log 2>&1; then
    tail -30 /tmp/fuzz-$$.log
    echo "FAIL: $target; the failing input is under $(go list -f '{{.Dir}}' "$pkg")/testdata/fuzz/$target/"
    status=1
  else
    grep -E '^(ok|PASS)' /tmp/fuzz-$$.log | tail -1
  fi
done <<<"$pkg_targets"
rm -f /tmp/fuzz-$$.log
exit $status
