// Package foreign converts GPU telemetry other recorders wrote (nvidia-smi
// CSV logs, nvidia-smi dmon, amd-smi CSV, dcgm-exporter metrics read from
// Prometheus) into clockgate's own stream and record (SPEC §11.4). A
// foreign file is converted, never judged in place: one parser per format
// behind Parser, one writer (clocks.Sample.AppendJSON, the sampler's), and
// what a source cannot prove is written down as a clock.unproven_* code in
// import.json for the judge, never guessed.
package foreign

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/clockgate/clockgate/clocks"
	"github.com/clockgate/clockgate/sampler"
)

// The formats clockgate import reads.
const (
	FormatSMICSV     = "nvidia-smi-csv"
	FormatDmon       = "nvidia-smi-dmon"
	FormatPrometheus = "prometheus"
	FormatAMDCSV     = "amd-smi-csv"
)

// Formats lists the formats in the order help text names them.
var Formats = []string{FormatSMICSV, FormatDmon, FormatAMDCSV, FormatPrometheus}

// Options are what flags say of a source.
type Options struct {
	// Columns are the --query-gpu names of a headerless CSV (--columns).
	Columns []string
	// TZ is the zone of times printed without one (--tz); nil when not
	// given. TZName is the flag as given.
	TZ     *time.Location
	TZName string
	// Start and Interval time a source with no time column (--start,
	// --interval); Interval also stands as the record's interval_s.
	Start    time.Time
	Interval time.Duration
	// BusyAboveMHz says a sample is busy when its SM clock is above it, for
	// a source without utilization (--busy-above-mhz); 0 when not given.
	BusyAboveMHz int
	// From and To bound the window (--from, --to); zero when not given.
	From, To time.Time
	// Host selects a Prometheus series by its Hostname/hostname label; ""
	// selects any. GPU (--gpu) is a comma-separated list of GPUs to keep,
	// each an index or a UUID (a Prometheus series' gpu or UUID/uuid
	// label); "" keeps every GPU.
	Host, GPU string
	// NodeInstance, for a live query, is the instance label of the node's
	// node_exporter, whose node_boot_time_seconds is the boot identity.
	NodeInstance string
	// RawScrapes says a Prometheus JSON file is the answer to an instant
	// query of a range selector (raw scrapes); without it a file is read
	// as query_range steps (clock.unproven_coverage).
	RawScrapes bool
	// Given are the flags as given, by flag name, for import.json.
	Given map[string]string
}

// Input is one source file.
type Input struct {
	Path string
	Data []byte
}

// Parser reads one format.
type Parser interface {
	// Parse reads in into c; a refusal is a *Refusal.
	Parse(in Input, o *Options, c *Collector) error
}

// ParserFor returns the parser of format.
func ParserFor(format string) (Parser, error) {
	switch format {
	case FormatSMICSV:
		return smiCSV{}, nil
	case FormatDmon:
		return dmon{}, nil
	case FormatPrometheus:
		return promFile{}, nil
	case FormatAMDCSV:
		return amdCSV{}, nil
	}
	return nil, fmt.Errorf("--format %q: want one of %s", format, strings.Join(Formats, ", "))
}

// Refusal is a source clockgate will not convert: it names the file, the
// line and the column (1-based; 0 when not one).
type Refusal struct {
	Path      string
	Line, Col int
	Msg       string
}

func (r *Refusal) Error() string {
	switch {
	case r.Line == 0:
		return fmt.Sprintf("%s: %s", r.Path, r.Msg)
	case r.Col == 0:
		return fmt.Sprintf("%s:%d: %s", r.Path, r.Line, r.Msg)
	}
	return fmt.Sprintf("%s:%d:%d: %s", r.Path, r.Line, r.Col, r.Msg)
}

func refuse(path string, line, col int, format string, args ...any) *Refusal {
	return &Refusal{Path: path, Line: line, Col: col, Msg: fmt.Sprintf(format, args...)}
}

// Not-available tokens: a value the source did not have. Where a value is
// required they are refusals; where a reading is optional the key is left
// out of that sample.
var notAvailable = map[string]bool{"N/A": true, "[N/A]": true, "[Not Supported]": true, "[Unknown Error]": true,
	"[Insufficient Permissions]": true, "[GPU is lost]": true, "": true, "-": true}

