package clocks

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

// arm merges legs built from windows, named r1, r2, ….
func arm(t *testing.T, engine string, allow bool, windows ...[]*Sample) *Arm {
	t.Helper()
	var legs []*Leg
	for i, w := range windows {
		legs = append(legs, legOf(t, fmt.Sprintf("r%d", i+1), w, nil))
	}
	return Merge(engine, legs, allow)
}

func flatWindow(boot string, mhz int) []*Sample { return window(boot, flat(mhz, 50), 0) }

func h100Window(boot string, mhz int) []*Sample {
	var out []*Sample
	for i := 0; i < 50; i++ {
		out = append(out, h100(i, boot, mhz, 100))
	}
	return out
}

func TestCleanPairEstablished(t *testing.T) {
	b := Compare(arm(t, "fastengine", false, cleanWindow(boot13), cleanWindow(boot13)),
		arm(t, "vllm", false, cleanWindow(boot13)), false)
	if !b.Established || b.CrossBootOverride || len(b.Reasons) != 0 || len(b.Caveats) != 0 {
		t.Fatalf("clean pair: %+v", b)
	}
	if *b.Ours.MedianMHz != 2470 || *b.Ours.PctOfMax != 82.25 || b.Ours.BusySamples != 122 || b.Ours.IdleSamplesExcluded != 6 || b.Ours.Legs != 2 {
		t.Fatalf("ours side %+v", b.Ours)
	}
	if *b.OffsetPct != 0 || *b.EstimatedEffectPct != 0 {
		t.Fatalf("offset %v effect %v", *b.OffsetPct, *b.EstimatedEffectPct)
	}
}

// The design document's two boots: 2470 against a flat 2190.
func crossBootPair(t *testing.T, allow bool) *Block {
	return Compare(arm(t, "ours", allow, cleanWindow(bootF6)), arm(t, "vllm", allow, flatWindow(boot2F, 2190)), allow)
}

func TestCrossBootRefused(t *testing.T) {
	b := crossBootPair(t, false)
	wantCodes(t, b.Reasons, CodeCrossBoot, CodeOffset)
	wantReason(t, b.Reasons, CodeCrossBoot, "arms on 2 boots: ours ["+bootF6+"], vllm ["+boot2F+"]")
	wantReason(t, b.Reasons, CodeOffset, "median offset 12.79% > 1.0%: ours 2470 MHz, vllm 2190 MHz (estimated effect 9.65% at transfer 0.7548)")
	if b.Established || b.CrossBootOverride {
		t.Fatalf("established %v override %v", b.Established, b.CrossBootOverride)
	}
	if *b.OffsetPct != 12.79 || *b.EstimatedEffectPct != 9.65 || b.TransferCoefficient != 0.7548 {
		t.Fatalf("offset %v effect %v", *b.OffsetPct, *b.EstimatedEffectPct)
	}
	if *b.Ours.PctOfMax != 82.25 || *b.Baseline.PctOfMax != 72.93 {
		t.Fatalf("pct of max %v %v", *b.Ours.PctOfMax, *b.Baseline.PctOfMax)
	}
}

// The override turns the boot refusal into a caveat; the offset stands.
func TestOverrideRecordsCaveatNotPass(t *testing.T) {
	b := crossBootPair(t, true)
	wantCodes(t, b.Reasons, CodeOffset)
	wantCodes(t, b.Caveats, CodeCrossBoot)
	wantReason(t, b.Caveats, CodeCrossBoot, bootF6, boot2F)
	if c := b.Caveats[0]; !c.Waived || c.Scope != ScopeRatio || !strings.HasSuffix(c.Text(), "(OVERRIDDEN by --allow-cross-boot)") ||
		strings.Contains(c.Message, "OVERRIDDEN") {
		t.Fatalf("caveat %+v, text %q", c, c.Text())
	}
	if b.Established || !b.CrossBootOverride {
		t.Fatalf("established %v override %v", b.Established, b.CrossBootOverride)
	}
}

