package summarize_test

import "github.com/clockgate/clockgate/clocks"

// noZone is the warning of a vLLM leg whose record names no zone: its
// dates place no point.
const noZone = "its clock record names no window.utc_offset_s (written before the sampler recorded its zone), so its vLLM dates cannot be placed in time"

// The bench clients' scenarios (SPEC §12.5).
func init() {
	scenarioWants["aiperf-aa"] = wantScenario{
		comparisons: []wantRatio{{model: llama, ours: "vllm-again", throughput: true, memory: true}},
		gatePass:    true,
	}
	scenarioWants["guidellm-aa"] = wantScenario{
		comparisons: []wantRatio{{model: llama, ours: "vllm-again", throughput: true, memory: true}},
		gatePass:    true,
	}
	scenarioWants["format-mismatch"] = wantScenario{
		comparisons: []wantRatio{{model: llama, ours: "fastengine", memory: true,
			codes: []string{clocks.CodeFormatMismatch}, memCodes: []string{}}},
		fragments: []string{"want one bench client across fastengine and vllm (their throughputs are defined alike only within one), found 2: " +
			"aiperf in fastengine r1, fastengine r2; vllm in vllm r1, vllm r2; rerun both arms with one client"},
		warnings: repeat(noZone, 8),
	}
	scenarioWants["format-mismatch-baseline"] = wantScenario{
		comparisons: []wantRatio{{model: llama, ours: "fastengine", memory: true,
			codes: []string{clocks.CodeFormatMismatch}, memCodes: []string{}}},
		fragments: []string{"found 2: vllm in fastengine r1, fastengine r2; guidellm in vllm r1, vllm r2; rerun both arms with one client"},
		warnings:  repeat(noZone, 8),
	}
}
