package summarize

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"time"

	"github.com/clockgate/clockgate/benchfmt"
	"github.com/clockgate/clockgate/clocks"
	"github.com/clockgate/clockgate/ratio"
	"github.com/clockgate/clockgate/strictjson"
)

// PointsSuffix ends a leg's points file (benchfmt.PointsSuffix).
const PointsSuffix = benchfmt.PointsSuffix

// The events of a points file's lines (benchfmt's).
const (
	MarkBegin = benchfmt.MarkBegin
	MarkEnd   = benchfmt.MarkEnd
)

// MaxMarksBytes bounds a points file: two short lines per point.
const MaxMarksBytes = 1 << 20

// Marked is one point of a points file: its begin line and, once the
// command ended, its end line and exit status.
type Marked struct {
	Point      string
	Begin, End time.Time
	Ended      bool
	Exit       int
	// BeginLine and EndLine are the lines, 1-based.
	BeginLine, EndLine int
}

// ParseMarks reads a points file, named path in errors, in order: each
// line {"point","event":"begin","t"} or {"point","event":"end","t","exit"},
// a point's end after its begin, one end per point. A begin after a begin
// with no end is a rerun of a point whose command never ended: the later
// one counts. The error names path:line.
func ParseMarks(path string, r io.Reader) ([]Marked, error) {
	var out []Marked
	at := map[string]int{}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 4096), MaxMarksBytes)
	line := 0
	for sc.Scan() {
		line++
		fail := func(format string, args ...any) ([]Marked, error) {
			return nil, fmt.Errorf("%s:%d: %s", path, line, fmt.Sprintf(format, args...))
		}
		b := sc.Bytes()
		if len(bytes.TrimSpace(b)) == 0 {
			return fail("empty line; want one JSON object per line")
		}
		v, err := strictjson.ParseObject(b)
		if err != nil {
			return fail("%v", err)
		}
		str := func(k string) (string, bool) {
			f := v.Fields[k]
			if f == nil || f.Kind != strictjson.String {
				return "", false
			}
			return f.Str, true
		}
		p, ok := str("point")
		if !ok {
			return fail("point: want a point as the report prints it (8/inf), found %s", describe(v, "point"))
		}
		if _, err := ratio.ParsePointID(p); err != nil {
			return fail("%v", err)
		}
		ev, _ := str("event")
		ts, ok := str("t")
		t, err := time.Parse(time.RFC3339Nano, ts)
		if !ok || err != nil {
			return fail("t: want an RFC 3339 time, found %s", describe(v, "t"))
		}
		want := []string{"event", "point", "t"}
		if ev == MarkEnd {
			want = append(want, "exit")
		}
		if f, ok := v.Fields["host"]; ok {
			// A multi-host leg's points name the client (SPEC §12.3).
			if f.Kind != strictjson.String || f.Str == "" {
				return fail("host: want the client's host name, found %s", describe(v, "host"))
			}
			want = append(want, "host")
		}
		for k := range v.Fields {
			if !slices.Contains(want, k) {
				return fail("%s: not a key of a %s line (want %v)", k, ev, want)
			}
		}
		i, seen := at[p]
		switch ev {
		case MarkBegin:
			if seen && out[i].Ended {
				return fail("point %s begins again after its end at line %d", p, out[i].EndLine)
			}
			if !seen {
				at[p] = len(out)
				out = append(out, Marked{Point: p})
				i = len(out) - 1
			}
			out[i].Begin, out[i].BeginLine = t, line
		case MarkEnd:
			f := v.Fields["exit"]
			n, isInt := int64(0), false
			if f != nil {
				n, isInt = f.Int()
			}
			switch {
			case !isInt || n < math.MinInt32 || n > math.MaxInt32:
				return fail("exit: want the command's exit status, an integer, found %s", describe(v, "exit"))
			case !seen:
				return fail("point %s ends with no begin line before it", p)
			case out[i].Ended:
				return fail("point %s ends twice (lines %d and %d)", p, out[i].EndLine, line)
			case t.Before(out[i].Begin):
				return fail("point %s ends at %s, before its begin at line %d (%s)", p, ts, out[i].BeginLine, out[i].Begin.Format(time.RFC3339Nano))
			}
			out[i].End, out[i].EndLine, out[i].Ended, out[i].Exit = t, line, true, int(n)
		default:
			return fail("event: want %q or %q, found %s", MarkBegin, MarkEnd, describe(v, "event"))
		}
	}
	if err := sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			return nil, fmt.Errorf("%s:%d: a line longer than %d bytes", path, line+1, MaxMarksBytes)
		}
		return nil, fmt.Errorf("%s: %v", path, unwrapPath(err))
	}
	return out, nil
}

