package treegen

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"time"
)

// The bench writers of the newer scenarios, each as the real tool writes
// its result: key order, separators, literals. testdata/bench-real holds a
// real file of each.
const (
	// styleVLLM is vllm bench serve --save-result (vLLM 0.25:
	// vllm/benchmarks/serve.py): json.dump, one line, max_concurrency null
	// without --max-concurrency, request_rate "inf" or a number.
	styleVLLM = "vllm"
	// styleVLLMPretty is the same object with indent=4, as vllm bench
	// sweep writes its run=N.json.
	styleVLLMPretty = "vllm-pretty"
	// styleVLLM06 is benchmarks/benchmark_serving.py of vLLM 0.6: no
	// failed key, and the per-request arrays in every file.
	styleVLLM06 = "vllm-0.6"
	// styleSGLang is python -m sglang.bench_serving --output-file: one
	// json.dumps line per point appended to one file, request_rate
	// Infinity, no model_id, num_prompts or failed.
	styleSGLang = "sglang"
)

// kv is one member of an object: a key and its value as written.
type kv struct{ k, v string }

// compact writes members as Python's json.dump does by default.
func compact(kvs []kv) []byte {
	var b strings.Builder
	b.WriteByte('{')
	for i, e := range kvs {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(strconv.Quote(e.k))
		b.WriteString(": ")
		b.WriteString(e.v)
	}
	b.WriteByte('}')
	return []byte(b.String())
}

// pretty writes members as json.dump(…, indent=4) does, at depth levels of
// indentation; values are scalars.
func pretty(kvs []kv, depth int) string {
	pad := strings.Repeat("    ", depth)
	var b strings.Builder
	b.WriteString("{\n")
	for i, e := range kvs {
		b.WriteString(pad + "    " + strconv.Quote(e.k) + ": " + e.v)
		if i < len(kvs)-1 {
			b.WriteByte(',')
		}
		b.WriteByte('\n')
	}
	b.WriteString(pad + "}")
	return b.String()
}

// rateText is point i's request_rate as the leg's writer puts it.
func (l *leg) rateText(i int) string {
	r := 0.0
	if l.rates != nil {
		r = l.rates[i]
	}
	switch {
	case r != 0:
		return pyFloat(r)
	case l.style == styleSGLang:
		return "Infinity" // json.dumps of float("inf")
	case l.rateLiteral != "":
		return l.rateLiteral
	}
	return `"inf"`
}

// pointName is the file point i is saved in.
func (l *leg) pointName(i int) string {
	if c := l.points[i].conc; c > 0 {
		return fmt.Sprintf("c%d", c)
	}
	if l.rates[i] == 0 {
		return "qps-inf"
	}
	return "qps-" + strconv.FormatFloat(l.rates[i], 'f', -1, 64)
}

// result is point i of the leg in its style's keys.
func (l *leg) result(rng *rand.Rand, i int, dur float64, span [2]time.Time) []byte {
	return l.format(l.members(rng, i, dur, span))
}

func (l *leg) format(kvs []kv) []byte {
	if l.style == styleVLLMPretty {
		return []byte(pretty(kvs, 0))
	}
	return compact(kvs)
}

