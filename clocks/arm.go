package clocks

import (
	"fmt"
	"math"
	"sort"
	"strings"
)

// Side is one arm's part of a clock block. For an arm of several GPUs per
// leg, its numbers are over every GPU's busy samples together, and GPUs
// gives each GPU position's own.
type Side struct {
	Engine string `json:"engine"`
	// BootIDs lists every boot the arm's trusted legs ran on, sorted.
	BootIDs []string `json:"boot_ids"`
	ClockStats
	// Legs counts the arm's legs, trusted or not.
	Legs int `json:"legs"`
	// GPUs are the arm's GPU positions (the legs' GPUs in index order),
	// when its legs sampled several GPUs.
	GPUs []GPUSide `json:"gpus,omitempty"`
	// Host sums up the host of the arm's trusted legs that recorded one
	// (SPEC §12.2), for the observed lines; never written to JSON.
	Host HostSide `json:"-"`
}

// GPUSide is one GPU position of an arm: the position's GPU in the arm's
// first trusted leg, and its clock over every trusted leg.
type GPUSide struct {
	Position int    `json:"position"`
	GPUIndex int    `json:"gpu_index"`
	GPUUUID  string `json:"gpu_uuid"`
	// Host and Role are the position's host and its role, for an arm of
	// multi-host legs (SPEC §12.3); "" otherwise.
	Host string `json:"host,omitempty"`
	Role string `json:"role,omitempty"`
	ClockStats
}

// ClockStats are the clock numbers of merged busy samples: an arm's, or
// one of its GPU positions'.
type ClockStats struct {
	// MedianMHz is the median SM clock over the union of the trusted legs'
	// busy samples, in MHz; nil when the arm has no trusted leg.
	MedianMHz *float64 `json:"median_mhz"`
	// MeanMHz is the mean of the same samples, in MHz, to 0.01.
	MeanMHz *float64 `json:"mean_mhz"`
	// PctOfMax is MedianMHz as a percentage of clocks.max.sm.
	PctOfMax *float64 `json:"pct_of_max"`
	// SpreadPct is (max − min) / median × 100 over the same union.
	SpreadPct *float64 `json:"spread_pct"`
	// PowerW is the median power_draw_w over the busy samples that carry
	// one, in watts; nil where power was not sampled. It is reported,
	// never a gate term.
	PowerW              *float64 `json:"power_w"`
	BusySamples         int      `json:"busy_samples"`
	IdleSamplesExcluded int      `json:"idle_samples_excluded"`
	Power
}

// Power is what an arm's power management looked like, for arms whose
// legs record enforced_power_limit_w (SPEC §10.1); every field is absent
// otherwise. It is reported, never a gate term: the power-managed share
// is the engines' own draw under one limit. Where an arm has
// power-managed samples, ClockStats' median, mean and spread are its free
// samples'.
type Power struct {
	// BusyMedianMHz is the median SM clock over every busy sample, free
	// and power-managed.
	BusyMedianMHz *float64 `json:"busy_median_mhz,omitempty"`
	// FreeSamples counts the free busy samples.
	FreeSamples *int `json:"free_samples,omitempty"`
	// PowerManagedPct is the power-managed share of busy samples, in
	// percent to 0.01.
	PowerManagedPct *float64 `json:"power_managed_pct,omitempty"`
	// PowerManagedMedianMHz is the median SM clock of the power-managed
	// samples; nil when there are none.
	PowerManagedMedianMHz *float64 `json:"power_managed_median_mhz,omitempty"`
	// EnforcedPowerLimitW is the legs' enforced power limit, in W, when
	// they share one.
	EnforcedPowerLimitW *float64 `json:"enforced_power_limit_w,omitempty"`
	// TemperatureC is the median temperature_gpu_c over busy samples.
	TemperatureC *float64 `json:"temperature_c,omitempty"`
}

