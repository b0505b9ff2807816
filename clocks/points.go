package clocks

import (
	"fmt"
	"math"
	"sort"
	"strings"
	"time"

	"github.com/clockgate/clockgate/strictjson"
)

// The sources of a point window (SPEC §10.2), as summary.json names them.
const (
	WindowMarks    = "marks"
	WindowVLLMDate = "vllm-date"
	WindowMixed    = "mixed"
	// WindowBench is the exact epoch window a bench result states
	// (AIPerf's profiling records, GuideLLM's start_time and end_time,
	// InferenceX's benchmark_*_time_unix; SPEC §12.5).
	WindowBench = "bench-window"
)

// MinPointDurationNS is the shortest vLLM duration that gives a point a
// window: the window is [date + 1 s − duration, date − 1 s], empty at
// 2 s and under.
const MinPointDurationNS = 2 * int64(time.Second)

// dateSlackNS is how far inside a vLLM date the window stays: date is
// truncated to the second (up to 1 s early) and stamped after the metrics
// are computed (later than the run's end).
const dateSlackNS = int64(time.Second)

// Span is a time window, in nanoseconds since the Unix epoch, both ends
// included.
type Span struct{ From, To int64 }

// contains reports whether the instant t lies in the span.
func (s Span) contains(t int64) bool { return t >= s.From && t <= s.To }

// overlaps reports whether two spans share an instant.
func (s Span) overlaps(o Span) bool { return s.From <= o.To && o.From <= s.To }

// String prints the span in the sampler's time format, in UTC.
func (s Span) String() string { return fmtNS(s.From) + " to " + fmtNS(s.To) }

func fmtNS(ns int64) string {
	return time.Unix(0, ns).UTC().Format("2006-01-02T15:04:05.000Z")
}

// Mark is one point's window from clockgate mark's begin and end lines,
// or why it has none.
type Mark struct {
	// Point is the point as the report prints it: "8/inf".
	Point string
	Span  Span
	// NoWindow, when set, says why the point has no window (a begin with
	// no end, a non-zero exit); Span is then unset.
	NoWindow string
}

// DatePoint is a vLLM result's own timestamp: the wall-clock time it
// was written, in a zone it does not name, and its duration.
type DatePoint struct {
	// Point is the point as the report prints it: "8/inf".
	Point string
	// Wall is date as read, as if it were UTC: its fields are the bench
	// host's wall clock.
	Wall time.Time
	// DurationS is the result's duration, in seconds.
	DurationS float64
	// NoWindow, when set, says why the point has no window (no date, a
	// format clockgate does not read, no duration).
	NoWindow string
}

// PointEvidence is what a leg's tree holds of its points' windows:
// clockgate mark's lines, or vLLM's dates. Marks win: with Marks set,
// Dates are not consulted.
type PointEvidence struct {
	// MarksPath, when not "", names the leg's points file; Marks are its
	// points, MarksInvalid why it cannot be read (then no point of the leg
	// has a window).
	MarksPath    string
	Marks        []Mark
	MarksInvalid string
	Dates        []DatePoint
	// Times are what every bench result of the leg says of when it ran,
	// marks or not: each known time must overlap the leg's clock window
	// (SPEC §12.1.1).
	Times []PointTime
	// Exact are the points' exact epoch windows as their bench results
	// state them (or why a point has none); with Exact set and no marks,
	// Dates are not consulted.
	Exact []Mark
}

// WindowCount is what one point window of a leg saw: its busy samples,
// free and power-managed, over every GPU of the leg.
type WindowCount struct {
	Busy, PowerManaged int
	// Free counts the free busy samples per SM clock value, in MHz;
	// FreeSum adds them up.
	Free    map[int]int
	FreeSum Sum
}

// Windows are the point windows a fold counts busy samples into: each
// busy sample adds to every window it lies in, once the fold knows
// whether it was free.
type Windows struct {
	Spans  []Span
	Counts []WindowCount
}

// NewWindows returns windows that count into each of spans.
func NewWindows(spans []Span) *Windows {
	w := &Windows{Spans: spans, Counts: make([]WindowCount, len(spans))}
	for i := range w.Counts {
		w.Counts[i].Free = map[int]int{}
	}
	return w
}

// count adds a busy sample at sec.nsec of sm MHz to every window it lies in.
func (w *Windows) count(sec, nsec int64, sm int, pm bool) {
	if w == nil {
		return
	}
	t := sec*1e9 + nsec
	for i, s := range w.Spans {
		if !s.contains(t) {
			continue
		}
		c := &w.Counts[i]
		c.Busy++
		if pm {
			c.PowerManaged++
			continue
		}
		c.Free[sm]++
		c.FreeSum.Add(uint64(sm))
	}
}

