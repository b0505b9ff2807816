package summarize_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/clockgate/clockgate/clocks"
	"github.com/clockgate/clockgate/summarize"
	"github.com/clockgate/clockgate/summarize/internal/treegen"
)

const llama = "llama-3.1-8b-instruct"

// wantRatio is what one comparison must say. codes are the ratio's reason
// codes in order, the same for both families.
type wantRatio struct {
	model, ours        string
	throughput, memory bool
	codes              []string
	// memCodes are MEMORY's codes where they differ from THROUGHPUT's.
	memCodes               []string
	caveats                []string
	nullThroughput, nullMe bool
}

// wantScenario pins one scenario's verdicts independently of its golden
// files, so that a golden file regenerated wrongly is still caught.
type wantScenario struct {
	// legs maps "model/engine/rN" to the leg's distinct reason codes;
	// every leg not named carries none.
	legs        map[string][]string
	comparisons []wantRatio
	gatePass    bool
	// fragments must each appear in some leg or ratio reason message.
	fragments []string
	// warnings must each appear in some warning; no other warning stands.
	warnings []string
	// baseline is the baseline engine; "" is vllm.
	baseline string
	// extra, when set, checks what codes and messages do not say.
	extra func(t *testing.T, s *summarize.Summary)
}

func repeat(code string, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = code
	}
	return out
}

// importedLegs are the imported trees' legs, each with the reasons of an
// nvidia-smi log that records neither the reason bitmask, the enforced
// limit, persistence mode nor the applications clock.
func importedLegs() map[string][]string {
	out := map[string][]string{}
	for _, e := range []string{"fastengine", "vllm"} {
		for _, r := range []string{"r1", "r2"} {
			out[llama+"/"+e+"/"+r] = []string{clocks.CodeUnprovenPersistence, clocks.CodeUnprovenPowerLimit,
				clocks.CodeUnprovenStatic, clocks.CodeUnprovenThrottle}
		}
	}
	return out
}

