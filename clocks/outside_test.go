package clocks

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// timedLeg judges a 60-sample window (at(0) to at(59)) whose bench
// results say times; offset, when not nil, is the record's utc_offset_s
// and zone its time_zone.
func timedLeg(t *testing.T, times []PointTime, offset *int, zone string) *Leg {
	t.Helper()
	return pointLeg(t, "r1", window(boot13, flat(2470, 60), 0), &PointEvidence{Times: times}, offset, zone)
}

// An exact window overlaps the clock window when they share an instant:
// a point ending exactly at the window's first sample, or starting exactly
// at its last, is inside; one second either side is outside, and the
// message names the file, the point, its time and the window.
func TestOutsideWindowExactBoundary(t *testing.T) {
	sec := int64(time.Second)
	for _, c := range []struct {
		name    string
		span    Span
		outside bool
	}{
		{"ends at the first sample", Span{at(0) - 30*sec, at(0)}, false},
		{"ends a second before it", Span{at(0) - 30*sec, at(0) - sec}, true},
		{"starts at the last sample", Span{at(59), at(59) + 30*sec}, false},
		{"starts a second after it", Span{at(59) + sec, at(59) + 30*sec}, true},
		{"inside", Span{at(10), at(20)}, false},
		{"around it", Span{at(0) - sec, at(59) + sec}, false},
	} {
		sp := c.span
		l := timedLeg(t, []PointTime{{Point: "8/inf", File: "bench/m/e/r1/p.json", Exact: &sp}}, ptr(0), "")
		if !c.outside {
			wantNoCode(t, l.Reasons, CodeBenchOutsideWindow)
			continue
		}
		wantCodes(t, l.Reasons, CodeBenchOutsideWindow)
		wantReason(t, l.Reasons, CodeBenchOutsideWindow, "bench/m/e/r1/p.json: point 8/inf ran "+sp.String()+" (its own epoch window), outside the leg's clock window 2026-08-12T10:15:03.123Z to 2026-08-12T10:16:02.123Z: these results are no evidence about this clock")
	}
}

// A date places its run in [date − duration − 1 s, date + 1 s]: a date a
// second before the window's first sample still touches it (its run may
// have ended then), two seconds before does not; a run whose earliest
// start is the last sample touches it, a second later does not.
func TestOutsideWindowDateBoundary(t *testing.T) {
	first := time.Date(2026, 8, 12, 10, 15, 3, 0, time.UTC) // at(0) is 10:15:03.123
	for _, c := range []struct {
		name    string
		date    time.Time
		dur     float64
		outside bool
	}{
		{"stamped in the first sample's second", first, 5, false},
		{"stamped the second before", first.Add(-time.Second), 5, true},
		// from = date − 0.877 s − 1 s = 10:16:02.123, the last sample.
		{"earliest start at the last sample", time.Date(2026, 8, 12, 10, 16, 4, 0, time.UTC), 0.877, false},
		{"earliest start a second after it", time.Date(2026, 8, 12, 10, 16, 5, 0, time.UTC), 0.877, true},
	} {
		p := PointTime{Point: "8/inf", File: "bench/m/e/r1/p.json", Date: c.date.Format("20060102-150405"), Wall: c.date, HasWall: true, DurationS: c.dur}
		l := timedLeg(t, []PointTime{p}, ptr(0), "Etc/UTC")
		if !c.outside {
			wantNoCode(t, l.Reasons, CodeBenchOutsideWindow)
			continue
		}
		wantCodes(t, l.Reasons, CodeBenchOutsideWindow)
		wantReason(t, l.Reasons, CodeBenchOutsideWindow, "bench/m/e/r1/p.json: point 8/inf ran, by its date "+p.Date,
			"under the host's zone (Etc/UTC, +00:00 at the first sample), which is UTC's too, outside the leg's clock window 2026-08-12T10:15:03.123Z to 2026-08-12T10:16:02.123Z")
	}
}

// The admissible zones are the host's and UTC: a date inside the window
// under either is no reason; under neither, the reason names both.
func TestOutsideWindowZones(t *testing.T) {
	mid := at(30)
	berlin := 7200
	for _, c := range []struct {
		name    string
		clientS int
		outside bool
	}{
		{"stamped in the host's zone", berlin, false},
		{"stamped in UTC", 0, false},
		{"stamped in New York", -4 * 3600, true},
	} {
		p := PointTime{Point: "8/inf", File: "f.json", Date: "d", Wall: wall(mid, c.clientS), HasWall: true, DurationS: 10}
		l := timedLeg(t, []PointTime{p}, &berlin, "")
		if !c.outside {
			wantNoCode(t, l.Reasons, CodeBenchOutsideWindow)
			continue
		}
		wantReason(t, l.Reasons, CodeBenchOutsideWindow, "f.json: point 8/inf ran, by its date d and duration 10 s (within date − duration − 1 s to date + 1 s), at 2026-08-12T04:15:22.000Z to 2026-08-12T04:15:34.000Z under the host's zone (+02:00) and at 2026-08-12T06:15:22.000Z to 2026-08-12T06:15:34.000Z under UTC, outside")
	}
}

