package foreign

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/clockgate/clockgate/clocks"
)

func watts(w float64) *float64 { return &w }

func bootLeg(name, first, last string, power *float64, counters map[string][2]float64) clocks.BootLeg {
	return clocks.BootLeg{Name: name, GPUs: []clocks.BootCounters{{GPUIndex: 0, GPUUUID: "GPU-a", GPUName: "NVIDIA H100 80GB HBM3",
		FirstT: first, LastT: last, MaxPowerW: power, Counters: counters}}}
}

// TestProveOneBootExactly holds the boot proof to SPEC §11.4: C(B first)
// ≥ C(A last), and C(A last) above what C could gather since a reset in
// the gap (the gap for a time counter; the gap × the higher leg's highest
// power for energy), exact at the boundary.
func TestProveOneBootExactly(t *testing.T) {
	const a0, a1, b0, b1 = "2026-07-18T17:00:00Z", "2026-07-18T17:10:00Z", "2026-07-18T17:10:10Z", "2026-07-18T17:20:00Z"
	cases := []struct {
		name string
		a, b clocks.BootLeg
		ok   bool
		why  string
	}{
		{"energy above the gap's worth", bootLeg("A", a0, a1, watts(300), map[string][2]float64{"energy_j": {0, 3001}}),
			bootLeg("B", b0, b1, watts(200), map[string][2]float64{"energy_j": {3001, 9000}}), true, ""},
		{"energy exactly the gap's worth", bootLeg("A", a0, a1, watts(300), map[string][2]float64{"energy_j": {0, 3000}}),
			bootLeg("B", b0, b1, watts(200), map[string][2]float64{"energy_j": {3100, 9000}}), false,
			"GPU uuid GPU-a, A then B: energy_j: 3000 not above the 3000 J (gap 10.000 s × 300 W) a reset could have gathered"},
		{"the higher leg's power bounds it", bootLeg("A", a0, a1, watts(200), map[string][2]float64{"energy_j": {0, 2500}}),
			bootLeg("B", b0, b1, watts(300), map[string][2]float64{"energy_j": {2600, 9000}}), false,
			"GPU uuid GPU-a, A then B: energy_j: 2500 not above the 3000 J (gap 10.000 s × 300 W) a reset could have gathered"},
		{"energy went back", bootLeg("A", a0, a1, watts(300), map[string][2]float64{"energy_j": {0, 5000}}),
			bootLeg("B", b0, b1, watts(300), map[string][2]float64{"energy_j": {4999, 9000}}), false,
			"GPU uuid GPU-a, A then B: energy_j: went back from 5000 to 4999"},
		{"energy without power", bootLeg("A", a0, a1, nil, map[string][2]float64{"energy_j": {0, 5000}}),
			bootLeg("B", b0, b1, nil, map[string][2]float64{"energy_j": {5001, 9000}}), false,
			"GPU uuid GPU-a, A then B: energy_j: no power recorded to bound it"},
		{"time counter above the gap", bootLeg("A", a0, a1, nil, map[string][2]float64{"sw_power_cap_us": {0, 10000001}}),
			bootLeg("B", b0, b1, nil, map[string][2]float64{"sw_power_cap_us": {10000001, 10000001}}), true, ""},
		{"time counter exactly the gap", bootLeg("A", a0, a1, nil, map[string][2]float64{"sw_power_cap_us": {0, 10000000}}),
			bootLeg("B", b0, b1, nil, map[string][2]float64{"sw_power_cap_us": {10000000, 10000000}}), false,
			"GPU uuid GPU-a, A then B: sw_power_cap_us: 10000000 not above the 10000000 µs (gap 10.000 s) a reset could have gathered"},
		{"one counter proves it", bootLeg("A", a0, a1, watts(300), map[string][2]float64{"energy_j": {0, 10}, "sw_power_cap_us": {0, 2e7}}),
			bootLeg("B", b0, b1, watts(300), map[string][2]float64{"energy_j": {10, 20}, "sw_power_cap_us": {2e7, 3e7}}), true, ""},
		{"no common counter", bootLeg("A", a0, a1, nil, map[string][2]float64{}),
			bootLeg("B", b0, b1, nil, map[string][2]float64{}), false, "GPU uuid GPU-a, A then B: no cumulative counter recorded in both"},
		{"windows overlap", bootLeg("A", a0, b0, watts(300), map[string][2]float64{"energy_j": {0, 1e6}}),
			bootLeg("B", a1, b1, watts(300), map[string][2]float64{"energy_j": {2e6, 3e6}}), false,
			"GPU uuid GPU-a, A then B: the windows overlap (2026-07-18T17:10:00Z after 2026-07-18T17:10:10Z)"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			// Given in either order: the proof takes the legs in time order.
			for _, legs := range [][]clocks.BootLeg{{c.a, c.b}, {c.b, c.a}} {
				ok, why := clocks.ProveOneBoot(legs)
				if ok != c.ok || why != c.why {
					t.Errorf("ProveOneBoot = %v, %q; want %v, %q", ok, why, c.ok, c.why)
				}
			}
		})
	}
}