// Arm is every leg of one (model, engine), merged.
type Arm struct {
	Engine string
	Legs   []*Leg
	// LegReasons, when not nil, holds every reason of each of Legs (bench
	// and memory ones too, which a caller reading more evidence knows of):
	// a leg's leg.ineligible names all their codes. Nil means the legs'
	// clock reasons.
	LegReasons [][]Reason
	Side       Side
	// Reasons are the arm checks that stand; Caveats the ones the
	// cross-boot override waived.
	Reasons []Reason
	Caveats []Reason

	// gpus are the merged GPU positions; all merges them all.
	gpus []*armGPU
	all  armGPU
	// multi is true when the legs sampled several GPUs.
	multi bool
	boots map[string][]string
}

// armGPU is one GPU position merged over an arm's trusted legs.
type armGPU struct {
	index      int
	uuid       string
	host, role string
	hist       map[int]int
	sumMHz     Sum
	idle       int
	powerMW    map[int64]int
	// static maps each STATIC_FIELDS name to its printed values and the
	// trusted legs that carry each.
	static map[string]map[string][]string
	// maxSM holds the legs' clocks.max.sm values, in MHz.
	maxSM map[int]bool
	legs  int
	// free counts the free busy samples per clock (every busy sample of a
	// leg that records no limit), freeSum adds them; pm counts the
	// power-managed ones. managed says some leg records a limit; limits
	// holds the legs' enforced limits, temp their busy temperatures in
	// hundredths of a °C, firstTemps each leg's first busy temperature.
	free       map[int]int
	freeSum    Sum
	pm         map[int]int
	managed    bool
	limits     map[float64]bool
	temp       map[int64]int
	firstTemps []int64
}

func newArmGPU() *armGPU {
	return &armGPU{hist: map[int]int{}, powerMW: map[int64]int{}, static: map[string]map[string][]string{}, maxSM: map[int]bool{},
		free: map[int]int{}, pm: map[int]int{}, limits: map[float64]bool{}, temp: map[int64]int{}}
}

func (g *armGPU) add(f *GPUFold, rec *GPU, leg string) {
	for _, c := range f.Hist {
		g.hist[c.V] += c.N
	}
	for _, p := range f.Power {
		g.powerMW[p.MW] += p.N
	}
	g.sumMHz.AddSum(f.SumMHz)
	g.idle += f.Idle
	free, freeSum := f.Free()
	for _, c := range free {
		g.free[c.V] += c.N
	}
	g.freeSum.AddSum(freeSum)
	if m := f.Managed; m != nil {
		g.managed = true
		g.limits[m.LimitW] = true
		for _, c := range m.PMHist {
			g.pm[c.V] += c.N
		}
		for _, t := range m.Temp {
			g.temp[t.MW] += t.N
		}
		if m.FirstBusyTempC != nil {
			g.firstTemps = append(g.firstTemps, centi(*m.FirstBusyTempC))
		}
	}
	g.maxSM[rec.ClocksMaxSMMHz] = true
	for i, v := range rec.static() {
		k := staticNames[i]
		if k == energyScopeName && v == absent {
			// A leg recorded without the counter (nvidia-smi) agrees with
			// one recorded with it: that is the ENERGY family's
			// energy.method_mismatch, not the box's.
			continue
		}
		if g.static[k] == nil {
			g.static[k] = map[string][]string{}
		}
		g.static[k][v] = append(g.static[k][v], leg)
	}
	g.legs++
}

// stats are the position's numbers, as a side reports them.
func (g *armGPU) stats() ClockStats {
	busy := summarizeMap(g.hist)
	out := ClockStats{BusySamples: busy.n, IdleSamplesExcluded: g.idle}
	if g.managed {
		out.Power = g.power(busy)
	}
	// The gated figures are the free samples': every busy sample where no
	// leg was power-managed.
	st := summarizeMap(g.free)
	if st.n == 0 {
		return out
	}
	out.MedianMHz = ptr(float64(st.median2) / 2)
	out.MeanMHz = ptr(round2(g.freeSum.Float() / float64(st.n)))
	out.SpreadPct = ptr(round2(spreadPct(int64(st.min), int64(st.max), st.median2)))
	if len(g.maxSM) == 1 {
		for mx := range g.maxSM {
			out.PctOfMax = ptr(round2(*out.MedianMHz / float64(mx) * 100))
		}
	}
	if m, ok := medianOf(g.powerMW); ok {
		out.PowerW = ptr(m / 1000)
	}
	return out
}

