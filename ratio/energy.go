package ratio

import (
	"fmt"
	"strings"

	"github.com/clockgate/clockgate/clocks"
)

// The ENERGY family's reason codes (SPEC §11.3).
const (
	CodeEnergyNoWindow       = clocks.CodeEnergyNoWindow
	CodeEnergyMissing        = clocks.CodeEnergyMissing
	CodeEnergyCounterReset   = clocks.CodeEnergyCounterReset
	CodeEnergyCoverage       = clocks.CodeEnergyCoverage
	CodeEnergyMethodMismatch = clocks.CodeEnergyMethodMismatch
	CodeEnergyDisagree       = clocks.CodeEnergyDisagree
)

// EnergyCaveat is said of every ENERGY ratio: what the energy covers.
const EnergyCaveat = "GPU board energy only (the module's on Grace), no host: CPU, memory, fans and power supply are not measured"

// Energy is the ENERGY ratio family (SPEC §11.3): per point, ours /
// baseline of the arms' medians over legs of J per output token (lower is
// better, like MEMORY). It carries each point's THROUGHPUT reasons and
// clock block; it is binding-eligible only when every point is.
type Energy struct {
	BindingEligible bool            `json:"binding_eligible"`
	Reasons         []clocks.Reason `json:"reasons"`
	Points          []EnergyPoint   `json:"points"`
}

// EnergyPoint is one point of the ENERGY family.
type EnergyPoint struct {
	// Point is the point as the report prints it: "8/inf".
	Point string `json:"point"`
	// Value is ours / baseline of the median J per output token, rounded
	// to 4 decimals; nil when it cannot be computed.
	Value           *float64        `json:"value"`
	BindingEligible bool            `json:"binding_eligible"`
	Reasons         []clocks.Reason `json:"reasons"`
	// P is the two-sided p of the legs' J per output token (§9.4),
	// reported, never a gate term.
	P        *float64    `json:"p"`
	Ours     *EnergySide `json:"ours"`
	Baseline *EnergySide `json:"baseline"`
	// Test is the legs' J per output token compared, for reports.
	Test Test `json:"-"`
}

// EnergySide is one arm's energy at a point: medians over its legs, nil
// where no leg has a value.
type EnergySide struct {
	JPerOutputToken *float64 `json:"j_per_output_token"`
	JPerTotalToken  *float64 `json:"j_per_total_token"`
	JPerRequest     *float64 `json:"j_per_request"`
	MeanPowerW      *float64 `json:"mean_power_w"`
	IdlePowerW      *float64 `json:"idle_power_w"`
	// Method is clocks.MethodCounter or clocks.MethodIntegration, and
	// Scope the counter's energy_scope; nil where the legs have none (or
	// differ: energy.method_mismatch).
	Method *string `json:"method"`
	Scope  *string `json:"scope"`
	// ErrorBoundPct is the median over legs of the integration's error
	// bound in percent of the window's energy.
	ErrorBoundPct *float64 `json:"error_bound_pct"`
}

// legEnergy is one leg's energy at a point, with its bench figures.
type legEnergy struct {
	engine string
	leg    *Leg
	e      *clocks.LegEnergy
	bench  BenchPoint
}

func (le legEnergy) label() string { return legLabel(le.engine, le.leg) }