var scenarioWants = map[string]wantScenario{
	"imported-two-arm": {
		legs:        importedLegs(),
		comparisons: []wantRatio{{model: llama, ours: "fastengine", codes: repeat(clocks.CodeLegIneligible, 4)}},
		fragments: []string{
			"imported from nvidia-smi-csv: no throttle bitmask column (per-reason columns and event counters cover 0x00000000000000f4); bits not covered: 0x0000000000000008 HwSlowdown, 0x0000000000000200 BoardLimit, 0x0000000000000400 Reliability",
			"imported from nvidia-smi-csv: no applications clock: clocks_applications_graphics_mhz is unproven",
		},
	},
	"imported-unproven-boot": {
		legs:        importedLegs(),
		comparisons: []wantRatio{{model: llama, ours: "fastengine", codes: append([]string{clocks.CodeUnprovenBoot}, repeat(clocks.CodeLegIneligible, 4)...)}},
		fragments: []string{
			"no boot id in imported legs fastengine r1, fastengine r2, vllm r1, vllm r2; counter continuity does not prove one boot: GPU uuid GPU-8e1b4c7d-2a9f-4e63-b5d8-71c0f3a2e916, fastengine r1 then fastengine r2: hw_power_brake_slowdown_us, hw_thermal_slowdown_us, sw_power_cap_us, sw_thermal_slowdown_us, sync_boost_us: 1200000 not above the 211294000 µs (gap 211.294 s) a reset could have gathered",
		},
	},
	"imported-unproven-boot/with-override": {
		legs: importedLegs(),
		comparisons: []wantRatio{{model: llama, ours: "fastengine", codes: repeat(clocks.CodeLegIneligible, 4),
			caveats: []string{clocks.CodeUnprovenBoot}}},
	},
	"clean-grid": {
		comparisons: []wantRatio{
			{model: llama, ours: "fastengine", throughput: true, memory: true},
			{model: "qwen2.5-7b-instruct", ours: "fastengine", throughput: true, memory: true},
		},
		gatePass: true,
	},
	"cross-boot": {
		comparisons: []wantRatio{{model: llama, ours: "fastengine", codes: []string{clocks.CodeCrossBoot, clocks.CodeOffset}}},
		fragments: []string{
			"arms on 2 boots: fastengine [f6bbbfc6-2d4a-4c3e-9b1f-7a5e8d2c4b19], vllm [2fca2b02-8e3d-4f1a-b6c7-1d9e5a3f8c20]",
			"median offset 12.79% > 1.0%: fastengine 2470 MHz, vllm 2190 MHz (estimated effect 9.65% at transfer 0.7548)",
		},
	},
	"cross-boot/with-override": {
		comparisons: []wantRatio{{model: llama, ours: "fastengine", codes: []string{clocks.CodeOffset},
			caveats: []string{clocks.CodeCrossBoot}}},
		fragments: []string{"median offset 12.79% > 1.0%"},
	},
	"staircase": {
		comparisons: []wantRatio{{model: llama, ours: "fastengine", codes: []string{clocks.CodeStaircase}}},
		fragments:   []string{"arm fastengine merged spread 12.17% > 5.0%: min 2190, median 2300, max 2470 MHz over 3 legs"},
	},
	"one-busy-sample": {
		legs: map[string][]string{
			llama + "/fastengine/r1": {clocks.CodeBusyFraction, clocks.CodeBusySamples},
			llama + "/fastengine/r2": {clocks.CodeBusyFraction, clocks.CodeBusySamples},
			llama + "/fastengine/r3": {clocks.CodeBusyFraction, clocks.CodeBusySamples},
			llama + "/vllm/r1":       {clocks.CodeBusyFraction, clocks.CodeBusySamples},
			llama + "/vllm/r2":       {clocks.CodeBusyFraction, clocks.CodeBusySamples},
			llama + "/vllm/r3":       {clocks.CodeBusyFraction, clocks.CodeBusySamples},
		},
		comparisons: []wantRatio{{model: llama, ours: "fastengine", codes: repeat(clocks.CodeLegIneligible, 6)}},
		fragments: []string{
			"busy samples 1 < 30: 300 idle samples excluded of 301",
			"leg vllm r3 is not binding-eligible: clock.busy_fraction, clock.busy_samples",
		},
	},
	"diluted-window": {
		legs:        map[string][]string{llama + "/fastengine/r2": {clocks.CodeBusyFraction}},
		comparisons: []wantRatio{{model: llama, ours: "fastengine", codes: []string{clocks.CodeLegIneligible}}},
		fragments:   []string{"busy fraction 166/388 = 42.78% < 50%: 222 idle samples excluded"},
	},
	"gb10-vs-h100": {
		comparisons: []wantRatio{{model: llama, ours: "fastengine",
			codes: []string{clocks.CodeCrossBoot, clocks.CodeHardwareMismatch, clocks.CodeOffset}}},
		fragments: []string{`gpu_name: fastengine "NVIDIA GB10", vllm "NVIDIA H100 80GB HBM3"`,
			"clocks_applications_graphics_mhz: fastengine 2418, vllm null"},
	},
	"gb10-vs-h100/with-override": {
		comparisons: []wantRatio{{model: llama, ours: "fastengine",
			codes: []string{clocks.CodeHardwareMismatch, clocks.CodeOffset}, caveats: []string{clocks.CodeCrossBoot}}},
		fragments: []string{`driver_version: fastengine "580.159.03", vllm "590.44.01"`, "clocks_max_sm_mhz: fastengine 3003, vllm 1980"},
	},
	"no-clocks": {
		legs: map[string][]string{
			llama + "/fastengine/r1": {clocks.CodeMissing}, llama + "/fastengine/r2": {clocks.CodeMissing},
			llama + "/vllm/r1": {clocks.CodeMissing}, llama + "/vllm/r2": {clocks.CodeMissing},
		},
		comparisons: []wantRatio{{model: llama, ours: "fastengine", codes: repeat(clocks.CodeLegIneligible, 4)}},
		fragments:   []string{"no clock record at clocks/" + llama + "/vllm/r2.summary.json"},
	},
	"throttled": {
		legs:        map[string][]string{llama + "/fastengine/r1": {clocks.CodeThrottle}},
		comparisons: []wantRatio{{model: llama, ours: "fastengine", codes: []string{clocks.CodeLegIneligible}}},
		fragments:   []string{"non-benign throttle bits in busy samples: 0x0000000000000004 SwPowerCap"},
	},
	"persistence-disabled": {
		legs:        map[string][]string{llama + "/vllm/r2": {clocks.CodePersistence}},
		comparisons: []wantRatio{{model: llama, ours: "fastengine", codes: []string{clocks.CodeLegIneligible}}},
		fragments:   []string{`persistence_mode "Disabled" in 191 of 191 samples`},
	},
	"record-edited": {
		legs:        map[string][]string{llama + "/vllm/r1": {clocks.CodeStreamMismatch}},
		comparisons: []wantRatio{{model: llama, ours: "fastengine", codes: []string{clocks.CodeLegIneligible}}},
		fragments:   []string{"throttle_reasons_active: record [0x0000000000000000], stream [0x0000000000000000 0x0000000000000004]"},
	},
	"torn-stream": {
		legs:        map[string][]string{llama + "/fastengine/r2": {clocks.CodeStreamInvalid}},
		comparisons: []wantRatio{{model: llama, ours: "fastengine", codes: []string{clocks.CodeLegIneligible}}},
		fragments:   []string{"clocks/" + llama + "/fastengine/r2.samples.jsonl", "178", "torn final line"},
	},
	"failed-requests": {
		legs: map[string][]string{
			llama + "/fastengine/r1": {summarize.CodeFailedRequests},
			llama + "/vllm/r2":       {summarize.CodeFailedRequests},
		},
		comparisons: []wantRatio{{model: llama, ours: "fastengine", codes: []string{clocks.CodeLegIneligible, clocks.CodeLegIneligible,
			"bench.workload_mismatch", "bench.workload_mismatch"}}},
		fragments: []string{
			"bench/" + llama + "/fastengine/r1/c4.json: max_concurrency 4, request_rate inf: want every request completed and failed 0, found completed 11 of num_prompts 12, failed 1",
			"bench/" + llama + "/vllm/r2/c8.json: max_concurrency 8, request_rate inf: want every request completed and failed 0, found completed 23 of num_prompts 24, no failed key (legacy file)",
			"max_concurrency 8, request_rate inf: want one num_prompts/total_input_tokens across fastengine and vllm, found 24/24576 in fastengine r1, fastengine r2, vllm r1; 24/23552 in vllm r2",
		},
	},
	"memory-missing": {
		legs:        map[string][]string{llama + "/fastengine/r2": {summarize.CodeMemoryMissing}},
		comparisons: []wantRatio{{model: llama, ours: "fastengine", codes: []string{clocks.CodeLegIneligible}}},
		fragments:   []string{"no memory record at memory/" + llama + "/fastengine/r2.summary.json"},
	},
	"point-mismatch": {
		comparisons: []wantRatio{{model: llama, ours: "fastengine", codes: []string{"bench.point_mismatch"}}},
		fragments:   []string{"{1/inf, 2/inf, 4/inf, 8/inf, 16/inf} in fastengine r1, fastengine r2; {1/inf, 2/inf, 4/inf, 8/inf} in vllm r1, vllm r2"},
	},
	"three-engines": {
		comparisons: []wantRatio{
			{model: llama, ours: "fastengine", throughput: true, memory: true},
			{model: llama, ours: "turboserve", throughput: true, memory: true},
		},
		gatePass: true,
	},
	"stray-files": {
		comparisons: []wantRatio{{model: llama, ours: "fastengine", throughput: true, memory: true}},
		gatePass:    true,
		warnings: []string{
			"NOTES.txt: not bench/, memory/ or clocks/; ignored",
			"bench/" + llama + "/fastengine/r1/server.log: not a bench result file",
			"bench/" + llama + "/vllm/r01: not a leg: want r<N>, N a decimal integer from 1 to 2^30 (1073741824) without leading zeros",
			"clocks/" + llama + "/vllm/.r2.summary.json.tmp-1375: not a leg's file",
			"model mistral-7b-instruct: no baseline arm vllm (found fastengine); not compared",
		},
	},
}

