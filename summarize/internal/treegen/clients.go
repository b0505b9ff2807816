package treegen

import (
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"time"
)

// The bench clients of SPEC §12.5, each written as the real tool writes
// its result; testdata/bench-real/aiperf and guidellm hold real files of
// each.
const (
	// styleAIPerf is aiperf profile --artifact-dir, one directory per
	// point: profile_export_aiperf.json with the metric tags at the top
	// level, and profile_export.jsonl, one record per request with its
	// benchmark_phase and epoch-ns request_start_ns and request_end_ns.
	styleAIPerf = "aiperf"
	// styleGuideLLM is guidellm benchmark --output-path benchmarks.json:
	// report v1, one benchmark per point, each with its strategy and its
	// measured window in epoch seconds.
	styleGuideLLM = "guidellm"
)

// clientStyle reports whether the leg is written by one of these clients.
func (l *leg) clientStyle() bool { return l.style == styleAIPerf || l.style == styleGuideLLM }

// clientWindow is point i's measured window: from just after its first
// busy reading to just before its last, so each end lies between two
// samples.
func clientWindow(bounds [2]time.Time) [2]time.Time {
	return [2]time.Time{bounds[0].Add(300 * time.Millisecond), bounds[1].Add(-1500 * time.Millisecond)}
}

// clientResult is point i as the leg's client writes it: AIPerf's whole
// profile_export_aiperf.json, or GuideLLM's one element of benchmarks[].
func (l *leg) clientResult(rng *rand.Rand, i int, span [2]time.Time) []byte {
	p := l.points[i]
	w := clientWindow(span)
	dur := w[1].Sub(w[0]).Seconds()
	in, out := p.prompts*l.model.inputLen, p.prompts*l.model.outputLen
	tput := float64(out) / dur
	if l.style == styleAIPerf {
		tag := func(name, unit string, v string) string {
			return fmt.Sprintf("  %q: {\n    \"unit\": %q,\n    \"avg\": %s\n  }", name, unit, v)
		}
		members := []string{
			tag("request_throughput", "requests/sec", pyFloat(float64(p.prompts)/dur)),
			tag("request_count", "requests", pyFloat(float64(p.prompts))),
			tag("output_token_throughput", "tokens/sec", pyFloat(tput)),
			tag("min_request_timestamp", "ns", pyFloat(float64(w[0].UnixNano()))),
			tag("max_response_timestamp", "ns", pyFloat(float64(w[1].UnixNano()))),
			tag("benchmark_duration", "sec", pyFloat(dur)),
			tag("total_isl", "tokens", pyFloat(float64(in))),
			tag("total_osl", "tokens", pyFloat(float64(out))),
			`  "error_request_count": null`,
			fmt.Sprintf("  \"input_config\": {\n    \"endpoint\": {\n      \"model_names\": [\n        %q\n      ],\n      \"type\": \"chat\",\n      \"streaming\": true\n    },\n    \"loadgen\": {\n      \"concurrency\": %d,\n      \"request_count\": %d,\n      \"warmup_request_count\": 1\n    }\n  }",
				l.model.id, p.conc, p.prompts),
			`  "was_cancelled": false`,
			fmt.Sprintf("  \"start_time\": %q", w[0].Add(-2*time.Second).Format("2006-01-02T15:04:05.000000")),
			fmt.Sprintf("  \"end_time\": %q", w[1].Add(time.Second).Format("2006-01-02T15:04:05.000000")),
		}
		return []byte("{\n" + strings.Join(members, ",\n") + "\n}")
	}
	start, end := float64(w[0].UnixNano())/1e9, float64(w[1].UnixNano())/1e9
	strategy := fmt.Sprintf(`{"type_": "concurrent", "worker_count": %d, "max_concurrency": %d, "streams": %d, "rampup_duration": 0.0}`, p.conc, p.conc, p.conc)
	if p.conc == 1 {
		strategy = `{"type_": "synchronous", "worker_count": 1, "max_concurrency": 1}`
	}
	stat := func(total int) string {
		return fmt.Sprintf(`{"successful": {"mean": %s, "count": %d, "total_sum": %s}}`, pyFloat(float64(total)/float64(p.prompts)), p.prompts, pyFloat(float64(total)))
	}
	perReq := float64(l.model.outputLen) / (dur / float64(p.prompts) * float64(p.conc)) * (0.97 + 0.02*rng.Float64())
	return []byte(fmt.Sprintf(`{"type_": "generative_benchmark", "config": {"strategy": %s}, "metrics": {"request_totals": {"successful": %d, "errored": 0, "incomplete": 0, "total": %d}, `+
		`"prompt_token_count": %s, "output_token_count": %s, "output_tokens_per_second": {"successful": {"mean": %s}}}, "start_time": %s, "end_time": %s, "duration": %s, "warmup_duration": 0.0, "cooldown_duration": 0.0}`,
		strategy, p.prompts, p.prompts, stat(in), stat(out), pyFloat(perReq), pyFloat(start), pyFloat(end), pyFloat(end-start)))
}

