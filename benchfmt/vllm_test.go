package benchfmt

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/clockgate/clockgate/internal/benchtest"
	"github.com/clockgate/clockgate/ratio"
)

// The shared bench helpers (internal/benchtest), by the names these
// tests use.
const validPoint = benchtest.ValidPoint

var pointWith = benchtest.PointWith

// pb reads data as the bench file rel and returns its points,
// bench.invalid and bench.failed_requests messages.
func pb(rel string, data []byte) ([]Point, []string, []string) {
	f := Parse(rel, data)
	return f.Points, f.Invalid, f.Failed
}

// kept is a point's kept object decoded, numbers as json.Number.
func kept(t *testing.T, p Point) map[string]any { return benchtest.Kept(t, p.Raw) }

func TestParseBenchValid(t *testing.T) {
	points, invalid, failed := pb("bench/m/e/r1/c1.json", []byte(validPoint))
	if len(invalid) > 0 || len(failed) > 0 || len(points) != 1 {
		t.Fatalf("points %d, invalid %q, failed %q", len(points), invalid, failed)
	}
	p := points[0]
	if p.ID != (ratio.PointID{MaxConcurrency: 1}) || p.ModelID != "m/M" || p.NumPrompts != 6 || p.TotalInputTokens != 6144 ||
		p.TotalOutputTokens != 768 || p.OutputThroughput != 13.08 || p.Where != "bench/m/e/r1/c1.json" || p.Format != FormatVLLM {
		t.Errorf("read %+v", p)
	}
	// Every key is kept as written, the ones not read included.
	if got := kept(t, p)["request_rate"]; got != "inf" {
		t.Errorf("request_rate kept as %v", got)
	}
	if got := kept(t, p)["duration"]; got == nil || got.(interface{ String() string }).String() != "58.7" {
		t.Errorf("duration kept as %v", got)
	}
}