// LegPoint is one point's window in a leg and what it saw.
type LegPoint struct {
	Source string
	Span   Span
	WindowCount
	// Energy is the leg's energy over the window (SPEC §11.3).
	Energy *LegEnergy
}

// candidate is one reading of a leg's windows: the marks, or the dates
// under one zone.
type candidate struct {
	name   string
	points []string
	spans  []Span
	first  int // index of its first span in the fold's windows
}

// pointCandidates are the windows a leg's evidence can give: its marks,
// or its vLLM dates read in the host's zone and in UTC (equal readings
// count as one). Points without a window are noted in l.PointNotes.
func (l *Leg) pointCandidates(ev *PointEvidence, rec *Record) []candidate {
	l.PointNotes = map[string]string{}
	switch {
	case ev == nil:
		return nil
	case ev.MarksPath != "":
		l.PointSource = WindowMarks
		if ev.MarksInvalid != "" {
			l.PointWarnings = append(l.PointWarnings, ev.MarksInvalid)
			return nil
		}
		c := candidate{name: WindowMarks}
		for _, m := range ev.Marks {
			if m.NoWindow != "" {
				l.PointNotes[m.Point] = m.NoWindow
				continue
			}
			c.points, c.spans = append(c.points, m.Point), append(c.spans, m.Span)
		}
		return []candidate{c}
	case len(ev.Exact) > 0:
		l.PointSource = WindowBench
		c := candidate{name: WindowBench}
		for _, m := range ev.Exact {
			if m.NoWindow != "" {
				l.PointNotes[m.Point] = m.NoWindow
				continue
			}
			c.points, c.spans = append(c.points, m.Point), append(c.spans, m.Span)
		}
		return []candidate{c}
	case len(ev.Dates) == 0:
		return nil
	case rec.Window.UTCOffsetS == nil:
		// A record written before the sampler recorded its zone cannot
		// place a wall-clock date in time: the dates are not consulted.
		l.noSource = "its clock record names no window.utc_offset_s (written before the sampler recorded its zone), so its vLLM dates cannot be placed in time"
		return nil
	}
	l.PointSource = WindowVLLMDate
	host, hostName := hostZone(rec.Window)
	hc := candidate{name: "the host's zone (" + hostName + ")"}
	uc := candidate{name: "UTC"}
	for _, d := range ev.Dates {
		if d.NoWindow != "" {
			l.PointNotes[d.Point] = d.NoWindow
			continue
		}
		if _, why := DateSpan(d.Wall, time.UTC, d.DurationS); why != "" {
			l.PointNotes[d.Point] = why
			continue
		}
		for _, c := range []*candidate{&hc, &uc} {
			loc := time.UTC
			if c == &hc {
				loc = host
			}
			sp, _ := DateSpan(d.Wall, loc, d.DurationS)
			c.points = append(c.points, d.Point)
			c.spans = append(c.spans, sp)
		}
	}
	if len(hc.spans) == 0 {
		return nil
	}
	if sameSpans(hc.spans, uc.spans) {
		return []candidate{hc}
	}
	return []candidate{hc, uc}
}

// hostZone is the bench host's zone as the record names it: its IANA
// zone where Go knows it (each date then takes its own offset, across a
// daylight-saving change too), else the fixed offset at the first sample.
func hostZone(w Window) (*time.Location, string) {
	off := *w.UTCOffsetS
	name := fmtOffset(off)
	if w.TimeZone != "" {
		if loc, err := time.LoadLocation(w.TimeZone); err == nil {
			return loc, w.TimeZone + ", " + name + " at the first sample"
		}
	}
	return time.FixedZone(name, off), name
}

// fmtOffset prints a UTC offset in seconds as +02:00.
func fmtOffset(s int) string {
	sign := '+'
	if s < 0 {
		sign, s = '-', -s
	}
	if s%60 != 0 {
		return fmt.Sprintf("%c%02d:%02d:%02d", sign, s/3600, s/60%60, s%60)
	}
	return fmt.Sprintf("%c%02d:%02d", sign, s/3600, s/60%60)
}

func sameSpans(a, b []Span) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// foldWindows is the windows of every candidate, for the fold to count.
func foldWindows(cs []candidate) *Windows {
	var spans []Span
	for i := range cs {
		cs[i].first = len(spans)
		spans = append(spans, cs[i].spans...)
	}
	if len(spans) == 0 {
		return nil
	}
	return NewWindows(spans)
}

