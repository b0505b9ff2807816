package clocks

import (
	"fmt"
	"strconv"

	"github.com/clockgate/clockgate/strictjson"
)

// Sample is one reading of one GPU's clock state, one line of a
// *.samples.jsonl stream.
type Sample struct {
	// T is the wall time of the reading, RFC 3339 in UTC.
	T string
	// BootID is /proc/sys/kernel/random/boot_id when the reading was taken.
	BootID        string
	GPUIndex      int
	GPUUUID       string
	GPUName       string
	DriverVersion string
	// SMClockMHz is the current SM clock (clocks.sm), in MHz.
	SMClockMHz int
	// ClocksMaxSMMHz is clocks.max.sm, in MHz.
	ClocksMaxSMMHz int
	// ClocksApplicationsGraphicsMHz is clocks.applications.graphics in MHz,
	// or nil exactly when the driver says the field is deprecated.
	ClocksApplicationsGraphicsMHz *int
	// ThrottleReasonsActive is the active throttle (clock event) bit set, as
	// nvidia-smi prints it.
	ThrottleReasonsActive string
	// PersistenceMode and PState are as the driver prints them; "" is
	// null, which only an AMD sample has (AMD has neither).
	PersistenceMode string
	PState          string
	// UtilizationGPUPct is utilization.gpu in percent; 0 makes the sample idle.
	UtilizationGPUPct int

	// Optional readings; nil when not sampled.
	TemperatureGPUC *float64
	PowerDrawW      *float64
	ClocksMemMHz    *int
	// ThrottleField names the nvidia-smi field the throttle bits came from
	// (clocks_event_reasons.active or clocks_throttle_reasons.active).
	ThrottleField string

	// Vendor is VendorAMD for a sample of an AMD GPU, "" for NVIDIA (the
	// stream's key is then absent).
	Vendor string
	// PerfLevel is an AMD GPU's performance level (AUTO, DETERMINISM,
	// MANUAL, …); "" for NVIDIA.
	PerfLevel string
	// MemoryPartition is an AMD GPU's memory partition mode (NPS1, NPS4);
	// "" where the GPU has none, and for NVIDIA.
	MemoryPartition string
	// XCDClocksMHz are an AMD GPU's current GFX clocks, one per XCD, in
	// MHz; SMClockMHz is the lowest of them. nil for NVIDIA.
	XCDClocksMHz []int
	// EnforcedPowerLimitW is the power limit the driver enforces
	// (enforced.power.limit), in W; nil when not sampled. A window that
	// records it judges SwPowerCap as power management (SPEC §10.1).
	EnforcedPowerLimitW *float64
	// ModuleEnforcedPowerLimitW is the limit of the GPU's module
	// (module.enforced.power.limit: a GH200/GB200 module shares one budget
	// between CPU and GPU), in W; nil where the driver gives none.
	ModuleEnforcedPowerLimitW *float64
	// EventCountersUS are the driver's cumulative clock event counters;
	// nil when not sampled.
	EventCountersUS *Counters
	// VbiosVersion is the GPU's VBIOS version (vbios_version), a static
	// field where the driver gives it; nil where it does not.
	VbiosVersion *string
	// MemoryUsedMiB is the GPU memory used (memory_used_mib: nvidia-smi's
	// memory.used, NVML's nvmlDeviceGetMemoryInfo, amd-smi's used VRAM),
	// in MiB, the memory record's evidence (SPEC §11.1); nil when not
	// sampled.
	MemoryUsedMiB *float64
	// ImportedFrom names the source line an imported sample was converted
	// from ("FILE:LINE", or a Prometheus series and time); "" for a
	// sampler's reading (the key is then absent).
	ImportedFrom string
	// EnergyMJ is the GPU's cumulative energy counter (energy_mj), in mJ
	// since the driver loaded; nil when not sampled (SPEC §11.3).
	EnergyMJ *int64
	// EnergyScope is what the counter measures (energy_scope): EnergyScopeGPU,
	// or EnergyScopeModule where only the module's counter answers; a
	// static field, nil where the stream records no counter.
	EnergyScope *string
	// PCIeGen and PCIeWidth are the GPU's current PCIe link generation and
	// width (pcie_gen, pcie_width), PCIeGenMax and PCIeWidthMax the
	// maximum the GPU and its slot support (pcie_gen_max, pcie_width_max,
	// static within a window); nil where the backend reads none (SPEC
	// §12.2).
	PCIeGen, PCIeWidth, PCIeGenMax, PCIeWidthMax *int

	// MonoS is CLOCK_BOOTTIME at the reading, in seconds (mono_s), which
	// a sampler of a multi-host leg writes (SPEC §12.3) so that a step of
	// the wall clock within the window shows; nil elsewhere. Like
	// memory_used_mib, the stream's reader leaves it to the general
	// reading.
	MonoS *float64
}

