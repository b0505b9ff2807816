package summarize_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/clockgate/clockgate/summarize"
)

// TestAIPerfAggregatesAndYAML: AIPerf's sweep aggregates in a leg are
// skipped with a warning naming each (no window, no point of their own);
// GuideLLM's YAML report is bench.invalid saying why it is not read; a
// directory without AIPerf's export is bench.invalid naming the file.
func TestAIPerfAggregatesAndYAML(t *testing.T) {
	root := copyTree(t, "aiperf-aa")
	leg := filepath.Join(root, "bench", "llama-3.1-8b-instruct", "vllm", "r1")
	must := func(err error) {
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.MkdirAll(filepath.Join(leg, "sweep_aggregate"), 0o755))
	must(os.WriteFile(filepath.Join(leg, "sweep_aggregate", "profile_export_aiperf_aggregate.json"), []byte("{}"), 0o644))
	must(os.WriteFile(filepath.Join(leg, "profile_export_aiperf_aggregate.csv"), []byte("x\n"), 0o644))
	s := run(t, root)
	warned := 0
	for _, w := range s.Warnings {
		if strings.Contains(w, "AIPerf's aggregate over a sweep's points: it holds no window and no point of its own; skipped") {
			warned++
		}
	}
	if l := legOf(t, s, "llama-3.1-8b-instruct/vllm/r1"); warned != 2 || len(l.Reasons) != 0 || len(l.Points) != 4 {
		t.Errorf("aggregates: %d warnings of 2 (%q), reasons %v, %d points", warned, s.Warnings, l.Reasons, len(l.Points))
	}

	must(os.WriteFile(filepath.Join(leg, "benchmarks.yaml"), []byte("benchmarks: []\n"), 0o644))
	must(os.MkdirAll(filepath.Join(leg, "notes"), 0o755))
	s = run(t, root)
	l := legOf(t, s, "llama-3.1-8b-instruct/vllm/r1")
	var msgs []string
	for _, r := range l.Reasons {
		if r.Code == summarize.CodeBenchInvalid {
			msgs = append(msgs, r.Message)
		}
	}
	want := []string{
		"bench/llama-3.1-8b-instruct/vllm/r1/benchmarks.yaml: GuideLLM's YAML report is not read: reading it would need a YAML module clockgate does not depend on",
		"bench/llama-3.1-8b-instruct/vllm/r1/notes/profile_export_aiperf.json: no such file or directory",
	}
	if len(msgs) != len(want) {
		t.Fatalf("bench.invalid %q, want %d", msgs, len(want))
	}
	for i, w := range want {
		if !strings.HasPrefix(msgs[i], w) {
			t.Errorf("bench.invalid %q\nwant it to begin %q", msgs[i], w)
		}
	}
}
