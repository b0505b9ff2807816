// Package report renders a summarized evidence tree for a person.
//
// Build turns a summarize.Summary into a Document, the data model every
// renderer shares: per comparison its ratios with their verdicts, the clock
// block's observed numbers, caveats and reasons, and a row per leg.
// Document.Markdown writes report.md; Document.HTML writes report.html from
// the same Document, each trusted leg carrying its clock over time as the
// summary read it: nothing here reads a file.
package report

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/clockgate/clockgate/clocks"
	"github.com/clockgate/clockgate/ratio"
	"github.com/clockgate/clockgate/summarize"
)

// The ratio families.
const (
	FamilyThroughput = "THROUGHPUT"
	FamilyMemory     = "MEMORY"
)

// Document is everything a report shows, in the order it shows it.
type Document struct {
	Title          string
	Baseline       string
	AllowCrossBoot bool
	// GatePass is true when there is at least one ratio and every ratio
	// is binding-eligible.
	GatePass bool
	// Binding counts the binding-eligible ratios among Ratios.
	Binding, Ratios int
	Contract        clocks.Contract
	Comparisons     []Comparison
	// Uncompared are the legs of every arm that is in no comparison.
	Uncompared []Leg
	Warnings   []string
	// Grid is how clockgate grid ran the tree, from its journal; nil for
	// a tree without one.
	Grid *summarize.GridBlock

	// spans are the sections of the Markdown last written.
	spans []mdSpan
	// scale is how a report of more than ScaleLegs legs lists them; nil
	// for a smaller one (planScale).
	scale *scalePlan
}

// Comparison is one engine against the baseline for one model.
type Comparison struct {
	Model    string
	Ours     string
	Baseline string
	// Clock is the block both ratios carry.
	Clock *clocks.Block
	// Ratios are THROUGHPUT, then MEMORY.
	Ratios []Ratio
	// Points are the THROUGHPUT ratio's per-point medians, in tokens/s.
	Points []ratio.Point
	// Legs are the ours arm's legs, then the baseline arm's.
	Legs []Leg
	// Energy is the ENERGY family (SPEC §11.3), point by point.
	Energy ratio.Energy
	// BenchClients name each arm's bench client and version (SPEC §12.5);
	// nil where both arms are vLLM's or SGLang's.
	BenchClients *ratio.BenchClients
}

// ShowsEnergy reports whether a report shows the ENERGY family: where some
// point has its energy priced in either arm.
func (c Comparison) ShowsEnergy() bool {
	for _, p := range c.Energy.Points {
		if p.Value != nil || p.Ours != nil || p.Baseline != nil {
			return true
		}
	}
	return false
}

// EnergyLead says what the ENERGY family's figures are.
const EnergyLead = "ENERGY: per point, J per output token over the point's window (its marks, its result's exact window, or vLLM date), " +
	"the arm's median over its legs, and ours / baseline (lower is better); p: two-sided Mann–Whitney U of the legs' J per output token. " +
	"Reported, never a gate term (only --strict-energy gates on it). " + ratio.EnergyCaveat + "."

// EnergyCell prints one arm's J per output token at a point, with its
// method: "12.34 J (counter)", or n/a.
func EnergyCell(s *ratio.EnergySide) string {
	if s == nil || s.JPerOutputToken == nil {
		return "n/a"
	}
	out := fixed(*s.JPerOutputToken, 4) + " J"
	if s.Method != nil {
		out += " (" + *s.Method + ")"
	}
	return out
}

// EnergyRatioText prints a point's ENERGY ratio and its verdict.
func EnergyRatioText(p ratio.EnergyPoint) string {
	v := "n/a"
	if p.Value != nil {
		v = fixed(*p.Value, 4)
	}
	return v + " " + Verdict(p.BindingEligible)
}

// EnergyReasons are the ENERGY family's own reasons (its energy.* codes
// and its undefined values), without the THROUGHPUT reasons it carries.
func EnergyReasons(e ratio.Energy) []clocks.Reason {
	var out []clocks.Reason
	for _, r := range e.Reasons {
		if strings.HasPrefix(r.Code, "energy.") || r.Code == ratio.CodeUndefined && strings.Contains(r.Message, "ENERGY") {
			out = append(out, r)
		}
	}
	return out
}

