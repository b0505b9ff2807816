package clocks

import (
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"sort"
	"sync"
	"time"
)

// Fold accumulates a stream's samples into what a record must say, without
// keeping the samples: per GPU, busy clocks are counted per distinct MHz
// value, so medians stay exact in bounded memory.
type Fold struct {
	// Total counts the stream's rows, every GPU's.
	Total  int
	FirstT string
	LastT  string
	// GPUs are the GPUs the stream's rows name, in index order.
	GPUs []*GPUFold
	// MaxGapNS is the largest time, in nanoseconds, one GPU went unread:
	// between two of its consecutive rows, or from the window's first row
	// to its first, or from its last to the window's last. GapGPU names
	// that GPU, GapLine the line of the row that ended the gap, and
	// GapFrom and GapTo the times at either end. Set by finish,
	// and by Record for a fold of Add.
	MaxGapNS       int64
	GapGPU         int
	GapLine        int
	GapFrom, GapTo string
	// Windows, when set before the first row, counts every GPU's busy
	// samples inside each point window as the fold classifies them.
	Windows *Windows
	// Ticks, when set before the first row, collects every reading time
	// and whether all its GPUs' samples were busy, for the host stream.
	Ticks *BusyTicks

	firstSec, firstNsec int64
	lastSec, lastNsec   int64
	lastLine            int
	lastT               []byte
	// byIndex finds a GPU's fold by its index, for indices under 64,
	// while the stream is read.
	byIndex *[64]*GPUFold
	// direct counts busy clocks in Hist at once: Add folds one sample at a
	// time, with no finish to move them. shed says Shed was called: Merge
	// refuses the fold.
	direct, tracing, shed bool
}

// Count is how many busy samples ran at V MHz.
type Count struct {
	V, N int
}

// PowerCount is how many busy samples drew MW milliwatts.
type PowerCount struct {
	MW int64
	N  int
}

// GPUFold is one GPU's part of a fold.
type GPUFold struct {
	Index int
	// Total counts the GPU's rows; Idle those at utilization 0.
	Total, Idle int
	// Hist counts busy samples per SM clock value in MHz, in increasing
	// order of value; SumMHz adds them up, for the mean.
	Hist   []Count
	SumMHz Sum
	// Power counts busy samples that carry power_draw_w per value in
	// milliwatts, in increasing order of value.
	Power []PowerCount
	// First is the GPU's first sample; its static fields, boot id and
	// persistence mode are the record's.
	First *Sample
	// Throttle is the union of busy samples' throttle bits, each distinct
	// value with its first printed spelling.
	Throttle map[uint64]string
	// Trace is the GPU's window reduced for a picture; nil unless asked
	// for (NewTracingFold).
	Trace *Trace

	// Managed is the GPU's power management (SPEC §10.1): nil unless its
	// first row records enforced_power_limit_w. Without it every busy
	// sample is free.
	Managed *Managed
	// Events are what the driver's clock event counters say of the
	// window; nil unless its first row carries event_counters_us.
	Events *Events

	// windows are the fold's point windows, counted as the GPU's busy
	// samples are classified; nil without any.
	windows *Windows

	// Energy is what the GPU's rows say of each point window's energy,
	// in the order of the fold's windows; nil without windows.
	Energy []GPUEnergy
	// IdlePowerSum adds up power_draw_w over the GPU's idle samples that
	// carry it, IdlePowerN counts them.
	IdlePowerSum float64
	IdlePowerN   int

	// pcie is what the GPU's busy rows say of its PCIe link.
	pcie pcieFold

	// The GPU's reading-time state: what only reading and judging its
	// rows use, let go of once the leg is judged (dropScratch), so that a
	// leg kept for a summary of many legs does not hold it.
	*gpuScratch
}