// TestParseBenchInvalid pins the message of each malformed object: the
// file, the line where the file holds several objects or the syntax is
// wrong, the key, what was expected and what was found, and what to do.
func TestParseBenchInvalid(t *testing.T) {
	const rel = "bench/m/e/r1/c1.json"
	cases := []struct {
		name, data, want string
	}{
		{"zero max_concurrency", pointWith("max_concurrency", "0"), rel + ": max_concurrency: want an integer from 1 to 2^40 (1099511627776) or null (no bound), found number 0; " + hintRerun},
		{"string max_concurrency", pointWith("max_concurrency", `"8"`), rel + `: max_concurrency: want an integer from 1 to 2^40 (1099511627776) or null (no bound), found string "8"`},
		{"missing request_rate", pointWith("request_rate", ""), rel + `: request_rate: want a number > 0, "inf" or Infinity, found nothing (key missing)`},
		{"zero request_rate", pointWith("request_rate", "0"), rel + `: request_rate: want a number > 0, "inf" or Infinity, found number 0`},
		{"trace request_rate", pointWith("request_rate", `"trace"`), rel + `: request_rate: want a number > 0, "inf" or Infinity, found string "trace"`},
		{"-Infinity request_rate", pointWith("request_rate", "-Infinity"), rel + `: request_rate: want a number > 0, "inf" or Infinity, found -Infinity`},
		{"NaN request_rate", pointWith("request_rate", "NaN"), rel + `: request_rate: want a number > 0, "inf" or Infinity, found NaN`},
		{"fractional num_prompts", pointWith("num_prompts", "6.0"), rel + ": num_prompts: want an integer from 0 to 2^40 (1099511627776), found number 6.0"},
		{"negative completed", pointWith("completed", "-1"), rel + ": completed: want an integer from 0 to 2^40 (1099511627776), found number -1"},
		{"string tokens", pointWith("total_input_tokens", `"6144"`), rel + `: total_input_tokens: want an integer from 0 to 2^40 (1099511627776), found string "6144"`},
		{"missing output tokens", pointWith("total_output_tokens", ""), rel + ": total_output_tokens: want an integer from 0 to 2^40 (1099511627776), found nothing (key missing)"},
		{"bool failed", pointWith("failed", "false"), rel + ": failed: want an integer from 0 to 2^40 (1099511627776), found false"},
		{"string throughput", pointWith("output_throughput", `"fast"`), rel + `: output_throughput: want a finite number ≥ 0, found string "fast"`},
		{"negative throughput", pointWith("output_throughput", "-3.5"), rel + ": output_throughput: want a finite number ≥ 0, found number -3.5"},
		{"missing throughput", pointWith("output_throughput", ""), rel + ": output_throughput: want a finite number ≥ 0, found nothing (key missing)"},
		{"zero throughput with output", pointWith("output_throughput", "0"), rel + ": output_throughput: want > 0 tokens/s for 6 completed requests and 768 output tokens, found 0"},
		{"reported key wrong type", pointWith("duration", "null"), rel + ": duration: want a finite number ≥ 0, found null"},
		{"model_id number", pointWith("model_id", "7"), rel + ": model_id: want a non-empty string, found number 7"},
		{"model_id missing", pointWith("model_id", ""), rel + ": model_id: want a string, found nothing (key missing)"},
		{"two defects in one object", strings.Replace(pointWith("num_prompts", `"6"`), `"completed": 6`, `"completed": 1.5`, 1),
			rel + `: num_prompts: want an integer from 0 to 2^40 (1099511627776), found string "6"; completed: want an integer from 0 to 2^40 (1099511627776), found number 1.5`},
		// Python's literals in a key that is read name the key.
		{"NaN throughput", pointWith("output_throughput", "NaN"), rel + ": output_throughput: want a finite number ≥ 0, found NaN"},
		{"Infinity throughput", pointWith("output_throughput", "Infinity"), rel + ": output_throughput: want a finite number ≥ 0, found Infinity"},
		{"-Infinity throughput", pointWith("output_throughput", "-Infinity"), rel + ": output_throughput: want a finite number ≥ 0, found -Infinity"},
		{"Infinity count", pointWith("completed", "Infinity"), rel + ": completed: want an integer from 0 to 2^40 (1099511627776), found Infinity"},
		{"NaN reported", pointWith("mean_tpot_ms", "NaN"), rel + ": mean_tpot_ms: want a finite number ≥ 0, found NaN"},
		{"overflow", pointWith("output_throughput", "1e999"), rel + ":1: number 1e999 is not finite in float64; " + hintRestore},
		{"duplicate key", strings.Replace(validPoint, `"failed": 0`, `"failed": 0, "completed": 5`, 1), rel + `:1: duplicate key "completed"`},
		{"torn object", validPoint[:60], rel + ":1: unexpected end of input in an object"},
		{"torn after a value", validPoint[:len(validPoint)-1], rel + ":1: unexpected end of input in an object"},
		{"empty file", "\n", rel + ":1: empty file: want one bench result object per point"},
		{"two objects on one line", validPoint + " " + validPoint, rel + ":1: want a newline after an object, found '{'"},
		{"trailing garbage", validPoint + "x", rel + ":1: want a newline after an object, found 'x'"},
		{"bad UTF-8", strings.Replace(validPoint, "m/M", "m/\xff", 1), rel + ":1: invalid UTF-8"},
		{"bad UTF-8 in an unread key", strings.Replace(validPoint, `"request_rate"`, "\"label\": \"caf\xe9\", \"request_rate\"", 1), rel + ":1: invalid UTF-8"},
		{"byte order mark", "\xef\xbb\xbf" + validPoint, rel + ":1: byte order mark is not allowed"},
		{"NaN misspelt", pointWith("burstiness", "Nan"), rel + ":1: unexpected 'N' (want NaN; other words are not JSON)"},
		{"infinity lower case", pointWith("burstiness", "inf"), rel + ":1: unexpected 'i': want a JSON value"},
		{"leading zero", pointWith("burstiness", "01"), rel + ":1: leading zero in a number"},
		{"control character", strings.Replace(validPoint, "m/M", "m/\tM", 1), rel + ":1: control character 0x9 in a string"},
		{"bad escape", strings.Replace(validPoint, "m/M", `m/\qM`, 1), rel + `:1: invalid escape \q`},
		{"unpaired surrogate", strings.Replace(validPoint, "m/M", `m/\ud800M`, 1), rel + ":1: unpaired surrogate in a \\u escape"},
		{"duplicate nested key", pointWith("server_info", `{"a": {"b": 1, "b": 2}}`), rel + `:1: duplicate key "b"`},
		{"deep nesting", pointWith("x", strings.Repeat("[", 70)+strings.Repeat("]", 70)), rel + ":1: nesting deeper than 64"},
		{"long number", pointWith("burstiness", "1"+strings.Repeat("0", 1100)), rel + ":1: a number longer than 1024 bytes"},
		{"long key", strings.Replace(validPoint, `"request_rate"`, `"`+strings.Repeat("k", 5000)+`": 1, "request_rate"`, 1), rel + ":1: a key longer than 4096 bytes"},
		{"array line among results", validPoint + "\n[1, 2]", rel + ":2: want a bench result object (with one of output_throughput, completed, total_output_tokens) like the file's other values, found an array"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			points, invalid, _ := pb(rel, []byte(c.data))
			if len(invalid) != 1 || !strings.HasPrefix(invalid[0], c.want) {
				t.Errorf("points %d, invalid %q\nwant one message starting %q", len(points), invalid, c.want)
			}
			// A byte order mark spoils no object: the file's one object
			// is still read (the leg stays bench.invalid).
			if c.name != "array line among results" && c.name != "byte order mark" && len(points) != 0 {
				t.Errorf("%d points accepted", len(points))
			}
		})
	}
}

