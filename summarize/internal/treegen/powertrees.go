package treegen

import (
	"math"
	"math/rand/v2"

	"github.com/clockgate/clockgate/clocks"
)

// pmProfile is a power-managed GPU under serving load (SPEC §10.1), as
// public 1 Hz captures of vllm bench serve on H100 show it: decode at the
// free clock, prefill bursts pulling the clock down at the enforced limit
// for a few seconds at a time.
type pmProfile struct {
	// limitW is the enforced power limit on every row.
	limitW float64
	// capEvery and capRun lay out the bursts: capRun capped busy samples
	// in every capEvery.
	capEvery, capRun int
	// cappedLo and cappedHi bound a capped sample's clock, in MHz.
	cappedLo, cappedHi int
	// bits sets SwPowerCap on capped samples; counters writes the clock
	// event counters, sw_power_cap advancing across each capped sample.
	bits, counters bool
	// freeW is the draw of a free busy sample.
	freeW float64
	// thermalAt, when not 0, is the busy sample before which
	// hw_thermal_slowdown accrues 350 ms with no bit shown.
	thermalAt int
	// startC, when not 0, is the temperature of the leg's first busy
	// sample, rising 0.5 °C a busy second to 70.
	startC float64
}

// pmState is the counters as a leg's rows advance them.
type pmState struct {
	c       clocks.Counters
	started bool
	temp    float64
}

// apply makes s, the leg's next row (busy sample k when busy), a power-
// managed GPU's, given the draw and temperature the plain generator gave
// it: it returns the row's power draw and temperature.
func (p *pmProfile) apply(s *clocks.Sample, st *pmState, busy bool, k int, power, temp float64, rng *rand.Rand) (float64, float64) {
	s.EnforcedPowerLimitW = ptrf(p.limitW)
	if p.startC != 0 {
		if !st.started {
			st.temp = p.startC
		}
		if busy {
			if st.started {
				st.temp = math.Min(st.temp+0.5, 70)
			}
			st.started = true
		}
		temp = st.temp
	}
	if busy {
		if p.freeW != 0 {
			power = p.freeW * (0.95 + 0.1*rng.Float64())
		}
		if k%p.capEvery < p.capRun {
			s.SMClockMHz = p.cappedLo + rng.IntN(p.cappedHi-p.cappedLo+1)
			power = p.limitW - 2*rng.Float64()
			st.c.SwPowerCap += 400000 + int64(rng.IntN(500000))
			if p.bits {
				s.ThrottleReasonsActive = clocks.FormatThrottle(clocks.SwPowerCapBit)
			}
		}
		if p.thermalAt != 0 && k == p.thermalAt {
			st.c.HwThermal += 350000
		}
	}
	if p.counters {
		c := st.c
		s.EventCountersUS = &c
	}
	return power, temp
}

func ptrf(x float64) *float64 { return &x }

// h100pm is the H100 of the power-managed trees: 700 W enforced.
var h100pm = gpu{name: "NVIDIA H100 80GB HBM3", uuid: "GPU-3c9e71a4-0f2b-4d68-a5e1-9b7d2c4f8a03", driver: "590.48.01",
	maxSM: 1980, apps: nil, throttleField: "clocks_event_reasons.active",
	idleMHz: 345, busyPowerW: 560.0, idlePowerW: 71.8}

// vllmCopy is vllm again under another name: an A/A comparison.
var vllmCopy = engine{"vllm-copy", 1.0, 1.0}

// serving is the power-managed serving pattern: free at 1965-1980 MHz,
// capRun of every 10 busy samples capped at 700 W between 1200 and 1500
// MHz, with bits and counters.
func serving(capRun int) *pmProfile {
	return &pmProfile{limitW: 700, capEvery: 10, capRun: capRun, cappedLo: 1200, cappedHi: 1500, bits: true, counters: true, freeW: 560}
}

// free is the clock profile of the free samples: the top boost clock with
// an occasional step below it.
var free = profile{min: 1965, med: 1980, max: 1980}

func pmLeg(p *pmProfile, clock profile) func(*leg) {
	return func(l *leg) {
		q := *p
		l.pm, l.clock = &q, clock
	}
}

