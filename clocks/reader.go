package clocks

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"strconv"
)

// MaxLineBytes bounds one stream line; a longer line is refused without
// being read whole.
const MaxLineBytes = 64 << 10

// maxDepth bounds the nesting of a value inside a sample, as the strict
// parser bounds every evidence file.
const maxDepth = 64

// LineError is a defect at one place of a stream: its path (when known),
// its 1-based line and byte column, and what is wrong there.
type LineError struct {
	Path string
	Line int
	// Col is the 1-based byte column of the defect in its line; 0 when the
	// defect is the line as a whole.
	Col int
	Err error
}

func (e *LineError) Error() string {
	at := strconv.Itoa(e.Line)
	if e.Col > 0 {
		at += ":" + strconv.Itoa(e.Col)
	}
	if e.Path == "" {
		return "line " + at + ": " + e.Err.Error()
	}
	return e.Path + ":" + at + ": " + e.Err.Error()
}

func (e *LineError) Unwrap() error { return e.Err }

// ErrorAt prints err naming path: a *LineError as path:line:col: message,
// anything else as path: message.
func ErrorAt(path string, err error) string {
	var le *LineError
	if errors.As(err, &le) {
		c := *le
		c.Path = path
		return c.Error()
	}
	return fmt.Sprintf("%s: %v", path, err)
}

// The keys of a sample. Their order is the order in which a sample's
// fields are checked, so that the first defect named is always the same
// whatever order the keys were written in.
const (
	kT = iota
	kBootID
	kGPUIndex
	kGPUUUID
	kGPUName
	kDriverVersion
	kSMClock
	kClocksMaxSM
	kThrottle
	kPersistence
	kPState
	kUtilization
	kApps
	kTemperature
	kPower
	kClocksMem
	kThrottleField
	// The keys of an AMD GPU's sample (vendor "amd").
	kVendor
	kPerfLevel
	kMemoryPartition
	kXCDClocks
	// The power readings of a power-managed GPU (SPEC §10.1).
	kPowerLimit
	kModuleLimit
	kCounters
	kVbios
	// The GPU's cumulative energy counter and its scope (SPEC §11.3).
	kEnergy
	kEnergyScope
	numKeys
)

var keyNames = [numKeys]string{
	kT: "t", kBootID: "boot_id", kGPUIndex: "gpu_index", kGPUUUID: "gpu_uuid", kGPUName: "gpu_name",
	kDriverVersion: "driver_version", kSMClock: "sm_clock_mhz", kClocksMaxSM: "clocks_max_sm_mhz",
	kThrottle: "throttle_reasons_active", kPersistence: "persistence_mode", kPState: "pstate",
	kUtilization: "utilization_gpu_pct", kApps: "clocks_applications_graphics_mhz",
	kTemperature: "temperature_gpu_c", kPower: "power_draw_w", kClocksMem: "clocks_mem_mhz",
	kThrottleField: "throttle_field",
	kPowerLimit:    "enforced_power_limit_w", kModuleLimit: "module_enforced_power_limit_w", kCounters: "event_counters_us",
	kVendor: "vendor", kPerfLevel: "perf_level", kMemoryPartition: "memory_partition", kXCDClocks: "xcd_clocks_mhz",
	kVbios:  "vbios_version",
	kEnergy: "energy_mj", kEnergyScope: "energy_scope",
}

// keyOf is the index of a sample key, or -1 for a key a sample does not have.
func keyOf(k []byte) int {
	switch len(k) {
	case 1:
		if k[0] == 't' {
			return kT
		}
	case 6:
		switch string(k) {
		case "pstate":
			return kPState
		case "vendor":
			return kVendor
		}
	case 7:
		if string(k) == "boot_id" {
			return kBootID
		}
	case 8:
		switch string(k) {
		case "gpu_uuid":
			return kGPUUUID
		case "gpu_name":
			return kGPUName
		}
	case 9:
		switch string(k) {
		case "gpu_index":
			return kGPUIndex
		case "energy_mj":
			return kEnergy
		}
	case 10:
		if string(k) == "perf_level" {
			return kPerfLevel
		}
	case 12:
		switch string(k) {
		case "sm_clock_mhz":
			return kSMClock
		case "power_draw_w":
			return kPower
		case "energy_scope":
			return kEnergyScope
		}
	case 13:
		if string(k) == "vbios_version" {
			return kVbios
		}
	case 14:
		switch string(k) {
		case "driver_version":
			return kDriverVersion
		case "clocks_mem_mhz":
			return kClocksMem
		case "throttle_field":
			return kThrottleField
		case "xcd_clocks_mhz":
			return kXCDClocks
		}
	case 16:
		switch string(k) {
		case "persistence_mode":
			return kPersistence
		case "memory_partition":
			return kMemoryPartition
		}
	case 17:
		switch string(k) {
		case "clocks_max_sm_mhz":
			return kClocksMaxSM
		case "temperature_gpu_c":
			return kTemperature
		case "event_counters_us":
			return kCounters
		}
	case 19:
		if string(k) == "utilization_gpu_pct" {
			return kUtilization
		}
	case 22:
		if string(k) == "enforced_power_limit_w" {
			return kPowerLimit
		}
	case 23:
		if string(k) == "throttle_reasons_active" {
			return kThrottle
		}
	case 29:
		if string(k) == "module_enforced_power_limit_w" {
			return kModuleLimit
		}
	case 32:
		if string(k) == "clocks_applications_graphics_mhz" {
			return kApps
		}
	}
	return -1
}