// reading is one GPU's sample as a source gave it, before the stream's
// stand-ins are filled.
type reading struct {
	path       string
	line       int
	timeCol    int
	src        string // imported_from
	t          time.Time
	hasT       bool
	index      int
	hasIndex   bool
	uuid, name string
	driver     string
	persist    string
	pstate     string
	vbios      string
	sm         int
	maxSM      int
	apps       int
	appsKind   int // 0 absent, 1 a value, 2 deprecated
	mask       uint64
	hasMask    bool
	reasons    uint64 // per-reason columns' bits set
	util       int
	hasUtil    bool
	temp       *float64
	power      *float64
	limit      *float64
	module     *float64
	memClock   *int
	memUsed    *float64         // GPU memory used, MiB
	counters   map[string]int64 // event_counters_us keys, µs
	cum        map[string]float64
	// amd marks an AMD GPU's reading: no persistence mode or pstate (null
	// in the stream), a perf level ("" when the source has none) and the
	// XCD clocks read.
	amd       bool
	perfLevel string
	xcds      []int
}

// Collector gathers what the parsers read from every input of one leg.
type Collector struct {
	readings []*reading
	// columns maps each source column read to the stream key it became.
	columns map[string]string
	dropped []clocks.Dropped
	// covered is the union of the bits per-reason columns cover; masked
	// says a full bitmask column was read; limitRead that an enforced
	// limit was.
	covered   uint64
	masked    bool
	timeZone  string
	coverage  string // why sample times are not the source's own, or ""
	bootID    string // a proven boot identity (node_boot_time_seconds)
	bootWhy   string
	sorted    bool // sort readings by time then GPU (a source read by series)
	noIDWhere string
	// amdGPUs are what each GPU's amd-smi rows must keep (amdcsv.go).
	amdGPUs map[string]*amdGPU
	// matched are the --gpu selectors some reading answered to.
	matched map[string]bool
}

func newCollector() *Collector {
	return &Collector{columns: map[string]string{}, matched: map[string]bool{}}
}

// gpuSelectors are --gpu's GPUs, in the order given.
func gpuSelectors(o *Options) []string {
	var out []string
	for _, s := range strings.Split(o.GPU, ",") {
		if s = strings.TrimSpace(s); s != "" {
			out = append(out, s)
		}
	}
	return out
}

// selected says whether --gpu keeps a GPU known by names (its index or
// gpu label, its UUID; "" for one it lacks), and records the selector it
// answered to.
func (c *Collector) selected(o *Options, names ...string) bool {
	sel := gpuSelectors(o)
	if len(sel) == 0 {
		return true
	}
	for _, s := range sel {
		for _, n := range names {
			if n != "" && s == n {
				c.matched[s] = true
				return true
			}
		}
	}
	return false
}

// indexName is a reading's index as --gpu names it, "" when it has none.
func (r *reading) indexName() string {
	if !r.hasIndex {
		return ""
	}
	return strconv.Itoa(r.index)
}

func (c *Collector) column(src, key string) { c.columns[src] = key }

func (c *Collector) drop(path string, line int, why string) {
	c.dropped = append(c.dropped, clocks.Dropped{File: path, Line: line, Why: why})
}

// Result is a converted leg.
type Result struct {
	// Stream is the native stream, one sample per line.
	Stream []byte
	// Record is what the stream recomputes to, stop_reason imported.
	Record *clocks.Record
	// Import is import.json.
	Import *clocks.Import
	// Memory is the leg's memory record (SPEC §2.2), folded from the GPU
	// memory used the source logged as the sampler folds it; nil where the
	// source cannot give one, and MemoryWhy then says why and what to log.
	Memory    *sampler.MemoryRecord
	MemoryWhy string
}

// Convert reads inputs in format and converts them to one leg.
func Convert(format string, inputs []Input, o Options) (*Result, error) {
	p, err := ParserFor(format)
	if err != nil {
		return nil, err
	}
	c := newCollector()
	if o.TZ != nil {
		c.timeZone = o.TZName
	}
	sums := map[string]string{}
	for _, in := range inputs {
		h := sha256.Sum256(in.Data)
		sums[in.Path] = hex.EncodeToString(h[:])
		if err := p.Parse(in, &o, c); err != nil {
			return nil, err
		}
	}
	return finish(format, c, &o, sums)
}

// nonBenign are the bits of the clock contract that are not benign, as
// §3 names them; a source must cover each to prove no throttle.
var nonBenign = []uint64{0x4, 0x8, 0x10, 0x20, 0x40, 0x80, 0x200, 0x400}

