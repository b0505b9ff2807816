package summarize

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/clockgate/clockgate/clocks"
	"github.com/clockgate/clockgate/summarize/internal/treegen"
)

// TestMultiHostLegFailsClosed: a leg in the directory form (SPEC §12.3,
// clocks/<model>/<engine>/r<N>/leg.json) whose host wrote nothing is not
// skipped nor passed: clock.host_missing, saying how to stop samplers;
// the leg is not eligible.
func TestMultiHostLegFailsClosed(t *testing.T) {
	dir := t.TempDir()
	if err := treegen.WriteBig(dir, 2, 200); err != nil {
		t.Fatal(err)
	}
	recs, _ := filepath.Glob(filepath.Join(dir, "clocks", "*", "*", "r1.summary.json"))
	if len(recs) == 0 {
		t.Fatal("no leg r1 in the tree")
	}
	prefix := strings.TrimSuffix(recs[0], ".summary.json")
	for _, suf := range []string{".summary.json", ".samples.jsonl", ".points.jsonl"} {
		os.Remove(prefix + suf)
	}
	os.MkdirAll(filepath.Join(prefix, "hosts"), 0o755)
	os.WriteFile(filepath.Join(prefix, "leg.json"), []byte(`{"schema": 1, "interval_s": 1, "skew_bound_ms": 100, "client": "node1", "hosts": [{"host": "node1"}]}`), 0o644)
	s, err := Summarize(dir, Options{Baseline: DefaultBaseline})
	if err != nil {
		t.Fatal(err)
	}
	rel, _ := filepath.Rel(dir, prefix)
	found := false
	for _, l := range s.Legs {
		if l.Run != 1 || !strings.HasSuffix(filepath.ToSlash(rel), l.Model+"/"+l.Engine+"/r1") {
			continue
		}
		found = true
		if l.Clock.Eligible() {
			t.Fatal("a multi-host leg is eligible")
		}
		want := "host node1 (rank 1 of 1 in leg.json) has no record at " + filepath.ToSlash(rel) + "/hosts/node1.summary.json: its sampler never ran, or was killed before it could write one; " + clocks.HowToStopSamplers
		ok := false
		for _, r := range l.Reasons {
			ok = ok || r.Code == clocks.CodeHostMissing && strings.HasPrefix(r.Message, want)
		}
		if !ok {
			t.Fatalf("reasons %+v, want clock.host_missing %q", l.Reasons, want)
		}
	}
	if !found {
		t.Fatalf("the multi-host leg %s is not in the summary", rel)
	}
	for _, w := range s.Warnings {
		if strings.Contains(w, filepath.ToSlash(rel)) {
			t.Fatalf("warned of the leg rather than judging it: %s", w)
		}
	}
}
