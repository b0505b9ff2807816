package clocks

import (
	"encoding/json"
	"strings"
	"testing"
)

// pm describes a power-managed H100 window, as real 1 Hz captures of
// vllm bench serve show it: decode at the top boost clock (free), prefill
// bursts at the power limit pulling the clock down (power-managed).
type pm struct {
	// free and capped are the busy clocks, in MHz, laid out as a run of
	// free samples then a run of capped ones, repeatedly (capped runs of
	// burst samples).
	free, capped []int
	burst        int
	// limitW is the enforced power limit; 0 records none (an old stream).
	limitW float64
	// bits sets SwPowerCap on capped samples; counters carries
	// event_counters_us, advancing sw_power_cap on capped samples.
	bits, counters bool
	// freeW and cappedW are the power draws; tempC the temperature.
	freeW, cappedW, tempC float64
}

func (p pm) window(boot string) []*Sample {
	if p.burst == 0 {
		p.burst = 3
	}
	if p.freeW == 0 {
		p.freeW = 520
	}
	if p.cappedW == 0 {
		p.cappedW = 699.5
	}
	if p.tempC == 0 {
		p.tempC = 60
	}
	var out []*Sample
	var sw int64
	f, c := 0, 0
	add := func(mhz int, capped bool) {
		s := h100(len(out), boot, mhz, 95)
		if p.limitW > 0 {
			s.EnforcedPowerLimitW = ptr(p.limitW)
		}
		s.PowerDrawW, s.TemperatureGPUC = ptr(p.freeW), ptr(p.tempC)
		if capped {
			s.PowerDrawW = ptr(p.cappedW)
			sw += 600000
			if p.bits {
				s.ThrottleReasonsActive = "0x0000000000000004"
			}
		}
		if p.counters {
			s.EventCountersUS = &Counters{SwPowerCap: sw, SwThermal: 1200}
		}
		out = append(out, s)
	}
	for f < len(p.free) || c < len(p.capped) {
		for k := 0; k < p.burst*2 && f < len(p.free); k++ {
			add(p.free[f], false)
			f++
		}
		for k := 0; k < p.burst && c < len(p.capped); k++ {
			add(p.capped[c], true)
			c++
		}
	}
	return out
}

// serving is a power-managed serving window: 60 free samples at
// 1965-1980 MHz and 30 capped ones at 1200-1500 MHz (33% power-managed,
// a whole-window spread of 39%).
func serving() pm {
	return pm{free: repeat([]int{1965, 1980, 1980}, 20), capped: repeat([]int{1410, 1200, 1500}, 10),
		limitW: 700, bits: true, counters: true}
}

func TestPowerManagedWindowIsJudgedOnFreeSamples(t *testing.T) {
	l := legOf(t, "r1", serving().window(boot13), nil)
	wantCodes(t, l.Reasons)
	g := l.Fold.GPUs[0]
	if n := g.PowerManaged(); n != 30 {
		t.Fatalf("power-managed %d, want 30", n)
	}
	rec := l.Record.GPUs[0]
	if fs := rec.FreeClockMHz; fs == nil || fs.N != 60 || *fs.Min != 1965 || *fs.Max != 1980 || *fs.Median != 1980 || *fs.MeanMHz != 1975 {
		t.Fatalf("free_clock_mhz %+v", rec.FreeClockMHz)
	}
	if *rec.PowerManagedSamples != 30 || *rec.EnforcedPowerLimitW != 700 || *rec.SMClockMHz.Min != 1200 {
		t.Fatalf("record %+v", rec)
	}
}

// The same window in a stream that records no limit keeps its old
// verdict: SwPowerCap is clock.throttle, the whole window's spread counts.
func TestWithoutALimitTheOldVerdictStands(t *testing.T) {
	p := serving()
	p.limitW, p.counters = 0, false
	l := legOf(t, "r1", p.window(boot13), nil)
	wantCodes(t, l.Reasons, CodeSpread, CodeThrottle)
	wantReason(t, l.Reasons, CodeSpread, "spread 39.69% > 5.0%: min 1200, median 1965, max 1980 MHz, n=90")
	wantReason(t, l.Reasons, CodeThrottle, "0x0000000000000004 SwPowerCap")
	if l.Record.GPUs[0].FreeClockMHz != nil {
		t.Fatal("a record without a limit says a free clock")
	}
}

