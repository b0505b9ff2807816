package grid

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

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
	if err := checkPointResult(FormatGuideLLM, dir, pt); err != nil {
		t.Errorf("guidellm: %v", err)
	}
	if err := checkPointResult(FormatGuideLLM, dir, ratio.PointID{MaxConcurrency: 4}); err == nil || !strings.Contains(err.Error(), "no result at") {
		t.Errorf("guidellm, no file: %v", err)
	}
	write("c8-rinf.json", `{"model_id": "m/M", "num_prompts": 8, "max_concurrency": 8, "completed": 8, "failed": 0, "total_input_tokens": 800, "total_output_tokens": 1024, "output_throughput": 64.0, "request_rate": "inf"}`)
	if err := checkPointResult(FormatGuideLLM, dir, pt); err == nil || err.Error() != "c8-rinf.json is a vllm result, not guidellm's as the plan's [bench] format says" {
		t.Errorf("vllm as guidellm: %v", err)
	}
	if err := checkPointResult(FormatAIPerf, dir, pt); err == nil || !strings.Contains(err.Error(), "the bench wrote no profile_export_aiperf.json in "+filepath.Join(dir, "c8-rinf")+": pass {result_dir} to aiperf profile as --artifact-dir") {
		t.Errorf("aiperf, no directory: %v", err)
	}
}
