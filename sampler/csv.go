package sampler

import (
	"errors"
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/clockgate/clockgate/clocks"
)

// The nvidia-smi --query-gpu fields a sample is read from, spelled as the
// query names them.
const (
	FieldIndex         = "index"
	FieldUUID          = "uuid"
	FieldName          = "name"
	FieldDriverVersion = "driver_version"
	// FieldClocksSM is the current SM clock, in MHz.
	FieldClocksSM = "clocks.sm"
	// FieldClocksMaxSM is the maximum SM clock, in MHz.
	FieldClocksMaxSM = "clocks.max.sm"
	// FieldClocksApplicationsGraphics is the applications graphics clock, in
	// MHz; drivers from 590 say it is deprecated.
	FieldClocksApplicationsGraphics = "clocks.applications.graphics"
	// FieldEventReasons is the active throttle bit set as newer drivers
	// spell it.
	FieldEventReasons = "clocks_event_reasons.active"
	// FieldThrottleReasons is the active throttle bit set as older drivers
	// spell it.
	FieldThrottleReasons = "clocks_throttle_reasons.active"
	FieldPersistenceMode = "persistence_mode"
	FieldPState          = "pstate"
	// FieldUtilizationGPU is the GPU utilization, in percent.
	FieldUtilizationGPU = "utilization.gpu"
	// FieldTemperatureGPU is the GPU core temperature, in degrees C (optional).
	FieldTemperatureGPU = "temperature.gpu"
	// FieldPowerDraw is the board power draw, in W (optional).
	FieldPowerDraw = "power.draw"
	// FieldClocksMem is the current memory clock, in MHz (optional).
	FieldClocksMem = "clocks.mem"
	// FieldEnforcedPowerLimit is the power limit the driver enforces, in W
	// (optional): a window that records it judges SwPowerCap as power
	// management (SPEC §10.1).
	FieldEnforcedPowerLimit = "enforced.power.limit"
	// FieldModulePowerLimit is the enforced limit of the GPU's module, in
	// W (optional; GH200/GB200 modules share one budget between CPU and
	// GPU).
	FieldModulePowerLimit = "module.enforced.power.limit"
	// FieldVbiosVersion is the GPU's VBIOS version (optional): a static
	// field, constant within a window and across legs and arms.
	FieldVbiosVersion = "vbios_version"
	// FieldMemoryUsed is the GPU memory used, in MiB (optional): the
	// memory record's evidence (SPEC §11.1). Spelled in two parts: the
	// reason-code scan of clocks/registry_test.go reads a literal
	// "memory.<word>" as a reason code.
	FieldMemoryUsed = "memory" + ".used"
)

// PCIeQueryFields are the GPU's PCIe link fields (optional, SPEC §12.2),
// in clocks.PCIeFields' order: the current generation and width, and the
// maximum the GPU and its slot support.
var PCIeQueryFields = [clocks.NumPCIe]string{
	"pcie.link.gen.gpucurrent",
	"pcie.link.width.current",
	"pcie.link.gen.max",
	"pcie.link.width.max",
}

// pcieIndex is the index of a PCIe field in PCIeQueryFields, or -1.
func pcieIndex(f string) int {
	for i, p := range PCIeQueryFields {
		if p == f {
			return i
		}
	}
	return -1
}

// CounterFields are the clock event counters (optional, drivers from 590):
// the time in µs, since the driver loaded, that each reason held the clock
// down, in clocks.CounterNames' order. A sample carries them only when the
// driver gives all five.
var CounterFields = [len(clocks.CounterNames)]string{
	"clocks_event_reasons_counters.sw_power_cap",
	"clocks_event_reasons_counters.sync_boost",
	"clocks_event_reasons_counters.sw_thermal_slowdown",
	"clocks_event_reasons_counters.hw_thermal_slowdown",
	"clocks_event_reasons_counters.hw_power_brake_slowdown",
}