// TestParseBenchHintsSayWhatToDo: every bench.invalid and
// bench.failed_requests message ends by saying what to do.
func TestParseBenchHintsSayWhatToDo(t *testing.T) {
	const rel = "bench/m/e/r1/c1.json"
	for data, hint := range map[string]string{
		pointWith("completed", "-1"):   hintRerun,
		validPoint[:60]:                hintRestore,
		pointWith("completed", "5"):    hintFailed,
		pointWith("request_rate", "0"): hintRerun,
	} {
		f := Parse(rel, []byte(data))
		msgs := append(append([]string{}, f.Invalid...), f.Failed...)
		if len(msgs) != 1 || !strings.HasSuffix(msgs[0], "; "+hint) {
			t.Errorf("%q: messages %q, want one ending %q", data[:40], msgs, hint)
		}
	}
}

// TestPointIdentity: max_concurrency is an integer or null (none), or
// absent (a file written before the flag existed); request_rate a number,
// "inf" or Infinity.
func TestPointIdentity(t *testing.T) {
	for _, c := range []struct {
		mc, rr string
		want   ratio.PointID
	}{
		{"8", `"inf"`, ratio.PointID{MaxConcurrency: 8}},
		{"null", `"inf"`, ratio.PointID{}},
		{"", `"inf"`, ratio.PointID{}},
		{"null", "4.0", ratio.PointID{RequestRate: 4}},
		{"null", "Infinity", ratio.PointID{}},
		{"null", `"Infinity"`, ratio.PointID{}},
		{"16", "0.5", ratio.PointID{MaxConcurrency: 16, RequestRate: 0.5}},
		{"1", "1e-300", ratio.PointID{MaxConcurrency: 1, RequestRate: 1e-300}},
	} {
		data := pointWith("request_rate", c.rr)
		data = strings.Replace(data, `"max_concurrency": 1`, `"max_concurrency": `+c.mc, 1)
		if c.mc == "" {
			data = pointWith("max_concurrency", "")
			data = strings.Replace(data, `"request_rate": "inf"`, `"request_rate": `+c.rr, 1)
		}
		ps, inv, _ := pb(fuzzRel, []byte(data))
		if len(inv) > 0 || len(ps) != 1 || ps[0].ID != c.want {
			t.Errorf("max_concurrency %s, request_rate %s: points %+v, invalid %q; want %+v", c.mc, c.rr, ps, inv, c.want)
		}
	}
}

