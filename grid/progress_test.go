package grid

import (
	"bytes"
	"strings"
	"testing"
	"time"
)

// TestProgress: on a terminal the leg's phase is one line redrawn in
// place and an event is printed above it; elsewhere each is a line.
func TestProgress(t *testing.T) {
	now := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	clock := func() time.Time { return now }
	leg := Leg{Slot: 1, Engine: "vllm", N: 1, Block: 1}

	var term bytes.Buffer
	p := newProgress(&term, true, clock)
	p.leg(1, 4, leg, 0)
	p.phase("cooling", "%s", temps([]float64{41.5}))
	p.say("committed")
	p.end()
	want := "\r\x1b[Kgrid: leg 1/4 vllm r1: start: block 1 (ETA —)" +
		"\r\x1b[Kgrid: leg 1/4 vllm r1: cooling: 41.5 °C (ETA —)" +
		"\r\x1b[Kgrid: committed\n"
	if term.String() != want {
		t.Errorf("terminal:\n%q\nwant\n%q", term.String(), want)
	}

	var plain bytes.Buffer
	p = newProgress(&plain, false, clock)
	p.leg(1, 4, leg, 0)
	now = now.Add(time.Minute)
	p.leg(2, 4, Leg{Slot: 2, Engine: "sglang", N: 1, Block: 1}, 0)
	p.say("done")
	lines := strings.Split(strings.TrimSpace(plain.String()), "\n")
	if len(lines) != 3 || lines[1] != "grid: leg 2/4 sglang r1: start: block 1 (ETA 3m0s)" || strings.Contains(plain.String(), "\r") {
		t.Errorf("plain:\n%s", plain.String())
	}
}