// Ratio is one ratio and its verdict.
type Ratio struct {
	Family string
	// Value is ours / baseline, rounded to 4 decimals; nil when it cannot
	// be computed.
	Value *float64
	// Established is the ratio's binding_eligible.
	Established bool
	// Ours and Baseline are the MEMORY ratio's medians, in MiB; nil for
	// THROUGHPUT, whose medians are per point.
	Ours, Baseline *float64
	// Reasons hold every reason, the clock block's included; Caveats the
	// checks the cross-boot override waived.
	Reasons []clocks.Reason
	Caveats []clocks.Reason
	// Significance is the family's count of points that differ at
	// ratio.Alpha; never part of the verdict.
	Significance ratio.Significance
	// Test is the MEMORY ratio's test over the legs' peak GPU memory;
	// THROUGHPUT's tests are per point, in Comparison.Points.
	Test ratio.Test
}

// Leg is one leg's row.
type Leg struct {
	Model  string
	Engine string
	Run    int
	// Name is the run label, "r<N>".
	Name            string
	BindingEligible bool
	// Codes are the distinct codes of the leg's reasons, sorted.
	Codes []string
	// Reasons are every reason of the leg: clock, then bench, then memory.
	Reasons []clocks.Reason
	// Trusted says the clock numbers below come from a record its stream
	// recomputes to; when false they are absent.
	Trusted bool
	BootID  string
	// MedianMHz, MinMHz and MaxMHz summarize the SM clock over busy
	// samples, in MHz; SpreadPct is (max − min) / median × 100.
	MedianMHz   *float64
	MinMHz      *int
	MaxMHz      *int
	SpreadPct   *float64
	BusySamples *int
	IdleSamples *int
	// Throttle is the union of throttle bits over busy samples, as recorded.
	Throttle []string
	// PeakGPUMemoryMiB is the memory record's peak, in MiB.
	PeakGPUMemoryMiB *float64
	// Points are the leg's valid points, increasing.
	Points []ratio.PointID
	// Trace is the leg's clock over time, reduced for a picture; nil
	// unless the leg is trusted and the summary was read with traces.
	Trace *clocks.Trace
	// GPUs are the GPUs of a trusted leg, in index order: one for a leg
	// of one GPU, whose numbers are also the fields above (for a leg of
	// several, those are its first GPU's); nil when not trusted.
	GPUs []LegGPU
	// Power says, for a trusted leg that records a power limit, what the
	// contract judged its GPUs on: their free samples, and the share the
	// power controller held; "" otherwise.
	Power string
	// Bands are the leg's point windows (SPEC §10.2), in time order, for
	// the clock picture; nil for a leg without any.
	Bands []PointBand
	// Hosts are a multi-host leg's hosts, in leg.json's order (SPEC
	// §12.3); nil for a single-host leg.
	Hosts []LegHost
}

// LegHost is one host of a multi-host leg, as its per-host table and
// picture show it.
type LegHost struct {
	Host, Role string
	// GPUs are the indexes of the host's GPUs; nil where the host has no
	// trusted record.
	GPUs []int
	// MedianMHz is the busy median SM clock of the host's slowest GPU, in
	// MHz, and BusySamples the busy samples of all its GPUs; nil where
	// the host has no trusted record.
	MedianMHz   *float64
	BusySamples *int
	// Codes are the distinct codes of the leg's reasons that name the
	// host, sorted.
	Codes []string
	// First is the index in the leg's GPUs of the host's first GPU.
	First int
}

// PointBand is one point's window in a leg, in seconds from the leg's
// first sample, as its clock picture draws it.
type PointBand struct {
	Label    string
	From, To float64
}

