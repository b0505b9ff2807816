package benchfmt

import (
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/clockgate/clockgate/strictjson"
)

// hintGuideLLM ends a GuideLLM report's value defects.
const hintGuideLLM = "rerun the benchmark with guidellm benchmark --output-path <dir>/benchmarks.json, or restore the report from where GuideLLM wrote it"

// The GuideLLM strategies, as benchmarks[].config.strategy.type_ (report
// v1, v2) or benchmarks[].args.strategy.type_ (before 0.4) name them.
const (
	strategySynchronous = "synchronous"
	strategyConcurrent  = "concurrent"
	strategyThroughput  = "throughput"
	strategyConstant    = "constant"
	strategyPoisson     = "poisson"
)

// ReadGuideLLM reads a GuideLLM report (named rel) whose bytes are data:
// report v1 (metadata.version 1, args), v2 (config) and before 0.4
// (run_stats); each element of benchmarks[] is one point (SPEC §12.5).
func ReadGuideLLM(rel string, data []byte) File {
	var out File
	v, err := parseStrict(rel, data)
	if err != nil {
		out.Invalid = append(out.Invalid, err.Error())
		return out
	}
	bs := v.Fields["benchmarks"]
	if bs == nil || bs.Kind != strictjson.Array || len(bs.Elems) == 0 {
		out.Invalid = append(out.Invalid, fmt.Sprintf("%s: benchmarks: want GuideLLM's array of benchmarks, one per point, found %s; %s", rel, describe(bs), hintGuideLLM))
		return out
	}
	version := ""
	if f := at(v, "metadata.guidellm_version"); f != nil && f.Kind == strictjson.String {
		version = f.Str
	}
	model := ""
	for _, k := range []string{"args.model", "config.model"} {
		if f := at(v, k); f != nil && f.Kind == strictjson.String {
			model = f.Str
			break
		}
	}
	out.Formats = []string{FormatGuideLLM}
	for i, b := range bs.Elems {
		where := fmt.Sprintf("%s: benchmarks[%d]", rel, i)
		p, bad, failed := guidellmPoint(b)
		if failed != "" {
			out.Failed = append(out.Failed, where+": "+failed)
		}
		if len(bad) > 0 {
			out.Invalid = append(out.Invalid, fmt.Sprintf("%s: %s; %s", where, strings.Join(bad, "; "), hintGuideLLM))
			continue
		}
		p.Where = fmt.Sprintf("%s (benchmarks[%d])", rel, i)
		p.ModelID, p.ClientVersion = model, version
		// Before 0.4 a report names its model per benchmark, as the
		// worker's backend_model.
		if f := at(b, "worker.backend_model"); model == "" && f != nil && f.Kind == strictjson.String {
			p.ModelID = f.Str
		}
		out.Points = append(out.Points, p)
	}
	return out
}