func TestOverrideWithinOffsetEstablishedWithCaveat(t *testing.T) {
	b := Compare(arm(t, "ours", true, flatWindow(bootF6, 2190)), arm(t, "vllm", true, flatWindow(boot2F, 2190)), true)
	if !b.Established || !b.CrossBootOverride || len(b.Reasons) != 0 {
		t.Fatalf("%+v", b)
	}
	wantCodes(t, b.Caveats, CodeCrossBoot)
	if got := strings.Join(b.Ours.BootIDs, ",") + "|" + strings.Join(b.Baseline.BootIDs, ","); got != bootF6+"|"+boot2F {
		t.Fatalf("boot ids %s", got)
	}
	// The same pair on one boot carries no caveat and no override flag.
	b = Compare(arm(t, "ours", true, flatWindow(bootF6, 2190)), arm(t, "vllm", true, flatWindow(bootF6, 2190)), true)
	if !b.Established || b.CrossBootOverride || len(b.Caveats) != 0 {
		t.Fatalf("same boot under override: %+v", b)
	}
}

func TestOffsetThreshold(t *testing.T) {
	for _, tc := range []struct {
		name       string
		ours, base int
		fail       string
	}{
		{"at 1.0%", 2020, 2000, ""},
		{"at 1.0% below", 1980, 2000, ""},
		{"just under", 2019, 2000, ""},
		{"just over", 2021, 2000, "median offset 1.05% > 1.0%: ours 2021 MHz, vllm 2000 MHz"},
		{"just over below", 1979, 2000, "median offset 1.05% > 1.0%: ours 1979 MHz"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := Compare(arm(t, "ours", false, flatWindow(boot13, tc.ours)), arm(t, "vllm", false, flatWindow(boot13, tc.base)), false)
			if tc.fail == "" {
				wantCodes(t, b.Reasons)
				if !b.Established {
					t.Fatal("not established at or inside the threshold")
				}
				return
			}
			wantCodes(t, b.Reasons, CodeOffset)
			wantReason(t, b.Reasons, CodeOffset, tc.fail)
		})
	}
}

func TestOffsetAtBoundaryWithHalfMedians(t *testing.T) {
	// baseline 2150 (1.0% = 21.5); ours (2171+2172)/2 = 2171.5: exactly 1.0%.
	ours := window(boot13, append(flat(2171, 25), flat(2172, 25)...), 0)
	b := Compare(arm(t, "ours", false, ours), arm(t, "vllm", false, flatWindow(boot13, 2150)), false)
	wantCodes(t, b.Reasons)
	ours = window(boot13, append(flat(2172, 25), flat(2173, 25)...), 0)
	b = Compare(arm(t, "ours", false, ours), arm(t, "vllm", false, flatWindow(boot13, 2150)), false)
	wantReason(t, b.Reasons, CodeOffset, "ours 2172.5 MHz, vllm 2150 MHz")
}

// Three individually flat legs at 2470 / 2300 / 2190 on one boot; the
// baseline pinned at the merged median so the offset is 0.00% and cannot
// mask the staircase.
func staircase(t *testing.T, allow bool) *Block {
	ours := arm(t, "ours", allow, flatWindow(boot13, 2470), flatWindow(boot13, 2300), flatWindow(boot13, 2190))
	base := arm(t, "vllm", allow, flatWindow(boot13, 2300))
	return Compare(ours, base, allow)
}

func TestStaircaseArm(t *testing.T) {
	for _, allow := range []bool{false, true} {
		b := staircase(t, allow)
		wantCodes(t, b.Reasons, CodeStaircase)
		wantReason(t, b.Reasons, CodeStaircase, "arm ours merged spread 12.17% > 5.0%: min 2190, median 2300, max 2470 MHz over 3 legs, n=150")
		if *b.OffsetPct != 0 || b.Established {
			t.Fatalf("allow=%v offset %v established %v", allow, *b.OffsetPct, b.Established)
		}
		if *b.Ours.SpreadPct != 12.17 || *b.Ours.MedianMHz != 2300 {
			t.Fatalf("ours side %+v", b.Ours)
		}
	}
}