// SampleTimeLayout is the layout of clocks.Sample.T as the sampler writes it: UTC,
// RFC 3339 with milliseconds ("2026-08-12T10:15:03.123Z").
const SampleTimeLayout = "2006-01-02T15:04:05.000Z"

// DeprecatedToken is what drivers from 590 print for
// clocks.applications.graphics; it is recorded as null there and refused
// everywhere else.
const DeprecatedToken = "[Requested functionality has been deprecated]"

// QueryFields returns the fields a sample needs, in the canonical query
// order, with throttleField (FieldEventReasons or FieldThrottleReasons) as
// the throttle bit set's spelling.
func QueryFields(throttleField string) []string {
	return []string{FieldIndex, FieldUUID, FieldName, FieldDriverVersion, FieldClocksSM, FieldClocksMaxSM,
		FieldClocksApplicationsGraphics, throttleField, FieldPersistenceMode, FieldPState, FieldUtilizationGPU}
}

// OptionalQueryFields returns the fields a sampler may add after
// QueryFields, in order, when the driver gives numbers for them.
func OptionalQueryFields() []string {
	fields := append(append([]string{FieldTemperatureGPU, FieldPowerDraw, FieldClocksMem, FieldEnforcedPowerLimit, FieldModulePowerLimit},
		CounterFields[:]...), FieldVbiosVersion, FieldMemoryUsed)
	return append(fields, PCIeQueryFields[:]...)
}

// counterIndex is the index of a counter field in CounterFields, or -1.
func counterIndex(f string) int {
	for i, c := range CounterFields {
		if c == f {
			return i
		}
	}
	return -1
}

// fieldAliases maps every spelling nvidia-smi accepts in a query or prints in
// a header (unit suffix removed) to the canonical field.
var fieldAliases = map[string]string{
	FieldIndex:                      FieldIndex,
	FieldUUID:                       FieldUUID,
	"gpu_uuid":                      FieldUUID,
	FieldName:                       FieldName,
	"gpu_name":                      FieldName,
	FieldDriverVersion:              FieldDriverVersion,
	FieldClocksSM:                   FieldClocksSM,
	"clocks.current.sm":             FieldClocksSM,
	FieldClocksMaxSM:                FieldClocksMaxSM,
	FieldClocksApplicationsGraphics: FieldClocksApplicationsGraphics,
	"clocks.applications.gr":        FieldClocksApplicationsGraphics,
	FieldEventReasons:               FieldEventReasons,
	FieldThrottleReasons:            FieldThrottleReasons,
	FieldPersistenceMode:            FieldPersistenceMode,
	FieldPState:                     FieldPState,
	FieldUtilizationGPU:             FieldUtilizationGPU,
	FieldTemperatureGPU:             FieldTemperatureGPU,
	FieldPowerDraw:                  FieldPowerDraw,
	FieldClocksMem:                  FieldClocksMem,
	"clocks.current.memory":         FieldClocksMem,
	FieldEnforcedPowerLimit:         FieldEnforcedPowerLimit,
	FieldModulePowerLimit:           FieldModulePowerLimit,
	CounterFields[0]:                CounterFields[0],
	CounterFields[1]:                CounterFields[1],
	CounterFields[2]:                CounterFields[2],
	CounterFields[3]:                CounterFields[3],
	CounterFields[4]:                CounterFields[4],
	FieldVbiosVersion:               FieldVbiosVersion,
	FieldMemoryUsed:                 FieldMemoryUsed,
	PCIeQueryFields[0]:              PCIeQueryFields[0],
	"pcie.link.gen.current":         PCIeQueryFields[0],
	PCIeQueryFields[1]:              PCIeQueryFields[1],
	PCIeQueryFields[2]:              PCIeQueryFields[2],
	PCIeQueryFields[3]:              PCIeQueryFields[3],
}

// canonicalField returns the canonical spelling of an nvidia-smi field.
func canonicalField(name string) (string, bool) {
	f, ok := fieldAliases[name]
	return f, ok
}

