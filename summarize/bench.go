package summarize

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/clockgate/clockgate/ratio"
	"github.com/clockgate/clockgate/strictjson"
)

// Point is one bench point of a leg: the keys a ratio reads, and the
// object as kept for all-runs.json.
type Point struct {
	ratio.BenchPoint
	// Where names the object: the file relative to TREE, and ":line" when
	// the file holds several objects.
	Where string
	// Format is the writer the object's keys say it came from: FormatVLLM,
	// FormatVLLMLegacy or FormatSGLang.
	Format string
	// Raw is the object as kept, in canonical JSON (strictjson.Canonical's
	// layout): every scalar as written (Python's NaN, Infinity and
	// -Infinity as those strings), an array as {"array_len": N}, an object
	// as {"object_len": N}, a string longer than 64 KiB as
	// {"string_len": N}.
	Raw []byte
	// Date is the result's date as written, when it is a string (vLLM
	// stamps it after the run); DurationS its duration in seconds. They
	// place the point's window in time (SPEC §10.2).
	Date        string
	HasDate     bool
	DurationS   float64
	HasDuration bool
}

// The bench formats clockgate reads, as named in all-runs.json.
const (
	// FormatVLLM is vllm bench serve --save-result (and
	// benchmarks/benchmark_serving.py) since it writes "failed".
	FormatVLLM = "vllm"
	// FormatVLLMLegacy is the same before "failed" existed (vLLM before
	// 0.7): no failed key, often no max_concurrency, per-request arrays in
	// every file.
	FormatVLLMLegacy = "vllm-legacy"
	// FormatSGLang is python -m sglang.bench_serving --output-file: one
	// object per line, no model_id, num_prompts or failed.
	FormatSGLang = "sglang"
)

// Memory is a leg's memory record.
type Memory struct {
	// PeakGPUMemoryMiB is the peak GPU memory over the leg, in MiB.
	PeakGPUMemoryMiB float64
	// N is the memory sampler's sample count.
	N int
	// Raw is the record with every key as written.
	Raw map[string]any
}

// maxCountBits sets maxCount.
const maxCountBits = 40

// maxCount bounds every count read (requests, tokens, max_concurrency, a
// memory record's n): about 10^12, beyond any benchmark's, and every count
// up to it is exact in a float64 and fits an int on any platform.
const maxCount = 1 << maxCountBits

// intWant is what a count read must be, for a message: "an integer from
// 0 to 2^40 (1099511627776)".
func intWant(min int64) string {
	return fmt.Sprintf("an integer from %d to 2^%d (%d)", min, maxCountBits, int64(maxCount))
}

// benchReported are the numeric keys a bench point may carry; when present
// each must be a finite number ≥ 0.
var benchReported = []string{"duration", "total_token_throughput", "request_throughput",
	"mean_tpot_ms", "median_tpot_ms", "mean_ttft_ms", "median_ttft_ms", "p99_ttft_ms", "p99_tpot_ms"}

// resultMarkers are the keys of which a bench result has at least one; a
// JSON value under bench/ with none of them is not a result.
var resultMarkers = []string{"output_throughput", "completed", "total_output_tokens"}

// Hints that end a message: what to do.
const (
	hintRestore = "restore the file from where the benchmark wrote it, or rerun the point"
	hintRerun   = "rerun the point with vllm bench serve --save-result (or python -m sglang.bench_serving --output-file)"
	hintFailed  = "read the server log, fix the cause, rerun the point"
	// hintUnread ends a bench file that cannot be opened or read at all.
	hintUnread = "put the result file there as a regular file clockgate can read (restore it from where the benchmark wrote it), or rerun the point"
	// hintMemSyntax ends a memory record that is not strict JSON.
	hintMemSyntax = "restore the record from where the memory sampler wrote it, or, if it reads the same there, make the sampler write strict JSON and re-measure the leg"
	// hintMemValue ends a memory record whose keys are wrong.
	hintMemValue = "fix the memory sampler's output and re-measure the leg"
	// hintMemUnread ends a memory record that cannot be opened or read.
	hintMemUnread = "put the memory sampler's record there as a regular file clockgate can read (restore it from where the sampler wrote it), or re-measure the leg"
	// hintMemMissing ends memory.missing.
	hintMemMissing = "run the memory sampler with the leg and put its record there, or re-measure the leg"
)

