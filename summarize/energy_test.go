package summarize_test

import (
	"strings"
	"testing"

	"github.com/clockgate/clockgate/clocks"
	"github.com/clockgate/clockgate/ratio"
	"github.com/clockgate/clockgate/summarize"
)

// The energy trees' THROUGHPUT and MEMORY verdicts: every one
// ESTABLISHED, the gate passing; the ENERGY family never enters it.
func init() {
	for _, name := range []string{"energy-clean", "energy-integration", "energy-no-window", "energy-missing",
		"energy-counter-reset", "energy-coverage", "energy-method-mismatch", "energy-disagree"} {
		newScenarioWants[name] = wantScenario{
			comparisons: []wantRatio{{model: llama, ours: "vllm-copy", throughput: true, memory: true}},
			gatePass:    true,
		}
	}
}

// wantEnergyPoint is one ENERGY point's expected verdict: its value
// (within 0.002 of it, 0 for null), binding, and the codes of its energy
// reasons with a fragment of the first one's message.
type wantEnergyPoint struct {
	value    float64
	binding  bool
	codes    []string
	fragment string
}

var energyWants = map[string][4]wantEnergyPoint{
	"energy-clean":       {{1.1, true, nil, ""}, {1.1, true, nil, ""}, {1.1, true, nil, ""}, {1.1, true, nil, ""}},
	"energy-integration": {{1.1, true, nil, ""}, {1.1, true, nil, ""}, {1.1, true, nil, ""}, {1.1, true, nil, ""}},
	"energy-no-window": {
		{0, false, []string{ratio.CodeEnergyNoWindow}, "1/inf: want a window for the point in every leg to price its energy, found none in vllm-copy r1, vllm-copy r2, vllm r1, vllm r2 (no points file"},
		{0, false, []string{ratio.CodeEnergyNoWindow}, ""}, {0, false, []string{ratio.CodeEnergyNoWindow}, ""}, {0, false, []string{ratio.CodeEnergyNoWindow}, ""}},
	"energy-missing": {
		{0, false, []string{ratio.CodeEnergyMissing, ratio.CodeEnergyMissing}, "1/inf: vllm-copy r1: neither energy_mj nor power_draw_w on every sample around the window"},
		{0, false, []string{ratio.CodeEnergyMissing, ratio.CodeEnergyMissing}, ""},
		{0, false, []string{ratio.CodeEnergyMissing, ratio.CodeEnergyMissing}, ""},
		{0, false, []string{ratio.CodeEnergyMissing, ratio.CodeEnergyMissing}, ""}},
	"energy-counter-reset": {
		{0, false, []string{ratio.CodeEnergyCounterReset}, "1/inf: vllm-copy r1: energy_mj went down from 9012794839 to 1234 mJ (line 20 to line 21)"},
		{1.1, true, nil, ""}, {1.1, true, nil, ""}, {1.1, true, nil, ""}},
	"energy-coverage": {{1.1, true, nil, ""}, {1.1, true, nil, ""}, {1.1, true, nil, ""},
		{0, false, repeat(ratio.CodeEnergyCoverage, 4), "8/inf: vllm-copy r1: the window lasts 13.199 s < 20 s: too short to price its energy"}},
	"energy-method-mismatch": {
		{1.1, false, []string{ratio.CodeEnergyMethodMismatch}, "1/inf: want one energy method and scope across every leg of vllm-copy and vllm, found 2: counter (scope gpu) in vllm-copy r1, vllm-copy r2; integration (scope gpu) in vllm r1, vllm r2"},
		{1.1, false, []string{ratio.CodeEnergyMethodMismatch}, ""}, {1.1, false, []string{ratio.CodeEnergyMethodMismatch}, ""}, {1.1, false, []string{ratio.CodeEnergyMethodMismatch}, ""}},
	"energy-disagree": {
		{1.144, false, []string{ratio.CodeEnergyDisagree}, "1/inf: vllm-copy r2: energy by counter 53961.369 J and by power 49964.231 J differ by 7.41% > 5% of the counter"},
		{1.144, false, []string{ratio.CodeEnergyDisagree}, ""}, {1.144, false, []string{ratio.CodeEnergyDisagree}, ""}, {1.144, false, []string{ratio.CodeEnergyDisagree}, ""}},
}

// TestEnergyScenarios pins each energy tree's ENERGY family point by
// point, apart from its golden files: the clean pair 10% more power at
// equal throughput is ENERGY 1.1 and ESTABLISHED, and each reason is
// reached where its tree puts it, with its message.
func TestEnergyScenarios(t *testing.T) {
	for name, want := range energyWants {
		t.Run(name, func(t *testing.T) {
			s, err := summarize.Summarize(treesDir+"/"+name, summarize.Options{Baseline: "vllm"})
			if err != nil {
				t.Fatal(err)
			}
			if len(s.Comparisons) != 1 {
				t.Fatalf("%d comparisons", len(s.Comparisons))
			}
			c := s.Comparisons[0]
			e := c.Energy
			all := true
			for i, w := range want {
				p := e.Points[i]
				var codes []string
				first := ""
				for _, r := range p.Reasons {
					if strings.HasPrefix(r.Code, "energy.") {
						codes = append(codes, r.Code)
						if first == "" {
							first = r.Message
						}
					}
				}
				switch {
				case w.value == 0 && p.Value != nil:
					t.Errorf("%s: value %v, want null", p.Point, *p.Value)
				case w.value != 0 && (p.Value == nil || *p.Value < w.value-0.002 || *p.Value > w.value+0.002):
					t.Errorf("%s: value %v, want %v", p.Point, p.Value, w.value)
				}
				if p.BindingEligible != w.binding || strings.Join(codes, " ") != strings.Join(w.codes, " ") {
					t.Errorf("%s: binding %v codes %v, want %v %v", p.Point, p.BindingEligible, codes, w.binding, w.codes)
				}
				if w.fragment != "" && !strings.Contains(first, w.fragment) {
					t.Errorf("%s: first message %q lacks %q", p.Point, first, w.fragment)
				}
				all = all && w.binding
			}
			if e.BindingEligible != all {
				t.Errorf("family binding %v, want %v", e.BindingEligible, all)
			}
			if !c.Throughput.BindingEligible || !c.Memory.BindingEligible || !s.GatePass {
				t.Errorf("THROUGHPUT %v MEMORY %v gate %v: the ENERGY family must move none of them", c.Throughput.BindingEligible, c.Memory.BindingEligible, s.GatePass)
			}
		})
	}
}

// In the clean pair each arm's side says its method, scope and powers:
// 673.2 W against 612 W by counter, the idle power reported and never
// subtracted.
func TestEnergyCleanSides(t *testing.T) {
	s, err := summarize.Summarize(treesDir+"/energy-clean", summarize.Options{Baseline: "vllm"})
	if err != nil {
		t.Fatal(err)
	}
	p := s.Comparisons[0].Energy.Points[0]
	o, b := p.Ours, p.Baseline
	if *o.Method != clocks.MethodCounter || *o.Scope != "gpu" || *o.MeanPowerW != 673.2 || *b.MeanPowerW != 612 || o.IdlePowerW == nil || *o.IdlePowerW > 80 {
		t.Fatalf("ours %+v baseline %+v", o, b)
	}
	if p.P == nil || *p.P != 0.3333 {
		t.Errorf("p %v, want 0.3333 (two legs against two, all apart)", p.P)
	}
}
