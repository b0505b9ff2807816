package treegen

import (
	"math"
	"time"

	"github.com/clockgate/clockgate/clocks"
)

// energyGen gives a leg's stream what SPEC §11.3 prices a point's energy
// from: a steady busy power, and the GPU's cumulative energy counter.
type energyGen struct {
	// busyW, when not 0, is every busy sample's power draw in W, without
	// jitter, so that a ratio of two arms' energies is the ratio of their
	// powers.
	busyW float64
	// counter writes energy_mj: the trapezoid of the power from a start
	// of 9e9 mJ, scaled by counterScale (1 when 0), and energy_scope
	// (scope, "gpu" when "").
	counter      bool
	counterScale float64
	scope        string
	// noPower drops power_draw_w from every sample.
	noPower bool
	// resetAt, when not 0, is the sample from which the counter starts
	// again near 0 (a driver reload).
	resetAt int
}

// mustTime is a sample's time in ns since the epoch.
func mustTime(t string) int64 {
	tm, err := time.Parse(time.RFC3339Nano, t)
	if err != nil {
		panic(err)
	}
	return tm.UnixNano()
}

// apply gives the samples their power and counter.
func (e *energyGen) apply(ss []clocks.Sample) {
	scale := e.counterScale
	if scale == 0 {
		scale = 1
	}
	scope := e.scope
	if scope == "" {
		scope = clocks.EnergyScopeGPU
	}
	mj := 9e9
	var prevW float64
	var prevT int64
	for i := range ss {
		s := &ss[i]
		if e.busyW != 0 && !s.Idle() {
			w := e.busyW
			s.PowerDrawW = &w
		}
		w := *s.PowerDrawW
		t := mustTime(s.T)
		if i > 0 {
			mj += (prevW + w) / 2 * float64(t-prevT) / 1e6 * scale
		}
		if i == e.resetAt && e.resetAt != 0 {
			mj = 1234
		}
		prevW, prevT = w, t
		if e.counter {
			v, sc := int64(math.Round(mj)), scope
			s.EnergyMJ, s.EnergyScope = &v, &sc
		}
		if e.noPower {
			s.PowerDrawW = nil
		}
	}
}

// energyLeg gives each leg marked points with inset ends, then e, then fix.
func energyLeg(e energyGen, fix func(*leg)) func(*leg) {
	return func(l *leg) {
		l.clock = profile{min: 1935, med: 1980, max: 1980}
		l.pw = &pointWin{zone: "Etc/UTC", marks: true, inset: true}
		q := e
		l.energy = &q
		if fix != nil {
			fix(l)
		}
	}
}

// energyScenarios are the ENERGY family's trees (SPEC §11.3): vllm-copy
// (vllm again under another name, so that throughput is equal) against
// vllm on one H100 boot, every point marked.
var energyScenarios = []Scenario{
	{Name: "energy-clean",
		About: "vllm-copy draws 673.2 W where vllm draws 612 W (10% more) at equal throughput, both recorded through NVML's energy counter: " +
			"every point's J per output token is 10% higher, ENERGY 1.1 at each point and ESTABLISHED; THROUGHPUT and MEMORY ESTABLISHED",
		build: func(t *tree) {
			t.arm(llama, vllmCopy, 2, h100, bootH1, energyLeg(energyGen{busyW: 673.2, counter: true}, nil))
			t.arm(llama, vllm, 2, h100, bootH1, energyLeg(energyGen{busyW: 612, counter: true}, nil))
		}},
	{Name: "energy-integration",
		About: "energy-clean recorded through nvidia-smi, which has no energy counter: each window's energy is the trapezoid of power.draw, " +
			"ENERGY 1.1 at each point and ESTABLISHED, each side's error bound reported",
		build: func(t *tree) {
			t.arm(llama, vllmCopy, 2, h100, bootH1, energyLeg(energyGen{busyW: 673.2}, nil))
			t.arm(llama, vllm, 2, h100, bootH1, energyLeg(energyGen{busyW: 612}, nil))
		}},
	{Name: "energy-no-window",
		About: "energy-clean without clockgate mark lines, and no vLLM date: no point has a window, so every point is energy.no_window; " +
			"THROUGHPUT and MEMORY ESTABLISHED",
		build: func(t *tree) {
			noMarks := func(l *leg) { l.pw = nil }
			t.arm(llama, vllmCopy, 2, h100, bootH1, energyLeg(energyGen{busyW: 673.2, counter: true}, noMarks))
			t.arm(llama, vllm, 2, h100, bootH1, energyLeg(energyGen{busyW: 612, counter: true}, noMarks))
		}},
	{Name: "energy-missing",
		About: "vllm-copy's legs recorded neither power.draw nor the energy counter: energy.missing at every point; THROUGHPUT and MEMORY ESTABLISHED",
		build: func(t *tree) {
			t.arm(llama, vllmCopy, 2, h100, bootH1, energyLeg(energyGen{busyW: 673.2, noPower: true}, nil))
			t.arm(llama, vllm, 2, h100, bootH1, energyLeg(energyGen{busyW: 612, counter: true}, nil))
		}},
	{Name: "energy-counter-reset",
		About: "vllm-copy r1's energy counter starts again near 0 in the middle of its first point (a driver reload): energy.counter_reset at 1/inf; " +
			"the other points ESTABLISHED",
		build: func(t *tree) {
			t.arm(llama, vllmCopy, 2, h100, bootH1, energyLeg(energyGen{busyW: 673.2, counter: true}, func(l *leg) {
				if l.run == 1 {
					l.energy.resetAt = 20 // inside 1/inf
				}
			}))
			t.arm(llama, vllm, 2, h100, bootH1, energyLeg(energyGen{busyW: 612, counter: true}, nil))
		}},
	{Name: "energy-coverage",
		About: "both arms run 8/inf for 15 busy seconds: its marked window lasts under 20 s, energy.coverage at 8/inf; the other points ESTABLISHED",
		build: func(t *tree) {
			short := func(l *leg) {
				l.busy = derivedBusy(l, 1)
				l.busy[3] = 15
			}
			t.arm(llama, vllmCopy, 2, h100, bootH1, energyLeg(energyGen{busyW: 673.2, counter: true}, short))
			t.arm(llama, vllm, 2, h100, bootH1, energyLeg(energyGen{busyW: 612, counter: true}, short))
		}},
	{Name: "energy-method-mismatch",
		About: "vllm-copy recorded through NVML's energy counter, vllm through nvidia-smi (power.draw only): energy.method_mismatch at every point " +
			"(a counter against an integration), though the values are computed (1.1)",
		build: func(t *tree) {
			t.arm(llama, vllmCopy, 2, h100, bootH1, energyLeg(energyGen{busyW: 673.2, counter: true}, nil))
			t.arm(llama, vllm, 2, h100, bootH1, energyLeg(energyGen{busyW: 612}, nil))
		}},
	{Name: "energy-disagree",
		About: "vllm-copy r2's energy counter runs 8% fast against its power.draw: energy.disagree at every point for that leg (more than 5%)",
		build: func(t *tree) {
			t.arm(llama, vllmCopy, 2, h100, bootH1, energyLeg(energyGen{busyW: 673.2, counter: true}, func(l *leg) {
				if l.run == 2 {
					l.energy.counterScale = 1.08
				}
			}))
			t.arm(llama, vllm, 2, h100, bootH1, energyLeg(energyGen{busyW: 612, counter: true}, nil))
		}},
}
