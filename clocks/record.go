package clocks

import (
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"math/big"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/clockgate/clockgate/strictjson"
)

// Stop reasons a sampler records in Window.StopReason.
const (
	StopPIDExit     = "pid-exit"
	StopCommandExit = "command-exit"
	StopSignal      = "signal"
	StopMaxDuration = "max-duration"
	// StopRefused: the sampler refused a reading mid-window; the record
	// says why in Refusal.
	StopRefused = "refused"
	// StopRebuilt: the record was recomputed from its stream by clockgate
	// build, so where the window ended is unknown.
	StopRebuilt = "rebuilt"
	// StopImported: the stream was converted from telemetry another
	// recorder wrote (clockgate import); PREFIX.import.json beside the
	// record says from what, and what the source cannot prove.
	StopImported = "imported"
)

var stopReasons = map[string]bool{StopPIDExit: true, StopCommandExit: true, StopSignal: true, StopMaxDuration: true,
	StopRefused: true, StopRebuilt: true, StopImported: true}

// stopReasonList is stopReasons in the order messages name them.
const stopReasonList = "pid-exit, command-exit, signal, max-duration, refused, rebuilt, imported"

// Stats summarizes the SM clock over a window's busy samples, in MHz. With
// N == 0 the other fields are nil: there is nothing to summarize.
type Stats struct {
	N         int      `json:"n"`
	Min       *int     `json:"min"`
	Median    *float64 `json:"median"`
	Max       *int     `json:"max"`
	SpreadPct *float64 `json:"spread_pct"`
}

// Window says what a sampler observed and why it stopped.
type Window struct {
	FirstT       string  `json:"first_t"`
	LastT        string  `json:"last_t"`
	SamplesTotal int     `json:"samples_total"`
	IntervalS    float64 `json:"interval_s"`
	StopReason   string  `json:"stop_reason"`
	// MaxGapS is the largest time between two consecutive samples, in
	// seconds to the millisecond; nil in records written before it existed
	// (the stream still gives it, and the coverage check reads the stream).
	MaxGapS *float64 `json:"max_gap_s,omitempty"`
	// UTCOffsetS is the sampler host's UTC offset at the first sample, in
	// seconds east of UTC, and TimeZone its IANA zone name where known:
	// what places a bench client's wall-clock date in time (SPEC §10.2).
	// nil and "" in records written before the sampler recorded them.
	UTCOffsetS *int   `json:"utc_offset_s,omitempty"`
	TimeZone   string `json:"time_zone,omitempty"`
}

// GPU is one GPU's part of a leg's clock record: its SM clock over busy
// samples, its static fields, its throttle and persistence state, and its
// idle samples.
type GPU struct {
	// Index is the GPU's index as the driver numbers it; nil in a record
	// of one GPU written in the single-GPU layout, which names none.
	Index                         *int
	UUID                          string
	Name                          string
	DriverVersion                 string
	SMClockMHz                    Stats
	ClocksMaxSMMHz                int
	ClocksApplicationsGraphicsMHz *int
	ThrottleReasonsActive         []string
	// PersistenceMode is as the driver prints it; "" (null in the record)
	// for an AMD GPU, which has none.
	PersistenceMode     string
	IdleSamplesExcluded int
	// Vendor, PerfLevel and MemoryPartition are an AMD GPU's, as its
	// samples give them; "" for NVIDIA (absent from the record).
	Vendor          string
	PerfLevel       string
	MemoryPartition string
	// EnforcedPowerLimitW and ModuleEnforcedPowerLimitW are the window's
	// power limits, in W; nil where its stream records none.
	EnforcedPowerLimitW       *float64
	ModuleEnforcedPowerLimitW *float64
	// FreeClockMHz summarizes the SM clock over free busy samples, and
	// PowerManagedSamples counts the power-managed ones; both nil unless
	// the stream records enforced_power_limit_w.
	FreeClockMHz        *FreeStats
	PowerManagedSamples *int
	// VbiosVersion is the GPU's VBIOS version, one of
	// OptionalStaticFields; nil where its stream records none.
	VbiosVersion *string
	// EnergyScope is what the GPU's energy counter measures ("gpu" or
	// "module"), one of OptionalStaticFields; nil where its stream
	// records no counter.
	EnergyScope *string
	// PCIeGenMax and PCIeWidthMax are the GPU's maximum PCIe link
	// generation and width (SPEC §12.2); nil where its stream records
	// none.
	PCIeGenMax   *int
	PCIeWidthMax *int
}

// FreeStats summarizes the SM clock over a window's free busy samples, in
// MHz, with their mean. With N == 0 the other fields are nil.
type FreeStats struct {
	Stats
	MeanMHz *float64 `json:"mean_mhz"`
}

// Record is the per-leg clock record, r<N>.summary.json: the window, and
// one block per GPU the leg sampled, in index order. A leg of one GPU is
// written in the single-GPU layout (the block's fields beside the window's,
// as clockgate wrote every record before it sampled several GPUs); a leg of
// several, as "gpus": [blocks].
type Record struct {
	BootID string
	GPUs   []GPU
	Window Window
	// Refusal is why the sampler refused, exactly when the window's stop
	// reason is StopRefused.
	Refusal string
	// ComputeProcesses are the GPUs' compute processes at the first and
	// last reading; nil where the sampler did not list them.
	ComputeProcesses *ComputeProcesses
	// Expect is the leg's declared state (--expect); nil where nothing
	// was declared.
	Expect *Expect
	// Host is the host block (SPEC §12.2), recomputed from the host
	// stream beside the GPU stream; nil for a leg recorded without one.
	Host *Host
	// TimeSync is the host's time synchronisation at the window's start
	// and end, recorded by the sampler of a multi-host leg (SPEC §12.3);
	// nil elsewhere.
	TimeSync *TimeSyncWindow
}