// energyFamily builds the ENERGY family of c, whose THROUGHPUT points,
// reasons and clock block are built already.
func energyFamily(c *Comparison, ours, baseline Arm, throughputOwn []clocks.Reason) Energy {
	en := Energy{Reasons: []clocks.Reason{}, Points: []EnergyPoint{}}
	block := c.Throughput.Clock
	seen := map[string]bool{}
	addFamily := func(rs []clocks.Reason) {
		for _, r := range rs {
			k := r.Code + "\x00" + r.Message
			if !seen[k] {
				seen[k] = true
				en.Reasons = append(en.Reasons, r)
			}
		}
	}
	addFamily(c.Throughput.Reasons)
	all := len(c.Throughput.Points) > 0
	for _, pt := range c.Throughput.Points {
		ep := EnergyPoint{Point: pt.ID.Label()}
		// The point's own THROUGHPUT reasons (its clock offset, output
		// mismatch, undefined ratio); the family's (the clock block's, the
		// legs', the bench's) stand once in the family's reasons, and keep
		// every point from binding.
		var own []clocks.Reason
		if !pt.Common {
			own = append(own, clocks.Reason{Code: CodeUndefined, Scope: clocks.ScopeRatio, Message: fmt.Sprintf(
				"%s: no ENERGY ratio: only one of %s and %s ran the point; run it in both arms", ep.Point, ours.Engine, baseline.Engine)})
		} else {
			own = pointEnergy(&ep, pt.ID, ours, baseline)
		}
		ep.Reasons = joinReasons(pt.reasons, own)
		ep.BindingEligible = len(ep.Reasons) == 0 && len(block.Reasons) == 0 && len(throughputOwn) == 0 && block.Established && ep.Value != nil
		addFamily(own)
		en.Points = append(en.Points, ep)
		all = all && ep.BindingEligible
	}
	en.BindingEligible = all
	return en
}