const (
	undefined  = "ratio.undefined"
	ineligible = clocks.CodeLegIneligible
	opt        = "opt-125m"
)

// newScenarioWants are the scenarios of bench evidence as users have it.
var newScenarioWants = map[string]wantScenario{
	"rate-sweep": {
		comparisons: []wantRatio{{model: llama, ours: "fastengine", throughput: true, memory: true}},
		gatePass:    true,
	},
	"sglang-vs-vllm": {
		comparisons: []wantRatio{{model: llama, ours: "sglang", throughput: true, memory: true}},
		gatePass:    true,
	},
	"mixed-vllm-releases": {
		comparisons: []wantRatio{{model: llama, ours: "fastengine", throughput: true, memory: true}},
		gatePass:    true,
	},
	"sidecars": {
		comparisons: []wantRatio{{model: llama, ours: "fastengine", throughput: true, memory: true}},
		gatePass:    true,
		warnings: []string{
			"bench/" + llama + "/fastengine/r1/meta.json: not a bench result (an object with none of output_throughput, completed, total_output_tokens",
			"bench/" + llama + "/vllm/r1/c8.pytorch.json: not a bench result (its top level is an array",
			"bench/" + llama + "/vllm/r1/summary.json: not a bench result (its top level is an array",
			"bench/" + llama + "/vllm/r2/c8.pytorch.json: not a bench result (its top level is an array",
		},
	},
	"all-failed-point": {
		legs: map[string][]string{
			llama + "/fastengine/r1": {summarize.CodeFailedRequests},
			llama + "/fastengine/r2": {summarize.CodeFailedRequests, summarize.CodeBenchInvalid},
		},
		comparisons: []wantRatio{{model: llama, ours: "fastengine", nullThroughput: true,
			codes:    []string{ineligible, ineligible, "bench.workload_mismatch", undefined, undefined},
			memCodes: []string{ineligible, ineligible, "bench.workload_mismatch"}}},
		fragments: []string{
			"bench/" + llama + "/fastengine/r2/c2.json: output_throughput: want a finite number ≥ 0, found NaN",
			"bench/" + llama + "/fastengine/r2/c8.json: max_concurrency 8, request_rate inf: want every request completed and failed 0, found completed 0 of num_prompts 24, failed 24",
			"max_concurrency 8, request_rate inf: no THROUGHPUT ratio: fastengine has no throughput there (output_throughput 0 in r1, r2: every request failed or none produced a token)",
		},
	},
	"extreme-numbers": {
		comparisons: []wantRatio{{model: llama, ours: "fastengine", nullThroughput: true, nullMe: true,
			codes: []string{undefined, undefined}, memCodes: []string{undefined}}},
		fragments: []string{
			"max_concurrency 2, request_rate inf: no THROUGHPUT ratio: fastengine / vllm = 5e-324 / ",
			"no MEMORY ratio: fastengine / vllm = 1.7976931348623157e+308 / 5e-324 MiB is +Inf, not a finite ratio > 0 at 4 decimals",
		},
	},
	"output-mismatch": {
		comparisons: []wantRatio{{model: llama, ours: "fastengine", memory: true,
			codes: []string{"bench.output_mismatch"}, memCodes: []string{}}},
		fragments: []string{"max_concurrency 8, request_rate inf: total_output_tokens differ by 8.01% > 5.0%: fastengine 2826, vllm 3072 (median over legs)"},
	},
	"real-vllm-0.25": {
		legs: map[string][]string{
			opt + "/vllm/r1":         {clocks.CodeMissing, summarize.CodeMemoryMissing},
			opt + "/vllm/r2":         {clocks.CodeMissing, summarize.CodeMemoryMissing},
			opt + "/vllm-seqs4/r1":   {clocks.CodeMissing, summarize.CodeMemoryMissing},
			opt + "/vllm-seqs4/r2":   {clocks.CodeMissing, summarize.CodeMemoryMissing},
			opt + "/vllm-native/r1":  {clocks.CodeMissing, summarize.CodeMemoryMissing},
			opt + "/vllm-crashed/r1": {summarize.CodeFailedRequests, clocks.CodeMissing, summarize.CodeMemoryMissing},
		},
		comparisons: []wantRatio{
			{model: opt, ours: "vllm-crashed", nullThroughput: true, nullMe: true,
				codes: []string{ineligible, ineligible, ineligible, "bench.point_mismatch", undefined}},
			{model: opt, ours: "vllm-native", nullMe: true,
				codes: repeat(ineligible, 3), memCodes: append(repeat(ineligible, 3), undefined)},
			{model: opt, ours: "vllm-seqs4", nullMe: true,
				codes: repeat(ineligible, 4), memCodes: append(repeat(ineligible, 4), undefined)},
		},
		fragments: []string{
			"vllm-crashed/r1/bench_serve_all_requests_failed_v0.25.1.json: max_concurrency none, request_rate inf: want every request completed and failed 0, found completed 0 of num_prompts 8, failed 8",
			"no clock record at clocks/" + opt + "/vllm/r1.summary.json",
		},
		warnings: []string{
			"bench/" + opt + "/vllm/r1/summary.json: not a bench result (its top level is an array",
			"bench/" + opt + "/vllm-seqs4/r1/summary.json: not a bench result (its top level is an array",
		},
	},
	"real-vllm-0.5": {
		legs: map[string][]string{
			"mistral-7b-instruct-v0.3/vllm/r1":     {clocks.CodeMissing, summarize.CodeMemoryMissing},
			"mistral-7b-instruct-v0.3/vllm-tp2/r1": {clocks.CodeMissing, summarize.CodeMemoryMissing},
			"llama-3-8b-instruct/vllm/r1":          {summarize.CodeBenchInvalid, clocks.CodeMissing, summarize.CodeMemoryMissing},
			"llama-3-8b-instruct/vllm/r2":          {summarize.CodeBenchInvalid, clocks.CodeMissing, summarize.CodeMemoryMissing},
		},
		comparisons: []wantRatio{{model: "mistral-7b-instruct-v0.3", ours: "vllm-tp2", nullMe: true,
			codes: repeat(ineligible, 2), memCodes: append(repeat(ineligible, 2), undefined)}},
		// The trimmed nightly files state a point's keys and no reader
		// accepts them (SPEC §12.5).
		fragments: []string{"bench/llama-3-8b-instruct/vllm/r1/serving_llama8B_tp1_1.json: no bench reader accepts it: an object with request_rate, max_concurrency, num_prompts, as a bench result has, but in no client's layout; tried vllm, vllm-legacy, sglang"},
		warnings: []string{
			"model llama-3-8b-instruct: only the baseline arm vllm; nothing to compare",
		},
	},
	// The significance scenarios: clean, every ratio ESTABLISHED whatever
	// the legs' p-values say.
	"significance-separated": {
		comparisons: []wantRatio{{model: llama, ours: "fastengine", throughput: true, memory: true}},
		gatePass:    true,
	},
	"significance-interleaved": {
		comparisons: []wantRatio{{model: llama, ours: "fastengine", throughput: true, memory: true}},
		gatePass:    true,
	},
	"significance-three-legs": {
		comparisons: []wantRatio{{model: llama, ours: "fastengine", throughput: true, memory: true}},
		gatePass:    true,
	},
	"significance-ties": {
		comparisons: []wantRatio{{model: llama, ours: "fastengine", throughput: true, memory: true}},
		gatePass:    true,
	},
	"real-sglang": {
		baseline: "sglang",
		legs: map[string][]string{
			"llama-3.3-70b-instruct/sglang/r1":         {clocks.CodeMissing, summarize.CodeMemoryMissing},
			"llama-3.3-70b-instruct/sglang-offline/r1": {summarize.CodeBenchInvalid, clocks.CodeMissing, summarize.CodeMemoryMissing},
			"llama-3.3-70b-instruct/sglang-rerun/r1":   {summarize.CodeBenchInvalid, clocks.CodeMissing, summarize.CodeMemoryMissing},
			"deepseek-v3/sglang/r1":                    {clocks.CodeMissing, summarize.CodeMemoryMissing},
		},
		comparisons: []wantRatio{
			{model: "llama-3.3-70b-instruct", ours: "sglang-offline", nullThroughput: true, nullMe: true,
				codes: []string{ineligible, ineligible, undefined}},
			{model: "llama-3.3-70b-instruct", ours: "sglang-rerun", nullMe: true,
				codes: repeat(ineligible, 2), memCodes: []string{ineligible, ineligible, undefined}},
		},
		fragments: []string{
			"max_concurrency none, request_rate 4: want one object per point in a leg, found 2: bench/llama-3.3-70b-instruct/sglang-rerun/r1/llama_3_3_70b_online_output.jsonl:3, bench/llama-3.3-70b-instruct/sglang-rerun/r1/llama_3_3_70b_online_output.jsonl:6; none used",
			"max_concurrency none, request_rate inf: want one object per point in a leg, found 7:",
		},
		warnings: []string{"model deepseek-v3: only the baseline arm sglang; nothing to compare"},
	},
	// Several GPUs per leg (tensor parallel), the mean offset and power.
	"tp4-clean": {
		comparisons: []wantRatio{{model: llama70, ours: "fastengine", throughput: true, memory: true}},
		gatePass:    true,
		extra:       wantGPUs(4, -1),
	},
	"tp4-gpu-skew": {
		legs:        map[string][]string{llama70 + "/vllm/r2": {clocks.CodeGPUSkew}},
		comparisons: []wantRatio{{model: llama70, ours: "fastengine", codes: []string{ineligible}}},
		fragments: []string{
			"GPU busy medians differ by 1.54% > 1.0%: GPU 2 at 1950 MHz (the slowest), GPU 0 at 1980 MHz; a tensor-parallel step runs at its slowest GPU's pace",
			"leg vllm r2 is not binding-eligible: clock.gpu_skew",
		},
		extra: wantGPUs(4, -1),
	},
	"tp4-offset": {
		comparisons: []wantRatio{{model: llama70, ours: "fastengine", codes: []string{clocks.CodeOffset}}},
		fragments: []string{"GPU position 3 (GPU 3): median offset 1.54% > 1.0%: fastengine 1980 MHz, vllm 1950 MHz (estimated effect 1.16% at transfer 0.7548); " +
			"the mean offset 1.39% is over it too (fastengine 1974.68 MHz, vllm 1947.54 MHz)"},
		extra: func(t *testing.T, s *summarize.Summary) {
			wantGPUs(4, -1)(t, s)
			// Positions 0-2 are within the bound; only position 3 is not.
			b := s.Comparisons[0].Throughput.Clock
			var got []string
			for _, o := range b.GPUOffsets {
				got = append(got, fmt.Sprintf("%d:%.2f/%.2f", o.Position, *o.OffsetPct, *o.MeanOffsetPct))
			}
			if want := "0:0.76/0.57 1:0.76/0.55 2:0.76/0.65 3:1.54/1.39"; strings.Join(got, " ") != want {
				t.Errorf("gpu offsets %s, want %s", strings.Join(got, " "), want)
			}
			if *b.OffsetPct != 1.54 || *b.MeanOffsetPct != 1.39 {
				t.Errorf("offset %v, mean offset %v; want the worst position's, 1.54 and 1.39", *b.OffsetPct, *b.MeanOffsetPct)
			}
		},
	},
	"tp-gpu-sets": {
		comparisons: []wantRatio{
			{model: llama70, ours: "fastengine", codes: []string{clocks.CodeHardwareMismatch}},
			{model: qwen72, ours: "fastengine", codes: []string{clocks.CodeStaticMismatch, clocks.CodeHardwareMismatch}},
		},
		fragments: []string{
			"arms are not on one machine: fastengine samples 4 GPUs per leg, vllm 2",
			`arm vllm legs sample different GPUs: ["GPU-3b9d0f42-6c1e-4a7b-9d25-8f0e1c7a4b63" "GPU-71e5c2a8-0d94-4f3b-a6e1-2c8b5d0f9e17" ` +
				`"GPU-c8a41f07-93b2-4e5d-8f60-1a7d2e9c4b85" "GPU-05f6e3d9-2b7a-4c81-b3e4-9d0a6f2c7e58"] (r1), ["GPU-9e2c7b14-5a08-4d6f-92c3-7b1e0a4d8f26" ` +
				`"GPU-4d80a6e3-1f5c-4b92-a7d8-3e6c9b2f0a71" "GPU-e6b35a90-8c4d-4f17-b0e2-5a9d1c3e7f04" "GPU-2a7f9c05-d3e1-4a68-8b4f-0c5e7d1a9b32"] (r2); ` +
				"want every leg of an arm on the same GPUs",
			`GPU position 3 (GPU 3): gpu_uuid: fastengine "GPU-05f6e3d9-2b7a-4c81-b3e4-9d0a6f2c7e58", vllm "GPU-05f6e3d9-2b7a-4c81-b3e4-9d0a6f2c7e58" "GPU-2a7f9c05-d3e1-4a68-8b4f-0c5e7d1a9b32"`,
		},
	},
	"tp8": {
		comparisons: []wantRatio{{model: llama70, ours: "fastengine", throughput: true, memory: true}},
		gatePass:    true,
		extra:       wantGPUs(8, 5),
	},
	"mean-offset": {
		comparisons: []wantRatio{{model: llama, ours: "fastengine", codes: []string{clocks.CodeOffset}}},
		fragments: []string{"mean offset 1.51% > 1.0%: fastengine 2433.86 MHz, vllm 2471.07 MHz, though the medians agree " +
			"(fastengine 2470 MHz, vllm 2470 MHz, offset 0.00%): throughput follows the time-averaged clock"},
		extra: func(t *testing.T, s *summarize.Summary) {
			b := s.Comparisons[0].Throughput.Clock
			if *b.OffsetPct != 0 || *b.MeanOffsetPct != 1.51 || len(b.GPUOffsets) != 0 {
				t.Errorf("offset %v, mean offset %v, %d GPU offsets; want 0, 1.51 and none (one GPU)", *b.OffsetPct, *b.MeanOffsetPct, len(b.GPUOffsets))
			}
		},
	},
	"amd-clean": {
		comparisons: []wantRatio{{model: llama, ours: "sglang", throughput: true, memory: true}},
		gatePass:    true,
		extra: func(t *testing.T, s *summarize.Summary) {
			b := s.Comparisons[0].Throughput.Clock
			if *b.Ours.MedianMHz != 2090 || *b.Baseline.MedianMHz != 2090 {
				t.Errorf("medians %v and %v; want the lowest XCD's 2090 MHz", *b.Ours.MedianMHz, *b.Baseline.MedianMHz)
			}
		},
	},
	"amd-thermal": {
		legs:        map[string][]string{llama + "/sglang/r1": {clocks.CodeThrottle}},
		comparisons: []wantRatio{{model: llama, ours: "sglang", codes: []string{clocks.CodeLegIneligible}}},
		fragments:   []string{"violation bits in busy samples: 0x0000000000000040 HwThermal (thermal: socket, VR or HBM, TVIOL)"},
	},
	"amd-vs-nvidia": {
		comparisons: []wantRatio{{model: llama, ours: "sglang",
			codes: []string{clocks.CodeCrossBoot, clocks.CodeHardwareMismatch, clocks.CodeOffset}}},
		fragments: []string{`vendor: sglang "amd", vllm "nvidia"`, `perf_level: sglang "AUTO", vllm null`, `memory_partition: sglang "NPS1", vllm null`},
	},
	"power": {
		comparisons: []wantRatio{{model: llama, ours: "fastengine", throughput: true, memory: true}},
		gatePass:    true,
		extra: func(t *testing.T, s *summarize.Summary) {
			b := s.Comparisons[0].Throughput.Clock
			if b.Ours.PowerW == nil || b.Baseline.PowerW == nil || *b.Ours.PowerW != 41.73 || *b.Baseline.PowerW != 30.26 {
				t.Errorf("power %v and %v; want 41.73 and 30.26 W", b.Ours.PowerW, b.Baseline.PowerW)
			}
			if *b.OffsetPct != 0 || *b.MeanOffsetPct >= 1 {
				t.Errorf("offset %v, mean offset %v: the arms are at one clock", *b.OffsetPct, *b.MeanOffsetPct)
			}
		},
	},
	"power-managed": {
		comparisons: []wantRatio{{model: llama, ours: "fastengine", throughput: true, memory: true},
			{model: qwen, ours: "vllm-copy", throughput: true, memory: true}},
		gatePass: true,
		extra: func(t *testing.T, s *summarize.Summary) {
			for _, c := range s.Comparisons {
				b := c.Throughput.Clock
				for _, side := range []clocks.Side{b.Ours, b.Baseline} {
					// Judged on free samples: 1980 MHz; the busy median and
					// the power-managed share are reported beside it.
					if *side.MedianMHz != 1980 || side.PowerManagedPct == nil || *side.PowerManagedPct < 25 ||
						*side.EnforcedPowerLimitW != 700 || *side.PowerManagedMedianMHz > 1500 || side.BusySamples == *side.FreeSamples {
						t.Errorf("%s: side %+v", c.Ours, side)
					}
				}
			}
			// Every leg's window spreads far past 5% over its busy samples.
			for _, l := range s.Legs {
				if st := l.Clock.Record.GPUs[0].SMClockMHz; *st.SpreadPct < 30 {
					t.Errorf("%s r%d: busy spread %v, want the 30%%+ of a capped window", l.Engine, l.Run, *st.SpreadPct)
				}
			}
		},
	},
	"power-free-offset": {
		comparisons: []wantRatio{{model: llama, ours: "fastengine", codes: []string{clocks.CodeOffset}}},
		fragments:   []string{"free median offset 4.55% > 1.0%: fastengine 1890 MHz, vllm 1980 MHz"},
	},
	"power-limits": {
		comparisons: []wantRatio{{model: llama, ours: "fastengine", codes: []string{clocks.CodeHardwareMismatch}}},
		fragments:   []string{"arms are not on one machine: enforced_power_limit_w: fastengine 600 W, vllm 700 W"},
	},
	"power-few-free": {
		legs: map[string][]string{llama + "/vllm/r1": {clocks.CodeFreeSamples}, llama + "/vllm/r2": {clocks.CodeFreeSamples}},
		comparisons: []wantRatio{{model: llama, ours: "fastengine",
			codes: []string{clocks.CodeLegIneligible, clocks.CodeLegIneligible}}},
		fragments: []string{"free busy samples 14 < 30: 198 of 212 busy samples were power-managed (at 700 W)"},
	},
	"power-thermal-counter": {
		legs:        map[string][]string{llama + "/fastengine/r2": {clocks.CodeThrottle}},
		comparisons: []wantRatio{{model: llama, ours: "fastengine", codes: []string{clocks.CodeLegIneligible}}},
		fragments:   []string{"hw_thermal_slowdown (HwThermal) accrued 350000 µs (0.350 s)", "though no busy sample's bits showed it"},
	},
	"power-bits-only": {
		legs: map[string][]string{llama + "/vllm/r1": {clocks.CodeSpread}, llama + "/vllm/r2": {clocks.CodeSpread}},
		comparisons: []wantRatio{{model: llama, ours: "fastengine",
			codes: []string{clocks.CodeStaircase, clocks.CodeOffset, clocks.CodeLegIneligible, clocks.CodeLegIneligible}}},
		fragments: []string{"spread over free samples", "record clocks_event_reasons_counters"},
	},
	"tp2-power-managed": {
		comparisons: []wantRatio{{model: llama70, ours: "fastengine", throughput: true, memory: true}},
		gatePass:    true,
		extra: func(t *testing.T, s *summarize.Summary) {
			wantGPUs(2, -1)(t, s)
			b := s.Comparisons[0].Throughput.Clock
			for _, side := range []clocks.Side{b.Ours, b.Baseline} {
				for _, g := range side.GPUs {
					if g.PowerManagedPct == nil || *g.PowerManagedPct < 30 || *g.MedianMHz != 1980 {
						t.Errorf("%s GPU position %d: %+v", side.Engine, g.Position, g.ClockStats)
					}
				}
			}
		},
	},
	"power-thermal-start": {
		comparisons: []wantRatio{{model: llama, ours: "fastengine", codes: []string{clocks.CodeThermalStart}}},
		fragments:   []string{"fastengine 58 °C, vllm 64 °C (median over 2 and 2 legs): 6 °C apart > 3 °C"},
	},
}

