package summarize

import (
	"strings"
	"testing"
)

const validPoint = `{"model_id": "m/M", "num_prompts": 6, "max_concurrency": 1, "completed": 6, "failed": 0, ` +
	`"total_input_tokens": 6144, "total_output_tokens": 768, "output_throughput": 13.08, "duration": 58.7, "request_rate": "inf"}`

// point returns validPoint with one key's raw value replaced, or removed
// when value is "".
func pointWith(key, value string) string {
	fields := strings.Split(strings.Trim(validPoint, "{}"), ", ")
	var out []string
	found := false
	for _, f := range fields {
		if strings.HasPrefix(f, `"`+key+`":`) {
			found = true
			if value == "" {
				continue
			}
			f = `"` + key + `": ` + value
		}
		out = append(out, f)
	}
	if !found && value != "" {
		out = append(out, `"`+key+`": `+value)
	}
	return "{" + strings.Join(out, ", ") + "}"
}

func TestParseBenchValid(t *testing.T) {
	points, invalid, failed := parseBench("bench/m/e/r1/c1.json", []byte(validPoint))
	if len(invalid) > 0 || len(failed) > 0 || len(points) != 1 {
		t.Fatalf("points %d, invalid %q, failed %q", len(points), invalid, failed)
	}
	p := points[0]
	if p.MaxConcurrency != 1 || p.ModelID != "m/M" || p.NumPrompts != 6 || p.TotalInputTokens != 6144 ||
		p.TotalOutputTokens != 768 || p.OutputThroughput != 13.08 || p.Where != "bench/m/e/r1/c1.json" {
		t.Errorf("read %+v", p.BenchPoint)
	}
	// Every key is kept as written, the ones not read included.
	if got := p.Raw["request_rate"]; got != "inf" {
		t.Errorf("request_rate kept as %v", got)
	}
	if got := p.Raw["duration"]; got == nil || got.(interface{ String() string }).String() != "58.7" {
		t.Errorf("duration kept as %v", got)
	}
}

// TestParseBenchInvalid pins the message of each malformed object: the
// file, the line where the file holds several objects or the syntax is
// wrong, the key, what was expected and what was found.
func TestParseBenchInvalid(t *testing.T) {
	const rel = "bench/m/e/r1/c1.json"
	cases := []struct {
		name, data, want string
	}{
		{"missing max_concurrency", pointWith("max_concurrency", ""), rel + ": max_concurrency: want an integer ≥ 1, found nothing (key missing)"},
		{"null max_concurrency", pointWith("max_concurrency", "null"), rel + ": max_concurrency: want an integer ≥ 1, found null"},
		{"zero max_concurrency", pointWith("max_concurrency", "0"), rel + ": max_concurrency: want an integer ≥ 1, found number 0"},
		{"fractional num_prompts", pointWith("num_prompts", "6.0"), rel + ": num_prompts: want an integer ≥ 0, found number 6.0"},
		{"negative completed", pointWith("completed", "-1"), rel + ": completed: want an integer ≥ 0, found number -1"},
		{"string tokens", pointWith("total_input_tokens", `"6144"`), rel + `: total_input_tokens: want an integer ≥ 0, found string "6144"`},
		{"missing output tokens", pointWith("total_output_tokens", ""), rel + ": total_output_tokens: want an integer ≥ 0, found nothing (key missing)"},
		{"bool failed", pointWith("failed", "false"), rel + ": failed: want an integer ≥ 0, found false"},
		{"string throughput", pointWith("output_throughput", `"fast"`), rel + `: output_throughput: want a finite number ≥ 0, found string "fast"`},
		{"negative throughput", pointWith("output_throughput", "-3.5"), rel + ": output_throughput: want a finite number ≥ 0, found number -3.5"},
		{"missing throughput", pointWith("output_throughput", ""), rel + ": output_throughput: want a finite number ≥ 0, found nothing (key missing)"},
		{"zero throughput with output", pointWith("output_throughput", "0"), rel + ": output_throughput: want > 0 tokens/s for 6 completed requests and 768 output tokens, found 0"},
		{"reported key wrong type", pointWith("duration", "null"), rel + ": duration: want a finite number ≥ 0, found null"},
		{"model_id number", pointWith("model_id", "7"), rel + ": model_id: want a non-empty string, found number 7"},
		{"two defects in one object", strings.Replace(pointWith("num_prompts", `"6"`), `"completed": 6`, `"completed": 1.5`, 1),
			rel + `: num_prompts: want an integer ≥ 0, found string "6"; completed: want an integer ≥ 0, found number 1.5`},
		{"NaN", pointWith("output_throughput", "NaN"), rel + ":1: unexpected 'N'"},
		{"Infinity", pointWith("output_throughput", "Infinity"), rel + ":1: unexpected 'I'"},
		{"duplicate key", strings.Replace(validPoint, `"failed": 0`, `"failed": 0, "completed": 5`, 1), rel + `:1: duplicate key "completed"`},
		{"torn object", validPoint[:60], rel + ":1: want a key string, found end of input"},
		{"not an object", `[1, 2]`, rel + ":1: want a JSON object, found '['"},
		{"empty file", "\n", rel + ":1: empty file: want one bench result object per point"},
		{"two objects on one line", validPoint + " " + validPoint, rel + ":1: want a newline after an object, found '{'"},
		{"bad UTF-8", strings.Replace(validPoint, "m/M", "m/\xff", 1), rel + ":1: invalid UTF-8"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			points, invalid, _ := parseBench(rel, []byte(c.data))
			if len(points) != 0 || len(invalid) != 1 || !strings.HasPrefix(invalid[0], c.want) {
				t.Errorf("points %d, invalid %q\nwant one message starting %q", len(points), invalid, c.want)
			}
		})
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
	points, invalid, _ := parseBench(rel, []byte(data))
	if len(points) != 3 || points[0].MaxConcurrency != 1 || points[1].MaxConcurrency != 2 || points[2].MaxConcurrency != 8 {
		t.Fatalf("points %+v", points)
	}
	if points[1].Where != rel+":2" || points[2].Where != rel+":5" {
		t.Errorf("points named %q and %q, want %s:2 and %s:5", points[1].Where, points[2].Where, rel, rel)
	}
	want := rel + `:4: completed: want an integer ≥ 0, found string "six"`
	if len(invalid) != 1 || invalid[0] != want {
		t.Errorf("invalid %q, want [%q]", invalid, want)
	}
	// A syntax error in the third object names its own line.
	data = validPoint + "\n" + second + "\n" + strings.Replace(second, "13.08", "13.08.1", 1)
	_, invalid, _ = parseBench(rel, []byte(data))
	if len(invalid) != 1 || !strings.HasPrefix(invalid[0], rel+":3: ") {
		t.Errorf("invalid %q, want one message at %s:3", invalid, rel)
	}
}