// Reading is one GPU's answer to nvidia-smi --query-gpu: the values of the
// fields it was queried with. A field not queried keeps its zero value; Has
// tells which were.
type Reading struct {
	// Fields lists the canonical fields the line was queried with, in order.
	Fields []string

	Index         int
	UUID          string
	Name          string
	DriverVersion string
	// SMClockMHz is clocks.sm, in MHz.
	SMClockMHz int
	// ClocksMaxSMMHz is clocks.max.sm, in MHz.
	ClocksMaxSMMHz int
	// ClocksApplicationsGraphicsMHz is clocks.applications.graphics in MHz,
	// nil when the driver printed DeprecatedToken (or the field was not
	// queried).
	ClocksApplicationsGraphicsMHz *int
	// ThrottleReasonsActive is the throttle bit set as printed.
	ThrottleReasonsActive string
	// ThrottleField is the spelling the throttle bit set was queried with,
	// FieldEventReasons or FieldThrottleReasons; "" when not queried.
	ThrottleField   string
	PersistenceMode string
	PState          string
	// UtilizationGPUPct is utilization.gpu, in percent.
	UtilizationGPUPct int
	// TemperatureGPUC is temperature.gpu in degrees C, nil when not queried.
	TemperatureGPUC *float64
	// PowerDrawW is power.draw in W, nil when not queried.
	PowerDrawW *float64
	// ClocksMemMHz is clocks.mem in MHz, nil when not queried.
	ClocksMemMHz *int
	// EnforcedPowerLimitW and ModulePowerLimitW are the enforced limits in
	// W, nil when not queried.
	EnforcedPowerLimitW *float64
	ModulePowerLimitW   *float64
	// CountersUS are the clock event counters in µs, in CounterFields'
	// order; HasCounter says which were queried.
	CountersUS [len(CounterFields)]int64
	HasCounter [len(CounterFields)]bool
	// VbiosVersion is vbios_version, nil when not queried.
	VbiosVersion *string
	// MemoryUsedMiB is memory.used in MiB, nil when not queried.
	MemoryUsedMiB *float64
	// EnergyMJ is the GPU's cumulative energy counter in mJ and
	// EnergyScope what it measures ("gpu", "module"); nil where the
	// backend reads none (nvidia-smi has no such field).
	EnergyMJ    *int64
	EnergyScope *string
	// PCIe is the GPU's PCIe link in PCIeQueryFields' order; HasPCIe says
	// which fields were read.
	PCIe    [clocks.NumPCIe]int
	HasPCIe [clocks.NumPCIe]bool
}

// Has reports whether the reading was queried with the canonical field
// (either throttle spelling matches the other).
func (r *Reading) Has(field string) bool {
	if c, ok := canonicalField(field); ok {
		field = c
	}
	for _, f := range r.Fields {
		if f == field || isThrottle(f) && isThrottle(field) {
			return true
		}
	}
	return false
}

func isThrottle(f string) bool { return f == FieldEventReasons || f == FieldThrottleReasons }

// canonicalFields maps each name to its canonical field and refuses unknown
// and repeated fields.
func canonicalFields(names []string, what string) ([]string, error) {
	out := make([]string, len(names))
	seen := map[string]string{}
	for i, n := range names {
		c, ok := canonicalField(n)
		if !ok {
			return nil, fmt.Errorf("%s %d: unknown nvidia-smi field %q", what, i+1, n)
		}
		key := c
		if isThrottle(c) {
			key = "throttle"
		}
		if prev, dup := seen[key]; dup {
			return nil, fmt.Errorf("%s %d: %q repeats %q", what, i+1, n, prev)
		}
		seen[key] = n
		out[i] = c
	}
	return out, nil
}

// unitRE matches the " [unit]" suffix nvidia-smi adds to header names.
var unitRE = regexp.MustCompile(`\s*\[[^\]]*\]$`)

