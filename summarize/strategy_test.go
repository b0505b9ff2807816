package summarize_test

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/clockgate/clockgate/ratio"
	"github.com/clockgate/clockgate/summarize"
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

// TestNoReaderAcceptsVoidsTheLeg: a file under bench/ that states a bench
// result's keys but that no reader accepts (a vLLM result trimmed of its
// result keys, AIPerf's export out of its directory) is bench.invalid on
// its leg naming the file and the formats tried (SPEC §12.5), with the leg
// in either arm; the sidecars beside it stay warnings.
func TestNoReaderAcceptsVoidsTheLeg(t *testing.T) {
	const llama = "llama-3.1-8b-instruct"
	aiperf, err := os.ReadFile(filepath.Join("..", "testdata", "bench-real", "aiperf", "toplevel", "qwen_concurrency1", "profile_export_aiperf.json"))
	if err != nil {
		t.Fatal(err)
	}
	files := map[string]struct{ data, want string }{
		"trimmed.json": {`{"date": "20250304-014141", "backend": "vllm", "model_id": "m", "num_prompts": 200, "request_rate": 1.0, "max_concurrency": null, "mean_ttft_ms": 111.2}`,
			"trimmed.json: no bench reader accepts it: an object with request_rate, max_concurrency, num_prompts, as a bench result has, but in no client's layout; tried vllm, vllm-legacy, sglang (an object with one of output_throughput, completed, total_output_tokens), guidellm (one object with a benchmarks array), aiperf (profile_export_aiperf.json in the point's own directory); "},
		"profile_export_aiperf.json": {string(aiperf),
			"profile_export_aiperf.json: AIPerf's export (an object with input_config and its metric tags) outside an artifact directory: the aiperf reader reads profile_export_aiperf.json only in the point's own directory, where profile_export.jsonl beside it gives the window; tried aiperf; "},
	}
	for _, eng := range []string{"fastengine", "vllm"} {
		for name, f := range files {
			root := copyTree(t, "sidecars")
			rel := "bench/" + llama + "/" + eng + "/r2/" + name
			if err := os.WriteFile(filepath.Join(root, filepath.FromSlash(rel)), []byte(f.data), 0o644); err != nil {
				t.Fatal(err)
			}
			s := run(t, root)
			l := legOf(t, s, llama+"/"+eng+"/r2")
			if len(l.Reasons) != 1 || l.Reasons[0].Code != summarize.CodeBenchInvalid || !strings.HasPrefix(l.Reasons[0].Message, "bench/"+llama+"/"+eng+"/r2/"+f.want) {
				t.Errorf("%s in %s: reasons %v\nwant one bench.invalid beginning %q", name, eng, l.Reasons, "bench/"+llama+"/"+eng+"/r2/"+f.want)
			}
			if len(l.Points) != 4 || s.GatePass || len(s.Comparisons) != 1 || s.Comparisons[0].Throughput.BindingEligible {
				t.Errorf("%s in %s: %d points, gate %v", name, eng, len(l.Points), s.GatePass)
			}
			sidecars := 0
			for _, w := range s.Warnings {
				if strings.Contains(w, ": not a bench result (") {
					sidecars++
				}
			}
			if sidecars != 4 {
				t.Errorf("%s in %s: %d sidecar warnings of 4: %q", name, eng, sidecars, s.Warnings)
			}
		}
	}
}