func TestFailedRequests(t *testing.T) {
	const rel = "bench/m/e/r1/c1.json"
	cases := []struct {
		name, data, want string
	}{
		{"all completed", validPoint, ""},
		{"completed short", pointWith("completed", "5"), rel + ": max_concurrency 1: want every request completed and failed 0, found completed 5 of num_prompts 6, failed 0"},
		{"failed counted", pointWith("failed", "2"), rel + ": max_concurrency 1: want every request completed and failed 0, found completed 6 of num_prompts 6, failed 2"},
		{"legacy short", strings.Replace(pointWith("failed", ""), `"completed": 6`, `"completed": 4`, 1),
			rel + ": max_concurrency 1: want every request completed and failed 0, found completed 4 of num_prompts 6, no failed key (legacy file)"},
		{"legacy complete", pointWith("failed", ""), ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			points, invalid, failed := parseBench(rel, []byte(c.data))
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

func TestParseMemory(t *testing.T) {
	const rel = "memory/m/e/r1.summary.json"
	m, msg := parseMemory(rel, []byte(`{"peak_gpu_memory_mib": 71234.0, "peak_host_rss_mib": 5120.5, "n": 312}`))
	if msg != "" || m.PeakGPUMemoryMiB != 71234 || m.N != 312 {
		t.Fatalf("%+v, %q", m, msg)
	}
	cases := []struct{ data, want string }{
		{`{"peak_gpu_memory_mib": 0, "n": 312}`, rel + ": peak_gpu_memory_mib: want a finite number > 0 MiB, found number 0"},
		{`{"peak_gpu_memory_mib": -1.5, "n": 312}`, rel + ": peak_gpu_memory_mib: want a finite number > 0 MiB, found number -1.5"},
		{`{"peak_gpu_memory_mib": "71234", "n": 312}`, rel + `: peak_gpu_memory_mib: want a finite number > 0 MiB, found string "71234"`},
		{`{"n": 312}`, rel + ": peak_gpu_memory_mib: want a finite number > 0 MiB, found nothing (key missing)"},
		{`{"peak_gpu_memory_mib": 71234.0, "n": 0}`, rel + ": n: want an integer > 0, found number 0"},
		{`{"peak_gpu_memory_mib": 71234.0, "n": 312.5}`, rel + ": n: want an integer > 0, found number 312.5"},
		{`{"peak_gpu_memory_mib": 71234.0}`, rel + ": n: want an integer > 0, found nothing (key missing)"},
		{`{"peak_gpu_memory_mib": 71234.0, "n": 3, "peak_host_rss_mib": null}`, rel + ": peak_host_rss_mib: want a finite number ≥ 0 MiB, found null"},
		{`{"peak_gpu_memory_mib": NaN, "n": 312}`, rel + ":1: unexpected 'N'"},
		{"{\"peak_gpu_memory_mib\": 1.0,\n \"n\": 3,\n \"n\": 4}", rel + `:3: duplicate key "n"`},
	}
	for _, c := range cases {
		m, msg := parseMemory(rel, []byte(c.data))
		if m != nil || !strings.HasPrefix(msg, c.want) {
			t.Errorf("%s:\n got %q\nwant %q", c.data, msg, c.want)
		}
	}
}

func TestRunNumber(t *testing.T) {
	for name, want := range map[string]int{"r1": 1, "r2": 2, "r10": 10, "r123": 123} {
		if n, ok := runNumber(name); !ok || n != want {
			t.Errorf("runNumber(%q) = %d, %v; want %d", name, n, ok, want)
		}
	}
	for _, name := range []string{"r0", "r01", "r-1", "rx", "r", "R1", "r1 ", "run1", "r1.5", "r+1", "r99999999999999999999", "r１"} {
		if n, ok := runNumber(name); ok {
			t.Errorf("runNumber(%q) = %d, want not a run", name, n)
		}
	}
}
