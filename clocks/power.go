package clocks

import (
	"fmt"
	"math"
	"math/big"
	"slices"
	"sort"
	"strconv"
	"strings"
)

// SwPowerCapBit is the throttle bit of the power controller holding the
// clock at the enforced power limit.
const SwPowerCapBit uint64 = 0x4

// Managed is what a GPU's window says of its power management, for a GPU
// whose stream records enforced_power_limit_w (SPEC §10.1). A busy sample
// is power-managed when its throttle bits hold SwPowerCap, or, where the
// stream carries the counters, when sw_power_cap advanced since the
// GPU's previous sample, or advanced before its next one while its clock
// was below clocks.max.sm. Every other busy sample is free: the clock the
// box gives when nothing limits it.
type Managed struct {
	// LimitW is the first sample's enforced power limit, in W; ModuleLimitW
	// its module's, or nil.
	LimitW       float64
	ModuleLimitW *float64
	// FreeHist counts the free busy samples per SM clock value, in
	// increasing order; FreeSum adds them up.
	FreeHist []Count
	FreeSum  Sum
	// PMHist counts the power-managed busy samples per SM clock value.
	PMHist []Count
	// PMPowerN counts the power-managed samples that carry power_draw_w,
	// and PMMaxPowerW is the most they drew, in W, as read.
	PMPowerN    int
	PMMaxPowerW float64
	// Temp counts busy samples that carry temperature_gpu_c per value in
	// hundredths of a degree C, in increasing order; FirstBusyTempC is the
	// first busy sample's, or nil.
	Temp           []PowerCount
	FirstBusyTempC *float64

	free, pm map[int]int
	temp     map[int64]int
}

// Events is what the driver's clock event counters say of a GPU's
// window: the time each non-benign reason accrued between two samples,
// and the first counter that went backwards.
type Events struct {
	// AccruedUS is, per CounterNames, the µs each counter advanced over the
	// window; FirstLine and LastLine the lines of the first and last rows
	// it advanced into, PrevLine the row before FirstLine.
	AccruedUS [len(CounterNames)]int64
	FirstLine [len(CounterNames)]int
	PrevLine  [len(CounterNames)]int
	LastLine  [len(CounterNames)]int
	// Backwards names the first counter that went backwards, with the
	// lines and values on either side; BackLine is 0 when none did.
	Backwards          string
	BackLine, BackPrev int
	BackFrom, BackTo   int64
	// Missing is the first line after the first that carries no counters,
	// 0 when every line does; Late the first line that carries them when
	// the GPU's first row does not, else 0.
	Missing, Late int

	prev     Counters
	prevLine int
}

// pendingRow is a GPU's last row, kept until the next one says whether
// sw_power_cap advanced after it.
type pendingRow struct {
	sm, max      int
	busy, bitPM  bool
	advancedPrev bool
	hasCounters  bool
	hasPower     bool
	powerW       float64
	// sec and nsec are the row's time, for the point windows it lies in.
	sec, nsec int64
}

// startPower readies the GPU's power bookkeeping from its first row.
func (g *GPUFold) startPower() {
	s := g.First
	if s.EnforcedPowerLimitW != nil {
		g.Managed = &Managed{LimitW: *s.EnforcedPowerLimitW, ModuleLimitW: s.ModuleEnforcedPowerLimitW,
			free: map[int]int{}, pm: map[int]int{}, temp: map[int64]int{}}
	}
	if s.EventCountersUS != nil {
		g.Events = &Events{}
	}
}

