package main

import (
	"strings"
	"testing"
	"time"
)

// hostRun is a run of the host-stream tree whose --json takes ratio times
// cat, beside a layout tree far slower (which is the layouts' bound's, not
// this one's).
func hostRun(ratio float64) []result {
	ms := func(f float64) time.Duration { return time.Duration(f * float64(time.Millisecond)) }
	return []result{
		{tree: "key order changing on every line", what: "--json", layout: true, cat: ms(40), sum: ms(40 * 9)},
		{tree: hostTreeName, what: "--json", cat: ms(50), sum: ms(50 * ratio)},
		{tree: hostTreeName, what: "--out", cat: ms(50), sum: ms(50 * ratio * 3)},
	}
}

// TestHostGuard: the host-stream tree's --json past its bound fails the
// guard, naming the tree, its ratio and the bound: the reader before this
// round (6.5× at the load the bound was measured at) and one just past
// it; at the bound exactly, and --out however slow, it does not; and
// -max-host-ratio 3, the SPEC's line, fails a run at today's 4.6×.
func TestHostGuard(t *testing.T) {
	for _, ratio := range []float64{6.5, 6.01} {
		bad := checkHost(hostRun(ratio), hostBounds.MaxRatio)
		if len(bad) != 1 || !strings.HasPrefix(bad[0], hostTreeName+": --json took") || !strings.HasSuffix(bad[0], "the bound is 6.00× (SPEC §12.2's line: cat × 3)") {
			t.Fatalf("×%.2f: %q", ratio, bad)
		}
	}
	if bad := checkHost(hostRun(6), hostBounds.MaxRatio); len(bad) > 0 {
		t.Fatalf("at exactly the bound: %q", bad)
	}
	if bad := checkHost(hostRun(4.6), 3); len(bad) != 1 || !strings.HasSuffix(bad[0], "the bound is 3.00× (SPEC §12.2's line: cat × 3)") {
		t.Fatalf("-max-host-ratio 3 at 4.6×: %q", bad)
	}
}
