package clocks

import (
	"fmt"
	"math"
	"strconv"
	"time"
)

// Energy over a point window (SPEC §11.3). The fold walks each GPU's rows
// in order; every step from one row to the next is a segment of time, and
// each point window takes the part of every segment that lies inside it:
// the energy counter's difference over that part (the counter read
// linearly between the two rows), and the trapezoid of power_draw_w over
// it (power read linearly too). A window's ends are so interpolated
// between the samples around them, and no second pass over the stream is
// needed.

// The methods of a window's energy, as summary.json names them.
const (
	MethodCounter     = "counter"
	MethodIntegration = "integration"
)

const (
	// MaxEndGapIntervals bounds, in sampler intervals, how far apart the
	// two samples of a GPU around each end of a point window may lie: the
	// end's energy is interpolated between them, and the sampler's own
	// coverage bound is three intervals (MaxGapIntervals).
	MaxEndGapIntervals = MaxGapIntervals

	// MinEnergyWindowNS is the shortest point window whose energy is
	// priced: at 1 Hz an end's interpolation can be off by up to half a
	// second of the power's swing, about 2.5% of a 20 s window at each
	// end; shorter windows say more about the sampling than the engine.
	MinEnergyWindowNS = 20 * int64(time.Second)

	// StallNS is how long an energy counter may stand still over busy
	// samples drawing more than StallPowerW before it is taken for a
	// counter that stopped counting (energy.counter_reset): NVML updates
	// the counter far more often than once a second.
	StallNS = 5 * int64(time.Second)

	// StallPowerW is the power, in W, above which a busy GPU's energy
	// counter must advance.
	StallPowerW = 100.0

	// MaxEnergyDisagreePct bounds, in percent of the counter's energy, how
	// far the trapezoid of power_draw_w may sit from the counter over one
	// window where both are recorded: power.draw is a one-second mean on
	// Ampere (not GA100) and newer, so the two agree within a few percent
	// on a steady load; more is a counter or a power reading that is not
	// what it says.
	MaxEnergyDisagreePct = 5.0
)

// endGap is what a GPU's rows say of one end of a window: the time
// between the two samples around it (0 where a sample lies on it), and
// the power's swing between them.
type endGap struct {
	have  bool
	gapNS int64
	// swingW is |power after − power before| where both carry power.
	swingW   float64
	hasSwing bool
}

// GPUEnergy is what one GPU's rows say of one point window's energy.
type GPUEnergy struct {
	// Rows counts the rows that bound or lie in the window; CounterRows
	// and PowerRows those among them with energy_mj and power_draw_w.
	Rows, CounterRows, PowerRows int
	// CounterJ and PowerJ are the window's energy by the counter and by
	// the trapezoid of power, in J, over the segments that had them.
	CounterJ, PowerJ float64
	// from and to are the window's ends as the GPU's rows bound them.
	from, to endGap
	// Reset, when not "", says where the counter went down or stood
	// still under load inside the window.
	Reset string
	// The counter's current run of busy samples above StallPowerW at one
	// value.
	runFrom, runVal int64
	runLine         int
	running         bool
}

// energyRow is what the fold keeps of a GPU's previous row for energy.
type energyRow struct {
	t                  int64
	powerW             float64
	energyMJ           int64
	hasPower, hasCount bool
	line               int
}

// foldEnergy adds the step from the GPU's previous row to r (read at
// line) to each point window it touches, and counts r's idle power.
func (g *GPUFold) foldEnergy(r *Row, line int, spans []Span) {
	cur := energyRow{t: r.Sec*1e9 + r.Nsec, powerW: r.PowerDrawW, energyMJ: r.EnergyMJ, hasPower: r.HasPower, hasCount: r.HasEnergy, line: line}
	if r.Idle() && r.HasPower {
		g.IdlePowerSum += r.PowerDrawW
		g.IdlePowerN++
	}
	if len(spans) == 0 {
		return
	}
	if g.Energy == nil {
		g.Energy = make([]GPUEnergy, len(spans))
	}
	prev, had := g.eprev, g.ehave
	g.eprev, g.ehave = cur, true
	for i, s := range spans {
		e := &g.Energy[i]
		if cur.t >= s.From && cur.t <= s.To {
			e.stall(r, cur, line)
		}
		if !had {
			if cur.t >= s.From && cur.t <= s.To {
				e.count(cur) // the GPU's first row lies inside: no sample before the start
			}
			continue
		}
		e.segment(prev, cur, s)
	}
}