// An A/A comparison of one power-managed pattern is ESTABLISHED; the
// side reports the power management and gates the free clock.
func TestPowerManagedAAComparisonEstablished(t *testing.T) {
	p := serving()
	ours := Merge("fastserve", []*Leg{legOf(t, "r1", p.window(boot13), nil), legOf(t, "r2", p.window(boot13), nil)}, false)
	base := Merge("vllm", []*Leg{legOf(t, "r1", p.window(boot13), nil)}, false)
	b := Compare(ours, base, false)
	wantCodes(t, b.Reasons)
	if !b.Established {
		t.Fatal("not established")
	}
	s := b.Ours
	if *s.MedianMHz != 1980 || *s.MeanMHz != 1975 || *s.SpreadPct != 0.76 || *s.BusyMedianMHz != 1965 ||
		*s.PowerManagedPct != 33.33 || *s.PowerManagedMedianMHz != 1410 || *s.EnforcedPowerLimitW != 700 || *s.TemperatureC != 60 ||
		*s.FreeSamples != 120 || s.BusySamples != 180 {
		j, _ := json.Marshal(s)
		t.Fatalf("side %s", j)
	}
}

// Free clocks 4.5% apart while both arms are power-managed: the box's
// state differs, and the free offset says so.
func TestFreeOffsetWhileBothArmsPowerManaged(t *testing.T) {
	p := serving()
	q := serving()
	q.free = repeat([]int{1875, 1890, 1890}, 20) // 1980 × 0.955 ≈ 1891
	b := Compare(arm(t, "fastserve", false, q.window(boot13)), arm(t, "vllm", false, p.window(boot13)), false)
	wantCodes(t, b.Reasons, CodeOffset)
	wantReason(t, b.Reasons, CodeOffset, "free median offset 4.55% > 1.0%: fastserve 1890 MHz, vllm 1980 MHz")
}

// The offset is exact at its bound on free medians.
func TestFreeOffsetAtItsBoundary(t *testing.T) {
	for _, tc := range []struct {
		mhz  int
		pass bool
	}{{1961, true}, {1960, false}} { // 1% of 1980 is 19.8 MHz
		p, q := serving(), serving()
		p.free, q.free = flat(1980, 60), flat(tc.mhz, 60)
		b := Compare(arm(t, "fastserve", false, q.window(boot13)), arm(t, "vllm", false, p.window(boot13)), false)
		if got := !HasCode(b.Reasons, CodeOffset); got != tc.pass {
			t.Fatalf("free median %d against 1980: pass %v, want %v (%+v)", tc.mhz, got, tc.pass, b.Reasons)
		}
	}
}

func TestPowerLimitsDifferAcrossArms(t *testing.T) {
	p, q := serving(), serving()
	q.limitW = 600
	b := Compare(arm(t, "fastserve", false, q.window(boot13)), arm(t, "vllm", false, p.window(boot13)), false)
	wantCodes(t, b.Reasons, CodeHardwareMismatch)
	wantReason(t, b.Reasons, CodeHardwareMismatch, "enforced_power_limit_w: fastserve 600 W, vllm 700 W")
	// An arm that records a limit against one that does not.
	q.limitW = 0
	b = Compare(arm(t, "fastserve", false, q.window(boot13)), arm(t, "vllm", false, p.window(boot13)), false)
	wantReason(t, b.Reasons, CodeHardwareMismatch, "enforced_power_limit_w: fastserve absent, vllm 700 W")
}

func TestPowerLimitDiffersAcrossLegs(t *testing.T) {
	p, q := serving(), serving()
	q.limitW = 650
	a := arm(t, "vllm", false, p.window(boot13), q.window(boot13))
	wantReason(t, a.Reasons, CodeStaticMismatch, "enforced_power_limit_w: 650 W (r2), 700 W (r1)")
}

func TestPowerLimitChangesWithinWindow(t *testing.T) {
	ss := serving().window(boot13)
	ss[40].EnforcedPowerLimitW = ptr(650.0)
	l := legOf(t, "r1", ss, nil)
	wantCodes(t, l.Reasons, CodeStaticDrift)
	wantReason(t, l.Reasons, CodeStaticDrift, "enforced_power_limit_w changed at line 41: 700 W, then 650 W")
	ss = serving().window(boot13)
	ss[12].ModuleEnforcedPowerLimitW = ptr(900.0)
	wantReason(t, legOf(t, "r1", ss, nil).Reasons, CodeStaticDrift, "module_enforced_power_limit_w changed at line 13: absent, then 900 W")
}

