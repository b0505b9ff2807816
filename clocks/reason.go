package clocks

import (
	"encoding/json"
	"sort"
	"strings"
)

// The reason codes. Codes are stable API: tests and CI match on them.
// Registry describes each.
const (
	CodeMissing        = "clock.missing"
	CodeInvalid        = "clock.invalid"
	CodeStreamMissing  = "clock.stream_missing"
	CodeStreamInvalid  = "clock.stream_invalid"
	CodeStreamMismatch = "clock.stream_mismatch"
	CodeBusySamples    = "clock.busy_samples"
	CodeBusyFraction   = "clock.busy_fraction"
	CodeSpread         = "clock.spread"
	CodeThrottle       = "clock.throttle"
	CodePersistence    = "clock.persistence"
	CodeStaticDrift    = "clock.static_drift"
	CodePartialWindow  = "clock.partial_window"
	CodeRefused        = "clock.refused"
	CodeCoverage       = "clock.coverage"
	CodeGPUSkew        = "clock.gpu_skew"
	CodeFreeSamples    = "clock.free_samples"
	CodeForeignProcess = "clock.foreign_process"
	// What an imported stream's source cannot prove (SPEC §11.4).
	CodeUnprovenThrottle    = "clock.unproven_throttle"
	CodeUnprovenPowerLimit  = "clock.unproven_power_limit"
	CodeUnprovenCoverage    = "clock.unproven_coverage"
	CodeUnprovenPersistence = "clock.unproven_persistence"
	CodeUnprovenStatic      = "clock.unproven_static"
	CodeUnprovenBusy        = "clock.unproven_busy"

	CodeBenchMissing   = "bench.missing"
	CodeBenchInvalid   = "bench.invalid"
	CodeFailedRequests = "bench.failed_requests"
	CodeMemoryMissing  = "memory.missing"
	CodeMemoryInvalid  = "memory.invalid"

	CodeStraddledBoot  = "clock.straddled_boot"
	CodeStaticMismatch = "clock.static_mismatch"
	CodeStaircase      = "clock.staircase"

	CodeCrossBoot        = "clock.cross_boot"
	CodeUnprovenBoot     = "clock.unproven_boot"
	CodeHardwareMismatch = "clock.hardware_mismatch"
	CodeOffset           = "clock.offset"
	CodeThermalStart     = "clock.thermal_start"
	CodePointOffset      = "clock.point_offset"
	CodeLegIneligible    = "leg.ineligible"
	CodePointMismatch    = "bench.point_mismatch"
	CodeWorkloadMismatch = "bench.workload_mismatch"
	CodeOutputMismatch   = "bench.output_mismatch"
	CodeUndefined        = "ratio.undefined"

	// The host the leg ran on (SPEC §12.2).
	CodeHostContention = "host.contention"
	CodeHostSteal      = "host.steal"
	CodeHostSwap       = "host.swap"
	CodeHostMismatch   = "host.mismatch"
	CodeHostCPUOffset  = "host.cpu_offset"
)

// Scope is what a reason is about: one leg, one arm, or a ratio (the two
// arms together).
type Scope string

// The scopes.
const (
	ScopeLeg   Scope = "leg"
	ScopeArm   Scope = "arm"
	ScopeRatio Scope = "ratio"
)

// Reason is one named defect: a stable code and a message that names what
// was expected and what was found, and what it is about.
type Reason struct {
	Code    string
	Message string
	Scope   Scope
	// Engine is the arm the reason is about: the leg's or the arm's
	// engine, or, for a ratio reason about one leg, that leg's; "" for a
	// reason about both arms.
	Engine string
	// Run is the leg's run number when the reason is about one leg, else 0.
	Run int
	// Waived is true for a check the cross-boot override turned into a
	// caveat.
	Waived bool
}

// overriddenSuffix ends the message of a waived reason in JSON outputs.
const overriddenSuffix = " (OVERRIDDEN by --allow-cross-boot)"

// Text is the message as JSON outputs carry it: a waived check says so.
func (r Reason) Text() string {
	if r.Waived {
		return r.Message + overriddenSuffix
	}
	return r.Message
}

// MarshalJSON writes {"code", "message"}, the contract's shape.
func (r Reason) MarshalJSON() ([]byte, error) {
	return json.Marshal(struct {
		Code    string `json:"code"`
		Message string `json:"message"`
	}{r.Code, r.Text()})
}

// Family is a set of ratio families, THROUGHPUT and MEMORY.
type Family uint8

// The families a reason can void.
const (
	Throughput Family = 1 << iota
	Memory
	// Energy is the ENERGY family (SPEC §11.3), never a gate term
	// without --strict-energy.
	Energy
	BothFamilies = Throughput | Memory
)

// CodeInfo describes one reason code.
type CodeInfo struct {
	Code  string
	Scope Scope
	// Waivable says --allow-cross-boot turns the check into a caveat.
	Waivable bool
	// Clock says the code belongs to the clock contract: while it stands,
	// the clock block is not established.
	Clock bool
	// Blocks are the ratio families the reason keeps from ESTABLISHED.
	Blocks Family
	// Doc says in one line what the code means.
	Doc string
}

