package summarize

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/clockgate/clockgate/ratio"
	"github.com/clockgate/clockgate/strictjson"
)

// Point is one bench point of a leg: the keys a ratio reads, and the whole
// object verbatim for all-runs.json.
type Point struct {
	ratio.BenchPoint
	// Where names the object: the file relative to TREE, and ":line" when
	// the file holds several objects.
	Where string
	// Raw is the object with every key as written.
	Raw map[string]any
}

// Memory is a leg's memory record.
type Memory struct {
	// PeakGPUMemoryMiB is the peak GPU memory over the leg, in MiB.
	PeakGPUMemoryMiB float64
	// N is the memory sampler's sample count.
	N int
	// Raw is the record with every key as written.
	Raw map[string]any
}

// benchIntKeys are the integer keys a bench point must carry, each ≥ 0.
var benchIntKeys = []string{"num_prompts", "completed", "total_input_tokens", "total_output_tokens"}

// benchReported are the numeric keys a bench point may carry; when present
// each must be a number ≥ 0.
var benchReported = []string{"duration", "total_token_throughput", "request_throughput",
	"mean_tpot_ms", "median_tpot_ms", "mean_ttft_ms", "median_ttft_ms", "p99_ttft_ms", "p99_tpot_ms"}

// chunk is one top-level object of a bench file: its byte range and the
// line it starts on.
type chunk struct {
	start, end, line int
}

// splitObjects finds the top-level objects of a file that holds one JSON
// object or several separated by newlines (what --append-result writes). It
// only finds boundaries; each object is then parsed strictly.
func splitObjects(data []byte) ([]chunk, error) {
	var out []chunk
	line := 1
	i := 0
	for {
		for i < len(data) && isSpace(data[i]) {
			if data[i] == '\n' {
				line++
			}
			i++
		}
		if i == len(data) {
			break
		}
		if data[i] != '{' {
			return nil, fmt.Errorf("%d: want a JSON object, found %q", line, data[i])
		}
		c := chunk{start: i, line: line}
		depth, inStr, esc := 0, false, false
	scan:
		for ; i < len(data); i++ {
			b := data[i]
			switch {
			case b == '\n':
				line++
			case inStr:
				switch {
				case esc:
					esc = false
				case b == '\\':
					esc = true
				case b == '"':
					inStr = false
				}
			case b == '"':
				inStr = true
			case b == '{' || b == '[':
				depth++
			case b == '}' || b == ']':
				depth--
				if depth == 0 {
					i++
					break scan
				}
			}
		}
		c.end = i
		out = append(out, c)
		// The next object, if any, must start on a new line.
		for i < len(data) && (data[i] == ' ' || data[i] == '\t' || data[i] == '\r') {
			i++
		}
		if i < len(data) && data[i] != '\n' {
			return nil, fmt.Errorf("%d: want a newline after an object, found %q", line, data[i])
		}
	}
	if len(out) == 0 {
		return nil, errors.New("1: empty file: want one bench result object per point")
	}
	return out, nil
}

func isSpace(b byte) bool { return b == ' ' || b == '\t' || b == '\n' || b == '\r' }

// lineOf returns the 1-based line of byte offset off in data.
func lineOf(data []byte, off int) int {
	if off > len(data) {
		off = len(data)
	}
	return 1 + bytes.Count(data[:off], []byte("\n"))
}

// parseBench reads the points of one bench file. rel is its path relative
// to TREE. Each object that is malformed is one bench.invalid message; a
// well-formed object that shows failed requests adds a
// bench.failed_requests message and is still a point.
func parseBench(rel string, data []byte) (points []Point, invalid, failedReqs []string) {
	chunks, err := splitObjects(data)
	if err != nil {
		return nil, []string{fmt.Sprintf("%s:%v", rel, err)}, nil
	}
	multi := len(chunks) > 1
	for _, c := range chunks {
		where := rel
		if multi {
			where = fmt.Sprintf("%s:%d", rel, c.line)
		}
		v, err := strictjson.ParseObject(data[c.start:c.end])
		if err != nil {
			var se *strictjson.Error
			if errors.As(err, &se) {
				invalid = append(invalid, fmt.Sprintf("%s:%d: %s", rel, lineOf(data, c.start+se.Offset), se.Msg))
			} else {
				invalid = append(invalid, fmt.Sprintf("%s:%d: %v", rel, c.line, err))
			}
			continue
		}
		p, bad := benchPoint(v)
		if len(bad) > 0 {
			invalid = append(invalid, fmt.Sprintf("%s: %s", where, strings.Join(bad, "; ")))
			continue
		}
		p.Where = where
		if msg := failedRequests(v, p); msg != "" {
			failedReqs = append(failedReqs, fmt.Sprintf("%s: %s", where, msg))
		}
		points = append(points, p)
	}
	return points, invalid, failedReqs
}

