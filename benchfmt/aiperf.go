package benchfmt

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"path"
	"strconv"
	"strings"
	"time"

	"github.com/clockgate/clockgate/strictjson"
)

// The files of an AIPerf artifact directory clockgate reads.
const (
	// AIPerfJSON is the run's aggregate export: one point.
	AIPerfJSON = "profile_export_aiperf.json"
	// AIPerfJSONL is the per-request records export, the point's exact
	// window.
	AIPerfJSONL = "profile_export.jsonl"
	// AIPerfSweepDir holds a sweep's aggregate over its points: no window.
	AIPerfSweepDir = "sweep_aggregate"
	// aiperfAggregatePrefix begins a sweep's aggregate exports
	// (profile_export_aiperf_aggregate.json and .csv): no window.
	aiperfAggregatePrefix = "profile_export_aiperf_aggregate."
)

// IsAIPerfAggregate reports whether a name is one of AIPerf's aggregates
// over a sweep (sweep_aggregate/, profile_export_aiperf_aggregate.*):
// they hold no window and no point of their own, and are skipped with a
// note.
func IsAIPerfAggregate(name string) bool {
	return name == AIPerfSweepDir || strings.HasPrefix(name, aiperfAggregatePrefix)
}

// maxTotalsDisagreement bounds how far, relatively, AIPerf's
// output_token_throughput may lie from total_osl / benchmark_duration, the
// quotient AIPerf computes it as: float rounding only.
const maxTotalsDisagreement = 1e-6

// maxJSONLLine bounds one line of profile_export.jsonl: a record carries
// its inter-chunk latencies, a few KiB per thousand tokens.
const maxJSONLLine = 64 << 20

// hintAIPerf ends an AIPerf result's value defects.
const hintAIPerf = "rerun the point with aiperf profile --artifact-dir (one directory per point), or restore the directory from where AIPerf wrote it"

// ReadAIPerf reads the AIPerf artifact directory dir (relative to TREE):
// its profile_export_aiperf.json is one point, placed in time by
// profile_export.jsonl when it is there (SPEC §12.5).
func ReadAIPerf(open Opener, dir string, opt Options) File {
	var out File
	rel := path.Join(dir, AIPerfJSON)
	data, err := readWhole(open, rel)
	if err != nil {
		out.Invalid = append(out.Invalid, err.Error())
		return out
	}
	v, err := parseStrict(rel, data)
	if err != nil {
		out.Invalid = append(out.Invalid, err.Error())
		return out
	}
	p, bad, failed := aiperfPoint(rel, v)
	out.Formats = []string{FormatAIPerf}
	if failed != "" {
		out.Failed = append(out.Failed, rel+": "+failed)
	}
	if len(bad) > 0 {
		out.Invalid = append(out.Invalid, fmt.Sprintf("%s: %s; %s", rel, strings.Join(bad, "; "), hintAIPerf))
		return out
	}
	p.Where = rel
	warn, err := aiperfWindow(open, dir, v, &p, opt)
	if err != nil {
		out.Invalid = append(out.Invalid, err.Error())
		return out
	}
	if warn != "" {
		out.Warnings = append(out.Warnings, warn)
	}
	out.Points = append(out.Points, p)
	return out
}

// aiperfMetrics is where a file's metric tags are: under records (AIPerf
// before 0.3), at the top level (later), or under metrics in a file with
// a schema_version.
func aiperfMetrics(v *strictjson.Value) *strictjson.Value {
	if r := v.Fields["records"]; r != nil && r.Kind == strictjson.Object {
		return r
	}
	if m := v.Fields["metrics"]; v.Fields["schema_version"] != nil && m != nil && m.Kind == strictjson.Object {
		return m
	}
	return v
}

