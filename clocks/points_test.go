package clocks

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
	"time"
)

// at is the time of sample i of a test window, in ns since the epoch.
func at(i int) int64 { return windowStart.Add(time.Duration(i) * time.Second).UnixNano() }

// pointLeg judges a leg with point evidence; offset, when not nil, is the
// record's utc_offset_s and zone its time_zone.
func pointLeg(t *testing.T, name string, ss []*Sample, ev *PointEvidence, offset *int, zone string) *Leg {
	t.Helper()
	r := recordOf(t, ss, StopPIDExit)
	r.Window.UTCOffsetS, r.Window.TimeZone = offset, zone
	l := NewLeg(LegFiles{Name: name, Engine: "e", Points: ev})
	l.judge(recordJSON(t, r), bytes.NewReader(streamOf(ss)), nil, false)
	if !l.Trusted() {
		t.Fatalf("leg not trusted: %v", l.Reasons)
	}
	return l
}

// wall is a UTC instant as a bench client in the zone of offset seconds
// east of UTC writes it: its wall clock, read as if UTC.
func wall(ns int64, offset int) time.Time {
	w := time.Unix(0, ns).In(time.FixedZone("", offset))
	return time.Date(w.Year(), w.Month(), w.Day(), w.Hour(), w.Minute(), w.Second(), 0, time.UTC)
}

func busyN(lp *LegPoint) int {
	if lp == nil {
		return -1
	}
	return lp.Busy
}

// A mark window holds the busy samples from its begin to its end, both
// included.
func TestMarkWindowIsInclusive(t *testing.T) {
	ev := &PointEvidence{MarksPath: "p.points.jsonl", Marks: []Mark{
		{Point: "1/inf", Span: Span{at(10), at(40)}},
		{Point: "2/inf", NoWindow: "its command exited 3 (line 4)"},
	}}
	l := pointLeg(t, "r1", window(boot13, flat(2470, 60), 0), ev, nil, "")
	if n := busyN(l.Points["1/inf"]); n != 31 {
		t.Fatalf("1/inf counts %d busy samples, want 31 (samples 10 to 40)", n)
	}
	if l.Points["2/inf"] != nil || l.PointNotes["2/inf"] != "its command exited 3 (line 4)" || l.PointSource != WindowMarks {
		t.Fatalf("2/inf %+v, note %q, source %q", l.Points["2/inf"], l.PointNotes["2/inf"], l.PointSource)
	}
}

// A vLLM date window is [date + 1 s − duration, date − 1 s], inclusive:
// date 10:15:53 and duration 30.877 s give 10:15:23.123 (sample 20) to
// 10:15:52.000 (after sample 48, before 49).
func TestDateWindowBounds(t *testing.T) {
	date := time.Date(2026, 8, 12, 10, 15, 53, 0, time.UTC)
	for _, c := range []struct {
		dur  float64
		want int
		note string
	}{
		{30.877, 29, ""},
		{30.876, 28, ""},
		{2.001, 0, ""},
		{2, -1, "vLLM duration 2 s ≤ 2 s: the window [date + 1 s − duration, date − 1 s] is empty"},
	} {
		ev := &PointEvidence{Dates: []DatePoint{{Point: "8/inf", Wall: date, DurationS: c.dur}}}
		l := pointLeg(t, "r1", window(boot13, flat(2470, 60), 0), ev, ptr(0), "")
		if n := busyN(l.Points["8/inf"]); n != c.want || l.PointNotes["8/inf"] != c.note {
			t.Errorf("duration %v: %d busy samples, note %q; want %d, %q", c.dur, n, l.PointNotes["8/inf"], c.want, c.note)
		}
	}
}

