// Package clocks holds clockgate's clock contract: the sample row and its
// stream, the per-leg clock record, fail-closed validation, merging legs into
// an arm, and comparing two arms.
//
// Every threshold lives in this file, as a named constant with its reason.
// Comparisons against them are exact: clock values are integer MHz, so a
// median is kept doubled (an integer) and every percentage test is done in
// integer arithmetic on basis points.
package clocks

import (
	"fmt"
	"math/big"
	"math/bits"
	"time"
)

const (
	// MinBusySamples is the floor on busy samples in a leg's window. Below it
	// a spread means nothing (n == 1 scores 0.00%); the real captures are
	// n = 61 and n = 50, and at 1 Hz a leg under 30 busy seconds is an
	// unobserved leg, not a fast one.
	MinBusySamples = 30

	// MinBusyFractionPct is the floor, in percent, on busy samples among all
	// samples of a window. The count alone does not catch dilution (30 busy
	// among 3000 idle), and an orphaned sampler accrues idle samples without
	// bound.
	MinBusyFractionPct = 50

	// MaxSpreadBasisPoints is the ceiling on (max − min) / median of one
	// window, in hundredths of a percent (5.0%). It accepts the only clean
	// capture (3.68%) with headroom and rejects the ~26% within-boot
	// disagreement it exists to catch.
	MaxSpreadBasisPoints = 500

	// MaxOffsetBasisPoints is the ceiling on |ours − baseline| / baseline of
	// the two arms' merged medians, in hundredths of a percent (1.0%). Time
	// scales with clock at most one for one, so 1.0% offset bounds the effect
	// at 1.0%, under the smallest deficit (2.97%) anyone has ranked.
	MaxOffsetBasisPoints = 100

	// TransferCoefficient is the one observed cross-boot transfer: +9.65%
	// kernel time for a 12.79% median-clock offset (n = 1). It sizes the
	// reported estimated effect and is never a gate term.
	TransferCoefficient = 0.7548

	// BenignThrottleMask holds the throttle bits that do not reprice work:
	// GpuIdle 0x1, ApplicationsClocksSetting 0x2, DisplayClockSetting 0x100.
	BenignThrottleMask uint64 = 0x1 | 0x2 | 0x100

	// DefaultMaxDuration bounds a sampler whose leg never ends: four times the
	// driver's readiness budget, a bound on an orphan, not a budget on a leg.
	DefaultMaxDuration = 7200 * time.Second

	// MaxGapIntervals bounds the largest gap between consecutive samples of
	// a window, in sampler intervals: a slow or hung query, a stalled
	// sampler or a suspended box leaves part of the leg unobserved, and
	// three intervals is two missed readings in a row.
	MaxGapIntervals = 3

	// MaxExpectClockBasisPoints bounds how far a leg's free busy median may
	// lie from a declared locked clock (--expect sm_clock_mhz), in
	// hundredths of a percent (1.0%): a clock that holds its lock sits on
	// it, and the offset bound between arms is 1.0% too (SPEC §12.2).
	MaxExpectClockBasisPoints = 100

	// MaxIntervalOfMeanGapPct bounds a record's interval_s by the time
	// between a GPU's consecutive samples, on average over its stream, in
	// percent: a sampler reads every interval or slower, never faster, so
	// an interval longer than the samples' spacing (with room for timer
	// jitter) is not the one they were read at, and would loosen coverage.
	MaxIntervalOfMeanGapPct = 110

	// MaxGapToleranceS is how far a record's window.max_gap_s may sit from
	// the stream's: the record carries it to the millisecond.
	MaxGapToleranceS = 0.0005

	// MinFreeSamples is the floor on free busy samples in a window with
	// power-managed samples, per GPU: the box's unconstrained clock is
	// judged on them, and under the busy floor a spread means nothing.
	MinFreeSamples = MinBusySamples

	// HiddenLimitPct is how close, in percent of the lowest recorded power
	// limit, some power-managed sample must draw: a cap that holds the
	// clock far under every recorded limit is a limit clockgate does not
	// see (a GH200/GB200 module budget shared with the CPU, a power
	// profile). nvidia-smi's power.draw is a one-second average, so a
	// capped second reads a few percent under the limit.
	HiddenLimitPct = 95

	// MaxThermalStartDeltaC bounds, in °C, how far apart the arms'
	// temperatures at their legs' first busy samples may be when either
	// arm is power-managed: at one limit a hotter chip leaks more power and
	// caps lower. Two GPUs of one TP=2 leg in lockstep at 700 W, 9 °C
	// apart, showed the hotter one's mean clock 0.63% lower at a 22%
	// power-managed share, about 0.35% per °C at a saturated pass's 65%,
	// so 3 °C bounds the effect near the 1.0% offset threshold (n = 1).
	MaxThermalStartDeltaC = 3

	// MeanTolerance is how far a record's free mean_mhz may sit from the
	// stream's, in MHz: the record carries it to 0.01.
	MeanTolerance = 0.005

	// SpreadTolerancePct is how far a record's spread_pct may sit from the
	// value its min, median and max give: a record rounded to two decimals
	// still reconciles.
	SpreadTolerancePct = 0.005
)

