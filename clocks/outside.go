package clocks

import (
	"fmt"
	"math"
	"strings"
	"time"
)

// The codes that tie a leg's bench results to its clock window (SPEC
// §12.1.1).
const (
	CodeBenchOutsideWindow = "bench.outside_window"
	CodeUnprovenWindow     = "clock.unproven_window"
)

// PointTime is what one bench result says of when it ran (SPEC §12.1.1):
// a wall-clock date in a zone it does not name (vLLM, SGLang and forks),
// an exact window in epoch time (a reader that has one), both, or neither.
// A reader fills it; the check below alone matches it to the clock.
type PointTime struct {
	// Point is the point as the report prints it: "8/inf"; File the
	// result as messages name it, relative to the tree.
	Point string
	File  string
	// Date is the result's date as written; Wall the same read as if it
	// were UTC (its fields are the bench host's wall clock), set when
	// HasWall. DurationS is the result's duration in seconds, 0 when it
	// has none.
	Date      string
	Wall      time.Time
	HasWall   bool
	DurationS float64
	// Exact, when not nil, is the result's own window in epoch time: it
	// needs no zone, and is used before the date.
	Exact *Span
	// DateUnread is set when the result has a date (Date) in no format
	// clockgate reads: it then has no time from it.
	DateUnread bool
}

// Known reports whether the result says when it ran.
func (p PointTime) Known() bool { return p.HasWall || p.Exact != nil }

// ranWithin is where a date places its run when read in loc: the run
// ended before the result was stamped, within dateSlackNS of it, and
// began duration before that; the date is truncated to the second. So
// [date − duration − 1 s, date + 1 s], both ends included.
func (p PointTime) ranWithin(loc *time.Location) Span {
	w := p.Wall
	at := time.Date(w.Year(), w.Month(), w.Day(), w.Hour(), w.Minute(), w.Second(), 0, loc).UnixNano()
	dur := int64(math.Round(p.DurationS * 1e9))
	return Span{From: at - dur - dateSlackNS, To: at + dateSlackNS}
}

// anyZoneNS is how far a date read in an unnamed zone may lie from the
// same date read as UTC: the bound of a recorded offset.
const anyZoneNS = int64(maxUTCOffsetS) * int64(time.Second)

