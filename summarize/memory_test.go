package summarize_test

import (
	"io"
	"os"
	"runtime"
	"strings"
	"testing"

	"github.com/clockgate/clockgate/clocks"
	"github.com/clockgate/clockgate/report"
	"github.com/clockgate/clockgate/summarize"
	"github.com/clockgate/clockgate/summarize/internal/treegen"
)

// maxLiveBytesPerLeg bounds what summarize --out keeps in memory for each
// leg of a tree at its peak: when the last leg is read (every leg's
// verdict, the counts its arm merges, its traces' spans, the points being
// in a spool file) or when the report's document is built (the legs, shed
// of their counts, and the document's row of each). A leg of 60 samples
// keeps 5,263 bytes at the first, 4,805 at the second (6,491 and 5,674
// while the walk's file names of every leg were held until the last was
// read and each leg kept its bench points as read, 8,050 at the second
// before the traces were spooled and the folds' reading-time state let
// go of); the bound is 6.4% above the first, so that holding either
// again, or a new per-leg field of a few hundred bytes, fails it. At
// 20,000 legs it is 107 MiB of live heap, under summarize's soft memory
// limit of 160 MiB.
const maxLiveBytesPerLeg = 5600

// maxWritingBytesPerLeg bounds what a leg keeps while the pages are
// written, once the summary has let go of its legs (ReleaseLegs): the
// document's row, its reasons and its trace's span. 2,100 bytes today,
// the bound 14% above; holding the legs as well would be 5,030.
const maxWritingBytesPerLeg = 2400

// TestLiveMemoryPerLeg summarizes generated trees of 100 and 500 legs × 60
// samples as summarize --out does (traces and rows spooled to files, the
// legs let go of once the document is built), and holds the live heap it
// adds per leg, between the two sizes, to maxLiveBytesPerLeg when the last
// leg is read and when the document is built, and to
// maxWritingBytesPerLeg while the pages are written. Live heap after a
// collection is a count, not a timing, so this is exact enough for CI on
// a loaded machine.
func TestLiveMemoryPerLeg(t *testing.T) {
	if testing.Short() {
		t.Skip("generates two trees of 600 legs in all")
	}
	small, large := 100, 500
	s, l := liveAfterSummarize(t, small), liveAfterSummarize(t, large)
	for _, c := range []struct {
		phase        string
		small, large uint64
		bound        float64
	}{{"when the last leg is read", s.read, l.read, maxLiveBytesPerLeg},
		{"when the document is built", s.built, l.built, maxLiveBytesPerLeg},
		{"while the pages are written", s.writing, l.writing, maxWritingBytesPerLeg}} {
		perLeg := (float64(c.large) - float64(c.small)) / float64(large-small)
		t.Logf("live heap %s: %d legs %.1f MiB, %d legs %.1f MiB: %.0f bytes per leg", c.phase, small, float64(c.small)/(1<<20), large, float64(c.large)/(1<<20), perLeg)
		if perLeg > c.bound {
			t.Errorf("live heap %s grows by %.0f bytes per leg (%d legs: %d bytes, %d legs: %d bytes); want at most %.0f",
				c.phase, perLeg, small, c.small, large, c.large, c.bound)
		}
	}
}

// phases are the live heap, after a collection, at the three moments
// summarize --out holds most: the last leg read, the document built, the
// pages written once the summary has let go of its legs.
type phases struct{ read, built, writing uint64 }

// liveAfterSummarize is the live heap of summarizing a generated tree of
// legs × 60 samples as --out does, at each of its phases.
func liveAfterSummarize(t *testing.T, legs int) phases {
	t.Helper()
	dir := t.TempDir()
	if err := treegen.WriteBig(dir, legs, 60); err != nil {
		t.Fatal(err)
	}
	spool, err := os.CreateTemp(t.TempDir(), "rows-*")
	if err != nil {
		t.Fatal(err)
	}
	defer spool.Close()
	traces, err := os.CreateTemp(t.TempDir(), "traces-*")
	if err != nil {
		t.Fatal(err)
	}
	defer traces.Close()
	var p phases
	base := live()
	s, err := summarize.Summarize(dir, summarize.Options{Baseline: summarize.DefaultBaseline, Traces: true, Rows: spool,
		TraceSpool: clocks.NewTraceSpool(traces), Progress: func(pr summarize.Progress) {
			if pr.LegsDone == pr.LegsTotal {
				p.read = live() - base
			}
		}})
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Legs) != legs || p.read == 0 {
		t.Fatalf("%d legs summarized, want %d; live heap when the last was read %d", len(s.Legs), legs, p.read)
	}
	doc := report.Build(s)
	p.built = live() - base
	s.ReleaseLegs()
	if err := doc.HTMLOf(io.Discard, strings.NewReader(mdOf(t, doc))); err != nil {
		t.Fatal(err)
	}
	p.writing = live() - base
	runtime.KeepAlive(s)
	runtime.KeepAlive(doc)
	return p
}

// mdOf is report.md as the document writes it.
func mdOf(t *testing.T, doc *report.Document) string {
	t.Helper()
	var b strings.Builder
	if err := doc.Markdown(&b); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

func live() uint64 {
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}
