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
// leg of a tree at its peak, when the report's document is built: the
// summary (every leg's verdict, arms' counts, its traces' spans, the
// points being in a spool file) and the document's row of each leg. A
// leg of 60 samples keeps 5,900 bytes today (8,050 before the traces were
// spooled and the folds' reading-time state let go of); the bound is 13%
// above, so a new per-leg field of a few hundred bytes fails it. At
// 20,000 legs it is 127 MiB of live heap, under summarize's soft memory
// limit of 160 MiB.
const maxLiveBytesPerLeg = 6656

// maxWritingBytesPerLeg bounds what a leg keeps while the pages are
// written, once the summary has let go of its legs (ReleaseLegs): the
// document's row, its reasons and its trace's span. 2,100 bytes today,
// the bound 14% above; holding the legs as well would be 5,900.
const maxWritingBytesPerLeg = 2400

// TestLiveMemoryPerLeg summarizes generated trees of 100 and 500 legs × 60
// samples as summarize --out does (traces and rows spooled to files,
// the legs let go of once the document is built), and holds the live heap
// it adds per leg, between the two sizes, to maxLiveBytesPerLeg at its
// peak and to maxWritingBytesPerLeg while the pages are written. Live
// heap after a collection is a count, not a timing, so this is exact
// enough for CI on a loaded machine.
func TestLiveMemoryPerLeg(t *testing.T) {
	if testing.Short() {
		t.Skip("generates two trees of 600 legs in all")
	}
	small, large := 100, 500
	peakSmall, writingSmall := liveAfterSummarize(t, small)
	peakLarge, writingLarge := liveAfterSummarize(t, large)
	for _, c := range []struct {
		phase        string
		small, large uint64
		bound        float64
	}{{"at its peak, the document built", peakSmall, peakLarge, maxLiveBytesPerLeg},
		{"while the pages are written", writingSmall, writingLarge, maxWritingBytesPerLeg}} {
		perLeg := (float64(c.large) - float64(c.small)) / float64(large-small)
		t.Logf("live heap %s: %d legs %.1f MiB, %d legs %.1f MiB: %.0f bytes per leg", c.phase, small, float64(c.small)/(1<<20), large, float64(c.large)/(1<<20), perLeg)
		if perLeg > c.bound {
			t.Errorf("live heap %s grows by %.0f bytes per leg (%d legs: %d bytes, %d legs: %d bytes); want at most %.0f",
				c.phase, perLeg, small, c.small, large, c.large, c.bound)
		}
	}
}

// liveAfterSummarize is the live heap, after a collection, while the
// summary and report of a generated tree of legs × 60 samples are held
// (peak), and once the summary has let go of its legs (writing).
func liveAfterSummarize(t *testing.T, legs int) (peak, writing uint64) {
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
	base := live()
	s, err := summarize.Summarize(dir, summarize.Options{Baseline: summarize.DefaultBaseline, Traces: true, Rows: spool,
		TraceSpool: clocks.NewTraceSpool(traces)})
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Legs) != legs {
		t.Fatalf("%d legs summarized, want %d", len(s.Legs), legs)
	}
	doc := report.Build(s)
	peak = live() - base
	s.ReleaseLegs()
	if err := doc.HTMLOf(io.Discard, strings.NewReader(mdOf(t, doc))); err != nil {
		t.Fatal(err)
	}
	writing = live() - base
	runtime.KeepAlive(s)
	runtime.KeepAlive(doc)
	return peak, writing
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