// The zone rule: of the host's offset and UTC, the one under which every
// date lies inside the clock window; neither, or both, gives no window
// and a warning.
func TestZoneRule(t *testing.T) {
	const host = 7200 // +02:00
	ss := window(boot13, flat(2470, 100), 0)
	dates := func(offset int) *PointEvidence {
		return &PointEvidence{Dates: []DatePoint{
			{Point: "1/inf", Wall: wall(at(40), offset), DurationS: 30},
			{Point: "2/inf", Wall: wall(at(80), offset), DurationS: 30},
		}}
	}
	for _, c := range []struct {
		name   string
		client int
		warn   string
	}{
		{"client in the host's zone", host, ""},
		{"client in UTC", 0, ""},
		{"client at -05:00", -5 * 3600, "vLLM dates lie inside the clock window (2026-08-12T10:15:03.123Z to 2026-08-12T10:16:42.123Z) under neither " +
			"the host's zone (+02:00) nor UTC; no point of the leg has a window: record the points with clockgate mark"},
	} {
		l := pointLeg(t, "r1", ss, dates(c.client), ptr(host), "")
		switch {
		case c.warn == "" && (len(l.Points) != 2 || len(l.PointWarnings) != 0 || busyN(l.Points["1/inf"]) != 28):
			t.Errorf("%s: windows %v, warnings %v", c.name, l.SortedPointLabels(), l.PointWarnings)
		case c.warn != "" && (len(l.Points) != 0 || len(l.PointWarnings) != 1 || l.PointWarnings[0] != c.warn || l.PointNotes["1/inf"] != "its vLLM date fits no one zone"):
			t.Errorf("%s: windows %v, warnings %q", c.name, l.SortedPointLabels(), l.PointWarnings)
		}
	}
	// A window of more than two hours holds dates read either way.
	long := window(boot13, flat(2470, 3*3600), 0)
	ev := &PointEvidence{Dates: []DatePoint{{Point: "1/inf", Wall: wall(at(9000), 0), DurationS: 30}}}
	l := pointLeg(t, "r1", long, ev, ptr(host), "")
	if len(l.Points) != 0 || len(l.PointWarnings) != 1 || !strings.Contains(l.PointWarnings[0], "under both the host's zone (+02:00) and UTC, so which one the bench client stamped them in is unknown") {
		t.Errorf("both zones: windows %v, warnings %q", l.SortedPointLabels(), l.PointWarnings)
	}
	// A record without utc_offset_s: the dates are not consulted.
	l = pointLeg(t, "r1", ss, dates(0), nil, "")
	if l.PointSource != "" || l.Points != nil || !strings.Contains(l.noSource, "names no window.utc_offset_s") {
		t.Errorf("no offset: source %q, windows %v, %q", l.PointSource, l.Points, l.noSource)
	}
}

// A named zone gives each date its own offset: across the end of summer
// time in Europe/Berlin (2026-10-25 01:00 UTC), a date before it is read
// at +02:00 and one after at +01:00 (a fixed +02:00 would put the second
// an hour early, still inside the window, on the wrong samples).
func TestZoneNameAcrossDaylightSaving(t *testing.T) {
	start := time.Date(2026, 10, 24, 23, 30, 0, 0, time.UTC)
	var ss []*Sample
	for i := 0; i < 3*3600; i++ {
		s := gb10(i, boot13, 2470, 97)
		s.T = start.Add(time.Duration(i) * time.Second).Format("2006-01-02T15:04:05.000Z")
		ss = append(ss, s)
	}
	ts := func(i int) int64 { return start.Add(time.Duration(i) * time.Second).UnixNano() }
	ev := &PointEvidence{Dates: []DatePoint{
		{Point: "1/inf", Wall: wall(ts(1200), 7200), DurationS: 31}, // 23:50Z, 01:50 summer time
		{Point: "2/inf", Wall: wall(ts(9600), 3600), DurationS: 31}, // 02:10Z, 03:10 winter time
	}}
	l := pointLeg(t, "r1", ss, ev, ptr(7200), "Europe/Berlin")
	if len(l.Points) != 2 || len(l.PointWarnings) != 0 {
		t.Fatalf("windows %v, warnings %q", l.SortedPointLabels(), l.PointWarnings)
	}
	for p, i := range map[string]int{"1/inf": 1200, "2/inf": 9600} {
		if sp := l.Points[p].Span; sp.To != ts(i)-int64(time.Second) || sp.From != ts(i)-30*int64(time.Second) {
			t.Errorf("%s: window %s, want the 30 s before %s", p, sp, fmtNS(ts(i)))
		}
	}
}