// MaxSpreadPct is MaxSpreadBasisPoints in percent, for messages and outputs.
const MaxSpreadPct = float64(MaxSpreadBasisPoints) / 100

// MaxOffsetPct is MaxOffsetBasisPoints in percent, for messages and outputs.
const MaxOffsetPct = float64(MaxOffsetBasisPoints) / 100

// StaticFields are the fields that name one machine and one driver. They must
// be constant within a window, across the legs of an arm, and across the two
// arms of a ratio, also under the cross-boot override. vendor (absent for
// NVIDIA), perf_level (the nearest thing AMD has to an applications clock)
// and memory_partition (NPS1, NPS4) are an AMD GPU's: an NVIDIA arm has none,
// so an AMD arm against an NVIDIA arm is a hardware mismatch.
var StaticFields = []string{"gpu_name", "gpu_uuid", "driver_version", "clocks_max_sm_mhz", "clocks_applications_graphics_mhz",
	"vendor", "perf_level", "memory_partition"}

// PowerStaticFields join StaticFields wherever a stream records them
// (SPEC §10.1): a window, an arm's legs and the two arms of a ratio must
// share one power limit, and an arm that records one against an arm that
// does not is a mismatch too.
var PowerStaticFields = []string{"enforced_power_limit_w", "module_enforced_power_limit_w"}

// OptionalStaticFields join StaticFields wherever a stream records them
// (SPEC §10.1, "more static fields where the driver gives them"): the
// GPU's VBIOS version, and what its energy counter measures (SPEC §11.3).
// Within a window, across an arm's legs and across the arms they must be
// the same, and a stream that records one against a stream that does not
// is a mismatch; two streams that both lack it agree.
var OptionalStaticFields = []string{"vbios_version", "energy_scope"}

// throttleBitNames names the throttle bits nvidia-smi documents.
var throttleBitNames = map[uint64]string{
	0x1:   "GpuIdle",
	0x2:   "ApplicationsClocksSetting",
	0x4:   "SwPowerCap",
	0x8:   "HwSlowdown",
	0x10:  "SyncBoost",
	0x20:  "SwThermal",
	0x40:  "HwThermal",
	0x80:  "HwPowerBrake",
	0x100: "DisplayClockSetting",
	0x200: "BoardLimit",
	0x400: "Reliability",
}

// AMDThrottleBits are the bits clockgate derives for an AMD GPU from
// amd-smi's violation accumulators (metric --violation, or -T/--throttle on
// ROCm 6.x), a bit set in a reading when its cause's accumulator advanced
// since the reading before; amdBitNames says which cause each is.
const AMDThrottleBits = 0x4 | 0x8 | 0x40

var amdBitNames = map[uint64]string{
	0x4:  "SwPowerCap (power: PPT, PVIOL)",
	0x8:  "HwSlowdown (PROCHOT)",
	0x40: "HwThermal (thermal: socket, VR or HBM, TVIOL)",
}

// ThrottleBitName names one throttle bit, or says it is unknown.
func ThrottleBitName(bit uint64) string {
	if n, ok := throttleBitNames[bit]; ok {
		return n
	}
	return "unknown"
}

// Contract is the set of constants in force, as written into outputs.
type Contract struct {
	BenignThrottleMask  string   `json:"benign_throttle_mask"`
	HiddenLimitPct      int      `json:"hidden_limit_pct"`
	MaxOffsetPct        float64  `json:"max_offset_pct"`
	MaxSpreadPct        float64  `json:"max_spread_pct"`
	MaxThermalStartC    int      `json:"max_thermal_start_delta_c"`
	MinBusyFractionPct  int      `json:"min_busy_fraction_pct"`
	MinBusySamples      int      `json:"min_busy_samples"`
	MinFreeSamples      int      `json:"min_free_samples"`
	OptionalStatic      []string `json:"optional_static_fields"`
	PowerManagedBit     string   `json:"power_managed_bit"`
	PowerStaticFields   []string `json:"power_static_fields"`
	StaticFields        []string `json:"static_fields"`
	TransferCoefficient float64  `json:"transfer_coefficient"`
}

// InForce returns the contract's constants.
func InForce() Contract {
	return Contract{
		BenignThrottleMask:  FormatThrottle(BenignThrottleMask),
		HiddenLimitPct:      HiddenLimitPct,
		MaxOffsetPct:        MaxOffsetPct,
		MaxSpreadPct:        MaxSpreadPct,
		MaxThermalStartC:    MaxThermalStartDeltaC,
		MinBusyFractionPct:  MinBusyFractionPct,
		MinBusySamples:      MinBusySamples,
		MinFreeSamples:      MinFreeSamples,
		OptionalStatic:      append([]string(nil), OptionalStaticFields...),
		PowerManagedBit:     FormatThrottle(SwPowerCapBit),
		PowerStaticFields:   append([]string(nil), PowerStaticFields...),
		StaticFields:        append([]string(nil), StaticFields...),
		TransferCoefficient: TransferCoefficient,
	}
}

