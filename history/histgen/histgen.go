// Package histgen writes generated histories: a run of grids, each the
// summary.json and all-runs.json of a real summarized tree (clean-grid)
// with its throughputs, free clocks, dates and verdicts set to what a
// scenario says, so that the change points and their attribution are
// known in advance.
package histgen

import (
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"time"

	"github.com/clockgate/clockgate/summarize"
)

// Template is a summarized tree's two documents, decoded, to be varied.
type Template struct {
	summary, allRuns map[string]any
	// engines are the (model, engine) arms in the template.
	Arms  []Arm
	first time.Time
}

// Arm is one (model, engine).
type Arm struct{ Model, Engine string }

// New summarizes tree (the default baseline) for a template.
func New(tree string) (*Template, error) {
	s, err := summarize.Summarize(tree, summarize.Options{Baseline: summarize.DefaultBaseline})
	if err != nil {
		return nil, err
	}
	sum, err := s.SummaryJSON()
	if err != nil {
		return nil, err
	}
	all, err := s.AllRunsJSON()
	if err != nil {
		return nil, err
	}
	t := &Template{}
	if err := json.Unmarshal(sum, &t.summary); err != nil {
		return nil, err
	}
	if err := json.Unmarshal(all, &t.allRuns); err != nil {
		return nil, err
	}
	seen := map[Arm]bool{}
	for _, l := range t.allRuns["legs"].([]any) {
		l := l.(map[string]any)
		a := Arm{l["model"].(string), l["engine"].(string)}
		if !seen[a] {
			seen[a] = true
			t.Arms = append(t.Arms, a)
		}
		ft, err := time.Parse(time.RFC3339Nano, l["clock"].(map[string]any)["window"].(map[string]any)["first_t"].(string))
		if err != nil {
			return nil, err
		}
		if t.first.IsZero() || ft.Before(t.first) {
			t.first = ft
		}
	}
	return t, nil
}

// Grid is what one generated grid is.
type Grid struct {
	// Date is the grid's first sample.
	Date time.Time
	// Throughput scales each arm's median throughput at every point,
	// relative to the template's (1 keeps it); missing arms keep 1.
	Throughput map[Arm]float64
	// ClockMHz is each arm's free clock; missing arms keep the
	// template's.
	ClockMHz map[Arm]float64
	// NotEstablished makes every ratio NOT ESTABLISHED and every leg not
	// binding-eligible (a clock.spread on each leg, an offset on each
	// ratio).
	NotEstablished bool
}

// Documents is one grid's summary.json and all-runs.json.
func (t *Template) Documents(g Grid) (summary, allRuns []byte, err error) {
	sum := deepCopy(t.summary).(map[string]any)
	all := deepCopy(t.allRuns).(map[string]any)
	scale := func(a Arm) float64 {
		if f, ok := g.Throughput[a]; ok {
			return f
		}
		return 1
	}
	for _, c := range sum["comparisons"].([]any) {
		c := c.(map[string]any)
		model := c["model"].(string)
		ours, base := Arm{model, c["ours"].(string)}, Arm{model, c["baseline"].(string)}
		tp := c["throughput"].(map[string]any)
		logSum, n := 0.0, 0
		for _, p := range tp["points"].([]any) {
			p := p.(map[string]any)
			o := round4(p["ours"].(float64) * scale(ours))
			b := round4(p["baseline"].(float64) * scale(base))
			p["ours"], p["baseline"] = o, b
			p["ratio"] = round4(o / b)
			logSum += math.Log(o / b)
			n++
		}
		tp["value"] = round4(math.Exp(logSum / float64(n)))
		for _, fam := range []string{"throughput", "memory"} {
			f := c[fam].(map[string]any)
			clock := f["clock"].(map[string]any)
			for side, a := range map[string]Arm{"ours": ours, "baseline": base} {
				if mhz, ok := g.ClockMHz[a]; ok {
					clock[side].(map[string]any)["median_mhz"] = round4(mhz)
				}
			}
			if g.NotEstablished {
				f["binding_eligible"] = false
				clock["established"] = false
				r := map[string]any{"code": "clock.offset", "message": "generated: the arms' clocks differ"}
				clock["reasons"] = append(clock["reasons"].([]any), r)
				f["reasons"] = append(f["reasons"].([]any), r)
			}
		}
	}
	if g.NotEstablished {
		sum["gate_pass"] = false
	}
	shift := g.Date.Sub(t.first)
	for _, l := range all["legs"].([]any) {
		l := l.(map[string]any)
		w := l["clock"].(map[string]any)["window"].(map[string]any)
		for _, k := range []string{"first_t", "last_t"} {
			ts, err := time.Parse(time.RFC3339Nano, w[k].(string))
			if err != nil {
				return nil, nil, err
			}
			w[k] = ts.Add(shift).UTC().Format("2006-01-02T15:04:05.000Z")
		}
		// Each leg's throughput moves with its arm's median, so that the
		// legs the small-history rule tests say what the medians say.
		f := scale(Arm{l["model"].(string), l["engine"].(string)})
		for _, b := range l["bench"].([]any) {
			if b, ok := b.(map[string]any); ok {
				if v, ok := b["output_throughput"].(float64); ok {
					b["output_throughput"] = v * f
				}
			}
		}
		if g.NotEstablished {
			l["binding_eligible"] = false
			l["reasons"] = append(l["reasons"].([]any), map[string]any{"code": "clock.spread", "message": "generated: the clock moved within the window"})
		}
	}
	if summary, err = json.MarshalIndent(sum, "", "  "); err != nil {
		return nil, nil, err
	}
	if allRuns, err = json.MarshalIndent(all, "", "  "); err != nil {
		return nil, nil, err
	}
	return summary, allRuns, nil
}

