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

// aiperfTop is an AIPerf export with the metric tags at the top level:
// concurrency 4, 8 requests, 1024 output tokens over 16 s.
const aiperfTop = `{
  "request_count": {"unit": "requests", "avg": 8.0},
  "error_request_count": null,
  "output_token_throughput": {"unit": "tokens/sec", "avg": 64.0},
  "benchmark_duration": {"unit": "sec", "avg": 16.0},
  "total_isl": {"unit": "tokens", "avg": 800.0},
  "total_osl": {"unit": "tokens", "avg": 1024.0},
  "min_request_timestamp": {"unit": "ns", "avg": 1.7625515347970678e+18},
  "max_response_timestamp": {"unit": "ns", "avg": 1.7625515507970678e+18},
  "input_config": {"endpoint": {"model_names": ["m/M"]}, "loadgen": {"concurrency": 4}},
  "start_time": "2025-11-07T13:38:54.797067",
  "end_time": "2025-11-07T13:39:10.797067"
}`

// writeDir writes files (name → content) into dir under root.
func writeDir(t *testing.T, root, dir string, files map[string]string) {
	t.Helper()
	must := func(err error) {
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.MkdirAll(filepath.Join(root, dir), 0o755))
	for name, data := range files {
		must(os.WriteFile(filepath.Join(root, dir, name), []byte(data), 0o644))
	}
}

func readAIPerf(t *testing.T, files map[string]string, opt Options) File {
	t.Helper()
	root := t.TempDir()
	writeDir(t, root, "c4", files)
	return ReadAIPerf(openUnder(root), "c4", opt)
}

// TestAIPerfLayouts: the same point read from each layout AIPerf has
// written: tags at the top level, under records, at the top level beside
// schema_version 1.0, and under metrics with a schema_version; and the
// point from input_config.phases.
func TestAIPerfLayouts(t *testing.T) {
	tags := aiperfTop[strings.Index(aiperfTop, `"request_count"`):strings.Index(aiperfTop, `,
  "input_config"`)]
	rest := aiperfTop[strings.Index(aiperfTop, `"input_config"`):]
	phases := strings.Replace(rest, `"loadgen": {"concurrency": 4}`, `"phases": [{"name": "warmup", "concurrency": 1}, {"name": "profiling", "concurrency": 4}]`, 1)
	want := ratio.BenchPoint{ID: ratio.PointID{MaxConcurrency: 4}, ModelID: "m/M", NumPrompts: 8, Completed: 8,
		TotalInputTokens: 800, TotalOutputTokens: 1024, OutputThroughput: 64}
	for name, data := range map[string]string{
		"top level":      aiperfTop,
		"records":        "{\n  \"records\": {" + tags + "},\n  " + rest,
		"schema_version": "{\n  \"schema_version\": \"2.0\", \"aiperf_version\": \"0.6.0\", \"metrics\": {" + tags + "},\n  " + rest,
		// AIPerf's export since early 2026 (JsonExportData, schema 1.0):
		// its version fields beside the tags at the top level.
		"schema_version 1.0": "{\n  \"schema_version\": \"1.0\", \"aiperf_version\": \"0.5.0\", \"benchmark_id\": \"5f0c\",\n  " + tags + ",\n  " + rest,
		"phases":             "{\n  " + tags + ",\n  " + phases,
	} {
		f := readAIPerf(t, map[string]string{AIPerfJSON: data}, Options{})
		if len(f.Points) != 1 || len(f.Invalid)+len(f.Failed)+len(f.Warnings) > 0 {
			t.Errorf("%s: %+v", name, f)
			continue
		}
		if p := f.Points[0]; p.BenchPoint != want || !strings.Contains(p.WindowFrom, "min_request_timestamp") {
			t.Errorf("%s: %+v from %q, want %+v", name, p.BenchPoint, p.WindowFrom, want)
		}
	}
}