// gpuScratch is a GPUFold's reading-time state.
type gpuScratch struct {
	eprev energyRow
	ehave bool

	// The GPU's gaps so far: the largest between two of its rows, and its
	// first and previous rows.
	gap                 int64
	gapLine             int
	gapFrom, gapTo      string
	firstSec, firstNsec int64
	firstLine           int
	firstT              string
	prevSec, prevNsec   int64
	prevT               []byte

	// power counts what Power will, while the stream is read: values in
	// steps of 10 mW (nvidia-smi prints watts to two decimals) near the
	// first one in the array pdense, from pbase, between plo and phi; any
	// other in the map.
	power    map[int64]int
	pdense   *[powerSpan]int32
	pbase    int64
	plo, phi int

	lastBits uint64
	// pending is the GPU's last row while its power management is
	// decided: a busy sample is power-managed by what the counters did
	// before and after it.
	pending    pendingRow
	hasPending bool
	// sameStatic is a Row.StaticID whose rows have the first sample's
	// identity fields.
	sameStatic      uint64
	persistBad      int
	persistFirst    int
	persistFirstVal string
	drift           map[string]string
	driftOrder      []string
	// dense counts busy clocks near the first busy one, and far any
	// other, until finish moves them into Hist: an array index is cheaper
	// than a map update.
	dense     []int32
	denseBase int
	far       map[int]int
	trace     *traceBuilder
}

// denseSpan is how many clock values around the first busy one are counted
// in an array rather than the map.
const denseSpan = 4096

// densePool keeps the counting arrays between folds, each handed back all
// zero.
var densePool = sync.Pool{New: func() any { return new([denseSpan]int32) }}

// NewFold returns an empty fold.
func NewFold() *Fold { return &Fold{} }

// NewTracingFold returns an empty fold that also reduces each GPU's window
// to a Trace for a clock-over-time picture, in the same pass.
func NewTracingFold() *Fold { return &Fold{tracing: true} }

// FoldStream reads a whole stream, named path in errors, into f. The error
// is a *LineError; f then holds the lines before it.
func (f *Fold) FoldStream(r io.Reader, path string) error {
	rd := readerPool.Get().(*Reader)
	defer readerPool.Put(rd)
	rd.reset(r, path)
	defer rd.reset(nil, "")
	for rd.Scan() {
		f.AddRow(rd.Row(), rd.Line())
	}
	f.finish()
	return rd.Err()
}

// readerPool keeps readers and their line buffers between streams: a tree
// of many legs would otherwise allocate, and collect, one per stream.
var readerPool = sync.Pool{New: func() any { return NewReader(nil, "") }}

// FoldStream reads a whole stream into a new fold.
func FoldStream(r io.Reader) (*Fold, error) {
	f := NewFold()
	err := f.FoldStream(r, "")
	return f, err
}

// Idle counts the idle rows of every GPU.
func (f *Fold) Idle() int {
	n := 0
	for _, g := range f.GPUs {
		n += g.Idle
	}
	return n
}

// gpu is the fold of GPU index, made on its first row.
func (f *Fold) gpu(index int) *GPUFold {
	if f.byIndex == nil {
		f.byIndex = new([64]*GPUFold)
	}
	if uint(index) < uint(len(f.byIndex)) {
		if g := f.byIndex[index]; g != nil {
			return g
		}
	} else {
		for _, g := range f.GPUs {
			if g.Index == index {
				return g
			}
		}
	}
	g := &GPUFold{Index: index, Throttle: map[uint64]string{}, windows: f.Windows, gpuScratch: &gpuScratch{}}
	if f.tracing {
		g.trace = &traceBuilder{}
	}
	if uint(index) < uint(len(f.byIndex)) {
		f.byIndex[index] = g
	}
	i := sort.Search(len(f.GPUs), func(i int) bool { return f.GPUs[i].Index > index })
	f.GPUs = append(f.GPUs, nil)
	copy(f.GPUs[i+1:], f.GPUs[i:])
	f.GPUs[i] = g
	return g
}

func sampleStatic(s *Sample) [1 + len(staticNames)]string {
	return [...]string{
		s.BootID,
		fmt.Sprintf("%q", s.GPUName),
		fmt.Sprintf("%q", s.GPUUUID),
		fmt.Sprintf("%q", s.DriverVersion),
		fmt.Sprint(s.ClocksMaxSMMHz),
		intOrNull(s.ClocksApplicationsGraphicsMHz),
		vendorName(s.Vendor),
		strOrNull(s.PerfLevel),
		strOrNull(s.MemoryPartition),
		wattsOrAbsent(s.EnforcedPowerLimitW),
		wattsOrAbsent(s.ModuleEnforcedPowerLimitW),
		quotedOrAbsent(s.VbiosVersion),
		quotedOrAbsent(s.EnergyScope),
	}
}