// settlePoints chooses, once the stream is folded, the candidate the leg's
// points are read under, and keeps each point's window and counts. Dates
// are read under the one zone in which every dated point lies inside the
// leg's clock window; neither or both, and no point has a window.
func (l *Leg) settlePoints(cs []candidate, f *Fold) {
	if len(cs) == 0 {
		return
	}
	inside := func(c candidate) bool {
		win := Span{From: f.firstSec*1e9 + f.firstNsec, To: f.lastSec*1e9 + f.lastNsec}
		for _, s := range c.spans {
			if s.From < win.From || s.To > win.To {
				return false
			}
		}
		return true
	}
	use := &cs[0]
	if cs[0].name != WindowMarks && cs[0].name != WindowBench {
		var fit []*candidate
		for i := range cs {
			if inside(cs[i]) {
				fit = append(fit, &cs[i])
			}
		}
		if len(fit) != 1 {
			var how string
			switch {
			case len(cs) == 1:
				how = fmt.Sprintf("under no zone: not under %s, which is UTC's too", cs[0].name)
			case len(fit) == 0:
				how = fmt.Sprintf("under neither %s nor %s", cs[0].name, cs[1].name)
			default:
				how = fmt.Sprintf("under both %s and %s, so which one the bench client stamped them in is unknown", cs[0].name, cs[1].name)
			}
			l.PointWarnings = append(l.PointWarnings, fmt.Sprintf(
				"vLLM dates lie inside the clock window (%s to %s) %s; no point of the leg has a window: record the points with clockgate mark",
				f.FirstT, f.LastT, how))
			for _, p := range cs[0].points {
				l.PointNotes[p] = "its vLLM date fits no one zone"
			}
			return
		}
		use = fit[0]
	}
	l.Points = map[string]*LegPoint{}
	for i, p := range use.points {
		l.Points[p] = &LegPoint{Source: use.name, Span: use.spans[i], WindowCount: f.Windows.Counts[use.first+i],
			Energy: l.legEnergy(use.first+i, use.spans[i])}
		if use.name != WindowMarks && use.name != WindowBench {
			l.Points[p].Source = WindowVLLMDate
		}
	}
	if use.name == WindowMarks || use.name == WindowBench {
		return
	}
	// Two date windows that overlap: the metrics took longer than a
	// second, or the points ran concurrently; neither is trusted.
	var bad []string
	for i, p := range use.points {
		for j, q := range use.points {
			if i < j && use.spans[i].overlaps(use.spans[j]) {
				bad = append(bad, fmt.Sprintf("%s (%s) and %s (%s)", p, use.spans[i], q, use.spans[j]))
				for _, x := range []string{p, q} {
					delete(l.Points, x)
					l.PointNotes[x] = "its vLLM date window overlaps another point's"
				}
			}
		}
	}
	if len(bad) > 0 {
		l.PointWarnings = append(l.PointWarnings, fmt.Sprintf(
			"vLLM date windows overlap: %s; neither has a window (the metrics took longer than a second, or the points ran concurrently): record the points with clockgate mark",
			strings.Join(bad, "; ")))
	}
}

// PointsActive reports whether any trusted leg of either arm has a source
// of point windows: only then are points judged on their own clocks.
func PointsActive(ours, baseline *Arm) bool {
	for _, a := range []*Arm{ours, baseline} {
		for _, l := range a.Legs {
			if l.Trusted() && l.PointSource != "" {
				return true
			}
		}
	}
	return false
}

// PointSide is one arm's clock over a point's windows: its free busy
// samples' count, median and mean, and the power-managed share of its busy
// samples.
type PointSide struct {
	FreeN           int      `json:"free_n"`
	MedianMHz       *float64 `json:"median_mhz"`
	MeanMHz         *float64 `json:"mean_mhz"`
	PowerManagedPct *float64 `json:"power_managed_pct"`

	free    map[int]int
	freeSum Sum
	sources map[string]bool
}

// PointClock is a THROUGHPUT point's clock: each arm's samples inside the
// point's windows over its trusted legs, and their offset.
type PointClock struct {
	// Window is WindowMarks or WindowVLLMDate when every leg used that
	// source, WindowMixed otherwise; nil when the point is not judged.
	Window        *string    `json:"window"`
	Ours          *PointSide `json:"ours"`
	Baseline      *PointSide `json:"baseline"`
	OffsetPct     *float64   `json:"offset_pct"`
	MeanOffsetPct *float64   `json:"mean_offset_pct"`
	Judged        bool       `json:"judged"`
	// NotJudged says why the point is not judged, for the report.
	NotJudged string `json:"-"`
}