// TestAIPerfWindowOrder: the JSONL's profiling records win (warmup
// dropped); without them the epoch fields; without those start_time and
// end_time only with --bench-tz, else a warning naming the file and the
// flag.
func TestAIPerfWindowOrder(t *testing.T) {
	jsonl := `{"metadata": {"request_start_ns": 1762551500000000000, "request_end_ns": 1762551501000000000, "benchmark_phase": "warmup"}}
{"metadata": {"request_start_ns": 1762551534797067827, "request_end_ns": 1762551538441354976, "benchmark_phase": "profiling"}}

{"metadata": {"request_start_ns": 1762551535000000000, "request_end_ns": 1762551550797067827, "benchmark_phase": "profiling"}}
`
	f := readAIPerf(t, map[string]string{AIPerfJSON: aiperfTop, AIPerfJSONL: jsonl}, Options{})
	if p := f.Points[0]; p.Start.UnixNano() != 1762551534797067827 || p.End.UnixNano() != 1762551550797067827 || !strings.HasPrefix(p.WindowFrom, AIPerfJSONL) {
		t.Errorf("JSONL: %s to %s from %q", p.Start, p.End, p.WindowFrom)
	}
	noEpoch := strings.NewReplacer(`"min_request_timestamp"`, `"x_min"`, `"max_response_timestamp"`, `"x_max"`).Replace(aiperfTop)
	f = readAIPerf(t, map[string]string{AIPerfJSON: noEpoch}, Options{})
	wantWarn := "c4/profile_export_aiperf.json: the point has no window: its start_time/end_time (2025-11-07T13:38:54.797067, 2025-11-07T13:39:10.797067) are the bench machine's local time with no zone; give --bench-tz ZONE (the machine's zone, such as UTC or Europe/Berlin), or keep profile_export.jsonl beside it"
	if p := f.Points[0]; p.HasWindow() || !slices.Equal(f.Warnings, []string{wantWarn}) {
		t.Errorf("no zone: window %v, warnings %q\nwant %q", p.HasWindow(), f.Warnings, wantWarn)
	}
	la, _ := time.LoadLocation("America/Los_Angeles")
	f = readAIPerf(t, map[string]string{AIPerfJSON: noEpoch}, Options{BenchTZ: la})
	if p := f.Points[0]; p.Start != time.Date(2025, 11, 7, 21, 38, 54, 797067000, time.UTC) || len(f.Warnings) > 0 {
		t.Errorf("--bench-tz: %s, %q", p.Start, f.Warnings)
	}
}