var driftNames = [...]string{"boot_id", "gpu_name", "gpu_uuid", "driver_version", "clocks_max_sm_mhz", "clocks_applications_graphics_mhz",
	"vendor", "perf_level", "memory_partition", "enforced_power_limit_w", "module_enforced_power_limit_w", "vbios_version", "energy_scope"}

// sameVbios reports whether the row's vbios_version is the GPU's first
// sample's: both absent, or both the same string.
func sameVbios(s *Sample, r *Row) bool {
	if s.VbiosVersion == nil {
		return !r.HasVbios
	}
	return r.HasVbios && *s.VbiosVersion == string(r.Vbios)
}

// sameScope reports whether the row's energy_scope is the GPU's first
// sample's: both absent, or both the same.
func sameScope(s *Sample, r *Row) bool {
	if s.EnergyScope == nil {
		return !r.HasEnergyScope
	}
	return r.HasEnergyScope && *s.EnergyScope == string(r.EnergyScope)
}

// vendorName prints a sample's or record's vendor for messages: "amd", or
// nvidia for the absent key.
func vendorName(v string) string {
	if v == "" {
		return `"nvidia"`
	}
	return fmt.Sprintf("%q", v)
}

// strOrNull prints an optional string field for messages: quoted, or null.
func strOrNull(s string) string {
	if s == "" {
		return "null"
	}
	return fmt.Sprintf("%q", s)
}

// sameLimits reports whether the row's power limits are the GPU's first
// sample's: both absent, or both the same number of W.
func sameLimits(s *Sample, r *Row) bool {
	return sameWatts(s.EnforcedPowerLimitW, r.HasPowerLimit, r.PowerLimitW) &&
		sameWatts(s.ModuleEnforcedPowerLimitW, r.HasModuleLimit, r.ModuleLimitW)
}

func sameWatts(a *float64, has bool, b float64) bool {
	if a == nil {
		return !has
	}
	return has && *a == b
}

// Add folds in one sample read at the given 1-based line.
func (f *Fold) Add(s *Sample, line int) {
	r := Row{T: []byte(s.T), BootID: []byte(s.BootID), GPUIndex: s.GPUIndex, GPUUUID: []byte(s.GPUUUID),
		GPUName: []byte(s.GPUName), DriverVersion: []byte(s.DriverVersion), SMClockMHz: s.SMClockMHz,
		ClocksMaxSMMHz: s.ClocksMaxSMMHz, AppsNull: s.ClocksApplicationsGraphicsMHz == nil,
		Throttle: []byte(s.ThrottleReasonsActive), Persistence: []byte(s.PersistenceMode), PState: []byte(s.PState),
		UtilizationGPUPct: s.UtilizationGPUPct}
	if s.ClocksApplicationsGraphicsMHz != nil {
		r.AppsMHz = *s.ClocksApplicationsGraphicsMHz
	}
	if s.TemperatureGPUC != nil {
		r.HasTemperature, r.TemperatureGPUC = true, *s.TemperatureGPUC
	}
	if s.PowerDrawW != nil {
		r.HasPower, r.PowerDrawW = true, *s.PowerDrawW
	}
	if s.ClocksMemMHz != nil {
		r.HasClocksMem, r.ClocksMemMHz = true, *s.ClocksMemMHz
	}
	r.Vendor, r.PerfLevel, r.MemoryPartition, r.XCDClocksMHz = []byte(s.Vendor), []byte(s.PerfLevel), []byte(s.MemoryPartition), s.XCDClocksMHz
	r.HasThrottleField, r.ThrottleField = s.ThrottleField != "", []byte(s.ThrottleField)
	if s.EnforcedPowerLimitW != nil {
		r.HasPowerLimit, r.PowerLimitW = true, *s.EnforcedPowerLimitW
	}
	if s.ModuleEnforcedPowerLimitW != nil {
		r.HasModuleLimit, r.ModuleLimitW = true, *s.ModuleEnforcedPowerLimitW
	}
	if s.EventCountersUS != nil {
		r.HasCounters, r.Counters = true, *s.EventCountersUS
	}
	if s.VbiosVersion != nil {
		r.HasVbios, r.Vbios = true, []byte(*s.VbiosVersion)
	}
	if s.EnergyMJ != nil {
		r.HasEnergy, r.EnergyMJ = true, *s.EnergyMJ
	}
	if s.EnergyScope != nil {
		r.HasEnergyScope, r.EnergyScope = true, []byte(*s.EnergyScope)
	}
	pcieRowOf(s, &r)
	if t, err := time.Parse(time.RFC3339Nano, s.T); err == nil {
		r.Sec, r.Nsec = t.Unix(), int64(t.Nanosecond())
	}
	r.ThrottleBits, _ = ParseThrottle(s.ThrottleReasonsActive)
	f.direct = true
	f.AddRow(&r, line)
	f.LastT = s.T
}