// aiperfPoint reads the point of one profile_export_aiperf.json: its
// identity, model, totals, requests and throughput. It returns every
// defect, and why the point shows failed requests ("" when it does not).
func aiperfPoint(rel string, v *strictjson.Value) (Point, []string, string) {
	p := Point{Format: FormatAIPerf}
	var c checker
	m := aiperfMetrics(v)
	avg := func(tag string) *strictjson.Value { return at(m, tag+".avg") }
	if at(m, "output_token_throughput") == nil && at(m, "request_count") == nil {
		c.addf("want AIPerf's metric tags (output_token_throughput, request_count) under records, at the top level, or under metrics, found none")
		return p, c.bad, ""
	}

	// The point: loadgen's, or the profiling phase's.
	cfg := at(v, "input_config")
	load := at(cfg, "loadgen")
	where := "input_config.loadgen"
	if ph := aiperfProfilingPhase(at(cfg, "phases")); ph != nil {
		load, where = ph, "input_config.phases (profiling)"
	}
	if load == nil || load.Kind != strictjson.Object {
		c.addf("input_config: want loadgen or a profiling phase naming the point (concurrency, request_rate), found %s", describe(load))
	} else {
		if f := load.Fields["concurrency"]; f != nil && !unbounded(f) {
			if n, ok := c.count(where+".concurrency", f, 1); ok {
				p.ID.MaxConcurrency = n
			}
		}
		if f := load.Fields["request_rate"]; f != nil && !unbounded(f) {
			if f.Kind != strictjson.Number || !(f.Num > 0) {
				c.addf(`%s.request_rate: want a number > 0, "inf" or null, found %s`, where, describe(f))
			} else {
				p.ID.RequestRate = f.Num
			}
		}
	}
	if names := at(cfg, "endpoint.model_names"); names != nil && names.Kind == strictjson.Array && len(names.Elems) > 0 && names.Elems[0].Kind == strictjson.String {
		p.ModelID = names.Elems[0].Str
	} else {
		c.addf("input_config.endpoint.model_names: want an array of the model's names, found %s", describe(names))
	}
	if f := v.Fields["aiperf_version"]; f != nil && f.Kind == strictjson.String {
		p.ClientVersion = f.Str
	}

	completed, okC := c.count("request_count.avg", avg("request_count"), 0)
	errs := 0
	okE := true
	// AIPerf writes error_request_count null, or not at all, when no
	// request failed.
	if f := at(m, "error_request_count"); f != nil && f.Kind != strictjson.Null {
		errs, okE = c.count("error_request_count.avg", at(f, "avg"), 0)
	}
	p.Completed, p.NumPrompts = completed, completed+errs
	p.TotalInputTokens, _ = c.count("total_isl.avg", avg("total_isl"), 0)
	osl, okO := c.count("total_osl.avg", avg("total_osl"), 0)
	p.TotalOutputTokens = osl
	dur, okD := c.num("benchmark_duration.avg", avg("benchmark_duration"))
	tput, okT := c.num("output_token_throughput.avg", avg("output_token_throughput"))
	p.OutputThroughput = tput
	if okD {
		p.DurationS, p.HasDuration = dur, true
	}
	if okO && okD && okT && dur > 0 {
		if want := float64(osl) / dur; math.Abs(tput-want) > maxTotalsDisagreement*want {
			c.addf("output_token_throughput.avg: want total_osl / benchmark_duration (%d / %v = %v, within %g of it), found %v",
				osl, dur, want, maxTotalsDisagreement, tput)
		}
	}
	var why string
	if okC && okE && errs > 0 {
		why = fmt.Sprintf("%s: want every request completed and error_request_count 0, found request_count %d, error_request_count %d; %s",
			p.ID, completed, errs, hintFailed)
	}
	if len(c.bad) > 0 {
		return p, c.bad, why
	}
	p.Raw = aiperfKept(v, m)
	return p, nil, why
}

// unbounded reports whether a point's concurrency or rate is written as
// no bound: null, "none", "inf".
func unbounded(f *strictjson.Value) bool {
	return f.Kind == strictjson.Null || f.Kind == strictjson.String && (f.Str == "none" || f.Str == "inf" || f.Str == "Infinity")
}

// aiperfProfilingPhase is the profiling phase of input_config.phases:
// the member "profiling" of an object, or the element of an array whose
// name or type is "profiling"; nil when there is none.
func aiperfProfilingPhase(phases *strictjson.Value) *strictjson.Value {
	switch {
	case phases == nil:
		return nil
	case phases.Kind == strictjson.Object:
		return phases.Fields["profiling"]
	case phases.Kind == strictjson.Array:
		for _, e := range phases.Elems {
			for _, k := range []string{"name", "type", "phase"} {
				if f := at(e, k); f != nil && f.Kind == strictjson.String && f.Str == "profiling" {
					return e
				}
			}
		}
	}
	return nil
}