// pointBands are a trusted leg's point windows as its picture draws them.
func pointBands(l *summarize.Leg) []PointBand {
	cl := l.Clock
	if len(cl.Points) == 0 || cl.Record == nil {
		return nil
	}
	t0, err := time.Parse(time.RFC3339Nano, cl.Record.Window.FirstT)
	if err != nil {
		return nil
	}
	var out []PointBand
	for _, label := range cl.SortedPointLabels() {
		sp := cl.Points[label].Span
		out = append(out, PointBand{Label: label, From: float64(sp.From-t0.UnixNano()) / 1e9, To: float64(sp.To-t0.UnixNano()) / 1e9})
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].From < out[j].From })
	return out
}

// LegGPU is one GPU of a trusted leg: its block of the record, and its
// clock over time.
type LegGPU struct {
	// Index is the GPU's index as the driver numbers it.
	Index int
	UUID  string
	// Host and Role are the GPU's host and its role, in a multi-host leg
	// (SPEC §12.3); "" otherwise.
	Host, Role string
	// MedianMHz, MinMHz and MaxMHz summarize the GPU's SM clock over busy
	// samples, in MHz; SpreadPct is (max − min) / median × 100.
	MedianMHz   *float64
	MinMHz      *int
	MaxMHz      *int
	SpreadPct   *float64
	BusySamples int
	IdleSamples int
	// MeanMHz is the mean SM clock over busy samples, in MHz, to 0.01;
	// nil when there are none.
	MeanMHz *float64
	// Throttle is the union of throttle bits over the GPU's busy samples.
	Throttle []string
	// Trace is the GPU's clock over time; nil unless read with traces.
	Trace *clocks.Trace
}

// Build assembles the document for a summary.
func Build(s *summarize.Summary) *Document {
	d := &Document{
		Title:          "clockgate summary",
		Baseline:       s.Baseline,
		AllowCrossBoot: s.AllowCrossBoot,
		GatePass:       s.GatePass,
		Contract:       s.Contract,
		Warnings:       append([]string{}, s.Warnings...),
		Grid:           s.Grid,
	}
	d.Binding, d.Ratios = s.Ratios()
	compared := map[[2]string]bool{}
	for _, c := range s.Comparisons {
		dc := Comparison{Model: c.Model, Ours: c.Ours, Baseline: c.Baseline, Clock: c.Throughput.Clock, BenchClients: c.BenchClients,
			Points: c.Throughput.Points, Energy: c.Energy}
		dc.Ratios = []Ratio{
			{Family: FamilyThroughput, Value: c.Throughput.Value, Established: c.Throughput.BindingEligible,
				Reasons: c.Throughput.Reasons, Caveats: c.Throughput.Clock.Caveats, Significance: c.Throughput.Significance},
			{Family: FamilyMemory, Value: c.Memory.Value, Established: c.Memory.BindingEligible,
				Ours: c.Memory.Ours, Baseline: c.Memory.Baseline,
				Reasons: c.Memory.Reasons, Caveats: c.Memory.Clock.Caveats,
				Significance: c.Memory.Significance, Test: c.Memory.Test},
		}
		ours, base := s.Arm(c.Model, c.Ours), s.Arm(c.Model, c.Baseline)
		// The rows' array as long as the legs: a row is some hundreds of
		// bytes, and a tree of many legs holds every one.
		dc.Legs = make([]Leg, 0, len(ours)+len(base))
		for _, arm := range [][]*summarize.Leg{ours, base} {
			for _, l := range arm {
				dc.Legs = append(dc.Legs, legRow(l))
			}
		}
		for _, e := range []string{c.Ours, c.Baseline} {
			compared[[2]string{c.Model, e}] = true
		}
		d.Comparisons = append(d.Comparisons, dc)
	}
	for _, l := range s.Legs {
		if !compared[[2]string{l.Model, l.Engine}] {
			d.Uncompared = append(d.Uncompared, legRow(l))
		}
	}
	return d
}

