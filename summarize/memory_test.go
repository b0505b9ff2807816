package summarize_test

import (
	"io"
	"os"
	"runtime"
	"testing"

	"github.com/clockgate/clockgate/report"
	"github.com/clockgate/clockgate/summarize"
	"github.com/clockgate/clockgate/summarize/internal/treegen"
)

// maxLiveBytesPerLeg bounds what summarize --out keeps in memory for each
// leg of a tree while its pages are written: the summary (every leg's
// verdict, arms' counts and picture traces) and the report's document.
// A leg of 60 samples keeps about 6.5 KiB today; the bound leaves a
// quarter for growth and catches a new per-leg field of a few hundred
// bytes only when it comes with more. At 20,000 legs it is 160 MiB of
// live heap, under summarize's soft memory limit.
const maxLiveBytesPerLeg = 8 << 10

// TestLiveMemoryPerLeg summarizes generated trees of 100 and 500 legs × 60
// samples as summarize --out does (traces, rows spooled to a file), and
// holds the live heap it adds per leg, between the two sizes, to
// maxLiveBytesPerLeg. Live heap after a collection is a count, not a
// timing, so this is exact enough for CI on a loaded machine.
func TestLiveMemoryPerLeg(t *testing.T) {
	if testing.Short() {
		t.Skip("generates two trees of 600 legs in all")
	}
	small, large := 100, 500
	liveSmall := liveAfterSummarize(t, small)
	liveLarge := liveAfterSummarize(t, large)
	perLeg := float64(liveLarge-liveSmall) / float64(large-small)
	t.Logf("live heap: %d legs %.1f MiB, %d legs %.1f MiB: %.0f bytes per leg", small, float64(liveSmall)/(1<<20), large, float64(liveLarge)/(1<<20), perLeg)
	if perLeg > maxLiveBytesPerLeg {
		t.Errorf("live heap grows by %.0f bytes per leg (%d legs: %d bytes, %d legs: %d bytes); want at most %d",
			perLeg, small, liveSmall, large, liveLarge, maxLiveBytesPerLeg)
	}
}

// liveAfterSummarize is the live heap, after a collection, while the
// summary and report of a generated tree of legs × 60 samples are held.
func liveAfterSummarize(t *testing.T, legs int) uint64 {
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
	base := live()
	s, err := summarize.Summarize(dir, summarize.Options{Baseline: summarize.DefaultBaseline, Traces: true, Rows: spool})
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Legs) != legs {
		t.Fatalf("%d legs summarized, want %d", len(s.Legs), legs)
	}
	doc := report.Build(s)
	if err := doc.Markdown(io.Discard); err != nil {
		t.Fatal(err)
	}
	held := live() - base
	runtime.KeepAlive(s)
	runtime.KeepAlive(doc)
	return held
}

func live() uint64 {
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}