func (l *leg) members(rng *rand.Rand, i int, dur float64, span [2]time.Time) []kv {
	p := l.points[i]
	c := l.conc(i)
	completed, failed := p.prompts, 0
	if l.allFailed[i] {
		completed, failed = 0, p.prompts
	}
	in, out := completed*l.model.inputLen, completed*l.model.outputLen
	if o, ok := l.outTokens[i]; ok {
		out = o
	}
	step := dur * 1000 / (float64(p.prompts) / float64(c) * float64(l.model.outputLen))
	ttft := 118.0*float64(c)*(0.8+0.1*rng.Float64()) + 41
	f := func(lo, span float64) float64 { return lo + span*rng.Float64() }
	stats := [][2]float64{{ttft, 0}, {ttft * f(0.97, 0.02), 0}, {ttft * 0.08 * rng.Float64(), 0}, {ttft * f(1.3, 0.2), 0},
		{step, 0}, {step * f(0.99, 0.01), 0}, {step * 0.02 * rng.Float64(), 0}, {step * f(1.05, 0.05), 0},
		{step * f(0.99, 0.01), 0}, {step * f(0.98, 0.01), 0}, {step * 0.05 * rng.Float64(), 0}, {step * f(1.2, 0.1), 0}}
	if l.allFailed[i] {
		// What vLLM writes when no request completed: 0.0 throughout, a
		// duration of a few milliseconds.
		dur = 0.005 + 0.001*rng.Float64()
		for j := range stats {
			stats[j][0] = 0
		}
	}
	tput := pyFloat(float64(out) / dur)
	if t, ok := l.tput[i]; ok {
		tput = t
	}
	mc := "null"
	if p.conc > 0 {
		mc = strconv.Itoa(p.conc)
	}
	stat := func(j int) string { return pyFloat(stats[j][0]) }
	names := []string{"mean_ttft_ms", "median_ttft_ms", "std_ttft_ms", "p99_ttft_ms", "mean_tpot_ms", "median_tpot_ms",
		"std_tpot_ms", "p99_tpot_ms", "mean_itl_ms", "median_itl_ms", "std_itl_ms", "p99_itl_ms"}
	metrics := make([]kv, len(names))
	for j, n := range names {
		metrics[j] = kv{n, stat(j)}
	}
	date := strconv.Quote(span[0].Format("20060102-150405"))
	id := strconv.Quote(l.model.id)
	burst := "1.0"
	if l.burstiness != "" {
		burst = l.burstiness
	}
	var kvs []kv
	switch l.style {
	case styleVLLM, styleVLLMPretty:
		kvs = []kv{{"date", date}, {"endpoint_type", `"vllm"`}, {"backend", `"vllm"`}, {"label", "null"},
			{"model_id", id}, {"tokenizer_id", id}, {"num_prompts", strconv.Itoa(p.prompts)},
			{"request_rate", l.rateText(i)}, {"burstiness", burst}, {"max_concurrency", mc},
			{"duration", pyFloat(dur)}, {"completed", strconv.Itoa(completed)}, {"failed", strconv.Itoa(failed)},
			{"total_input_tokens", strconv.Itoa(in)}, {"total_output_tokens", strconv.Itoa(out)},
			{"request_throughput", pyFloat(float64(completed) / dur)}, {"request_goodput", "null"},
			{"output_throughput", tput}, {"total_token_throughput", pyFloat(float64(in+out) / dur)},
			{"max_output_tokens_per_s", pyFloat(float64(min(c, max(completed, 1))) * 1000 / max(step, 1))},
			{"max_concurrent_requests", strconv.Itoa(min(c, completed))}, {"rtfx", "0.0"}}
		kvs = append(kvs, metrics...)
	case styleVLLM06:
		kvs = []kv{{"date", date}, {"backend", `"vllm"`}, {"model_id", id}, {"tokenizer_id", id},
			{"best_of", "1"}, {"use_beam_search", "false"}, {"num_prompts", strconv.Itoa(p.prompts)},
			{"request_rate", l.rateText(i)}, {"max_concurrency", mc},
			{"duration", pyFloat(dur)}, {"completed", strconv.Itoa(completed)},
			{"total_input_tokens", strconv.Itoa(in)}, {"total_output_tokens", strconv.Itoa(out)},
			{"request_throughput", pyFloat(float64(completed) / dur)},
			{"output_throughput", tput}, {"total_token_throughput", pyFloat(float64(in+out) / dur)}}
		kvs = append(kvs, l.arrays(rng, p.prompts, ttft, step)...)
		kvs = append(kvs, metrics...)
	case styleSGLang:
		e2e := ttft + step*float64(l.model.outputLen-1)
		kvs = []kv{{"backend", `"sglang"`}, {"dataset_name", `"sharegpt"`}, {"request_rate", l.rateText(i)},
			{"max_concurrency", mc}, {"sharegpt_output_len", "null"}, {"random_input_len", "1024"},
			{"random_output_len", "1024"}, {"random_range_ratio", "0.0"},
			{"duration", pyFloat(dur)}, {"completed", strconv.Itoa(completed)},
			{"total_input_tokens", strconv.Itoa(in)}, {"total_output_tokens", strconv.Itoa(out)},
			{"total_output_tokens_retokenized", strconv.Itoa(out - out/400)},
			{"request_throughput", pyFloat(float64(completed) / dur)}, {"input_throughput", pyFloat(float64(in) / dur)},
			{"output_throughput", tput},
			{"mean_e2e_latency_ms", pyFloat(e2e)}, {"median_e2e_latency_ms", pyFloat(e2e * f(0.98, 0.02))},
			{"std_e2e_latency_ms", pyFloat(e2e * 0.05 * rng.Float64())}, {"p99_e2e_latency_ms", pyFloat(e2e * f(1.1, 0.1))}}
		kvs = append(kvs, metrics[:10]...)
		kvs = append(kvs, kv{"p95_itl_ms", pyFloat(step * f(1.1, 0.05))}, metrics[11],
			kv{"concurrency", pyFloat(float64(c) * f(0.9, 0.09))}, kv{"accept_length", "null"})
	}
	if l.extra != "" {
		for _, m := range strings.Split(l.extra, "; ") {
			k, v, _ := strings.Cut(m, "=")
			kvs = append(kvs, kv{k, v})
		}
	}
	return kvs
}