// TestAIPerfRefusals: each defect is bench.invalid naming file:line (the
// bytes) or the key (the values): a truncated file, a duplicate key, JSONL
// timestamps that are not epoch nanoseconds, a throughput that disagrees
// with its totals.
func TestAIPerfRefusals(t *testing.T) {
	cases := []struct {
		name  string
		files map[string]string
		want  string
	}{
		{"truncated", map[string]string{AIPerfJSON: aiperfTop[:200]},
			"c4/profile_export_aiperf.json:5: unexpected end of input in an object; " + hintRestore},
		{"duplicate key", map[string]string{AIPerfJSON: strings.Replace(aiperfTop, `"error_request_count": null`, `"error_request_count": null, "total_osl": {"avg": 1.0}`, 1)},
			`c4/profile_export_aiperf.json:7: duplicate key "total_osl"; ` + hintRestore},
		{"JSONL in seconds", map[string]string{AIPerfJSON: aiperfTop, AIPerfJSONL: "{\"metadata\": {\"request_start_ns\": 1762551534797067827, \"request_end_ns\": 1762551538441354976, \"benchmark_phase\": \"profiling\"}}\n{\"metadata\": {\"request_start_ns\": 1762551534, \"request_end_ns\": 1762551538441354976, \"benchmark_phase\": \"profiling\"}}\n"},
			"c4/profile_export.jsonl:2: metadata.request_start_ns: want epoch nanoseconds from 2000-01-01 to 2100-01-01, found number 1762551534; " + hintAIPerf},
		{"JSONL monotonic", map[string]string{AIPerfJSON: aiperfTop, AIPerfJSONL: "{\"metadata\": {\"request_start_ns\": 88123456789, \"request_end_ns\": 88923456789, \"benchmark_phase\": \"profiling\"}}\n"},
			"c4/profile_export.jsonl:1: metadata.request_start_ns: want epoch nanoseconds from 2000-01-01 to 2100-01-01, found number 88123456789; " + hintAIPerf},
		{"JSONL torn", map[string]string{AIPerfJSON: aiperfTop, AIPerfJSONL: "{\"metadata\": {\"request_start_ns\": 1762551534797067827,\n"},
			"c4/profile_export.jsonl:1: want a key string, found end of input; " + hintRestore},
		{"epoch field", map[string]string{AIPerfJSON: strings.Replace(aiperfTop, "1.7625515347970678e+18", "12345.0", 1)},
			"c4/profile_export_aiperf.json: min_request_timestamp.avg: want epoch nanoseconds from 2000-01-01 to 2100-01-01, found number 12345.0; " + hintAIPerf},
		{"throughput disagrees", map[string]string{AIPerfJSON: strings.Replace(aiperfTop, `"avg": 64.0`, `"avg": 64.1`, 1)},
			"c4/profile_export_aiperf.json: output_token_throughput.avg: want total_osl / benchmark_duration (1024 / 16 = 64, within 1e-06 of it), found 64.1; " + hintAIPerf},
		{"no tags", map[string]string{AIPerfJSON: `{"input_config": {}}`},
			"c4/profile_export_aiperf.json: want AIPerf's metric tags (output_token_throughput, request_count) under records, at the top level, or under metrics, found none; " + hintAIPerf},
	}
	// A JSONL that is there but cannot be read is no reason to look
	// elsewhere: a directory in its place.
	root := t.TempDir()
	writeDir(t, root, "c4", map[string]string{AIPerfJSON: aiperfTop})
	if err := os.Mkdir(filepath.Join(root, "c4", AIPerfJSONL), 0o755); err != nil {
		t.Fatal(err)
	}
	if f := ReadAIPerf(openUnder(root), "c4", Options{}); len(f.Points) != 0 || len(f.Invalid) != 1 || !strings.HasPrefix(f.Invalid[0], "c4/profile_export.jsonl:") || strings.Contains(f.Invalid[0], root) {
		t.Errorf("unreadable JSONL: %+v", f)
	}
	for _, c := range cases {
		f := readAIPerf(t, c.files, Options{})
		if len(f.Points) != 0 || len(f.Invalid) != 1 || !strings.HasPrefix(f.Invalid[0], c.want) {
			t.Errorf("%s: points %d, invalid %q\nwant one beginning %q", c.name, len(f.Points), f.Invalid, c.want)
		}
	}
}

// guidellmReport is a report v1 of the given benchmarks.
func guidellmReport(benchmarks ...string) string {
	return `{"metadata": {"version": 1, "guidellm_version": "0.5.0"}, "args": {"model": "m/M"}, "benchmarks": [` + strings.Join(benchmarks, ", ") + `]}`
}

// guidellmBench is one benchmark of strategy with 8 successful requests,
// 1024 output tokens, from 1762551534.5 to 1762551550.5.
func guidellmBench(strategy string) string {
	return `{"config": {"strategy": ` + strategy + `}, "metrics": {"request_totals": {"successful": 8, "errored": 0, "incomplete": 0, "total": 8}, ` +
		`"prompt_token_count": {"successful": {"total_sum": 800.0}}, "output_token_count": {"successful": {"total_sum": 1024.0}}, ` +
		`"output_tokens_per_second": {"successful": {"mean": 70.5}}}, "start_time": 1762551534.5, "end_time": 1762551550.5, "duration": 16.0}`
}