// benchPoint reads the keys a ratio needs from one object. It returns every
// defect found, each naming its key, what was expected and what was found.
func benchPoint(v *strictjson.Value) (Point, []string) {
	var bad []string
	intKey := func(key string, min int64, required bool) int {
		f, ok := v.Fields[key]
		if !ok {
			if required {
				bad = append(bad, fmt.Sprintf("%s: want an integer ≥ %d, found nothing (key missing)", key, min))
			}
			return 0
		}
		n, isInt := f.Int()
		if !isInt || n < min || n > 1<<40 {
			bad = append(bad, fmt.Sprintf("%s: want an integer ≥ %d, found %s", key, min, f.Describe()))
			return 0
		}
		return int(n)
	}
	numKey := func(key string, required bool) float64 {
		f, ok := v.Fields[key]
		if !ok {
			if required {
				bad = append(bad, fmt.Sprintf("%s: want a finite number ≥ 0, found nothing (key missing)", key))
			}
			return 0
		}
		if f.Kind != strictjson.Number || f.Num < 0 {
			bad = append(bad, fmt.Sprintf("%s: want a finite number ≥ 0, found %s", key, f.Describe()))
			return 0
		}
		return f.Num
	}
	var p Point
	// max_concurrency is the point's identity; a point run without a
	// concurrency bound (null) or at 0 has none.
	p.MaxConcurrency = intKey("max_concurrency", 1, true)
	if f, ok := v.Fields["model_id"]; !ok {
		bad = append(bad, "model_id: want a string, found nothing (key missing)")
	} else if f.Kind != strictjson.String || f.Str == "" {
		bad = append(bad, fmt.Sprintf("model_id: want a non-empty string, found %s", f.Describe()))
	} else {
		p.ModelID = f.Str
	}
	p.NumPrompts = intKey("num_prompts", 0, true)
	completed := intKey("completed", 0, true)
	p.TotalInputTokens = intKey("total_input_tokens", 0, true)
	p.TotalOutputTokens = intKey("total_output_tokens", 0, true)
	intKey("failed", 0, false)
	p.OutputThroughput = numKey("output_throughput", true)
	for _, k := range benchReported {
		numKey(k, false)
	}
	if len(bad) == 0 && p.OutputThroughput == 0 && completed > 0 && p.TotalOutputTokens > 0 {
		bad = append(bad, fmt.Sprintf("output_throughput: want > 0 tokens/s for %d completed requests and %d output tokens, found 0",
			completed, p.TotalOutputTokens))
	}
	if len(bad) > 0 {
		return Point{}, bad
	}
	p.Raw = rawObject(v)
	return p, nil
}

// failedRequests says why a valid point shows failed requests, or "".
func failedRequests(v *strictjson.Value, p Point) string {
	completed, _ := v.Fields["completed"].Int()
	var failed int64
	f, hasFailed := v.Fields["failed"]
	if hasFailed {
		failed, _ = f.Int()
	}
	if completed >= int64(p.NumPrompts) && failed == 0 {
		return ""
	}
	failedText := "no failed key (legacy file)"
	if hasFailed {
		failedText = fmt.Sprintf("failed %d", failed)
	}
	return fmt.Sprintf("max_concurrency %d: want every request completed and failed 0, found completed %d of num_prompts %d, %s",
		p.MaxConcurrency, completed, p.NumPrompts, failedText)
}

// parseMemory reads the memory record at rel. The message, when not empty,
// names the file, the key, what was expected and what was found.
func parseMemory(rel string, data []byte) (*Memory, string) {
	v, err := strictjson.ParseObject(data)
	if err != nil {
		var se *strictjson.Error
		if errors.As(err, &se) {
			return nil, fmt.Sprintf("%s:%d: %s", rel, lineOf(data, se.Offset), se.Msg)
		}
		return nil, fmt.Sprintf("%s: %v", rel, err)
	}
	var bad []string
	m := &Memory{}
	if f, ok := v.Fields["peak_gpu_memory_mib"]; !ok {
		bad = append(bad, "peak_gpu_memory_mib: want a finite number > 0 MiB, found nothing (key missing)")
	} else if f.Kind != strictjson.Number || !(f.Num > 0) {
		bad = append(bad, fmt.Sprintf("peak_gpu_memory_mib: want a finite number > 0 MiB, found %s", f.Describe()))
	} else {
		m.PeakGPUMemoryMiB = f.Num
	}
	if f, ok := v.Fields["n"]; !ok {
		bad = append(bad, "n: want an integer > 0, found nothing (key missing)")
	} else if n, isInt := f.Int(); !isInt || n <= 0 || n > 1<<40 {
		bad = append(bad, fmt.Sprintf("n: want an integer > 0, found %s", f.Describe()))
	} else {
		m.N = int(n)
	}
	if f, ok := v.Fields["peak_host_rss_mib"]; ok && (f.Kind != strictjson.Number || f.Num < 0) {
		bad = append(bad, fmt.Sprintf("peak_host_rss_mib: want a finite number ≥ 0 MiB, found %s", f.Describe()))
	}
	if len(bad) > 0 {
		return nil, fmt.Sprintf("%s: %s", rel, strings.Join(bad, "; "))
	}
	m.Raw = rawObject(v)
	return m, ""
}

// rawObject converts a strict JSON object to plain values, numbers kept as
// written.
func rawObject(v *strictjson.Value) map[string]any {
	return raw(v).(map[string]any)
}

func raw(v *strictjson.Value) any {
	switch v.Kind {
	case strictjson.Null:
		return nil
	case strictjson.Bool:
		return v.Bool
	case strictjson.Number:
		return json.Number(v.Raw)
	case strictjson.String:
		return v.Str
	case strictjson.Array:
		out := make([]any, len(v.Elems))
		for i, e := range v.Elems {
			out[i] = raw(e)
		}
		return out
	}
	out := make(map[string]any, len(v.Fields))
	for k, f := range v.Fields {
		out[k] = raw(f)
	}
	return out
}
