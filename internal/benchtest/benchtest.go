// Package benchtest holds the bench-result helpers the tests of benchfmt
// and of summarize share: a valid vLLM point, that point with one key
// changed, a real vLLM result as --append-result writes it, and a kept
// point decoded. It imports neither package, so that benchfmt's own tests
// can use it.
package benchtest

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// ValidPoint is a valid vLLM result of one point, on one line with ", "
// and ": " between members, as json.dumps writes it.
const ValidPoint = `{"model_id": "m/M", "num_prompts": 6, "max_concurrency": 1, "completed": 6, "failed": 0, ` +
	`"total_input_tokens": 6144, "total_output_tokens": 768, "output_throughput": 13.08, "duration": 58.7, "request_rate": "inf"}`

// PointWith returns ValidPoint with one key's raw value replaced (or
// added), or removed when value is "".
func PointWith(key, value string) string {
	fields := strings.Split(strings.Trim(ValidPoint, "{}"), ", ")
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

// RealDir is testdata/bench-real of the module, wherever the test runs.
func RealDir() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..", "testdata", "bench-real")
}

// AppendLine is vLLM 0.25.1's real result (bench_serve_v0.25.1.json) as
// --append-result writes it: json.dump on one line, ", " and ": " between
// members, at the given max_concurrency, completed and failed.
func AppendLine(t testing.TB, conc, completed, failed string) string {
	t.Helper()
	pretty, err := os.ReadFile(filepath.Join(RealDir(), "vllm-0.25", "bench_serve_v0.25.1.json"))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(pretty)), "\n")
	for i := range lines {
		lines[i] = strings.TrimSpace(lines[i])
	}
	line := "{" + strings.Join(lines[1:len(lines)-1], " ") + "}"
	for old, new := range map[string]string{`"max_concurrency": 2,`: `"max_concurrency": ` + conc + `,`,
		`"completed": 8,`: `"completed": ` + completed + `,`, `"failed": 0,`: `"failed": ` + failed + `,`} {
		if !strings.Contains(line, old) {
			t.Fatalf("the real file has no %s", old)
		}
		line = strings.Replace(line, old, new, 1)
	}
	return line
}

// Kept is a point's kept object (its Raw bytes) decoded, numbers as
// json.Number.
func Kept(t testing.TB, raw []byte) map[string]any {
	t.Helper()
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	var m map[string]any
	if err := d.Decode(&m); err != nil {
		t.Fatalf("kept object %s: %v", raw, err)
	}
	return m
}
