package benchfmt

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

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
	// Start and End are the point's measured window as its result states
	// it in epoch time, both ends included: AIPerf's profiling records,
	// GuideLLM's start_time and end_time, InferenceX's
	// benchmark_start_time_unix and benchmark_end_time_unix. They are exact
	// instants (UTC), never a wall-clock reading of unknown zone; both are
	// zero when the result states no such window (vLLM's date is read
	// through Date instead). WindowFrom names the fields they came from.
	Start, End time.Time
	WindowFrom string
	// ClientVersion is the version of the client that wrote the result
	// (aiperf_version, guidellm_version, vLLM's version), "" when the
	// result names none.
	ClientVersion string
}

// HasWindow reports whether the point carries an exact epoch window.
func (p *Point) HasWindow() bool { return !p.Start.IsZero() && !p.End.IsZero() }

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
	// FormatAIPerf is aiperf profile's artifact directory
	// (profile_export_aiperf.json, with profile_export.jsonl beside it).
	FormatAIPerf = "aiperf"
	// FormatGuideLLM is guidellm benchmark's benchmarks.json report.
	FormatGuideLLM = "guidellm"
)

// Family is the client family a format's throughput is defined by: vLLM's
// bench serve, its legacy files and SGLang's bench_serving (derived from
// vLLM's benchmark_serving) all divide the output tokens by the run's
// duration alike; AIPerf and GuideLLM each define theirs. Arms whose legs
// are of different families are bench.format_mismatch.
func Family(format string) string {
	switch format {
	case FormatVLLM, FormatVLLMLegacy, FormatSGLang:
		return FormatVLLM
	}
	return format
}

// maxCountBits sets MaxCount.
const maxCountBits = 40

// MaxCount bounds every count read (requests, tokens, max_concurrency, a
// memory record's n): about 10^12, beyond any benchmark's, and every count
// up to it is exact in a float64 and fits an int on any platform.
const MaxCount = 1 << maxCountBits

// IntWant is what a count read must be, for a message: "an integer from
// 0 to 2^40 (1099511627776)".
func IntWant(min int64) string {
	return fmt.Sprintf("an integer from %d to 2^%d (%d)", min, maxCountBits, int64(MaxCount))
}

// benchReported are the numeric keys a bench point may carry; when present
// each must be a finite number ≥ 0.
var benchReported = []string{"duration", "total_token_throughput", "request_throughput",
	"mean_tpot_ms", "median_tpot_ms", "mean_ttft_ms", "median_ttft_ms", "p99_ttft_ms", "p99_tpot_ms"}

// InferenceX's benchmark_serving.py spells vLLM's request_goodput with a
// colon, "request_goodput:"; both are kept as written and neither is
// checked (vLLM writes null without --goodput), so it reads as vLLM's.

// The window InferenceX's benchmark_serving.py writes, epoch seconds;
// preferred over date when present.
const (
	inferenceXStart = "benchmark_start_time_unix"
	inferenceXEnd   = "benchmark_end_time_unix"
)

// resultMarkers are the keys of which a bench result has at least one; a
// JSON value under bench/ with none of them is not a result.
var resultMarkers = []string{"output_throughput", "completed", "total_output_tokens"}

// resultClaims are keys only a bench result, of some client, states: a
// point's identity and what its result says of it (vLLM's, SGLang's,
// InferenceX's), AIPerf's export, GuideLLM's report. An object with one of
// them that no reader accepts was meant as a result and is refused (SPEC
// §12.5: a file whose shape no reader accepts is refused naming the file
// and the formats tried); an object with none (a metadata sidecar) and a
// top level that is not an object (vLLM's *.pytorch.json, a vllm bench
// sweep summary) stay warnings.
var resultClaims = []string{
	"request_rate", "max_concurrency", "num_prompts", "failed", "total_input_tokens",
	"request_throughput", "total_token_throughput", inferenceXStart, inferenceXEnd,
	"aiperf_version", "input_config", "output_token_throughput", "request_count",
	"benchmarks",
}