// ParseCSVHeader maps the header line nvidia-smi prints with --format=csv
// ("index, uuid, clocks.current.sm [MHz], …") to canonical fields, so that a
// CSV captured by hand can be read with ParseCSVLine. An unknown or repeated
// column is an error naming it.
func ParseCSVHeader(line string) ([]string, error) {
	cells := splitCSV(line)
	for i, c := range cells {
		cells[i] = unitRE.ReplaceAllString(c, "")
	}
	return canonicalFields(cells, "header column")
}

func splitCSV(line string) []string {
	line = strings.TrimRight(line, "\r\n")
	cells := strings.Split(line, ",")
	for i, c := range cells {
		cells[i] = strings.TrimSpace(c)
	}
	return cells
}

// ParseCSVLine reads one line nvidia-smi printed for --query-gpu=fields, in
// the noheader,nounits form ("2190") or the unit-bearing one ("2190 MHz",
// "97 %", "250.50 W"). Every value must be what its field promises:
// bracketed tokens such as "[N/A]" and empty values are refused by field
// name, except DeprecatedToken for clocks.applications.graphics, which
// becomes nil. The error names the field and quotes what nvidia-smi printed.
func ParseCSVLine(fields []string, line string) (*Reading, error) {
	canon, err := canonicalFields(fields, "query field")
	if err != nil {
		return nil, err
	}
	cells := splitCSV(line)
	if len(cells) != len(canon) {
		return nil, fmt.Errorf("%d values for %d queried fields (%s)", len(cells), len(canon), strings.Join(canon, ", "))
	}
	r := &Reading{Fields: canon}
	for i, f := range canon {
		if err := r.set(f, cells[i]); err != nil {
			return nil, err
		}
	}
	return r, nil
}

// tokenWhy explains the bracketed tokens nvidia-smi prints instead of values.
var tokenWhy = map[string]string{
	"[N/A]":                      "no value (not available on this GPU or driver)",
	"N/A":                        "no value (not available on this GPU or driver)",
	"[Not Supported]":            "the driver does not support this field on this GPU",
	"[Unknown Error]":            "the driver failed to read it",
	"[Insufficient Permissions]": "reading it needs privileges this process lacks",
	DeprecatedToken:              "deprecated; only clocks.applications.graphics may be, and is then recorded as null",
}

type valueError struct {
	field, raw, why string
}

func (e *valueError) Error() string {
	return fmt.Sprintf("%s: nvidia-smi printed %q: %s", e.field, e.raw, e.why)
}

var (
	intRE     = regexp.MustCompile(`^[0-9]+$`)
	decimalRE = regexp.MustCompile(`^[0-9]+(\.[0-9]+)?$`)
	signedRE  = regexp.MustCompile(`^-?[0-9]+(\.[0-9]+)?$`)
	pstateRE  = regexp.MustCompile(`^P([0-9]|1[0-5])$`)
)

