package foreign

import (
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/clockgate/clockgate/clocks"
)

// amdHead is a small amd-smi metric --csv -w header: two XCDs and the
// violation accumulators.
const amdHead = "timestamp,gpu,gfx_activity,socket_power,gfx_0_clk,gfx_0_max_clk,gfx_1_clk,gfx_1_max_clk,hotspot," +
	"prochot_accumulated,ppt_accumulated,socket_thermal_accumulated,vr_thermal_accumulated,hbm_thermal_accumulated"

// amdRow is one reading of amdHead: GPU idx at Unix second ts, XCD clocks
// x0 and x1, the PPT accumulator ppt (the others 0).
func amdRow(ts, idx int, x0, x1, ppt string) string {
	return strings.Join([]string{strconv.Itoa(ts), strconv.Itoa(idx), "100", "650", x0, "2100", x1, "2100", "70", "0", ppt, "0", "0", "0"}, ",")
}

// TestAMDCSVMetric imports an amd-smi metric --csv -w log of two MI325X
// GPUs (eight XCDs each, testdata/foreign-amd) and holds the mapping to
// the sampler's: the SM clock is the lowest XCD's, the XCD clocks are
// kept, the maximum is gfx_0_max_clk, the stream is vendor amd with null
// persistence mode and pstate; the accumulators cover every AMD bit, so
// throttle is proven, and what the CSV lacks is unproven.
func TestAMDCSVMetric(t *testing.T) {
	res, leg := importLeg(t, t.TempDir(), FormatAMDCSV, Options{}, filepath.Join("..", "testdata", "foreign-amd", "metric-mi325x-2gpu.csv"))
	lines := strings.Split(strings.TrimSuffix(string(res.Stream), "\n"), "\n")
	if len(lines) != 72 {
		t.Fatalf("%d samples, want 72", len(lines))
	}
	busy := lines[2] // GPU 0 at the second reading
	for _, want := range []string{`"t":"2026-03-08T03:13:37.000Z"`, `"gpu_index":0`, `"sm_clock_mhz":2094`, `"clocks_max_sm_mhz":2100`,
		`"throttle_reasons_active":"0x0000000000000000"`, `"persistence_mode":null`, `"pstate":null`, `"utilization_gpu_pct":100`,
		`"vendor":"amd"`, `"perf_level":"[unproven]"`, `"xcd_clocks_mhz":[2100,2097,2094,2100,2097,2094,2100,2097]`,
		`"imported_from":"metric-mi325x-2gpu.csv:4"`} {
		if !strings.Contains(busy, want) {
			t.Errorf("sample lacks %s: %s", want, busy)
		}
	}
	wantCodes := []string{clocks.CodeUnprovenBoot, clocks.CodeUnprovenPowerLimit, clocks.CodeUnprovenStatic}
	if !reflect.DeepEqual(res.Import.Unproven, wantCodes) {
		t.Fatalf("unproven %v, want %v (%v)", res.Import.Unproven, wantCodes, res.Import.UnprovenWhy)
	}
	if got, want := res.Import.UnprovenWhy[clocks.CodeUnprovenStatic], "no GPU UUID, name or driver version: gpu_uuid, gpu_name and driver_version are unproven (amd-smi metric and monitor CSVs carry none); no perf level: perf_level is unproven (log amd-smi metric with --perf-level)"; got != want {
		t.Errorf("static: %q\nwant %q", got, want)
	}
	if got := res.Import.Columns["gfx_3_clk"]; got != "sm_clock_mhz (lowest over XCDs), xcd_clocks_mhz" {
		t.Errorf("gfx_3_clk maps to %q", got)
	}
	if got := res.Import.Columns["ppt_accumulated"]; got != "throttle_reasons_active (accumulator advancing)" {
		t.Errorf("ppt_accumulated maps to %q", got)
	}
	if !leg.Trusted() {
		t.Fatalf("leg not trusted: %v", leg.Reasons)
	}
	m := reasonMap(leg)
	for _, c := range []string{clocks.CodeThrottle, clocks.CodeSpread, clocks.CodeUnprovenThrottle, clocks.CodeUnprovenPersistence} {
		if _, ok := m[c]; ok {
			t.Errorf("unexpected %s: %s", c, m[c])
		}
	}
	var n int
	for _, g := range res.Record.GPUs {
		n += g.SMClockMHz.N
		if *g.SMClockMHz.Min != 2093 && *g.SMClockMHz.Min != 2094 {
			t.Errorf("lowest SM clock %d", *g.SMClockMHz.Min)
		}
	}
	if n != 70 {
		t.Errorf("%d busy samples, want 70", n)
	}
}