// The values of energy_scope.
const (
	EnergyScopeGPU    = "gpu"
	EnergyScopeModule = "module"
)

// maxEnergyMJ is the largest energy_mj a sample may hold (2^53 mJ, exact
// in a float64: 285 years at 1 MW).
const maxEnergyMJ = 1 << 53

// Counters are the driver's clock event counters
// (clocks_event_reasons_counters.*): the time, in µs since the driver
// loaded, that each reason held the clock down. They see what an
// instantaneous bit misses between two readings.
type Counters struct {
	SwPowerCap   int64
	SyncBoost    int64
	SwThermal    int64
	HwThermal    int64
	HwPowerBrake int64
}

// CounterNames are the counters' keys in event_counters_us, in the order
// a sample writes them.
var CounterNames = [...]string{"sw_power_cap", "sync_boost", "sw_thermal_slowdown", "hw_thermal_slowdown", "hw_power_brake_slowdown"}

// maxCounterUS is the largest counter value a sample may hold (2^53 µs,
// 285 years): exact in a float64.
const maxCounterUS = 1 << 53

// At is the counter CounterNames[i].
func (c *Counters) At(i int) int64 {
	switch i {
	case 0:
		return c.SwPowerCap
	case 1:
		return c.SyncBoost
	case 2:
		return c.SwThermal
	case 3:
		return c.HwThermal
	}
	return c.HwPowerBrake
}

// Set sets the counter CounterNames[i].
func (c *Counters) Set(i int, v int64) {
	switch i {
	case 0:
		c.SwPowerCap = v
	case 1:
		c.SyncBoost = v
	case 2:
		c.SwThermal = v
	case 3:
		c.HwThermal = v
	default:
		c.HwPowerBrake = v
	}
}

// counterIndex is the index of a counter's key, or -1.
func counterIndex(k string) int {
	for i, n := range CounterNames {
		if k == n {
			return i
		}
	}
	return -1
}

// VendorAMD is the vendor key's value in a sample of an AMD GPU.
const VendorAMD = "amd"

// AMD reports whether the sample is of an AMD GPU.
func (s *Sample) AMD() bool { return s.Vendor == VendorAMD }

// Idle reports whether the sample priced no work (utilization 0%).
func (s *Sample) Idle() bool { return s.UtilizationGPUPct == 0 }