// amdBits are the bits an AMD GPU's violation accumulators give
// (clocks.AMDThrottleBits); a source covering them proves no throttle.
var amdBits = []uint64{0x4, 0x8, 0x40}

// gpuKey groups a source's readings by GPU.
func (r *reading) gpuKey() string {
	switch {
	case r.hasIndex:
		return fmt.Sprintf("i%d", r.index)
	case r.uuid != "":
		return "u" + r.uuid
	}
	return ""
}

type gpuState struct {
	first, last *reading
	index       int
	maxSM       int
	prev        *reading
	n, busy     int // readings, busy readings
}

func finish(format string, c *Collector, o *Options, sums map[string]string) (*Result, error) {
	path := ""
	for p := range sums {
		if path == "" || p < path {
			path = p
		}
	}
	for _, s := range gpuSelectors(o) {
		if !c.matched[s] {
			return nil, refuse(path, 0, 0, "--gpu %s: no GPU in the source has that index or UUID", s)
		}
	}
	if len(c.readings) == 0 {
		return nil, refuse(path, 0, 0, "no samples")
	}
	if c.sorted {
		sort.SliceStable(c.readings, func(i, j int) bool {
			a, b := c.readings[i], c.readings[j]
			if !a.t.Equal(b.t) {
				return a.t.Before(b.t)
			}
			return a.index < b.index
		})
	}
	// Per GPU: time only forward; one GPU without an identity.
	gpus := map[string]*gpuState{}
	var order []string
	for _, r := range c.readings {
		k := r.gpuKey()
		g := gpus[k]
		if g == nil {
			g = &gpuState{first: r, index: r.index}
			gpus[k] = g
			order = append(order, k)
		}
		if p := g.prev; p != nil {
			switch {
			case r.t.Before(p.t):
				return nil, refuse(r.path, r.line, r.timeCol, "time goes backwards for GPU %s: %s after %s (line %d)",
					describeGPU(r), r.t.UTC().Format(time.RFC3339Nano), p.t.UTC().Format(time.RFC3339Nano), p.line)
			case k == "" && r.t.Equal(p.t):
				return nil, refuse(r.path, r.line, r.timeCol, "several GPUs without index or UUID: two rows at %s (lines %d and %d); log index and uuid",
					r.t.UTC().Format(time.RFC3339Nano), p.line, r.line)
			}
		}
		g.prev, g.last = r, r
		if r.sm > g.maxSM {
			g.maxSM = r.sm
		}
		g.n++
		if r.busy(o) {
			g.busy++
		}
	}
	if err := idleGPUs(gpus, order, o); err != nil {
		return nil, err
	}
	// A GPU known only by UUID takes its index by order of appearance.
	if _, ok := gpus[""]; !ok {
		next := 0
		for _, k := range order {
			if strings.HasPrefix(k, "u") {
				for used := true; used; {
					used = false
					if _, ok := gpus[fmt.Sprintf("i%d", next)]; ok {
						used, next = true, next+1
					}
				}
				gpus[k].index = next
				next++
			}
		}
	}
	un := map[string][]string{}
	note := func(code, why string) {
		for _, w := range un[code] {
			if w == why {
				return
			}
		}
		un[code] = append(un[code], why)
	}
	first := c.readings[0]
	if first.amd {
		// amd-smi metric and monitor CSVs carry no UUID, name, driver or
		// power cap (amd-smi static and list do), and an AMD GPU has no
		// applications clock.
		note(clocks.CodeUnprovenStatic, "no GPU UUID, name or driver version: gpu_uuid, gpu_name and driver_version are unproven (amd-smi metric and monitor CSVs carry none)")
		if first.maxSM == 0 {
			note(clocks.CodeUnprovenStatic, "no maximum GFX clock: clocks_max_sm_mhz is unproven and stands at the highest GFX clock read (log amd-smi metric --clock: gfx_0_max_clk)")
		}
	} else if first.uuid == "" {
		note(clocks.CodeUnprovenStatic, "no GPU UUID: gpu_uuid is unproven (log uuid)")
	}
	if !first.amd && first.name == "" {
		note(clocks.CodeUnprovenStatic, "no GPU name: gpu_name is unproven (log name)")
	}
	if !first.amd && first.driver == "" {
		note(clocks.CodeUnprovenStatic, "no driver version: driver_version is unproven (log driver_version)")
	}
	if !first.amd && first.maxSM == 0 {
		note(clocks.CodeUnprovenStatic, "no maximum SM clock: clocks_max_sm_mhz is unproven and stands at the highest SM clock read (log clocks.max.sm)")
	}
	if !first.amd && first.appsKind == 0 {
		note(clocks.CodeUnprovenStatic, "no applications clock: clocks_applications_graphics_mhz is unproven and written null (log clocks.applications.graphics)")
	}
	if first.amd && first.perfLevel == "" {
		note(clocks.CodeUnprovenStatic, "no perf level: perf_level is unproven (log amd-smi metric with --perf-level)")
	}
	if first.persist == "" && !first.amd {
		note(clocks.CodeUnprovenPersistence, "no persistence mode: whether the driver stayed loaded between legs is unproven (log persistence_mode)")
	}
	if !c.masked {
		var left []string
		bits, advice := nonBenign, "log clocks_event_reasons.active, or DCGM_FI_DEV_CLOCKS_EVENT_REASONS"
		if first.amd {
			// An AMD GPU's bits are those its violation accumulators give
			// (clocks.AMDThrottleBits), as the sampler derives them.
			bits, advice = amdBits, "log amd-smi metric --throttle (ROCm 6) or --violation (ROCm 7): ppt_, socket_thermal_, vr_thermal_, hbm_thermal_, prochot_accumulated"
		}
		for _, b := range bits {
			if c.covered&b == 0 {
				left = append(left, fmt.Sprintf("%s %s", clocks.FormatThrottle(b), clocks.ThrottleBitName(b)))
			}
		}
		what := "no throttle bitmask column"
		if c.covered != 0 {
			what += fmt.Sprintf(" (per-reason columns and event counters cover %s)", clocks.FormatThrottle(c.covered))
		}
		if len(left) > 0 || !first.amd {
			note(clocks.CodeUnprovenThrottle, fmt.Sprintf("%s; bits not covered: %s (%s)", what, strings.Join(left, ", "), advice))
		}
	}
	if first.limit == nil && first.amd {
		note(clocks.CodeUnprovenPowerLimit, "no socket power cap: power management at the cap cannot be told from a throttle (amd-smi metric and monitor CSVs carry none)")
	} else if first.limit == nil {
		note(clocks.CodeUnprovenPowerLimit, "no enforced power limit: SwPowerCap cannot be told from a throttle (log enforced.power.limit, or DCGM_FI_DEV_ENFORCED_POWER_LIMIT)")
	}
	if !first.hasUtil {
		note(clocks.CodeUnprovenBusy, fmt.Sprintf("no utilization: a sample is counted busy when its SM clock is above %d MHz (--busy-above-mhz) (log utilization.gpu)", o.BusyAboveMHz))
	}
	if c.coverage != "" {
		note(clocks.CodeUnprovenCoverage, c.coverage)
	}
	bootID := c.bootID
	if bootID == "" {
		bootID = clocks.Unproven
		why := "no boot id"
		if c.bootWhy != "" {
			why += ": " + c.bootWhy
		}
		note(clocks.CodeUnprovenBoot, why+"; proven across legs only by counter continuity")
	}

	// The stream.
	var out bytes.Buffer
	var line []byte
	boot := map[string]*clocks.BootCounters{}
	for _, r := range c.readings {
		g := gpus[r.gpuKey()]
		s := clocks.Sample{T: r.t.UTC().Format("2006-01-02T15:04:05.000Z"), BootID: bootID, GPUIndex: g.index,
			GPUUUID: orUnproven(r.uuid), GPUName: orUnproven(r.name), DriverVersion: orUnproven(r.driver),
			SMClockMHz: r.sm, ClocksMaxSMMHz: r.maxSM, PersistenceMode: orUnproven(r.persist), PState: orUnproven(r.pstate),
			TemperatureGPUC: r.temp, PowerDrawW: r.power, ClocksMemMHz: r.memClock, MemoryUsedMiB: r.memUsed, ImportedFrom: r.src}
		if s.ClocksMaxSMMHz == 0 {
			s.ClocksMaxSMMHz = g.maxSM
		}
		if r.appsKind == 1 {
			s.ClocksApplicationsGraphicsMHz = &r.apps
		}
		if r.amd {
			// AMD GPUs have no persistence mode or pstate: null, as the
			// sampler writes them.
			s.Vendor, s.PersistenceMode, s.PState = clocks.VendorAMD, "", ""
			s.PerfLevel = orUnproven(r.perfLevel)
			s.XCDClocksMHz = r.xcds
		}
		bits := r.reasons
		if c.masked {
			bits = r.mask
		}
		s.ThrottleReasonsActive = clocks.FormatThrottle(bits)
		if r.hasUtil {
			s.UtilizationGPUPct = r.util
		} else if r.busy(o) {
			s.UtilizationGPUPct = 100
		}
		if r.limit != nil {
			s.EnforcedPowerLimitW = r.limit
			s.ModuleEnforcedPowerLimitW = r.module
		}
		if r.counters != nil {
			var cs clocks.Counters
			for i, n := range clocks.CounterNames {
				v, ok := r.counters[n]
				if !ok {
					return nil, refuse(r.path, r.line, 0, "event counter %s missing where the others are given", n)
				}
				cs.Set(i, v)
			}
			s.EventCountersUS = &cs
		}
		if r.vbios != "" {
			v := r.vbios
			s.VbiosVersion = &v
		}
		line = s.AppendJSON(line[:0])
		out.Write(line)
		out.WriteByte('\n')

		bc := boot[r.gpuKey()]
		if bc == nil {
			bc = &clocks.BootCounters{GPUIndex: g.index, GPUUUID: s.GPUUUID, GPUName: s.GPUName, FirstT: s.T, Counters: map[string][2]float64{}}
			boot[r.gpuKey()] = bc
		}
		bc.LastT = s.T
		if r.power != nil && (bc.MaxPowerW == nil || *r.power > *bc.MaxPowerW) {
			p := *r.power
			bc.MaxPowerW = &p
		}
		cum := map[string]float64{}
		for k, v := range r.cum {
			cum[k] = v
		}
		for k, v := range r.counters {
			cum[k+"_us"] = float64(v)
		}
		for k, v := range cum {
			if pair, ok := bc.Counters[k]; ok {
				pair[1] = v
				bc.Counters[k] = pair
			} else {
				bc.Counters[k] = [2]float64{v, v}
			}
		}
	}

	// The record, as the stream recomputes to.
	fold := clocks.NewFold()
	if err := fold.FoldStream(bytes.NewReader(out.Bytes()), "stream"); err != nil {
		return nil, fmt.Errorf("the converted stream is not valid: %v", err)
	}
	interval := o.Interval.Seconds()
	if interval == 0 {
		var err error
		if interval, err = intervalOf(c.readings); err != nil {
			return nil, refuse(first.path, 0, 0, "%v; pass --interval", err)
		}
	}
	rec, err := fold.Record(interval, clocks.StopImported)
	if err != nil {
		return nil, err
	}

	im := &clocks.Import{SHA256: sums, Format: format, Columns: c.columns, TimeZone: c.timeZone,
		Given: o.Given, DroppedLines: c.dropped, UnprovenWhy: map[string]string{}}
	if im.Given == nil {
		im.Given = map[string]string{}
	}
	if im.DroppedLines == nil {
		im.DroppedLines = []clocks.Dropped{}
	}
	for code, why := range un {
		im.Unproven = append(im.Unproven, code)
		im.UnprovenWhy[code] = strings.Join(why, "; ")
	}
	sort.Strings(im.Unproven)
	if im.Unproven == nil {
		im.Unproven = []string{}
	}
	for _, k := range order {
		im.BootCounters = append(im.BootCounters, *boot[k])
	}
	res := &Result{Stream: out.Bytes(), Record: rec, Import: im}
	res.Memory, res.MemoryWhy = memoryOf(format, c.readings, order)
	return res, nil
}

