#!/usr/bin/env bash
# Mutation testing of the packages that judge evidence, with gremlins
# (github.com/go-gremlins/gremlins): every mutant of clocks/, ratio/ and
# summarize/ is applied in a copy, that package's tests are run, and the
# mutant is KILLED (tests red), LIVED (tests green), NOT COVERED (no test
# runs the line) or TIMED OUT. Efficacy = killed / (killed + lived).
#
# Each survivor is either killed by a test that asserts a reason code or
# listed, with why it is equivalent, in scripts/gremlins-equivalent.md.
#
#   scripts/gremlins.sh                  # clocks ratio summarize
#   scripts/gremlins.sh summarize        # one package
#   GREMLINS_THRESHOLD=90 scripts/gremlins.sh   # exit 1 under 90% efficacy
#
# It runs on a snapshot of the working tree taken at start (so edits made
# while it runs, ours or anyone's, change nothing), and writes each
# package's JSON report and log under ${GREMLINS_OUT:-out/gremlins}/.
# Runtime on 2 cores: about 8 minutes for all three packages; it is not
# part of .ci/run.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)

version=v0.6.0
pkgs=("$@")
[ ${#pkgs[@]} -gt 0 ] || pkgs=(clocks ratio summarize)
threshold=${GREMLINS_THRESHOLD:-90}
out=${GREMLINS_OUT:-$root/out/gremlins}
mkdir -p "$out"

gobin=$(go env GOBIN)
[ -n "$gobin" ] || gobin=$(go env GOPATH)/bin
gremlins=$gobin/gremlins
if ! [ -x "$gremlins" ] || ! go version -m "$gremlins" 2>/dev/null | grep -q "github.com/go-gremlins/gremlins[[:space:]]*$version"; then
  echo "== installing gremlins $version"
  go install "github.com/go-gremlins/gremlins/cmd/gremlins@$version"
fi

snap=$(mktemp -d /tmp/clockgate-gremlins-XXXXXX)
trap 'rm -rf "$snap"' EXIT
tar -C "$root" --exclude=./.git --exclude=./out --exclude=./bin --exclude=./testdata/fuzz-work -cf - . | tar -C "$snap" -xf -
cd "$snap"

status=0
summary=()
for p in "${pkgs[@]}"; do
  echo "== gremlins ./$p"
  start=$(date +%s)
  # treegen writes the test trees; it is test tooling, not a judge.
  # -count=1: gremlins times each mutant's tests against the coverage
  # run; a coverage run answered from go's test cache takes milliseconds,
  # and every mutant would then time out.
  GOFLAGS="${GOFLAGS:+$GOFLAGS }-count=1" "$gremlins" unleash --workers "$(nproc)" --timeout-coefficient 3 \
    -E 'internal/treegen' -o "$out/$p.json" "./$p" >"$out/$p.log" 2>&1 || true
  secs=$(( $(date +%s) - start ))
  grep -E '^ *(LIVED|TIMED OUT|NOT COVERED)' "$out/$p.log" | sed "s|^ *|  $p/|" || true
  killed=$(sed -n 's/.*Killed: \([0-9]*\).*/\1/p' "$out/$p.log" | tail -1)
  lived=$(sed -n 's/.*Lived: \([0-9]*\).*/\1/p' "$out/$p.log" | tail -1)
  notcov=$(sed -n 's/.*Not covered: \([0-9]*\).*/\1/p' "$out/$p.log" | tail -1)
  timedout=$(sed -n 's/.*Timed out: \([0-9]*\).*/\1/p' "$out/$p.log" | tail -1)
  notviable=$(sed -n 's/.*Not viable: \([0-9]*\).*/\1/p' "$out/$p.log" | tail -1)
  if [ -z "$killed" ] || [ -z "$lived" ]; then
    echo "gremlins ./$p did not finish; see $out/$p.log"; tail -20 "$out/$p.log"
    status=1; continue
  fi
  eff=$(awk -v k="$killed" -v l="$lived" 'BEGIN { if (k + l == 0) print "100.00"; else printf "%.2f", 100 * k / (k + l) }')
  line=$(printf '%-10s killed %4s  lived %3s  not covered %3s  timed out %3s  not viable %3s  efficacy %6s%%  (%ds)' \
    "$p" "$killed" "$lived" "$notcov" "${timedout:-0}" "${notviable:-0}" "$eff" "$secs")
  summary+=("$line")
  if awk -v e="$eff" -v t="$threshold" 'BEGIN { exit !(e < t) }'; then
    status=1
  fi
done
echo "== efficacy (threshold ${threshold}%)"
printf '%s\n' "${summary[@]}"
exit $status
