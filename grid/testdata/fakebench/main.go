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