// AddRow folds in one row read at the given 1-based line.
func (f *Fold) AddRow(r *Row, line int) {
	f.Total++
	if f.Total == 1 {
		f.FirstT = string(r.T)
	}
	if f.Total == 1 {
		f.firstSec, f.firstNsec = r.Sec, r.Nsec
	}
	f.lastT = append(f.lastT[:0], r.T...)
	f.lastSec, f.lastNsec, f.lastLine = r.Sec, r.Nsec, line
	if f.Ticks != nil {
		f.Ticks.add(!r.Idle(), r.Sec*1e9+r.Nsec)
	}
	g := f.gpu(r.GPUIndex)
	g.Total++
	g.step(r.Sec, r.Nsec, r.T, line)
	if f.Windows != nil {
		g.foldEnergy(r, line, f.Windows.Spans)
	} else if r.HasPower && r.Idle() {
		g.IdlePowerSum += r.PowerDrawW
		g.IdlePowerN++
	}
	switch s := g.First; {
	case s == nil:
		g.First = r.Sample()
		g.startPower()
	case r.StaticID != 0 && r.StaticID == g.sameStatic:
		// Rows of this StaticID were found the same as the first.
	case s.BootID != string(r.BootID) || s.GPUName != string(r.GPUName) ||
		s.GPUUUID != string(r.GPUUUID) || s.DriverVersion != string(r.DriverVersion) ||
		s.ClocksMaxSMMHz != r.ClocksMaxSMMHz ||
		(s.ClocksApplicationsGraphicsMHz == nil) != r.AppsNull ||
		(!r.AppsNull && *s.ClocksApplicationsGraphicsMHz != r.AppsMHz) ||
		s.Vendor != string(r.Vendor) || s.PerfLevel != string(r.PerfLevel) || s.MemoryPartition != string(r.MemoryPartition):
		g.driftAt(r.Sample(), line)
	default:
		g.sameStatic = r.StaticID
	}
	if (r.HasPowerLimit || r.HasModuleLimit || g.Managed != nil || g.First.ModuleEnforcedPowerLimitW != nil) && !sameLimits(g.First, r) {
		g.driftAt(r.Sample(), line)
	}
	if (r.HasVbios || g.First.VbiosVersion != nil) && !sameVbios(g.First, r) {
		g.driftAt(r.Sample(), line)
	}
	if (r.HasEnergyScope || g.First.EnergyScope != nil) && !sameScope(g.First, r) {
		g.driftAt(r.Sample(), line)
	}
	if r.HasPCIe[PCIeGenMax] || r.HasPCIe[PCIeWidthMax] || g.First.PCIeGenMax != nil || g.First.PCIeWidthMax != nil {
		g.samePCIeMax(r, line)
	}
	// AMD GPUs have no persistence mode: the check does not apply to them.
	if string(r.Persistence) != "Enabled" && !r.AMD() {
		if g.persistBad == 0 {
			g.persistFirst, g.persistFirstVal = line, string(r.Persistence)
		}
		g.persistBad++
	}
	pmNow := false
	if g.Managed != nil || g.Events != nil || r.HasCounters {
		pmNow = g.foldPower(r, line)
	}
	if g.trace != nil {
		g.trace.add(r, g.First, f.firstSec, f.firstNsec, g.Managed != nil, pmNow)
	}
	if r.Idle() {
		g.Idle++
		return
	}
	g.foldPCIe(r, line)
	g.countBusy(r.SMClockMHz, f.direct)
	g.SumMHz.Add(uint64(r.SMClockMHz))
	if g.Managed == nil {
		// Without a recorded limit every busy sample is free; with one,
		// classify counts it once its class is known.
		g.windows.count(r.Sec, r.Nsec, r.SMClockMHz, false)
	}
	if r.HasPower {
		mw := int64(math.Round(r.PowerDrawW * 1000))
		switch {
		case f.direct:
			g.Power = addPower(g.Power, mw)
		case mw%10 == 0 && g.countPowerDense(mw/10):
		case g.power == nil:
			g.power = powerMaps.Get().(map[int64]int)
			fallthrough
		default:
			g.power[mw]++
		}
	}
	if bits := r.ThrottleBits; bits != g.lastBits || len(g.Throttle) == 0 {
		g.lastBits = bits
		if _, ok := g.Throttle[bits]; !ok {
			g.Throttle[bits] = string(r.Throttle)
		}
	}
}