// guidellmPoint reads one element of benchmarks[].
func guidellmPoint(b *strictjson.Value) (Point, []string, string) {
	p := Point{Format: FormatGuideLLM}
	var c checker
	if b == nil || b.Kind != strictjson.Object {
		c.addf("want a benchmark object, found %s", describe(b))
		return p, c.bad, ""
	}
	strat, from := at(b, "config.strategy"), "config.strategy"
	if strat == nil {
		strat, from = at(b, "args.strategy"), "args.strategy"
	}
	typ := at(strat, "type_")
	switch {
	case typ == nil || typ.Kind != strictjson.String:
		c.addf("%s.type_: want GuideLLM's strategy (synchronous, concurrent, throughput, constant, poisson), found %s", from, describe(typ))
	case typ.Str == strategySynchronous:
		p.ID.MaxConcurrency = 1
	case typ.Str == strategyConcurrent:
		if n, ok := c.count(from+".streams", at(strat, "streams"), 1); ok {
			p.ID.MaxConcurrency = n
		}
	case typ.Str == strategyThroughput:
		// none/inf: every request at once, max_concurrency only caps workers.
	case typ.Str == strategyConstant, typ.Str == strategyPoisson:
		r := at(strat, "rate")
		if r == nil || r.Kind != strictjson.Number || !(r.Num > 0) {
			c.addf("%s.rate: want a number > 0, found %s", from, describe(r))
		} else {
			p.ID.RequestRate, p.ID.Strategy = r.Num, typ.Str
		}
	default:
		c.addf("%s.type_: want one of synchronous, concurrent, throughput, constant, poisson, found %s", from, typ.Describe())
	}

	// Requests: metrics.request_totals (0.4 on), the benchmark's own
	// request_totals (before). Never run_stats.requests_made: it counts
	// the whole run, warm-up and cool-down included, while the tokens and
	// the window are the measured part's.
	totals, tfrom := at(b, "metrics.request_totals"), "metrics.request_totals"
	if totals == nil {
		totals, tfrom = b.Fields["request_totals"], "request_totals"
	}
	ok1, ok2, ok3 := false, false, false
	var succ, errored, incomplete int
	succ, ok1 = c.count(tfrom+".successful", at(totals, "successful"), 0)
	errored, ok2 = c.count(tfrom+".errored", at(totals, "errored"), 0)
	incomplete, ok3 = c.count(tfrom+".incomplete", at(totals, "incomplete"), 0)
	p.Completed, p.NumPrompts = succ, succ+errored+incomplete
	if t := at(totals, "total"); t != nil && ok1 && ok2 && ok3 {
		if n, ok := c.count(tfrom+".total", t, 0); ok && n != p.NumPrompts {
			c.addf("%s.total: want successful + errored + incomplete (%d), found %d", tfrom, p.NumPrompts, n)
		}
	}
	p.TotalInputTokens, _ = c.count("metrics.prompt_token_count.successful.total_sum", at(b, "metrics.prompt_token_count.successful.total_sum"), 0)
	osl, okO := c.count("metrics.output_token_count.successful.total_sum", at(b, "metrics.output_token_count.successful.total_sum"), 0)
	p.TotalOutputTokens = osl

	// The window and its duration.
	var t [2]time.Time
	okW := true
	for i, k := range []string{"start_time", "end_time"} {
		f := b.Fields[k]
		if f == nil || f.Kind != strictjson.Number || math.IsInf(f.Num, 0) || !inEpoch(secTime(f.Num)) {
			c.addf("%s: want %s, found %s", k, epochWant("seconds"), describe(f))
			okW = false
			continue
		}
		t[i] = secTime(f.Num)
	}
	if okW && t[1].Before(t[0]) {
		c.addf("end_time: want at or after start_time, found %s before %s", t[1].Format(time.RFC3339Nano), t[0].Format(time.RFC3339Nano))
		okW = false
	}
	dur, okD := 0.0, false
	if f := b.Fields["duration"]; f != nil {
		dur, okD = c.num("duration", f)
	} else if okW {
		dur, okD = t[1].Sub(t[0]).Seconds(), true
	}
	if okD && dur == 0 && osl > 0 {
		c.addf("duration: want > 0 s for %d output tokens, found 0", osl)
		okD = false
	}
	if okO && okD && dur > 0 {
		p.OutputThroughput = float64(osl) / dur
		p.DurationS, p.HasDuration = dur, true
	}
	if okW {
		p.Start, p.End, p.WindowFrom = t[0], t[1], "start_time, end_time"
	}
	var why string
	if ok1 && ok2 && ok3 && errored+incomplete > 0 {
		why = fmt.Sprintf("%s: want every request successful, found successful %d of %d, errored %d, incomplete %d; %s",
			p.ID, succ, p.NumPrompts, errored, incomplete, hintFailed)
	}
	if len(c.bad) > 0 {
		return p, c.bad, why
	}
	var k keptObj
	k.str("strategy", typ.Str)
	for _, m := range []struct {
		key string
		v   float64
	}{{"successful", float64(succ)}, {"errored", float64(errored)}, {"incomplete", float64(incomplete)},
		{"output_tokens_total", float64(osl)}, {"prompt_tokens_total", float64(p.TotalInputTokens)}, {"duration", dur},
		{"start_time", b.Fields["start_time"].Num}, {"end_time", b.Fields["end_time"].Num}} {
		k.num(m.key, m.v)
	}
	if f := at(b, "metrics.output_tokens_per_second.successful.mean"); f != nil && f.Kind == strictjson.Number {
		k.num("output_tokens_per_second_mean", f.Num)
	}
	p.Raw = k.bytes()
	return p, nil, why
}

// secTime is epoch seconds s as a time, to the microsecond: Python's
// time.time() as a float64 holds no more near the present epoch.
func secTime(s float64) time.Time {
	if !(s > 0) || s > 1e11 {
		return time.Time{}
	}
	sec, frac := math.Modf(s)
	return time.Unix(int64(sec), int64(math.Round(frac*1e6))*1e3).UTC()
}

// IsGuideLLMYAML reports whether name is GuideLLM's YAML report
// (benchmarks.yaml, or a name ending so).
func IsGuideLLMYAML(name string) bool {
	return strings.HasSuffix(name, "benchmarks.yaml") || strings.HasSuffix(name, "benchmarks.yml")
}

// GuideLLMYAMLRefusal is the bench.invalid message of a GuideLLM YAML
// report at rel: it is not read, and why.
func GuideLLMYAMLRefusal(rel string) string {
	return fmt.Sprintf("%s: GuideLLM's YAML report is not read: reading it would need a YAML module clockgate does not depend on, and the JSON report holds the same; rerun with guidellm benchmark --output-path <dir>/benchmarks.json, or keep the benchmarks.json GuideLLM wrote beside it", rel)
}