func legRow(l *summarize.Leg) Leg {
	r := Leg{Model: l.Model, Engine: l.Engine, Run: l.Run, Name: l.Name(),
		BindingEligible: l.BindingEligible(), Codes: clocks.Codes(l.Reasons), Reasons: l.Reasons,
		Trusted: l.Clock.Trusted()}
	if r.Trusted {
		r.Trace = l.Clock.Fold.GPUs[0].Trace
		r.Bands = pointBands(l)
	}
	if rec := l.Clock.Record; rec != nil && r.Trusted {
		g := rec.GPUs[0]
		st := g.SMClockMHz
		busy, idle := st.N, g.IdleSamplesExcluded
		r.BootID, r.MedianMHz, r.MinMHz, r.MaxMHz, r.SpreadPct = rec.BootID, st.Median, st.Min, st.Max, st.SpreadPct
		r.BusySamples, r.IdleSamples = &busy, &idle
		r.Throttle = g.ThrottleReasonsActive
		for k, g := range rec.GPUs {
			f := l.Clock.Fold.GPUs[k]
			st := g.SMClockMHz
			r.GPUs = append(r.GPUs, LegGPU{Index: f.Index, UUID: g.UUID, MedianMHz: st.Median, MinMHz: st.Min, MaxMHz: st.Max,
				SpreadPct: st.SpreadPct, BusySamples: st.N, IdleSamples: g.IdleSamplesExcluded, Throttle: g.ThrottleReasonsActive, Trace: f.Trace})
			r.GPUs[k].Host, r.GPUs[k].Role = l.Clock.GPUHost(k)
			if st.N > 0 {
				m := math.Round(f.SumMHz.Float()/float64(st.N)*100) / 100
				r.GPUs[k].MeanMHz = &m
			}
		}
	}
	if rec := l.Clock.Record; rec != nil && r.Trusted {
		r.Power = legPower(rec)
	}
	if l.Memory != nil {
		m := l.Memory.PeakGPUMemoryMiB
		r.PeakGPUMemoryMiB = &m
	}
	r.Hosts = legHosts(l.Clock)
	for _, p := range l.Points {
		r.Points = append(r.Points, p.ID)
	}
	return r
}

// Verdict is the word a report prints for a ratio.
func Verdict(established bool) string {
	if established {
		return "ESTABLISHED"
	}
	return "NOT ESTABLISHED"
}

// Observed is the clock block's observed numbers in one line: both arms'
// medians and share of the maximum clock, the offsets of the medians and
// of the means, for arms of several GPUs the worst GPU position, the
// estimated effect, the busy samples, the idle samples excluded, and,
// where either arm sampled it, each arm's median busy power (never a gate
// term).
func Observed(b *clocks.Block) string {
	arm := func(s clocks.Side) string {
		if s.MedianMHz == nil {
			return fmt.Sprintf("%s n/a (no trusted clock record)", s.Engine)
		}
		pct := "n/a"
		if s.PctOfMax != nil {
			pct = fmt.Sprintf("%.2f%%", *s.PctOfMax)
		}
		return fmt.Sprintf("%s %s MHz (%s of max)", s.Engine, num(*s.MedianMHz), pct)
	}
	off, eff := "n/a", "n/a"
	if b.OffsetPct != nil {
		off = fmt.Sprintf("%.2f%%", *b.OffsetPct)
		if b.MeanOffsetPct != nil {
			off += fmt.Sprintf(", mean offset %.2f%%", *b.MeanOffsetPct)
		}
		if w, ok := WorstGPU(b); ok {
			off += fmt.Sprintf("; worst GPU position %d (%s GPU %d, %s GPU %d)", w.Position, b.Ours.Engine, w.OursGPU, b.Baseline.Engine, w.BaselineGPU)
		}
	}
	if b.EstimatedEffectPct != nil {
		eff = fmt.Sprintf("%.2f%% (× transfer %.4f)", *b.EstimatedEffectPct, b.TransferCoefficient)
	}
	out := fmt.Sprintf("observed: median SM clock %s, %s; offset %s; estimated effect %s; busy samples %s %d, %s %d; idle samples excluded %s %d, %s %d",
		arm(b.Ours), arm(b.Baseline), off, eff,
		b.Ours.Engine, b.Ours.BusySamples, b.Baseline.Engine, b.Baseline.BusySamples,
		b.Ours.Engine, b.Ours.IdleSamplesExcluded, b.Baseline.Engine, b.Baseline.IdleSamplesExcluded)
	if b.Ours.PowerW != nil || b.Baseline.PowerW != nil {
		per := ""
		if len(b.Ours.GPUs) > 0 || len(b.Baseline.GPUs) > 0 {
			per = " per GPU"
		}
		out += fmt.Sprintf("; median busy power%s %s %s, %s %s", per, b.Ours.Engine, watts(b.Ours.PowerW), b.Baseline.Engine, watts(b.Baseline.PowerW))
	}
	if pm := PowerManaged(b); pm != "" {
		out += "; " + pm
	}
	return out
}