// PointMissing is a trusted leg without a window for a point.
type PointMissing struct {
	Engine string
	Leg    *Leg
	Why    string
	// NoBench says the leg has no bench file for the point: it was not
	// run there, which is no missing window to warn about.
	NoBench bool
}

// ComparePoint judges one THROUGHPUT point (label as the report prints
// it) on each arm's busy samples inside its windows, pooled over the
// arm's trusted legs: judged when every trusted leg of both arms has a
// window and both pools hold at least MinFreeSamples free busy samples;
// then the free medians and means are held to MaxOffsetBasisPoints
// (clock.point_offset). It returns the legs without a window.
func ComparePoint(label string, ours, baseline *Arm) (*PointClock, *Reason, []PointMissing) {
	pc := &PointClock{}
	var missing []PointMissing
	sides := [2]*PointSide{}
	legs := 0
	for k, a := range []*Arm{ours, baseline} {
		s := &PointSide{free: map[int]int{}, sources: map[string]bool{}}
		busy, pm := 0, 0
		// A share of power-managed samples means something only where a
		// limit was recorded (SPEC §10.1): elsewhere it is absent, not 0.
		limit := false
		for _, l := range a.Legs {
			if !l.Trusted() {
				continue
			}
			legs++
			if l.Fold != nil {
				for _, g := range l.Fold.GPUs {
					limit = limit || g.Managed != nil
				}
			}
			lp := l.Points[label]
			if lp == nil {
				why := l.PointNotes[label]
				switch {
				case why != "":
				case l.PointSource == WindowMarks:
					why = "no begin line for it in " + l.pointsPath
				case l.PointSource == WindowBench:
					why = "its bench result states no window for it"
				case l.noSource != "":
					why = l.noSource
				case l.PointSource == "":
					why = "no points file (clockgate mark) beside its stream and no vLLM result with a date (SGLang's results carry no time)"
				default:
					why = "no vLLM date for it"
				}
				missing = append(missing, PointMissing{a.Engine, l, why, l.BenchPoints != nil && !l.BenchPoints[label]})
				continue
			}
			s.sources[lp.Source] = true
			busy += lp.Busy
			pm += lp.PowerManaged
			for v, n := range lp.Free {
				s.free[v] += n
				s.FreeN += n
			}
			s.freeSum.AddSum(lp.FreeSum)
		}
		if busy > 0 && limit {
			s.PowerManagedPct = ptr(round2(float64(pm) * 100 / float64(busy)))
		}
		if h := summarizeMap(s.free); h.n > 0 {
			s.MedianMHz = ptr(float64(h.median2) / 2)
			s.MeanMHz = ptr(round2(s.freeSum.Float() / float64(h.n)))
		}
		sides[k] = s
	}
	switch {
	case len(missing) > 0:
		pc.NotJudged = "no window in some leg"
		return pc, nil, missing
	case legs == 0 || len(ours.Legs) == 0 || len(baseline.Legs) == 0:
		pc.NotJudged = "no trusted leg"
		return pc, nil, nil
	}
	pc.Ours, pc.Baseline = sides[0], sides[1]
	oh, bh := summarizeMap(sides[0].free), summarizeMap(sides[1].free)
	if oh.n > 0 && bh.n > 0 {
		d := oh.median2 - bh.median2
		if d < 0 {
			d = -d
		}
		pc.OffsetPct = ptr(round2(float64(d) / float64(bh.median2) * 100))
		om, bm := sides[0].freeSum.Float()/float64(oh.n), sides[1].freeSum.Float()/float64(bh.n)
		pc.MeanOffsetPct = ptr(round2(math.Abs(om-bm) / bm * 100))
	}
	if oh.n < MinFreeSamples || bh.n < MinFreeSamples {
		pc.NotJudged = fmt.Sprintf("too thin: %s %d, %s %d free busy samples, under %d", ours.Engine, oh.n, baseline.Engine, bh.n, MinFreeSamples)
		return pc, nil, nil
	}
	pc.Judged = true
	src := map[string]bool{}
	for _, s := range sides {
		for k := range s.sources {
			src[k] = true
		}
	}
	w := WindowMixed
	if len(src) == 1 {
		for k := range src {
			w = k
		}
	}
	pc.Window = &w
	medianOK := offsetWithin(oh.median2, bh.median2)
	meanOK := meanOffsetWithin(sides[0].freeSum, int64(oh.n), sides[1].freeSum, int64(bh.n))
	if medianOK && meanOK {
		return pc, nil, nil
	}
	d := oh.median2 - bh.median2
	if d < 0 {
		d = -d
	}
	med := float64(d) / float64(bh.median2) * 100
	om, bm := sides[0].freeSum.Float()/float64(oh.n), sides[1].freeSum.Float()/float64(bh.n)
	mean := math.Abs(om-bm) / bm * 100
	where := fmt.Sprintf("point %s, over its %s windows (%d free busy samples of %s, %d of %s)", label, w, oh.n, ours.Engine, bh.n, baseline.Engine)
	var msg string
	if !medianOK {
		msg = fmt.Sprintf("%s: free median offset %.2f%% > %.1f%%: %s %s MHz, %s %s MHz (estimated effect %.2f%% at transfer %.4f)",
			where, med, MaxOffsetPct, ours.Engine, fmtMedian(oh.median2), baseline.Engine, fmtMedian(bh.median2), med*TransferCoefficient, TransferCoefficient)
		if !meanOK {
			msg += fmt.Sprintf("; the free mean offset %.2f%% is over it too (%s %.2f MHz, %s %.2f MHz)", mean, ours.Engine, om, baseline.Engine, bm)
		}
	} else {
		msg = fmt.Sprintf("%s: free mean offset %.2f%% > %.1f%%: %s %.2f MHz, %s %.2f MHz (estimated effect %.2f%% at transfer %.4f), though the medians agree (%s %s MHz, %s %s MHz, offset %.2f%%)",
			where, mean, MaxOffsetPct, ours.Engine, om, baseline.Engine, bm, mean*TransferCoefficient, TransferCoefficient,
			ours.Engine, fmtMedian(oh.median2), baseline.Engine, fmtMedian(bh.median2), med)
	}
	msg += ": the point ran at another clock in one arm than in the other, whatever the leg's clock says"
	r := ratioReason(CodePointOffset, "%s", msg)
	return pc, &r, nil
}