// aiperfRecords is point i's profile_export.jsonl: one warmup record
// before the window, then one profiling record per request, the first
// starting at the window's start and the last ending at its end.
func (l *leg) aiperfRecords(i int, span [2]time.Time) []byte {
	p := l.points[i]
	w := clientWindow(span)
	var b strings.Builder
	rec := func(phase string, s, e time.Time) {
		fmt.Fprintf(&b, `{"metadata": {"session_num": 0, "request_start_ns": %d, "request_end_ns": %d, "benchmark_phase": %q, "was_cancelled": false}, "metrics": {"output_sequence_length": {"value": %d, "unit": "tokens"}}, "error": null}`+"\n",
			s.UnixNano(), e.UnixNano(), phase, l.model.outputLen)
	}
	rec("warmup", w[0].Add(-3*time.Second), w[0].Add(-2*time.Second))
	batches := (p.prompts + p.conc - 1) / p.conc
	step := w[1].Sub(w[0]) / time.Duration(batches)
	for r := 0; r < p.prompts; r++ {
		k := r / p.conc
		s, e := w[0].Add(time.Duration(k)*step), w[0].Add(time.Duration(k+1)*step)
		if k == batches-1 {
			e = w[1]
		}
		rec("profiling", s.Add(time.Duration(r%p.conc)*time.Millisecond), e.Add(-time.Duration(r%p.conc)*time.Millisecond))
	}
	return []byte(b.String())
}

// writeClientResults puts the leg's results where its client does: an
// artifact directory per point (AIPerf), or one benchmarks.json
// (GuideLLM).
func (l *leg) writeClientResults(out map[string][]byte, base string, objs [][]byte, bounds [][2]time.Time) {
	dir := "bench/" + base + "/"
	if l.style == styleAIPerf {
		for i, o := range objs {
			name := dir + l.model.id[strings.LastIndex(l.model.id, "/")+1:] + "-openai-chat-concurrency" + strconv.Itoa(l.points[i].conc) + "/"
			out[name+"profile_export_aiperf.json"] = o
			out[name+"profile_export.jsonl"] = l.aiperfRecords(i, bounds[i])
		}
		return
	}
	out[dir+"benchmarks.json"] = []byte(fmt.Sprintf(`{"metadata": {"version": 1, "guidellm_version": "0.5.0"}, "args": {"target": "http://localhost:8000", "profile": "sweep", "model": %q}, "benchmarks": [%s]}`,
		l.model.id, strings.Join(bytesToStrings(objs), ", ")))
}

// vllmAgain is vllm run again as an arm of its own: an A/A comparison.
var vllmAgain = engine{"vllm-again", 1.0, 1.0}

// clientScenarios are the trees of SPEC §12.5's bench clients.
var clientScenarios = []Scenario{
	{Name: "aiperf-aa",
		About: "an A/A comparison whose legs are AIPerf artifact directories (aiperf profile, one directory per point, metric tags at the top level): " +
			"vllm-again against vllm, two legs each, four points; every point's window is its profiling records' request_start_ns to request_end_ns " +
			"(warmup dropped), so every point is judged; both ratios ESTABLISHED",
		build: func(t *tree) {
			t.arm(llama, vllmAgain, 2, gb10, boot13, func(l *leg) { l.style = styleAIPerf })
			t.arm(llama, vllm, 2, gb10, boot13, func(l *leg) { l.style = styleAIPerf })
		}},
	{Name: "guidellm-aa",
		About: "an A/A comparison whose legs are GuideLLM reports (guidellm benchmark, report v1: a synchronous point and three concurrent ones in one " +
			"benchmarks.json per leg): vllm-again against vllm; every point's window is its start_time to end_time, so every point is judged; both " +
			"ratios ESTABLISHED",
		build: func(t *tree) {
			t.arm(llama, vllmAgain, 2, gb10, boot13, func(l *leg) { l.style = styleGuideLLM })
			t.arm(llama, vllm, 2, gb10, boot13, func(l *leg) { l.style = styleGuideLLM })
		}},
	{Name: "format-mismatch",
		About: "fastengine's legs are AIPerf artifact directories, vllm's are vllm bench serve results: their throughputs are not defined alike, " +
			"so THROUGHPUT is bench.format_mismatch (never waived); MEMORY stays ESTABLISHED",
		build: func(t *tree) {
			t.arm(llama, fastengine, 2, gb10, boot13, func(l *leg) { l.style = styleAIPerf })
			t.arm(llama, vllm, 2, gb10, boot13, func(l *leg) { l.style = styleVLLM })
		}},
	{Name: "format-mismatch-baseline",
		About: "format-mismatch with the bad arm on the other side: vllm's legs are GuideLLM reports, fastengine's vllm bench serve results: " +
			"bench.format_mismatch voids THROUGHPUT; MEMORY stays ESTABLISHED",
		build: func(t *tree) {
			t.arm(llama, fastengine, 2, gb10, boot13, func(l *leg) { l.style = styleVLLM })
			t.arm(llama, vllm, 2, gb10, boot13, func(l *leg) { l.style = styleGuideLLM })
		}},
}