// TestAMDCSVAccumulators: an accumulator that advances between two
// readings of a GPU sets its bit on the later one (PPT: SwPowerCap), and
// the judge holds it a throttle; all five cover every AMD bit.
func TestAMDCSVAccumulators(t *testing.T) {
	var rows []string
	for i := range 32 {
		ppt := "10"
		if i >= 20 {
			ppt = "25"
		}
		rows = append(rows, amdRow(1772939616+i, 0, "2100", "2090", ppt))
	}
	res, err := Convert(FormatAMDCSV, []Input{{Path: "x.csv", Data: smiLog(amdHead, rows...)}}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(string(res.Stream), "\n"), "\n")
	if !strings.Contains(lines[19], `"throttle_reasons_active":"0x0000000000000000"`) || !strings.Contains(lines[20], `"throttle_reasons_active":"0x0000000000000004"`) ||
		!strings.Contains(lines[21], `"throttle_reasons_active":"0x0000000000000000"`) {
		t.Fatalf("bits: %s\n%s\n%s", lines[19], lines[20], lines[21])
	}
	if !strings.Contains(lines[0], `"sm_clock_mhz":2090`) {
		t.Errorf("SM clock is not the lowest XCD's: %s", lines[0])
	}
	for _, c := range res.Import.Unproven {
		if c == clocks.CodeUnprovenThrottle {
			t.Errorf("throttle unproven with every accumulator: %s", res.Import.UnprovenWhy[c])
		}
	}
	leg := writeAndJudge(t, t.TempDir(), "r1", res)
	if m := reasonMap(leg); !strings.Contains(m[clocks.CodeThrottle], "violation bits in busy samples") {
		t.Errorf("throttle: %q", m[clocks.CodeThrottle])
	}
}

// TestAMDCSVAcrossFiles: the accumulators of one GPU carry across the
// files of a leg: one that advanced between them is a throttle on the
// second file's first row, and one that went back is refused there.
func TestAMDCSVAcrossFiles(t *testing.T) {
	a := smiLog(amdHead, amdRow(1772939616, 0, "2100", "2100", "5"), amdRow(1772939617, 0, "2100", "2100", "5"))
	b := smiLog(amdHead, amdRow(1772939618, 0, "2100", "2100", "9"), amdRow(1772939619, 0, "2100", "2100", "9"))
	res, err := Convert(FormatAMDCSV, []Input{{Path: "a.csv", Data: a}, {Path: "b.csv", Data: b}}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(string(res.Stream), "\n"), "\n")
	if !strings.Contains(lines[2], `"throttle_reasons_active":"0x0000000000000004"`) || !strings.Contains(lines[3], `"throttle_reasons_active":"0x0000000000000000"`) {
		t.Fatalf("bits across files: %s\n%s", lines[2], lines[3])
	}
	_, err = Convert(FormatAMDCSV, []Input{{Path: "b.csv", Data: b}, {Path: "a.csv", Data: smiLog(amdHead, amdRow(1772939620, 0, "2100", "2100", "5"))}}, Options{})
	if want := "a.csv:2:47: ppt_accumulated: GPU 0: went back from 9 to 5: the driver was reloaded or the GPU reset within the window, so the leg's clock state is not one state"; err == nil || err.Error() != want {
		t.Errorf("got %v\nwant %s", err, want)
	}
}