// benchFile is what one bench file holds.
type benchFile struct {
	// points are its valid points, in file order.
	points []Point
	// invalid and failed are its bench.invalid and bench.failed_requests
	// messages.
	invalid, failed []string
	// notResult, when set, is the warning for a file that holds no bench
	// result (a sidecar, a summary): it is not used.
	notResult string
	// formats are the formats of its result objects.
	formats []string
}

// parseBench reads the bench file data; rel is its path relative to TREE.
func parseBench(rel string, data []byte) benchFile {
	return readBench(rel, bytes.NewReader(data))
}

// readBench streams one bench file from r; rel is its path relative to
// TREE. Each result object that is malformed is one bench.invalid message,
// and so is each syntax error, which spoils only the object it is in; a
// result that shows failed requests adds a bench.failed_requests message
// and is still a point, whatever else is wrong with it or the file. A file
// that holds no result at all (its top level not an object, or objects with
// none of the result keys) and no syntax error is a warning.
func readBench(rel string, r io.Reader) benchFile {
	var out benchFile
	br := newBenchReader(r)
	items, rerr := br.readAll()
	br.release()
	broken := rerr != nil
	results := 0
	for _, it := range items {
		switch {
		case it.err != nil:
			broken = true
		case isResult(it.v):
			results++
		}
	}
	if !broken && results == 0 {
		first := items[0].v
		what := "its top level is " + kindName(first.kind)
		if first.kind == kObject {
			what = "an object with none of " + strings.Join(resultMarkers, ", ")
		}
		out.notResult = fmt.Sprintf("%s: not a bench result (%s: a sidecar or a summary, such as vLLM's *.pytorch.json or a vllm bench sweep summary.json); ignored",
			rel, what)
		return out
	}
	// A file of several values names each point's line.
	multi := br.started > 1
	seen := map[string]bool{}
	for _, it := range items {
		v := it.v
		switch {
		case it.err != nil:
			out.invalid = append(out.invalid, fmt.Sprintf("%s:%d: %s; %s", rel, it.err.line, it.err.msg, hintRestore))
			continue
		case !isResult(v):
			if results > 0 {
				out.invalid = append(out.invalid, fmt.Sprintf("%s:%d: want a bench result object (with one of %s) like the file's other values, found %s; %s",
					rel, v.line, strings.Join(resultMarkers, ", "), kindName(v.kind), hintRestore))
			}
			continue
		}
		where := rel
		if multi {
			where = fmt.Sprintf("%s:%d", rel, v.line)
		}
		p, bad, failed := benchPoint(v)
		if !seen[p.Format] {
			seen[p.Format] = true
			out.formats = append(out.formats, p.Format)
		}
		if failed != "" {
			out.failed = append(out.failed, fmt.Sprintf("%s: %s", where, failed))
		}
		if len(bad) > 0 {
			out.invalid = append(out.invalid, fmt.Sprintf("%s: %s; %s", where, strings.Join(bad, "; "), hintRerun))
			continue
		}
		p.Where = where
		out.points = append(out.points, p)
	}
	if rerr != nil {
		out.invalid = append(out.invalid, fmt.Sprintf("%s: reading stopped: %v; %s", rel, rerr, hintRestore))
	}
	return out
}

// isResult reports whether v is a bench result: an object with one of
// resultMarkers.
func isResult(v *benchValue) bool {
	return v.kind == kObject && hasMarker(v)
}

func hasMarker(v *benchValue) bool {
	for _, k := range resultMarkers {
		if _, ok := v.fields[k]; ok {
			return true
		}
	}
	return false
}

func kindName(k kind) string {
	switch k {
	case kNull:
		return "null"
	case kBool:
		return "a boolean"
	case kNumber, kPython:
		return "a number"
	case kString:
		return "a string"
	case kArray:
		return "an array"
	}
	return "an object"
}