// The free floor is exact: 30 free busy samples are judged, 29 are too few.
func TestFreeSamplesFloor(t *testing.T) {
	for _, n := range []int{29, 30} {
		p := serving()
		p.free = flat(1980, n)
		l := legOf(t, "r1", p.window(boot13), nil)
		if n == 29 {
			wantCodes(t, l.Reasons, CodeFreeSamples)
			wantReason(t, l.Reasons, CodeFreeSamples, "free busy samples 29 < 30: 30 of 59 busy samples were power-managed (at 700 W)", "--interval 250ms")
		} else {
			wantCodes(t, l.Reasons)
		}
	}
}

// A spread among free samples still counts: a box in another state shows
// there.
func TestSpreadOverFreeSamples(t *testing.T) {
	p := serving()
	p.free = repeat([]int{1860, 1980, 1980, 1980, 1980, 1980}, 10) // 6.06%
	l := legOf(t, "r1", p.window(boot13), nil)
	wantCodes(t, l.Reasons, CodeSpread)
	wantReason(t, l.Reasons, CodeSpread, "spread over free samples 6.06% > 5.0%: min 1860, median 1980, max 1980 MHz, n=60 free of 90 busy (30 power-managed, at 700 W, excluded)")
	if strings.Contains(l.Reasons[0].Message, "event counters") {
		t.Fatal("a stream with counters is told to record them")
	}
	// At the bound it passes: 1881 is 5.0% under 1980.
	p.free = repeat([]int{1881, 1980, 1980, 1980, 1980, 1980}, 10)
	wantCodes(t, legOf(t, "r1", p.window(boot13), nil).Reasons)
}

// A bits-only stream (no counters): an unflagged dip among the free
// samples is still clock.spread, and the message says to record the
// counters.
func TestBitsOnlyStreamWithAnUnflaggedDip(t *testing.T) {
	p := serving()
	p.counters = false
	p.free = append(flat(1980, 55), 1605, 1605, 1980, 1980, 1980)
	l := legOf(t, "r1", p.window(boot13), nil)
	wantCodes(t, l.Reasons, CodeSpread)
	wantReason(t, l.Reasons, CodeSpread, "spread over free samples 18.94% > 5.0%", "record clocks_event_reasons_counters")
}

// The counters settle what bits miss: a dip whose bits read clear, but
// across which sw_power_cap advanced, is power-managed.
func TestCountersClassifyABitlessDip(t *testing.T) {
	p := serving()
	p.bits = false
	l := legOf(t, "r1", p.window(boot13), nil)
	wantCodes(t, l.Reasons)
	if n := l.Fold.GPUs[0].PowerManaged(); n != 30 {
		t.Fatalf("power-managed %d, want 30", n)
	}
}

// sw_power_cap advancing after a reading makes it power-managed only when
// its clock is below clocks.max.sm: a reading at the ceiling was not
// lowered, and a cap that begins after a reading cannot have lowered it.
func TestAdvanceAfterAReadingAtTheCeiling(t *testing.T) {
	mk := func(before int) []*Sample {
		var ss []*Sample
		sw := int64(0)
		for i := 0; i < 40; i++ {
			mhz := 1980
			if i == 20 {
				mhz = before
			}
			if i == 21 {
				sw += 500000 // advanced between the readings at lines 21 and 22
			}
			s := h100(i, boot13, mhz, 95)
			s.EnforcedPowerLimitW, s.PowerDrawW = ptr(700.0), ptr(699.0)
			s.EventCountersUS = &Counters{SwPowerCap: sw}
			ss = append(ss, s)
		}
		return ss
	}
	// Line 21 at 1980 (the ceiling): free; line 22, advanced since line 21: power-managed.
	if g := legOf(t, "r1", mk(1980), nil).Fold.GPUs[0]; g.PowerManaged() != 1 {
		t.Fatalf("at the ceiling: %d power-managed, want 1 (line 22 only)", g.PowerManaged())
	}
	// Line 21 at 1500: lowered by a cap that ran on to line 22.
	g := legOf(t, "r1", mk(1500), nil).Fold.GPUs[0]
	if g.PowerManaged() != 2 || g.Managed.PMHist[0] != (Count{1500, 1}) {
		t.Fatalf("below the ceiling: %d power-managed %v, want 2 with 1500", g.PowerManaged(), g.Managed.PMHist)
	}
}

