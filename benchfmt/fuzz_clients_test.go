package benchfmt

import (
	"bytes"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// checkClientFile holds a client reader's answer to its contract: never
// nothing (points, or bench.invalid naming the file), every message
// naming the file, every point in range with a window whose start is not
// after its end.
func checkClientFile(t *testing.T, rel string, f File) {
	t.Helper()
	if len(f.Points)+len(f.Invalid) == 0 && len(f.Warnings) == 0 {
		t.Fatalf("no point and no message: %+v", f)
	}
	for _, m := range append(append(append([]string{}, f.Invalid...), f.Failed...), f.Warnings...) {
		if !strings.HasPrefix(m, rel) || strings.Contains(m, "\n") {
			t.Fatalf("message %q does not name %s on one line", m, rel)
		}
	}
	for _, p := range f.Points {
		if !(p.OutputThroughput >= 0) || math.IsInf(p.OutputThroughput, 0) || p.ID.MaxConcurrency < 0 || p.ID.RequestRate < 0 ||
			p.Completed > p.NumPrompts || p.End.Before(p.Start) || p.HasWindow() != !p.Start.IsZero() {
			t.Fatalf("point out of range: %+v", p)
		}
	}
}

// FuzzReadGuideLLM holds the GuideLLM reader to its contract on any
// report.
func FuzzReadGuideLLM(f *testing.F) {
	fuzzSeeds(f, ".json", "../testdata/bench-real/guidellm", "../testdata/trees/guidellm-aa/bench")
	f.Add([]byte(guidellmReport(guidellmBench(`{"type_": "concurrent", "streams": 4}`), guidellmBench(`{"type_": "poisson", "rate": 2.5}`))))
	const rel = "bench/m/e/r1/benchmarks.json"
	f.Fuzz(func(t *testing.T, data []byte) {
		checkClientFile(t, rel, ReadGuideLLM(rel, data))
	})
}

// FuzzReadAIPerf holds the AIPerf reader to its contract on any
// artifact directory's two files: the JSON export read as a point (or
// refused naming its key), the JSONL as a window (or refused naming
// file:line), never a panic, never a window whose start is after its end
// or outside the epochs.
func FuzzReadAIPerf(f *testing.F) {
	for _, d := range []string{"toplevel/qwen_concurrency1", "records/run1"} {
		j, _ := os.ReadFile(filepath.Join(realDir, "aiperf", d, AIPerfJSON))
		l, _ := os.ReadFile(filepath.Join(realDir, "aiperf", d, AIPerfJSONL))
		// The JSONL's first record only: a whole real JSONL as a seed
		// slows the mutator to a few inputs a second.
		first, _, _ := bytes.Cut(l, []byte("\n"))
		f.Add(j, first)
	}
	f.Add([]byte(aiperfTop), []byte("{\"metadata\": {\"request_start_ns\": 1762551534797067827, \"request_end_ns\": 1762551538441354976, \"benchmark_phase\": \"profiling\"}}\n"))
	const rel = "c4/" + AIPerfJSON
	f.Fuzz(func(t *testing.T, js, jsonl []byte) {
		if v, err := parseStrict(rel, js); err != nil {
			if !strings.HasPrefix(err.Error(), rel+":") {
				t.Fatalf("refusal %q does not name %s:line", err, rel)
			}
		} else {
			p, bad, _ := aiperfPoint(rel, v)
			if len(bad) == 0 {
				checkClientFile(t, rel, File{Points: []Point{p}})
			}
		}
		start, end, n, err := aiperfRecords("c4/"+AIPerfJSONL, bytes.NewReader(jsonl))
		switch {
		case err != nil:
			if !strings.HasPrefix(err.Error(), "c4/"+AIPerfJSONL+":") {
				t.Fatalf("refusal %q does not name the JSONL's line", err)
			}
		case n > 0 && (end.Before(start) || !inEpoch(start) || !inEpoch(end)):
			t.Fatalf("window %s to %s from %d records", start, end, n)
		}
	})
}