const (
	llama70 = "llama-3.1-70b-instruct"
	qwen72  = "qwen2.5-72b-instruct"
	qwen    = "qwen2.5-7b-instruct"
)

// wantGPUs checks that every leg sampled n GPUs, 0 to n−1, and that the
// slowest of each leg (by busy median) is GPU slow, when slow ≥ 0; and
// that the clock block gives n GPU positions per arm and n offsets.
func wantGPUs(n, slow int) func(t *testing.T, s *summarize.Summary) {
	return func(t *testing.T, s *summarize.Summary) {
		t.Helper()
		for _, l := range s.Legs {
			rec := l.Clock.Record
			if rec == nil || len(rec.GPUs) != n {
				t.Errorf("%s %s: want a record of %d GPUs", l.Engine, l.Name(), n)
				continue
			}
			low := 0
			for k, g := range rec.GPUs {
				if g.Index == nil || *g.Index != k {
					t.Errorf("%s %s: GPU block %d names index %v", l.Engine, l.Name(), k, g.Index)
				}
				if *g.SMClockMHz.Median < *rec.GPUs[low].SMClockMHz.Median {
					low = k
				}
			}
			if slow >= 0 && low != slow {
				t.Errorf("%s %s: the slowest GPU is %d, want %d", l.Engine, l.Name(), low, slow)
			}
		}
		for _, c := range s.Comparisons {
			b := c.Throughput.Clock
			if len(b.Ours.GPUs) != n || len(b.Baseline.GPUs) != n || len(b.GPUOffsets) != n {
				t.Errorf("%s: %d and %d GPU positions, %d offsets; want %d", c.Model, len(b.Ours.GPUs), len(b.Baseline.GPUs), len(b.GPUOffsets), n)
			}
		}
	}
}