func TestStaircaseWithinThresholdPasses(t *testing.T) {
	b := Compare(arm(t, "ours", false, flatWindow(boot13, 2000), flatWindow(boot13, 2100)),
		arm(t, "vllm", false, flatWindow(boot13, 2050)), false)
	// Merged median of 50×2000 and 50×2100 is 2050: spread 100/2050 = 4.88%.
	wantCodes(t, b.Reasons)
}

// The merged spread must span every trusted leg, not the first one only.
func TestStaircaseSpansEveryLeg(t *testing.T) {
	b := Compare(arm(t, "ours", false, flatWindow(boot13, 2300), flatWindow(boot13, 2300), flatWindow(boot13, 2000)),
		arm(t, "vllm", false, flatWindow(boot13, 2300)), false)
	wantReason(t, b.Reasons, CodeStaircase, "min 2000, median 2300, max 2300 MHz over 3 legs")
}

// Untrusted legs take no part in the merge.
func TestUntrustedLegOutOfTheMerge(t *testing.T) {
	bad := legOf(t, "r2", flatWindow(boot2F, 1500), func(r *Record) { r.GPUs[0].IdleSamplesExcluded = 1; r.GPUs[0].SMClockMHz.N = 49 })
	good := legOf(t, "r1", flatWindow(boot13, 2190), nil)
	a := Merge("ours", []*Leg{good, bad}, false)
	if *a.Side.MedianMHz != 2190 || a.Side.BusySamples != 50 || a.Side.Legs != 2 || len(a.Side.BootIDs) != 1 {
		t.Fatalf("%+v", a.Side)
	}
	wantCodes(t, a.Reasons)
	b := Compare(a, arm(t, "vllm", false, flatWindow(boot13, 2190)), false)
	wantCodes(t, b.Reasons, CodeLegIneligible)
	wantReason(t, b.Reasons, CodeLegIneligible, "leg ours r2 is not binding-eligible: clock.stream_mismatch")
}

func TestNoTrustedLegHasNullNumbers(t *testing.T) {
	bad := JudgeLeg("r1", []byte(`{}`), nil, nil)
	b := Compare(Merge("ours", []*Leg{bad}, false), arm(t, "vllm", false, flatWindow(boot13, 2190)), false)
	if b.Ours.MedianMHz != nil || b.OffsetPct != nil || b.EstimatedEffectPct != nil || b.Established {
		t.Fatalf("%+v", b)
	}
	wantCodes(t, b.Reasons, CodeLegIneligible)
	out, _ := json.Marshal(b)
	if !strings.Contains(string(out), `"median_mhz":null`) || !strings.Contains(string(out), `"offset_pct":null`) {
		t.Fatalf("null numbers not null: %s", out)
	}
}

func TestStraddledBoot(t *testing.T) {
	ours := func(allow bool) *Arm {
		return arm(t, "ours", allow, flatWindow(bootF6, 2190), flatWindow(boot2F, 2190))
	}
	a := ours(false)
	wantCodes(t, a.Reasons, CodeStraddledBoot)
	wantReason(t, a.Reasons, CodeStraddledBoot, "arm ours spans 2 boots: "+boot2F+" (r2), "+bootF6+" (r1)")
	b := Compare(a, arm(t, "vllm", false, flatWindow(bootF6, 2190)), false)
	wantCodes(t, b.Reasons, CodeStraddledBoot, CodeCrossBoot)

	a = ours(true)
	wantCodes(t, a.Reasons)
	wantCodes(t, a.Caveats, CodeStraddledBoot)
	b = Compare(a, arm(t, "vllm", true, flatWindow(bootF6, 2190)), true)
	wantCodes(t, b.Reasons)
	wantCodes(t, b.Caveats, CodeStraddledBoot, CodeCrossBoot)
	if !b.Established || !b.CrossBootOverride {
		t.Fatalf("%+v", b)
	}
}