// TestPythonLiteralsInUnreadKeys: NaN, Infinity and -Infinity where
// clockgate reads nothing are accepted and kept as strings; nested ones
// too.
func TestPythonLiteralsInUnreadKeys(t *testing.T) {
	data := pointWith("burstiness", "Infinity")
	data = strings.Replace(data, `"duration"`, `"std_ttft_ms": NaN, "floor": -Infinity, "spec": [1.5, NaN, -Infinity, {"x": Infinity}], "duration"`, 1)
	ps, inv, _ := pb(fuzzRel, []byte(data))
	if len(inv) > 0 || len(ps) != 1 {
		t.Fatalf("invalid %q", inv)
	}
	raw := kept(t, ps[0])
	if raw["burstiness"] != "Infinity" || raw["std_ttft_ms"] != "NaN" || raw["floor"] != "-Infinity" {
		t.Errorf("kept %v, %v, %v", raw["burstiness"], raw["std_ttft_ms"], raw["floor"])
	}
	if got := fmt.Sprint(raw["spec"]); got != "map[array_len:4]" {
		t.Errorf("spec kept as %s", got)
	}
}

// TestKeptObject: scalars as written, arrays and objects counted, a long
// string measured.
func TestKeptObject(t *testing.T) {
	long := strings.Repeat("x", MaxKeptString+1)
	data := pointWith("itls", `[[0.1, 0.2], [], [0.3]]`)
	data = strings.Replace(data, `"duration"`, `"errors": ["", "timeout", ""], "server_info": {"a": 1, "b": [2]}, "note": "`+long+`", "label": null, "flag": true, "duration"`, 1)
	ps, inv, _ := pb(fuzzRel, []byte(data))
	if len(inv) > 0 || len(ps) != 1 {
		t.Fatalf("invalid %q", inv)
	}
	raw := kept(t, ps[0])
	for k, want := range map[string]string{
		"itls": "map[array_len:3]", "errors": "map[array_len:3]", "server_info": "map[object_len:2]",
		"note": fmt.Sprintf("map[string_len:%d]", MaxKeptString+1), "label": "<nil>", "flag": "true", "model_id": "m/M",
	} {
		if got := fmt.Sprint(raw[k]); got != want {
			t.Errorf("%s kept as %s, want %s", k, got, want)
		}
	}
	// A string of exactly MaxKeptString bytes is kept whole.
	exact := strings.Repeat("y", MaxKeptString)
	ps, _, _ = pb(fuzzRel, []byte(pointWith("note", `"`+exact+`"`)))
	if len(ps) != 1 || kept(t, ps[0])["note"] != exact {
		t.Error("a string of MaxKeptString bytes is not kept whole")
	}
}

// TestParseBenchMultiObject reads a --append-result file: each object is a
// point, and a defect names the object's line.
func TestParseBenchMultiObject(t *testing.T) {
	const rel = "bench/m/e/r1/results.json"
	second := pointWith("max_concurrency", "2")
	bad := strings.Replace(pointWith("max_concurrency", "4"), `"completed": 6`, `"completed": "six"`, 1)
	// A pretty-printed object spans lines; the next starts on its own line.
	pretty := strings.ReplaceAll(pointWith("max_concurrency", "8"), ", ", ",\n  ")
	data := validPoint + "\n" + second + "\n\n" + bad + "\n" + pretty
	points, invalid, _ := pb(rel, []byte(data))
	if len(points) != 3 || points[0].ID.MaxConcurrency != 1 || points[1].ID.MaxConcurrency != 2 || points[2].ID.MaxConcurrency != 8 {
		t.Fatalf("points %+v", points)
	}
	if points[1].Where != rel+":2" || points[2].Where != rel+":5" {
		t.Errorf("points named %q and %q, want %s:2 and %s:5", points[1].Where, points[2].Where, rel, rel)
	}
	want := rel + `:4: completed: want an integer from 0 to 2^40 (1099511627776), found string "six"`
	if len(invalid) != 1 || !strings.HasPrefix(invalid[0], want) {
		t.Errorf("invalid %q, want [%q…]", invalid, want)
	}
	// A syntax error in the third object names its own line.
	data = validPoint + "\n" + second + "\n" + strings.Replace(second, "13.08", "13.08.1", 1)
	_, invalid, _ = pb(rel, []byte(data))
	if len(invalid) != 1 || !strings.HasPrefix(invalid[0], rel+":3: ") {
		t.Errorf("invalid %q, want one message at %s:3", invalid, rel)
	}
}