// Row is one stream line as the Reader read it: every field of a sample.
// Its byte slices point into the reader's buffers and are valid until the
// next Scan; Sample copies them out.
type Row struct {
	T []byte
	// Sec and Nsec are T in Unix seconds and nanoseconds.
	Sec, Nsec     int64
	BootID        []byte
	GPUIndex      int
	GPUUUID       []byte
	GPUName       []byte
	DriverVersion []byte
	SMClockMHz    int
	// ClocksMaxSMMHz is clocks.max.sm, in MHz.
	ClocksMaxSMMHz int
	// AppsNull is true when clocks_applications_graphics_mhz is null (the
	// driver says the field is deprecated); AppsMHz holds it otherwise.
	AppsNull bool
	AppsMHz  int
	// Throttle is the throttle bit set as written; ThrottleBits its value.
	Throttle     []byte
	ThrottleBits uint64
	// Persistence and PState are empty exactly when null (an AMD sample).
	Persistence []byte
	PState      []byte
	// UtilizationGPUPct is 0 for an idle sample.
	UtilizationGPUPct int

	// The optional readings, each with whether the line has it (a null is
	// the same as an absent key).
	HasTemperature   bool
	TemperatureGPUC  float64
	HasPower         bool
	PowerDrawW       float64
	HasClocksMem     bool
	ClocksMemMHz     int
	HasThrottleField bool
	ThrottleField    []byte
	// The power readings of a power-managed GPU (SPEC §10.1): its enforced
	// power limit and its module's, in W, and the driver's cumulative
	// clock event counters.
	HasPowerLimit  bool
	PowerLimitW    float64
	HasModuleLimit bool
	ModuleLimitW   float64
	HasCounters    bool
	Counters       Counters
	// HasVbios says the line has vbios_version (a string; null is absent).
	HasVbios bool
	Vbios    []byte
	// HasEnergy says the line has energy_mj, the GPU's cumulative energy
	// in mJ; HasEnergyScope says it has energy_scope ("gpu" or "module").
	HasEnergy      bool
	EnergyMJ       int64
	HasEnergyScope bool
	EnergyScope    []byte

	// An AMD GPU's keys, empty (nil) for NVIDIA: Vendor is "amd";
	// XCDClocksMHz is valid until the next Scan, like the byte slices.
	Vendor          []byte
	PerfLevel       []byte
	MemoryPartition []byte
	XCDClocksMHz    []int

	// StaticID, when not 0, says the row's identity fields (boot id, GPU
	// name and UUID, driver, clocks.max.sm, applications clock) are, byte
	// for byte, those of every other row of the same StaticID: the learned
	// layout they were read with had them as literals. A fold compares
	// them once per StaticID.
	StaticID uint64
}

// Idle reports whether the row priced no work (utilization 0%).
func (r *Row) Idle() bool { return r.UtilizationGPUPct == 0 }

// AMD reports whether the row is an AMD GPU's sample.
func (r *Row) AMD() bool { return string(r.Vendor) == VendorAMD }