// memoryOf folds the GPU memory used of the readings into the leg's memory
// record, as the sampler does (sampler.MemoryPeaks): one reading of the
// leg is the k-th reading of each of its GPUs, and its value the sum over
// them. No record (and why) where the source logged no memory used, where
// a reading lacks it, or where the GPUs have unequal numbers of readings
// (no per-reading sum can be formed).
func memoryOf(format string, rs []*reading, order []string) (*sampler.MemoryRecord, string) {
	per := map[string][]*reading{}
	logged := false
	for _, r := range rs {
		per[r.gpuKey()] = append(per[r.gpuKey()], r)
		logged = logged || r.memUsed != nil
	}
	if !logged {
		return nil, "the log has no GPU memory used; " + clocks.ImportMemoryHint(format)
	}
	n := len(per[order[0]])
	for _, k := range order[1:] {
		if m := len(per[k]); m != n {
			return nil, fmt.Sprintf("GPU %s has %d readings and GPU %s %d: the memory used cannot be summed over the GPUs reading by reading",
				describeGPU(per[order[0]][0]), n, describeGPU(per[k][0]), m)
		}
	}
	var peaks sampler.MemoryPeaks
	reading := make([]*clocks.Sample, len(order))
	for i := range n {
		for j, k := range order {
			r := per[k][i]
			if r.memUsed == nil {
				return nil, fmt.Sprintf("%s:%d: GPU %s gave no memory used; %s", r.path, r.line, describeGPU(r), clocks.ImportMemoryHint(format))
			}
			reading[j] = &clocks.Sample{GPUIndex: r.index, GPUUUID: r.uuid, MemoryUsedMiB: r.memUsed}
		}
		peaks.Add(reading, nil)
	}
	rec, err := peaks.Record()
	if err != nil {
		return nil, err.Error()
	}
	return rec, ""
}

