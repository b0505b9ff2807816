package summarize

import (
	"io/fs"
	"path/filepath"
	"testing"

	"github.com/clockgate/clockgate/summarize/internal/treegen"
)

// BenchmarkSummarize summarizes a generated tree of 40 legs × 3,600 samples
// (about 70 MiB of streams); scripts/scale.sh runs the full-size comparison
// against cat.
func BenchmarkSummarize(b *testing.B) {
	for _, samples := range []int{3600, 7200} {
		dir := b.TempDir()
		if err := treegen.WriteBig(dir, 40, samples); err != nil {
			b.Fatal(err)
		}
		var size int64
		filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
			if err == nil && !d.IsDir() {
				if info, err := d.Info(); err == nil {
					size += info.Size()
				}
			}
			return err
		})
		b.Run("40legs-"+itoa(samples), func(b *testing.B) {
			b.SetBytes(size)
			for b.Loop() {
				s, err := Summarize(dir, Options{Baseline: DefaultBaseline})
				if err != nil || !s.GatePass {
					b.Fatalf("err %v, gate %v", err, s.GatePass)
				}
			}
		})
	}
}

func itoa(n int) string {
	if n == 0 {
		return "0"
	}
	var b []byte
	for ; n > 0; n /= 10 {
		b = append([]byte{byte('0' + n%10)}, b...)
	}
	return string(b)
}

// TestBigTreeVerdicts holds the generator's big trees to the contract:
// every leg clean and every ratio established, so the benchmark times a
// tree that is read to the end.
func TestBigTreeVerdicts(t *testing.T) {
	dir := t.TempDir()
	if err := treegen.WriteBig(dir, 80, 200); err != nil {
		t.Fatal(err)
	}
	s, err := Summarize(dir, Options{Baseline: DefaultBaseline})
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Legs) != 80 || len(s.Comparisons) != 2 || !s.GatePass {
		t.Fatalf("legs %d comparisons %d gate %v", len(s.Legs), len(s.Comparisons), s.GatePass)
	}
	for _, l := range s.Legs {
		if !l.BindingEligible() {
			t.Fatalf("leg %s %s %s: %+v", l.Model, l.Engine, l.Name(), l.Reasons)
		}
	}
}

// TestSummaryShedsMergedCounts: once the arms are compared, a leg's fold
// keeps what the reports print and draw, not the counts its arm was
// merged from, its first sample or its bench points' labels (a tree of
// 20,000 legs would hold them through its report).
func TestSummaryShedsMergedCounts(t *testing.T) {
	dir := t.TempDir()
	if err := treegen.WriteBig(dir, 4, 200); err != nil {
		t.Fatal(err)
	}
	s, err := Summarize(dir, Options{Baseline: DefaultBaseline, Traces: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range s.Legs {
		for _, g := range l.Clock.Fold.GPUs {
			if g.Hist != nil || g.Power != nil || g.Throttle != nil || g.First != nil {
				t.Fatalf("leg %s: counts or first sample kept after the comparison", l.Name())
			}
			if g.Trace == nil || g.Total == 0 {
				t.Fatalf("leg %s: what the reports need was shed", l.Name())
			}
		}
		if l.Clock.BenchPoints != nil {
			t.Fatalf("leg %s: its bench points' labels kept after the comparison", l.Name())
		}
	}
}