// Registry lists every reason code clockgate gives, by scope then as the
// tables of docs/reasons.md order them.
var Registry = []CodeInfo{
	{CodeMissing, ScopeLeg, false, true, BothFamilies, "no clock record for the leg"},
	{CodeInvalid, ScopeLeg, false, true, BothFamilies, "the clock record is not a valid record"},
	{CodeStreamMissing, ScopeLeg, false, true, BothFamilies, "a clock record without a readable stream beside it"},
	{CodeStreamInvalid, ScopeLeg, false, true, BothFamilies, "a stream line is not a valid sample"},
	{CodeStreamMismatch, ScopeLeg, false, true, BothFamilies, "the record is not what its stream recomputes to"},
	{CodeBusySamples, ScopeLeg, false, true, BothFamilies, "fewer busy samples than the floor"},
	{CodeBusyFraction, ScopeLeg, false, true, BothFamilies, "busy samples under the floor's share of the window"},
	{CodeSpread, ScopeLeg, false, true, BothFamilies, "the SM clock moved more than the spread bound within the window"},
	{CodeThrottle, ScopeLeg, false, true, BothFamilies, "non-benign throttle bits in busy samples"},
	{CodePersistence, ScopeLeg, false, true, BothFamilies, "persistence mode not Enabled in some sample"},
	{CodeStaticDrift, ScopeLeg, false, true, BothFamilies, "boot id, GPU, driver or max/applications clock changed within the window"},
	{CodePartialWindow, ScopeLeg, false, true, BothFamilies, "the window was cut off at --max-duration, or its record rebuilt"},
	{CodeRefused, ScopeLeg, false, true, BothFamilies, "the sampler refused a reading mid-window"},
	{CodeCoverage, ScopeLeg, false, true, BothFamilies, "a gap between consecutive samples over the coverage bound"},
	{CodeGPUSkew, ScopeLeg, false, true, BothFamilies, "the busy medians of a leg's GPUs differ by more than the offset bound"},
	{CodeFreeSamples, ScopeLeg, false, true, BothFamilies, "a power-managed window with fewer free busy samples than the floor"},
	{CodeForeignProcess, ScopeLeg, false, true, BothFamilies, "a compute process on the leg's GPUs that is not the recorded command, the --pid process or their descendants"},
	{CodeUnprovenThrottle, ScopeLeg, false, true, BothFamilies, "an imported stream has no throttle bitmask, or its per-reason columns leave non-benign bits uncovered"},
	{CodeUnprovenPowerLimit, ScopeLeg, false, true, BothFamilies, "an imported stream has no enforced power limit, so SwPowerCap cannot be told from a throttle"},
	{CodeUnprovenCoverage, ScopeLeg, false, true, BothFamilies, "an imported stream has no per-sample time of its own (given times, or query_range steps)"},
	{CodeUnprovenPersistence, ScopeLeg, false, true, BothFamilies, "an imported stream has no persistence mode"},
	{CodeUnprovenStatic, ScopeLeg, false, true, BothFamilies, "an imported stream lacks a STATIC_FIELDS value (named)"},
	{CodeUnprovenBusy, ScopeLeg, false, true, BothFamilies, "an imported stream has no utilization; busy was read from the clock (--busy-above-mhz)"},
	{CodeUnprovenWindow, ScopeLeg, false, true, BothFamilies, "an imported leg's bench results carry no time, so nothing ties them to the imported log"},
	{CodeHostContention, ScopeLeg, false, false, BothFamilies, "the leg's own threads waited for a CPU more than the contention bound of their running time"},
	{CodeHostSteal, ScopeLeg, false, false, BothFamilies, "the hypervisor stole more than the steal bound of the host's CPU time"},
	{CodeHostSwap, ScopeLeg, false, false, BothFamilies, "pages were swapped in or out during the busy window"},
	{CodeBenchMissing, ScopeLeg, false, false, BothFamilies, "the leg has other evidence but no bench points"},
	{CodeBenchInvalid, ScopeLeg, false, false, BothFamilies, "a bench file or object is malformed or refused"},
	{CodeFailedRequests, ScopeLeg, false, false, BothFamilies, "requests failed at a point"},
	{CodeBenchOutsideWindow, ScopeLeg, false, false, BothFamilies, "a bench result's known time overlaps its leg's clock window under no admissible zone"},
	{CodeMemoryMissing, ScopeLeg, false, false, BothFamilies, "no memory record for the leg"},
	{CodeMemoryInvalid, ScopeLeg, false, false, BothFamilies, "the memory record is malformed"},
	{CodeStraddledBoot, ScopeArm, true, true, BothFamilies, "the arm's legs ran on more than one boot"},
	{CodeStaticMismatch, ScopeArm, false, true, BothFamilies, "the arm's legs differ in a STATIC_FIELDS value"},
	{CodeStaircase, ScopeArm, false, true, BothFamilies, "the arm's legs together span more than the spread bound"},
	{CodeCrossBoot, ScopeRatio, true, true, BothFamilies, "the two arms ran on different boots"},
	{CodeUnprovenBoot, ScopeRatio, true, true, BothFamilies, "imported legs have no boot id, and no counter continuity or node_boot_time_seconds proves them one boot"},
	{CodeHardwareMismatch, ScopeRatio, false, true, BothFamilies, "the arms differ in a STATIC_FIELDS value"},
	{CodeOffset, ScopeRatio, false, true, BothFamilies, "the arms' SM clocks differ by more than the offset bound"},
	{CodeThermalStart, ScopeRatio, false, true, BothFamilies, "power-managed arms started their legs at temperatures further apart than the thermal bound"},
	{CodePointOffset, ScopeRatio, false, true, Throughput, "at one point, the arms' free clocks inside the point's windows differ by more than the offset bound"},
	{CodeHostMismatch, ScopeRatio, false, false, BothFamilies, "the arms' hosts differ in CPU, memory, kernel or frequency scaling, or their GPUs' maximum PCIe generation or width"},
	{CodeHostCPUOffset, ScopeRatio, false, false, BothFamilies, "the arms' busy median CPU clocks differ by more than the CPU offset bound"},
	{CodeLegIneligible, ScopeRatio, false, false, BothFamilies, "a leg of either arm carries a reason"},
	{CodePointMismatch, ScopeRatio, false, false, BothFamilies, "the arms did not run one set of points"},
	{CodeWorkloadMismatch, ScopeRatio, false, false, BothFamilies, "the arms did not run one workload"},
	{CodeOutputMismatch, ScopeRatio, false, false, Throughput, "the arms generated output totals further apart than the output bound"},
	{CodeUndefined, ScopeRatio, false, false, BothFamilies, "a ratio's value cannot be computed, so it is null"},
	{CodeEnergyNoWindow, ScopeRatio, false, false, Energy, "a leg has no window for the point, so its energy is not known"},
	{CodeEnergyMissing, ScopeRatio, false, false, Energy, "a leg has neither an energy counter nor power on every sample around the point's window"},
	{CodeEnergyCounterReset, ScopeRatio, false, false, Energy, "a GPU's energy counter went down, or stood still over busy samples under load, in the point's window"},
	{CodeEnergyCoverage, ScopeRatio, false, false, Energy, "an end of the point's window lacks close samples on both sides, or the window is too short"},
	{CodeEnergyMethodMismatch, ScopeRatio, false, false, Energy, "the legs' energies were measured by different methods or scopes"},
	{CodeEnergyDisagree, ScopeRatio, false, false, Energy, "a leg's counter and integrated power disagree over the point's window"},
	// The box's PCIe link and declared state (SPEC §12.2).
	{CodeHostPCIeLink, ScopeLeg, false, false, BothFamilies, "a GPU's PCIe link ran below its maximum generation or width in a busy reading"},
	{CodeExpectation, ScopeLeg, false, true, BothFamilies, "a declared state (--expect) the leg's evidence does not bear out"},
	// One leg across several hosts (SPEC §12.3).
	{CodeHostMissing, ScopeLeg, false, true, BothFamilies, "a host of leg.json wrote no record"},
	{CodeHostUnexpected, ScopeLeg, false, true, BothFamilies, "a file under hosts/ of a host leg.json does not list"},
	{CodeHostDuplicate, ScopeLeg, false, true, BothFamilies, "two hosts claim one GPU"},
	{CodeHostInterval, ScopeLeg, false, true, BothFamilies, "a host sampled at another interval than leg.json's"},
	{CodeHostWindow, ScopeLeg, false, true, BothFamilies, "a host's window starts or ends more than the window bound from the common window"},
	{CodeHostSkew, ScopeLeg, false, true, BothFamilies, "two hosts' clocks may disagree by more than the skew bound, or by an unknown amount"},
	{CodeWallStep, ScopeLeg, false, true, BothFamilies, "a host's wall clock stepped against its monotonic clock within the window"},
}

// Info returns the registry's entry for code.
func Info(code string) (CodeInfo, bool) {
	for _, c := range Registry {
		if c.Code == code {
			return c, true
		}
	}
	return CodeInfo{}, false
}

// IsClock reports whether code belongs to the clock contract.
func IsClock(code string) bool { return strings.HasPrefix(code, "clock.") }

// Codes lists the distinct codes of reasons, sorted.
func Codes(reasons []Reason) []string {
	seen := map[string]bool{}
	var out []string
	for _, r := range reasons {
		if !seen[r.Code] {
			seen[r.Code] = true
			out = append(out, r.Code)
		}
	}
	sort.Strings(out)
	return out
}

// HasClock reports whether any reason is a clock reason.
func HasClock(reasons []Reason) bool {
	for _, r := range reasons {
		if IsClock(r.Code) {
			return true
		}
	}
	return false
}

// HasCode reports whether any reason has code.
func HasCode(reasons []Reason, code string) bool {
	for _, r := range reasons {
		if r.Code == code {
			return true
		}
	}
	return false
}