// countBusy counts one busy sample at sm MHz.
func (g *GPUFold) countBusy(sm int, direct bool) {
	if direct {
		i := sort.Search(len(g.Hist), func(i int) bool { return g.Hist[i].V >= sm })
		if i == len(g.Hist) || g.Hist[i].V != sm {
			g.Hist = slices.Insert(g.Hist, i, Count{V: sm})
		}
		g.Hist[i].N++
		return
	}
	if g.dense == nil {
		g.dense, g.denseBase = densePool.Get().(*[denseSpan]int32)[:], sm-denseSpan/2
	}
	if d := sm - g.denseBase; uint(d) < uint(len(g.dense)) {
		g.dense[d]++
	} else {
		if g.far == nil {
			g.far = map[int]int{}
		}
		g.far[sm]++
	}
}

// driftAt names each static field of s that differs from the GPU's first
// sample, once per field.
func (g *GPUFold) driftAt(s *Sample, line int) {
	if g.drift == nil {
		g.drift = map[string]string{}
	}
	a, b := sampleStatic(g.First), sampleStatic(s)
	for i := range a {
		if a[i] != b[i] {
			if _, seen := g.drift[driftNames[i]]; !seen {
				g.drift[driftNames[i]] = fmt.Sprintf("%s changed at line %d: %s, then %s", driftNames[i], line, a[i], b[i])
				g.driftOrder = append(g.driftOrder, driftNames[i])
			}
		}
	}
}

// step folds in the time of the GPU's row at line: the largest step from
// one of its rows to the next is its worst coverage inside the window.
func (g *GPUFold) step(sec, nsec int64, t []byte, line int) {
	if g.Total == 1 {
		g.firstSec, g.firstNsec, g.firstLine, g.firstT = sec, nsec, line, string(t)
	} else if d := nsBetween(g.prevSec, g.prevNsec, sec, nsec); d > g.gap {
		g.gap, g.gapLine = d, line
		g.gapFrom, g.gapTo = string(g.prevT), string(t)
	}
	g.prevSec, g.prevNsec = sec, nsec
	g.prevT = append(g.prevT[:0], t...)
}

// nsBetween is the time from one row to a later one in nanoseconds. The
// seconds apart are bounded first, so that no two times, however far
// apart, overflow it.
func nsBetween(sec0, nsec0, sec1, nsec1 int64) int64 {
	return min(max(sec1-sec0, -maxGapSeconds), maxGapSeconds)*1e9 + nsec1 - nsec0
}

// settleGaps sets the fold's worst gap from its GPUs': each GPU's largest
// step between its rows, and the time it went unread at either end of the
// window (zero for a GPU that has the window's first and last rows). The
// first GPU in index order wins a tie.
func (f *Fold) settleGaps() {
	f.MaxGapNS, f.GapGPU, f.GapLine, f.GapFrom, f.GapTo = 0, 0, 0, "", ""
	for _, g := range f.GPUs {
		take := func(d int64, line int, from, to string) {
			if d > f.MaxGapNS {
				f.MaxGapNS, f.GapGPU, f.GapLine, f.GapFrom, f.GapTo = d, g.Index, line, from, to
			}
		}
		take(g.gap, g.gapLine, g.gapFrom, g.gapTo)
		take(nsBetween(f.firstSec, f.firstNsec, g.firstSec, g.firstNsec), g.firstLine, f.FirstT, g.firstT)
		take(nsBetween(g.prevSec, g.prevNsec, f.lastSec, f.lastNsec), f.lastLine, string(g.prevT), f.LastT)
	}
}

// maxGapSeconds bounds a gap as counted; any gap that long fails coverage
// whatever the interval.
const maxGapSeconds = 1 << 30

// MaxGapS is MaxGapNS in seconds, to the millisecond, as a record carries it.
func (f *Fold) MaxGapS() float64 { return gapSeconds(f.MaxGapNS) }