// aiperfKept is the point as all-runs.json keeps it: the averages of the
// metric tags read, and the run's own times, as canonical JSON.
func aiperfKept(v, m *strictjson.Value) []byte {
	var k keptObj
	for _, tag := range []string{"output_token_throughput", "request_count", "error_request_count", "total_isl", "total_osl",
		"benchmark_duration", "min_request_timestamp", "max_response_timestamp", "request_throughput"} {
		if f := at(m, tag+".avg"); f != nil && f.Kind == strictjson.Number {
			k.num(tag, f.Num)
		}
	}
	for _, key := range []string{"start_time", "end_time", "aiperf_version", "schema_version"} {
		switch f := v.Fields[key]; {
		case f == nil:
		case f.Kind == strictjson.String:
			k.str(key, f.Str)
		case f.Kind == strictjson.Number:
			k.num(key, f.Num)
		}
	}
	return k.bytes()
}

// aiperfWindow places p in time, in SPEC §12.5's order: the profiling
// records of profile_export.jsonl; min_request_timestamp and
// max_response_timestamp; start_time and end_time under --bench-tz; else
// no window, with a warning naming the file and the flag. The error is a
// JSONL or a timestamp that cannot be read.
func aiperfWindow(open Opener, dir string, v *strictjson.Value, p *Point, opt Options) (string, error) {
	jrel := path.Join(dir, AIPerfJSONL)
	f, err := open(jrel)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return "", fmt.Errorf("%s: %v; %s", jrel, unwrapPath(err), HintUnread)
	}
	if err == nil {
		start, end, n, err := aiperfRecords(jrel, f)
		f.Close()
		if err != nil {
			return "", err
		}
		if n > 0 {
			p.Start, p.End, p.WindowFrom = start, end, AIPerfJSONL+" (profiling records' request_start_ns min, request_end_ns max)"
			return "", nil
		}
	}
	rel := path.Join(dir, AIPerfJSON)
	m := aiperfMetrics(v)
	lo, hi := at(m, "min_request_timestamp.avg"), at(m, "max_response_timestamp.avg")
	if lo != nil && hi != nil {
		var t [2]time.Time
		for i, f := range []*strictjson.Value{lo, hi} {
			key := []string{"min_request_timestamp.avg", "max_response_timestamp.avg"}[i]
			if f.Kind != strictjson.Number || math.IsInf(f.Num, 0) || !inEpoch(time.Unix(0, int64(f.Num)).UTC()) || f.Num > math.MaxInt64 {
				return "", fmt.Errorf("%s: %s: want %s, found %s; %s", rel, key, epochWant("nanoseconds"), f.Describe(), hintAIPerf)
			}
			t[i] = time.Unix(0, int64(f.Num)).UTC()
		}
		if t[1].Before(t[0]) {
			return "", fmt.Errorf("%s: max_response_timestamp.avg %s is before min_request_timestamp.avg %s; %s", rel, t[1].Format(time.RFC3339Nano), t[0].Format(time.RFC3339Nano), hintAIPerf)
		}
		p.Start, p.End, p.WindowFrom = t[0], t[1], AIPerfJSON+" (min_request_timestamp, max_response_timestamp)"
		return "", nil
	}
	st, et := v.Fields["start_time"], v.Fields["end_time"]
	if st == nil || et == nil || st.Kind != strictjson.String || et.Kind != strictjson.String {
		return fmt.Sprintf("%s: the point has no window: no %s beside it, no min_request_timestamp/max_response_timestamp, no start_time/end_time; rerun with a current aiperf, or record the point with clockgate mark", rel, AIPerfJSONL), nil
	}
	if opt.BenchTZ == nil {
		return fmt.Sprintf("%s: the point has no window: its start_time/end_time (%s, %s) are the bench machine's local time with no zone; give --bench-tz ZONE (the machine's zone, such as UTC or Europe/Berlin), or keep %s beside it", rel, st.Str, et.Str, AIPerfJSONL), nil
	}
	var t [2]time.Time
	for i, f := range []*strictjson.Value{st, et} {
		key := []string{"start_time", "end_time"}[i]
		x, err := time.ParseInLocation("2006-01-02T15:04:05.999999999", f.Str, opt.BenchTZ)
		if err != nil || !inEpoch(x) {
			return "", fmt.Errorf("%s: %s: want a local time such as 2025-11-07T13:38:54.793124 from %s to %s, found %s; %s", rel, key, minEpoch.Format("2006"), maxEpoch.Format("2006"), f.Describe(), hintAIPerf)
		}
		t[i] = x.UTC()
	}
	if t[1].Before(t[0]) {
		return "", fmt.Errorf("%s: end_time %s is before start_time %s; %s", rel, et.Str, st.Str, hintAIPerf)
	}
	p.Start, p.End, p.WindowFrom = t[0], t[1], AIPerfJSON+" (start_time, end_time in "+opt.BenchTZ.String()+")"
	return "", nil
}