// arrays are the per-request arrays vLLM before 0.8 wrote into every
// result: one entry per request.
func (l *leg) arrays(rng *rand.Rand, n int, ttft, step float64) []kv {
	ins, outs, ttfts, itls, texts, errs := make([]string, n), make([]string, n), make([]string, n), make([]string, n), make([]string, n), make([]string, n)
	words := []string{"The", "clock", "sets", "the", "pace", "of", "every", "token", "served."}
	for r := 0; r < n; r++ {
		ins[r] = strconv.Itoa(l.model.inputLen)
		outs[r] = strconv.Itoa(l.model.outputLen)
		ttfts[r] = pyFloat(ttft / 1000 * (0.9 + 0.2*rng.Float64()))
		gaps := make([]string, l.model.outputLen-1)
		for g := range gaps {
			gaps[g] = pyFloat(step / 1000 * (0.95 + 0.1*rng.Float64()))
		}
		itls[r] = "[" + strings.Join(gaps, ", ") + "]"
		texts[r] = strconv.Quote(strings.Join(words[:1+rng.IntN(len(words))], " "))
		errs[r] = `""`
	}
	list := func(xs []string) string { return "[" + strings.Join(xs, ", ") + "]" }
	return []kv{{"input_lens", list(ins)}, {"output_lens", list(outs)}, {"ttfts", list(ttfts)}, {"itls", list(itls)},
		{"generated_texts", list(texts)}, {"errors", list(errs)}}
}

// writeResults puts the leg's result objects where its writer does, and
// the files a benchmark writes beside them.
func (l *leg) writeResults(out map[string][]byte, base string, objs [][]byte) {
	dir := "bench/" + base + "/"
	if l.style == styleSGLang {
		var b []byte
		for _, o := range objs {
			b = append(append(b, o...), '\n')
		}
		out[dir+"results.jsonl"] = b
	} else {
		for i, o := range objs {
			out[dir+l.pointName(i)+".json"] = o
		}
	}
	if !l.sidecars {
		return
	}
	last := len(objs) - 1
	if l.engine.name == "vllm" {
		// SAVE_TO_PYTORCH_BENCHMARK_FORMAT=1: a list of one record per
		// latency metric, beside the result.
		out[dir+l.pointName(last)+".pytorch.json"] = l.pytorchRecords(objs[last], last)
		if l.run == 1 {
			// vllm bench sweep's summary of the runs: a list of results.
			var b strings.Builder
			b.WriteString("[\n")
			for i, o := range objs {
				b.WriteString("    " + strings.ReplaceAll(string(o), "\n", "\n    "))
				if i < last {
					b.WriteByte(',')
				}
				b.WriteByte('\n')
			}
			b.WriteString("]")
			out[dir+"summary.json"] = []byte(b.String())
		}
		return
	}
	out[dir+"meta.json"] = []byte(fmt.Sprintf(`{"engine": %q, "model": %q, "server_args": {"tensor_parallel_size": 1, "gpu_memory_utilization": 0.9}, "points": %d}`,
		l.engine.name, l.model.id, len(objs)))
}

// pytorchRecords is vLLM's save_to_pytorch_benchmark_format for one
// result: the PyTorch OSS benchmark database's records, "inf" for infinity.
func (l *leg) pytorchRecords(obj []byte, i int) []byte {
	metrics := []string{"median_ttft_ms", "mean_ttft_ms", "std_ttft_ms", "p99_ttft_ms", "mean_tpot_ms", "median_tpot_ms",
		"std_tpot_ms", "p99_tpot_ms", "median_itl_ms", "mean_itl_ms", "std_itl_ms", "p99_itl_ms"}
	// The result's members, in order, values as written.
	members := map[string]string{}
	var order []string
	dec := json.NewDecoder(bytes.NewReader(obj))
	if _, err := dec.Token(); err != nil {
		panic(err)
	}
	for dec.More() {
		k, err := dec.Token()
		if err != nil {
			panic(err)
		}
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			panic(err)
		}
		members[k.(string)] = string(v)
		order = append(order, k.(string))
	}
	var extra []string
	for _, k := range order {
		if !contains(metrics, k) {
			extra = append(extra, strconv.Quote(k)+": "+members[k])
		}
	}
	args := fmt.Sprintf(`{"model": %q, "backend": "vllm", "max_concurrency": %d, "num_prompts": %d, "request_rate": "inf", "save_result": true, "seed": 0}`,
		l.model.id, l.points[i].conc, l.points[i].prompts)
	var recs []string
	for _, m := range metrics {
		recs = append(recs, fmt.Sprintf(`{"benchmark": {"name": "vLLM benchmark", "extra_info": {"args": %s}}, "model": {"name": %q}, "metric": {"name": %q, "benchmark_values": [%s], "extra_info": {%s}}}`,
			args, l.model.id, m, members[m], strings.Join(extra, ", ")))
	}
	return []byte("[" + strings.Join(recs, ", ") + "]")
}

func contains(xs []string, s string) bool {
	for _, x := range xs {
		if x == s {
			return true
		}
	}
	return false
}