// Sample copies the row out as a Sample.
func (r *Row) Sample() *Sample {
	s := &Sample{
		T:                     string(r.T),
		BootID:                string(r.BootID),
		GPUIndex:              r.GPUIndex,
		GPUUUID:               string(r.GPUUUID),
		GPUName:               string(r.GPUName),
		DriverVersion:         string(r.DriverVersion),
		SMClockMHz:            r.SMClockMHz,
		ClocksMaxSMMHz:        r.ClocksMaxSMMHz,
		ThrottleReasonsActive: string(r.Throttle),
		PersistenceMode:       string(r.Persistence),
		PState:                string(r.PState),
		UtilizationGPUPct:     r.UtilizationGPUPct,
		ThrottleField:         string(r.ThrottleField),
		Vendor:                string(r.Vendor),
		PerfLevel:             string(r.PerfLevel),
		MemoryPartition:       string(r.MemoryPartition),
	}
	if r.XCDClocksMHz != nil {
		s.XCDClocksMHz = append([]int{}, r.XCDClocksMHz...)
	}
	if !r.AppsNull {
		s.ClocksApplicationsGraphicsMHz = ptr(r.AppsMHz)
	}
	if r.HasTemperature {
		s.TemperatureGPUC = ptr(r.TemperatureGPUC)
	}
	if r.HasPower {
		s.PowerDrawW = ptr(r.PowerDrawW)
	}
	if r.HasClocksMem {
		s.ClocksMemMHz = ptr(r.ClocksMemMHz)
	}
	if r.HasPowerLimit {
		s.EnforcedPowerLimitW = ptr(r.PowerLimitW)
	}
	if r.HasModuleLimit {
		s.ModuleEnforcedPowerLimitW = ptr(r.ModuleLimitW)
	}
	if r.HasCounters {
		s.EventCountersUS = ptr(r.Counters)
	}
	if r.HasVbios {
		s.VbiosVersion = ptr(string(r.Vbios))
	}
	if r.HasEnergy {
		s.EnergyMJ = ptr(r.EnergyMJ)
	}
	if r.HasEnergyScope {
		s.EnergyScope = ptr(string(r.EnergyScope))
	}
	return s
}

// Reader reads a *.samples.jsonl stream one sample at a time, in the shape
// of bufio.Scanner: strictly (one JSON object per line, no duplicate key,
// valid UTF-8, every required key present and typed) and in any key order,
// spacing or line ending, without allocating for a valid line. The first
// bad line, a torn final line included, stops it with a *LineError.
type Reader struct {
	br   *bufio.Reader
	path string
	line int
	row  Row
	err  error
	done bool
	p    lineParser
}

// NewReader returns a Reader of the stream r, whose path names it in
// errors ("" for none).
func NewReader(r io.Reader, path string) *Reader {
	return &Reader{br: bufio.NewReaderSize(r, MaxLineBytes+1), path: path}
}

// reset makes the reader new for the stream r, keeping its buffer.
func (r *Reader) reset(src io.Reader, path string) {
	br := r.br
	br.Reset(src)
	*r = Reader{br: br, path: path}
}

// Scan advances to the next sample. It returns false at the end of the
// stream or at the first defect; Err tells which.
func (r *Reader) Scan() bool {
	if r.done {
		return false
	}
	b, err := r.br.ReadSlice('\n')
	if len(b) == 0 && err == io.EOF {
		r.done = true
		return false
	}
	r.line++
	if errors.Is(err, bufio.ErrBufferFull) {
		return r.fail(0, fmt.Errorf("longer than %d bytes; refused unread", MaxLineBytes))
	}
	if err != nil && err != io.EOF {
		return r.fail(0, err)
	}
	torn := err == io.EOF // no newline: the last line of a cut stream
	if !torn {
		b = b[:len(b)-1]
	}
	if col, perr := r.p.parse(b, &r.row); perr != nil {
		if torn {
			perr = fmt.Errorf("torn final line (no newline): %w", perr)
		}
		return r.fail(col, perr)
	}
	if torn {
		r.done = true
	}
	return true
}

func (r *Reader) fail(col int, err error) bool {
	r.err = &LineError{Path: r.path, Line: r.line, Col: col, Err: err}
	r.done = true
	return false
}

// Row returns the sample read by the last successful Scan, valid until the
// next Scan.
func (r *Reader) Row() *Row { return &r.row }

// Sample returns a copy of the sample read by the last successful Scan.
func (r *Reader) Sample() *Sample { return r.row.Sample() }

// Line returns the 1-based number of the last line read.
func (r *Reader) Line() int { return r.line }

// Err returns the first defect met, or nil at a clean end.
func (r *Reader) Err() error { return r.err }

// ParseSample reads one stream line into a sample, as Reader does. The
// error names the offending key, or the byte offset of a syntax error.
func ParseSample(line []byte) (*Sample, error) {
	var p lineParser
	var row Row
	if _, err := p.parse(line, &row); err != nil {
		return nil, err
	}
	return row.Sample(), nil
}
