package benchfmt

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/clockgate/clockgate/ratio"
)

const realDir = "../testdata/bench-real"

// TestRealFiles reads each real result file in testdata/bench-real (see
// its README for where each came from) and checks what clockgate makes of
// it: the format named, the points and their numbers, the reasons and the
// warnings.
func TestRealFiles(t *testing.T) {
	none := ratio.PointID{}
	c2 := ratio.PointID{MaxConcurrency: 2}
	rate := func(r float64) ratio.PointID { return ratio.PointID{RequestRate: r} }
	type want struct {
		format    string
		points    []ratio.PointID
		tput      float64 // the first point's output_throughput
		prompts   int     // the first point's num_prompts (or what stands for it)
		outTokens int     // the first point's total_output_tokens
		modelID   string
		invalid   []string // fragments, one per bench.invalid message
		failed    []string // fragments, one per bench.failed_requests message
		notResult string   // fragment of the warning
	}
	s8 := "vllm-0.25/sweep/SERVE--max_num_seqs=8-BENCH--max_concurrency=2-num_prompts=8/"
	s4 := "vllm-0.25/sweep/SERVE--max_num_seqs=4-BENCH--max_concurrency=2-num_prompts=8/"
	cases := map[string]want{
		"vllm-0.25/bench_serve_v0.25.1.json": {format: FormatVLLM, points: []ratio.PointID{c2}, tput: 82.89297074037474, prompts: 8, outTokens: 128, modelID: "facebook/opt-125m"},
		"vllm-0.25/bench_serve_all_requests_failed_v0.25.1.json": {format: FormatVLLM, points: []ratio.PointID{none}, tput: 0, prompts: 8, outTokens: 0, modelID: "facebook/opt-125m",
			failed: []string{"max_concurrency none, request_rate inf: want every request completed and failed 0, found completed 0 of num_prompts 8, failed 8"}},
		s8 + "run=0.json":   {format: FormatVLLM, points: []ratio.PointID{c2}, tput: 191.2005994745598, prompts: 8, outTokens: 128, modelID: "facebook/opt-125m"},
		s8 + "run=1.json":   {format: FormatVLLM, points: []ratio.PointID{c2}, tput: 186.48326383470211, prompts: 8, outTokens: 128, modelID: "facebook/opt-125m"},
		s4 + "run=0.json":   {format: FormatVLLM, points: []ratio.PointID{c2}, tput: 93.74767963046673, prompts: 8, outTokens: 128, modelID: "facebook/opt-125m"},
		s4 + "run=1.json":   {format: FormatVLLM, points: []ratio.PointID{c2}, tput: 199.36907134182283, prompts: 8, outTokens: 128, modelID: "facebook/opt-125m"},
		s8 + "summary.json": {notResult: "x.json: not a bench result (its top level is an array"},
		s4 + "summary.json": {notResult: "x.json: not a bench result (its top level is an array"},
		"vllm-0.5/1xA100-80GB-SXM/Mistral-7B-Instruct-v0.3_tp1_len2000.json": {format: FormatVLLMLegacy, points: []ratio.PointID{none},
			tput: 238.39258442037368, prompts: 10, outTokens: 2440, modelID: "mistralai/Mistral-7B-Instruct-v0.3"},
		"vllm-0.5/2xA100-80GB-SXM/Mistral-7B-Instruct-v0.3_tp2_len2000.json": {format: FormatVLLMLegacy, points: []ratio.PointID{none},
			tput: 370.289771818795, prompts: 10, outTokens: 2498, modelID: "mistralai/Mistral-7B-Instruct-v0.3"},
		"vllm-nightly-trimmed/serving_llama8B_tp1_1.json": {invalid: []string{"x.json: no bench reader accepts it: an object with request_rate, max_concurrency, num_prompts, as a bench result has, but in no client's layout; " + formatsTried}},
		"vllm-nightly-trimmed/serving_llama8B_tp1_2.json": {invalid: []string{"x.json: no bench reader accepts it: an object with request_rate, max_concurrency, num_prompts, as a bench result has, but in no client's layout; " + formatsTried}},
		"sglang/llama_3_3_70b_output_online.jsonl": {format: FormatSGLang, points: []ratio.PointID{rate(1), rate(2), rate(4), rate(8), rate(16)},
			tput: 537.4147638064377, prompts: 300, outTokens: 160347},
		// The sharegpt runs appended at 4 and 8 req/s: both objects of
		// each stay points here; the leg refuses them (benchleg.go).
		"sglang/outputs/llama_3_3_70b_online_output.jsonl": {format: FormatSGLang,
			points: []ratio.PointID{rate(1), rate(2), rate(4), rate(8), rate(16), rate(4), rate(8)}, tput: 537.4142851849319, prompts: 300, outTokens: 160347},
		"sglang/outputs/llama_3_3_70b_offline_output.jsonl": {format: FormatSGLang,
			points: []ratio.PointID{none, none, none, none, none, none, none}, tput: 4520.698730654741, prompts: 3000, outTokens: 1544818},
		"sglang/outputs/deepseek_dp_mla_output.jsonl": {format: FormatSGLang, points: []ratio.PointID{none}, tput: 12412.394674113431, prompts: 10000, outTokens: 5120000},
	}
	seen := 0
	err := filepath.WalkDir(realDir, func(p string, d os.DirEntry, err error) error {
		if err == nil && d.IsDir() && (d.Name() == "aiperf" || d.Name() == "guidellm") {
			return filepath.SkipDir // TestRealAIPerf, TestRealGuideLLM
		}
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".json") && !strings.HasSuffix(p, ".jsonl") {
			return err
		}
		rel, _ := filepath.Rel(realDir, p)
		rel = filepath.ToSlash(rel)
		w, ok := cases[rel]
		if !ok {
			t.Errorf("%s: a real file with no expectation here", rel)
			return nil
		}
		seen++
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		f := Parse("bench/m/e/r1/x.json", data)
		if w.format == "" && len(w.invalid) > 0 {
			// A result trimmed of every key a reader reads: refused.
			if len(f.Invalid) != len(w.invalid) || !strings.Contains(f.Invalid[0], w.invalid[0]) || len(f.Points) > 0 || f.NotResult != "" {
				t.Errorf("%s: %+v, want bench.invalid %q", rel, f, w.invalid)
			}
			return nil
		}
		if w.notResult != "" {
			if !strings.Contains(f.NotResult, w.notResult) || len(f.Points)+len(f.Invalid) > 0 {
				t.Errorf("%s: %+v, want the warning %q", rel, f, w.notResult)
			}
			return nil
		}
		var ids []ratio.PointID
		for _, pt := range f.Points {
			ids = append(ids, pt.ID)
		}
		if !slices.Equal(ids, w.points) || !slices.Equal(f.Formats, []string{w.format}) || f.NotResult != "" {
			t.Errorf("%s: points %v, formats %v, warning %q; want %v, [%s]", rel, ids, f.Formats, f.NotResult, w.points, w.format)
			return nil
		}
		p0 := f.Points[0]
		if p0.OutputThroughput != w.tput || p0.NumPrompts != w.prompts || p0.TotalOutputTokens != w.outTokens || p0.ModelID != w.modelID {
			t.Errorf("%s: first point %+v", rel, p0.BenchPoint)
		}
		for name, got := range map[string][]string{"invalid": f.Invalid, "failed": f.Failed} {
			wantFr := w.invalid
			if name == "failed" {
				wantFr = w.failed
			}
			if len(got) != len(wantFr) {
				t.Errorf("%s: %s %q, want %d", rel, name, got, len(wantFr))
				continue
			}
			for i := range got {
				if !strings.Contains(got[i], wantFr[i]) {
					t.Errorf("%s: %s %q lacks %q", rel, name, got[i], wantFr[i])
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if seen != len(cases) {
		t.Errorf("read %d real files, expected %d", seen, len(cases))
	}
}