// formatsTried names, for a refusal, each reader a file was offered to and
// what it looks for.
const formatsTried = "tried vllm, vllm-legacy, sglang (an object with one of output_throughput, completed, total_output_tokens), " +
	"guidellm (one object with a benchmarks array), aiperf (profile_export_aiperf.json in the point's own directory)"

// hintNoReader ends the refusal of a file no reader accepts.
const hintNoReader = "restore the result as its client wrote it (an AIPerf export in a directory of its own per point), or move the file out of bench/ if it is not a result"

// Hints that end a message: what to do.
const (
	hintRestore = "restore the file from where the benchmark wrote it, or rerun the point"
	hintRerun   = "rerun the point with vllm bench serve --save-result (or python -m sglang.bench_serving --output-file)"
	hintFailed  = "read the server log, fix the cause, rerun the point"
	// HintUnread ends a bench file that cannot be opened or read at all.
	HintUnread = "put the result file there as a regular file clockgate can read (restore it from where the benchmark wrote it), or rerun the point"
)

// File is what one bench file holds.
type File struct {
	// Points are its valid points, in file order.
	Points []Point
	// Invalid and Failed are its bench.invalid and bench.failed_requests
	// messages.
	Invalid, Failed []string
	// NotResult, when set, is the warning for a file that holds no bench
	// result (a sidecar, a summary): it is not used.
	NotResult string
	// Formats are the formats of its result objects.
	Formats []string
	// Warnings are what the reader could not place but that spoils no
	// point: a point with no window, and why (AIPerf's naive local times
	// without --bench-tz).
	Warnings []string
	// report says the file's one object holds a benchmarks array and no
	// result key: a GuideLLM report, for ReadFile to read whole.
	report bool
}

// Parse reads the bench file data; rel is its path relative to TREE.
func Parse(rel string, data []byte) File {
	return Read(rel, bytes.NewReader(data))
}