var powerScenarios = []Scenario{
	{Name: "power-managed",
		About: "H100s at a 700 W enforced limit under serving load, every row with the limit, SwPowerCap bits and the clock event counters: " +
			"decode at 1965-1980 MHz (free), prefill bursts capped at 1200-1500 MHz; llama-3.1-8b-instruct: fastengine capped in 5 of every 10 " +
			"busy seconds, vllm in 3 (whole-window spreads of 39%, which §1-§9 refused as clock.spread and clock.throttle); qwen2.5-7b-instruct: " +
			"vllm against an identical copy of itself (vllm-copy, the same pattern). Judged on the free samples, every ratio ESTABLISHED; the " +
			"power-managed shares are reported, never gated",
		build: func(t *tree) {
			t.arm(llama, fastengine, 2, h100pm, bootH1, pmLeg(serving(5), free))
			t.arm(llama, vllm, 2, h100pm, bootH1, pmLeg(serving(3), free))
			t.arm(qwen, vllmCopy, 2, h100pm, bootH1, pmLeg(serving(3), free))
			t.arm(qwen, vllm, 2, h100pm, bootH1, pmLeg(serving(3), free))
		}},
	{Name: "power-free-offset",
		About: "both arms power-managed at 700 W in the same pattern, but fastengine's free clock stands at 1875-1890 MHz against vllm's " +
			"1965-1980 (4.55% apart): the box gave fastengine another clock where no cap held it, so clock.offset on the free median and mean",
		build: func(t *tree) {
			t.arm(llama, fastengine, 2, h100pm, bootH1, pmLeg(serving(3), profile{min: 1875, med: 1890, max: 1890}))
			t.arm(llama, vllm, 2, h100pm, bootH1, pmLeg(serving(3), free))
		}},
	{Name: "power-limits",
		About: "fastengine's legs at a 600 W enforced limit, vllm's at 700 W, one H100, one boot, one free clock: the limit is a static field, " +
			"so clock.hardware_mismatch names enforced_power_limit_w",
		build: func(t *tree) {
			p600 := serving(3)
			p600.limitW = 600
			t.arm(llama, fastengine, 2, h100pm, bootH1, pmLeg(p600, free))
			t.arm(llama, vllm, 2, h100pm, bootH1, pmLeg(serving(3), free))
		}},
	{Name: "power-few-free",
		About: "vllm capped in 9 of every 10 busy seconds: its legs' free busy samples fall under the floor of 30 (clock.free_samples, " +
			"sample faster with --interval 250ms), though their busy samples clear it",
		build: func(t *tree) {
			t.arm(llama, fastengine, 2, h100pm, bootH1, pmLeg(serving(3), free))
			t.arm(llama, vllm, 2, h100pm, bootH1, pmLeg(serving(9), free))
		}},
	{Name: "power-thermal-counter",
		About: "fastengine r2's hw_thermal_slowdown counter advances 350 ms between two samples whose bits never show HwThermal: " +
			"clock.throttle on that leg, naming the counter, the time and the lines",
		build: func(t *tree) {
			t.arm(llama, fastengine, 2, h100pm, bootH1, func(l *leg) {
				pmLeg(serving(3), free)(l)
				if l.run == 2 {
					l.pm.thermalAt = 41
				}
			})
			t.arm(llama, vllm, 2, h100pm, bootH1, pmLeg(serving(3), free))
		}},
	{Name: "power-bits-only",
		About: "streams with the limit and SwPowerCap bits but no event counters (a driver before 590): vllm's free samples hold unflagged " +
			"dips to 1605 MHz, which bits read a moment apart from the clock cannot tell from a cap: clock.spread over free samples, whose " +
			"message says to record the counters",
		build: func(t *tree) {
			bits := serving(3)
			bits.counters = false
			t.arm(llama, fastengine, 2, h100pm, bootH1, pmLeg(bits, free))
			t.arm(llama, vllm, 2, h100pm, bootH1, pmLeg(bits, profile{min: 1605, med: 1980, max: 1980}))
		}},
	{Name: "tp2-power-managed",
		About: "llama-3.1-70b-instruct tensor parallel on GPUs 0-1 of the 8 × H100 box (TP=2), every row with the 700 W limit, bits and counters: " +
			"both GPUs of a step capped together, fastengine in 4 of every 10 busy seconds, vllm in 3; each GPU judged on its free samples, both " +
			"ratios ESTABLISHED, the per-GPU table giving each position's power-managed share",
		build: func(t *tree) {
			// Twice the grid's prompts, so that each GPU keeps 30 free samples.
			t.tpArm(llama70, fastengine, 2, []int{0, 1}, func(l *leg) { l.pm = serving(4); l.pm.freeW = 0; l.busy = derivedBusy(l, 2) })
			t.tpArm(llama70, vllm, 2, []int{0, 1}, func(l *leg) { l.pm = serving(3); l.pm.freeW = 0; l.busy = derivedBusy(l, 2) })
		}},
	{Name: "power-thermal-start",
		About: "both arms power-managed at 700 W in one pattern; fastengine's legs start at 58 °C, vllm's at 64 °C (a GPU still warm from " +
			"the leg before): 6 °C apart > 3 °C, clock.thermal_start on both ratios, since at one limit a hotter chip caps lower",
		build: func(t *tree) {
			hot := serving(3)
			hot.startC = 64
			cool := serving(3)
			cool.startC = 58
			t.arm(llama, fastengine, 2, h100pm, bootH1, pmLeg(cool, free))
			t.arm(llama, vllm, 2, h100pm, bootH1, pmLeg(hot, free))
		}},
}