// singleRecord is the single-GPU layout, fields in the order it has
// always been written.
type singleRecord struct {
	BootID                        string   `json:"boot_id"`
	SMClockMHz                    Stats    `json:"sm_clock_mhz"`
	ClocksMaxSMMHz                int      `json:"clocks_max_sm_mhz"`
	ClocksApplicationsGraphicsMHz *int     `json:"clocks_applications_graphics_mhz"`
	ThrottleReasonsActive         []string `json:"throttle_reasons_active"`
	PersistenceMode               *string  `json:"persistence_mode"`
	DriverVersion                 string   `json:"driver_version"`
	GPUName                       string   `json:"gpu_name"`
	GPUUUID                       string   `json:"gpu_uuid"`
	IdleSamplesExcluded           int      `json:"idle_samples_excluded"`
	Vendor                        string   `json:"vendor,omitempty"`
	PerfLevel                     string   `json:"perf_level,omitempty"`
	MemoryPartition               string   `json:"memory_partition,omitempty"`
	powerFields
	VbiosVersion     *string           `json:"vbios_version,omitempty"`
	EnergyScope      *string           `json:"energy_scope,omitempty"`
	PCIeGenMax       *int              `json:"pcie_gen_max,omitempty"`
	PCIeWidthMax     *int              `json:"pcie_width_max,omitempty"`
	Window           Window            `json:"window"`
	Refusal          string            `json:"refusal,omitempty"`
	ComputeProcesses *ComputeProcesses `json:"compute_processes,omitempty"`
	Expect           *Expect           `json:"expect,omitempty"`
	Host             *Host             `json:"host,omitempty"`
	TimeSync         *TimeSyncWindow   `json:"time_sync,omitempty"`
}

// powerFields are a GPU's power-management fields, written only where its
// stream records a limit.
type powerFields struct {
	EnforcedPowerLimitW       *float64   `json:"enforced_power_limit_w,omitempty"`
	ModuleEnforcedPowerLimitW *float64   `json:"module_enforced_power_limit_w,omitempty"`
	FreeClockMHz              *FreeStats `json:"free_clock_mhz,omitempty"`
	PowerManagedSamples       *int       `json:"power_managed_samples,omitempty"`
}

func (g *GPU) powerFields() powerFields {
	return powerFields{g.EnforcedPowerLimitW, g.ModuleEnforcedPowerLimitW, g.FreeClockMHz, g.PowerManagedSamples}
}

func (g *GPU) setPowerFields(p powerFields) {
	g.EnforcedPowerLimitW, g.ModuleEnforcedPowerLimitW, g.FreeClockMHz, g.PowerManagedSamples =
		p.EnforcedPowerLimitW, p.ModuleEnforcedPowerLimitW, p.FreeClockMHz, p.PowerManagedSamples
}

// gpuBlock is one GPU of the several-GPU layout.
type gpuBlock struct {
	GPUIndex                      int      `json:"gpu_index"`
	GPUUUID                       string   `json:"gpu_uuid"`
	GPUName                       string   `json:"gpu_name"`
	DriverVersion                 string   `json:"driver_version"`
	ClocksMaxSMMHz                int      `json:"clocks_max_sm_mhz"`
	ClocksApplicationsGraphicsMHz *int     `json:"clocks_applications_graphics_mhz"`
	SMClockMHz                    Stats    `json:"sm_clock_mhz"`
	ThrottleReasonsActive         []string `json:"throttle_reasons_active"`
	PersistenceMode               *string  `json:"persistence_mode"`
	IdleSamplesExcluded           int      `json:"idle_samples_excluded"`
	Vendor                        string   `json:"vendor,omitempty"`
	PerfLevel                     string   `json:"perf_level,omitempty"`
	MemoryPartition               string   `json:"memory_partition,omitempty"`
	powerFields
	VbiosVersion *string `json:"vbios_version,omitempty"`
	EnergyScope  *string `json:"energy_scope,omitempty"`
	PCIeGenMax   *int    `json:"pcie_gen_max,omitempty"`
	PCIeWidthMax *int    `json:"pcie_width_max,omitempty"`
}

