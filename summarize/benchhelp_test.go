package summarize

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/clockgate/clockgate/benchfmt"
)

// The bench helpers summarize's own tests share (benchfmt's tests hold
// the reader's).

const realDir = "../testdata/bench-real"

const fuzzRel = "bench/m/e/r1/c1.json"

const validPoint = `{"model_id": "m/M", "num_prompts": 6, "max_concurrency": 1, "completed": 6, "failed": 0, ` +
	`"total_input_tokens": 6144, "total_output_tokens": 768, "output_throughput": 13.08, "duration": 58.7, "request_rate": "inf"}`

// pointWith returns validPoint with one key's raw value replaced, or
// removed when value is "".
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

// pb reads data as the bench file rel and returns its points,
// bench.invalid and bench.failed_requests messages.
func pb(rel string, data []byte) ([]Point, []string, []string) {
	f := benchfmt.Parse(rel, data)
	return f.Points, f.Invalid, f.Failed
}

// kept is a point's kept object (Point.Raw) decoded, numbers as
// json.Number.
func kept(t *testing.T, p Point) map[string]any {
	t.Helper()
	d := json.NewDecoder(bytes.NewReader(p.Raw))
	d.UseNumber()
	var m map[string]any
	if err := d.Decode(&m); err != nil {
		t.Fatalf("kept object %s: %v", p.Raw, err)
	}
	return m
}