// aiperfRecords reads profile_export.jsonl (named rel) from r: the
// earliest request_start_ns and latest request_end_ns of its profiling
// records (warmup records dropped), and how many there were. A line that
// is not strict JSON, or a profiling record whose timestamps are not
// epoch nanoseconds, is an error naming rel:line. Records without
// request_start_ns (AIPerf before 0.3 wrote timestamp_ns only) count for
// nothing. A line is skimmed (skim.go); one the skim does not vouch for,
// or whose record is refused, is parsed whole, and the refusal says what
// strictjson found.
func aiperfRecords(rel string, r io.Reader) (start, end time.Time, n int, err error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 4<<10), maxJSONLLine)
	line := 0
	var lo, hi int64
	var sk skimmer
	for sc.Scan() {
		line++
		b := sc.Bytes()
		if len(bytes.TrimSpace(b)) == 0 {
			continue
		}
		rf, ok := sk.line(b)
		var v *strictjson.Value
		if !ok {
			var perr error
			if v, perr = strictjson.ParseObject(b); perr != nil {
				msg := perr.Error()
				var se *strictjson.Error
				if errors.As(perr, &se) {
					msg = se.Msg
				}
				return start, end, 0, fmt.Errorf("%s:%d: %s; %s", rel, line, msg, hintRestore)
			}
			rf = fieldsOf(v)
		}
		counts, ns, bad := recordWindow(rf)
		if bad != "" && v == nil {
			// Refused from the skim: the whole parse names the value.
			v, _ = strictjson.ParseObject(b)
		}
		switch {
		case bad == "end":
			return start, end, 0, fmt.Errorf("%s:%d: metadata.request_end_ns %d is before request_start_ns %d; %s", rel, line, ns[1], ns[0], hintAIPerf)
		case bad != "":
			return start, end, 0, fmt.Errorf("%s:%d: metadata.%s: want %s, found %s; %s", rel, line, bad, epochWant("nanoseconds"), describe(at(v, "metadata."+bad)), hintAIPerf)
		case !counts:
			continue
		}
		if n == 0 || ns[0] < lo {
			lo = ns[0]
		}
		if n == 0 || ns[1] > hi {
			hi = ns[1]
		}
		n++
	}
	if err := sc.Err(); err != nil {
		return start, end, 0, fmt.Errorf("%s:%d: %v; %s", rel, line+1, unwrapPath(err), hintRestore)
	}
	return time.Unix(0, lo).UTC(), time.Unix(0, hi).UTC(), n, nil
}

// recordWindow is what one record of profile_export.jsonl gives the
// window: whether it counts (a profiling record, warmup dropped, with
// request times), and its request_start_ns and request_end_ns. bad names
// a time that is not epoch nanoseconds (request_start_ns,
// request_end_ns), or is "end" for an end before its start; "" when the
// record is sound.
func recordWindow(rf recordFields) (counts bool, ns [2]int64, bad string) {
	phase := rf.phase
	if phase.kind == 0 {
		phase = rf.credit
	}
	if phase.kind == 's' && string(phase.raw) != "profiling" {
		return false, ns, "" // warmup
	}
	if rf.start.kind == 0 && rf.end.kind == 0 {
		return false, ns, ""
	}
	for i, f := range [2]skimVal{rf.start, rf.end} {
		x, err := strconv.ParseInt(string(f.raw), 10, 64)
		if f.kind != 'n' || err != nil || !inEpoch(time.Unix(0, x).UTC()) {
			return false, ns, [2]string{"request_start_ns", "request_end_ns"}[i]
		}
		ns[i] = x
	}
	if ns[1] < ns[0] {
		return false, ns, "end"
	}
	return true, ns, ""
}