func orUnproven(s string) string {
	if s == "" {
		return clocks.Unproven
	}
	return s
}

// busy says whether a reading prices work: utilization above 0, or,
// where the source has none, an SM clock above --busy-above-mhz.
func (r *reading) busy(o *Options) bool {
	if r.hasUtil {
		return r.util > 0
	}
	return r.sm > o.BusyAboveMHz
}

// idleGPUs refuses a leg where a GPU has no busy reading: its record would
// summarize nothing (a record's sm_clock_mhz.n of 0 is clock.invalid), and
// the source cannot say whether the benchmark ran there. A log of the
// whole box where the benchmark used some of its GPUs imports with --gpu
// naming them.
func idleGPUs(gpus map[string]*gpuState, order []string, o *Options) error {
	var idle, busy []string
	var first *reading
	n := 0
	for _, k := range order {
		g := gpus[k]
		name := describeGPU(g.first)
		if g.busy > 0 {
			busy = append(busy, name)
			continue
		}
		if first == nil {
			first = g.first
		}
		idle = append(idle, name)
		n += g.n
	}
	if first == nil {
		return nil
	}
	what := "utilization 0"
	if !first.hasUtil {
		what = fmt.Sprintf("no SM clock above --busy-above-mhz %d", o.BusyAboveMHz)
	}
	if len(busy) == 0 {
		return refuse(first.path, first.line, 0, "no GPU has a busy reading (%s in all %d readings): nothing ran in the window to judge", what, n)
	}
	s := ""
	if len(idle) > 1 {
		s = "s"
	}
	return refuse(first.path, first.line, 0, "no busy reading on GPU%s %s (%s in all %d of their readings): nothing ran there to judge; import the GPUs the benchmark ran on with --gpu %s",
		s, strings.Join(idle, ", "), what, n, strings.Join(busy, ","))
}