// power is the position's power management, as a side reports it.
func (g *armGPU) power(busy hist) Power {
	var p Power
	if busy.n > 0 {
		p.BusyMedianMHz = ptr(float64(busy.median2) / 2)
	}
	pm := summarizeMap(g.pm)
	p.FreeSamples = ptr(busy.n - pm.n)
	if busy.n > 0 {
		p.PowerManagedPct = ptr(round2(float64(pm.n) * 100 / float64(busy.n)))
	}
	if pm.n > 0 {
		p.PowerManagedMedianMHz = ptr(float64(pm.median2) / 2)
	}
	if len(g.limits) == 1 {
		for w := range g.limits {
			p.EnforcedPowerLimitW = ptr(w)
		}
	}
	if m, ok := medianOf(g.temp); ok {
		p.TemperatureC = ptr(round2(m / 100))
	}
	return p
}

// powerManaged reports whether some leg had power-managed samples here.
func (g *armGPU) powerManaged() bool { return len(g.pm) > 0 }

// medianOf is the median of values counted in h; the mean of the middle
// two of an even count.
func medianOf(h map[int64]int) (float64, bool) {
	n, _, _, a, b := middleOfMap(h)
	return (float64(a) + float64(b)) / 2, n > 0
}

// reason is a reason about the arm.
func (a *Arm) reason(code, format string, args ...any) Reason {
	return Reason{Code: code, Message: fmt.Sprintf(format, args...), Scope: ScopeArm, Engine: a.Engine}
}

// position names GPU position k of the arm in a message, for an arm of
// several GPUs per leg.
func (a *Arm) position(k int) string {
	if !a.multi {
		return ""
	}
	if g := a.gpus[k]; g.host != "" {
		return fmt.Sprintf("GPU position %d (host %s%s, GPU %d): ", k, g.host, roleNote(g.role), g.index)
	}
	return fmt.Sprintf("GPU position %d (GPU %d): ", k, a.gpus[k].index)
}

