package clocks

import (
	"strings"
	"testing"
	"time"
)

// ticks lays samples at windowStart plus each offset in milliseconds.
func ticks(ms ...int) []time.Time {
	var ts []time.Time
	for _, m := range ms {
		ts = append(ts, windowStart.Add(time.Duration(m)*time.Millisecond))
	}
	return ts
}

// TestIntervalFromTimes: the inferred interval is the median gap, unless
// that passes a GPU's mean spacing, and a record built with it is never
// refused by the spacing check.
func TestIntervalFromTimes(t *testing.T) {
	for _, c := range []struct {
		name   string
		series [][]time.Time
		want   float64
	}{
		// Even ticks: the median.
		{"even", [][]time.Time{ticks(0, 100, 200, 300, 400)}, 0.1},
		// A missed reading (a 300 ms gap) raises the mean, not the median.
		{"a missed reading", [][]time.Time{ticks(0, 100, 200, 300, 600)}, 0.1},
		// A late reading then early ones on fixed ticks (seen on a loaded
		// box at 100 ms): the median gap 121 ms is over 110% of the mean
		// spacing 109 ms, so the mean, floored to the millisecond.
		{"late then early", [][]time.Time{ticks(0, 85, 206, 327)}, 0.109},
		// A median a little over the mean spacing but within 110% of it
		// stands (a 1 s sampler whose clock ran 0.3 ms short).
		{"within 110% of the mean", [][]time.Time{ticks(0, 1000, 2000, 2999)}, 1},
		// Times to the second, four readings a second: the median gap is
		// nothing, the mean spacing (3 s over 11 gaps) is the interval.
		{"times to the second", [][]time.Time{ticks(0, 0, 0, 0, 1000, 1000, 1000, 1000, 2000, 2000, 2000, 3000)}, 0.272},
		// A GPU whose samples span no time has no spacing: the other's
		// binds, as the check reads it.
		{"a GPU spanning no time", [][]time.Time{ticks(0, 100, 200, 300), ticks(50, 50)}, 0.1},
		// Two GPUs: the smaller mean spacing binds.
		{"two GPUs", [][]time.Time{ticks(0, 120, 240, 360), ticks(0, 85, 206, 327)}, 0.109},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, err := IntervalFromTimes(c.series)
			if err != nil || got != c.want {
				t.Fatalf("IntervalFromTimes = %v, %v; want %v", got, err, c.want)
			}
		})
	}
	for _, c := range []struct {
		name   string
		series [][]time.Time
		want   string
	}{
		{"one sample", [][]time.Time{ticks(0)}, "fewer than two samples: the interval cannot be inferred"},
		{"one sample each", [][]time.Time{ticks(0), ticks(0)}, "fewer than two samples of any one GPU: the interval cannot be inferred"},
		{"no time between", [][]time.Time{{windowStart, windowStart.Add(400 * time.Microsecond)}}, "samples are not spaced in time (under a millisecond apart on average)"},
		{"one time", [][]time.Time{ticks(0, 0, 0)}, "samples are not spaced in time (each GPU's first and last share one time)"},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got, err := IntervalFromTimes(c.series); err == nil || err.Error() != c.want {
				t.Fatalf("IntervalFromTimes = %v, %v; want error %q", got, err, c.want)
			}
		})
	}
}

// TestInferredIntervalPassesTheSpacingCheck: a record given the inferred
// interval of a jittered stream is what its stream recomputes to, and the
// median gap would not have been (so the spacing check is what this
// guards against, not something else).
func TestInferredIntervalPassesTheSpacingCheck(t *testing.T) {
	offsets := []int{0, 85, 206, 327}
	var ss []*Sample
	for _, ms := range offsets {
		s := gb10(0, bootF6, 2470, 97)
		s.T = windowStart.Add(time.Duration(ms) * time.Millisecond).Format("2006-01-02T15:04:05.000Z")
		ss = append(ss, s)
	}
	iv, err := IntervalFromTimes([][]time.Time{ticks(offsets...)})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		interval float64
		mismatch bool
	}{{iv, false}, {0.121, true}} {
		f := NewFold()
		for i, s := range ss {
			f.Add(s, i+1)
		}
		r, err := f.Record(c.interval, StopRebuilt)
		if err != nil {
			t.Fatal(err)
		}
		bad := intervalAgainstSpacing(r, f)
		if c.mismatch != (bad != "") {
			t.Fatalf("interval %v: spacing check says %q", c.interval, bad)
		}
		if c.mismatch && !strings.Contains(bad, "record 0.121 s, but the stream's samples are 0.109 s apart on average (4 samples") {
			t.Fatalf("interval %v: spacing check says %q", c.interval, bad)
		}
	}
}
