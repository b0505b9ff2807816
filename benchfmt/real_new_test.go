package benchfmt

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/clockgate/clockgate/ratio"
)

// openUnder opens rel under root, as summarize's opener does.
func openUnder(root string) Opener {
	return func(rel string) (*os.File, error) { return os.Open(filepath.Join(root, filepath.FromSlash(rel))) }
}

// TestRealAIPerf reads AIPerf's own artifact directories (see
// testdata/bench-real/aiperf/SOURCE.md): the point from
// input_config.loadgen, the throughput, totals and requests from the
// top-level metric tags, and the window from the profiling records of
// profile_export.jsonl.
func TestRealAIPerf(t *testing.T) {
	root := filepath.Join(realDir, "aiperf", "toplevel")
	cases := []struct {
		dir        string
		conc       int
		tput       float64
		osl, isl   int
		start, end int64
	}{
		{"qwen_concurrency1", 1, 50.08213863971112, 12799, 6400, 1762551534797067827, 1762551574184596737},
		{"qwen_concurrency2", 2, 100.6512156752534, 12798, 6400, 1762551801663056063, 1762551820423258821},
		{"qwen_concurrency4", 4, 194.50576456385642, 12798, 6400, 1762551940061660356, 1762551951333736873},
	}
	for _, c := range cases {
		f := ReadAIPerf(openUnder(root), c.dir, Options{})
		if len(f.Points) != 1 || len(f.Invalid)+len(f.Failed)+len(f.Warnings) > 0 {
			t.Fatalf("%s: %+v", c.dir, f)
		}
		p := f.Points[0]
		want := ratio.BenchPoint{ID: ratio.PointID{MaxConcurrency: c.conc}, ModelID: "Qwen/Qwen3-0.6B", NumPrompts: 64, Completed: 64,
			TotalInputTokens: c.isl, TotalOutputTokens: c.osl, OutputThroughput: c.tput}
		if p.BenchPoint != want || p.Format != FormatAIPerf {
			t.Errorf("%s: %+v, want %+v", c.dir, p.BenchPoint, want)
		}
		if p.Start != time.Unix(0, c.start).UTC() || p.End != time.Unix(0, c.end).UTC() || !strings.HasPrefix(p.WindowFrom, AIPerfJSONL) {
			t.Errorf("%s: window %s to %s from %q, want %d to %d from the JSONL", c.dir, p.Start, p.End, p.WindowFrom, c.start, c.end)
		}
	}
}

// TestRealAIPerfRecords reads AIPerf's example artifact of the layout with
// metric tags under records (AIPerf 0.1, whose JSONL has no
// request_start_ns): its window is min_request_timestamp to
// max_response_timestamp, and its 11 cancelled requests are failed
// requests.
func TestRealAIPerfRecords(t *testing.T) {
	root := filepath.Join(realDir, "aiperf", "records")
	f := ReadAIPerf(openUnder(root), "run1", Options{})
	if len(f.Points) != 1 || len(f.Invalid) > 0 {
		t.Fatalf("%+v", f)
	}
	p := f.Points[0]
	want := ratio.BenchPoint{ID: ratio.PointID{MaxConcurrency: 100}, ModelID: "openai/gpt-oss-20b", NumPrompts: 100, Completed: 89,
		TotalInputTokens: 48950, TotalOutputTokens: 21624, OutputThroughput: 2320.7222350404572}
	if p.BenchPoint != want {
		t.Errorf("%+v, want %+v", p.BenchPoint, want)
	}
	wantFailed := "run1/profile_export_aiperf.json: max_concurrency 100, request_rate inf: want every request completed and error_request_count 0, found request_count 89, error_request_count 11; " + hintFailed
	if len(f.Failed) != 1 || f.Failed[0] != wantFailed {
		t.Errorf("failed %q\nwant %q", f.Failed, wantFailed)
	}
	if p.Start.UnixNano() != 1759522419154568960 || p.End.UnixNano() != 1759522428472357888 || !strings.Contains(p.WindowFrom, "min_request_timestamp") {
		t.Errorf("window %s to %s from %q", p.Start.Format(time.RFC3339Nano), p.End.Format(time.RFC3339Nano), p.WindowFrom)
	}
}

// TestRealGuideLLM reads a report GuideLLM wrote before 0.4 (run_stats,
// args), from GuideLLM's own tests (see
// testdata/bench-real/guidellm/SOURCE.md): one synchronous point (1/inf),
// its requests the benchmark's request_totals (46 successful, 1
// incomplete: a failed request, as SPEC §12.5 counts it), never
// run_stats.requests_made (1, the whole run's as the file has it); its
// model the worker's backend_model; its throughput the successful output
// tokens over the measured duration (not the report's mean of
// per-request rates); its window start_time to end_time, not run_stats'.
func TestRealGuideLLM(t *testing.T) {
	rel := "guidellm/pre-0.4/benchmarks_stripped.json"
	f, err := ReadFile(openUnder(realDir), rel, Options{})
	if err != nil || len(f.Points) != 1 || len(f.Invalid) > 0 || !slices.Equal(f.Formats, []string{FormatGuideLLM}) {
		t.Fatalf("%v %+v", err, f)
	}
	p := f.Points[0]
	want := ratio.BenchPoint{ID: ratio.PointID{MaxConcurrency: 1}, ModelID: "example_model", NumPrompts: 47, Completed: 46,
		TotalInputTokens: 11827, TotalOutputTokens: 5888, OutputThroughput: 5888 / 29.997201442718506}
	if p.BenchPoint != want || p.Format != FormatGuideLLM || p.ClientVersion != "" {
		t.Errorf("%+v %q %q, want %+v", p.BenchPoint, p.Format, p.ClientVersion, want)
	}
	if p.Start != time.Unix(1749157168, 182700000).UTC() || p.End != time.Unix(1749157198, 179902000).UTC() || p.WindowFrom != "start_time, end_time" {
		t.Errorf("window %s to %s from %q", p.Start.Format(time.RFC3339Nano), p.End.Format(time.RFC3339Nano), p.WindowFrom)
	}
	wantFailed := rel + ": benchmarks[0]: max_concurrency 1, request_rate inf: want every request successful, found successful 46 of 47, errored 0, incomplete 1; " + hintFailed
	if !slices.Equal(f.Failed, []string{wantFailed}) {
		t.Errorf("failed %q\nwant %q", f.Failed, wantFailed)
	}
	// The report's own mean of per-request rates is not the throughput.
	if got := 198.13346751788123; got == p.OutputThroughput {
		t.Errorf("throughput %v is output_tokens_per_second's mean", got)
	}
}