// AppendJSON appends s as one JSON object, keys in a fixed order, no newline.
func (s *Sample) AppendJSON(b []byte) []byte {
	b = append(b, `{"t":`...)
	b = appendString(b, s.T)
	b = append(b, `,"boot_id":`...)
	b = appendString(b, s.BootID)
	b = append(b, `,"gpu_index":`...)
	b = strconv.AppendInt(b, int64(s.GPUIndex), 10)
	b = append(b, `,"gpu_uuid":`...)
	b = appendString(b, s.GPUUUID)
	b = append(b, `,"gpu_name":`...)
	b = appendString(b, s.GPUName)
	b = append(b, `,"driver_version":`...)
	b = appendString(b, s.DriverVersion)
	b = append(b, `,"sm_clock_mhz":`...)
	b = strconv.AppendInt(b, int64(s.SMClockMHz), 10)
	b = append(b, `,"clocks_max_sm_mhz":`...)
	b = strconv.AppendInt(b, int64(s.ClocksMaxSMMHz), 10)
	b = append(b, `,"clocks_applications_graphics_mhz":`...)
	if s.ClocksApplicationsGraphicsMHz == nil {
		b = append(b, "null"...)
	} else {
		b = strconv.AppendInt(b, int64(*s.ClocksApplicationsGraphicsMHz), 10)
	}
	b = append(b, `,"throttle_reasons_active":`...)
	b = appendString(b, s.ThrottleReasonsActive)
	b = append(b, `,"persistence_mode":`...)
	b = appendStringOrNull(b, s.PersistenceMode)
	b = append(b, `,"pstate":`...)
	b = appendStringOrNull(b, s.PState)
	b = append(b, `,"utilization_gpu_pct":`...)
	b = strconv.AppendInt(b, int64(s.UtilizationGPUPct), 10)
	if s.TemperatureGPUC != nil {
		b = append(b, `,"temperature_gpu_c":`...)
		b = strconv.AppendFloat(b, *s.TemperatureGPUC, 'f', -1, 64)
	}
	if s.PowerDrawW != nil {
		b = append(b, `,"power_draw_w":`...)
		b = strconv.AppendFloat(b, *s.PowerDrawW, 'f', -1, 64)
	}
	if s.ClocksMemMHz != nil {
		b = append(b, `,"clocks_mem_mhz":`...)
		b = strconv.AppendInt(b, int64(*s.ClocksMemMHz), 10)
	}
	if s.ThrottleField != "" {
		b = append(b, `,"throttle_field":`...)
		b = appendString(b, s.ThrottleField)
	}
	if s.EnforcedPowerLimitW != nil {
		b = append(b, `,"enforced_power_limit_w":`...)
		b = strconv.AppendFloat(b, *s.EnforcedPowerLimitW, 'f', -1, 64)
	}
	if s.ModuleEnforcedPowerLimitW != nil {
		b = append(b, `,"module_enforced_power_limit_w":`...)
		b = strconv.AppendFloat(b, *s.ModuleEnforcedPowerLimitW, 'f', -1, 64)
	}
	if c := s.EventCountersUS; c != nil {
		b = append(b, `,"event_counters_us":{`...)
		for i, n := range CounterNames {
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, '"')
			b = append(b, n...)
			b = append(b, `":`...)
			b = strconv.AppendInt(b, c.At(i), 10)
		}
		b = append(b, '}')
	}
	if s.Vendor != "" {
		b = append(b, `,"vendor":`...)
		b = appendString(b, s.Vendor)
	}
	if s.PerfLevel != "" {
		b = append(b, `,"perf_level":`...)
		b = appendString(b, s.PerfLevel)
	}
	if s.MemoryPartition != "" {
		b = append(b, `,"memory_partition":`...)
		b = appendString(b, s.MemoryPartition)
	}
	if s.XCDClocksMHz != nil {
		b = append(b, `,"xcd_clocks_mhz":[`...)
		for i, c := range s.XCDClocksMHz {
			if i > 0 {
				b = append(b, ',')
			}
			b = strconv.AppendInt(b, int64(c), 10)
		}
		b = append(b, ']')
	}
	if s.VbiosVersion != nil {
		b = append(b, `,"vbios_version":`...)
		b = appendString(b, *s.VbiosVersion)
	}
	if s.MemoryUsedMiB != nil {
		b = append(b, `,"memory_used_mib":`...)
		b = strconv.AppendFloat(b, *s.MemoryUsedMiB, 'f', -1, 64)
	}
	if s.EnergyMJ != nil {
		b = append(b, `,"energy_mj":`...)
		b = strconv.AppendInt(b, *s.EnergyMJ, 10)
	}
	if s.EnergyScope != nil {
		b = append(b, `,"energy_scope":`...)
		b = appendString(b, *s.EnergyScope)
	}
	b = s.appendPCIe(b)
	if s.MonoS != nil {
		b = append(b, `,"mono_s":`...)
		b = strconv.AppendFloat(b, *s.MonoS, 'f', 9, 64)
	}
	if s.ImportedFrom != "" {
		b = append(b, `,"imported_from":`...)
		b = appendString(b, s.ImportedFrom)
	}
	return append(b, '}')
}

// appendStringOrNull appends s as a JSON string, or null for "".
func appendStringOrNull(b []byte, s string) []byte {
	if s == "" {
		return append(b, "null"...)
	}
	return appendString(b, s)
}

