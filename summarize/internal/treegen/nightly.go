package treegen

import "time"

// The nightly scenarios: the night after significance-separated, for a
// history of two nights (SPEC §12.1.1). Registered here, after the
// others, so that the list's order stays fixed.
var nightlyScenarios = []Scenario{
	{Name: "nightly-drop",
		About: "the night after significance-separated (2026-08-13, same box and boot, 5 legs each): fastengine 20% slower at every point, " +
			"every leg; vllm as the night before; both ratios ESTABLISHED (0.8623): with significance-separated as the first night, " +
			"history check calls it a regression on the second night",
		build: func(t *tree) {
			t.arm(llama, fastengine, 5, gb10, boot13, func(l *leg) {
				l.start = l.start.Add(24 * time.Hour)
				mult := rotated([]float64{1.012, 0.991, 1.004, 0.983, 1.009}, l.run)
				timed(l, fastengine, func(i int) float64 { return 0.8 * mult(i) })
			})
			t.arm(llama, vllm, 5, gb10, boot13, func(l *leg) {
				l.start = l.start.Add(24 * time.Hour)
				timed(l, vllm, rotated([]float64{0.994, 1.015, 0.987, 1.006, 0.998}, l.run))
			})
		}},
}

func init() { scenarios = append(scenarios, nightlyScenarios...) }