// Merge folds legs into an arm and runs the arm checks: one boot (waivable),
// one set of GPUs and of STATIC_FIELDS, and per GPU position the merged
// spread over the union of the trusted legs' busy samples when two or more
// legs are trusted.
func Merge(engine string, legs []*Leg, allowCrossBoot bool) *Arm {
	a := &Arm{Engine: engine, Legs: legs, boots: map[string][]string{}}
	a.all = *newArmGPU()
	a.Side = Side{Engine: engine, BootIDs: []string{}, Legs: len(legs)}
	gpuSets := map[string][]string{}
	trusted := 0
	for _, l := range legs {
		if !l.Trusted() {
			continue
		}
		if l.Fold.shed {
			// Its counts are gone: merging it would count nothing.
			panic("clocks: Merge of leg " + l.Name + ", whose fold was shed")
		}
		trusted++
		a.boots[l.Record.BootID] = append(a.boots[l.Record.BootID], l.Name)
		var uuids []string
		for k, g := range l.Fold.GPUs {
			if k == len(a.gpus) {
				ag := newArmGPU()
				ag.index, ag.uuid = g.Index, g.First.GPUUUID
				ag.host, ag.role = l.GPUHost(k)
				a.gpus = append(a.gpus, ag)
			}
			a.gpus[k].add(g, &l.Record.GPUs[k], l.Name)
			a.all.add(g, &l.Record.GPUs[k], l.Name)
			uuids = append(uuids, fmt.Sprintf("%q", g.First.GPUUUID))
		}
		a.multi = a.multi || len(l.Fold.GPUs) > 1
		key := "[" + strings.Join(uuids, " ") + "]"
		gpuSets[key] = append(gpuSets[key], l.Name)
	}
	a.Side.BootIDs = sortedKeys(a.boots)
	a.Side.ClockStats = a.all.stats()
	if a.multi {
		for k, g := range a.gpus {
			a.Side.GPUs = append(a.Side.GPUs, GPUSide{Position: k, GPUIndex: g.index, GPUUUID: g.uuid, Host: g.host, Role: g.role, ClockStats: g.stats()})
		}
	}
	if len(a.boots) > 1 {
		r := a.reason(CodeStraddledBoot, "arm %s spans %d boots: %s", engine, len(a.boots), describeGroups(a.boots))
		if allowCrossBoot {
			r.Waived = true
			a.Caveats = append(a.Caveats, r)
		} else {
			a.Reasons = append(a.Reasons, r)
		}
	}
	if len(gpuSets) > 1 && (a.multi || len(a.gpus) > 1) {
		a.Reasons = append(a.Reasons, a.reason(CodeStaticMismatch,
			"arm %s legs sample different GPUs: %s; want every leg of an arm on the same GPUs", engine, describeGroups(gpuSets)))
	} else {
		var drift []string
		for k, g := range a.gpus {
			for _, name := range staticNames {
				if vals := g.static[name]; len(vals) > 1 {
					drift = append(drift, fmt.Sprintf("%s%s: %s", a.position(k), name, describeGroups(vals)))
				}
			}
		}
		if len(drift) > 0 {
			a.Reasons = append(a.Reasons, a.reason(CodeStaticMismatch,
				"arm %s legs differ in STATIC_FIELDS: %s", engine, strings.Join(drift, "; ")))
		}
	}
	if trusted >= 2 {
		for k, g := range a.gpus {
			// The box's state across legs shows in their free samples.
			h := summarizeMap(g.free)
			if g.legs >= 2 && h.n > 0 && !spreadWithin(int64(h.min), int64(h.max), h.median2) {
				over := ""
				if g.powerManaged() {
					over = "free samples' "
				}
				a.Reasons = append(a.Reasons, a.reason(CodeStaircase,
					"arm %s %smerged %sspread %.2f%% > %.1f%%: min %d, median %s, max %d MHz over %d legs, n=%d",
					engine, a.position(k), over, spreadPct(int64(h.min), int64(h.max), h.median2), MaxSpreadPct,
					h.min, fmtMedian(h.median2), h.max, g.legs, h.n))
			}
		}
	}
	a.Side.Host = newHostSide(legs)
	return a
}

// offsets compares GPU position k of two arms: the median offset and the
// mean offset, each |ours − base| / base × 100, and whether each is within
// MaxOffsetBasisPoints, exactly.
type offsets struct {
	median, mean     float64
	medianOK, meanOK bool
	ours2, base2     int64 // twice the medians
	oursMean         float64
	baseMean         float64
}

func compareGPU(o, b *armGPU) (offsets, bool) {
	oh, bh := summarizeMap(o.free), summarizeMap(b.free)
	if oh.n == 0 || bh.n == 0 {
		return offsets{}, false
	}
	d := oh.median2 - bh.median2
	if d < 0 {
		d = -d
	}
	x := offsets{ours2: oh.median2, base2: bh.median2,
		median:   float64(d) / float64(bh.median2) * 100,
		medianOK: offsetWithin(oh.median2, bh.median2),
		oursMean: o.freeSum.Float() / float64(oh.n), baseMean: b.freeSum.Float() / float64(bh.n)}
	x.mean = math.Abs(x.oursMean-x.baseMean) / x.baseMean * 100
	x.meanOK = meanOffsetWithin(o.freeSum, int64(oh.n), b.freeSum, int64(bh.n))
	return x, true
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// describeGroups prints value (leg, leg), value (leg) in sorted order.
func describeGroups(groups map[string][]string) string {
	var parts []string
	for _, v := range sortedKeys(groups) {
		parts = append(parts, fmt.Sprintf("%s (%s)", v, strings.Join(groups[v], ", ")))
	}
	return strings.Join(parts, ", ")
}