// SortedPointLabels lists the labels of a leg's point windows, sorted, for
// tests and reports.
func (l *Leg) SortedPointLabels() []string {
	out := make([]string, 0, len(l.Points))
	for p := range l.Points {
		out = append(out, p)
	}
	sort.Strings(out)
	return out
}

// maxUTCOffsetS bounds a recorded UTC offset: no zone is more than 18
// hours from UTC (Go's and ISO 8601's bound).
const maxUTCOffsetS = 18 * 3600

// parseZone reads a record window's utc_offset_s and time_zone, both
// optional: an offset an integer of seconds within ±18 h, a zone a
// non-empty string, and a zone only beside an offset.
func parseZone(w *obj) (*int, string) {
	var off *int
	if f, ok := w.v.Fields["utc_offset_s"]; ok {
		n, isInt := f.Int()
		if !isInt || n < -maxUTCOffsetS || n > maxUTCOffsetS {
			w.fail("utc_offset_s", "want an integer of seconds from %d to %d, found %s", -maxUTCOffsetS, maxUTCOffsetS, f.Describe())
			return nil, ""
		}
		off = ptr(int(n))
	}
	zone := ""
	if f, ok := w.v.Fields["time_zone"]; ok {
		if f.Kind != strictjson.String || f.Str == "" {
			w.fail("time_zone", "want an IANA zone name, found %s", f.Describe())
			return nil, ""
		}
		if off == nil {
			w.fail("time_zone", "present without utc_offset_s: the sampler writes both")
			return nil, ""
		}
		zone = f.Str
	}
	return off, zone
}

// DateSpan is the window a vLLM result's date and duration give, the date
// read as a wall clock in loc: [date + 1 s − duration, date − 1 s]. A
// duration of MinPointDurationNS or less gives none, and says why.
func DateSpan(wall time.Time, loc *time.Location, durationS float64) (Span, string) {
	durNS := int64(math.Round(durationS * 1e9))
	if durNS <= MinPointDurationNS {
		return Span{}, fmt.Sprintf("vLLM duration %g s ≤ %d s: the window [date + 1 s − duration, date − 1 s] is empty",
			durationS, MinPointDurationNS/int64(time.Second))
	}
	at := time.Date(wall.Year(), wall.Month(), wall.Day(), wall.Hour(), wall.Minute(), wall.Second(), 0, loc).UnixNano()
	return Span{From: at + dateSlackNS - durNS, To: at - dateSlackNS}, ""
}
