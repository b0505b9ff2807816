package benchfmt

import (
	"os"
	"strings"
	"testing"
)

// TestNoReaderAccepts: JSON that states a bench result's keys but that no
// reader accepts is bench.invalid naming the file (and the line, in a file
// of several values), the keys found and the formats tried (SPEC §12.5);
// what TestNotAResult holds (a top level that is not an object, an object
// with none of those keys) stays a warning.
func TestNoReaderAccepts(t *testing.T) {
	aiperf, err := os.ReadFile("../testdata/bench-real/aiperf/toplevel/qwen_concurrency1/profile_export_aiperf.json")
	if err != nil {
		t.Fatal(err)
	}
	const tail = "; " + formatsTried + "; " + hintNoReader
	// validPoint without resultMarkers' keys.
	trimmed := `{"model_id": "m/M", "num_prompts": 6, "max_concurrency": 1, "failed": 0, "total_input_tokens": 6144, "duration": 58.7, "request_rate": "inf"}`
	records, err := os.ReadFile("../testdata/bench-real/aiperf/records/run1/profile_export_aiperf.json")
	if err != nil {
		t.Fatal(err)
	}
	for name, c := range map[string]struct{ data, want string }{
		"AIPerf 0.1's export out of its directory": {string(records),
			fuzzRel + ": AIPerf's export (an object with input_config and its metric tags) outside an artifact directory: the aiperf reader reads profile_export_aiperf.json only in the point's own directory, where profile_export.jsonl beside it gives the window; tried aiperf; " + hintNoReader},
		"AIPerf's export out of its directory": {string(aiperf),
			fuzzRel + ": AIPerf's export (an object with input_config and its metric tags) outside an artifact directory: the aiperf reader reads profile_export_aiperf.json only in the point's own directory, where profile_export.jsonl beside it gives the window; tried aiperf; " + hintNoReader},
		"an export without its metric tags": {`{"input_config": {"loadgen": {"concurrency": 4}}, "aiperf_version": "0.3.0"}`,
			fuzzRel + ": no bench reader accepts it: an object with aiperf_version, input_config, as a bench result has, but in no client's layout" + tail},
		"vLLM's result without its result keys": {trimmed,
			fuzzRel + ": no bench reader accepts it: an object with request_rate, max_concurrency, num_prompts, failed, total_input_tokens, as a bench result has, but in no client's layout" + tail},
		"a GuideLLM report whose benchmarks is not an array": {`{"metadata": {"version": 1}, "benchmarks": {"0": {}}}`,
			fuzzRel + ": no bench reader accepts it: an object with benchmarks, as a bench result has, but in no client's layout" + tail},
		"JSONL, the second line a result's": {"{\"backend\": \"vllm\"}\n{\"request_rate\": 4}\n",
			fuzzRel + ":2: no bench reader accepts it: an object with request_rate, as a bench result has, but in no client's layout" + tail},
	} {
		f := Parse(fuzzRel, []byte(c.data))
		if len(f.Invalid) != 1 || f.Invalid[0] != c.want || len(f.Points) > 0 || f.NotResult != "" {
			t.Errorf("%s: %+v\nwant bench.invalid %q", name, f, c.want)
		}
	}
	for _, fm := range []string{FormatVLLM, FormatVLLMLegacy, FormatSGLang, FormatGuideLLM, FormatAIPerf} {
		if !strings.Contains(formatsTried, fm+" (") && !strings.Contains(formatsTried, fm+", ") {
			t.Errorf("the formats tried leave out %s: %s", fm, formatsTried)
		}
	}
}