// benchPoint reads the keys a ratio needs from one result object. It
// returns every defect found, each naming its key, what was expected and
// what was found; and, when the request counts are readable, why the point
// shows failed requests ("" when it does not), whatever else is wrong.
func benchPoint(v *benchValue) (Point, []string, string) {
	var p Point
	var bad []string
	fs := v.fields
	switch {
	case fs["total_output_tokens_retokenized"] != nil:
		p.Format = FormatSGLang
	case fs["failed"] != nil:
		p.Format = FormatVLLM
	default:
		p.Format = FormatVLLMLegacy
	}
	intKey := func(key string, min int64, required bool) (int, bool) {
		f := fs[key]
		if f == nil {
			if required {
				bad = append(bad, fmt.Sprintf("%s: want %s, found nothing (key missing)", key, intWant(min)))
			}
			return 0, false
		}
		n, err := strconv.ParseInt(f.text, 10, 64)
		if f.kind != kNumber || err != nil || n < min || n > maxCount {
			bad = append(bad, fmt.Sprintf("%s: want %s, found %s", key, intWant(min), f.describe()))
			return 0, false
		}
		return int(n), true
	}
	numKey := func(key string, required bool) float64 {
		f := fs[key]
		if f == nil {
			if required {
				bad = append(bad, fmt.Sprintf("%s: want a finite number ≥ 0, found nothing (key missing)", key))
			}
			return 0
		}
		x, err := strconv.ParseFloat(f.text, 64)
		if f.kind != kNumber || err != nil && !errors.Is(err, strconv.ErrRange) || !(x >= 0) || math.IsInf(x, 0) {
			bad = append(bad, fmt.Sprintf("%s: want a finite number ≥ 0, found %s", key, f.describe()))
			return 0
		}
		return x
	}

	// The identity. A file written before --max-concurrency existed has
	// no max_concurrency: its requests were not bounded.
	if f := fs["max_concurrency"]; f != nil && f.kind != kNull {
		if n, ok := intKey("max_concurrency", 1, true); ok {
			p.ID.MaxConcurrency = n
		} else {
			bad[len(bad)-1] = fmt.Sprintf("max_concurrency: want %s or null (no bound), found %s", intWant(1), f.describe())
		}
	}
	switch f := fs["request_rate"]; {
	case f == nil:
		bad = append(bad, `request_rate: want a number > 0, "inf" or Infinity, found nothing (key missing)`)
	case f.kind == kString && (f.text == "inf" || f.text == "Infinity"), f.kind == kPython && f.text == "Infinity":
		p.ID.RequestRate = 0 // unbounded
	default:
		x, err := strconv.ParseFloat(f.text, 64)
		if f.kind != kNumber || err != nil || !(x > 0) || math.IsInf(x, 0) {
			bad = append(bad, fmt.Sprintf(`request_rate: want a number > 0, "inf" or Infinity, found %s`, f.describe()))
		} else {
			p.ID.RequestRate = x
		}
	}

	switch f := fs["model_id"]; {
	case f == nil && p.Format == FormatSGLang:
		// SGLang names no model; the model directory is the identity.
	case f == nil:
		bad = append(bad, "model_id: want a string, found nothing (key missing)")
	case f.kind != kString || f.text == "":
		bad = append(bad, fmt.Sprintf("model_id: want a non-empty string, found %s", f.describe()))
	default:
		p.ModelID = f.text
	}

	// The requests sent, and those that failed. SGLang writes neither:
	// with --output-details its errors array has one entry per request
	// sent, empty for a success; without, only completed is known.
	sentWhat, failedWhat := "num_prompts", ""
	failed := 0
	errs := fs["errors"]
	hasErrs := errs != nil && errs.kind == kArray
	countsOK := true
	sglangSent := fs["num_prompts"] == nil && p.Format == FormatSGLang
	if !sglangSent {
		p.NumPrompts, countsOK = intKey("num_prompts", 0, true)
	}
	completed, ok := intKey("completed", 0, true)
	countsOK = countsOK && ok
	p.Completed = completed
	p.TotalInputTokens, _ = intKey("total_input_tokens", 0, true)
	p.TotalOutputTokens, _ = intKey("total_output_tokens", 0, true)
	switch {
	case !sglangSent:
	case hasErrs:
		p.NumPrompts, sentWhat = int(errs.n), "requests sent (the errors array: SGLang writes no num_prompts)"
	default:
		p.NumPrompts, sentWhat = completed, "requests (SGLang writes no num_prompts; completed stands for it)"
	}
	switch {
	case fs["failed"] != nil:
		n, ok := intKey("failed", 0, false)
		failed, countsOK = n, countsOK && ok
		failedWhat = fmt.Sprintf("failed %d", n)
	case p.Format == FormatSGLang && hasErrs:
		failed = int(errs.nonEmpty)
		failedWhat = fmt.Sprintf("%d non-empty errors", failed)
	case p.Format == FormatSGLang:
		failedWhat = "failed unknown (no errors array)"
	default:
		failedWhat = "no failed key (legacy file)"
	}

	p.OutputThroughput = numKey("output_throughput", true)
	for _, k := range benchReported {
		numKey(k, false)
	}
	if f := fs["date"]; f != nil && f.kind == kString {
		p.Date, p.HasDate = f.text, true
	}
	if f := fs["duration"]; f != nil && f.kind == kNumber {
		if x, err := strconv.ParseFloat(f.text, 64); err == nil && x >= 0 {
			p.DurationS, p.HasDuration = x, true
		}
	}
	// Every other top-level number must be a float64 too (the reader
	// checked it); Python's NaN and Infinity are accepted there.
	if len(bad) == 0 && p.OutputThroughput == 0 && completed > 0 && p.TotalOutputTokens > 0 {
		bad = append(bad, fmt.Sprintf("output_throughput: want > 0 tokens/s for %d completed requests and %d output tokens, found 0",
			completed, p.TotalOutputTokens))
	}

	var why string
	if countsOK && (completed < p.NumPrompts || failed > 0) {
		why = fmt.Sprintf("%s: want every request completed and failed 0, found completed %d of %s %d, %s; %s",
			p.ID, completed, sentWhat, p.NumPrompts, failedWhat, hintFailed)
	}
	if len(bad) > 0 {
		return p, bad, why
	}
	p.Raw = keep(v)
	return p, nil, why
}

