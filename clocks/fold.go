package clocks

import (
	"errors"
	"fmt"
	"io"
	"math"
	"sort"
	"time"
)

// Fold accumulates a stream's samples into what a record must say, without
// keeping the samples: busy clocks are counted per distinct MHz value, so
// medians stay exact in bounded memory.
type Fold struct {
	Total int
	Idle  int
	// Hist counts busy samples per SM clock value in MHz.
	Hist   map[int]int
	FirstT string
	LastT  string
	// First is the window's first sample; its static fields, boot id and
	// persistence mode are the record's.
	First *Sample
	// Throttle is the union of busy samples' throttle bits, each distinct
	// value with its first printed spelling.
	Throttle map[uint64]string
	// MaxGapNS is the largest time between two consecutive samples, in
	// nanoseconds; GapLine is the line of the sample that ended it, and
	// GapFrom and GapTo the two samples' times.
	MaxGapNS       int64
	GapLine        int
	GapFrom, GapTo string
	// Trace is the window reduced for a picture; nil unless asked for
	// (NewTracingFold).
	Trace *Trace

	prevSec, prevNsec int64
	prevT             []byte
	lastT             []byte
	lastBits          uint64
	persistBad        int
	persistFirst      int
	persistFirstVal   string
	drift             map[string]string
	driftOrder        []string
	// dense counts busy clocks near the first busy one, until finish moves
	// them into Hist: an array index is cheaper than a map update.
	dense     []int32
	denseBase int
	// direct counts busy clocks in Hist at once: Add folds one sample at a
	// time, with no finish to move them.
	direct bool
	trace  *traceBuilder
}

// denseSpan is how many clock values around the first busy one are counted
// in an array rather than the map.
const denseSpan = 4096

// NewFold returns an empty fold.
func NewFold() *Fold {
	return &Fold{Hist: map[int]int{}, Throttle: map[uint64]string{}}
}

// NewTracingFold returns an empty fold that also reduces the window to a
// Trace for a clock-over-time picture, in the same pass.
func NewTracingFold() *Fold {
	f := NewFold()
	f.trace = &traceBuilder{}
	return f
}

// FoldStream reads a whole stream, named path in errors, into f. The error
// is a *LineError; f then holds the lines before it.
func (f *Fold) FoldStream(r io.Reader, path string) error {
	rd := NewReader(r, path)
	for rd.Scan() {
		f.AddRow(rd.Row(), rd.Line())
	}
	f.finish()
	return rd.Err()
}

// FoldStream reads a whole stream into a new fold.
func FoldStream(r io.Reader) (*Fold, error) {
	f := NewFold()
	err := f.FoldStream(r, "")
	return f, err
}

func sampleStatic(s *Sample) [6]string {
	return [6]string{
		s.BootID,
		fmt.Sprintf("%q", s.GPUName),
		fmt.Sprintf("%q", s.GPUUUID),
		fmt.Sprintf("%q", s.DriverVersion),
		fmt.Sprint(s.ClocksMaxSMMHz),
		intOrNull(s.ClocksApplicationsGraphicsMHz),
	}
}

var driftNames = [6]string{"boot_id", "gpu_name", "gpu_uuid", "driver_version", "clocks_max_sm_mhz", "clocks_applications_graphics_mhz"}

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
	r.HasThrottleField, r.ThrottleField = s.ThrottleField != "", []byte(s.ThrottleField)
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
	if f.First == nil {
		f.First = r.Sample()
		f.FirstT = f.First.T
	} else if s := f.First; s.BootID != string(r.BootID) || s.GPUName != string(r.GPUName) ||
		s.GPUUUID != string(r.GPUUUID) || s.DriverVersion != string(r.DriverVersion) ||
		s.ClocksMaxSMMHz != r.ClocksMaxSMMHz ||
		(s.ClocksApplicationsGraphicsMHz == nil) != r.AppsNull ||
		(!r.AppsNull && *s.ClocksApplicationsGraphicsMHz != r.AppsMHz) {
		f.driftAt(r.Sample(), line)
	}
	f.lastT = append(f.lastT[:0], r.T...)
	f.gap(r.Sec, r.Nsec, r.T, line)
	if string(r.Persistence) != "Enabled" {
		if f.persistBad == 0 {
			f.persistFirst, f.persistFirstVal = line, string(r.Persistence)
		}
		f.persistBad++
	}
	if f.trace != nil {
		f.trace.add(r, f.First)
	}
	if r.Idle() {
		f.Idle++
		return
	}
	f.countBusy(r.SMClockMHz)
	if bits := r.ThrottleBits; bits != f.lastBits || len(f.Throttle) == 0 {
		f.lastBits = bits
		if _, ok := f.Throttle[bits]; !ok {
			f.Throttle[bits] = string(r.Throttle)
		}
	}
}