// set parses raw into the reading's field f.
func (r *Reading) set(f, raw string) error {
	bad := func(why string) error { return &valueError{field: f, raw: raw, why: why} }
	if raw == "" {
		return bad("empty value")
	}
	if f == FieldClocksApplicationsGraphics && raw == DeprecatedToken {
		r.ClocksApplicationsGraphicsMHz = nil
		return nil
	}
	if why, ok := tokenWhy[raw]; ok {
		return bad(why)
	}
	if strings.HasPrefix(raw, "[") && strings.HasSuffix(raw, "]") {
		return bad("an nvidia-smi error token, not a value")
	}
	switch f {
	case FieldIndex:
		n, err := parseInt(raw, "", 0, 1<<20)
		if err != nil {
			return bad("want a GPU index, a non-negative integer")
		}
		r.Index = n
	case FieldUUID, FieldName, FieldDriverVersion, FieldVbiosVersion:
		// The sampler writes these into every stream line: bytes JSON cannot
		// carry, or that no driver prints, are a refusal to sample.
		if !utf8.ValidString(raw) || strings.ContainsFunc(raw, unicode.IsControl) {
			return bad("want printable UTF-8 text")
		}
		switch f {
		case FieldUUID:
			r.UUID = raw
		case FieldName:
			r.Name = raw
		case FieldVbiosVersion:
			r.VbiosVersion = &raw
		default:
			r.DriverVersion = raw
		}
	case FieldClocksSM, FieldClocksMaxSM, FieldClocksApplicationsGraphics, FieldClocksMem:
		n, err := parseInt(raw, "MHz", 1, math.MaxInt32)
		if err != nil {
			return bad("want a clock in MHz, a positive integer")
		}
		switch f {
		case FieldClocksSM:
			r.SMClockMHz = n
		case FieldClocksMaxSM:
			r.ClocksMaxSMMHz = n
		case FieldClocksApplicationsGraphics:
			r.ClocksApplicationsGraphicsMHz = &n
		case FieldClocksMem:
			r.ClocksMemMHz = &n
		}
	case FieldEventReasons, FieldThrottleReasons:
		if _, err := clocks.ParseThrottle(raw); err != nil {
			return bad("want a hex bit set like 0x0000000000000000")
		}
		r.ThrottleReasonsActive, r.ThrottleField = raw, f
	case FieldPersistenceMode:
		if raw != "Enabled" && raw != "Disabled" {
			return bad("want Enabled or Disabled")
		}
		r.PersistenceMode = raw
	case FieldPState:
		if !pstateRE.MatchString(raw) {
			return bad("want a performance state P0 to P15")
		}
		r.PState = raw
	case FieldUtilizationGPU:
		n, err := parseInt(raw, "%", 0, 100)
		if err != nil {
			return bad("want a percentage, an integer 0 to 100")
		}
		r.UtilizationGPUPct = n
	case FieldTemperatureGPU:
		x, err := parseDecimal(raw, "C", signedRE)
		if err != nil {
			return bad("want a temperature in degrees C, a number")
		}
		r.TemperatureGPUC = &x
	case FieldPowerDraw:
		x, err := parseDecimal(raw, "W", decimalRE)
		if err != nil {
			return bad("want a power in W, a non-negative number")
		}
		r.PowerDrawW = &x
	case FieldMemoryUsed:
		x, err := parseDecimal(raw, "MiB", decimalRE)
		if err != nil {
			return bad("want the memory used in MiB, a non-negative number")
		}
		r.MemoryUsedMiB = &x
	case FieldEnforcedPowerLimit, FieldModulePowerLimit:
		x, err := parseDecimal(raw, "W", decimalRE)
		if err != nil || !(x > 0) {
			return bad("want a power limit in W, a positive number")
		}
		if f == FieldEnforcedPowerLimit {
			r.EnforcedPowerLimitW = &x
		} else {
			r.ModulePowerLimitW = &x
		}
	default:
		if i := pcieIndex(f); i >= 0 {
			n, err := parseInt(raw, "", 1, maxPCIe)
			if err != nil {
				return bad(fmt.Sprintf("want a PCIe link generation or width, an integer 1 to %d", maxPCIe))
			}
			r.PCIe[i], r.HasPCIe[i] = n, true
		}
		if i := counterIndex(f); i >= 0 {
			n, err := parseInt(raw, "us", 0, 1<<53)
			if err != nil {
				return bad("want a time in µs, a non-negative integer")
			}
			r.CountersUS[i], r.HasCounter[i] = int64(n), true
		}
	}
	return nil
}

var errNotNumber = errors.New("not a number")

// trimUnit removes the " unit" suffix the unit-bearing CSV form adds.
func trimUnit(raw, unit string) string {
	if unit != "" {
		return strings.TrimSuffix(raw, " "+unit)
	}
	return raw
}