// counterLog is an nvidia-smi log of one H100 leg recording the event
// counters, starting at start with the counters at base µs.
func counterLog(start time.Time, n int, base int64) []byte {
	var b strings.Builder
	b.WriteString("timestamp, index, uuid, name, clocks.sm [MHz], utilization.gpu [%], power.draw [W]")
	for _, k := range counterKeys {
		b.WriteString(", clocks_event_reasons_counters." + k + " [us]")
	}
	b.WriteString("\n")
	for i := 0; i < n; i++ {
		t := start.Add(time.Duration(i) * time.Second)
		fmt.Fprintf(&b, "%s, 0, GPU-a, NVIDIA H100 80GB HBM3, 1980, 90, 500.5", t.Format("2006/01/02 15:04:05.000"))
		for range counterKeys {
			fmt.Fprintf(&b, ", %d", base+int64(i)*1000)
		}
		b.WriteString("\n")
	}
	return []byte(b.String())
}

// TestUnprovenBootAcrossArms: imported legs carry no boot id; the ratio is
// clock.unproven_boot unless counter continuity proves every leg one boot,
// and --allow-cross-boot makes it a caveat.
func TestUnprovenBootAcrossArms(t *testing.T) {
	t0 := time.Date(2026, 7, 18, 17, 0, 0, 0, time.UTC)
	leg := func(dir, name string, start time.Time, base int64) *clocks.Leg {
		res, err := Convert(FormatSMICSV, []Input{{Path: name + ".csv", Data: counterLog(start, 40, base)}}, Options{TZ: time.UTC})
		if err != nil {
			t.Fatal(err)
		}
		return writeAndJudge(t, dir, name, res)
	}
	compare := func(a, b *clocks.Leg, allow bool) *clocks.Block {
		return clocks.Compare(clocks.Merge("ours", []*clocks.Leg{a}, allow), clocks.Merge("base", []*clocks.Leg{b}, allow), allow)
	}
	find := func(rs []clocks.Reason) string {
		for _, r := range rs {
			if r.Code == clocks.CodeUnprovenBoot {
				return r.Message
			}
		}
		return ""
	}
	dir := t.TempDir()
	// B starts 60 s after A's last sample (t0+39 s): the counters at A's
	// end are 39 ms + 1e8 µs, well above 60 s.
	a := leg(dir, "a", t0, 100_000_000)
	b := leg(dir, "b", t0.Add(99*time.Second), 100_039_000)
	if msg := find(compare(a, b, false).Reasons); msg != "" {
		t.Errorf("proven by continuity, yet: %s", msg)
	}
	// The counters at A's end (39 000 µs) are below the gap's 60 s: a
	// reset in the gap could explain them.
	c := leg(dir, "c", t0, 0)
	d := leg(dir, "d", t0.Add(99*time.Second), 39_000)
	blk := compare(c, d, false)
	want := "no boot id in imported legs ours c, base d; counter continuity does not prove one boot: GPU uuid GPU-a, ours c then base d: " +
		"hw_power_brake_slowdown_us, hw_thermal_slowdown_us, sw_power_cap_us, sw_thermal_slowdown_us, sync_boost_us: " +
		"39000 not above the 60000000 µs (gap 60.000 s) a reset could have gathered"
	if got := find(blk.Reasons); got != want {
		t.Errorf("unproven_boot\n got %q\nwant %q", got, want)
	}
	if blk.Established {
		t.Error("established without a proven boot")
	}
	blk = compare(c, d, true)
	if find(blk.Reasons) != "" || find(blk.Caveats) != want || !blk.CrossBootOverride {
		t.Errorf("--allow-cross-boot: reasons %v caveats %v", blk.Reasons, blk.Caveats)
	}
}