// PowerManaged says, for arms whose legs record a power limit, what the
// power controller did: both arms' free clock, their power-managed shares
// at the limit (the engines' own draw under one limit, reported and never
// gated), the median clock while power-managed, and the median busy
// temperature; "" for arms that record no limit.
func PowerManaged(b *clocks.Block) string {
	o, s := b.Ours, b.Baseline
	if o.PowerManagedPct == nil && s.PowerManagedPct == nil {
		return ""
	}
	mhz := func(x *float64) string {
		if x == nil {
			return "n/a"
		}
		return num(*x)
	}
	pct := func(x *float64) string {
		if x == nil {
			return "n/a"
		}
		return fmt.Sprintf("%.1f%%", *x)
	}
	limit := func(side clocks.Side) string {
		switch {
		case side.PowerManagedPct == nil:
			return "no recorded limit"
		case side.EnforcedPowerLimitW == nil:
			// The arm records limits, but its legs do not share one
			// (clock.static_mismatch says which).
			return "differing limits"
		}
		return num(*side.EnforcedPowerLimitW) + " W"
	}
	at := "at " + limit(o)
	if l := limit(s); l != limit(o) {
		at = fmt.Sprintf("at %s and %s", limit(o), l)
	}
	out := fmt.Sprintf("free clock (no power cap) %s %s MHz, %s %s MHz; power-managed %s and %s of busy samples %s (median %s and %s MHz while power-managed): the engines' own draw under one limit, never a gate term",
		o.Engine, mhz(o.MedianMHz), s.Engine, mhz(s.MedianMHz), pct(o.PowerManagedPct), pct(s.PowerManagedPct), at,
		mhz(o.PowerManagedMedianMHz), mhz(s.PowerManagedMedianMHz))
	if o.TemperatureC != nil || s.TemperatureC != nil {
		temp := func(x *float64) string {
			if x == nil {
				return "n/a"
			}
			return num(*x) + " °C"
		}
		out += fmt.Sprintf("; median busy temperature %s %s, %s %s", o.Engine, temp(o.TemperatureC), s.Engine, temp(s.TemperatureC))
	}
	return out
}

// WorstGPU is the GPU position of the largest offset between arms of
// several GPUs: the largest median offset, of those the largest mean
// offset, of those the first. ok is false for arms of one GPU each.
func WorstGPU(b *clocks.Block) (w clocks.GPUOffset, ok bool) {
	key := func(g clocks.GPUOffset) [2]float64 {
		k := [2]float64{-1, -1}
		if g.OffsetPct != nil {
			k[0] = *g.OffsetPct
		}
		if g.MeanOffsetPct != nil {
			k[1] = *g.MeanOffsetPct
		}
		return k
	}
	for _, g := range b.GPUOffsets {
		if k, wk := key(g), key(w); !ok || k[0] > wk[0] || k[0] == wk[0] && k[1] > wk[1] {
			w, ok = g, true
		}
	}
	return w, ok
}

// watts prints a median power draw, or says it was not sampled.
func watts(w *float64) string {
	if w == nil {
		return "n/a (not sampled)"
	}
	return fmt.Sprintf("%.1f W", *w)
}

