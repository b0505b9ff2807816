package summarize_test

// The nightly scenario's verdicts, kept beside the scenario's own file in
// the generator: the second night of a history, its ratios ESTABLISHED
// though fastengine is 20% slower (history check judges the drop).
func init() {
	scenarioWants["nightly-drop"] = wantScenario{
		comparisons: []wantRatio{{model: llama, ours: "fastengine", throughput: true, memory: true}},
		gatePass:    true,
	}
}