// FormatThrottle prints a throttle bit set the way nvidia-smi does.
func FormatThrottle(bits uint64) string { return fmt.Sprintf("0x%016x", bits) }

// spreadWithin reports whether (max − min) / median ≤ MaxSpreadBasisPoints,
// exactly; median2 is twice the median.
func spreadWithin(min, max, median2 int64) bool {
	return (max-min)*2*10000 <= MaxSpreadBasisPoints*median2
}

// offsetWithin reports whether |ours − base| / base ≤ MaxOffsetBasisPoints,
// exactly; both are doubled medians.
func offsetWithin(ours2, base2 int64) bool {
	d := ours2 - base2
	if d < 0 {
		d = -d
	}
	return d*10000 <= MaxOffsetBasisPoints*base2
}

// meanOffsetWithin reports whether |ours − base| / base ≤
// MaxOffsetBasisPoints of the means sumO/nO and sumB/nB, exactly: in
// integers, wide enough that no sum of clocks overflows.
func meanOffsetWithin(sumO Sum, nO int64, sumB Sum, nB int64) bool {
	d := new(big.Int).Sub(new(big.Int).Mul(sumO.Big(), big.NewInt(nB)), new(big.Int).Mul(sumB.Big(), big.NewInt(nO)))
	d.Abs(d).Mul(d, big.NewInt(10000))
	limit := new(big.Int).Mul(sumB.Big(), big.NewInt(nO))
	limit.Mul(limit, big.NewInt(MaxOffsetBasisPoints))
	return d.Cmp(limit) <= 0
}

// busyFractionWithin reports whether busy / (busy + idle) ≥ MinBusyFractionPct, exactly.
func busyFractionWithin(busy, idle int64) bool {
	return busy*100 >= MinBusyFractionPct*(busy+idle)
}

// spreadPct is (max − min) / median × 100; median2 is twice the median.
func spreadPct(min, max, median2 int64) float64 {
	if median2 == 0 {
		return 0
	}
	return float64(max-min) * 200 / float64(median2)
}

// Sum adds up clock values in 128 bits: no count of samples, however
// large, overflows it.
type Sum struct{ hi, lo uint64 }

// Add adds x.
func (s *Sum) Add(x uint64) {
	var carry uint64
	s.lo, carry = bits.Add64(s.lo, x, 0)
	s.hi += carry
}

// AddSum adds another sum.
func (s *Sum) AddSum(o Sum) {
	var carry uint64
	s.lo, carry = bits.Add64(s.lo, o.lo, 0)
	s.hi += o.hi + carry
}

// Big is the sum as a big.Int.
func (s Sum) Big() *big.Int {
	b := new(big.Int).SetUint64(s.hi)
	return b.Lsh(b, 64).Or(b, new(big.Int).SetUint64(s.lo))
}

// Float is the sum as a float64.
func (s Sum) Float() float64 { return float64(s.hi)*(1<<64) + float64(s.lo) }

// The host's contract (SPEC §12.2).
const (
	// HostContentionBasisPoints is the ceiling on own_wait_share over busy
	// readings, in hundredths of a percent (5%): the leg's own threads
	// waited for a CPU more than 1 part in 20 of their running time; a
	// quiet box is under 1%.
	HostContentionBasisPoints = 500

	// HostMinOwnCPUSeconds is the CPU time, in CPU-seconds, the own threads
	// must run over the busy readings before their wait share is judged: a
	// sleep under record has no share to judge.
	HostMinOwnCPUSeconds = 1.0

	// HostStealBasisPoints is the ceiling on steal_share over the window,
	// in hundredths of a percent (2%): above it a hypervisor gave the
	// leg's CPUs to someone else often enough to move a host-bound leg.
	HostStealBasisPoints = 200

	// HostMemoryBasisPoints is how far, in hundredths of a percent (1%),
	// the arms' memory_total_mib may differ: the kernel reserves a little
	// more or less across boots of one box, never a DIMM's worth.
	HostMemoryBasisPoints = 100

	// HostCPUOffsetBasisPoints is the ceiling, in hundredths of a percent
	// (5%), on how far the arms' busy median cpu_mhz may differ: a host
	// path (tokenizer, scheduler, sampling) slows with the CPU clock.
	HostCPUOffsetBasisPoints = 500
)

// One leg across several hosts (SPEC §12.3).
const (
	// MaxHostWindowIntervals is how many intervals a host's window may
	// start after, or end before, the leg's common window: a sampler's
	// start and stop under srun reach every node within a reading or two.
	MaxHostWindowIntervals = 3

	// MaxWallStepMS is the most, in ms, a host's wall clock may move
	// against CLOCK_BOOTTIME between two readings: a time daemon slews
	// far slower, so more is a step that moves point windows.
	MaxWallStepMS = 50
)