// Two date windows that overlap: neither point has a window.
func TestOverlappingDateWindows(t *testing.T) {
	ev := &PointEvidence{Dates: []DatePoint{
		{Point: "1/inf", Wall: wall(at(40), 0), DurationS: 30},
		{Point: "2/inf", Wall: wall(at(60), 0), DurationS: 30},
		{Point: "4/inf", Wall: wall(at(95), 0), DurationS: 10},
	}}
	l := pointLeg(t, "r1", window(boot13, flat(2470, 100), 0), ev, ptr(0), "")
	if len(l.Points) != 1 || l.Points["4/inf"] == nil || l.PointNotes["1/inf"] != "its vLLM date window overlaps another point's" || len(l.PointWarnings) != 1 ||
		!strings.Contains(l.PointWarnings[0], "vLLM date windows overlap: 1/inf (2026-08-12T10:15:14.000Z to 2026-08-12T10:15:42.000Z) and 2/inf (2026-08-12T10:15:34.000Z to 2026-08-12T10:16:02.000Z); neither has a window") {
		t.Fatalf("windows %v, notes %v, warnings %q", l.SortedPointLabels(), l.PointNotes, l.PointWarnings)
	}
}

// The fold counts a window's free and power-managed samples by the same
// classification it makes for the leg: windows that tile the leg add up
// to the GPU's free and power-managed counts.
func TestWindowsCountTheFoldsClassification(t *testing.T) {
	ss := serving().window(boot13)
	n := len(ss)
	ev := &PointEvidence{MarksPath: "p", Marks: []Mark{
		{Point: "1/inf", Span: Span{at(0), at(n/3) - 1}},
		{Point: "2/inf", Span: Span{at(n / 3), at(n)}},
	}}
	l := pointLeg(t, "r1", ss, ev, nil, "")
	g := l.Fold.GPUs[0]
	free, _ := g.Free()
	freeN := 0
	for _, c := range free {
		freeN += c.N
	}
	a, b := l.Points["1/inf"], l.Points["2/inf"]
	sum := func(h map[int]int) int {
		k := 0
		for _, v := range h {
			k += v
		}
		return k
	}
	if a.PowerManaged+b.PowerManaged != g.PowerManaged() || sum(a.Free)+sum(b.Free) != freeN || a.Busy+b.Busy != 90 || a.PowerManaged == 0 || b.PowerManaged == 0 {
		t.Fatalf("windows: %d+%d power-managed, %d+%d free; the fold: %d power-managed, %d free", a.PowerManaged, b.PowerManaged, sum(a.Free), sum(b.Free), g.PowerManaged(), freeN)
	}
	if a.Free[1200] != 0 || b.Free[1500] != 0 {
		t.Fatalf("a capped clock counted free: %v %v", a.Free, b.Free)
	}
}

// pointArm is an arm of one leg whose point 8/inf is marked over its
// whole window of busy clocks.
func pointArm(t *testing.T, engine string, busy []int) *Arm {
	ev := &PointEvidence{MarksPath: "p", Marks: []Mark{{Point: "8/inf", Span: Span{at(0), at(len(busy))}}}}
	return Merge(engine, []*Leg{pointLeg(t, "r1", window(boot13, busy, 0), ev, nil, "")}, false)
}

// The point offset is exact at the bound: 2020 against 2000 MHz (1.00%)
// passes, 2021 fails; a mean off by more than the bound fails with the
// medians agreeing; under 30 free samples the point is too thin.
func TestPointOffset(t *testing.T) {
	base := pointArm(t, "vllm", flat(2000, 40))
	for _, c := range []struct {
		name   string
		busy   []int
		judged bool
		msg    string
	}{
		{"at the bound", flat(2020, 40), true, ""},
		{"over the median", flat(2021, 40), true, "point 8/inf, over its marks windows (40 free busy samples of fast, 40 of vllm): free median offset 1.05% > 1.0%: " +
			"fast 2021 MHz, vllm 2000 MHz (estimated effect 0.79% at transfer 0.7548); the free mean offset 1.05% is over it too (fast 2021.00 MHz, vllm 2000.00 MHz)"},
		{"over the mean", append(flat(2000, 21), flat(1950, 19)...), true, "point 8/inf, over its marks windows (40 free busy samples of fast, 40 of vllm): free mean offset 1.19% > 1.0%: " +
			"fast 1976.25 MHz, vllm 2000.00 MHz (estimated effect 0.90% at transfer 0.7548), though the medians agree (fast 2000 MHz, vllm 2000 MHz, offset 0.00%)"},
		{"29 free samples", flat(2100, 29), false, ""},
		{"30 free samples", flat(2100, 30), true, "free median offset 5.00% > 1.0%"},
	} {
		pc, r, missing := ComparePoint("8/inf", pointArm(t, "fast", c.busy), base)
		switch {
		case len(missing) > 0 || pc.Judged != c.judged:
			t.Errorf("%s: judged %v (%s), missing %v", c.name, pc.Judged, pc.NotJudged, missing)
		case c.msg == "" && r != nil:
			t.Errorf("%s: %s", c.name, r.Message)
		case c.msg != "" && (r == nil || r.Code != CodePointOffset || !strings.Contains(r.Message, c.msg)):
			t.Errorf("%s: reason %+v, want %s", c.name, r, c.msg)
		}
		if !c.judged && pc.NotJudged != "too thin: fast 29, vllm 40 free busy samples, under 30" {
			t.Errorf("%s: %q", c.name, pc.NotJudged)
		}
	}
	// A leg without a window for the point: not judged, and named.
	none := Merge("fast", []*Leg{pointLeg(t, "r1", window(boot13, flat(2000, 40), 0), &PointEvidence{MarksPath: "x.points.jsonl"}, nil, "")}, false)
	pc, r, missing := ComparePoint("8/inf", none, base)
	if pc.Judged || r != nil || len(missing) != 1 || missing[0].Why != "no begin line for it in x.points.jsonl" || pc.Window != nil {
		t.Errorf("judged %v, reason %v, missing %+v", pc.Judged, r, missing)
	}
}