// TestScenarioVerdicts checks every scenario's leg codes, ratio codes,
// binding_eligible per family, caveats and gate_pass.
func TestScenarioVerdicts(t *testing.T) {
	seen := map[string]bool{}
	for _, sc := range treegen.Scenarios() {
		for _, v := range variants(sc) {
			key := sc.Name
			if v.dir != "" {
				key += "/" + v.dir
			}
			seen[key] = true
			want, ok := scenarioWants[key]
			if !ok {
				want, ok = newScenarioWants[key]
			}
			if !ok {
				t.Errorf("%s: no expected verdicts; add them to scenarioWants", key)
				continue
			}
			t.Run(key, func(t *testing.T) {
				s, err := summarize.Summarize(treesDir+"/"+sc.Name, summarize.Options{Baseline: sc.BaselineEngine(), AllowCrossBoot: v.allow})
				if err != nil {
					t.Fatal(err)
				}
				checkScenario(t, s, want)
			})
		}
	}
	for k := range newScenarioWants {
		if !seen[k] {
			t.Errorf("newScenarioWants[%q] names no scenario", k)
		}
	}
	for k := range scenarioWants {
		if !seen[k] {
			t.Errorf("scenarioWants[%q] names no scenario", k)
		}
	}
}

func checkScenario(t *testing.T, s *summarize.Summary, want wantScenario) {
	t.Helper()
	var messages []string
	for _, l := range s.Legs {
		key := fmt.Sprintf("%s/%s/%s", l.Model, l.Engine, l.Name())
		got := clocks.Codes(l.Reasons)
		if !slices.Equal(got, want.legs[key]) {
			t.Errorf("leg %s: codes %v, want %v", key, got, want.legs[key])
		}
		if l.BindingEligible() != (len(want.legs[key]) == 0) {
			t.Errorf("leg %s: binding_eligible %v with codes %v", key, l.BindingEligible(), got)
		}
		for _, r := range l.Reasons {
			messages = append(messages, r.Message)
		}
	}
	if len(s.Comparisons) != len(want.comparisons) {
		t.Fatalf("%d comparisons, want %d", len(s.Comparisons), len(want.comparisons))
	}
	for i, c := range s.Comparisons {
		w := want.comparisons[i]
		name := c.Model + " " + c.Ours + "/" + c.Baseline
		base := want.baseline
		if base == "" {
			base = "vllm"
		}
		if c.Model != w.model || c.Ours != w.ours || c.Baseline != base {
			t.Errorf("comparison %d is %s, want %s %s/%s", i, name, w.model, w.ours, base)
		}
		// Each family's verdict is asserted on its own: one family's
		// verdict can never stand in for the other's.
		if c.Throughput.BindingEligible != w.throughput {
			t.Errorf("%s: THROUGHPUT binding_eligible %v, want %v", name, c.Throughput.BindingEligible, w.throughput)
		}
		if c.Memory.BindingEligible != w.memory {
			t.Errorf("%s: MEMORY binding_eligible %v, want %v", name, c.Memory.BindingEligible, w.memory)
		}
		memCodes := w.codes
		if w.memCodes != nil {
			memCodes = w.memCodes
		}
		for fam, f := range map[string]struct {
			rs   []clocks.Reason
			want []string
		}{"THROUGHPUT": {c.Throughput.Reasons, w.codes}, "MEMORY": {c.Memory.Reasons, memCodes}} {
			got := make([]string, len(f.rs))
			for j, r := range f.rs {
				got[j] = r.Code
				messages = append(messages, r.Message)
			}
			if !slices.Equal(got, nonNilStrings(f.want)) {
				t.Errorf("%s: %s reason codes %v, want %v", name, fam, got, f.want)
			}
		}
		var caveats []string
		for _, r := range c.Throughput.Clock.Caveats {
			caveats = append(caveats, r.Code)
			if !r.Waived || !strings.Contains(r.Text(), "OVERRIDDEN") {
				t.Errorf("%s: caveat %+v is not waived, or its text does not say OVERRIDDEN", name, r)
			}
		}
		if !slices.Equal(caveats, w.caveats) {
			t.Errorf("%s: caveats %v, want %v", name, caveats, w.caveats)
		}
		if c.Throughput.Clock.CrossBootOverride != (len(w.caveats) > 0) {
			t.Errorf("%s: cross_boot_override %v with caveats %v", name, c.Throughput.Clock.CrossBootOverride, caveats)
		}
		if c.Throughput.Clock != c.Memory.Clock {
			t.Errorf("%s: the two families carry different clock blocks", name)
		}
		// A null value is expected where the scenario says so, and never
		// stands without a ratio.undefined saying why.
		if (c.Throughput.Value == nil) != w.nullThroughput || (c.Memory.Value == nil) != w.nullMe {
			t.Errorf("%s: throughput value %v, memory %v; want null %v, %v", name, c.Throughput.Value, c.Memory.Value, w.nullThroughput, w.nullMe)
		}
		if c.Throughput.Value == nil && !slices.Contains(clocks.Codes(c.Throughput.Reasons), undefined) ||
			c.Memory.Value == nil && !slices.Contains(clocks.Codes(c.Memory.Reasons), undefined) {
			t.Errorf("%s: a null value without ratio.undefined", name)
		}
	}
	if s.GatePass != want.gatePass {
		t.Errorf("gate_pass %v, want %v", s.GatePass, want.gatePass)
	}
	if want.extra != nil {
		want.extra(t, s)
	}
	all := strings.Join(messages, "\n")
	for _, f := range want.fragments {
		if !strings.Contains(all, f) {
			t.Errorf("no reason message contains %q; messages:\n%s", f, all)
		}
	}
	if len(s.Warnings) != len(want.warnings) {
		t.Errorf("warnings %q, want %d", s.Warnings, len(want.warnings))
	}
	for _, f := range want.warnings {
		if !strings.Contains(strings.Join(s.Warnings, "\n"), f) {
			t.Errorf("no warning contains %q; warnings %q", f, s.Warnings)
		}
	}
}

func nonNilStrings(xs []string) []string {
	if xs == nil {
		return []string{}
	}
	return xs
}