// checkPointTimes raises, on a trusted leg, bench.outside_window for each
// bench result whose known time overlaps the leg's clock window under no
// admissible zone (SPEC §12.1.1): the host's zone and UTC where the record
// names the zone, every offset within ±18 h where it does not; the same
// for each clockgate mark (in marksPath) whose window overlaps no part of
// the clock window (marks are stamped in UTC); and clock.unproven_window
// for an imported leg none of whose results has a time and no mark of
// which lies in the clock window.
func (l *Leg) checkPointTimes(times []PointTime, marks []Mark, marksPath string, f *Fold) {
	win := Span{From: f.firstSec*1e9 + f.firstNsec, To: f.lastSec*1e9 + f.lastNsec}
	winText := fmt.Sprintf("the leg's clock window %s to %s", f.FirstT, f.LastT)
	rec := l.Record
	marked := false
	for _, m := range marks {
		if m.Span.overlaps(win) {
			marked = true
			continue
		}
		l.add(CodeBenchOutsideWindow, "%s: point %s ran %s (its clockgate mark, in UTC), outside %s: nothing ties these results to this clock, so they are no evidence about it; %s",
			marksPath, m.Point, m.Span, winText, outsideDo)
	}
	known := 0
	var unread []string
	for _, p := range times {
		if !p.Known() {
			if p.DateUnread {
				unread = append(unread, fmt.Sprintf("%s (point %s) has the date %q", p.File, p.Point, p.Date))
			}
			continue
		}
		known++
		if p.Exact != nil {
			if !p.Exact.overlaps(win) {
				l.add(CodeBenchOutsideWindow, "%s: point %s ran %s (its own epoch window), outside %s: these results are no evidence about this clock; %s",
					p.File, p.Point, p.Exact, winText, outsideDo)
			}
			continue
		}
		slack := dateSlackNS / int64(time.Second)
		what := fmt.Sprintf("its date %s (within date − %d s to date + %d s)", p.Date, slack, slack)
		if p.DurationS > 0 {
			what = fmt.Sprintf("its date %s and duration %g s (within date − duration − %d s to date + %d s)", p.Date, p.DurationS, slack, slack)
		}
		var under []string
		inside := false
		if rec.Window.UTCOffsetS == nil {
			u := p.ranWithin(time.UTC)
			sp := Span{From: u.From - anyZoneNS, To: u.To + anyZoneNS}
			inside = sp.overlaps(win)
			under = append(under, fmt.Sprintf("at %s under any zone from -18:00 to +18:00 (the clock record names no zone: import with --tz)", sp))
		} else {
			host, hostName := hostZone(rec.Window)
			hs, us := p.ranWithin(host), p.ranWithin(time.UTC)
			inside = hs.overlaps(win) || us.overlaps(win)
			if hs == us {
				under = append(under, fmt.Sprintf("at %s under the host's zone (%s), which is UTC's too", hs, hostName))
			} else {
				under = append(under, fmt.Sprintf("at %s under the host's zone (%s)", hs, hostName), fmt.Sprintf("at %s under UTC", us))
			}
		}
		if !inside {
			l.add(CodeBenchOutsideWindow, "%s: point %s ran, by %s, %s, outside %s: these results are no evidence about this clock; %s",
				p.File, p.Point, what, strings.Join(under, " and "), winText, outsideDo)
		}
	}
	if rec.Window.StopReason == StopImported && len(times) > 0 && known == 0 && !marked {
		why := "(no date, no epoch window)"
		if len(unread) > 0 {
			why = fmt.Sprintf("(%s, in neither %s; the rest have no date and no epoch window)", strings.Join(unread, ", "), DateFormats)
			if len(unread) == len(times) {
				why = fmt.Sprintf("(%s, in neither %s, so clockgate cannot read it)", strings.Join(unread, ", "), DateFormats)
			}
		}
		l.add(CodeUnprovenWindow, "imported record: none of the leg's %d bench results has a time %s and no clockgate mark gives one, so nothing ties these results to this log; keep each result's time (vLLM's --save-result writes its date, and import the log with --tz naming the bench host's zone), or run each point under clockgate mark",
			len(times), why)
	}
}

// DateFormats names the bench result date formats clockgate reads, as
// messages print them.
const DateFormats = "%Y%m%d-%H%M%S nor %Y-%m-%d %H:%M:%S"

// outsideDo says what to do about a result outside its leg's window.
const outsideDo = "judge results against the clock recorded while they ran (clockgate record around the bench, or the import of that run's log), and keep each leg's results and clock together"

// timed is the evidence's bench results' times, and the clockgate marks
// that give a point a window, with the points file they are in.
func (ev *PointEvidence) timed() ([]PointTime, []Mark, string) {
	if ev == nil {
		return nil, nil, ""
	}
	var marks []Mark
	if ev.MarksInvalid == "" {
		for _, m := range ev.Marks {
			if m.NoWindow == "" {
				marks = append(marks, m)
			}
		}
	}
	return ev.Times, marks, ev.MarksPath
}

// StampZone writes into the window loc's UTC offset at its first sample,
// and name, the zone's IANA name ("" for a bare offset): what places a
// bench client's wall-clock date in time (SPEC §10.2), for a record the
// sampler did not write (clockgate import --tz).
func (w *Window) StampZone(loc *time.Location, name string) {
	t, err := time.Parse(time.RFC3339Nano, w.FirstT)
	if err != nil {
		return
	}
	_, off := t.In(loc).Zone()
	w.UTCOffsetS, w.TimeZone = &off, name
}