// TestInvalidPointNeverHidesFailedRequests: an object whose throughput is
// refused still reports its failed requests, and an invalid object beside
// a failing one hides nothing.
func TestInvalidPointNeverHidesFailedRequests(t *testing.T) {
	const rel = "bench/m/e/r1/results.json"
	both := strings.Replace(pointWith("output_throughput", "NaN"), `"completed": 6`, `"completed": 5`, 1)
	f := Parse(rel, []byte(both))
	if len(f.Invalid) != 1 || len(f.Failed) != 1 || !strings.HasPrefix(f.Failed[0], rel+": max_concurrency 1, request_rate inf: want every request completed") {
		t.Errorf("one object: invalid %q, failed %q", f.Invalid, f.Failed)
	}
	failing := strings.Replace(pointWith("max_concurrency", "2"), `"failed": 0`, `"failed": 6`, 1)
	f = Parse(rel, []byte(pointWith("output_throughput", "Infinity")+"\n"+failing))
	if len(f.Invalid) != 1 || len(f.Failed) != 1 || !strings.HasPrefix(f.Failed[0], rel+":2: max_concurrency 2, request_rate inf:") {
		t.Errorf("two objects: invalid %q, failed %q", f.Invalid, f.Failed)
	}
}

func TestFailedRequests(t *testing.T) {
	const rel = "bench/m/e/r1/c1.json"
	cases := []struct {
		name, data, want string
	}{
		{"all completed", validPoint, ""},
		{"completed short", pointWith("completed", "5"), rel + ": max_concurrency 1, request_rate inf: want every request completed and failed 0, found completed 5 of num_prompts 6, failed 0; " + hintFailed},
		{"failed counted", pointWith("failed", "2"), rel + ": max_concurrency 1, request_rate inf: want every request completed and failed 0, found completed 6 of num_prompts 6, failed 2; " + hintFailed},
		{"legacy short", strings.Replace(pointWith("failed", ""), `"completed": 6`, `"completed": 4`, 1),
			rel + ": max_concurrency 1, request_rate inf: want every request completed and failed 0, found completed 4 of num_prompts 6, no failed key (legacy file); " + hintFailed},
		{"legacy complete", pointWith("failed", ""), ""},
		{"all failed", strings.Replace(strings.Replace(pointWith("failed", "6"), `"completed": 6`, `"completed": 0`, 1), `"output_throughput": 13.08`, `"output_throughput": 0.0`, 1),
			rel + ": max_concurrency 1, request_rate inf: want every request completed and failed 0, found completed 0 of num_prompts 6, failed 6; " + hintFailed},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			points, invalid, failed := pb(rel, []byte(c.data))
			if len(invalid) > 0 || len(points) != 1 {
				t.Fatalf("points %d, invalid %q", len(points), invalid)
			}
			switch {
			case c.want == "" && len(failed) > 0:
				t.Errorf("failed %q, want none", failed)
			case c.want != "" && (len(failed) != 1 || failed[0] != c.want):
				t.Errorf("failed %q, want [%q]", failed, c.want)
			}
		})
	}
}

// sglangPoint is one line as python -m sglang.bench_serving writes it.
const sglangPoint = `{"backend": "sglang", "dataset_name": "random", "request_rate": Infinity, "max_concurrency": 8, ` +
	`"total_input_tokens": 24576, "total_output_tokens": 3072, "total_output_tokens_retokenized": 3070, "output_throughput": 70.5, ` +
	`"duration": 43.6, "completed": 24}`

