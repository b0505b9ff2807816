package summarize_test

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/clockgate/clockgate/ratio"
)

// TestGuideLLMConstantAndPoisson: a GuideLLM constant and a Poisson
// benchmark at one rate are two points of a leg (SPEC §12.5), never two
// objects for one point; each is compared with its own kind in the other
// arm, and summary.json names each one's strategy.
func TestGuideLLMConstantAndPoisson(t *testing.T) {
	root := copyTree(t, "guidellm-aa")
	// In every report the 4-stream benchmark becomes a constant one at 2
	// requests/s and the 8-stream one a Poisson one at 2 requests/s: two
	// throughputs apart by two thirds, so a point compared with the other
	// kind shows.
	for _, eng := range []string{"vllm", "vllm-again"} {
		for _, r := range []string{"r1", "r2"} {
			p := filepath.Join(root, "bench", "llama-3.1-8b-instruct", eng, r, "benchmarks.json")
			data, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			var doc map[string]any
			if err := json.Unmarshal(data, &doc); err != nil {
				t.Fatal(err)
			}
			for _, b := range doc["benchmarks"].([]any) {
				strat := b.(map[string]any)["config"].(map[string]any)["strategy"].(map[string]any)
				switch strat["streams"] {
				case 4.0:
					b.(map[string]any)["config"].(map[string]any)["strategy"] = map[string]any{"type_": "constant", "rate": 2.0, "max_concurrency": 4.0}
				case 8.0:
					b.(map[string]any)["config"].(map[string]any)["strategy"] = map[string]any{"type_": "poisson", "rate": 2.0, "max_concurrency": 8.0}
				}
			}
			out, err := json.Marshal(doc)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(p, out, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	s := run(t, root)
	for _, l := range s.Legs {
		if len(l.Reasons) != 0 || len(l.Points) != 4 {
			t.Errorf("leg %s/%s: reasons %v, %d points of 4", l.Engine, l.Name(), l.Reasons, len(l.Points))
		}
	}
	if len(s.Comparisons) != 1 {
		t.Fatalf("%d comparisons", len(s.Comparisons))
	}
	c := s.Comparisons[0]
	want := []struct {
		id   ratio.PointID
		tput float64
	}{
		{ratio.PointID{MaxConcurrency: 1}, 12.3},
		{ratio.PointID{MaxConcurrency: 2}, 23.9},
		{ratio.PointID{RequestRate: 2, Strategy: "constant"}, 43.6},
		{ratio.PointID{RequestRate: 2, Strategy: "poisson"}, 72.8},
	}
	if len(c.Throughput.Points) != len(want) {
		t.Fatalf("points %+v, want %d", c.Throughput.Points, len(want))
	}
	for i, w := range want {
		pt := c.Throughput.Points[i]
		if pt.ID != w.id || pt.Ours == nil || pt.Baseline == nil || pt.Ratio == nil ||
			math.Abs(*pt.Ours-w.tput) > 0.1 || math.Abs(*pt.Baseline-w.tput) > 0.1 || math.Abs(*pt.Ratio-1) > 0.01 {
			t.Errorf("point %d: %+v, want %s at %.1f tokens/s in each arm", i, pt, w.id.Label(), w.tput)
		}
	}
	if !c.Throughput.BindingEligible {
		t.Errorf("THROUGHPUT NOT ESTABLISHED: %v", c.Throughput.Reasons)
	}
	js, err := json.Marshal(c.Throughput.Points[3])
	if err != nil {
		t.Fatal(err)
	}
	var got map[string]any
	if err := json.Unmarshal(js, &got); err != nil {
		t.Fatal(err)
	}
	if got["strategy"] != "poisson" || got["request_rate"] != 2.0 || got["max_concurrency"] != nil {
		t.Errorf("summary.json point %s", js)
	}
}