// foldPower folds in one row of a GPU that records a limit or counters.
// It reports whether the row is a busy sample known power-managed at its
// own reading (its bits, or sw_power_cap advanced since the previous
// row), for a picture; the fold's classification also looks at the next.
func (g *GPUFold) foldPower(r *Row, line int) bool {
	advanced := false
	if g.Events == nil && r.HasCounters {
		// Counters that begin after the GPU's first row: judged from here,
		// and the change itself is drift.
		g.Events = &Events{Late: line}
	}
	if e := g.Events; e != nil {
		switch {
		case !r.HasCounters:
			if e.Missing == 0 && e.prevLine != 0 {
				e.Missing = line
			}
		case e.prevLine == 0:
			e.prev, e.prevLine = r.Counters, line
		default:
			for i := range CounterNames {
				d := r.Counters.At(i) - e.prev.At(i)
				switch {
				case d < 0 && e.BackLine == 0:
					e.Backwards, e.BackLine, e.BackPrev = CounterNames[i], line, e.prevLine
					e.BackFrom, e.BackTo = e.prev.At(i), r.Counters.At(i)
				case d > 0:
					if e.AccruedUS[i] == 0 {
						e.FirstLine[i], e.PrevLine[i] = line, e.prevLine
					}
					e.AccruedUS[i] += d
					e.LastLine[i] = line
				}
			}
			advanced = r.Counters.SwPowerCap > e.prev.SwPowerCap
			e.prev, e.prevLine = r.Counters, line
		}
	}
	m := g.Managed
	if m == nil {
		return false
	}
	// advanced counts only between two rows that both carry counters.
	advanced = advanced && g.hasPending && g.pending.hasCounters && r.HasCounters
	if g.hasPending {
		g.classify(advanced)
	}
	p := pendingRow{sm: r.SMClockMHz, max: r.ClocksMaxSMMHz, busy: !r.Idle(), bitPM: r.ThrottleBits&SwPowerCapBit != 0,
		hasCounters: r.HasCounters, hasPower: r.HasPower, advancedPrev: advanced, sec: r.Sec, nsec: r.Nsec}
	if r.HasPower {
		p.powerW = r.PowerDrawW
	}
	g.pending, g.hasPending = p, true
	if p.busy && r.HasTemperature {
		m.temp[centi(r.TemperatureGPUC)]++
		if m.FirstBusyTempC == nil {
			// The first busy sample that carries a temperature.
			m.FirstBusyTempC = ptr(r.TemperatureGPUC)
		}
	}
	return p.busy && (p.bitPM || p.advancedPrev)
}

// classify decides the pending row: advancedNext says sw_power_cap
// advanced from it to the GPU's next row.
func (g *GPUFold) classify(advancedNext bool) {
	p, m := &g.pending, g.Managed
	g.hasPending = false
	if !p.busy {
		return
	}
	if p.bitPM || p.advancedPrev || advancedNext && p.sm < p.max {
		g.windows.count(p.sec, p.nsec, p.sm, true)
		m.pm[p.sm]++
		if p.hasPower {
			if m.PMPowerN == 0 || p.powerW > m.PMMaxPowerW {
				m.PMMaxPowerW = p.powerW
			}
			m.PMPowerN++
		}
		return
	}
	g.windows.count(p.sec, p.nsec, p.sm, false)
	m.free[p.sm]++
	m.FreeSum.Add(uint64(p.sm))
}

// settlePower decides the GPU's last row (nothing came after it) and
// moves the counts into Managed's sorted fields.
func (g *GPUFold) settlePower() {
	m := g.Managed
	if m == nil {
		return
	}
	if g.hasPending {
		g.classify(false)
	}
	m.FreeHist, m.PMHist = countsOf(m.free), countsOf(m.pm)
	m.Temp = m.Temp[:0]
	for v, n := range m.temp {
		m.Temp = append(m.Temp, PowerCount{v, n})
	}
	sort.Slice(m.Temp, func(i, j int) bool { return m.Temp[i].MW < m.Temp[j].MW })
}

func countsOf(h map[int]int) []Count {
	vals := make([]int, 0, len(h))
	for v := range h {
		vals = append(vals, v)
	}
	slices.Sort(vals)
	out := make([]Count, len(vals))
	for i, v := range vals {
		out[i] = Count{v, h[v]}
	}
	return out
}

// Free is the GPU's free busy samples: its busy samples where it records
// no limit, or where none was power-managed.
func (g *GPUFold) Free() ([]Count, Sum) {
	if g.Managed == nil {
		return g.Hist, g.SumMHz
	}
	return g.Managed.FreeHist, g.Managed.FreeSum
}

// PowerManaged counts the GPU's power-managed busy samples.
func (g *GPUFold) PowerManaged() int {
	if g.Managed == nil {
		return 0
	}
	n := 0
	for _, c := range g.Managed.PMHist {
		n += c.N
	}
	return n
}

// centi is a temperature in hundredths of a degree, the resolution
// temperatures are compared at (nvidia-smi prints whole degrees).
func centi(c float64) int64 { return int64(math.Round(c * 100)) }

// freeHist is the free busy counts; nil for a nil Managed.
func (m *Managed) freeHist() []Count {
	if m == nil {
		return nil
	}
	return m.FreeHist
}