// TestSGLangMapping: SGLang writes no model_id, num_prompts or failed.
// Without --output-details, completed stands for the requests sent; with
// it, the errors array gives the requests sent and the failures.
func TestSGLangMapping(t *testing.T) {
	const rel = "bench/m/sglang/r1/results.jsonl"
	f := Parse(rel, []byte(sglangPoint+"\n"))
	if len(f.Invalid) > 0 || len(f.Failed) > 0 || len(f.Points) != 1 {
		t.Fatalf("invalid %q failed %q", f.Invalid, f.Failed)
	}
	p := f.Points[0]
	if p.Format != FormatSGLang || p.ModelID != "" || p.NumPrompts != 24 || p.ID != (ratio.PointID{MaxConcurrency: 8}) || p.OutputThroughput != 70.5 {
		t.Errorf("read %+v", p)
	}
	detailed := strings.Replace(sglangPoint, `"completed": 24}`, `"completed": 23, "input_lens": [1024], "errors": [`+
		strings.TrimSuffix(strings.Repeat(`"", `, 23), ", ")+`, "Server disconnected"]}`, 1)
	f = Parse(rel, []byte(detailed))
	want := rel + ": max_concurrency 8, request_rate inf: want every request completed and failed 0, found completed 23 of requests sent (the errors array: SGLang writes no num_prompts) 24, 1 non-empty errors; " + hintFailed
	if len(f.Points) != 1 || f.Points[0].NumPrompts != 24 || len(f.Failed) != 1 || f.Failed[0] != want {
		t.Errorf("detailed: points %+v, failed %q\nwant %q", f.Points, f.Failed, want)
	}
	// A model_id, when an SGLang version writes one, is read.
	f = Parse(rel, []byte(strings.Replace(sglangPoint, `"backend"`, `"model_id": "meta-llama/Llama-3.3-70B-Instruct", "backend"`, 1)))
	if len(f.Points) != 1 || f.Points[0].ModelID != "meta-llama/Llama-3.3-70B-Instruct" {
		t.Errorf("model_id not read: %+v %q", f.Points, f.Invalid)
	}
}

// TestFormats names the writer of each object by its keys.
func TestFormats(t *testing.T) {
	for data, want := range map[string]string{
		validPoint:                      FormatVLLM,
		pointWith("failed", ""):         FormatVLLMLegacy,
		sglangPoint:                     FormatSGLang,
		validPoint + "\n" + sglangPoint: FormatVLLM + "," + FormatSGLang,
	} {
		if got := strings.Join(Parse(fuzzRel, []byte(data)).Formats, ","); got != want {
			t.Errorf("%.50q: formats %s, want %s", data, got, want)
		}
	}
}

// TestNotAResult: JSON under bench/ that holds no result and states none
// of a result's keys (a sidecar, a summary: TestNoReaderAccepts has those
// that do) is a warning naming the file, never a reason; JSON that is not
// valid stays bench.invalid.
func TestNotAResult(t *testing.T) {
	for name, data := range map[string]string{
		"pytorch sidecar": `[{"benchmark": {"name": "vLLM benchmark", "extra_info": {"args": {"request_rate": "inf"}}}, "model": {"name": "m"}, "metric": {"name": "median_ttft_ms", "benchmark_values": [41.2], "extra_info": {"completed": 6}}}]`,
		"sweep summary":   "[\n    " + validPoint + "\n]",
		"metadata object": `{"backend": "sglang", "server_args": {"tp_size": 8}}`,
		"a number":        "42\n",
		"Infinity":        "Infinity",
		"two arrays":      "[1]\n[2]\n",
		"nested result":   `{"result": ` + validPoint + `}`,
	} {
		f := Parse(fuzzRel, []byte(data))
		if f.NotResult == "" || len(f.Invalid) > 0 || len(f.Points) > 0 || !strings.HasPrefix(f.NotResult, fuzzRel+": not a bench result (") {
			t.Errorf("%s: %+v", name, f)
		}
	}
	if f := Parse(fuzzRel, []byte(`[{"completed": 1}`)); f.NotResult != "" || len(f.Invalid) != 1 {
		t.Errorf("a torn array: %+v", f)
	}
}

// TestReaderReadsInAnySizeOfPieces: the streaming reader gives the same
// answer whether the file comes in one read, in one-byte reads or in
// halves; the buffer's edges must not show.
func TestReaderReadsInAnySizeOfPieces(t *testing.T) {
	var inputs [][]byte
	filepath.WalkDir("../testdata/bench-real", func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && (strings.HasSuffix(p, ".json") || strings.HasSuffix(p, ".jsonl")) {
			b, err := os.ReadFile(p)
			if err == nil {
				inputs = append(inputs, b)
			}
		}
		return nil
	})
	inputs = append(inputs, []byte(validPoint), []byte(strings.Replace(validPoint, "m/M", `m/\u00e9\ud83d\ude00 caf\u00e9`, 1)),
		[]byte(strings.Replace(validPoint, "m/M", "m/é😀", 1)), []byte(validPoint[:70]), []byte(pointWith("x", "[1, NaN, -Infinity, \"\\\"\"]")))
	if len(inputs) < 20 {
		t.Fatalf("only %d inputs", len(inputs))
	}
	for _, in := range inputs {
		whole := fmt.Sprintf("%+v", Read(fuzzRel, bytes.NewReader(in)))
		for name, r := range map[string]io.Reader{
			"one byte": iotest.OneByteReader(bytes.NewReader(in)),
			"halves":   iotest.HalfReader(bytes.NewReader(in)),
			"7 bytes":  &chunkReader{data: in, n: 7},
		} {
			if got := fmt.Sprintf("%+v", Read(fuzzRel, r)); got != whole {
				t.Errorf("%s reads of %.60q:\n got %s\nwant %s", name, in, got, whole)
			}
		}
	}
}