// A thermal counter that advanced between two samples with no bit seen is
// clock.throttle, naming the time and the lines.
func TestThermalCounterWithoutABit(t *testing.T) {
	ss := serving().window(boot13)
	for _, s := range ss[50:] {
		s.EventCountersUS.HwThermal = 350000
	}
	l := legOf(t, "r1", ss, nil)
	wantCodes(t, l.Reasons, CodeThrottle)
	wantReason(t, l.Reasons, CodeThrottle,
		"hw_thermal_slowdown (HwThermal) accrued 350000 µs (0.350 s), first between lines 50 and 51, last at line 51, though no busy sample's bits showed it")
	// Without a limit, sw_power_cap advancing is a throttle too.
	p := serving()
	p.limitW, p.bits = 0, false
	wantReason(t, legOf(t, "r1", p.window(boot13), nil).Reasons, CodeThrottle, "sw_power_cap (SwPowerCap) accrued 18000000 µs")
}

func TestCounterGoingBackwardsIsDrift(t *testing.T) {
	ss := serving().window(boot13)
	ss[70].EventCountersUS.SwThermal = 10
	l := legOf(t, "r1", ss, nil)
	wantReason(t, l.Reasons, CodeStaticDrift, "event counter sw_thermal_slowdown went backwards at line 71: 1200 µs at line 70, then 10 µs (the driver was reloaded)")
	ss = serving().window(boot13)
	ss[33].EventCountersUS = nil
	wantReason(t, legOf(t, "r1", ss, nil).Reasons, CodeStaticDrift, "event_counters_us absent at line 34")
}

// A hidden limit: capped, yet never near any recorded limit. The bound
// is exact: 665 W is 95% of 700 W.
func TestHiddenLimit(t *testing.T) {
	for _, tc := range []struct {
		w    float64
		pass bool
	}{{665, true}, {664.99, false}} {
		p := serving()
		p.cappedW = tc.w
		l := legOf(t, "r1", p.window(boot13), nil)
		if tc.pass {
			wantCodes(t, l.Reasons)
			continue
		}
		wantCodes(t, l.Reasons, CodeThrottle)
		wantReason(t, l.Reasons, CodeThrottle, "power-managed at most 664.99 W, under 95% of every recorded limit (700 W)")
	}
	// The module limit counts: a 600 W module budget under a 700 W GPU limit.
	ss := serving().window(boot13)
	for _, s := range ss {
		s.ModuleEnforcedPowerLimitW = ptr(600.0)
		if *s.PowerDrawW > 600 {
			s.PowerDrawW = ptr(598.0)
		}
	}
	wantCodes(t, legOf(t, "r1", ss, nil).Reasons)
	// No power on the capped samples: it cannot be ruled out.
	ss = serving().window(boot13)
	for _, s := range ss {
		s.PowerDrawW = nil
	}
	wantReason(t, legOf(t, "r1", ss, nil).Reasons, CodeThrottle, "30 power-managed samples carry no power_draw_w")
}

// Arms that start their legs 3 °C apart pass; 3.5 °C is over the bound.
func TestThermalStart(t *testing.T) {
	for _, tc := range []struct {
		c    float64
		pass bool
	}{{63, true}, {63.5, false}} {
		p, q := serving(), serving()
		q.tempC = tc.c
		b := Compare(arm(t, "fastserve", false, q.window(boot13)), arm(t, "vllm", false, p.window(boot13)), false)
		if tc.pass {
			wantCodes(t, b.Reasons)
			continue
		}
		wantCodes(t, b.Reasons, CodeThermalStart)
		wantReason(t, b.Reasons, CodeThermalStart, "fastserve 63.5 °C, vllm 60 °C (median over 1 and 1 legs): 3.5 °C apart > 3 °C")
	}
}