// TestGuideLLMLayouts: every strategy mapped as SPEC §12.5 says, never
// from max_concurrency; the throughput the successful output tokens over
// the duration; report v2 and a report before 0.4 read alike.
func TestGuideLLMLayouts(t *testing.T) {
	rel := "bench/m/e/r1/benchmarks.json"
	f := ReadGuideLLM(rel, []byte(guidellmReport(
		guidellmBench(`{"type_": "synchronous", "max_concurrency": 1}`),
		guidellmBench(`{"type_": "concurrent", "streams": 4, "max_concurrency": 16}`),
		guidellmBench(`{"type_": "throughput", "max_concurrency": 512}`),
		guidellmBench(`{"type_": "constant", "rate": 2.5, "max_concurrency": 64}`),
		guidellmBench(`{"type_": "poisson", "rate": 3.0}`))))
	if len(f.Invalid)+len(f.Failed) > 0 || len(f.Points) != 5 {
		t.Fatalf("%+v", f)
	}
	wantIDs := []ratio.PointID{{MaxConcurrency: 1}, {MaxConcurrency: 4}, {}, {RequestRate: 2.5, Strategy: "constant"}, {RequestRate: 3, Strategy: "poisson"}}
	for i, p := range f.Points {
		if p.ID != wantIDs[i] || p.OutputThroughput != 64 || p.TotalOutputTokens != 1024 || p.ModelID != "m/M" ||
			p.Start != time.Unix(1762551534, 5e8).UTC() || p.End != time.Unix(1762551550, 5e8).UTC() {
			t.Errorf("benchmarks[%d]: %+v window %s to %s", i, p.BenchPoint, p.Start, p.End)
		}
	}
	v2 := strings.Replace(guidellmReport(guidellmBench(`{"type_": "synchronous"}`)), `"args": {"model": "m/M"}`, `"config": {"model": "m/M"}`, 1)
	// Before 0.4 the requests are the benchmark's request_totals; the run's
	// requests_made (warm-up and cool-down included) are not read.
	pre04 := `{"benchmarks": [{"args": {"strategy": {"type_": "concurrent", "streams": 2}}, "run_stats": {"requests_made": {"successful": 11, "errored": 2, "incomplete": 1, "total": 14}}, ` +
		`"request_totals": {"successful": 8, "errored": 1, "incomplete": 1, "total": 10}, "metrics": {"prompt_token_count": {"successful": {"total_sum": 800}}, "output_token_count": {"successful": {"total_sum": 1024}}}, "start_time": 1762551534.5, "end_time": 1762551550.5, "duration": 16.0}]}`
	for name, data := range map[string]string{"v2": v2, "pre-0.4": pre04} {
		f := ReadGuideLLM(rel, []byte(data))
		if len(f.Points) != 1 || f.Points[0].OutputThroughput != 64 || len(f.Invalid) > 0 {
			t.Errorf("%s: %+v", name, f)
		}
	}
	f = ReadGuideLLM(rel, []byte(pre04))
	wantFailed := rel + ": benchmarks[0]: max_concurrency 2, request_rate inf: want every request successful, found successful 8 of 10, errored 1, incomplete 1; " + hintFailed
	if !slices.Equal(f.Failed, []string{wantFailed}) {
		t.Errorf("failed %q\nwant %q", f.Failed, wantFailed)
	}
}