func gapSeconds(ns int64) float64 { return math.Round(float64(ns)/1e6) / 1e3 }

// finish moves what AddRow kept in scratch space into the fold's fields.
func (f *Fold) finish() {
	if f.Total > 0 {
		f.LastT = string(f.lastT)
	}
	f.settleGaps()
	for _, g := range f.GPUs {
		g.finishHist()
		g.settlePower()
		if g.trace != nil {
			g.Trace, g.trace = g.trace.trace(), nil
		}
		g.finishPower()
	}
	f.lastT = nil
	f.byIndex = nil
}

// finishHist moves the busy counts into Hist, in order of value, and
// hands the counting space back: the values far below the dense ones,
// the dense ones, then those far above.
func (g *GPUFold) finishHist() {
	if g.dense == nil {
		return
	}
	n := len(g.far)
	for _, c := range g.dense {
		if c > 0 {
			n++
		}
	}
	far := make([]int, 0, len(g.far))
	for v := range g.far {
		far = append(far, v)
	}
	slices.Sort(far)
	g.Hist = make([]Count, 0, n)
	k := 0
	for ; k < len(far) && far[k] < g.denseBase; k++ {
		g.Hist = append(g.Hist, Count{far[k], g.far[far[k]]})
	}
	for i, c := range g.dense {
		if c > 0 {
			g.Hist = append(g.Hist, Count{g.denseBase + i, int(c)})
			g.dense[i] = 0
		}
	}
	for ; k < len(far); k++ {
		g.Hist = append(g.Hist, Count{far[k], g.far[far[k]]})
	}
	densePool.Put((*[denseSpan]int32)(g.dense))
	g.dense, g.denseBase, g.far = nil, 0, nil
}

// Shed lets go of what only judging the leg and merging its arm read:
// each GPU's busy and power counts, throttle set, first sample and
// reading-time state. What a report prints and draws stays: Total, Idle,
// SumMHz and Trace. A summary of many legs sheds them once its arms are
// compared.
func (f *Fold) Shed() {
	f.shed = true
	for _, g := range f.GPUs {
		g.Hist, g.Power, g.Throttle, g.First = nil, nil, nil, nil
		g.gpuScratch = nil
	}
}

// dropScratch lets go of every GPU's reading-time state once the leg is
// judged: nothing after reads it.
func (f *Fold) dropScratch() {
	for _, g := range f.GPUs {
		g.gpuScratch = nil
	}
}

// powerSpan is how many 10 mW steps around the first power value are
// counted in an array rather than the map: ±163 W.
const powerSpan = 1 << 15

// powerArrays keeps the power counting arrays between folds, each handed
// back all zero.
var powerArrays = sync.Pool{New: func() any { return new([powerSpan]int32) }}

// countPowerDense counts a busy sample of cw × 10 mW in the array, and
// reports whether it fell in its span.
func (g *GPUFold) countPowerDense(cw int64) bool {
	if g.pdense == nil {
		g.pdense, g.pbase = powerArrays.Get().(*[powerSpan]int32), cw-powerSpan/2
		g.plo, g.phi = powerSpan, -1
	}
	d := cw - g.pbase
	if uint64(d) >= powerSpan {
		return false
	}
	g.pdense[d]++
	g.plo, g.phi = min(g.plo, int(d)), max(g.phi, int(d))
	return true
}

// finishPower moves the power counts into Power, sorted by value, and
// hands the counting space back.
func (g *GPUFold) finishPower() {
	if g.pdense == nil && g.power == nil {
		return
	}
	n := len(g.power)
	if g.pdense != nil {
		for d := g.plo; d <= g.phi; d++ {
			if g.pdense[d] > 0 {
				n++
			}
		}
	}
	g.Power = make([]PowerCount, 0, n)
	if g.pdense != nil {
		for d := g.plo; d <= g.phi; d++ {
			if n := g.pdense[d]; n > 0 {
				g.Power = append(g.Power, PowerCount{(g.pbase + int64(d)) * 10, int(n)})
				g.pdense[d] = 0
			}
		}
		powerArrays.Put(g.pdense)
		g.pdense = nil
	}
	if g.power != nil {
		for mw, n := range g.power {
			g.Power = append(g.Power, PowerCount{mw, n})
		}
		clear(g.power)
		powerMaps.Put(g.power)
		g.power = nil
		sort.Slice(g.Power, func(i, j int) bool { return g.Power[i].MW < g.Power[j].MW })
	}
}