// keep is a result object as all-runs.json keeps it, as canonical JSON
// (strictjson.Canonical's layout, at depth 0): what encoding a map of its
// kept values would give, written straight from the fields.
func keep(v *benchValue) []byte {
	keys := slices.Sorted(maps.Keys(v.fields))
	if len(keys) == 0 {
		return []byte("{}")
	}
	b := make([]byte, 0, 48*len(keys))
	b = append(b, '{')
	for i, k := range keys {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, "\n  "...)
		b = strictjson.AppendString(b, k)
		b = append(b, ": "...)
		f := v.fields[k]
		switch f.kind {
		case kNull:
			b = append(b, "null"...)
		case kBool:
			b = strconv.AppendBool(b, f.b)
		case kNumber:
			b = append(b, f.text...)
		case kString:
			if f.strLen > 0 {
				b = appendCount(b, "string_len", f.strLen)
			} else {
				b = strictjson.AppendString(b, f.text)
			}
		case kPython:
			b = strictjson.AppendString(b, f.text)
		case kArray:
			b = appendCount(b, "array_len", f.n)
		case kObject:
			b = appendCount(b, "object_len", f.n)
		}
	}
	return append(b, "\n}"...)
}

// appendCount appends a kept object's member that stands for what it
// counts, {"array_len": N} say, at depth 1.
func appendCount(b []byte, key string, n int64) []byte {
	b = append(b, "{\n    \""...)
	b = append(b, key...)
	b = append(b, "\": "...)
	b = strconv.AppendInt(b, n, 10)
	return append(b, "\n  }"...)
}

// lineOf returns the 1-based line of byte offset off in data.
func lineOf(data []byte, off int) int {
	if off > len(data) {
		off = len(data)
	}
	return 1 + bytes.Count(data[:off], []byte("\n"))
}

// parseMemory reads the memory record at rel. The message, when not empty,
// names the file, the key, what was expected and what was found, and ends
// with what to do.
func parseMemory(rel string, data []byte) (*Memory, string) {
	v, err := strictjson.ParseObject(data)
	if err != nil {
		var se *strictjson.Error
		if errors.As(err, &se) {
			return nil, fmt.Sprintf("%s:%d: %s; %s", rel, lineOf(data, se.Offset), se.Msg, hintMemSyntax)
		}
		return nil, fmt.Sprintf("%s: %v; %s", rel, err, hintMemSyntax)
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
		bad = append(bad, fmt.Sprintf("n: want %s, found nothing (key missing)", intWant(1)))
	} else if n, isInt := f.Int(); !isInt || n <= 0 || n > maxCount {
		bad = append(bad, fmt.Sprintf("n: want %s, found %s", intWant(1), f.Describe()))
	} else {
		m.N = int(n)
	}
	// peak_host_rss_mib is reported, never a ratio's quantity: null (or
	// absent) is "not recorded" (an imported leg, a leg naming no process
	// of its own), never a value.
	if f, ok := v.Fields["peak_host_rss_mib"]; ok && f.Kind != strictjson.Null && (f.Kind != strictjson.Number || f.Num < 0) {
		bad = append(bad, fmt.Sprintf("peak_host_rss_mib: want a finite number ≥ 0 MiB, or null where not recorded, found %s", f.Describe()))
	}
	if len(bad) > 0 {
		return nil, fmt.Sprintf("%s: %s; %s", rel, strings.Join(bad, "; "), hintMemValue)
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