// TestAMDCSVMonitor imports amd-smi monitor --csv -w columns: one GFX
// clock, no accumulators (its violation percentages cover no bit), so
// clock.unproven_throttle names the AMD bits.
func TestAMDCSVMonitor(t *testing.T) {
	head := "timestamp,gpu,power_usage,hotspot_temperature,memory_temperature,gfx,gfx_clock,mem,mem_clock,pviol,tviol"
	rows := []string{"1740686195,0,640,71,60,100,2100,40,1300,0,0", "1740686196,0,640,71,60,100,2080,40,1300,12.5,0"}
	res, err := Convert(FormatAMDCSV, []Input{{Path: "m.csv", Data: smiLog(head, rows...)}}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(string(res.Stream), "\n"), "\n")
	if !strings.Contains(lines[1], `"sm_clock_mhz":2080`) || !strings.Contains(lines[1], `"xcd_clocks_mhz":[2080]`) ||
		!strings.Contains(lines[1], `"throttle_reasons_active":"0x0000000000000004"`) || !strings.Contains(lines[0], `"throttle_reasons_active":"0x0000000000000000"`) {
		t.Fatalf("monitor samples: %s\n%s", lines[0], lines[1])
	}
	want := "no throttle bitmask column; bits not covered: 0x0000000000000004 SwPowerCap, 0x0000000000000008 HwSlowdown, 0x0000000000000040 HwThermal (log amd-smi metric --throttle (ROCm 6) or --violation (ROCm 7): ppt_, socket_thermal_, vr_thermal_, hbm_thermal_, prochot_accumulated)"
	if got := res.Import.UnprovenWhy[clocks.CodeUnprovenThrottle]; got != want {
		t.Errorf("throttle: %q\nwant %q", got, want)
	}
}