func describeGPU(r *reading) string {
	switch {
	case r.hasIndex:
		return fmt.Sprint(r.index)
	case r.uuid != "":
		return r.uuid
	}
	return "(the only one)"
}

// intervalOf infers the interval from the readings' times, per GPU in
// the order GPUs first appear (clocks.IntervalFromTimes).
func intervalOf(rs []*reading) (float64, error) {
	at := map[string]int{}
	var series [][]time.Time
	for _, r := range rs {
		k := r.gpuKey()
		i, ok := at[k]
		if !ok {
			i = len(series)
			at[k] = i
			series = append(series, nil)
		}
		// As the stream writes it: cut to the millisecond (a CSV log's
		// time may carry more digits).
		series[i] = append(series[i], r.t.Truncate(time.Millisecond))
	}
	return clocks.IntervalFromTimes(series)
}

// parseWhole reads a non-negative integer value, allowing a decimal point
// with only zeros after it ("1410.000000", as DCGM prints gauges), up to
// 2^53 (a counter of µs since the driver loaded runs past 2^32 in about an
// hour of capping; above 2^53 a float64 is no longer exact).
func parseWhole(s string) (int, bool) {
	if n, err := strconv.ParseInt(s, 10, 64); err == nil && n >= 0 && n <= 1<<53 {
		return int(n), true
	}
	f, ok := parseNumber(s)
	if !ok || f < 0 || f != math.Trunc(f) || f > 1<<53 {
		return 0, false
	}
	return int(f), true
}

func parseNumber(s string) (float64, bool) {
	if s == "" || !(s[0] == '-' || s[0] == '.' || s[0] >= '0' && s[0] <= '9') || strings.ContainsAny(s, "xXpP_") {
		return 0, false
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
		return 0, false
	}
	return f, true
}