// nullable is s for a JSON field, nil (null) for "".
func nullable(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// unnull is a JSON field's string, "" for null.
func unnull(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}

type multiRecord struct {
	BootID           string            `json:"boot_id"`
	GPUs             []gpuBlock        `json:"gpus"`
	Window           Window            `json:"window"`
	Refusal          string            `json:"refusal,omitempty"`
	ComputeProcesses *ComputeProcesses `json:"compute_processes,omitempty"`
	Expect           *Expect           `json:"expect,omitempty"`
	Host             *Host             `json:"host,omitempty"`
	TimeSync         *TimeSyncWindow   `json:"time_sync,omitempty"`
}

// MarshalJSON writes the record in the single-GPU layout when it has one
// GPU that names no index, else in the several-GPU layout.
func (r Record) MarshalJSON() ([]byte, error) {
	if len(r.GPUs) == 1 && r.GPUs[0].Index == nil {
		g := r.GPUs[0]
		return json.Marshal(singleRecord{BootID: r.BootID, SMClockMHz: g.SMClockMHz, ClocksMaxSMMHz: g.ClocksMaxSMMHz,
			ClocksApplicationsGraphicsMHz: g.ClocksApplicationsGraphicsMHz, ThrottleReasonsActive: g.ThrottleReasonsActive,
			PersistenceMode: nullable(g.PersistenceMode), DriverVersion: g.DriverVersion, GPUName: g.Name, GPUUUID: g.UUID,
			IdleSamplesExcluded: g.IdleSamplesExcluded, Vendor: g.Vendor, PerfLevel: g.PerfLevel, MemoryPartition: g.MemoryPartition,
			powerFields: g.powerFields(), VbiosVersion: g.VbiosVersion, EnergyScope: g.EnergyScope,
			PCIeGenMax: g.PCIeGenMax, PCIeWidthMax: g.PCIeWidthMax,
			Window: r.Window, Refusal: r.Refusal, ComputeProcesses: r.ComputeProcesses, Expect: r.Expect, Host: r.Host, TimeSync: r.TimeSync})
	}
	m := multiRecord{BootID: r.BootID, GPUs: make([]gpuBlock, len(r.GPUs)), Window: r.Window, Refusal: r.Refusal, ComputeProcesses: r.ComputeProcesses, Expect: r.Expect, Host: r.Host, TimeSync: r.TimeSync}
	for i, g := range r.GPUs {
		idx := 0
		if g.Index != nil {
			idx = *g.Index
		}
		m.GPUs[i] = gpuBlock{GPUIndex: idx, GPUUUID: g.UUID, GPUName: g.Name, DriverVersion: g.DriverVersion,
			ClocksMaxSMMHz: g.ClocksMaxSMMHz, ClocksApplicationsGraphicsMHz: g.ClocksApplicationsGraphicsMHz,
			SMClockMHz: g.SMClockMHz, ThrottleReasonsActive: g.ThrottleReasonsActive, PersistenceMode: nullable(g.PersistenceMode),
			IdleSamplesExcluded: g.IdleSamplesExcluded, Vendor: g.Vendor, PerfLevel: g.PerfLevel, MemoryPartition: g.MemoryPartition,
			powerFields: g.powerFields(), VbiosVersion: g.VbiosVersion, EnergyScope: g.EnergyScope,
			PCIeGenMax: g.PCIeGenMax, PCIeWidthMax: g.PCIeWidthMax}
	}
	return json.Marshal(m)
}

// UnmarshalJSON reads a record in either layout as MarshalJSON writes it,
// without validating it: ParseRecord is the contract's reader.
func (r *Record) UnmarshalJSON(data []byte) error {
	var probe struct {
		GPUs json.RawMessage `json:"gpus"`
	}
	if err := json.Unmarshal(data, &probe); err != nil {
		return err
	}
	if probe.GPUs == nil {
		var s singleRecord
		if err := json.Unmarshal(data, &s); err != nil {
			return err
		}
		*r = Record{BootID: s.BootID, Window: s.Window, Refusal: s.Refusal, ComputeProcesses: s.ComputeProcesses, Expect: s.Expect, Host: s.Host, TimeSync: s.TimeSync, GPUs: []GPU{{UUID: s.GPUUUID, Name: s.GPUName, VbiosVersion: s.VbiosVersion, EnergyScope: s.EnergyScope,
			DriverVersion: s.DriverVersion, SMClockMHz: s.SMClockMHz, ClocksMaxSMMHz: s.ClocksMaxSMMHz,
			ClocksApplicationsGraphicsMHz: s.ClocksApplicationsGraphicsMHz, ThrottleReasonsActive: s.ThrottleReasonsActive,
			PersistenceMode: unnull(s.PersistenceMode), IdleSamplesExcluded: s.IdleSamplesExcluded,
			Vendor: s.Vendor, PerfLevel: s.PerfLevel, MemoryPartition: s.MemoryPartition}}}
		r.GPUs[0].setPowerFields(s.powerFields)
		r.GPUs[0].PCIeGenMax, r.GPUs[0].PCIeWidthMax = s.PCIeGenMax, s.PCIeWidthMax
		return nil
	}
	var m multiRecord
	if err := json.Unmarshal(data, &m); err != nil {
		return err
	}
	*r = Record{BootID: m.BootID, Window: m.Window, Refusal: m.Refusal, ComputeProcesses: m.ComputeProcesses, Expect: m.Expect, Host: m.Host, TimeSync: m.TimeSync}
	for _, g := range m.GPUs {
		r.GPUs = append(r.GPUs, GPU{Index: ptr(g.GPUIndex), UUID: g.GPUUUID, Name: g.GPUName, DriverVersion: g.DriverVersion, VbiosVersion: g.VbiosVersion, EnergyScope: g.EnergyScope,
			SMClockMHz: g.SMClockMHz, ClocksMaxSMMHz: g.ClocksMaxSMMHz, ClocksApplicationsGraphicsMHz: g.ClocksApplicationsGraphicsMHz,
			ThrottleReasonsActive: g.ThrottleReasonsActive, PersistenceMode: unnull(g.PersistenceMode), IdleSamplesExcluded: g.IdleSamplesExcluded,
			Vendor: g.Vendor, PerfLevel: g.PerfLevel, MemoryPartition: g.MemoryPartition})
		r.GPUs[len(r.GPUs)-1].setPowerFields(g.powerFields)
		r.GPUs[len(r.GPUs)-1].PCIeGenMax, r.GPUs[len(r.GPUs)-1].PCIeWidthMax = g.PCIeGenMax, g.PCIeWidthMax
	}
	return nil
}

// static returns the GPU's STATIC_FIELDS values, printed.
func (g *GPU) static() [len(staticNames)]string {
	return [len(staticNames)]string{fmt.Sprintf("%q", g.Name), fmt.Sprintf("%q", g.UUID), fmt.Sprintf("%q", g.DriverVersion),
		fmt.Sprint(g.ClocksMaxSMMHz), intOrNull(g.ClocksApplicationsGraphicsMHz),
		vendorName(g.Vendor), strOrNull(g.PerfLevel), strOrNull(g.MemoryPartition),
		wattsOrAbsent(g.EnforcedPowerLimitW), wattsOrAbsent(g.ModuleEnforcedPowerLimitW), quotedOrAbsent(g.VbiosVersion), quotedOrAbsent(g.EnergyScope)}
}

// staticNames are StaticFields, PowerStaticFields and then
// OptionalStaticFields, in the order static returns them.
var staticNames = [...]string{"gpu_name", "gpu_uuid", "driver_version", "clocks_max_sm_mhz", "clocks_applications_graphics_mhz",
	"vendor", "perf_level", "memory_partition", "enforced_power_limit_w", "module_enforced_power_limit_w", "vbios_version", "energy_scope"}

// energyScopeName is energy_scope's name among the static fields: it is
// compared across legs and arms only where both record it (SPEC §11.3:
// one recorded without the counter is energy.method_mismatch).
const energyScopeName = "energy_scope"

// absent is what a static field prints as where its stream records none.
const absent = "absent"

// quotedOrAbsent prints a string static field: quoted, or "absent" where
// the stream records none, so that a stream without it compares equal to
// another without it, and unequal to one with it.
func quotedOrAbsent(s *string) string {
	if s == nil {
		return "absent"
	}
	return strconv.Quote(*s)
}

// wattsOrAbsent prints a power limit as a static field: its W, or
// "absent" where the stream records none.
func wattsOrAbsent(w *float64) string {
	if w == nil {
		return "absent"
	}
	return strconv.FormatFloat(*w, 'f', -1, 64) + " W"
}

// Label names the GPU in a message: "GPU 3", or "" in a single-GPU record.
func (g *GPU) Label() string {
	if g.Index == nil {
		return ""
	}
	return fmt.Sprintf("GPU %d", *g.Index)
}

func intOrNull(p *int) string {
	if p == nil {
		return "null"
	}
	return fmt.Sprint(*p)
}

// ParseRecord reads and validates a clock record in either layout,
// fail-closed: every field present, typed, finite and in range; for each
// GPU min ≤ median ≤ max, spread_pct agreeing with them, a non-empty
// throttle list and n > 0; every GPU's index once; and the GPUs' busy and
// idle samples adding up to the window's. The error names the field.
func ParseRecord(data []byte) (*Record, error) {
	v, err := strictjson.ParseObject(data)
	if err != nil {
		return nil, err
	}
	o := &obj{v: v}
	r := &Record{}
	if _, multi := v.Fields["gpus"]; !multi {
		r.BootID = o.str("boot_id")
		g, _ := parseGPU(o, false)
		r.GPUs = []GPU{g}
	} else {
		r.BootID = o.str("boot_id")
		f := o.get("gpus")
		switch {
		case f == nil:
		case f.Kind != strictjson.Array:
			o.fail("gpus", "want an array of GPU blocks, found %s", f.Describe())
		case len(f.Elems) == 0:
			o.fail("gpus", "empty: a record names at least one GPU")
		}
		if f != nil && f.Kind == strictjson.Array {
			seen := map[int]bool{}
			for i, e := range f.Elems {
				name := fmt.Sprintf("gpus[%d]", i)
				if e.Kind != strictjson.Object {
					o.fail(name, "want a GPU block, found %s", e.Describe())
					break
				}
				g, err := parseGPU(&obj{v: e, prefix: name + "."}, true)
				if o.err == nil {
					o.err = err
				}
				if err != nil {
					break
				}
				if seen[*g.Index] {
					o.fail(name+".gpu_index", "GPU %d twice", *g.Index)
				}
				seen[*g.Index] = true
				r.GPUs = append(r.GPUs, g)
			}
			sort.SliceStable(r.GPUs, func(i, j int) bool { return *r.GPUs[i].Index < *r.GPUs[j].Index })
		}
	}
	if w := o.object("window"); w != nil {
		r.Window = Window{
			FirstT:       w.str("first_t"),
			LastT:        w.str("last_t"),
			SamplesTotal: w.intMin("samples_total", 1),
			IntervalS:    w.num("interval_s"),
			StopReason:   w.str("stop_reason"),
		}
		if w.err == nil {
			for _, k := range []string{"first_t", "last_t"} {
				t := r.Window.FirstT
				if k == "last_t" {
					t = r.Window.LastT
				}
				if _, err := time.Parse(time.RFC3339Nano, t); err != nil {
					w.fail(k, "want an RFC 3339 time, found %q", t)
				}
			}
		}
		if w.err == nil && !(r.Window.IntervalS > 0) {
			w.fail("interval_s", "want a positive number of seconds, found %v", r.Window.IntervalS)
		}
		if w.err == nil && !stopReasons[r.Window.StopReason] {
			w.fail("stop_reason", "want one of %s; found %q", stopReasonList, r.Window.StopReason)
		}
		if w.err == nil {
			if f, ok := w.v.Fields["max_gap_s"]; ok {
				if f.Kind != strictjson.Number || f.Num < 0 {
					w.fail("max_gap_s", "want a number of seconds ≥ 0, found %s", f.Describe())
				} else {
					g := f.Num
					r.Window.MaxGapS = &g
				}
			}
		}
		if w.err == nil {
			r.Window.UTCOffsetS, r.Window.TimeZone = parseZone(w)
		}
		if o.err == nil {
			o.err = w.err
		}
	}
	if o.err == nil {
		_, has := v.Fields["refusal"]
		switch {
		case r.Window.StopReason == StopRefused && !has:
			o.fail("refusal", "missing: stop_reason %s needs the sampler's refusal", StopRefused)
		case has && r.Window.StopReason != StopRefused:
			o.fail("refusal", "present, but stop_reason is %q, not %s", r.Window.StopReason, StopRefused)
		case has:
			r.Refusal = o.str("refusal")
		}
	}
	parseComputeProcesses(o, r)
	parseHostBlock(o, r)
	if o.err == nil {
		r.Expect, o.err = parseExpectBlock(v)
	}
	if o.err == nil {
		total := 0
		for _, g := range r.GPUs {
			total += g.SMClockMHz.N + g.IdleSamplesExcluded
		}
		switch {
		case total == r.Window.SamplesTotal:
		case len(r.GPUs) == 1:
			g := r.GPUs[0]
			o.fail("window.samples_total", "%d, but sm_clock_mhz.n %d + idle_samples_excluded %d = %d",
				r.Window.SamplesTotal, g.SMClockMHz.N, g.IdleSamplesExcluded, total)
		default:
			o.fail("window.samples_total", "%d, but the GPUs' sm_clock_mhz.n + idle_samples_excluded add up to %d",
				r.Window.SamplesTotal, total)
		}
	}
	if o.err != nil {
		return nil, o.err
	}
	return r, nil
}

// parseGPU reads one GPU's fields from o, its index too when indexed; the
// error is o's first defect, naming the field.
func parseGPU(o *obj, indexed bool) (GPU, error) {
	var g GPU
	if indexed {
		idx := o.intMin("gpu_index", 0)
		if o.err == nil {
			g.Index = &idx
		}
	}
	g.ClocksMaxSMMHz = o.intMin("clocks_max_sm_mhz", 1)
	g.ClocksApplicationsGraphicsMHz = o.intOrNull("clocks_applications_graphics_mhz", 1)
	amd := parseVendor(o, &g)
	if !amd {
		g.PersistenceMode = o.str("persistence_mode")
	} else if f := o.get("persistence_mode"); f != nil && f.Kind != strictjson.Null {
		o.fail("persistence_mode", `want null for vendor "amd" (AMD GPUs have none), found %s`, f.Describe())
	}
	g.DriverVersion = o.str("driver_version")
	g.Name = o.str("gpu_name")
	g.UUID = o.str("gpu_uuid")
	g.IdleSamplesExcluded = o.intMin("idle_samples_excluded", 0)
	if sm := o.object("sm_clock_mhz"); sm != nil {
		g.SMClockMHz.N = sm.intMin("n", 0)
		if sm.err == nil && g.SMClockMHz.N == 0 {
			sm.fail("n", "0: no busy sample in the window, nothing to attribute")
		}
		mn, md, mx, sp := sm.intMin("min", 1), sm.num("median"), sm.intMin("max", 1), sm.num("spread_pct")
		if sm.err == nil {
			g.SMClockMHz.Min, g.SMClockMHz.Median, g.SMClockMHz.Max, g.SMClockMHz.SpreadPct = &mn, &md, &mx, &sp
			checkStats(sm, mn, md, mx, sp)
		}
		if o.err == nil {
			o.err = sm.err
		}
	}
	if f := o.get("throttle_reasons_active"); f != nil {
		switch {
		case f.Kind != strictjson.Array:
			o.fail("throttle_reasons_active", "want an array of hex strings, found %s", f.Describe())
		case len(f.Elems) == 0:
			o.fail("throttle_reasons_active", "empty list: the window's throttle state is unrecorded")
		}
		for i, e := range f.Elems {
			if e.Kind != strictjson.String {
				o.fail(fmt.Sprintf("throttle_reasons_active[%d]", i), "want a hex string, found %s", e.Describe())
				continue
			}
			if _, err := ParseThrottle(e.Str); err != nil {
				o.fail(fmt.Sprintf("throttle_reasons_active[%d]", i), "%v", err)
			}
			g.ThrottleReasonsActive = append(g.ThrottleReasonsActive, e.Str)
		}
	}
	if o.err == nil {
		parsePower(o, &g)
	}
	if f, ok := o.v.Fields["vbios_version"]; ok && o.err == nil && f.Kind != strictjson.Null {
		switch {
		case f.Kind != strictjson.String:
			o.fail("vbios_version", "want a string, found %s", f.Describe())
		case f.Str == "":
			o.fail("vbios_version", "empty string")
		default:
			g.VbiosVersion = ptr(f.Str)
		}
	}
	if f, ok := o.v.Fields["energy_scope"]; ok && o.err == nil && f.Kind != strictjson.Null {
		switch {
		case f.Kind != strictjson.String || !validScope([]byte(f.Str)):
			o.fail("energy_scope", "want %q or %q, found %s", EnergyScopeGPU, EnergyScopeModule, f.Describe())
		default:
			g.EnergyScope = ptr(f.Str)
		}
	}
	parsePCIeMax(o, &g)
	return g, o.err
}

// parsePower reads a GPU's power-management fields, where present: the
// limits positive numbers of W, and free_clock_mhz and
// power_managed_samples together, exactly where enforced_power_limit_w is,
// adding up to sm_clock_mhz.n.
func parsePower(o *obj, g *GPU) {
	for _, k := range []string{"enforced_power_limit_w", "module_enforced_power_limit_w"} {
		f, ok := o.v.Fields[k]
		if !ok {
			continue
		}
		if f.Kind != strictjson.Number || !(f.Num > 0) {
			o.fail(k, "want a positive number of W, found %s", f.Describe())
			return
		}
		w := f.Num
		if k == "enforced_power_limit_w" {
			g.EnforcedPowerLimitW = &w
		} else {
			g.ModuleEnforcedPowerLimitW = &w
		}
	}
	_, hasFree := o.v.Fields["free_clock_mhz"]
	_, hasPM := o.v.Fields["power_managed_samples"]
	switch {
	case g.EnforcedPowerLimitW == nil && g.ModuleEnforcedPowerLimitW != nil:
		o.fail("module_enforced_power_limit_w", "present without enforced_power_limit_w")
		return
	case g.EnforcedPowerLimitW == nil && (hasFree || hasPM):
		o.fail(map[bool]string{true: "free_clock_mhz", false: "power_managed_samples"}[hasFree],
			"present without enforced_power_limit_w: free and power-managed samples are told apart only at a recorded limit")
		return
	case g.EnforcedPowerLimitW == nil:
		return
	case !hasFree:
		o.fail("free_clock_mhz", "missing: a window at a recorded limit says its free clock")
		return
	}
	pm := o.intMin("power_managed_samples", 0)
	fo := o.object("free_clock_mhz")
	if o.err != nil {
		return
	}
	fs := &FreeStats{Stats: Stats{N: fo.intMin("n", 0)}}
	if fo.err == nil && fs.N > 0 {
		mn, md, mx, sp, mean := fo.intMin("min", 1), fo.num("median"), fo.intMin("max", 1), fo.num("spread_pct"), fo.num("mean_mhz")
		if fo.err == nil {
			fs.Min, fs.Median, fs.Max, fs.SpreadPct, fs.MeanMHz = &mn, &md, &mx, &sp, &mean
			checkStats(fo, mn, md, mx, sp)
		}
		if fo.err == nil && !(float64(mn) <= mean && mean <= float64(mx)) {
			fo.fail("mean_mhz", "want min ≤ mean_mhz ≤ max, found min %d, mean_mhz %v, max %d", mn, mean, mx)
		}
	}
	if fo.err == nil && fs.N == 0 {
		for _, k := range []string{"min", "median", "max", "spread_pct", "mean_mhz"} {
			if f := fo.v.Fields[k]; f == nil || f.Kind != strictjson.Null {
				fo.fail(k, "want null with n 0, found %s", f.Describe())
				break
			}
		}
	}
	if o.err = fo.err; o.err != nil {
		return
	}
	if fs.N+pm != g.SMClockMHz.N {
		o.fail("free_clock_mhz.n", "%d free + power_managed_samples %d = %d, but sm_clock_mhz.n is %d", fs.N, pm, fs.N+pm, g.SMClockMHz.N)
		return
	}
	g.FreeClockMHz, g.PowerManagedSamples = fs, &pm
}

// parseVendor reads a GPU block's vendor keys into g and reports whether
// it is an AMD GPU's: vendor absent (NVIDIA) or "amd", and then
// perf_level and, where the GPU has one, memory_partition; neither in an
// NVIDIA block.
func parseVendor(o *obj, g *GPU) bool {
	f, ok := o.v.Fields["vendor"]
	if !ok {
		for _, k := range []string{"perf_level", "memory_partition"} {
			if _, ok := o.v.Fields[k]; ok {
				o.fail(k, onlyAMD)
			}
		}
		return false
	}
	if f.Kind != strictjson.String || f.Str != VendorAMD {
		o.fail("vendor", `want "amd" (NVIDIA records have no vendor key), found %s`, f.Describe())
		return false
	}
	g.Vendor = VendorAMD
	g.PerfLevel = o.str("perf_level")
	if _, ok := o.v.Fields["memory_partition"]; ok {
		g.MemoryPartition = o.str("memory_partition")
	}
	return true
}

func checkStats(o *obj, mn int, md float64, mx int, sp float64) {
	if md*2 != math.Trunc(md*2) {
		o.fail("median", "%v is not a median of integer MHz (a whole or half value)", md)
		return
	}
	if !(float64(mn) <= md && md <= float64(mx)) {
		o.fail("median", "want min ≤ median ≤ max, found min %d, median %v, max %d", mn, md, mx)
		return
	}
	if sp < 0 {
		o.fail("spread_pct", "negative: %v", sp)
		return
	}
	want := spreadPct(int64(mn), int64(mx), int64(md*2))
	if math.Abs(sp-want) > SpreadTolerancePct+1e-9 {
		o.fail("spread_pct", "%v disagrees with (max − min) / median × 100 = %.4f (tolerance %.3f)", sp, want, SpreadTolerancePct)
	}
}

// hist is an exact summary of busy clock values: count, min, max and twice
// the median.
type hist struct {
	n, min, max int
	median2     int64
}

// stats is the summary as a record says it: spread_pct to 0.01, and no
// numbers when nothing is counted.
func (h hist) stats() Stats {
	st := Stats{N: h.n}
	if h.n > 0 {
		mn, mx := h.min, h.max
		st.Min, st.Max = &mn, &mx
		st.Median = ptr(float64(h.median2) / 2)
		st.SpreadPct = ptr(round2(spreadPct(int64(mn), int64(mx), h.median2)))
	}
	return st
}

// summarizeMap summarizes values counted in a map: an arm's merged legs.
func summarizeMap(h map[int]int) hist {
	n, min, max, a, b := middleOfMap(h)
	return hist{n: n, min: min, max: max, median2: int64(a) + int64(b)}
}

// summarize summarizes a fold's counts, in increasing order of value.
func summarize(h []Count) hist {
	n, min, max, a, b := middle(len(h), func(i int) (int, int) { return h[i].V, h[i].N })
	return hist{n: n, min: min, max: max, median2: int64(a) + int64(b)}
}

// middle returns, of k distinct values counted in increasing order (at
// gives the i-th and its count), the total count, the least and the
// greatest, and the two middle ones (one twice for an odd count); all
// zero when nothing is counted.
func middle[V int | int64](k int, at func(i int) (V, int)) (n int, min, max, a, b V) {
	for i := range k {
		_, c := at(i)
		n += c
	}
	if n == 0 {
		return 0, 0, 0, 0, 0
	}
	lo, hi := (n-1)/2, n/2
	seen := 0
	for i := range k {
		v, c := at(i)
		if lo >= seen && lo < seen+c {
			a = v
		}
		if hi >= seen && hi < seen+c {
			b = v
			break
		}
		seen += c
	}
	min, _ = at(0)
	max, _ = at(k - 1)
	return n, min, max, a, b
}

// middleOfMap is middle of the values counted in h.
func middleOfMap[V int | int64](h map[V]int) (n int, min, max, a, b V) {
	vals := slices.Sorted(maps.Keys(h))
	return middle(len(vals), func(i int) (V, int) { return vals[i], h[vals[i]] })
}

func round2(x float64) float64 { return math.Round(x*100) / 100 }

// reconcile names every field where rec differs from what the fold
// recomputes to; an empty result means the record is the stream's.
func reconcile(rec *Record, f *Fold) []string {
	var bad []string
	add := func(field string, got, want any) {
		bad = append(bad, fmt.Sprintf("%s: record %v, stream %v", field, got, want))
	}
	if !sameGPUs(rec, f) {
		add("gpus", gpuList(rec), foldGPUList(f))
		return bad
	}
	if rec.BootID != f.GPUs[0].First.BootID {
		add("boot_id", rec.BootID, f.GPUs[0].First.BootID)
	}
	for i := range rec.GPUs {
		rg, g := &rec.GPUs[i], f.GPUs[i]
		pre := ""
		if rg.Index != nil {
			pre = rg.Label() + " "
		}
		h := summarize(g.Hist)
		st := rg.SMClockMHz
		if st.N != h.n {
			add(pre+"sm_clock_mhz.n", st.N, h.n)
		}
		if h.n > 0 && st.Min != nil {
			if *st.Min != h.min {
				add(pre+"sm_clock_mhz.min", *st.Min, h.min)
			}
			if *st.Max != h.max {
				add(pre+"sm_clock_mhz.max", *st.Max, h.max)
			}
			if *st.Median*2 != float64(h.median2) {
				add(pre+"sm_clock_mhz.median", *st.Median, float64(h.median2)/2)
			}
			want := spreadPct(int64(h.min), int64(h.max), h.median2)
			if math.Abs(*st.SpreadPct-want) > SpreadTolerancePct+1e-9 {
				add(pre+"sm_clock_mhz.spread_pct", *st.SpreadPct, fmt.Sprintf("%.4f", want))
			}
		}
		rs, first := rg.static(), sampleStatic(g.First)
		for k, name := range staticNames {
			if rs[k] != first[k+1] {
				add(pre+name, rs[k], first[k+1])
			}
		}
		if rg.PersistenceMode != g.First.PersistenceMode {
			add(pre+"persistence_mode", fmt.Sprintf("%q", rg.PersistenceMode), fmt.Sprintf("%q", g.First.PersistenceMode))
		}
		recBits := map[uint64]bool{}
		for _, s := range rg.ThrottleReasonsActive {
			b, _ := ParseThrottle(s)
			recBits[b] = true
		}
		same := len(recBits) == len(g.Throttle)
		for b := range g.Throttle {
			same = same && recBits[b]
		}
		if !same {
			add(pre+"throttle_reasons_active", rg.ThrottleReasonsActive, g.throttleList())
		}
		if rg.IdleSamplesExcluded != g.Idle {
			add(pre+"idle_samples_excluded", rg.IdleSamplesExcluded, g.Idle)
		}
		bad = append(bad, reconcilePower(pre, rg, g)...)
		bad = append(bad, reconcilePCIe(pre, rg, g)...)
	}
	if rec.Window.FirstT != f.FirstT {
		add("window.first_t", rec.Window.FirstT, f.FirstT)
	}
	if rec.Window.LastT != f.LastT {
		add("window.last_t", rec.Window.LastT, f.LastT)
	}
	if rec.Window.SamplesTotal != f.Total {
		add("window.samples_total", rec.Window.SamplesTotal, f.Total)
	}
	if g := rec.Window.MaxGapS; g != nil && math.Abs(*g-f.MaxGapS()) > MaxGapToleranceS+1e-9 {
		add("window.max_gap_s", *g, f.MaxGapS())
	}
	if msg := intervalAgainstSpacing(rec, f); msg != "" {
		bad = append(bad, msg)
	}
	return bad
}

// reconcilePower names the power-management fields where a GPU's record
// differs from its fold; pre names the GPU.
func reconcilePower(pre string, rg *GPU, g *GPUFold) []string {
	want := g.freeStats()
	switch {
	case want == nil && rg.FreeClockMHz == nil:
		return nil
	case want == nil:
		return []string{fmt.Sprintf("%sfree_clock_mhz: record %s, stream absent (no enforced_power_limit_w)", pre, statsText(rg.FreeClockMHz))}
	case rg.FreeClockMHz == nil:
		return []string{fmt.Sprintf("%sfree_clock_mhz: record absent, stream %s", pre, statsText(want))}
	}
	var bad []string
	got := rg.FreeClockMHz
	if got.N != want.N || (got.Min == nil) != (want.Min == nil) || got.Min != nil && (*got.Min != *want.Min || *got.Max != *want.Max ||
		*got.Median != *want.Median || math.Abs(*got.SpreadPct-*want.SpreadPct) > SpreadTolerancePct+1e-9 ||
		math.Abs(*got.MeanMHz-g.freeMean()) > MeanTolerance+1e-9) {
		bad = append(bad, fmt.Sprintf("%sfree_clock_mhz: record %s, stream %s", pre, statsText(got), statsText(want)))
	}
	if pm := g.PowerManaged(); *rg.PowerManagedSamples != pm {
		bad = append(bad, fmt.Sprintf("%spower_managed_samples: record %d, stream %d", pre, *rg.PowerManagedSamples, pm))
	}
	return bad
}

// statsText prints free clock statistics for a message.
func statsText(s *FreeStats) string {
	if s.N == 0 {
		return "{n 0}"
	}
	return fmt.Sprintf("{n %d, min %d, median %v, max %d, spread_pct %v, mean_mhz %v}", s.N, *s.Min, *s.Median, *s.Max, *s.SpreadPct, *s.MeanMHz)
}

// intervalAgainstSpacing checks the record's interval_s against each
// GPU's mean time between samples, exactly: interval × (n − 1) × 100 ≤
// MaxIntervalOfMeanGapPct × span, in nanoseconds. A GPU of one sample has
// no spacing.
func intervalAgainstSpacing(rec *Record, f *Fold) string {
	ivNS := int64(math.Round(rec.Window.IntervalS * 1e9))
	for _, g := range f.GPUs {
		span := nsBetween(g.firstSec, g.firstNsec, g.prevSec, g.prevNsec)
		if g.Total < 2 || span <= 0 {
			continue
		}
		lhs := new(big.Int).Mul(big.NewInt(ivNS), big.NewInt(int64(g.Total-1)))
		lhs.Mul(lhs, big.NewInt(100))
		rhs := new(big.Int).Mul(big.NewInt(span), big.NewInt(MaxIntervalOfMeanGapPct))
		if lhs.Cmp(rhs) <= 0 {
			continue
		}
		who := "the stream's samples"
		if len(f.GPUs) > 1 {
			who = fmt.Sprintf("GPU %d's samples", g.Index)
		}
		return fmt.Sprintf("window.interval_s: record %v s, but %s are %.3f s apart on average (%d samples from %s to %s), and an interval over %d%% of that is not the one they were read at; coverage is judged against interval_s",
			rec.Window.IntervalS, who, float64(span)/1e9/float64(g.Total-1), g.Total, g.firstT, string(g.prevT), MaxIntervalOfMeanGapPct)
	}
	return ""
}

// sameGPUs reports whether the record names the stream's GPUs: one, in
// the single-GPU layout, or each of their indices.
func sameGPUs(rec *Record, f *Fold) bool {
	if len(rec.GPUs) != len(f.GPUs) {
		return false
	}
	if len(rec.GPUs) == 1 && rec.GPUs[0].Index == nil {
		return true
	}
	for i, g := range rec.GPUs {
		if g.Index == nil || *g.Index != f.GPUs[i].Index {
			return false
		}
	}
	return true
}

func gpuList(r *Record) string {
	if len(r.GPUs) == 1 && r.GPUs[0].Index == nil {
		return "one GPU (the single-GPU layout)"
	}
	var idx []string
	for _, g := range r.GPUs {
		idx = append(idx, intOrNull(g.Index))
	}
	return fmt.Sprintf("GPUs %s", strings.Join(idx, ", "))
}

func foldGPUList(f *Fold) string {
	var idx []string
	for _, g := range f.GPUs {
		idx = append(idx, fmt.Sprint(g.Index))
	}
	if len(idx) == 1 {
		return "GPU " + idx[0]
	}
	return fmt.Sprintf("GPUs %s", strings.Join(idx, ", "))
}
