package foreign

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/clockgate/clockgate/clocks"
)

// importLeg converts inputs and writes the leg's three files under dir as
// r1, then judges it as summarize would.
func importLeg(t *testing.T, dir, format string, o Options, paths ...string) (*Result, *clocks.Leg) {
	t.Helper()
	var ins []Input
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		ins = append(ins, Input{Path: filepath.Base(p), Data: data})
	}
	res, err := Convert(format, ins, o)
	if err != nil {
		t.Fatal(err)
	}
	return res, writeAndJudge(t, dir, "r1", res)
}

func writeAndJudge(t *testing.T, dir, name string, res *Result) *clocks.Leg {
	t.Helper()
	rec, _ := json.MarshalIndent(res.Record, "", "  ")
	im, _ := json.MarshalIndent(res.Import, "", "  ")
	prefix := filepath.Join(dir, name)
	for suffix, data := range map[string][]byte{".samples.jsonl": res.Stream, ".summary.json": rec, ".import.json": im} {
		if err := os.WriteFile(prefix+suffix, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return clocks.LoadLeg(clocks.LegFiles{Name: name, RecordPath: prefix + ".summary.json", StreamPath: prefix + ".samples.jsonl"})
}

func zone(t *testing.T, s string) *time.Location {
	t.Helper()
	if s == "UTC" {
		return time.UTC
	}
	l, err := time.Parse("-07:00", s)
	if err != nil {
		t.Fatal(err)
	}
	return l.Location()
}

func reasonMap(l *clocks.Leg) map[string]string {
	m := map[string]string{}
	for _, r := range l.Reasons {
		m[r.Code] = r.Message
	}
	return m
}

func codes(l *clocks.Leg) []string { return clocks.Codes(l.Reasons) }

// TestRealSMICSV imports each real nvidia-smi CSV capture (written by
// others, testdata/smi-real) and holds the judgement to what the capture
// says and lacks: every stream line carries imported_from, the clock
// statistics are the capture's measured facts, and each thing the capture
// does not log is its clock.unproven_* reason.
func TestRealSMICSV(t *testing.T) {
	allLacking := []string{clocks.CodeUnprovenPersistence, clocks.CodeUnprovenPowerLimit, clocks.CodeUnprovenStatic, clocks.CodeUnprovenThrottle}
	cases := []struct {
		dir, tz       string
		samples, busy int
		min, max      int
		codes         []string
		spread        string
	}{
		{"h100-vllm-qwen3-8b-tp1", "-07:00", 265, 205, 1530, 1830,
			append([]string{clocks.CodeSpread}, allLacking...), "spread 16.39% > 5.0%: min 1530, median 1830, max 1830 MHz, n=205"},
		{"a100-vllm-qwen3-8b-tp1", "-07:00", 378, 328, 1395, 1410, allLacking, ""},
		{"h100-vllm-qwen3-30b-tp2-window", "-07:00", 158, 148, 1830, 1830, allLacking, ""},
	}
	for _, c := range cases {
		t.Run(c.dir, func(t *testing.T) {
			o := Options{TZ: zone(t, c.tz), TZName: c.tz}
			res, leg := importLeg(t, t.TempDir(), FormatSMICSV, o, filepath.Join("..", "testdata", "smi-real", c.dir, "capture.csv"))
			lines := strings.Split(strings.TrimSuffix(string(res.Stream), "\n"), "\n")
			if len(lines) != c.samples {
				t.Fatalf("%d samples, want %d", len(lines), c.samples)
			}
			for i, l := range lines {
				if !strings.Contains(l, `"imported_from":"capture.csv:`) {
					t.Fatalf("line %d has no imported_from: %s", i+1, l)
				}
			}
			if res.Record.Window.StopReason != clocks.StopImported {
				t.Errorf("stop_reason %q", res.Record.Window.StopReason)
			}
			if !leg.Trusted() {
				t.Fatalf("leg not trusted: %v", leg.Reasons)
			}
			busy, mn, mx := 0, 0, 0
			for _, g := range res.Record.GPUs {
				busy += g.SMClockMHz.N
				if mn == 0 || *g.SMClockMHz.Min < mn {
					mn = *g.SMClockMHz.Min
				}
				mx = max(mx, *g.SMClockMHz.Max)
			}
			if busy != c.busy || mn != c.min || mx != c.max {
				t.Errorf("busy %d, SM %d..%d; want %d, %d..%d", busy, mn, mx, c.busy, c.min, c.max)
			}
			want := append([]string(nil), c.codes...)
			sortStrings(want)
			if got := codes(leg); !reflect.DeepEqual(got, want) {
				t.Errorf("codes %v, want %v", got, want)
			}
			if c.spread != "" && reasonMap(leg)[clocks.CodeSpread] != c.spread {
				t.Errorf("spread: %q, want %q", reasonMap(leg)[clocks.CodeSpread], c.spread)
			}
			if got := reasonMap(leg)[clocks.CodeUnprovenThrottle]; got != "imported from nvidia-smi-csv: no throttle bitmask column; bits not covered: 0x0000000000000004 SwPowerCap, 0x0000000000000008 HwSlowdown, 0x0000000000000010 SyncBoost, 0x0000000000000020 SwThermal, 0x0000000000000040 HwThermal, 0x0000000000000080 HwPowerBrake, 0x0000000000000200 BoardLimit, 0x0000000000000400 Reliability (log clocks_event_reasons.active, or DCGM_FI_DEV_CLOCKS_EVENT_REASONS)" {
				t.Errorf("unproven_throttle: %q", got)
			}
			if !reflect.DeepEqual(res.Import.Unproven, sorted(append([]string{clocks.CodeUnprovenBoot}, allLacking...))) {
				t.Errorf("import.json unproven %v", res.Import.Unproven)
			}
		})
	}
}

// TestRealSMICSVFull590 imports the full --query-gpu snapshot of a real
// H100 on driver 590 (every field, reason bitmask, enforced limit, event
// counters): nothing is unproven but the boot, and its two rows (idle,
// then gpu-burn) are judged as a sampler's would be.
func TestRealSMICSVFull590(t *testing.T) {
	res, leg := importLeg(t, t.TempDir(), FormatSMICSV, Options{TZ: time.UTC, TZName: "UTC"},
		filepath.Join("..", "testdata", "smi-real", "h100-590-query-gpu-idle-load", "capture.csv"))
	if !reflect.DeepEqual(res.Import.Unproven, []string{clocks.CodeUnprovenBoot}) {
		t.Fatalf("unproven %v, want only the boot", res.Import.Unproven)
	}
	g := res.Record.GPUs[0]
	if g.Name != "NVIDIA H100 80GB HBM3" || g.ClocksMaxSMMHz != 1980 || g.ClocksApplicationsGraphicsMHz != nil {
		t.Errorf("static fields: %q %d %v", g.Name, g.ClocksMaxSMMHz, g.ClocksApplicationsGraphicsMHz)
	}
	if !strings.Contains(string(res.Stream), `"enforced_power_limit_w":700`) || !strings.Contains(string(res.Stream), `"event_counters_us":{"sw_power_cap":`) {
		t.Errorf("limit or counters not carried: %s", res.Stream)
	}
	// One idle row and one under gpu-burn: a busy fraction of 1/2 is at the floor.
	want := []string{clocks.CodeBusySamples}
	if got := codes(leg); !reflect.DeepEqual(got, sorted(want)) {
		t.Errorf("codes %v, want %v", got, want)
	}
}

// TestRealDmon imports real nvidia-smi dmon -o TD output (driver 535):
// the units line checked, the blank line dropped and recorded, pclk read
// as the SM clock and sm as utilization.
func TestRealDmon(t *testing.T) {
	res, leg := importLeg(t, t.TempDir(), FormatDmon, Options{TZ: time.UTC, TZName: "UTC"},
		filepath.Join("..", "testdata", "foreign-real", "dmon-535-mutc", "capture.txt"))
	if n := strings.Count(string(res.Stream), "\n"); n != 6 {
		t.Fatalf("%d samples, want 6", n)
	}
	if !reflect.DeepEqual(res.Import.DroppedLines, []clocks.Dropped{{File: "capture.txt", Line: 4, Why: "blank"}}) {
		t.Errorf("dropped %v", res.Import.DroppedLines)
	}
	g := res.Record.GPUs[0]
	if g.SMClockMHz.N != 4 || *g.SMClockMHz.Min != 1695 || *g.SMClockMHz.Max != 1695 || g.IdleSamplesExcluded != 2 {
		t.Errorf("record %+v", g.SMClockMHz)
	}
	if res.Import.Columns["pclk"] != "sm_clock_mhz" || res.Import.Columns["sm"] != "utilization_gpu_pct" {
		t.Errorf("columns %v", res.Import.Columns)
	}
	if res.Record.Window.FirstT != "2024-01-04T13:54:35.000Z" {
		t.Errorf("first_t %s", res.Record.Window.FirstT)
	}
	want := sorted([]string{clocks.CodeBusySamples, clocks.CodeUnprovenPersistence, clocks.CodeUnprovenPowerLimit, clocks.CodeUnprovenStatic, clocks.CodeUnprovenThrottle})
	if got := codes(leg); !reflect.DeepEqual(got, want) {
		t.Errorf("codes %v, want %v", got, want)
	}
	if got := reasonMap(leg)[clocks.CodeUnprovenStatic]; !strings.Contains(got, "no GPU UUID: gpu_uuid is unproven") {
		t.Errorf("unproven_static: %q", got)
	}
}

// TestRealSMICSVWithUnits: a real -lms log printed with units ("0 %",
// "23028 MiB") that never logged the SM clock is refused, naming it.
func TestRealSMICSVWithUnits(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("..", "testdata", "foreign-real", "smi-csv-units", "capture.csv"))
	if err != nil {
		t.Fatal(err)
	}
	_, err = Convert(FormatSMICSV, []Input{{Path: "capture.csv", Data: data}}, Options{TZ: time.UTC})
	if err == nil || err.Error() != "capture.csv:1: no SM clock column: log clocks.sm" {
		t.Fatalf("err = %v", err)
	}
	// With the SM clock the units are read and checked: the same rows
	// with a clocks.sm column pass every unit ("0 %" read as 0), and are
	// then refused as a window in which nothing ran (its record would
	// summarize no busy sample).
	fixed := strings.Replace(string(data), "timestamp, pstate,", "timestamp, clocks.sm [MHz], pstate,", 1)
	fixed = strings.ReplaceAll(fixed, ".977, P8", ".977, 210 MHz, P8")
	for _, ms := range []string{".981", ".986", ".990", ".095"} {
		fixed = strings.Replace(fixed, ms+", P8", ms+", 210 MHz, P8", 1)
	}
	_, err = Convert(FormatSMICSV, []Input{{Path: "capture.csv", Data: []byte(fixed)}}, Options{TZ: time.UTC})
	if err == nil || err.Error() != "capture.csv:2: no GPU has a busy reading (utilization 0 in all 5 readings): nothing ran in the window to judge" {
		t.Fatalf("err = %v", err)
	}
}

func sorted(s []string) []string {
	out := append([]string(nil), s...)
	sortStrings(out)
	return out
}

func sortStrings(s []string) { sort.Strings(s) }

// TestRealAMDSMIMI355X imports a real amd-smi metric -p -c -t -u -w 1
// --csv log of eight MI355X (testdata/foreign-real/amdsmi-metric-mi355x):
// CRLF rows, a blank line between readings, list cells quoted, one XCP
// and eight XCDs. The benchmark ran on GPUs 0-3; 4-7 idled at 94-117 MHz.
// A leg of all eight is refused, naming the idle GPUs and the --gpu that
// imports the four that ran; with it, each GPU's SM clock is its lowest
// XCD's, and what the log lacks is unproven.
func TestRealAMDSMIMI355X(t *testing.T) {
	path := filepath.Join("..", "testdata", "foreign-real", "amdsmi-metric-mi355x", "capture.csv")
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	_, err = Convert(FormatAMDCSV, []Input{{Path: "capture.csv", Data: data}}, Options{})
	if want := "capture.csv:6: no busy reading on GPUs 4, 5, 6, 7 (utilization 0 in all 20 of their readings): nothing ran there to judge; import the GPUs the benchmark ran on with --gpu 0,1,2,3"; err == nil || err.Error() != want {
		t.Fatalf("err = %v\nwant %s", err, want)
	}
	_, err = Convert(FormatAMDCSV, []Input{{Path: "capture.csv", Data: data}}, Options{GPU: "0,1,2,3,8"})
	if want := "capture.csv: --gpu 8: no GPU in the source has that index or UUID"; err == nil || err.Error() != want {
		t.Fatalf("err = %v\nwant %s", err, want)
	}

	res, leg := importLeg(t, t.TempDir(), FormatAMDCSV, Options{GPU: "0,1,2,3"}, path)
	lines := strings.Split(strings.TrimSuffix(string(res.Stream), "\n"), "\n")
	if len(lines) != 20 {
		t.Fatalf("%d samples, want 20", len(lines))
	}
	// GPU 2 at 17:11:35: XCD 1 the lowest, at 2127 MHz of 2400.
	for _, want := range []string{`"t":"2026-08-12T17:11:35.000Z"`, `"gpu_index":2`, `"sm_clock_mhz":2127`, `"clocks_max_sm_mhz":2400`,
		`"utilization_gpu_pct":100`, `"power_draw_w":966`, `"temperature_gpu_c":48`, `"vendor":"amd"`,
		`"xcd_clocks_mhz":[2164,2127,2168,2150,2177,2142,2198,2171]`, `"imported_from":"capture.csv:22"`} {
		if !strings.Contains(lines[10], want) {
			t.Errorf("sample lacks %s: %s", want, lines[10])
		}
	}
	// The header's last column arrives as "mem\r": read as mem, not refused.
	if res.Import.Columns["mem"] != "(not read)" || res.Import.Columns["gfx_busy_inst_xcp_0"] != "(not read)" || res.Import.Columns["gfx_7_clk"] != "sm_clock_mhz (lowest over XCDs), xcd_clocks_mhz" {
		t.Errorf("columns: mem %q, gfx_busy_inst_xcp_0 %q, gfx_7_clk %q", res.Import.Columns["mem"], res.Import.Columns["gfx_busy_inst_xcp_0"], res.Import.Columns["gfx_7_clk"])
	}
	var blank, other int
	for _, d := range res.Import.DroppedLines {
		switch d.Why {
		case "blank":
			blank++
		case "a GPU --gpu does not select":
			other++
		default:
			t.Errorf("dropped %+v", d)
		}
	}
	if blank != 4 || other != 20 {
		t.Errorf("dropped %d blank and %d of GPUs 4-7, want 4 and 20", blank, other)
	}
	// The measured facts: each GPU's lowest-XCD clock over its five busy
	// readings, 6.3-8.0% apart (clock.spread needs 30 to be judged).
	want := map[int][4]int{0: {2165, 2257, 2311, 647}, 1: {2162, 2204, 2303, 640}, 2: {2127, 2180, 2301, 798}, 3: {2171, 2214, 2311, 632}}
	for _, g := range res.Record.GPUs {
		w := want[*g.Index]
		if g.SMClockMHz.N != 5 || g.IdleSamplesExcluded != 0 || *g.SMClockMHz.Min != w[0] || int(*g.SMClockMHz.Median) != w[1] || *g.SMClockMHz.Max != w[2] || int(*g.SMClockMHz.SpreadPct*100+0.5) != w[3] {
			t.Errorf("GPU %d: n %d, %d/%v/%d MHz, spread %v%%; want %v", *g.Index, g.SMClockMHz.N, *g.SMClockMHz.Min, *g.SMClockMHz.Median, *g.SMClockMHz.Max, *g.SMClockMHz.SpreadPct, w)
		}
	}
	if !reflect.DeepEqual(res.Import.Unproven, []string{clocks.CodeUnprovenBoot, clocks.CodeUnprovenPowerLimit, clocks.CodeUnprovenStatic, clocks.CodeUnprovenThrottle}) {
		t.Errorf("unproven %v", res.Import.Unproven)
	}
	if !leg.Trusted() {
		t.Fatalf("leg not trusted: %v", leg.Reasons)
	}
	var got []string
	for _, r := range leg.Reasons {
		got = append(got, r.Code+": "+r.Message)
	}
	wantReasons := []string{
		"clock.busy_samples: GPU 0: busy samples 5 < 30: 0 idle samples excluded of 5 in the window",
		"clock.busy_samples: GPU 1: busy samples 5 < 30: 0 idle samples excluded of 5 in the window",
		"clock.busy_samples: GPU 2: busy samples 5 < 30: 0 idle samples excluded of 5 in the window",
		"clock.busy_samples: GPU 3: busy samples 5 < 30: 0 idle samples excluded of 5 in the window",
		"clock.unproven_power_limit: imported from amd-smi-csv: no socket power cap: power management at the cap cannot be told from a throttle (amd-smi metric and monitor CSVs carry none)",
		"clock.unproven_static: imported from amd-smi-csv: no GPU UUID, name or driver version: gpu_uuid, gpu_name and driver_version are unproven (amd-smi metric and monitor CSVs carry none); no perf level: perf_level is unproven (log amd-smi metric with --perf-level)",
		"clock.unproven_throttle: imported from amd-smi-csv: no throttle bitmask column; bits not covered: 0x0000000000000004 SwPowerCap, 0x0000000000000008 HwSlowdown, 0x0000000000000040 HwThermal (log amd-smi metric --throttle (ROCm 6) or --violation (ROCm 7): ppt_, socket_thermal_, vr_thermal_, hbm_thermal_, prochot_accumulated)",
	}
	if !reflect.DeepEqual(got, wantReasons) {
		t.Errorf("reasons:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(wantReasons, "\n"))
	}
}