// limits prints the recorded limits: "700 W", or "700 W, module 900 W".
func (m *Managed) limits() string {
	s := wattsOrAbsent(&m.LimitW)
	if m.ModuleLimitW != nil {
		s += ", module " + wattsOrAbsent(m.ModuleLimitW)
	}
	return s
}

// lowestLimitW is the lowest recorded limit, in W.
func (m *Managed) lowestLimitW() float64 {
	w := m.LimitW
	if m.ModuleLimitW != nil && *m.ModuleLimitW < w {
		w = *m.ModuleLimitW
	}
	return w
}

// decimal is x as the decimal it was read from (the shortest that reads
// back as x), exactly.
func decimal(x float64) *big.Rat {
	r, _ := new(big.Rat).SetString(strconv.FormatFloat(x, 'g', -1, 64))
	return r
}

// underHiddenLimit reports whether w × 100 < HiddenLimitPct × limit,
// exactly, on the decimals as read.
func underHiddenLimit(w, limit float64) bool {
	l := new(big.Rat).Mul(decimal(limit), big.NewRat(HiddenLimitPct, 1))
	return new(big.Rat).Mul(decimal(w), big.NewRat(100, 1)).Cmp(l) < 0
}

// counterBits are the throttle bits of each counter, in CounterNames'
// order: what an instantaneous reading would have shown.
var counterBits = [len(CounterNames)]uint64{SwPowerCapBit, 0x10, 0x20, 0x40, 0x80}

// checkEvents holds a GPU's counters: a non-benign reason that accrued
// time between two samples is clock.throttle even when no sample's bits
// showed it (sw_power_cap is benign only at a recorded limit). seen is the
// union of the busy samples' bits.
func (l *Leg) checkEvents(g *GPUFold, pre string, seen uint64) {
	e := g.Events
	if e == nil {
		return
	}
	var parts []string
	for i, name := range CounterNames {
		if e.AccruedUS[i] == 0 || i == 0 && g.Managed != nil {
			continue
		}
		p := fmt.Sprintf("%s (%s) accrued %d µs (%.3f s), first between lines %d and %d, last at line %d",
			name, ThrottleBitName(counterBits[i]), e.AccruedUS[i], float64(e.AccruedUS[i])/1e6, e.PrevLine[i], e.FirstLine[i], e.LastLine[i])
		if seen&counterBits[i] == 0 {
			p += ", though no busy sample's bits showed it"
		}
		parts = append(parts, p)
	}
	if len(parts) > 0 {
		l.add(CodeThrottle, "%snon-benign clock event counters advanced between samples: %s", pre, strings.Join(parts, "; "))
	}
}

// checkHiddenLimit holds a power-managed GPU's capped draw near a
// recorded limit: a cap far under every one is a limit clockgate does
// not see.
func (l *Leg) checkHiddenLimit(g *GPUFold, pre string, pm int) {
	m := g.Managed
	switch {
	case m.PMPowerN == 0:
		l.add(CodeThrottle, "%s%d power-managed samples carry no power_draw_w, so a cap under every recorded limit (%s) cannot be ruled out; sample power.draw",
			pre, pm, m.limits())
	case underHiddenLimit(m.PMMaxPowerW, m.lowestLimitW()):
		l.add(CodeThrottle, "%spower-managed at most %s W, under %d%% of every recorded limit (%s): a limit clockgate does not see is in force (a module budget shared with the CPU, a power profile)",
			pre, strconv.FormatFloat(m.PMMaxPowerW, 'f', -1, 64), HiddenLimitPct, m.limits())
	}
}

// driftMessages are the GPU's static drift messages: each static field
// that changed, then a counter that went backwards or went missing.
func (g *GPUFold) driftMessages() []string {
	msgs := make([]string, 0, len(g.driftOrder)+1)
	for _, k := range g.driftOrder {
		msgs = append(msgs, g.drift[k])
	}
	if e := g.Events; e != nil {
		if e.BackLine != 0 {
			msgs = append(msgs, fmt.Sprintf("event counter %s went backwards at line %d: %d µs at line %d, then %d µs (the driver was reloaded)",
				e.Backwards, e.BackLine, e.BackFrom, e.BackPrev, e.BackTo))
		}
		if e.Missing != 0 {
			msgs = append(msgs, fmt.Sprintf("event_counters_us absent at line %d, though the window's first sample carries them", e.Missing))
		}
		if e.Late != 0 {
			msgs = append(msgs, fmt.Sprintf("event_counters_us first at line %d, though the window's first sample has none", e.Late))
		}
	}
	return msgs
}
