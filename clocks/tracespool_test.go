package clocks

import (
	"errors"
	"io"
	"os"
	"reflect"
	"strings"
	"testing"
)

// TestTraceSpoolGivesBackEveryPoint: a trace put in a spool lets go of its
// points and reads back every one as it was, bit for bit (times, MHz,
// boots and flags), whatever other traces were put before it.
func TestTraceSpoolGivesBackEveryPoint(t *testing.T) {
	f, err := os.CreateTemp(t.TempDir(), "traces-*")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sp := NewTraceSpool(f)
	first := traceOf(t, cleanWindow(boot13))
	ss := window(boot13, flat(2385, 40), 5)
	ss[7].ThrottleReasonsActive = "0x0000000000000004"
	ss[20].BootID = bootF6
	second := traceOf(t, ss)
	// Times no sample gives: a negative zero, a subnormal, the largest
	// MHz and boot.
	odd := &Trace{Span: 3, Boots: []string{"a"}, Points: []TracePoint{{T: 0.1 + 0.2, MHz: -1, Boot: 65535, PowerManaged: true},
		{T: 5e-324, MHz: 1<<31 - 1, Idle: true, Throttled: true}}}
	var want [][]TracePoint
	for _, tr := range []*Trace{first, second, odd} {
		want = append(want, append([]TracePoint(nil), tr.Points...))
		if err := sp.Put(tr); err != nil {
			t.Fatal(err)
		}
		if tr.Points != nil {
			t.Fatalf("a spooled trace keeps its %d points in memory", len(tr.Points))
		}
	}
	for i, tr := range []*Trace{first, second, odd} {
		if tr.Len() != len(want[i]) {
			t.Errorf("trace %d: Len %d, want %d", i, tr.Len(), len(want[i]))
		}
		got, err := tr.ReadPoints()
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, want[i]) {
			t.Errorf("trace %d read back as %+v, want %+v", i, got, want[i])
		}
	}
	// Put again: nothing changes.
	if err := sp.Put(first); err != nil || first.Len() != len(want[0]) {
		t.Fatalf("a second Put: %v, Len %d", err, first.Len())
	}
}

// TestTraceSpoolReadErrorNamesTheTrace: a spool whose file lost the points
// says so when they are read, rather than drawing nothing.
func TestTraceSpoolReadErrorNamesTheTrace(t *testing.T) {
	f, err := os.CreateTemp(t.TempDir(), "traces-*")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	tr := traceOf(t, cleanWindow(boot13))
	n := len(tr.Points)
	if err := NewTraceSpool(f).Put(tr); err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(8); err != nil {
		t.Fatal(err)
	}
	_, err = tr.ReadPoints()
	if err == nil || !strings.Contains(err.Error(), "reading a trace of") || !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Fatalf("read back from a truncated spool: %v; want the trace of %d points named, unexpected EOF", err, n)
	}
}

// TestJudgedFoldLetsGoOfItsReadingState: once a leg is judged its fold
// keeps what arms, ratios and pictures read, not the state only reading
// its rows used (gaps, drift, counting arrays, the trace builder).
func TestJudgedFoldLetsGoOfItsReadingState(t *testing.T) {
	l := legOf(t, "r1", cleanWindow(boot13), nil)
	if l.Fold == nil {
		t.Fatalf("clean leg not trusted: %v", l.Reasons)
	}
	for _, g := range l.Fold.GPUs {
		if g.gpuScratch != nil {
			t.Fatalf("GPU %d keeps its reading-time state once the leg is judged", g.Index)
		}
		if g.Total == 0 || g.Hist == nil || g.First == nil {
			t.Fatalf("GPU %d: what its arm merges was let go of too", g.Index)
		}
	}
}