// The staircase runs on free samples: legs whose free clocks stand 6%
// apart are refused, however alike their capped samples.
func TestStaircaseOnFreeSamples(t *testing.T) {
	p, q := serving(), serving()
	// Each run's last free sample, at 1860 < clocks.max.sm just before a
	// cap began, is power-managed: 50 of q's 60 stay free.
	q.free = flat(1860, 60)
	a := arm(t, "vllm", false, p.window(boot13), q.window(boot13))
	wantCodes(t, a.Reasons, CodeStaircase)
	wantReason(t, a.Reasons, CodeStaircase, "merged free samples' spread 6.11% > 5.0%: min 1860, median 1965, max 1980 MHz over 2 legs, n=110")
}

// The record's power fields are the stream's, or the leg is refused.
func TestPowerRecordReconciles(t *testing.T) {
	ss := serving().window(boot13)
	for _, tc := range []struct {
		edit func(*Record)
		want string
	}{
		{func(r *Record) { *r.GPUs[0].FreeClockMHz.Median = 1965 }, "free_clock_mhz: record {n 60, min 1965, median 1965"},
		{func(r *Record) { *r.GPUs[0].FreeClockMHz.MeanMHz = 1975.01 }, "free_clock_mhz: record"},
		{func(r *Record) { *r.GPUs[0].PowerManagedSamples = 31; r.GPUs[0].FreeClockMHz.N = 59 }, "power_managed_samples: record 31, stream 30"},
		{func(r *Record) { r.GPUs[0].EnforcedPowerLimitW = ptr(650.0) }, "enforced_power_limit_w: record 650 W, stream 700 W"},
	} {
		l := legOf(t, "r1", ss, tc.edit)
		wantCodes(t, l.Reasons, CodeStreamMismatch)
		wantReason(t, l.Reasons, CodeStreamMismatch, tc.want)
	}
	// Within the tolerance, the mean reconciles.
	wantCodes(t, legOf(t, "r1", ss, func(r *Record) { *r.GPUs[0].FreeClockMHz.MeanMHz = 1975.005 }).Reasons)
}

func TestPowerRecordFieldsValidated(t *testing.T) {
	good := string(recordJSON(t, recordOf(t, serving().window(boot13), StopPIDExit)))
	for _, tc := range []struct{ from, to, want string }{
		{`"enforced_power_limit_w":700`, `"enforced_power_limit_w":0`, "enforced_power_limit_w: want a positive number of W, found number 0"},
		{`,"free_clock_mhz":{`, `,"x":{`, "free_clock_mhz: missing"},
		{`"power_managed_samples":30`, `"power_managed_samples":31`, "free_clock_mhz.n: 60 free + power_managed_samples 31 = 91, but sm_clock_mhz.n is 90"},
		{`"mean_mhz":1975`, `"mean_mhz":1990`, "mean_mhz: want min ≤ mean_mhz ≤ max"},
		{`"power_managed_samples":30`, `"power_managed_samples":-1`, "power_managed_samples: want an integer ≥ 0"},
	} {
		bad := strings.Replace(good, tc.from, tc.to, 1)
		if bad == good {
			t.Fatalf("%q not in %s", tc.from, good)
		}
		_, err := ParseRecord([]byte(bad))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Fatalf("%s: error %v, want %q", tc.to, err, tc.want)
		}
	}
	noLimit := strings.Replace(good, `"enforced_power_limit_w":700,`, ``, 1)
	if _, err := ParseRecord([]byte(noLimit)); err == nil || !strings.Contains(err.Error(), "present without enforced_power_limit_w") {
		t.Fatalf("free clock without a limit: %v", err)
	}
}

// On a tensor-parallel leg the GPUs' free medians are compared: each
// GPU's own caps are its draw, not the box.
func TestGPUSkewOnFreeMedians(t *testing.T) {
	var ss []*Sample
	w0, w1 := serving().window(boot13), serving().window(boot13)
	for i := range w0 {
		w1[i].GPUIndex, w1[i].GPUUUID = 1, "GPU-second"
		if i%3 == 0 {
			// GPU 1 capped more often: its busy median drops, its free one does not.
			w1[i].SMClockMHz, w1[i].ThrottleReasonsActive = 1300, "0x0000000000000004"
		}
		ss = append(ss, w0[i], w1[i])
	}
	l := legOf(t, "r1", ss, nil)
	wantNoCode(t, l.Reasons, CodeGPUSkew)
	for _, s := range ss {
		if s.GPUIndex == 1 && s.ThrottleReasonsActive == "0x0000000000000000" {
			s.SMClockMHz = 1955 // 1.28% under GPU 0's 1980
		}
	}
	wantReason(t, legOf(t, "r1", ss, nil).Reasons, CodeGPUSkew, "GPU 1 at 1955 MHz (the slowest)")
}

