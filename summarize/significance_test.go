package summarize_test

import (
	"fmt"
	"math"
	"testing"

	"github.com/clockgate/clockgate/ratio"
	"github.com/clockgate/clockgate/summarize"
)

// bound is an expected interval bound: nil is unbounded (null); top and
// bottom stand for the largest and smallest leg value, read from the
// legs' evidence, at 4 decimals.
type bound struct {
	v        float64
	top, bot bool
	null     bool
}

var (
	null = bound{null: true}
	top  = bound{top: true}
)

func at(v float64) bound { return bound{v: v} }

type wantTest struct {
	p            any // float64, or nil
	ours, base   [2]bound
	oursN, baseN int
}

type wantSignificance struct {
	comparison         int
	points             []wantTest
	tput               [2]int // points, significant_points
	memory             wantTest
	memPoints, memSign int
}

func round4(x float64) float64 { return math.Round(x*1e4) / 1e4 }

// TestScenarioSignificance pins each arm's intervals, the p-values and the
// families' counts of the significance scenarios, and of the older ones
// whose legs are too few, to values worked by hand: 5 legs that do not
// interleave give 2/C(10,5) = 0.007937; interleaved with U = 10, 2 × 87/252
// = 0.6905; 3 against 3, 2/20 = 0.1; the ties, the exact distribution
// given the ties (1/154, 113/231, 7/11, enumerated in ratio's tests); an
// interval of 5 legs is (−∞, X5], of 6 [X1, X6], of fewer unbounded.
func TestScenarioSignificance(t *testing.T) {
	sep := wantTest{p: 0.007937, ours: [2]bound{null, top}, base: [2]bound{null, top}, oursN: 5, baseN: 5}
	inter := wantTest{p: 0.6905, ours: [2]bound{null, top}, base: [2]bound{null, top}, oursN: 5, baseN: 5}
	three := wantTest{p: 0.1, ours: [2]bound{null, null}, base: [2]bound{null, null}, oursN: 3, baseN: 3}
	one := wantTest{p: 1.0, ours: [2]bound{null, null}, base: [2]bound{null, null}, oursN: 1, baseN: 1}
	two := wantTest{p: 0.3333, ours: [2]bound{null, null}, base: [2]bound{null, null}, oursN: 2, baseN: 2}
	tie := func(p float64, o0, o1, b0, b1 float64) wantTest {
		return wantTest{p: p, ours: [2]bound{at(o0), at(o1)}, base: [2]bound{at(b0), at(b1)}, oursN: 6, baseN: 6}
	}
	for scenario, want := range map[string]wantSignificance{
		"significance-separated": {points: []wantTest{sep, sep, sep, sep}, tput: [2]int{4, 4},
			memory: sep, memPoints: 1, memSign: 1},
		"significance-interleaved": {points: []wantTest{inter, inter, inter, inter}, tput: [2]int{4, 0},
			memory:    wantTest{p: 0.6905, ours: [2]bound{null, at(71237.25)}, base: [2]bound{null, at(71240)}, oursN: 5, baseN: 5},
			memPoints: 1},
		"significance-three-legs": {points: []wantTest{three, three, three, three}, tput: [2]int{4, 0},
			memory: three, memPoints: 1},
		"significance-ties": {points: []wantTest{
			tie(0.006494, 12.2, 12.4, 12.0, 12.2), tie(0.4892, 22.6, 22.8, 22.5, 22.7),
			tie(0.6364, 41.8, 41.9, 41.7, 41.9), tie(0.006494, 70.5, 70.7, 70.3, 70.5)},
			tput:      [2]int{4, 2},
			memory:    tie(1, 71234, 71234, 71234, 71234),
			memPoints: 1},
		// One leg per arm: p 1, all one leg against one can give; nothing
		// bounded.
		"cross-boot": {points: []wantTest{one, one, one, one}, tput: [2]int{4, 0}, memory: one, memPoints: 1},
		// fastengine r2's c2.json is refused (NaN) and c8 failed in both
		// legs: one leg against two at c2 (p 2/3), none with throughput at
		// c8, so no p there.
		"all-failed-point": {points: []wantTest{two,
			{p: 0.6667, ours: [2]bound{null, null}, base: [2]bound{null, null}, oursN: 1, baseN: 2}, two,
			{p: nil, ours: [2]bound{null, null}, base: [2]bound{null, null}, oursN: 0, baseN: 2}},
			tput: [2]int{4, 0}, memory: two, memPoints: 1},
		// Real vLLM 0.25.1 runs: vllm-seqs4's two legs (93.75 and 199.37
		// tokens/s) straddle vllm's (186.48 and 191.20): U = 2 = n1·n2/2, p = 1.
		"real-vllm-0.25": {comparison: 2, points: []wantTest{{p: 1.0, ours: [2]bound{null, null}, base: [2]bound{null, null}, oursN: 2, baseN: 2}},
			tput: [2]int{1, 0}, memory: wantTest{p: nil, ours: [2]bound{null, null}, base: [2]bound{null, null}}},
	} {
		t.Run(scenario, func(t *testing.T) {
			s, err := summarize.Summarize(treesDir+"/"+scenario, summarize.Options{Baseline: "vllm"})
			if err != nil {
				t.Fatal(err)
			}
			c := s.Comparisons[want.comparison]
			// The legs' values as the evidence has them, for top and bot.
			armVals := func(engine string, pt int) []float64 {
				var out []float64
				for _, l := range s.Arm(c.Model, engine) {
					for _, p := range l.Points {
						if p.ID == c.Throughput.Points[pt].ID && p.OutputThroughput > 0 {
							out = append(out, p.OutputThroughput)
						}
					}
				}
				return out
			}
			memVals := func(engine string) []float64 {
				var out []float64
				for _, l := range s.Arm(c.Model, engine) {
					if l.Memory != nil {
						out = append(out, l.Memory.PeakGPUMemoryMiB)
					}
				}
				return out
			}
			check := func(where string, got ratio.Test, w wantTest, oursVals, baseVals []float64) {
				t.Helper()
				switch wp := w.p.(type) {
				case nil:
					if got.P != nil {
						t.Errorf("%s: p %v, want null", where, *got.P)
					}
				case float64:
					if got.P == nil || *got.P != wp {
						t.Errorf("%s: p %v, want %v", where, got.P, wp)
					}
				}
				if len(got.OursLegs) != w.oursN || len(got.BaselineLegs) != w.baseN || len(oursVals) != w.oursN || len(baseVals) != w.baseN {
					t.Errorf("%s: %d and %d legs tested (%d and %d in the evidence), want %d and %d", where,
						len(got.OursLegs), len(got.BaselineLegs), len(oursVals), len(baseVals), w.oursN, w.baseN)
				}
				for _, side := range []struct {
					name string
					ci   ratio.CI
					want [2]bound
					vals []float64
				}{{"ours_ci", got.OursCI, w.ours, oursVals}, {"baseline_ci", got.BaselineCI, w.base, baseVals}} {
					for k, b := range side.want {
						want := b.v
						if b.top || b.bot {
							want = side.vals[0]
							for _, v := range side.vals {
								if b.top {
									want = max(want, v)
								} else {
									want = min(want, v)
								}
							}
							want = round4(want)
						}
						switch g := side.ci[k]; {
						case b.null && g != nil:
							t.Errorf("%s: %s[%d] %v, want null", where, side.name, k, *g)
						case !b.null && (g == nil || *g != want):
							t.Errorf("%s: %s[%d] %v, want %v", where, side.name, k, g, want)
						}
					}
				}
			}
			if len(c.Throughput.Points) != len(want.points) {
				t.Fatalf("%d points, want %d", len(c.Throughput.Points), len(want.points))
			}
			for i, w := range want.points {
				pt := c.Throughput.Points[i]
				check(fmt.Sprintf("THROUGHPUT %s", pt.ID.Label()), pt.Test, w, armVals(c.Ours, i), armVals(c.Baseline, i))
			}
			check("MEMORY", c.Memory.Test, want.memory, memVals(c.Ours), memVals(c.Baseline))
			if g := c.Throughput.Significance; g.Test != "mann-whitney-u" || g.Alpha != 0.05 || g.Points != want.tput[0] || g.SignificantPoints != want.tput[1] {
				t.Errorf("THROUGHPUT significance %+v, want %d points, %d significant", g, want.tput[0], want.tput[1])
			}
			if g := c.Memory.Significance; g.Test != "mann-whitney-u" || g.Alpha != 0.05 || g.Points != want.memPoints || g.SignificantPoints != want.memSign {
				t.Errorf("MEMORY significance %+v, want %d points, %d significant", g, want.memPoints, want.memSign)
			}
		})
	}
}