// legPower describes a leg's power management from its record: per GPU
// that records a limit, its free clock and its power-managed share.
func legPower(rec *clocks.Record) string {
	var parts []string
	for _, g := range rec.GPUs {
		fs := g.FreeClockMHz
		// A GPU with no power-managed sample is not listed: at 0% the
		// free clock is the busy clock above (SPEC §12.1).
		if fs == nil || g.EnforcedPowerLimitW == nil || g.PowerManagedSamples == nil || *g.PowerManagedSamples == 0 {
			continue
		}
		pre := ""
		if g.Index != nil {
			pre = fmt.Sprintf("GPU %d: ", *g.Index)
		}
		pct := 0.0
		if g.SMClockMHz.N > 0 {
			pct = float64(*g.PowerManagedSamples) * 100 / float64(g.SMClockMHz.N)
		}
		free := fmt.Sprintf("no free sample of %d busy", g.SMClockMHz.N)
		if fs.N > 0 {
			free = fmt.Sprintf("free median %s MHz, spread %.2f%%, mean %.2f MHz, n=%d free of %d busy", num(*fs.Median), *fs.SpreadPct, *fs.MeanMHz, fs.N, g.SMClockMHz.N)
		}
		parts = append(parts, fmt.Sprintf("%s%s; %.2f%% power-managed at %s W", pre, free, pct, num(*g.EnforcedPowerLimitW)))
	}
	return strings.Join(parts, "; ")
}

// Caveat is the report line for one check the override waived.
func Caveat(r clocks.Reason) string {
	return fmt.Sprintf("CAVEAT: %s (OVERRIDDEN): %s", r.Code, r.Message)
}

// num prints a number in its shortest exact form; in exponent form when it
// is very large or very small.
func num(x float64) string {
	if a := math.Abs(x); a != 0 && (a >= 1e15 || a < 1e-6) {
		return strconv.FormatFloat(x, 'g', -1, 64)
	}
	return strconv.FormatFloat(x, 'f', -1, 64)
}

// legHosts are a multi-host leg's hosts for its per-host table; nil for a
// single-host leg.
func legHosts(cl *clocks.Leg) []LegHost {
	var out []LegHost
	first := 0
	for _, hl := range cl.Hosts {
		h := LegHost{Host: hl.Host, Role: hl.Role, First: first}
		if hl.Leg != nil && hl.Leg.Trusted() && hl.Leg.Record != nil && hl.Leg.Fold != nil && len(hl.Leg.Fold.GPUs) == len(hl.Leg.Record.GPUs) {
			busy := 0
			for k, g := range hl.Leg.Record.GPUs {
				h.GPUs = append(h.GPUs, hl.Leg.Fold.GPUs[k].Index)
				busy += g.SMClockMHz.N
				if m := g.SMClockMHz.Median; m != nil && (h.MedianMHz == nil || *m < *h.MedianMHz) {
					h.MedianMHz = m
				}
			}
			h.BusySamples = &busy
			first += len(hl.Leg.Record.GPUs)
		}
		seen := map[string]bool{}
		for _, r := range cl.Reasons {
			if namesHost(r.Message, hl.Host) {
				seen[r.Code] = true
			}
		}
		for c := range seen {
			h.Codes = append(h.Codes, c)
		}
		sort.Strings(h.Codes)
		out = append(out, h)
	}
	return out
}

// namesHost says whether a multi-host leg's reason is about host h: a
// reason of the host's own ("host h: …", "host h (rank …"), a GPU it claims
// with another host ("… claimed by hosts h and …:"), or one of the GPUs a
// skew names ("host h GPU 0 at …").
func namesHost(msg, h string) bool {
	if strings.HasPrefix(msg, "host "+h+":") || strings.HasPrefix(msg, "host "+h+" ") || strings.Contains(msg, "host "+h+" GPU ") {
		return true
	}
	if _, rest, ok := strings.Cut(msg, " claimed by hosts "); ok {
		list, _, _ := strings.Cut(rest, ":")
		return slices.Contains(strings.Split(list, " and "), h)
	}
	return false
}