// A record that names no zone admits every offset within ±18 h: a date
// 18 h away from the window touches it, one further does not, and the
// message says to import with --tz.
func TestOutsideWindowNoZone(t *testing.T) {
	hour := int64(time.Hour)
	for _, c := range []struct {
		name    string
		ns      int64
		outside bool
	}{
		{"the same day", at(30), false},
		{"18 h after the window", at(59) + 18*hour, false},
		{"18 h and 3 s after it", at(59) + 18*hour + 3*int64(time.Second), true},
		{"three months before it", at(0) - 90*24*hour, true},
	} {
		p := PointTime{Point: "8/inf", File: "f.json", Date: "d", Wall: wall(c.ns, 0), HasWall: true}
		l := timedLeg(t, []PointTime{p}, nil, "")
		if !c.outside {
			wantNoCode(t, l.Reasons, CodeBenchOutsideWindow)
			continue
		}
		wantReason(t, l.Reasons, CodeBenchOutsideWindow, "f.json: point 8/inf ran, by its date d (within date − 1 s to date + 1 s), at ", "under any zone from -18:00 to +18:00 (the clock record names no zone: import with --tz), outside the leg's clock window")
	}
}

// Each result is checked on its own; one without a time is not.
func TestOutsideWindowEachResult(t *testing.T) {
	out := Span{at(0) - 100*int64(time.Second), at(0) - 50*int64(time.Second)}
	in := Span{at(1), at(2)}
	l := timedLeg(t, []PointTime{
		{Point: "1/inf", File: "a.json", Exact: &out},
		{Point: "2/inf", File: "b.json", Exact: &in},
		{Point: "4/inf", File: "c.json"},
		{Point: "8/inf", File: "d.json", Exact: &out},
	}, ptr(0), "")
	wantCodes(t, l.Reasons, CodeBenchOutsideWindow, CodeBenchOutsideWindow)
	for i, want := range []string{"a.json: point 1/inf ran ", "d.json: point 8/inf ran "} {
		if m := l.Reasons[i].Message; !strings.HasPrefix(m, want) {
			t.Errorf("reason %d: %q, want it to start %q", i, m, want)
		}
	}
}

