package summarize_test

import "github.com/clockgate/clockgate/clocks"

// The multi-host scenarios' verdicts (SPEC §12.3), pinned apart from their
// golden files.
func init() {
	const rerun = llama + "/dynamo-rerun/r1"
	newScenarioWants["multihost-aa"] = wantScenario{baseline: "dynamo",
		comparisons: []wantRatio{{model: llama, ours: "dynamo-rerun", throughput: true, memory: true}},
		gatePass:    true,
	}
	newScenarioWants["multihost-wall-step"] = wantScenario{baseline: "dynamo",
		legs:        map[string][]string{rerun: {clocks.CodeWallStep}},
		comparisons: []wantRatio{{model: llama, ours: "dynamo-rerun", codes: []string{clocks.CodeLegIneligible}}},
		fragments: []string{"host node2: clocks/llama-3.1-8b-instruct/dynamo-rerun/r1/hosts/node2.samples.jsonl: the wall clock moved 1.001 s against CLOCK_BOOTTIME's 1.801 s between lines 40 and 41",
			"a step of 0.800 s > 50 ms"},
	}
	newScenarioWants["multihost-duplicate-uuid"] = wantScenario{baseline: "dynamo",
		legs:        map[string][]string{rerun: {clocks.CodeHostDuplicate}},
		comparisons: []wantRatio{{model: llama, ours: "dynamo-rerun", codes: []string{clocks.CodeStaticMismatch, clocks.CodeHardwareMismatch, clocks.CodeLegIneligible}}},
		fragments: []string{"GPU GPU-a93f0d52-16b8-4e7c-8d24-5f0c1e7b9a36 is claimed by hosts node2 and node3: two samplers read one GPU",
			"arms are not on one machine: GPU position 2 (host node3, role decode, GPU 0): gpu_uuid"},
	}
	newScenarioWants["multihost-late-host"] = wantScenario{baseline: "dynamo",
		legs:        map[string][]string{rerun: {"bench.outside_window", clocks.CodeHostWindow}},
		comparisons: []wantRatio{{model: llama, ours: "dynamo-rerun", codes: []string{clocks.CodeLegIneligible}}},
		fragments:   []string{"host node3: its window starts at 2026-08-12T12:00:06.804Z, 6.003 s after the common window's start (2026-08-12T12:00:00.801Z, host node1) > 3 × interval_s 1 s = 3.000 s"},
	}
}