func staticEdits() map[string]func(s *Sample) {
	return map[string]func(s *Sample){
		"gpu_name":                         func(s *Sample) { s.GPUName = "NVIDIA GB10 (B)" },
		"gpu_uuid":                         func(s *Sample) { s.GPUUUID = "GPU-0000-other" },
		"driver_version":                   func(s *Sample) { s.DriverVersion = "580.160.01" },
		"clocks_max_sm_mhz":                func(s *Sample) { s.ClocksMaxSMMHz = 3100 },
		"clocks_applications_graphics_mhz": func(s *Sample) { s.ClocksApplicationsGraphicsMHz = ptr(2500) },
		"vendor":                           amdify,
		"perf_level":                       func(s *Sample) { amdify(s); s.PerfLevel = "DETERMINISM" },
		"memory_partition":                 func(s *Sample) { amdify(s); s.MemoryPartition = "NPS4" },
	}
}

// amdify makes s an AMD GPU's sample: its vendor keys, its XCD clocks (the
// lowest its SM clock), no persistence mode or pstate, no applications
// clock.
func amdify(s *Sample) {
	s.Vendor, s.PerfLevel, s.MemoryPartition = VendorAMD, "AUTO", "NPS1"
	s.XCDClocksMHz = []int{s.SMClockMHz + 20, s.SMClockMHz, s.SMClockMHz + 40}
	s.PersistenceMode, s.PState, s.ClocksApplicationsGraphicsMHz = "", "", nil
}

// staticFragment is where a reason names the field: first for every
// field but vendor, whose edit (an AMD sample) changes fields before it.
func staticFragment(prefix, field string) string {
	if field == "vendor" {
		return `; vendor: `
	}
	return prefix + field + ": "
}

// staticBase is the window a static field's edit is made against: an AMD
// one for the fields only AMD samples have.
func staticBase(field string, ss []*Sample) []*Sample {
	if field == "perf_level" || field == "memory_partition" {
		return edited(ss, amdify)
	}
	return ss
}

func edited(ss []*Sample, edit func(*Sample)) []*Sample {
	for _, s := range ss {
		edit(s)
	}
	return ss
}

func TestStaticMismatchAcrossLegs(t *testing.T) {
	for _, field := range StaticFields {
		t.Run(field, func(t *testing.T) {
			for _, allow := range []bool{false, true} {
				a := arm(t, "ours", allow, staticBase(field, flatWindow(boot13, 2190)), edited(flatWindow(boot13, 2190), staticEdits()[field]))
				wantCodes(t, a.Reasons, CodeStaticMismatch)
				wantReason(t, a.Reasons, CodeStaticMismatch, "arm ours legs differ in STATIC_FIELDS: ", staticFragment("STATIC_FIELDS: ", field), "(r1)", "(r2)")
			}
		})
	}
}

func TestHardwareMismatchEachField(t *testing.T) {
	for _, field := range StaticFields {
		t.Run(field, func(t *testing.T) {
			for _, allow := range []bool{false, true} {
				boot := boot13
				if allow {
					boot = boot2F // under the override the boots differ too
				}
				b := Compare(arm(t, "ours", allow, staticBase(field, flatWindow(boot13, 2190))),
					arm(t, "vllm", allow, edited(flatWindow(boot, 2190), staticEdits()[field])), allow)
				wantCodes(t, b.Reasons, CodeHardwareMismatch)
				wantReason(t, b.Reasons, CodeHardwareMismatch, "arms are not on one machine: ", staticFragment("machine: ", field)+"ours ")
				if b.Established {
					t.Fatal("established across machines")
				}
			}
		})
	}
}