// powerMaps keeps the maps that count power while a stream is read.
var powerMaps = sync.Pool{New: func() any { return map[int64]int{} }}

// addPower counts one sample of mw milliwatts in a sorted list, for a fold
// built one sample at a time.
func addPower(p []PowerCount, mw int64) []PowerCount {
	i := sort.Search(len(p), func(i int) bool { return p[i].MW >= mw })
	if i < len(p) && p[i].MW == mw {
		p[i].N++
		return p
	}
	p = append(p, PowerCount{})
	copy(p[i+1:], p[i:])
	p[i] = PowerCount{mw, 1}
	return p
}

// Record builds the record the folded stream recomputes to. intervalS and
// stopReason are the sampler's, not the stream's. A stream of one GPU
// gives a record in the single-GPU layout.
func (f *Fold) Record(intervalS float64, stopReason string) (*Record, error) {
	if f.Total == 0 {
		return nil, errors.New("the stream has no samples")
	}
	f.settleGaps()
	for _, g := range f.GPUs {
		g.settlePower()
	}
	r := &Record{BootID: f.GPUs[0].First.BootID,
		Window: Window{FirstT: f.FirstT, LastT: f.LastT, SamplesTotal: f.Total,
			IntervalS: intervalS, StopReason: stopReason, MaxGapS: ptr(f.MaxGapS())}}
	for _, g := range f.GPUs {
		gr := g.record()
		if len(f.GPUs) > 1 {
			gr.Index = ptr(g.Index)
		}
		r.GPUs = append(r.GPUs, gr)
	}
	return r, nil
}

// record is the GPU's block of the record.
func (g *GPUFold) record() GPU {
	r := GPU{
		UUID:                          g.First.GPUUUID,
		Name:                          g.First.GPUName,
		DriverVersion:                 g.First.DriverVersion,
		SMClockMHz:                    summarize(g.Hist).stats(),
		ClocksMaxSMMHz:                g.First.ClocksMaxSMMHz,
		ClocksApplicationsGraphicsMHz: g.First.ClocksApplicationsGraphicsMHz,
		ThrottleReasonsActive:         g.throttleList(),
		PersistenceMode:               g.First.PersistenceMode,
		IdleSamplesExcluded:           g.Idle,
		Vendor:                        g.First.Vendor,
		PerfLevel:                     g.First.PerfLevel,
		MemoryPartition:               g.First.MemoryPartition,
		VbiosVersion:                  g.First.VbiosVersion,
		EnergyScope:                   g.First.EnergyScope,
		PCIeGenMax:                    g.First.PCIeGenMax,
		PCIeWidthMax:                  g.First.PCIeWidthMax,
	}
	if m := g.Managed; m != nil {
		r.EnforcedPowerLimitW, r.ModuleEnforcedPowerLimitW = ptr(m.LimitW), m.ModuleLimitW
		r.FreeClockMHz, r.PowerManagedSamples = g.freeStats(), ptr(g.PowerManaged())
	}
	return r
}

// freeStats summarizes the GPU's free busy samples as its record says
// them; nil for a GPU that records no limit.
func (g *GPUFold) freeStats() *FreeStats {
	if g.Managed == nil {
		return nil
	}
	fs := &FreeStats{Stats: summarize(g.Managed.FreeHist).stats()}
	if fs.N > 0 {
		fs.MeanMHz = ptr(round2(g.freeMean()))
	}
	return fs
}

// freeMean is the mean of the GPU's free busy samples, in MHz.
func (g *GPUFold) freeMean() float64 {
	h, sum := g.Free()
	n := 0
	for _, c := range h {
		n += c.N
	}
	if n == 0 {
		return 0
	}
	return sum.Float() / float64(n)
}

func ptr[T any](v T) *T { return &v }

func (g *GPUFold) throttleList() []string {
	bits := make([]uint64, 0, len(g.Throttle))
	for b := range g.Throttle {
		bits = append(bits, b)
	}
	sort.Slice(bits, func(i, j int) bool { return bits[i] < bits[j] })
	out := make([]string, len(bits))
	for i, b := range bits {
		out[i] = g.Throttle[b]
	}
	return out
}