// count counts one row that bounds or lies in the window.
func (e *GPUEnergy) count(r energyRow) {
	e.Rows++
	if r.hasCount {
		e.CounterRows++
	}
	if r.hasPower {
		e.PowerRows++
	}
}

// segment adds the part of the step from a to b that lies in the span s.
func (e *GPUEnergy) segment(a, b energyRow, s Span) {
	if b.t < s.From || a.t > s.To || b.t <= a.t {
		return
	}
	// b bounds or lies in the window; a does too, counted with the
	// first step that reaches it.
	if e.Rows == 0 {
		e.count(a)
	}
	e.count(b)
	for _, end := range [...]struct {
		at int64
		g  *endGap
	}{{s.From, &e.from}, {s.To, &e.to}} {
		if end.at < a.t || end.at > b.t {
			continue
		}
		gap := b.t - a.t
		if end.at == a.t || end.at == b.t {
			gap = 0
		}
		if !end.g.have || gap < end.g.gapNS {
			*end.g = endGap{have: true, gapNS: gap}
			if gap > 0 && a.hasPower && b.hasPower {
				end.g.swingW, end.g.hasSwing = math.Abs(b.powerW-a.powerW), true
			}
		}
	}
	lo, hi := max(a.t, s.From), min(b.t, s.To)
	if hi <= lo {
		return
	}
	span := float64(b.t - a.t)
	at := func(x0, x1 float64, t int64) float64 { return x0 + (x1-x0)*float64(t-a.t)/span }
	if a.hasPower && b.hasPower {
		p0, p1 := at(a.powerW, b.powerW, lo), at(a.powerW, b.powerW, hi)
		e.PowerJ += (p0 + p1) / 2 * float64(hi-lo) / 1e9
	}
	if a.hasCount && b.hasCount {
		d := b.energyMJ - a.energyMJ
		if d < 0 {
			if e.Reset == "" {
				e.Reset = fmt.Sprintf("energy_mj went down from %d to %d mJ (line %d to line %d)", a.energyMJ, b.energyMJ, a.line, b.line)
			}
			return
		}
		e.CounterJ += float64(d) / 1e3 * float64(hi-lo) / span
	}
}

// stall follows the counter over the window's busy samples above
// StallPowerW: a counter that stands still for StallNS or more under
// load is not counting.
func (e *GPUEnergy) stall(r *Row, cur energyRow, line int) {
	if !cur.hasCount || !cur.hasPower || r.Idle() || !(cur.powerW > StallPowerW) {
		e.running = false
		return
	}
	if !e.running || cur.energyMJ != e.runVal {
		e.runFrom, e.runVal, e.runLine, e.running = cur.t, cur.energyMJ, line, true
		return
	}
	if d := cur.t - e.runFrom; d >= StallNS && e.Reset == "" {
		e.Reset = fmt.Sprintf("energy_mj stood at %d mJ for %s s over busy samples above %g W (line %d to line %d); it must advance within %d s",
			e.runVal, fmtSeconds(d), StallPowerW, e.runLine, line, StallNS/int64(time.Second))
	}
}

// fmtSeconds prints nanoseconds as seconds, to the millisecond.
func fmtSeconds(ns int64) string {
	return strconv.FormatFloat(math.Round(float64(ns)/1e6)/1e3, 'f', -1, 64)
}

