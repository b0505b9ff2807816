package clocks

import (
	"bytes"
	"strings"
	"testing"
	"time"
)

// TestRebuiltIsPartial: a record clockgate build wrote says nothing of where
// its window ended, so its leg is never eligible.
func TestRebuiltIsPartial(t *testing.T) {
	l := legOf(t, "r1", cleanWindow(bootF6), func(r *Record) { r.Window.StopReason = StopRebuilt })
	wantCodes(t, l.Reasons, CodePartialWindow)
	wantReason(t, l.Reasons, CodePartialWindow, "stop_reason rebuilt: the record was recomputed from its stream by clockgate build, so where the window ended is unknown")
}

// TestRefusedLeg: a sampler that refused mid-window writes its record with
// the refusal; the leg carries clock.refused quoting it.
func TestRefusedLeg(t *testing.T) {
	why := `nvidia-smi -i 0: clocks.sm: "[N/A]" is not a number`
	l := legOf(t, "r1", cleanWindow(bootF6), func(r *Record) { r.Window.StopReason = StopRefused; r.Refusal = why })
	wantCodes(t, l.Reasons, CodeRefused)
	wantReason(t, l.Reasons, CodeRefused, "stop_reason refused: the sampler refused mid-window: "+why)
}

func TestRefusalField(t *testing.T) {
	for name, tc := range map[string]struct {
		edit func(*Record)
		want string
	}{
		"refused without a refusal": {func(r *Record) { r.Window.StopReason = StopRefused }, "refusal: missing: stop_reason refused needs the sampler's refusal"},
		"a refusal on a clean stop": {func(r *Record) { r.Refusal = "x" }, `refusal: present, but stop_reason is "pid-exit", not refused`},
		"an empty refusal":          {func(r *Record) { r.Window.StopReason = StopRefused; r.Refusal = "" }, "refusal: missing"},
	} {
		t.Run(name, func(t *testing.T) {
			r := recordOf(t, cleanWindow(bootF6), StopPIDExit)
			tc.edit(r)
			_, err := ParseRecord(recordJSON(t, r))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want %q", err, tc.want)
			}
		})
	}
	// A refusal present but empty, written by hand, is refused by name.
	data := bytes.Replace(recordJSON(t, recordOf(t, cleanWindow(bootF6), StopRefused)), []byte(`"window"`), []byte(`"refusal":"","window"`), 1)
	if _, err := ParseRecord(data); err == nil || !strings.Contains(err.Error(), "refusal: empty string") {
		t.Fatalf("err = %v", err)
	}
}

// gapAfter delays every sample from index i on by extra.
func gapAfter(ss []*Sample, i int, extra time.Duration) []*Sample {
	for _, s := range ss[i:] {
		t, _ := time.Parse(time.RFC3339Nano, s.T)
		s.T = t.Add(extra).Format("2006-01-02T15:04:05.000Z")
	}
	return ss
}

// TestCoverageAtTheBoundary: samples one interval apart but for one gap;
// a gap of exactly MaxGapIntervals intervals passes, a millisecond more is
// clock.coverage naming the gap, the bound and where it was.
func TestCoverageAtTheBoundary(t *testing.T) {
	{
		// 1 s interval: the gap between samples 40 and 41 is 1 s + extra.
		at := legOf(t, "r1", gapAfter(cleanWindow(bootF6), 40, 2*time.Second), nil)
		wantCodes(t, at.Reasons)
		over := legOf(t, "r1", gapAfter(cleanWindow(bootF6), 40, 2001*time.Millisecond), nil)
		wantCodes(t, over.Reasons, CodeCoverage)
		wantReason(t, over.Reasons, CodeCoverage, "largest gap between samples 3.001 s > 3 × interval_s 1 s = 3.000 s",
			"from 2026-08-12T10:15:42.123Z to 2026-08-12T10:15:45.124Z (line 41)")
		if at.Record.Window.MaxGapS == nil || *at.Record.Window.MaxGapS != 3 || *over.Record.Window.MaxGapS != 3.001 {
			t.Fatalf("max_gap_s %v, %v", at.Record.Window.MaxGapS, over.Record.Window.MaxGapS)
		}
	}
}

// TestCoverageFollowsTheInterval: the sampler that promised 100 ms and read
// once a second (a 0.6 s nvidia-smi behind --interval 100ms) fails coverage
// on every gap; at 300 ms it passes and at 301 ms it does not.
func TestCoverageFollowsTheInterval(t *testing.T) {
	l := legOf(t, "r1", cleanWindow(bootF6), func(r *Record) { r.Window.IntervalS = 0.1 })
	wantCodes(t, l.Reasons, CodeCoverage)
	wantReason(t, l.Reasons, CodeCoverage, "largest gap between samples 1.000 s > 3 × interval_s 0.1 s = 0.300 s")

	fast := func(gapMS int) []*Sample {
		ss := cleanWindow(bootF6)
		for i, s := range ss {
			s.T = windowStart.Add(time.Duration(i) * 100 * time.Millisecond).Format("2006-01-02T15:04:05.000Z")
		}
		return gapAfter(ss, 20, time.Duration(gapMS-100)*time.Millisecond)
	}
	interval := func(r *Record) { r.Window.IntervalS = 0.1 }
	wantCodes(t, legOf(t, "r1", fast(300), interval).Reasons)
	l = legOf(t, "r1", fast(301), interval)
	wantCodes(t, l.Reasons, CodeCoverage)
	wantReason(t, l.Reasons, CodeCoverage, "0.301 s > 3 × interval_s 0.1 s = 0.300 s")
}

// TestMaxGapReconciled: a record's max_gap_s is the stream's, to the
// millisecond; a record written before the field existed has none and is
// still judged on its stream's gaps.
func TestMaxGapReconciled(t *testing.T) {
	set := func(g float64) func(*Record) { return func(r *Record) { r.Window.MaxGapS = &g } }
	wantCodes(t, legOf(t, "r1", cleanWindow(bootF6), set(1.0004)).Reasons)
	l := legOf(t, "r1", cleanWindow(bootF6), set(1.0006))
	wantCodes(t, l.Reasons, CodeStreamMismatch)
	wantReason(t, l.Reasons, CodeStreamMismatch, "window.max_gap_s: record 1.0006, stream 1")

	none := func(r *Record) { r.Window.MaxGapS = nil }
	wantCodes(t, legOf(t, "r1", cleanWindow(bootF6), none).Reasons)
	l = legOf(t, "r1", gapAfter(cleanWindow(bootF6), 10, 5*time.Second), none)
	wantCodes(t, l.Reasons, CodeCoverage)

	r := recordOf(t, cleanWindow(bootF6), StopPIDExit)
	g := -1.0
	r.Window.MaxGapS = &g
	if _, err := ParseRecord(recordJSON(t, r)); err == nil || !strings.Contains(err.Error(), "window.max_gap_s: want a number of seconds ≥ 0, found number -1") {
		t.Fatalf("err = %v", err)
	}
}

// TestGapOverYearsDoesNotOverflow: two samples centuries apart give a gap
// that fails coverage, never a wrapped negative one that passes.
func TestGapOverYearsDoesNotOverflow(t *testing.T) {
	ss := cleanWindow(bootF6)
	ss[0].T = "0001-01-01T00:00:00.000Z"
	f, err := FoldStream(bytes.NewReader(streamOf(ss)))
	if err != nil {
		t.Fatal(err)
	}
	if f.MaxGapNS < int64(maxGapSeconds)*1e9 {
		t.Fatalf("gap %d ns", f.MaxGapNS)
	}
}