// Read streams one bench file from r; rel is its path relative to
// TREE. Each result object that is malformed is one bench.invalid message,
// and so is each syntax error, which spoils only the object it is in; a
// result that shows failed requests adds a bench.failed_requests message
// and is still a point, whatever else is wrong with it or the file. A file
// that holds no result at all and no syntax error is bench.invalid naming
// the formats tried when an object of it states a result's keys
// (resultClaims), or is AIPerf's export out of its directory; otherwise
// (its top level not an object, or objects with none of those keys: a
// sidecar) it is a warning.
func Read(rel string, r io.Reader) File {
	var out File
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
	if !broken && len(items) == 1 && isAIPerfExport(items[0].v) {
		// AIPerf's metric tags include total_output_tokens: not vLLM's.
		out.Invalid = append(out.Invalid, fmt.Sprintf("%s: AIPerf's export (an object with input_config and its metric tags) outside an artifact directory: the aiperf reader reads %s only in the point's own directory, where %s beside it gives the window; tried aiperf; %s",
			rel, AIPerfJSON, AIPerfJSONL, hintNoReader))
		return out
	}
	if !broken && results == 0 {
		first := items[0].v
		what := "its top level is " + kindName(first.kind)
		if first.kind == kObject {
			what = "an object with none of " + strings.Join(resultMarkers, ", ")
			if f := first.fields["benchmarks"]; f != nil && f.kind == kArray && len(items) == 1 {
				out.report = true
			}
		}
		if !out.report {
			if line, keys := claimed(items); len(keys) > 0 {
				where := rel
				if len(items) > 1 {
					where = fmt.Sprintf("%s:%d", rel, line)
				}
				out.Invalid = append(out.Invalid, fmt.Sprintf("%s: no bench reader accepts it: an object with %s, as a bench result has, but in no client's layout; %s; %s",
					where, strings.Join(keys, ", "), formatsTried, hintNoReader))
				return out
			}
		}
		out.NotResult = fmt.Sprintf("%s: not a bench result (%s: a sidecar or a summary, such as vLLM's *.pytorch.json or a vllm bench sweep summary.json); ignored",
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
			out.Invalid = append(out.Invalid, fmt.Sprintf("%s:%d: %s; %s", rel, it.err.line, it.err.msg, hintRestore))
			continue
		case !isResult(v):
			if results > 0 {
				out.Invalid = append(out.Invalid, fmt.Sprintf("%s:%d: want a bench result object (with one of %s) like the file's other values, found %s; %s",
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
			out.Formats = append(out.Formats, p.Format)
		}
		if failed != "" {
			out.Failed = append(out.Failed, fmt.Sprintf("%s: %s", where, failed))
		}
		if len(bad) > 0 {
			out.Invalid = append(out.Invalid, fmt.Sprintf("%s: %s; %s", where, strings.Join(bad, "; "), hintRerun))
			continue
		}
		p.Where = where
		out.Points = append(out.Points, p)
	}
	if rerr != nil {
		out.Invalid = append(out.Invalid, fmt.Sprintf("%s: reading stopped: %v; %s", rel, rerr, hintRestore))
	}
	return out
}

// isAIPerfExport reports whether v is AIPerf's profile_export_aiperf.json:
// an object with input_config (no vLLM or SGLang result has one) and one
// of its metric tags, wherever its layout puts them.
func isAIPerfExport(v *benchValue) bool {
	if v == nil || v.kind != kObject {
		return false
	}
	if f := v.fields["input_config"]; f == nil || f.kind != kObject {
		return false
	}
	for _, k := range []string{"output_token_throughput", "request_count", "records", "metrics"} {
		if f := v.fields[k]; f != nil && f.kind == kObject {
			return true
		}
	}
	return false
}

// claimed returns the first object of items that has keys of
// resultClaims, its line and those keys, in resultClaims' order.
func claimed(items []item) (int, []string) {
	for _, it := range items {
		if it.v == nil || it.v.kind != kObject {
			continue
		}
		var keys []string
		for _, k := range resultClaims {
			if _, ok := it.v.fields[k]; ok {
				keys = append(keys, k)
			}
		}
		if len(keys) > 0 {
			return it.v.line, keys
		}
	}
	return 0, nil
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
				bad = append(bad, fmt.Sprintf("%s: want %s, found nothing (key missing)", key, IntWant(min)))
			}
			return 0, false
		}
		n, err := strconv.ParseInt(f.text, 10, 64)
		if f.kind != kNumber || err != nil || n < min || n > MaxCount {
			bad = append(bad, fmt.Sprintf("%s: want %s, found %s", key, IntWant(min), f.describe()))
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
			bad[len(bad)-1] = fmt.Sprintf("max_concurrency: want %s or null (no bound), found %s", IntWant(1), f.describe())
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
	if fs[inferenceXStart] != nil || fs[inferenceXEnd] != nil {
		var t [2]time.Time
		for i, k := range []string{inferenceXStart, inferenceXEnd} {
			f := fs[k]
			var x float64
			var err error
			if f != nil && f.kind == kNumber {
				x, err = strconv.ParseFloat(f.text, 64)
			}
			if f == nil || f.kind != kNumber || err != nil || !inEpoch(secTime(x)) {
				bad = append(bad, fmt.Sprintf("%s: want %s (InferenceX writes both or neither), found %s", k, epochWant("seconds"), f.describe()))
				continue
			}
			t[i] = secTime(x)
		}
		switch {
		case t[0].IsZero() || t[1].IsZero():
		case t[1].Before(t[0]):
			bad = append(bad, fmt.Sprintf("%s: want at or after %s, found %s before %s", inferenceXEnd, inferenceXStart,
				t[1].Format(time.RFC3339Nano), t[0].Format(time.RFC3339Nano)))
		default:
			p.Start, p.End, p.WindowFrom = t[0], t[1], inferenceXStart+", "+inferenceXEnd
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