// appendString appends s as a JSON string: '"' and '\\' escaped, control
// bytes as \u00XX, every other byte as it is. (strconv.AppendQuote writes
// Go escapes such as \x7f and \a, which are not JSON, so a sample holding
// one would be written as a line the stream parser refuses.)
func appendString(b []byte, s string) []byte {
	const hex = "0123456789abcdef"
	b = append(b, '"')
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '"' || c == '\\':
			b = append(b, '\\', c)
		case c < 0x20:
			b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
		default:
			b = append(b, c)
		}
	}
	return append(b, '"')
}

// ParseThrottle reads a throttle bit set printed as hex
// ("0x0000000000000004"): 0x or 0X and one to sixteen hex digits.
func ParseThrottle(s string) (uint64, error) {
	var bits uint64
	if !hexBits([]byte(s), &bits) {
		return 0, fmt.Errorf("%q is not a hex bit set like 0x0000000000000000", s)
	}
	return bits, nil
}

// obj reads typed fields of a strict JSON object and keeps the first error,
// which names the field (with prefix, for nested objects).
type obj struct {
	v      *strictjson.Value
	prefix string
	err    error
}

func (o *obj) fail(key, format string, args ...any) {
	if o.err == nil {
		o.err = fmt.Errorf("%s%s: %s", o.prefix, key, fmt.Sprintf(format, args...))
	}
}

func (o *obj) get(key string) *strictjson.Value {
	f, ok := o.v.Fields[key]
	if !ok {
		o.fail(key, "missing")
		return nil
	}
	return f
}

func (o *obj) str(key string) string {
	f := o.get(key)
	if f == nil {
		return ""
	}
	if f.Kind != strictjson.String {
		o.fail(key, "want a string, found %s", f.Describe())
		return ""
	}
	if f.Str == "" {
		o.fail(key, "empty string")
	}
	return f.Str
}

func (o *obj) intMin(key string, min int64) int {
	f := o.get(key)
	if f == nil {
		return 0
	}
	return o.asInt(key, f, min)
}

// maxSampleInt is the largest integer a sample's integer field may hold
// (2^40): any clock, index or percentage past it is a defect, and every
// one below it is exact in a float64 and an int on any platform.
const maxSampleInt = 1 << 40

func (o *obj) asInt(key string, f *strictjson.Value, min int64) int {
	n, ok := f.Int()
	if !ok {
		o.fail(key, "want an integer, found %s", f.Describe())
		return 0
	}
	if n < min || n > maxSampleInt {
		if min == 1 {
			o.fail(key, "want a positive integer, found %d", n)
		} else {
			o.fail(key, "want an integer ≥ %d, found %d", min, n)
		}
		return 0
	}
	return int(n)
}

func (o *obj) intOrNull(key string, min int64) *int {
	f := o.get(key)
	if f == nil || f.Kind == strictjson.Null {
		return nil
	}
	n := o.asInt(key, f, min)
	return &n
}

func (o *obj) num(key string) float64 {
	f := o.get(key)
	if f == nil {
		return 0
	}
	if f.Kind != strictjson.Number {
		o.fail(key, "want a number, found %s", f.Describe())
		return 0
	}
	return f.Num
}

func (o *obj) optFloat(key string) *float64 {
	f, ok := o.v.Fields[key]
	if !ok || f.Kind == strictjson.Null {
		return nil
	}
	if f.Kind != strictjson.Number {
		o.fail(key, "want a number, found %s", f.Describe())
		return nil
	}
	x := f.Num
	return &x
}

func (o *obj) optInt(key string) *int {
	f, ok := o.v.Fields[key]
	if !ok || f.Kind == strictjson.Null {
		return nil
	}
	n := o.asInt(key, f, 0)
	return &n
}

func (o *obj) object(key string) *obj {
	f := o.get(key)
	sub := &obj{prefix: o.prefix + key + "."}
	if f == nil {
		return nil
	}
	if f.Kind != strictjson.Object {
		o.fail(key, "want an object, found %s", f.Describe())
		return nil
	}
	sub.v = f
	return sub
}