// LegEnergy is one leg's energy over one point window, its GPUs summed
// (SPEC §11.3).
type LegEnergy struct {
	// Method is MethodCounter or MethodIntegration; "" when the leg has
	// neither (Problem then says why).
	Method string
	// Scope is the counter's energy_scope ("gpu", "module"); "gpu" for
	// integration, which is the board's power.
	Scope string
	// EnergyJ is the window's energy by Method, in J; DurationS the
	// window's length, in s.
	EnergyJ   float64
	DurationS float64
	// CounterJ and IntegralJ are the energy each way where every GPU
	// has it, for energy.disagree.
	CounterJ, IntegralJ *float64
	// ErrorBoundJ is the integration's error bound (half the gap around
	// each end times the power's swing there, over the GPUs); nil where
	// some end's power is not known.
	ErrorBoundJ *float64
	// IdlePowerW is the leg's idle power: the sum over its GPUs of each
	// one's mean power over its idle samples, in W; nil where some GPU
	// has no idle sample with power.
	IdlePowerW *float64
	// Code and Problem, when set, are the energy reason that stands for
	// the leg at this point and its message (without the leg's name).
	Code, Problem string
}

// MeanPowerW is the window's mean power over the leg's GPUs, in W.
func (e *LegEnergy) MeanPowerW() float64 { return e.EnergyJ / e.DurationS }

// The energy reason codes (SPEC §11.3), about a ratio's ENERGY family.
const (
	CodeEnergyNoWindow       = "energy.no_window"
	CodeEnergyMissing        = "energy.missing"
	CodeEnergyCounterReset   = "energy.counter_reset"
	CodeEnergyCoverage       = "energy.coverage"
	CodeEnergyMethodMismatch = "energy.method_mismatch"
	CodeEnergyDisagree       = "energy.disagree"
)