// countBusy counts one busy sample at sm MHz.
func (f *Fold) countBusy(sm int) {
	if f.direct {
		f.Hist[sm]++
		return
	}
	if f.dense == nil {
		f.dense, f.denseBase = make([]int32, denseSpan), sm-denseSpan/2
	}
	if d := sm - f.denseBase; uint(d) < uint(len(f.dense)) {
		f.dense[d]++
	} else {
		f.Hist[sm]++
	}
}

// driftAt names each static field of s that differs from the window's
// first sample, once per field.
func (f *Fold) driftAt(s *Sample, line int) {
	if f.drift == nil {
		f.drift = map[string]string{}
	}
	a, b := sampleStatic(f.First), sampleStatic(s)
	for i := range a {
		if a[i] != b[i] {
			if _, seen := f.drift[driftNames[i]]; !seen {
				f.drift[driftNames[i]] = fmt.Sprintf("%s changed at line %d: %s, then %s", driftNames[i], line, a[i], b[i])
				f.driftOrder = append(f.driftOrder, driftNames[i])
			}
		}
	}
}

// gap folds in the time of the sample at line: the largest step from one
// sample to the next is the window's worst coverage.
func (f *Fold) gap(sec, nsec int64, t []byte, line int) {
	if f.Total > 1 {
		// Seconds apart are bounded first, so that no two times, however
		// far apart, overflow a gap in nanoseconds.
		ds := min(max(sec-f.prevSec, -maxGapSeconds), maxGapSeconds)
		if g := ds*1e9 + nsec - f.prevNsec; g > f.MaxGapNS {
			f.MaxGapNS, f.GapLine = g, line
			f.GapFrom, f.GapTo = string(f.prevT), string(t)
		}
	}
	f.prevSec, f.prevNsec = sec, nsec
	f.prevT = append(f.prevT[:0], t...)
}

// maxGapSeconds bounds a gap as counted; any gap that long fails coverage
// whatever the interval.
const maxGapSeconds = 1 << 30

// MaxGapS is MaxGapNS in seconds, to the millisecond, as a record carries it.
func (f *Fold) MaxGapS() float64 { return gapSeconds(f.MaxGapNS) }

func gapSeconds(ns int64) float64 { return math.Round(float64(ns)/1e6) / 1e3 }

// finish moves what AddRow kept in scratch space into the fold's fields.
func (f *Fold) finish() {
	if f.First != nil {
		f.LastT = string(f.lastT)
	}
	for i, n := range f.dense {
		if n > 0 {
			f.Hist[f.denseBase+i] += int(n)
		}
	}
	f.dense, f.denseBase = nil, 0
	if f.trace != nil {
		f.Trace, f.trace = f.trace.trace(), nil
	}
	f.prevT, f.lastT = nil, nil
}

// Record builds the record the folded stream recomputes to. intervalS and
// stopReason are the sampler's, not the stream's.
func (f *Fold) Record(intervalS float64, stopReason string) (*Record, error) {
	if f.First == nil {
		return nil, errors.New("the stream has no samples")
	}
	h := summarize(f.Hist)
	r := &Record{
		BootID:                        f.First.BootID,
		SMClockMHz:                    Stats{N: h.n},
		ClocksMaxSMMHz:                f.First.ClocksMaxSMMHz,
		ClocksApplicationsGraphicsMHz: f.First.ClocksApplicationsGraphicsMHz,
		ThrottleReasonsActive:         f.throttleList(),
		PersistenceMode:               f.First.PersistenceMode,
		DriverVersion:                 f.First.DriverVersion,
		GPUName:                       f.First.GPUName,
		GPUUUID:                       f.First.GPUUUID,
		IdleSamplesExcluded:           f.Idle,
		Window: Window{FirstT: f.FirstT, LastT: f.LastT, SamplesTotal: f.Total,
			IntervalS: intervalS, StopReason: stopReason, MaxGapS: ptr(f.MaxGapS())},
	}
	if h.n > 0 {
		mn, mx := h.min, h.max
		md := float64(h.median2) / 2
		sp := round2(spreadPct(int64(mn), int64(mx), h.median2))
		r.SMClockMHz.Min, r.SMClockMHz.Median, r.SMClockMHz.Max, r.SMClockMHz.SpreadPct = &mn, &md, &mx, &sp
	}
	return r, nil
}

func ptr[T any](v T) *T { return &v }

func (f *Fold) throttleList() []string {
	bits := make([]uint64, 0, len(f.Throttle))
	for b := range f.Throttle {
		bits = append(bits, b)
	}
	sort.Slice(bits, func(i, j int) bool { return bits[i] < bits[j] })
	out := make([]string, len(bits))
	for i, b := range bits {
		out[i] = f.Throttle[b]
	}
	return out
}