// TestAMDRefusals: each amd-smi CSV clockgate will not convert faithfully
// is refused with the file, line and column, and the reason.
func TestAMDRefusals(t *testing.T) {
	given := Options{Start: time.Date(2026, 3, 8, 0, 0, 0, 0, time.UTC), Interval: time.Second}
	cases := []struct {
		name string
		o    Options
		data []byte
		want string
	}{
		{"unknown column", Options{}, smiLog("timestamp,gpu,gfx_activity,gfx_0_clk,fan_speed", "1,0,100,2100,40"),
			`x.csv:1:38: unknown column "fan_speed": not an amd-smi metric or monitor column whose unit clockgate knows (log amd-smi metric --usage --power --clock --temperature --throttle --perf-level --csv -w 1)`},
		{"a value with a unit", Options{}, smiLog("timestamp,gpu,gfx_activity,gfx_0_clk", "1772939616,0,100,2100 MHz"),
			`x.csv:2:18: gfx_0_clk: want a whole number of MHz from 1 to 100000, found "2100 MHz"`},
		{"gfx_0_clk N/A", Options{}, smiLog(amdHead, amdRow(1772939616, 0, "N/A", "2100", "0")),
			`x.csv:2:22: gfx_0_clk: "N/A" where a value is required`},
		{"XCDs change", Options{}, smiLog(amdHead, amdRow(1772939616, 0, "2100", "2100", "0"), amdRow(1772939617, 0, "2100", "N/A", "0")),
			`x.csv:3:22: GPU 0: GFX clocks of XCDs 0, where x.csv:2 gave XCDs 0, 1: the XCDs read changed mid-leg`},
		{"accumulator goes back", Options{}, smiLog(amdHead, amdRow(1772939616, 0, "2100", "2100", "7"), amdRow(1772939617, 0, "2100", "2100", "6")),
			`x.csv:3:47: ppt_accumulated: GPU 0: went back from 7 to 6: the driver was reloaded or the GPU reset within the window, so the leg's clock state is not one state`},
		{"accumulator not supported", Options{}, smiLog(amdHead, amdRow(1772939616, 0, "2100", "2100", "18446744073709551615")),
			`x.csv:2:47: ppt_accumulated: 18446744073709551615, the largest 64-bit value, which amd-smi prints for a counter the GPU does not support`},
		{"accumulator N/A", Options{}, smiLog(amdHead, amdRow(1772939616, 0, "2100", "2100", "N/A")),
			`x.csv:2:47: ppt_accumulated: "N/A" where a value is required (the GPU gives no violation accumulators: log without --throttle)`},
		{"timestamp not Unix seconds", Options{}, smiLog("timestamp,gpu,gfx_activity,gfx_0_clk", "2026/03/08 00:00:00,0,100,2100"),
			`x.csv:2:1: timestamp: want Unix seconds (amd-smi -w stamps each reading so), found "2026/03/08 00:00:00"`},
		{"no GFX clock", Options{}, smiLog("timestamp,gpu,gfx_activity", "1772939616,0,100"),
			`x.csv:1: no GFX clock column: log amd-smi metric --clock (gfx_0_clk, …) or monitor --gfx (gfx_clock)`},
		{"XCD clocks without gfx_0", Options{}, smiLog("timestamp,gpu,gfx_activity,gfx_1_clk", "1772939616,0,100,2100"),
			`x.csv:1:28: GFX clock columns without gfx_0_clk: every GPU has XCD 0`},
		{"two GFX clocks", Options{}, smiLog("timestamp,gpu,gfx_activity,gfx_clock,gfx_0_clk", "1772939616,0,100,2100,2100"),
			`x.csv:1:38: column "gfx_0_clk" reads the GFX clock again (column "gfx_clock" already does)`},
		{"no gpu column", Options{}, smiLog("timestamp,gfx_activity,gfx_0_clk", "1772939616,100,2100"),
			`x.csv:1: no gpu column: amd-smi --csv prints the GPU's index`},
		{"no timestamp without --start", Options{}, smiLog("gpu,gfx_activity,gfx_0_clk", "0,100,2100"),
			`x.csv:1: no timestamp column (amd-smi prints one only with -w): log with -w, or pass --start and --interval`},
		{"no utilization", Options{}, smiLog("timestamp,gpu,gfx_0_clk", "1772939616,0,2100"),
			`x.csv:1: no utilization column: log amd-smi metric --usage (gfx_activity), or pass --busy-above-mhz N to count a sample busy when its GFX clock is above N`},
		{"header changes", Options{}, smiLog(amdHead, amdRow(1772939616, 0, "2100", "2100", "0"), strings.Replace(amdHead, "hotspot", "edge", 1)),
			`x.csv:3:89: the header changes mid-file (first at line 1)`},
		{"violation percentage out of range", Options{}, smiLog("timestamp,gpu,gfx,gfx_clock,pviol", "1772939616,0,100,2100,101"),
			`x.csv:2:23: pviol: want a percentage from 0 to 100, found "101"`},
		{"no header", given, []byte("0,100,2100\n"),
			`x.csv:1: no header: amd-smi --csv prints one first (timestamp or gpu, …)`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Convert(FormatAMDCSV, []Input{{Path: "x.csv", Data: c.data}}, c.o)
			if err == nil {
				t.Fatalf("converted; want refusal %q", c.want)
			}
			if err.Error() != c.want {
				t.Errorf("got  %s\nwant %s", err, c.want)
			}
		})
	}
}

// TestAMDCSVGivenTimes: a metric CSV without -w has no timestamp; --start
// and --interval time it, with clock.unproven_coverage.
func TestAMDCSVGivenTimes(t *testing.T) {
	o := Options{Start: time.Date(2026, 3, 8, 0, 0, 0, 0, time.UTC), Interval: time.Second}
	res, err := Convert(FormatAMDCSV, []Input{{Path: "x.csv", Data: smiLog("gpu,gfx_activity,gfx_0_clk", "0,100,2100", "0,100,2100")}}, o)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(res.Stream), `"t":"2026-03-08T00:00:01.000Z"`) {
		t.Errorf("times: %s", res.Stream)
	}
	if res.Import.UnprovenWhy[clocks.CodeUnprovenCoverage] == "" {
		t.Errorf("no coverage reason: %v", res.Import.Unproven)
	}
}