func parseInt(raw, unit string, min, max int) (int, error) {
	s := trimUnit(raw, unit)
	if !intRE.MatchString(s) {
		return 0, errNotNumber
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < min || n > max {
		return 0, errNotNumber
	}
	return n, nil
}

func parseDecimal(raw, unit string, re *regexp.Regexp) (float64, error) {
	s := trimUnit(raw, unit)
	if !re.MatchString(s) {
		return 0, errNotNumber
	}
	x, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsInf(x, 0) {
		return 0, errNotNumber
	}
	return x, nil
}

// Sample turns the reading into a stream sample taken at t (written in UTC
// as SampleTimeLayout) on the boot bootID. Every field QueryFields names must
// have been queried; the error names each missing column.
func (r *Reading) Sample(t time.Time, bootID string) (*clocks.Sample, error) {
	var missing []string
	for _, f := range QueryFields(FieldEventReasons) {
		if !r.Has(f) {
			if isThrottle(f) {
				f = FieldEventReasons + " or " + FieldThrottleReasons
			}
			missing = append(missing, f)
		}
	}
	if len(missing) > 0 {
		return nil, fmt.Errorf("missing required column(s): %s", strings.Join(missing, ", "))
	}
	if t.IsZero() {
		return nil, errors.New("no time for the sample")
	}
	if bootID == "" {
		return nil, errors.New("no boot id for the sample")
	}
	return &clocks.Sample{
		T:                             t.UTC().Format(SampleTimeLayout),
		BootID:                        bootID,
		GPUIndex:                      r.Index,
		GPUUUID:                       r.UUID,
		GPUName:                       r.Name,
		DriverVersion:                 r.DriverVersion,
		SMClockMHz:                    r.SMClockMHz,
		ClocksMaxSMMHz:                r.ClocksMaxSMMHz,
		ClocksApplicationsGraphicsMHz: r.ClocksApplicationsGraphicsMHz,
		ThrottleReasonsActive:         r.ThrottleReasonsActive,
		PersistenceMode:               r.PersistenceMode,
		PState:                        r.PState,
		UtilizationGPUPct:             r.UtilizationGPUPct,
		TemperatureGPUC:               r.TemperatureGPUC,
		PowerDrawW:                    r.PowerDrawW,
		ClocksMemMHz:                  r.ClocksMemMHz,
		ThrottleField:                 r.ThrottleField,
		EnforcedPowerLimitW:           r.EnforcedPowerLimitW,
		ModuleEnforcedPowerLimitW:     r.modulePowerLimit(),
		EventCountersUS:               r.counters(),
		VbiosVersion:                  r.VbiosVersion,
		MemoryUsedMiB:                 r.MemoryUsedMiB,
		EnergyMJ:                      r.EnergyMJ,
		EnergyScope:                   r.EnergyScope,
		PCIeGen:                       r.pcie(clocks.PCIeGen),
		PCIeWidth:                     r.pcie(clocks.PCIeWidth),
		PCIeGenMax:                    r.pcie(clocks.PCIeGenMax),
		PCIeWidthMax:                  r.pcie(clocks.PCIeWidthMax),
	}, nil
}

// maxPCIe bounds a PCIe generation or width read from a backend, as a
// sample bounds it.
const maxPCIe = 64

// pcie is the reading's PCIe field i, nil where it was not read.
func (r *Reading) pcie(i int) *int {
	if !r.HasPCIe[i] {
		return nil
	}
	v := r.PCIe[i]
	return &v
}

// modulePowerLimit is the module's limit where the GPU also records its
// own: a module limit alone judges nothing.
func (r *Reading) modulePowerLimit() *float64 {
	if r.EnforcedPowerLimitW == nil {
		return nil
	}
	return r.ModulePowerLimitW
}

// counters are the reading's clock event counters when all five were
// queried, else nil.
func (r *Reading) counters() *clocks.Counters {
	var c clocks.Counters
	for i, has := range r.HasCounter {
		if !has {
			return nil
		}
		c.Set(i, r.CountersUS[i])
	}
	return &c
}
