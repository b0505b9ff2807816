package main

import (
	"strconv"
	"testing"
	"time"

	"github.com/clockgate/clockgate/clocks"
)

// untilLines is a command for record that exits once the leg's stream
// holds n lines: a leg as long as the readings it needs, however slowly a
// loaded machine reads, where a fixed sleep gives fewer readings the more
// loaded the machine is.
// It gives up, exit 1, after 120 s: a sampler that stopped writing fails
// its test, not the package's timeout.
func (l *recLeg) untilLines(n int) []string {
	return []string{"sh", "-c", `i=0; while [ "$(wc -l < "$0" 2>/dev/null || echo 0)" -lt "$1" ]; do i=$((i+1)); [ $i -lt 6000 ] || exit 1; sleep 0.02; done`, l.stream(), strconv.Itoa(n)}
}

// cleanLeg records a leg that should be clean with rec, at interval base,
// then 2 and 4 times base, in a fresh leg each, for as long as the machine
// broke the premise of a clean leg: the stream itself measured a gap
// between two samples over clocks.MaxGapIntervals intervals (which
// clock.coverage refuses, rightly). It returns the leg whose premise held,
// or the last one, with what rec returned.
func (tools *recTools) cleanLeg(t *testing.T, cfg map[string]any, base time.Duration, rec func(l *recLeg, interval time.Duration) (code int, stderr string)) (*recLeg, int, string) {
	t.Helper()
	var l *recLeg
	var code int
	var stderr string
	for i, iv := 0, base; i < 3; i, iv = i+1, iv*2 {
		l = tools.leg(t, cfg)
		code, stderr = rec(l, iv)
		if gap := l.maxGap(); gap <= clocks.MaxGapIntervals*iv {
			break
		} else {
			t.Logf("interval %v: the machine held a reading back %v (over %d intervals): again at %v", iv, gap, clocks.MaxGapIntervals, 2*iv)
		}
	}
	return l, code, stderr
}
