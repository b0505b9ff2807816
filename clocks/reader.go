package clocks

import (
	"bufio"
	"encoding/binary"
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
	// The GPU's PCIe link, current and maximum (SPEC §12.2).
	kPCIeGen
	kPCIeWidth
	kPCIeGenMax
	kPCIeWidthMax
	numKeys
)

// valueKind is how a sample key's value is read.
type valueKind uint8

const (
	kindString       valueKind = iota // a string
	kindStringOrNull                  // a string, or null (then absent)
	kindInt                           // an integer
	kindIntOrNull                     // an integer, or null (then absent)
	kindNumberOrNull                  // a number, or null (then absent)
	kindWattsOrNull                   // a positive number of W, or null (then absent)
	kindCounters                      // an object of counters, or null
	kindIntArray                      // an array of integers
)

// sampleKeys is every sample key: its name and how its value is read. The
// readers (the learned layout, the any-order scanner, the general
// reading) and their key lookups are all built from this table, so a new
// optional key is one line here (and its field in Row).
var sampleKeys = [numKeys]struct {
	name string
	kind valueKind
}{
	kT:               {"t", kindString},
	kBootID:          {"boot_id", kindString},
	kGPUIndex:        {"gpu_index", kindInt},
	kGPUUUID:         {"gpu_uuid", kindString},
	kGPUName:         {"gpu_name", kindString},
	kDriverVersion:   {"driver_version", kindString},
	kSMClock:         {"sm_clock_mhz", kindInt},
	kClocksMaxSM:     {"clocks_max_sm_mhz", kindInt},
	kThrottle:        {"throttle_reasons_active", kindString},
	kPersistence:     {"persistence_mode", kindStringOrNull},
	kPState:          {"pstate", kindStringOrNull},
	kUtilization:     {"utilization_gpu_pct", kindInt},
	kApps:            {"clocks_applications_graphics_mhz", kindIntOrNull},
	kTemperature:     {"temperature_gpu_c", kindNumberOrNull},
	kPower:           {"power_draw_w", kindNumberOrNull},
	kClocksMem:       {"clocks_mem_mhz", kindIntOrNull},
	kThrottleField:   {"throttle_field", kindString},
	kVendor:          {"vendor", kindString},
	kPerfLevel:       {"perf_level", kindString},
	kMemoryPartition: {"memory_partition", kindString},
	kXCDClocks:       {"xcd_clocks_mhz", kindIntArray},
	kPowerLimit:      {"enforced_power_limit_w", kindWattsOrNull},
	kModuleLimit:     {"module_enforced_power_limit_w", kindWattsOrNull},
	kCounters:        {"event_counters_us", kindCounters},
	kVbios:           {"vbios_version", kindStringOrNull},
	kEnergy:          {"energy_mj", kindIntOrNull},
	kEnergyScope:     {"energy_scope", kindStringOrNull},
	kPCIeGen:         {"pcie_gen", kindIntOrNull},
	kPCIeWidth:       {"pcie_width", kindIntOrNull},
	kPCIeGenMax:      {"pcie_gen_max", kindIntOrNull},
	kPCIeWidthMax:    {"pcie_width_max", kindIntOrNull},
}

// keyNames are the sample keys' names, by key.
var keyNames [numKeys]string

// The key lookup of a key written as a plain string, from its first
// eight bytes after the quote (w0): a key whose name and closing quote are
// shorter than that (t, pstate, vendor) by its first byte and w0 masked to
// its length; any other in a small table by a hash of w0, the rest of its
// name compared a word at a time. init checks that no slot overflows.
const (
	keySlotBits = 6
	keySlotWays = 2
	keyHashMul  = 0x9E3779B97F4A7C15
)

// keyWords is a sample key's name and closing quote, n bytes, as
// little-endian words: w0 the first eight (masked by mask when n is less
// than eight), rest the next ones, the last ending at n.
type keyWords struct {
	key   int
	n     int
	w0    uint64
	mask  uint64
	nrest int
	rest  [4]uint64
}

var (
	shortKeys [256]keyWords
	keySlots  [1 << keySlotBits][keySlotWays]keyWords
)

func keySlot(w0 uint64) int { return int((w0 * keyHashMul) >> (64 - keySlotBits)) }

func init() {
	for k, sk := range sampleKeys {
		if sk.name == "" {
			panic(fmt.Sprintf("clocks: sample key %d has no name", k))
		}
		keyNames[k] = sk.name
		q := sk.name + `"`
		kw := keyWords{key: k, n: len(q), mask: ^uint64(0)}
		if len(q) < 8 {
			kw.mask = 1<<(8*len(q)) - 1
			kw.w0 = binary.LittleEndian.Uint64([]byte(q+"\x00\x00\x00\x00\x00\x00\x00")) & kw.mask
			if shortKeys[q[0]].mask != 0 {
				panic("clocks: two short sample keys begin with " + q[:1])
			}
			shortKeys[q[0]] = kw
			continue
		}
		kw.w0 = binary.LittleEndian.Uint64([]byte(q))
		for off := 8; off < kw.n; off += 8 {
			kw.rest[kw.nrest] = binary.LittleEndian.Uint64([]byte(q[min(off, kw.n-8):]))
			kw.nrest++
		}
		slot := &keySlots[keySlot(kw.w0)]
		w := 0
		for w < keySlotWays && slot[w].n != 0 {
			w++
		}
		if w == keySlotWays {
			panic("clocks: the sample key table overflows at " + sk.name)
		}
		slot[w] = kw
	}
}

// keyOf is the index of a sample key, or -1 for a key a sample does not have.
func keyOf(k []byte) int {
	for i, n := range keyNames {
		if len(n) == len(k) && n == string(k) {
			return i
		}
	}
	return -1
}

// quotedKey is the sample key that b starts with, written as a plain
// string between quotes, or -1: a key with an escape, or another key, is
// for the general reading.
func quotedKey(b []byte) int {
	if len(b) < 9 {
		return keyOf(unquoted(b))
	}
	w0 := binary.LittleEndian.Uint64(b[1:])
	if s := &shortKeys[b[1]]; s.mask != 0 && w0&s.mask == s.w0 {
		return s.key
	}
	slot := &keySlots[keySlot(w0)]
next:
	for w := range slot {
		c := &slot[w]
		if c.w0 != w0 || c.n == 0 || len(b) < c.n+1 {
			continue
		}
		for i := 0; i < c.nrest; i++ {
			if binary.LittleEndian.Uint64(b[1+min(8*(i+1), c.n-8):]) != c.rest[i] {
				continue next
			}
		}
		return c.key
	}
	return -1
}

// unquoted is the plain string at the start of b, without its quotes, or
// nil when b does not start with one.
func unquoted(b []byte) []byte {
	for i := 1; i < len(b); i++ {
		switch c := b[i]; {
		case c == '"':
			return b[1:i]
		case c == '\\' || c < 0x20:
			return nil
		}
	}
	return nil
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
	// PCIe is the GPU's PCIe link (SPEC §12.2), in PCIeFields' order
	// (pcie_gen, pcie_width, pcie_gen_max, pcie_width_max); HasPCIe says
	// which the line has (a null is absent).
	PCIe    [NumPCIe]int
	HasPCIe [NumPCIe]bool

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
	s.setPCIe(r)
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
