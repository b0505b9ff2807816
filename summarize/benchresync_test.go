package summarize

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/clockgate/clockgate/internal/benchtest"
)

// appendLine is vLLM 0.25.1's real result as --append-result writes it
// (internal/benchtest).
func appendLine(t *testing.T, conc, completed, failed string) string {
	t.Helper()
	return benchtest.AppendLine(t, conc, completed, failed)
}

// TestSyntaxErrorThroughALeg: a file of several results whose last one
// was cut off, read through a leg: bench.failed_requests for line 1 stands
// beside bench.invalid for line 4.
func TestSyntaxErrorThroughALeg(t *testing.T) {
	data := appendLine(t, "1", "5", "1") + "\n" + appendLine(t, "2", "8", "0") + "\n" +
		appendLine(t, "4", "8", "0") + "\n" + appendLine(t, "8", "8", "0") + "\n"
	data = data[:len(data)-200]

	// The same through a leg: bench.failed_requests for line 1 stands
	// beside bench.invalid for line 4.
	root := t.TempDir()
	dir := filepath.Join(root, "bench", "m", "vllm", "r1")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "results.json"), []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := Summarize(root, Options{Baseline: "vllm"})
	if err != nil {
		t.Fatal(err)
	}
	var invalid, failed []string
	for _, r := range s.Legs[0].Reasons {
		switch r.Code {
		case CodeBenchInvalid:
			invalid = append(invalid, r.Message)
		case CodeFailedRequests:
			failed = append(failed, r.Message)
		}
	}
	legRel := "bench/m/vllm/r1/results.json"
	if len(failed) != 1 || !strings.HasPrefix(failed[0], legRel+":1: max_concurrency 1, request_rate inf: want every request completed") {
		t.Errorf("leg: bench.failed_requests %q, want one naming %s:1", failed, legRel)
	}
	if len(invalid) != 1 || !strings.HasPrefix(invalid[0], legRel+":4: ") {
		t.Errorf("leg: bench.invalid %q, want one naming %s:4", invalid, legRel)
	}
	if got := len(s.Legs[0].Points); got != 3 {
		t.Errorf("leg: %d points, want 3", got)
	}
}