// legEnergy computes a trusted leg's energy over window i of its fold,
// the span s, with the sampler's interval intervalS.
func (l *Leg) legEnergy(i int, s Span) *LegEnergy {
	f := l.Fold
	iv := l.Record.Window.IntervalS
	le := &LegEnergy{DurationS: float64(s.To-s.From) / 1e9, Scope: EnergyScopeGPU}
	le.IdlePowerW = idlePower(f)
	problem := func(code, format string, args ...any) *LegEnergy {
		if le.Code == "" {
			// A message without numbers is the constant itself: the same
			// reason on every leg and point of a large tree costs no copy.
			le.Code, le.Problem = code, format
			if len(args) > 0 {
				le.Problem = fmt.Sprintf(format, args...)
			}
		}
		return le
	}
	multi := len(f.GPUs) > 1
	gpus := make([]GPUEnergy, len(f.GPUs))
	counter, power := true, true
	scope := ""
	for k, g := range f.GPUs {
		if i < len(g.Energy) {
			gpus[k] = g.Energy[i]
		}
		e := &gpus[k]
		counter = counter && e.CounterRows > 0 && e.CounterRows == e.Rows
		power = power && e.PowerRows > 0 && e.PowerRows == e.Rows
		if scope == "" && g.First != nil && g.First.EnergyScope != nil {
			scope = *g.First.EnergyScope
		}
	}
	if !counter && !power {
		for k, g := range f.GPUs {
			if e := gpus[k]; e.CounterRows > 0 && e.CounterRows < e.Rows {
				return problem(CodeEnergyMissing, "%senergy_mj on %d of the %d samples around the window: a counter that stops answering mid-window is refused; record the leg again (the sampler refuses such a reading)",
					gpuPrefix(multi, g.Index), e.CounterRows, e.Rows)
			}
		}
		return problem(CodeEnergyMissing, "neither energy_mj nor power_draw_w on every sample around the window: neither a counter nor power prices it; record the leg with power.draw (every backend) or the energy counter (NVML, amd-smi)")
	}
	var cj, pj, bound float64
	boundOK := true
	limit := float64(MaxEndGapIntervals) * iv
	for k, g := range f.GPUs {
		e, pre := gpus[k], gpuPrefix(multi, g.Index)
		if counter && e.Reset != "" {
			return problem(CodeEnergyCounterReset, "%s%s; the counter cannot price the window: record the leg again, or on a driver whose counter counts",
				pre, e.Reset)
		}
		for _, end := range []struct {
			name, side string
			at         int64
			g          endGap
		}{{"start", "before", s.From, e.from}, {"end", "after", s.To, e.to}} {
			if !end.g.have {
				return problem(CodeEnergyCoverage, "%sno sample at or %s the window's %s (%s): want one sample on each side of it within %d × interval_s %v s = %s s; mark the point inside the sampler's window",
					pre, end.side, end.name, fmtNS(end.at), MaxEndGapIntervals, iv, fmtFloat(limit))
			}
			if end.g.gapNS > int64(math.Round(limit*1e9)) {
				return problem(CodeEnergyCoverage, "%sthe samples around the window's %s (%s) lie %s s apart > %d × interval_s %v s = %s s: the end's energy cannot be interpolated; the sampler missed readings there",
					pre, end.name, fmtNS(end.at), fmtSeconds(end.g.gapNS), MaxEndGapIntervals, iv, fmtFloat(limit))
			}
			if end.g.gapNS > 0 {
				if end.g.hasSwing {
					bound += float64(end.g.gapNS) / 2e9 * end.g.swingW
				} else {
					boundOK = false
				}
			}
		}
		cj += e.CounterJ
		pj += e.PowerJ
	}
	if d := s.To - s.From; d < MinEnergyWindowNS {
		return problem(CodeEnergyCoverage, "the window lasts %s s < %d s: too short to price its energy; run the point longer (more prompts)",
			fmtSeconds(d), MinEnergyWindowNS/int64(time.Second))
	}
	if boundOK {
		le.ErrorBoundJ = ptr(bound)
	}
	if !counter {
		le.Method, le.EnergyJ = MethodIntegration, pj
		le.IntegralJ = ptr(pj)
		return le
	}
	if scope == "" {
		scope = EnergyScopeGPU
	}
	le.Method, le.EnergyJ, le.Scope = MethodCounter, cj, scope
	le.CounterJ = ptr(cj)
	if power {
		le.IntegralJ = ptr(pj)
		if math.Abs(cj-pj)*100 > MaxEnergyDisagreePct*cj {
			return problem(CodeEnergyDisagree, "energy by counter %s J and by power %s J differ by %s%% > %g%% of the counter over the window: one of the two is not what it says; check the driver's energy counter and power.draw (a one-second mean on Ampere and newer, instantaneous before)",
				fmtJ(cj), fmtJ(pj), fmtPct(cj, pj), MaxEnergyDisagreePct)
		}
	}
	return le
}

// gpuPrefix names a GPU in a leg of several: "GPU 1: ".
func gpuPrefix(multi bool, index int) string {
	if !multi {
		return ""
	}
	return fmt.Sprintf("GPU %d: ", index)
}

// fmtJ prints joules to the millijoule.
func fmtJ(j float64) string { return strconv.FormatFloat(math.Round(j*1e3)/1e3, 'f', -1, 64) }

// idlePower is the leg's idle power: the sum over its GPUs of each one's
// mean power_draw_w over its idle samples; nil where a GPU has none.
func idlePower(f *Fold) *float64 {
	sum := 0.0
	for _, g := range f.GPUs {
		if g.IdlePowerN == 0 {
			return nil
		}
		sum += g.IdlePowerSum / float64(g.IdlePowerN)
	}
	return ptr(sum)
}

func fmtFloat(x float64) string { return strconv.FormatFloat(x, 'f', -1, 64) }

// fmtPct prints |a − b| / a in percent, to two decimals.
func fmtPct(a, b float64) string {
	if a == 0 {
		return "∞"
	}
	return strconv.FormatFloat(math.Abs(a-b)/a*100, 'f', 2, 64)
}