// The full GB10-against-H100 shape: every static field differs, and the
// override changes only whether the boots are refused.
func TestGB10AgainstH100(t *testing.T) {
	for _, allow := range []bool{false, true} {
		b := Compare(arm(t, "ours", allow, flatWindow(bootF6, 1980)), arm(t, "vllm", allow, h100Window(boot2F, 1980)), allow)
		want := []string{CodeCrossBoot, CodeHardwareMismatch}
		if allow {
			want = want[1:]
			wantCodes(t, b.Caveats, CodeCrossBoot)
		}
		wantCodes(t, b.Reasons, want...)
		wantReason(t, b.Reasons, CodeHardwareMismatch,
			`gpu_name: ours "NVIDIA GB10", vllm "NVIDIA H100 80GB HBM3"`,
			`driver_version: ours "580.159.03", vllm "590.44.01"`,
			"clocks_max_sm_mhz: ours 3003, vllm 1980",
			"clocks_applications_graphics_mhz: ours 2418, vllm null", "gpu_uuid")
		if b.Established {
			t.Fatalf("allow=%v: GB10 against H100 established", allow)
		}
	}
}

// The override waives boot identity and nothing else: a leg over spread,
// throttled or with persistence disabled stays ineligible under it.
func TestOverrideWaivesNothingButBoot(t *testing.T) {
	spread := window(bootF6, append(flat(2190, 31), flat(2470, 30)...), 0)
	throttled := flatWindow(bootF6, 2190)
	throttled[7].ThrottleReasonsActive = "0x0000000000000004"
	noPersist := flatWindow(bootF6, 2190)
	noPersist[0].PersistenceMode = "Disabled"
	partial := func(r *Record) { r.Window.StopReason = StopMaxDuration }
	for _, tc := range []struct {
		name  string
		leg   *Leg
		code  string
		extra []string
	}{
		// Its median is the baseline's, its mean is not: the mean offset
		// stands beside the leg's own reason.
		{"spread", legOf(t, "r1", spread, nil), CodeSpread, []string{CodeOffset}},
		{"throttle", legOf(t, "r1", throttled, nil), CodeThrottle, nil},
		{"persistence", legOf(t, "r1", noPersist, nil), CodePersistence, nil},
		{"partial window", legOf(t, "r1", flatWindow(bootF6, 2190), partial), CodePartialWindow, nil},
		{"busy floor", legOf(t, "r1", window(bootF6, flat(2190, 29), 0), nil), CodeBusySamples, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ours := Merge("ours", []*Leg{tc.leg}, true)
			b := Compare(ours, arm(t, "vllm", true, flatWindow(boot2F, 2190)), true)
			wantCodes(t, b.Reasons, append(tc.extra, CodeLegIneligible)...)
			wantReason(t, b.Reasons, CodeLegIneligible, "leg ours r1 is not binding-eligible: "+tc.code)
			if tc.extra != nil {
				wantReason(t, b.Reasons, CodeOffset, "mean offset 6.29% > 1.0%: ours 2327.70 MHz, vllm 2190.00 MHz, though the medians agree")
			}
			wantCodes(t, b.Caveats, CodeCrossBoot)
			if b.Established {
				t.Fatal("override waived a leg check")
			}
		})
	}
}

func TestIneligibleLegListedOnceWithAllCodes(t *testing.T) {
	ss := window(bootF6, flat(2190, 20), 30)
	ss[0].ThrottleReasonsActive = "0x0000000000000008"
	l := legOf(t, "r2", ss, nil)
	l.Reasons = append(l.Reasons, Reason{Code: "memory.missing", Message: "x"})
	b := Compare(Merge("ours", []*Leg{legOf(t, "r1", flatWindow(bootF6, 2190), nil), l}, false),
		arm(t, "vllm", false, flatWindow(bootF6, 2190)), false)
	wantCodes(t, b.Reasons, CodeLegIneligible)
	wantReason(t, b.Reasons, CodeLegIneligible, "leg ours r2 is not binding-eligible: clock.busy_fraction, clock.busy_samples, clock.throttle, memory.missing")
}

