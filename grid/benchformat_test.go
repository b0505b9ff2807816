package grid

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/clockgate/clockgate/benchfmt"
	"github.com/clockgate/clockgate/ratio"
)

// TestBenchFormat: [bench] format is vllm when absent, each client's name
// when given, and anything else is refused naming its line and the
// formats; {result_dir} is the point's artifact directory for AIPerf only.
func TestBenchFormat(t *testing.T) {
	p, err := Parse("plan.toml", []byte(goodPlan))
	if err != nil || p.Bench.Format != FormatVLLM {
		t.Fatalf("default: %v %q", err, p.Bench.Format)
	}
	for _, f := range benchFormats {
		p, err := Parse("plan.toml", []byte(edit(t, "[bench]\n", "[bench]\nformat = \""+f+"\"\n")))
		if err != nil || p.Bench.Format != f {
			t.Errorf("%s: %v %q", f, err, p.Bench.Format)
		}
	}
	_, err = Parse("plan.toml", []byte(edit(t, "[bench]\n", "[bench]\nformat = \"genai-perf\"\n")))
	if err == nil || !strings.Contains(err.Error(), `format: want one of ["vllm" "sglang" "aiperf" "guidellm"], found "genai-perf"`) || !strings.HasPrefix(err.Error(), "plan.toml:") {
		t.Errorf("refusal: %v", err)
	}
	pt := ratio.PointID{MaxConcurrency: 8}
	if got := pointResultDir(FormatAIPerf, "/b", pt); got != filepath.Join("/b", "c8-rinf") {
		t.Errorf("aiperf result_dir %s", got)
	}
	if got := pointResultDir(FormatGuideLLM, "/b", pt); got != "/b" {
		t.Errorf("guidellm result_dir %s", got)
	}
}

// TestCheckPointResult: a point's result is read by its format's reader
// before the leg commits: a GuideLLM report of the point passes, a result
// of another client or a missing artifact directory is refused.
func TestCheckPointResult(t *testing.T) {
	dir := t.TempDir()
	pt := ratio.PointID{MaxConcurrency: 8}
	report := `{"metadata": {"version": 1, "guidellm_version": "0.5.0"}, "args": {"model": "m/M"}, "benchmarks": [{"config": {"strategy": {"type_": "concurrent", "streams": 8}}, ` +
		`"metrics": {"request_totals": {"successful": 8, "errored": 0, "incomplete": 0, "total": 8}, "prompt_token_count": {"successful": {"total_sum": 800}}, ` +
		`"output_token_count": {"successful": {"total_sum": 1024}}}, "start_time": 1762551534.5, "end_time": 1762551550.5, "duration": 16.0}]}`
	write := func(name, data string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("c8-rinf.json", report)
	if err := checkPointResult(FormatGuideLLM, dir, pt, benchfmt.Options{}); err != nil {
		t.Errorf("guidellm: %v", err)
	}
	if err := checkPointResult(FormatGuideLLM, dir, ratio.PointID{MaxConcurrency: 4}, benchfmt.Options{}); err == nil || !strings.Contains(err.Error(), "no result at") {
		t.Errorf("guidellm, no file: %v", err)
	}
	write("c8-rinf.json", `{"model_id": "m/M", "num_prompts": 8, "max_concurrency": 8, "completed": 8, "failed": 0, "total_input_tokens": 800, "total_output_tokens": 1024, "output_throughput": 64.0, "request_rate": "inf"}`)
	if err := checkPointResult(FormatGuideLLM, dir, pt, benchfmt.Options{}); err == nil || err.Error() != "c8-rinf.json is a vllm result, not guidellm's as the plan's [bench] format says" {
		t.Errorf("vllm as guidellm: %v", err)
	}
	if err := checkPointResult(FormatAIPerf, dir, pt, benchfmt.Options{}); err == nil || !strings.Contains(err.Error(), "the bench wrote no profile_export_aiperf.json in "+filepath.Join(dir, "c8-rinf")+": pass {result_dir} to aiperf profile as --artifact-dir") {
		t.Errorf("aiperf, no directory: %v", err)
	}
}

// TestCheckPointResultBenchTZ: with grid --bench-tz an AIPerf point whose
// only times are its zoneless start_time and end_time is read in that
// zone before the leg commits, and refused when they do not read; without
// it they place no window and are not read.
func TestCheckPointResultBenchTZ(t *testing.T) {
	src, err := filepath.Glob(filepath.Join("..", "testdata", "trees", "aiperf-aa", "bench", "*", "vllm", "r1", "*concurrency1", "profile_export_aiperf.json"))
	if err != nil || len(src) != 1 {
		t.Fatalf("%v %v", src, err)
	}
	data, err := os.ReadFile(src[0])
	if err != nil {
		t.Fatal(err)
	}
	// No JSONL and no epoch fields: start_time and end_time are all the
	// point's times.
	export := strings.NewReplacer(`"min_request_timestamp"`, `"x_min"`, `"max_response_timestamp"`, `"x_max"`, `"concurrency": 1`, `"concurrency": 8`).Replace(string(data))
	dir := t.TempDir()
	pt := ratio.PointID{MaxConcurrency: 8}
	write := func(s string) {
		if err := os.MkdirAll(filepath.Join(dir, "c8-rinf"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "c8-rinf", benchfmt.AIPerfJSON), []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(export)
	for _, opt := range []benchfmt.Options{{}, {BenchTZ: time.UTC}} {
		if err := checkPointResult(FormatAIPerf, dir, pt, opt); err != nil {
			t.Errorf("zone %v: %v", opt.BenchTZ, err)
		}
	}
	write(strings.Replace(export, `"start_time": "2026-`, `"start_time": "12/08/2026 `, 1))
	if err := checkPointResult(FormatAIPerf, dir, pt, benchfmt.Options{}); err != nil {
		t.Errorf("no zone: %v", err)
	}
	want := "the result is not a readable bench point: c8-rinf/profile_export_aiperf.json: start_time: want a local time such as 2025-11-07T13:38:54.793124 from 2000 to 2100, found string \"12/08/2026 "
	if err := checkPointResult(FormatAIPerf, dir, pt, benchfmt.Options{BenchTZ: time.UTC}); err == nil || !strings.HasPrefix(err.Error(), want) {
		t.Errorf("an unreadable start_time in UTC: %v\nwant it to begin %q", err, want)
	}
}