func round4(v float64) float64 { return math.Round(v*1e4) / 1e4 }

func deepCopy(v any) any {
	switch v := v.(type) {
	case map[string]any:
		m := make(map[string]any, len(v))
		for k, e := range v {
			m[k] = deepCopy(e)
		}
		return m
	case []any:
		s := make([]any, len(v))
		for i, e := range v {
			s[i] = deepCopy(e)
		}
		return s
	}
	return v
}

// Scenario is a generated history: n grids a day apart from start, each
// arm's throughput and clock with multiplicative noise (sigma, relative),
// and the steps and NOT ESTABLISHED grids it names.
type Scenario struct {
	Grids int
	Start time.Time
	Seed  uint64
	// NoiseTP and NoiseClock are the relative standard deviations of
	// throughput and clock noise.
	NoiseTP, NoiseClock float64
	// BaseClockMHz is every arm's free clock before any step.
	BaseClockMHz float64
	// Steps change arms from a grid on.
	Steps []Step
	// NotEstablished grids have wild values and are NOT ESTABLISHED.
	NotEstablished map[int]bool
}

// Step multiplies an arm's throughput and clock from grid At on; an empty
// Arms list means every arm.
type Step struct {
	At                int
	Arms              []Arm
	Throughput, Clock float64
}

// Grids is the scenario's grids.
func (t *Template) Grids(s Scenario) []Grid {
	r := rand.New(rand.NewPCG(s.Seed, s.Seed^0x9e3779b97f4a7c15))
	out := make([]Grid, s.Grids)
	for i := range out {
		g := Grid{Date: s.Start.Add(time.Duration(i) * 24 * time.Hour), Throughput: map[Arm]float64{}, ClockMHz: map[Arm]float64{}}
		for _, a := range t.Arms {
			tp, clk := 1.0, s.BaseClockMHz
			for _, st := range s.Steps {
				if i >= st.At && (len(st.Arms) == 0 || contains(st.Arms, a)) {
					tp *= st.Throughput
					clk *= st.Clock
				}
			}
			tp *= 1 + s.NoiseTP*r.NormFloat64()
			clk *= 1 + s.NoiseClock*r.NormFloat64()
			if s.NotEstablished[i] {
				tp *= 0.7
				clk *= 0.9
				g.NotEstablished = true
			}
			g.Throughput[a], g.ClockMHz[a] = tp, clk
		}
		out[i] = g
	}
	return out
}

func contains(as []Arm, a Arm) bool {
	for _, b := range as {
		if a == b {
			return true
		}
	}
	return false
}

// String names a grid for messages.
func (g Grid) String() string { return fmt.Sprintf("grid of %s", g.Date.Format(time.DateOnly)) }