// A leg whose only reasons are not clock reasons leaves the clock block
// established: the ratio, not the block, lists it.
func TestNonClockLegReasonLeavesBlockEstablished(t *testing.T) {
	l := legOf(t, "r1", flatWindow(boot13, 2190), nil)
	l.Reasons = append(l.Reasons, Reason{Code: "bench.failed_requests", Message: "x"})
	b := Compare(Merge("ours", []*Leg{l}, false), arm(t, "vllm", false, flatWindow(boot13, 2190)), false)
	if !b.Established || len(b.Reasons) != 0 {
		t.Fatalf("%+v", b)
	}
}

func TestBlockJSONShape(t *testing.T) {
	out, err := json.Marshal(crossBootPair(t, false))
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	must(t, json.Unmarshal(out, &m))
	for _, k := range []string{"established", "cross_boot_override", "ours", "baseline", "offset_pct", "estimated_effect_pct", "transfer_coefficient", "reasons", "caveats"} {
		if _, ok := m[k]; !ok {
			t.Errorf("clock block lacks %q", k)
		}
	}
	ours := m["ours"].(map[string]any)
	for _, k := range []string{"engine", "boot_ids", "median_mhz", "pct_of_max", "spread_pct", "busy_samples", "idle_samples_excluded", "legs"} {
		if _, ok := ours[k]; !ok {
			t.Errorf("arm lacks %q", k)
		}
	}
	if ours["engine"] != "ours" || m["baseline"].(map[string]any)["engine"] != "vllm" {
		t.Errorf("engines %v", m)
	}
}

// TestArmChecksOnEitherSide: every arm check that stands, or that the
// override waived, reaches the block whichever side its arm is on; the
// reason names the arm.
func TestArmChecksOnEitherSide(t *testing.T) {
	bad := func(allow bool) *Arm {
		return arm(t, "bad", allow, flatWindow(bootF6, 2470), flatWindow(bootF6, 2190), flatWindow(boot2F, 2300))
	}
	good := func(allow bool) *Arm { return arm(t, "good", allow, flatWindow(bootF6, 2300)) }
	for _, badIsOurs := range []bool{true, false} {
		for _, allow := range []bool{false, true} {
			o, b := bad(allow), good(allow)
			if !badIsOurs {
				o, b = b, o
			}
			blk := Compare(o, b, allow)
			wantReason(t, blk.Reasons, CodeStaircase, "arm bad merged spread")
			var arms, caveats []string
			for _, r := range blk.Reasons {
				if r.Scope == ScopeArm {
					arms = append(arms, r.Code+" "+r.Engine)
				}
			}
			for _, r := range blk.Caveats {
				caveats = append(caveats, r.Code+" "+r.Engine)
			}
			want, wantCaveats := "clock.straddled_boot bad clock.staircase bad", ""
			if allow {
				want, wantCaveats = "clock.staircase bad", "clock.straddled_boot bad clock.cross_boot "
			}
			if strings.Join(arms, " ") != want || strings.Join(caveats, " ") != wantCaveats {
				t.Errorf("bad arm ours=%v, allow=%v: arm reasons %q, caveats %q; want %q, %q", badIsOurs, allow, arms, caveats, want, wantCaveats)
			}
			if blk.Established || blk.CrossBootOverride != allow {
				t.Errorf("bad arm ours=%v, allow=%v: established %v, override %v", badIsOurs, allow, blk.Established, blk.CrossBootOverride)
			}
		}
	}
}

// TestMergeRefusesAShedFold: a fold whose counts were shed cannot be
// merged into an arm again, where it would silently count nothing.
func TestMergeRefusesAShedFold(t *testing.T) {
	l := legOf(t, "r1", window(boot13, repeat([]int{2190, 2200}, 40), 5), nil)
	if !l.Trusted() {
		t.Fatalf("leg not trusted: %+v", l.Reasons)
	}
	Merge("fastengine", []*Leg{l}, false) // merges before it is shed
	l.Fold.Shed()
	defer func() {
		if r := recover(); r == nil || !strings.Contains(fmt.Sprint(r), "whose fold was shed") {
			t.Fatalf("recovered %v, want a refusal naming the shed fold", r)
		}
	}()
	Merge("fastengine", []*Leg{l}, false)
}