// The thermal bound is exact on the temperatures as read: 64.4 against
// 61.4 °C is 3 °C and passes, 64.41 is over it.
func TestThermalStartExactAtItsBound(t *testing.T) {
	for _, tc := range []struct {
		c    float64
		pass bool
	}{{64.4, true}, {64.41, false}} {
		p, q := serving(), serving()
		p.tempC, q.tempC = 61.4, tc.c
		b := Compare(arm(t, "fastserve", false, q.window(boot13)), arm(t, "vllm", false, p.window(boot13)), false)
		if got := !HasCode(b.Reasons, CodeThermalStart); got != tc.pass {
			t.Fatalf("%v against 61.4 °C: pass %v, want %v (%+v)", tc.c, got, tc.pass, b.Reasons)
		}
		if !tc.pass {
			wantReason(t, b.Reasons, CodeThermalStart, "fastserve 64.41 °C, vllm 61.4 °C (median over 1 and 1 legs): 3.01 °C apart > 3 °C")
		}
	}
}

// Counters that begin after a GPU's first row are judged from there, and
// the change is drift.
func TestCountersThatBeginLate(t *testing.T) {
	ss := serving().window(boot13)
	ss[0].EventCountersUS = nil
	for _, s := range ss[10:] {
		s.EventCountersUS.HwThermal = 350000
	}
	ss[10].EventCountersUS.HwThermal = 0
	l := legOf(t, "r1", ss, nil)
	wantReason(t, l.Reasons, CodeThrottle, "hw_thermal_slowdown (HwThermal) accrued 350000 µs")
	wantReason(t, l.Reasons, CodeStaticDrift, "event_counters_us first at line 2, though the window's first sample has none")
}

// The hidden-limit bound is exact on the decimals read: 664.9996 W is
// under 95% of 700 W.
func TestHiddenLimitExactOnDecimals(t *testing.T) {
	p := serving()
	p.cappedW = 664.9996
	l := legOf(t, "r1", p.window(boot13), nil)
	wantReason(t, l.Reasons, CodeThrottle, "power-managed at most 664.9996 W, under 95% of every recorded limit (700 W)")
	// 95% of 700.1 W is 665.095 W, which passes.
	p.limitW, p.cappedW = 700.1, 665.095
	wantCodes(t, legOf(t, "r1", p.window(boot13), nil).Reasons)
}

// The ratio checks of power-managed arms hold with the bad arm on either
// side: free offset, limits and thermal start, the baseline the odd one.
func TestPowerRatioChecksWithTheBadArmAsBaseline(t *testing.T) {
	good, slow := serving(), serving()
	slow.free = repeat([]int{1875, 1890, 1890}, 20)
	b := Compare(arm(t, "fastserve", false, good.window(boot13)), arm(t, "vllm", false, slow.window(boot13)), false)
	wantCodes(t, b.Reasons, CodeOffset)
	wantReason(t, b.Reasons, CodeOffset, "free median offset 4.76% > 1.0%: fastserve 1980 MHz, vllm 1890 MHz")

	p600 := serving()
	p600.limitW = 600
	b = Compare(arm(t, "fastserve", false, good.window(boot13)), arm(t, "vllm", false, p600.window(boot13)), false)
	wantCodes(t, b.Reasons, CodeHardwareMismatch)
	wantReason(t, b.Reasons, CodeHardwareMismatch, "enforced_power_limit_w: fastserve 700 W, vllm 600 W")

	hot := serving()
	hot.tempC = 63.5
	b = Compare(arm(t, "fastserve", false, good.window(boot13)), arm(t, "vllm", false, hot.window(boot13)), false)
	wantCodes(t, b.Reasons, CodeThermalStart)
	wantReason(t, b.Reasons, CodeThermalStart, "fastserve 60 °C, vllm 63.5 °C (median over 1 and 1 legs): 3.5 °C apart > 3 °C")
}