// pointEnergy fills one point both arms ran and returns its energy reasons.
func pointEnergy(ep *EnergyPoint, id PointID, ours, baseline Arm) []clocks.Reason {
	label := id.Label()
	var reasons []clocks.Reason
	reason := func(code, engine string, run int, format string, args ...any) {
		reasons = append(reasons, clocks.Reason{Code: code, Scope: clocks.ScopeRatio, Engine: engine, Run: run,
			Message: fmt.Sprintf(format, args...)})
	}
	// Legs without a window, grouped by why.
	var noWindow []string
	noWhy := map[string][]string{}
	sides := [2][]legEnergy{}
	complete := true
	for k, a := range []Arm{ours, baseline} {
		for _, l := range a.Legs {
			bp, ok := benchAt(l, id)
			if !ok {
				continue // the point mismatch says it
			}
			var lp *clocks.LegPoint
			if l.Clock != nil && l.Clock.Points != nil {
				lp = l.Clock.Points[label]
			}
			if lp == nil || lp.Energy == nil {
				why := noWindowWhy(l.Clock, label)
				if _, ok := noWhy[why]; !ok {
					noWindow = append(noWindow, why)
				}
				noWhy[why] = append(noWhy[why], legLabel(a.Engine, l))
				complete = false
				continue
			}
			e := lp.Energy
			if e.Code != "" {
				reason(e.Code, a.Engine, l.Clock.Run, "%s: %s: %s", label, legLabel(a.Engine, l), e.Problem)
			}
			if e.Method == "" {
				complete = false
				continue
			}
			sides[k] = append(sides[k], legEnergy{a.Engine, l, e, bp})
		}
	}
	if len(noWindow) > 0 {
		parts := make([]string, len(noWindow))
		for i, why := range noWindow {
			parts[i] = fmt.Sprintf("%s (%s)", strings.Join(noWhy[why], ", "), why)
		}
		reason(CodeEnergyNoWindow, "", 0, "%s: want a window for the point in every leg to price its energy, found none in %s; record the points with clockgate mark (or vLLM results with their date)",
			label, strings.Join(parts, "; "))
	}
	// One method and one scope across both arms.
	groups := map[string][]string{}
	var order []string
	for _, side := range sides {
		for _, le := range side {
			k := le.e.Method + " (scope " + le.e.Scope + ")"
			if _, ok := groups[k]; !ok {
				order = append(order, k)
			}
			groups[k] = append(groups[k], le.label())
		}
	}
	if len(groups) > 1 {
		parts := make([]string, len(order))
		for i, k := range order {
			parts[i] = fmt.Sprintf("%s in %s", k, strings.Join(groups[k], ", "))
		}
		reason(CodeEnergyMethodMismatch, "", 0, "%s: want one energy method and scope across every leg of %s and %s, found %d: %s; a counter and an integration, or a GPU's and a module's energy, are not one measure: record every leg through one backend (NVML or amd-smi for the counter)",
			label, ours.Engine, baseline.Engine, len(groups), strings.Join(parts, "; "))
	}
	var vals [2][]LegValue
	for k, side := range sides {
		s := &EnergySide{}
		var perOut, perTotal, perReq, mean, idle, bound []float64
		for _, le := range side {
			j := le.e.EnergyJ
			if le.bench.TotalOutputTokens > 0 {
				perOut = append(perOut, j/float64(le.bench.TotalOutputTokens))
				vals[k] = append(vals[k], LegValue{Leg: le.leg.Clock.Name, Value: j / float64(le.bench.TotalOutputTokens)})
			}
			if t := le.bench.TotalOutputTokens + le.bench.TotalInputTokens; t > 0 {
				perTotal = append(perTotal, j/float64(t))
			}
			if le.bench.Completed > 0 {
				perReq = append(perReq, j/float64(le.bench.Completed))
			}
			mean = append(mean, le.e.MeanPowerW())
			if le.e.IdlePowerW != nil {
				idle = append(idle, *le.e.IdlePowerW)
			}
			if le.e.ErrorBoundJ != nil && j > 0 {
				bound = append(bound, *le.e.ErrorBoundJ/j*100)
			}
		}
		s.JPerOutputToken, s.JPerTotalToken, s.JPerRequest = report(Median(perOut)), report(Median(perTotal)), report(Median(perReq))
		s.MeanPowerW, s.IdlePowerW, s.ErrorBoundPct = report(Median(mean)), report(Median(idle)), report(Median(bound))
		if len(side) > 0 {
			m, sc := side[0].e.Method, side[0].e.Scope
			for _, le := range side[1:] {
				if le.e.Method != m || le.e.Scope != sc {
					m, sc = "", ""
				}
			}
			if m != "" {
				s.Method, s.Scope = &m, &sc
			}
		}
		switch {
		case len(side) == 0:
		case k == 0:
			ep.Ours = s
		default:
			ep.Baseline = s
		}
	}
	ep.Test = compareLegs(vals[0], vals[1])
	ep.P = ep.Test.P
	if !complete || len(vals[0]) == 0 || len(vals[1]) == 0 || len(vals[0]) < len(sides[0]) || len(vals[1]) < len(sides[1]) {
		if complete {
			reason(CodeUndefined, "", 0, "%s: no ENERGY ratio: a leg generated no output tokens (total_output_tokens 0), so J per output token is undefined; rerun the point", label)
		}
		return reasons
	}
	o, b := Median(values(vals[0])), Median(values(vals[1]))
	if ep.Value = round4(*o / *b); ep.Value == nil {
		reason(CodeUndefined, "", 0, "%s: no ENERGY ratio: %s / %s = %s / %s J per output token is not a finite ratio > 0 at 4 decimals; check the legs' energy and output tokens",
			label, ours.Engine, baseline.Engine, fmtG(*o), fmtG(*b))
	}
	return reasons
}

// benchAt is the leg's bench point id, if it has one.
func benchAt(l *Leg, id PointID) (BenchPoint, bool) {
	for _, p := range l.Points {
		if p.ID == id {
			return p, true
		}
	}
	return BenchPoint{}, false
}

// noWindowWhy says why a leg has no window for a point.
func noWindowWhy(l *clocks.Leg, label string) string {
	switch {
	case l == nil || !l.Trusted():
		return "its clock evidence is not trusted"
	case l.PointNotes[label] != "":
		return l.PointNotes[label]
	case l.PointSource == "":
		return "no points file (clockgate mark) beside its stream and no vLLM result with a date"
	}
	return "no window for the point"
}

// EnergyGatePass reports whether every comparison's ENERGY family is
// binding-eligible (--strict-energy), and there is at least one.
func EnergyGatePass(cs []*Comparison) bool {
	pass := len(cs) > 0
	for _, c := range cs {
		pass = pass && c.Energy.BindingEligible
	}
	return pass
}
