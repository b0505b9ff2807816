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
	model, ours            string
	throughput, memory     bool
	codes                  []string
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
}

func repeat(code string, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = code
	}
	return out
}

var scenarioWants = map[string]wantScenario{
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
			"bench/" + llama + "/fastengine/r1/c4.json: max_concurrency 4: want every request completed and failed 0, found completed 11 of num_prompts 12, failed 1",
			"bench/" + llama + "/vllm/r2/c8.json: max_concurrency 8: want every request completed and failed 0, found completed 23 of num_prompts 24, no failed key (legacy file)",
			"max_concurrency 8: want one num_prompts/total_input_tokens/total_output_tokens across fastengine and vllm, found 24/24576/3072 in fastengine r1, fastengine r2, vllm r1; 24/23552/2944 in vllm r2",
		},
	},
	"memory-missing": {
		legs:        map[string][]string{llama + "/fastengine/r2": {summarize.CodeMemoryMissing}},
		comparisons: []wantRatio{{model: llama, ours: "fastengine", codes: []string{clocks.CodeLegIneligible}}},
		fragments:   []string{"no memory record at memory/" + llama + "/fastengine/r2.summary.json"},
	},
	"point-mismatch": {
		comparisons: []wantRatio{{model: llama, ours: "fastengine", codes: []string{"bench.point_mismatch"}}},
		fragments:   []string{"{1, 2, 4, 8, 16} in fastengine r1, fastengine r2; {1, 2, 4, 8} in vllm r1, vllm r2"},
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
			"bench/" + llama + "/fastengine/r1/server.log: not a bench point",
			"bench/" + llama + "/vllm/r01: not a leg: want r<N>, N a positive decimal integer without leading zeros",
			"clocks/" + llama + "/vllm/.r2.summary.json.tmp-1375: not a leg's file",
			"model mistral-7b-instruct: no baseline arm vllm (found fastengine); not compared",
		},
	},
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
				t.Errorf("%s: no expected verdicts; add them to scenarioWants", key)
				continue
			}
			t.Run(key, func(t *testing.T) {
				s, err := summarize.Summarize(treesDir+"/"+sc.Name, summarize.Options{Baseline: "vllm", AllowCrossBoot: v.allow})
				if err != nil {
					t.Fatal(err)
				}
				checkScenario(t, s, want)
			})
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
		if c.Model != w.model || c.Ours != w.ours || c.Baseline != "vllm" {
			t.Errorf("comparison %d is %s, want %s %s/vllm", i, name, w.model, w.ours)
		}
		// Each family's verdict is asserted on its own: one family's
		// verdict can never stand in for the other's.
		if c.Throughput.BindingEligible != w.throughput {
			t.Errorf("%s: THROUGHPUT binding_eligible %v, want %v", name, c.Throughput.BindingEligible, w.throughput)
		}
		if c.Memory.BindingEligible != w.memory {
			t.Errorf("%s: MEMORY binding_eligible %v, want %v", name, c.Memory.BindingEligible, w.memory)
		}
		for fam, rs := range map[string][]clocks.Reason{"THROUGHPUT": c.Throughput.Reasons, "MEMORY": c.Memory.Reasons} {
			got := make([]string, len(rs))
			for j, r := range rs {
				got[j] = r.Code
				messages = append(messages, r.Message)
			}
			if !slices.Equal(got, nonNilStrings(w.codes)) {
				t.Errorf("%s: %s reason codes %v, want %v", name, fam, got, w.codes)
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
		if c.Throughput.Value == nil || c.Memory.Value == nil {
			t.Errorf("%s: a ratio value is null (throughput %v, memory %v); every scenario's values can be computed",
				name, c.Throughput.Value, c.Memory.Value)
		}
	}
	if s.GatePass != want.gatePass {
		t.Errorf("gate_pass %v, want %v", s.GatePass, want.gatePass)
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