// importedLeg judges an imported 60-sample window (with its import.json)
// whose bench results say times, and marks when given.
func importedLeg(t *testing.T, ev *PointEvidence) *Leg {
	t.Helper()
	dir := t.TempDir()
	ss := window(boot13, flat(2470, 60), 0)
	r := recordOf(t, ss, StopImported)
	im := `{"sha256":{"log.csv":"00"},"format":"nvidia-smi-csv","columns":{},"time_zone":"","given":{},"dropped_lines":[],"unproven":[],"unproven_why":{},"boot_counters":[]}`
	for name, data := range map[string][]byte{"r1.summary.json": recordJSON(t, r), "r1.samples.jsonl": streamOf(ss), "r1.import.json": []byte(im)} {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	l := LoadLeg(LegFiles{Name: "r1", Engine: "e", Root: dir, RecordPath: "r1.summary.json", StreamPath: "r1.samples.jsonl", Points: ev})
	if !l.Trusted() || l.Import == nil {
		t.Fatalf("leg not trusted, or not imported: %v", l.Reasons)
	}
	return l
}

// An imported leg none of whose results has a time carries
// clock.unproven_window; one result with a time, or a mark, ties them;
// a sampled leg without times does not carry it (the sampler ran around
// the bench).
func TestUnprovenWindow(t *testing.T) {
	untimed := []PointTime{{Point: "1/inf", File: "a.json"}, {Point: "8/inf", File: "b.json", DurationS: 30}}
	l := importedLeg(t, &PointEvidence{Times: untimed})
	wantCodes(t, l.Reasons, CodeUnprovenWindow)
	wantReason(t, l.Reasons, CodeUnprovenWindow, "imported record: none of the leg's 2 bench results has a time (no date, no epoch window) and no clockgate mark gives one, so nothing ties these results to this log; keep each result's time")

	in := Span{at(1), at(2)}
	timed := append([]PointTime{{Point: "2/inf", File: "c.json", Exact: &in}}, untimed...)
	wantCodes(t, importedLeg(t, &PointEvidence{Times: timed}).Reasons)

	marked := &PointEvidence{MarksPath: "r1.points.jsonl", Marks: []Mark{{Point: "1/inf", Span: in}}, Times: untimed}
	wantCodes(t, importedLeg(t, marked).Reasons)

	badMarks := &PointEvidence{MarksPath: "r1.points.jsonl", Marks: []Mark{{Point: "1/inf", NoWindow: "its command exited 1 (line 2)"}}, Times: untimed}
	wantCodes(t, importedLeg(t, badMarks).Reasons, CodeUnprovenWindow)

	wantCodes(t, importedLeg(t, &PointEvidence{}).Reasons)
	wantCodes(t, timedLeg(t, untimed, nil, "").Reasons)
}

// An imported record given a zone (import --tz) places dates as a sampled
// one does: a date of another month is outside under both zones.
func TestStampZone(t *testing.T) {
	w := Window{FirstT: "2026-11-03T10:00:00.000Z"}
	loc, err := time.LoadLocation("America/Los_Angeles")
	if err != nil {
		t.Fatal(err)
	}
	w.StampZone(loc, "America/Los_Angeles")
	if w.UTCOffsetS == nil || *w.UTCOffsetS != -8*3600 || w.TimeZone != "America/Los_Angeles" {
		t.Fatalf("utc_offset_s %v, time_zone %q; want -28800 (PST on 3 November), America/Los_Angeles", w.UTCOffsetS, w.TimeZone)
	}
	w = Window{FirstT: "2026-08-16T10:00:00.000Z"}
	w.StampZone(loc, "")
	if w.UTCOffsetS == nil || *w.UTCOffsetS != -7*3600 || w.TimeZone != "" {
		t.Fatalf("utc_offset_s %v, time_zone %q; want -25200 (PDT in August)", w.UTCOffsetS, w.TimeZone)
	}
}

// A clockgate mark ties a point to the clock only where its window
// overlaps the leg's clock window: a mark ending at the first sample, or
// starting at the last, is inside; a millisecond either side it is
// bench.outside_window naming the points file, the point, its window and
// the clock window, on a sampled leg as on an imported one; and on an
// imported leg whose results carry no time it does not stop
// clock.unproven_window.
func TestOutsideWindowMark(t *testing.T) {
	ms := int64(time.Millisecond)
	sec := int64(time.Second)
	untimed := []PointTime{{Point: "1/inf", File: "a.json"}}
	for _, c := range []struct {
		name    string
		span    Span
		outside bool
	}{
		{"ends at the first sample", Span{at(0) - 30*sec, at(0)}, false},
		{"ends a millisecond before it", Span{at(0) - 30*sec, at(0) - ms}, true},
		{"starts at the last sample", Span{at(59), at(59) + 30*sec}, false},
		{"starts a millisecond after it", Span{at(59) + ms, at(59) + 30*sec}, true},
		{"90 days later", Span{at(0) + 90*24*int64(time.Hour), at(0) + 90*24*int64(time.Hour) + 30*sec}, true},
	} {
		ev := func() *PointEvidence {
			return &PointEvidence{MarksPath: "clocks/m/e/r1.points.jsonl", Marks: []Mark{{Point: "1/inf", Span: c.span}}, Times: untimed}
		}
		imported := importedLeg(t, ev())
		sampled := pointLeg(t, "r1", window(boot13, flat(2470, 60), 0), ev(), ptr(0), "")
		if !c.outside {
			wantCodes(t, imported.Reasons)
			wantNoCode(t, sampled.Reasons, CodeBenchOutsideWindow)
			continue
		}
		msg := "clocks/m/e/r1.points.jsonl: point 1/inf ran " + c.span.String() + " (its clockgate mark, in UTC), outside the leg's clock window 2026-08-12T10:15:03.123Z to 2026-08-12T10:16:02.123Z: nothing ties these results to this clock"
		wantCodes(t, imported.Reasons, CodeBenchOutsideWindow, CodeUnprovenWindow)
		wantReason(t, imported.Reasons, CodeBenchOutsideWindow, msg)
		wantReason(t, sampled.Reasons, CodeBenchOutsideWindow, msg)
	}
}

// An imported leg whose results' dates are in no format clockgate reads
// carries clock.unproven_window saying so, not that they have no date.
func TestUnprovenWindowUnreadDate(t *testing.T) {
	bad := []PointTime{{Point: "1/inf", File: "a.json", Date: "03/11/2026 18:00", DateUnread: true}}
	l := importedLeg(t, &PointEvidence{Times: bad})
	wantCodes(t, l.Reasons, CodeUnprovenWindow)
	wantReason(t, l.Reasons, CodeUnprovenWindow, `none of the leg's 1 bench results has a time (a.json (point 1/inf) has the date "03/11/2026 18:00", in neither %Y%m%d-%H%M%S nor %Y-%m-%d %H:%M:%S, so clockgate cannot read it) and no clockgate mark gives one`)

	mixed := append(bad, PointTime{Point: "8/inf", File: "b.json"})
	wantReason(t, importedLeg(t, &PointEvidence{Times: mixed}).Reasons, CodeUnprovenWindow,
		`none of the leg's 2 bench results has a time (a.json (point 1/inf) has the date "03/11/2026 18:00", in neither %Y%m%d-%H%M%S nor %Y-%m-%d %H:%M:%S; the rest have no date and no epoch window) and no clockgate mark gives one`)
}
