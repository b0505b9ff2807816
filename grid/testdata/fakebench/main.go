// Command fakebench stands in for vllm bench serve in the grid's tests. It
// checks that the server answers GET URL/health with 200, runs for
// -duration, and writes to -out a result with the key set of a real vLLM
// 0.25 result (testdata/bench-real/vllm-0.25/bench_serve_v0.25.1.json),
// its numbers derived from -concurrency alone, so that two engines that
// are one fake give identical results.
//
// -fail-file: when that file exists, exit 4 without a result.
// -wrong-concurrency: write the result of another concurrency.
// -garbage: write a result that is not JSON.
// -aiperf: write as aiperf profile --artifact-dir does instead: -out is
// the point's artifact directory, holding profile_export_aiperf.json
// (metric tags at the top level) and profile_export.jsonl (one profiling
// record per request, epoch-ns request_start_ns and request_end_ns).
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"net/http"
	"os"
	"time"
)

func main() {
	url := flag.String("url", "", "base URL")
	conc := flag.Int("concurrency", 1, "max concurrency")
	rate := flag.String("rate", "inf", "request rate")
	out := flag.String("out", "", "result file")
	dur := flag.Duration("duration", time.Second, "how long to run")
	failFile := flag.String("fail-file", "", "exit 4 when this file exists")
	wrong := flag.Bool("wrong-concurrency", false, "write another concurrency's result")
	garbage := flag.Bool("garbage", false, "write a result that is not JSON")
	aiperf := flag.Bool("aiperf", false, "write an AIPerf artifact directory at -out")
	flag.Parse()

	if *failFile != "" {
		if _, err := os.Stat(*failFile); err == nil {
			fmt.Fprintln(os.Stderr, "fakebench: failing as asked")
			os.Exit(4)
		}
	}
	resp, err := http.Get(*url + "/health")
	if err != nil || resp.StatusCode != http.StatusOK {
		fmt.Fprintf(os.Stderr, "fakebench: server not ready: %v %v\n", err, resp)
		os.Exit(5)
	}
	resp.Body.Close()
	start := time.Now()
	time.Sleep(*dur)
	elapsed := time.Since(start).Seconds()
	c := *conc
	if *wrong {
		c++
	}
	n := 8 * c
	outTok := 16 * n
	res := map[string]any{
		"backend": "vllm", "burstiness": 1.0, "completed": n,
		"date":     time.Now().Format("20060102-150405"),
		"duration": elapsed, "endpoint_type": "vllm", "failed": 0, "label": nil,
		"max_concurrency": c, "max_concurrent_requests": c, "max_output_tokens_per_s": 85.0,
		"mean_itl_ms": 11.25, "mean_tpot_ms": 11.25, "mean_ttft_ms": 215.5,
		"median_itl_ms": 10.5, "median_tpot_ms": 11.2, "median_ttft_ms": 55.7,
		"model_id": "facebook/opt-125m", "num_prompts": n,
		"output_throughput": float64(outTok) / 2.0,
		"p99_itl_ms":        29.8, "p99_tpot_ms": 12.0, "p99_ttft_ms": 734.4,
		"request_goodput": nil, "request_rate": *rate,
		"request_throughput": float64(n) / 2.0, "rtfx": 0.0,
		"std_itl_ms": 3.5, "std_tpot_ms": 0.6, "std_ttft_ms": 292.1,
		"tokenizer_id": "facebook/opt-125m", "total_input_tokens": 32 * n,
		"total_output_tokens": outTok, "total_token_throughput": float64(48*n) / 2.0,
	}
	if *aiperf {
		writeAIPerf(*out, c, n, outTok, start, time.Now())
		fmt.Printf("fakebench: %d/%s done in %.2fs (aiperf)\n", c, *rate, elapsed)
		return
	}
	data, _ := json.Marshal(res)
	if *garbage {
		data = []byte("{\"completed\": 8, oops\n")
	}
	if err := os.WriteFile(*out, data, 0o644); err != nil {
		fmt.Fprintln(os.Stderr, "fakebench:", err)
		os.Exit(6)
	}
	fmt.Printf("fakebench: %d/%s done in %.2fs\n", c, *rate, elapsed)
}

// writeAIPerf writes the point's artifact directory dir as AIPerf does:
// n requests of c at a time between start and end, outTok output tokens.
func writeAIPerf(dir string, c, n, outTok int, start, end time.Time) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		fmt.Fprintln(os.Stderr, "fakebench:", err)
		os.Exit(6)
	}
	dur := end.Sub(start).Seconds()
	tag := func(unit string, v float64) map[string]any { return map[string]any{"unit": unit, "avg": v} }
	res := map[string]any{
		"request_count":           tag("requests", float64(n)),
		"error_request_count":     nil,
		"output_token_throughput": tag("tokens/sec", float64(outTok)/dur),
		"benchmark_duration":      tag("sec", dur),
		"total_isl":               tag("tokens", float64(32*n)),
		"total_osl":               tag("tokens", float64(outTok)),
		"min_request_timestamp":   tag("ns", float64(start.UnixNano())),
		"max_response_timestamp":  tag("ns", float64(end.UnixNano())),
		"input_config": map[string]any{
			"endpoint": map[string]any{"model_names": []string{"facebook/opt-125m"}, "type": "chat"},
			"loadgen":  map[string]any{"concurrency": c, "request_count": n},
		},
		"start_time": start.Format("2006-01-02T15:04:05.000000"),
		"end_time":   end.Format("2006-01-02T15:04:05.000000"),
	}
	data, _ := json.MarshalIndent(res, "", "  ")
	var recs []byte
	step := end.Sub(start) / time.Duration((n+c-1)/c)
	for r := 0; r < n; r++ {
		s := start.Add(time.Duration(r/c) * step)
		rec, _ := json.Marshal(map[string]any{"metadata": map[string]any{
			"request_start_ns": s.UnixNano(), "request_end_ns": s.Add(step).UnixNano(), "benchmark_phase": "profiling"}})
		recs = append(append(recs, rec...), '\n')
	}
	for name, b := range map[string][]byte{"profile_export_aiperf.json": data, "profile_export.jsonl": recs} {
		if err := os.WriteFile(dir+"/"+name, b, 0o644); err != nil {
			fmt.Fprintln(os.Stderr, "fakebench:", err)
			os.Exit(6)
		}
	}
}