// Where a leg has marks, its vLLM dates are not consulted: a date that
// would give 8/inf a window gives none, and the zone rule is not run.
func TestMarksWinOverDates(t *testing.T) {
	ev := &PointEvidence{MarksPath: "p.points.jsonl", Marks: []Mark{{Point: "1/inf", Span: Span{at(10), at(40)}}},
		Dates: []DatePoint{{Point: "1/inf", Wall: wall(at(80), 0), DurationS: 30}, {Point: "8/inf", Wall: wall(at(80), 0), DurationS: 30}}}
	l := pointLeg(t, "r1", window(boot13, flat(2470, 100), 0), ev, ptr(0), "")
	if l.PointSource != WindowMarks || len(l.Points) != 1 || busyN(l.Points["1/inf"]) != 31 || l.Points["1/inf"].Source != WindowMarks {
		t.Fatalf("source %q, windows %v", l.PointSource, l.SortedPointLabels())
	}
}

// BenchmarkFoldWindows folds a 300 000-row stream with no windows and with
// twenty: the windows cost a scan of their spans per busy sample, and a
// histogram each.
func BenchmarkFoldWindows(b *testing.B) {
	const n = 300000
	ss := window(boot13, repeat([]int{2460, 2470, 2475}, n/3), 0)
	stream := streamOf(ss)
	var spans []Span
	for k := 0; k < 20; k++ {
		spans = append(spans, Span{at(k * n / 20), at((k+1)*n/20 - 1)})
	}
	for _, c := range []struct {
		name  string
		spans []Span
	}{{"none", nil}, {"20", spans}} {
		b.Run(c.name, func(b *testing.B) {
			b.SetBytes(int64(len(stream)))
			for range b.N {
				f := NewFold()
				if c.spans != nil {
					f.Windows = NewWindows(c.spans)
				}
				if err := f.FoldStream(bytes.NewReader(stream), "s"); err != nil {
					b.Fatal(err)
				}
				if c.spans != nil && f.Windows.Counts[19].Busy != n/20 {
					b.Fatalf("last window %d busy", f.Windows.Counts[19].Busy)
				}
			}
		})
	}
}

// A leg of several GPUs pools its GPUs' busy samples in a window: two GPUs
// read each second give twice the samples of one.
func TestWindowPoolsTheLegsGPUs(t *testing.T) {
	var ss []*Sample
	for i := 0; i < 60; i++ {
		for k := 0; k < 2; k++ {
			s := h100(i, boot13, 1980-15*k, 97)
			s.GPUIndex, s.GPUUUID = k, fmt.Sprintf("GPU-9a8b7c6d-5e4f-3a2b-1c0d-e9f8a7b6c5d%d", k)
			ss = append(ss, s)
		}
	}
	ev := &PointEvidence{MarksPath: "p", Marks: []Mark{{Point: "8/inf", Span: Span{at(10), at(19)}}}}
	l := pointLeg(t, "r1", ss, ev, nil, "")
	lp := l.Points["8/inf"]
	if lp == nil || lp.Busy != 20 || lp.Free[1980] != 10 || lp.Free[1965] != 10 {
		t.Fatalf("window %+v", lp)
	}
}