func describe(v *strictjson.Value, k string) string {
	f := v.Fields[k]
	if f == nil {
		return "nothing (key missing)"
	}
	return f.Describe()
}

// ReadMarks reads a leg's points file, named name and opened at abs, into
// ev: its marks, or why it cannot be read (then no point has a window).
// summarize reads a leg's points file with it, and so does clockgate check
// for a multi-host leg's DIR/points.jsonl, so that both judge one leg
// alike (SPEC §12.3).
func ReadMarks(ev *clocks.PointEvidence, name, abs string) {
	ev.MarksPath = name
	f, err := clocks.OpenRegular(abs)
	if err != nil {
		ev.MarksInvalid = fmt.Sprintf("%s: %v; its points have no window", name, unwrapPath(err))
		return
	}
	defer f.Close()
	if st, err := f.Stat(); err != nil || st.Size() > MaxMarksBytes {
		ev.MarksInvalid = fmt.Sprintf("%s: larger than %d KiB (two short lines a point), or unreadable; refused unread, its points have no window", name, MaxMarksBytes>>10)
		return
	}
	ms, err := ParseMarks(name, io.LimitReader(f, MaxMarksBytes+1))
	if err != nil {
		ev.MarksInvalid = err.Error() + "; its points have no window"
		return
	}
	ev.Marks = markWindows(ms)
}

// markWindows are a points file's windows as clocks counts them: each
// point that began and ended with exit 0, from its begin to its end.
func markWindows(ms []Marked) []clocks.Mark {
	out := make([]clocks.Mark, 0, len(ms))
	for _, m := range ms {
		c := clocks.Mark{Point: m.Point}
		switch {
		case !m.Ended:
			c.NoWindow = fmt.Sprintf("clockgate mark began it at %s (line %d) and wrote no end: the command was killed, or is still running",
				m.Begin.UTC().Format(time.RFC3339Nano), m.BeginLine)
		case m.Exit != 0:
			c.NoWindow = fmt.Sprintf("its command exited %d (line %d)", m.Exit, m.EndLine)
		default:
			c.Span = clocks.Span{From: m.Begin.UnixNano(), To: m.End.UnixNano()}
		}
		out = append(out, c)
	}
	return out
}

// The date formats of a bench result's date: vLLM's, and forks'.
var dateLayouts = []string{"20060102-150405", "2006-01-02 15:04:05"}

// datePoint reads a vLLM point's date and duration for its window.
func datePoint(p Point) clocks.DatePoint {
	d := clocks.DatePoint{Point: p.ID.Label(), DurationS: p.DurationS}
	switch {
	case !p.HasDate:
		d.NoWindow = "its result has no date"
		return d
	case !p.HasDuration:
		d.NoWindow = "its result has no duration"
		return d
	}
	for _, layout := range dateLayouts {
		if t, err := time.Parse(layout, p.Date); err == nil {
			d.Wall = t
			return d
		}
	}
	d.NoWindow = fmt.Sprintf("its date %q is in neither %%Y%%m%%d-%%H%%M%%S nor %%Y-%%m-%%d %%H:%%M:%%S", p.Date)
	return d
}

// pointTime is what a bench point says of when it ran, for the check
// that it overlaps its leg's clock window: its exact window, its date
// (any format's), or nothing.
func pointTime(p Point) clocks.PointTime {
	t := clocks.PointTime{Point: p.ID.Label(), File: p.Where}
	if p.HasWindow() {
		t.Exact = &clocks.Span{From: p.Start.UnixNano(), To: p.End.UnixNano()}
	}
	if p.HasDuration {
		t.DurationS = p.DurationS
	}
	if !p.HasDate {
		return t
	}
	t.Date, t.DateUnread = p.Date, true
	for _, layout := range dateLayouts {
		if w, err := time.Parse(layout, p.Date); err == nil {
			t.Wall, t.HasWall, t.DateUnread = w, true, false
			break
		}
	}
	return t
}