// TestGuideLLMRefusals: each defect is bench.invalid naming file:line or
// the benchmark and key.
func TestGuideLLMRefusals(t *testing.T) {
	rel := "bench/m/e/r1/benchmarks.json"
	good := guidellmReport(guidellmBench(`{"type_": "synchronous"}`))
	cases := map[string]struct{ data, want string }{
		"truncated":     {good[:len(good)-40], rel + ":1: unterminated string; " + hintRestore},
		"duplicate key": {strings.Replace(good, `"duration": 16.0`, "\n\"duration\": 16.0, \"duration\": 17.0", 1), rel + `:2: duplicate key "duration"`},
		"not epoch":     {strings.Replace(good, "1762551534.5", "88123.5", 1), rel + ": benchmarks[0]: start_time: want epoch seconds from 2000-01-01 to 2100-01-01, found number 88123.5; " + hintGuideLLM},
		"totals":        {strings.Replace(good, `"total": 8`, `"total": 9`, 1), rel + ": benchmarks[0]: metrics.request_totals.total: want successful + errored + incomplete (8), found 9; " + hintGuideLLM},
		"strategy":      {strings.Replace(good, `"synchronous"`, `"async"`, 1), rel + `: benchmarks[0]: config.strategy.type_: want one of synchronous, concurrent, throughput, constant, poisson, found string "async"; ` + hintGuideLLM},
		"no benchmarks": {`{"benchmarks": []}`, rel + ": benchmarks: want GuideLLM's array of benchmarks, one per point, found array; " + hintGuideLLM},
	}
	for name, c := range cases {
		f := ReadGuideLLM(rel, []byte(c.data))
		if len(f.Points) != 0 || len(f.Invalid) != 1 || !strings.HasPrefix(f.Invalid[0], c.want) {
			t.Errorf("%s: points %d, invalid %q\nwant one beginning %q", name, len(f.Points), f.Invalid, c.want)
		}
	}
	if got := GuideLLMYAMLRefusal("bench/m/e/r1/benchmarks.yaml"); !strings.Contains(got, "YAML module clockgate does not depend on") || !IsGuideLLMYAML("benchmarks.yaml") || IsGuideLLMYAML("plan.yaml") {
		t.Errorf("yaml: %q", got)
	}
}

// TestInferenceXWindow: benchmark_start_time_unix and
// benchmark_end_time_unix are the point's window, preferred over date;
// request_goodput: is kept as vLLM's request_goodput; a value that is not
// an epoch, or one of the two alone, is refused; agg_*.json is refused
// naming why.
func TestInferenceXWindow(t *testing.T) {
	ix := strings.TrimSuffix(validPoint, "}") + `, "date": "20251107-133910", "request_goodput:": null, "benchmark_start_time_unix": 1762551534.797, "benchmark_end_time_unix": 1762551593.497}`
	ps, inv, _ := pb(fuzzRel, []byte(ix))
	if len(inv) > 0 || len(ps) != 1 || ps[0].Start != time.Unix(1762551534, 797e6).UTC() || ps[0].End != time.Unix(1762551593, 497e6).UTC() {
		t.Fatalf("%+v %q", ps, inv)
	}
	if k := kept(t, ps[0]); k["request_goodput:"] != nil || !hasKey(k, "request_goodput:") {
		t.Errorf("kept %v", k)
	}
	_, inv, _ = pb(fuzzRel, []byte(strings.Replace(ix, "1762551534.797", "88123.5", 1)))
	want := fuzzRel + ": benchmark_start_time_unix: want epoch seconds from 2000-01-01 to 2100-01-01 (InferenceX writes both or neither), found number 88123.5; " + hintRerun
	if !slices.Equal(inv, []string{want}) {
		t.Errorf("invalid %q\nwant %q", inv, want)
	}
	_, inv, _ = pb(fuzzRel, []byte(strings.Replace(ix, `, "benchmark_end_time_unix": 1762551593.497`, "", 1)))
	if len(inv) != 1 || !strings.Contains(inv[0], "benchmark_end_time_unix: want epoch seconds") {
		t.Errorf("one alone: %q", inv)
	}
	root := t.TempDir()
	writeDir(t, root, "r1", map[string]string{"agg_dsr1_fp8.json": ix})
	f, err := ReadFile(openUnder(root), "r1/agg_dsr1_fp8.json", Options{})
	if err != nil || len(f.Points) != 0 || len(f.Invalid) != 1 || !strings.Contains(f.Invalid[0], "r1/agg_dsr1_fp8.json: an InferenceX aggregate (agg_*.json) over a sweep's points: it carries no window and no totals") {
		t.Errorf("agg: %v %+v", err, f)
	}
}

func hasKey(m map[string]any, k string) bool { _, ok := m[k]; return ok }