// chunkReader returns at most n bytes per Read.
type chunkReader struct {
	data []byte
	n    int
}

func (c *chunkReader) Read(p []byte) (int, error) {
	if len(c.data) == 0 {
		return 0, io.EOF
	}
	m := min(len(p), c.n, len(c.data))
	copy(p, c.data[:m])
	c.data = c.data[m:]
	return m, nil
}

// TestReaderLinesAcrossBuffers: a line number stays right past the read
// buffer's edge.
func TestReaderLinesAcrossBuffers(t *testing.T) {
	pad := strings.Repeat("\n", benchBufSize+3)
	data := validPoint + pad + pointWith("completed", "-1")
	_, inv, _ := pb(fuzzRel, []byte(data))
	want := fmt.Sprintf("%s:%d: completed:", fuzzRel, benchBufSize+4)
	if len(inv) != 1 || !strings.HasPrefix(inv[0], want) {
		t.Errorf("invalid %q, want %s…", inv, want)
	}
}

// TestOpenKeysBound: the keys held to find duplicates are bounded.
func TestOpenKeysBound(t *testing.T) {
	var b strings.Builder
	b.WriteString(`{"server_info": {`)
	for i := 0; b.Len() < maxOpenKeyBytes+100; i++ {
		fmt.Fprintf(&b, `"key-%08d": 0, `, i)
	}
	b.WriteString(`"end": 0}, "completed": 1}`)
	_, inv, _ := pb(fuzzRel, []byte(b.String()))
	if len(inv) != 1 || !strings.Contains(inv[0], fmt.Sprintf("the objects open at once hold more than %d bytes of keys; refused", maxOpenKeyBytes)) {
		t.Errorf("invalid %.200q", inv)
	}
}

// TestKeyLengths: an empty key is a key; one of maxKeyBytes is kept, one
// byte more is refused.
func TestKeyLengths(t *testing.T) {
	for key, ok := range map[string]bool{"": true, strings.Repeat("k", maxKeyBytes): true, strings.Repeat("k", maxKeyBytes+1): false} {
		ps, inv, _ := pb(fuzzRel, []byte(strings.Replace(validPoint, `"request_rate"`, `"`+key+`": 1, "request_rate"`, 1)))
		if got := len(ps) == 1 && len(inv) == 0; got != ok {
			t.Errorf("a key of %d bytes: points %d, invalid %q; want accepted %v", len(key), len(ps), inv, ok)
			continue
		}
		if ok && fmt.Sprint(kept(t, ps[0])[key]) != "1" {
			t.Errorf("a key of %d bytes kept as %v", len(key), kept(t, ps[0])[key])
		}
	}
}

// TestEscapesInStrings: an escaped quote, backslash or brace inside a
// string ends nothing: a string whose text looks like the end of an
// object and the start of another is read as the string it is.
func TestEscapesInStrings(t *testing.T) {
	for _, label := range []string{`a\"}`, `a\\`, `x\"}\n{\"model_id\": \"other\"`, `\u007d`} {
		data := pointWith("label", `"`+label+`"`) + "\n" + strings.Replace(pointWith("max_concurrency", "2"), "m/M", "m/M", 1)
		points, invalid, _ := pb("bench/m/e/r1/c.json", []byte(data))
		if len(invalid) > 0 || len(points) != 2 || points[0].ModelID != "m/M" || points[1].ID.MaxConcurrency != 2 {
			t.Errorf("label %s: %d points, invalid %q", label, len(points), invalid)
		}
	}
}
