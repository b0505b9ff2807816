package summarize_test

import (
	"testing"

	"github.com/clockgate/clockgate/clocks"
	"github.com/clockgate/clockgate/summarize"
)

func init() {
	for k, v := range outsideScenarioWants {
		newScenarioWants[k] = v
	}
}

// legsWith are the legs of an imported scenario's two arms, each
// carrying code alone.
func legsWith(code string) map[string][]string {
	out := map[string][]string{}
	for _, e := range []string{"fastengine", "vllm"} {
		for _, r := range []string{"r1", "r2"} {
			out[llama+"/"+e+"/"+r] = []string{code}
		}
	}
	return out
}

// The new user's case (SPEC §12.1.1): results three months away from the
// imported log are NOT ESTABLISHED; the same log with its own run's
// results is ESTABLISHED, every point judged on its vLLM date.
var outsideScenarioWants = map[string]wantScenario{
	"imported-months-apart": {
		legs:        legsWith(clocks.CodeBenchOutsideWindow),
		comparisons: []wantRatio{{model: llama, ours: "fastengine", codes: repeat(clocks.CodeLegIneligible, 4)}},
		fragments: []string{"bench/" + llama + "/vllm/r1/c8.json: point 8/inf ran, by its date 20260818-180343 and duration 50.987 s " +
			"(within date − duration − 1 s to date + 1 s), at 2026-08-19T01:02:51.013Z to 2026-08-19T01:03:44.000Z under the host's zone (-07:00) " +
			"and at 2026-08-18T18:02:51.013Z to 2026-08-18T18:03:44.000Z under UTC, outside the leg's clock window 2026-11-03T18:00:00.123Z " +
			"to 2026-11-03T18:03:43.128Z: these results are no evidence about this clock"},
		// As before SPEC §12.1.1: the dates fit no zone, so no point is
		// judged on its own clock.
		warnings: monthsApartWarnings(),
		extra: func(t *testing.T, s *summarize.Summary) {
			for _, l := range s.Legs {
				n := 0
				for _, r := range l.Reasons {
					if r.Code == clocks.CodeBenchOutsideWindow {
						n++
					}
				}
				if n != 4 {
					t.Errorf("%s %s: %d bench.outside_window, want one per point (4)", l.Engine, l.Name(), n)
				}
			}
		},
	},
	"imported-no-time": {
		legs:        legsWith(clocks.CodeUnprovenWindow),
		comparisons: []wantRatio{{model: llama, ours: "fastengine", codes: repeat(clocks.CodeLegIneligible, 4)}},
		fragments: []string{"imported record: none of the leg's 4 bench results has a time (no date, no epoch window) and no clockgate mark gives one, " +
			"so nothing ties these results to this log; keep each result's time (vLLM's --save-result writes its date, and import the log with --tz " +
			"naming the bench host's zone), or run each point under clockgate mark"},
	},
	"imported-same-run": {
		comparisons: []wantRatio{{model: llama, ours: "fastengine", throughput: true, memory: true}},
		gatePass:    true,
		extra: func(t *testing.T, s *summarize.Summary) {
			checkPoints([]wantPoint{{"1/inf", true, "vllm-date", 0}, {"2/inf", true, "vllm-date", 0},
				{"4/inf", true, "vllm-date", 0}, {"8/inf", true, "vllm-date", 0}})(t, s)
			for _, l := range s.Legs {
				if w := l.Clock.Record.Window; w.UTCOffsetS == nil || *w.UTCOffsetS != -7*3600 || w.TimeZone != "" {
					t.Errorf("%s %s: utc_offset_s %v, time_zone %q; want -25200 as import --tz -07:00 records it", l.Engine, l.Name(), w.UTCOffsetS, w.TimeZone)
				}
			}
		},
	},
}

func monthsApartWarnings() []string {
	var out []string
	for _, e := range []string{"fastengine", "vllm"} {
		for _, r := range []string{"r1", "r2"} {
			out = append(out, llama+"/"+e+"/"+r+": vLLM dates lie inside the clock window (2026-11-03T")
		}
		out = append(out, noWindowWarnings(e, []int{1, 2}, allPoints, "its vLLM date fits no one zone")...)
	}
	return out
}
