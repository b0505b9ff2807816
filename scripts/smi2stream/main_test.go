package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/clockgate/clockgate/clocks"
)

// base are the stand-ins every test capture without identity columns needs.
func base() Options {
	return Options{BootID: "boot-1", GPU: -1, TZ: "UTC"}
}

func convert(t *testing.T, csv string, o Options) *Result {
	t.Helper()
	res, err := Convert(strings.NewReader(csv), "cap.csv", o)
	if err != nil {
		t.Fatalf("Convert: %v", err)
	}
	return res
}

func lines(res *Result) []string {
	return strings.Split(strings.TrimSuffix(string(res.Stream), "\n"), "\n")
}

// A capture with every identity column, units in the header and in the
// values, the driver-590 deprecation of the applications clock, and the
// newer reason spelling converts to exactly the sampler's line.
func TestConvertUnitBearingCapture(t *testing.T) {
	csv := "timestamp, index, uuid, name, driver_version, clocks.current.sm [MHz], clocks.max.sm [MHz], clocks.applications.graphics [MHz], clocks_event_reasons.active, persistence_mode, pstate, utilization.gpu [%], temperature.gpu, power.draw [W], clocks.current.memory [MHz], memory.used [MiB]\n" +
		"2026/08/12 10:15:03.123, 0, GPU-aaaa, NVIDIA H100 80GB HBM3, 590.48.01, 1980 MHz, 1980 MHz, [Requested functionality has been deprecated], 0x0000000000000004, Enabled, P0, 97 %, 61, 699.12 W, 2619 MHz, 100 MiB\n"
	res := convert(t, csv, base())
	want := `{"t":"2026-08-12T10:15:03.123Z","boot_id":"boot-1","gpu_index":0,"gpu_uuid":"GPU-aaaa","gpu_name":"NVIDIA H100 80GB HBM3","driver_version":"590.48.01","sm_clock_mhz":1980,"clocks_max_sm_mhz":1980,"clocks_applications_graphics_mhz":null,"throttle_reasons_active":"0x0000000000000004","persistence_mode":"Enabled","pstate":"P0","utilization_gpu_pct":97,"temperature_gpu_c":61,"power_draw_w":699.12,"clocks_mem_mhz":2619,"throttle_field":"clocks_event_reasons.active"}`
	if got := lines(res); len(got) != 1 || got[0] != want {
		t.Fatalf("stream\n got %q\nwant %q", got, want)
	}
	if _, err := clocks.ParseSample([]byte(want)); err != nil {
		t.Fatalf("the stream reader refuses the line: %v", err)
	}
	if len(res.Filled) != 2 || !strings.HasPrefix(res.Filled[0], "boot_id = boot-1") ||
		res.Filled[1] != "t: timestamps without a zone read as UTC (--tz; nvidia-smi prints local time)" {
		t.Fatalf("filled = %q, want only the boot id and the zone", res.Filled)
	}
	if !strings.Contains(strings.Join(res.Ignored, ","), "memory.used [MiB]") {
		t.Fatalf("ignored = %q, want memory.used named", res.Ignored)
	}
	for _, k := range []string{"enforced_power_limit_w", "module_enforced_power_limit_w", "event_counters_us"} {
		if strings.Contains(string(res.Stream), k) {
			t.Fatalf("stream has %s, but the capture has no such column", k)
		}
	}
}

// The older spelling, a decimal bit set and a nounits capture without a
// header (--columns) are read; the decimal set is written as hex.
func TestConvertOldSpellingDecimalNoHeader(t *testing.T) {
	o := base()
	o.Columns = "timestamp,index,uuid,name,driver_version,clocks.sm,clocks.max.sm,clocks.applications.graphics,clocks_throttle_reasons.active,persistence_mode,pstate,utilization.gpu"
	csv := "2024/01/04 14:41:13.500, 0, GPU-b, NVIDIA A100-SXM4-40GB, 535.129.03, 1410, 1410, 1095, 4, Enabled, P0, 100\n" +
		"2024/01/04 14:41:14.500, 0, GPU-b, NVIDIA A100-SXM4-40GB, 535.129.03, 1275, 1410, 1095, 0x0000000000000000, Enabled, P0, 0\n"
	res := convert(t, csv, o)
	got := lines(res)
	if len(got) != 2 {
		t.Fatalf("want 2 samples, got %d", len(got))
	}
	if !strings.Contains(got[0], `"throttle_reasons_active":"0x0000000000000004"`) || !strings.HasSuffix(got[0], `"throttle_field":"clocks_throttle_reasons.active"}`) {
		t.Fatalf("line 1 = %s", got[0])
	}
	if !strings.Contains(got[0], `"clocks_applications_graphics_mhz":1095`) {
		t.Fatalf("line 1 lost the applications clock: %s", got[0])
	}
	f := res.GPUs[0]
	if f.Rows != 2 || f.Busy != 1 || f.PowerCapBusy != 1 || !f.ReasonsKnown {
		t.Fatalf("facts = %+v, want 2 rows, 1 busy with SwPowerCap", f)
	}
}

// Per-reason "Active"/"Not Active" columns compose the bit set; the bits of
// reasons the capture does not carry are written as 0 and named in a note.
func TestConvertPerReasonColumns(t *testing.T) {
	o := base()
	o.GPUUUID, o.GPUName, o.Driver, o.Persistence, o.PState, o.ClocksMaxSM, o.AppsClock = "GPU-c", "NVIDIA GB200", "570.124.06", "Enabled", "P0", 2062, "null"
	csv := "timestamp, clocks.current.sm [MHz], utilization.gpu [%], clocks_event_reasons.sw_power_cap, clocks_event_reasons.hw_slowdown, clocks_event_reasons.sw_thermal_slowdown\n" +
		"2024/12/12 00:24:42.254, 1980 MHz, 100 %, Active, Not Active, Active\n" +
		"2024/12/12 00:24:43.269, 2062 MHz, 100 %, Not Active, NOT_ACTIVE, Not Active\n"
	res := convert(t, csv, o)
	got := lines(res)
	if !strings.Contains(got[0], `"throttle_reasons_active":"0x0000000000000024"`) {
		t.Fatalf("line 1 = %s, want SwPowerCap|SwThermal = 0x24", got[0])
	}
	if !strings.Contains(got[1], `"throttle_reasons_active":"0x0000000000000000"`) {
		t.Fatalf("line 2 = %s", got[1])
	}
	if strings.Contains(got[0], "throttle_field") {
		t.Fatalf("no .active column was read, so no throttle_field: %s", got[0])
	}
	note := strings.Join(res.Notes, "\n")
	for _, s := range []string{"composed from the per-reason columns sw_power_cap, hw_slowdown, sw_thermal_slowdown", "gpu_idle", "hw_power_brake_slowdown"} {
		if !strings.Contains(note, s) {
			t.Fatalf("notes %q lack %q", note, s)
		}
	}
	if len(res.Filled) != 9 {
		t.Fatalf("filled %d stand-ins, want 8 and the zone: %q", len(res.Filled), res.Filled)
	}
}

// The power-management keys are written from their columns, in the
// documented order; counters are integers in µs.
func TestConvertPowerManagementColumns(t *testing.T) {
	o := base()
	o.GPUUUID, o.GPUName, o.Driver, o.Persistence, o.PState, o.ClocksMaxSM, o.AppsClock = "GPU-d", "NVIDIA GH200 480GB", "590.48.01", "Enabled", "P0", 1980, "null"
	csv := "timestamp, clocks.sm [MHz], utilization.gpu [%], clocks_event_reasons.active, enforced.power.limit [W], module.enforced.power.limit [W], clocks_event_reasons_counters.sw_power_cap [us], clocks_event_reasons_counters.sync_boost [us], clocks_event_reasons_counters.sw_thermal_slowdown [us], clocks_event_reasons_counters.hw_thermal_slowdown [us], clocks_event_reasons_counters.hw_power_brake_slowdown [us]\n" +
		"2026/08/12 10:15:03.000, 1980 MHz, 90 %, 0x0000000000000000, 700.00 W, 1000.00 W, 91403239 us, 0 us, 12 us, 0 us, 0 us\n"
	res := convert(t, csv, o)
	got := lines(res)[0]
	want := `"throttle_field":"clocks_event_reasons.active","enforced_power_limit_w":700,"module_enforced_power_limit_w":1000,"event_counters_us":{"sw_power_cap":91403239,"sync_boost":0,"sw_thermal_slowdown":12,"hw_thermal_slowdown":0,"hw_power_brake_slowdown":0}}`
	if !strings.HasSuffix(got, want) {
		t.Fatalf("line = %s\nwant suffix %s", got, want)
	}
	f := res.GPUs[0]
	if !f.Counters || f.LimitW != 700 || f.LimitSource != "enforced.power.limit column" {
		t.Fatalf("facts = %+v", f)
	}
}

// A capture with only some counters writes those, names the missing ones,
// and reads the hw_power_brake spelling some scripts use.
func TestConvertPartialCounters(t *testing.T) {
	o := base()
	o.GPUUUID, o.GPUName, o.Driver, o.Persistence, o.PState, o.ClocksMaxSM, o.AppsClock, o.Throttle = "GPU-e", "g", "d", "Enabled", "P0", 3003, "null", "0x0000000000000000"
	csv := "timestamp, clocks.sm [MHz], utilization.gpu [%], clocks_event_reasons_counters.sw_power_cap [us], clocks_event_reasons_counters.hw_power_brake [us]\n" +
		"2026/08/12 10:15:03.000, 2470 MHz, 90 %, 5 us, 7 us\n"
	res := convert(t, csv, o)
	if got := lines(res)[0]; strings.Contains(got, `"event_counters_us"`) {
		t.Fatalf("line = %s: two counters of five written", got)
	}
	if n := strings.Join(res.Notes, "\n"); !strings.Contains(n, "without sync_boost, sw_thermal_slowdown, hw_thermal_slowdown no sample carries the object") {
		t.Fatalf("notes = %q", n)
	}
}

// Without a limit column no limit key is written; --limit-w supplies one
// and says so; power.limit is the software limit and is read only on request.
func TestConvertLimitOnlyFromColumnOrFlag(t *testing.T) {
	csv := "timestamp, index, uuid, name, driver_version, clocks.sm [MHz], clocks.max.sm [MHz], clocks.applications.graphics [MHz], clocks_event_reasons.active, persistence_mode, pstate, utilization.gpu [%], power.draw [W], power.limit [W]\n" +
		"2026/08/12 10:15:03.000, 0, GPU-f, NVIDIA H100 80GB HBM3, 570.86.15, 1410 MHz, 1980 MHz, 1755 MHz, 0x0000000000000004, Enabled, P0, 100 %, 699.50 W, 700.00 W\n"
	res := convert(t, csv, base())
	if strings.Contains(string(res.Stream), "enforced_power_limit_w") {
		t.Fatalf("power.limit was read as the enforced limit without --power-limit-is-enforced: %s", res.Stream)
	}
	if !strings.Contains(strings.Join(res.Ignored, "\n"), "power.limit [W] (the software limit") {
		t.Fatalf("ignored = %q", res.Ignored)
	}
	o := base()
	o.PowerLimitIsEnforced = true
	res = convert(t, csv, o)
	if !strings.Contains(string(res.Stream), `"enforced_power_limit_w":700}`) {
		t.Fatalf("stream = %s", res.Stream)
	}
	if !strings.Contains(strings.Join(res.Filled, "\n"), "--power-limit-is-enforced: the software limit, read as the enforced one") {
		t.Fatalf("filled = %q", res.Filled)
	}
	csv2 := strings.Replace(strings.Replace(csv, ", power.limit [W]", "", 1), ", 700.00 W\n", "\n", 1)
	o = base()
	o.LimitW = 700
	res = convert(t, csv2, o)
	if !strings.Contains(string(res.Stream), `"enforced_power_limit_w":700}`) {
		t.Fatalf("stream = %s", res.Stream)
	}
	if got := strings.Join(res.Filled, "\n"); !strings.Contains(got, "enforced_power_limit_w = 700 in every row (--limit-w; supplied, not in the capture)") {
		t.Fatalf("filled = %q", got)
	}
	f := res.GPUs[0]
	if f.MaxPowerW != 699.5 || f.LimitW != 700 || f.PowerCapBusy != 1 {
		t.Fatalf("facts = %+v", f)
	}
}

// Several GPUs: rows are kept in capture order, uuids come from the
// column or from --gpu-uuid in index order, --gpu selects one.
func TestConvertSeveralGPUs(t *testing.T) {
	o := base()
	o.GPUUUID, o.GPUName, o.Driver, o.Persistence, o.PState, o.ClocksMaxSM, o.AppsClock, o.Throttle = "GPU-0,GPU-1", "g", "d", "Enabled", "P0", 1980, "1980", "0x0000000000000000"
	csv := "timestamp,index,clocks.sm [MHz],utilization.gpu [%]\n" +
		"2026/07/21 15:28:38.512,0,1830,90\n2026/07/21 15:28:38.512,1,1830,91\n" +
		"2026/07/21 15:28:38.763,0,1815,89\n2026/07/21 15:28:38.763,1,1830,0\n"
	res := convert(t, csv, o)
	got := lines(res)
	if len(got) != 4 || !strings.Contains(got[1], `"gpu_index":1,"gpu_uuid":"GPU-1"`) || !strings.Contains(got[2], `"gpu_index":0,"gpu_uuid":"GPU-0"`) {
		t.Fatalf("stream = %q", got)
	}
	if len(res.GPUs) != 2 || res.GPUs[0].SMMin != 1815 || res.GPUs[1].Busy != 1 {
		t.Fatalf("facts = %+v %+v", res.GPUs[0], res.GPUs[1])
	}
	o.GPU = 1
	o.GPUUUID = "GPU-1"
	res = convert(t, csv, o)
	if got := lines(res); len(got) != 2 || strings.Contains(res.Stream2(), `"gpu_index":0`) {
		t.Fatalf("--gpu 1 kept %q", got)
	}
}

// Stream2 is the stream as a string (a test helper).
func (r *Result) Stream2() string { return string(r.Stream) }

// Every refusal names what is wrong, with the file and line for a value.
func TestConvertRefusals(t *testing.T) {
	full := func(o Options) Options {
		o.GPUUUID, o.GPUName, o.Driver, o.Persistence, o.PState, o.ClocksMaxSM, o.AppsClock, o.Throttle = "GPU-z", "g", "d", "Enabled", "P0", 1980, "1980", "0x0000000000000000"
		return o
	}
	hdr := "timestamp, clocks.sm [MHz], utilization.gpu [%], power.draw [W]\n"
	row := "2026/08/12 10:15:03.000, 1980 MHz, 90 %, 300 W\n"
	cases := []struct {
		name string
		csv  string
		o    Options
		want string
	}{
		{"no boot id", hdr + row, func() Options { o := full(base()); o.BootID = ""; return o }(), "boot_id: a capture has no boot id; give --boot-id"},
		{"no utilization", "timestamp, clocks.sm [MHz]\n2026/08/12 10:15:03.000, 1980\n", full(base()), "no utilization.gpu column"},
		{"no sm clock", "timestamp, utilization.gpu [%]\n2026/08/12 10:15:03.000, 90\n", full(base()), "no SM clock column"},
		{"zone-less time", hdr + row, func() Options { o := full(base()); o.TZ = ""; return o }(), `cap.csv:2: timestamp "2026/08/12 10:15:03.000" has no zone (nvidia-smi prints local time): give --tz`},
		{"flag and column", "timestamp, name, clocks.sm [MHz], utilization.gpu [%]\n2026/08/12 10:15:03.000, NVIDIA H100, 1980, 90\n", full(base()), "gpu_name is both a column and --gpu-name: give one"},
		{"missing stand-in", hdr + row, func() Options { o := full(base()); o.Persistence = ""; return o }(), "persistence_mode: no column and no --persistence"},
		{"no reason at all", hdr + row, func() Options { o := full(base()); o.Throttle = ""; return o }(), "throttle_reasons_active: no reason column"},
		{"N/A value", hdr + "2026/08/12 10:15:03.000, [N/A], 90 %, 300 W\n", full(base()), `cap.csv:2: sm_clock_mhz: "[N/A]" is not a number`},
		{"negative power", hdr + "2026/08/12 10:15:03.000, 1980 MHz, 90 %, -3 W\n", full(base()), `cap.csv:2: power_draw_w: "-3 W" is negative`},
		{"utilization over 100", hdr + "2026/08/12 10:15:03.000, 1980 MHz, 101 %, 3 W\n", full(base()), `utilization_gpu_pct: "101 %" is over 100`},
		{"time backwards", hdr + row + "2026/08/12 10:15:02.000, 1980 MHz, 90 %, 300 W\n", full(base()), "cap.csv:3: timestamp 2026-08-12T10:15:02.000Z of GPU 0 is not after the previous one (2026-08-12T10:15:03.000Z)"},
		{"short row", hdr + "2026/08/12 10:15:03.000, 1980 MHz, 90 %\n", full(base()), "cap.csv:2: 3 values, the header has 4 columns"},
		{"reason word", "timestamp, clocks.sm [MHz], utilization.gpu [%], clocks_event_reasons.sw_power_cap\n2026/08/12 10:15:03.000, 1980, 90, Yes\n", func() Options { o := full(base()); o.Throttle = ""; return o }(), `clocks_event_reasons.sw_power_cap: "Yes" is neither Active nor Not Active`},
		{"bad hex", "timestamp, clocks.sm [MHz], utilization.gpu [%], clocks_event_reasons.active\n2026/08/12 10:15:03.000, 1980, 90, 0xZZ\n", func() Options { o := full(base()); o.Throttle = ""; return o }(), `clocks_event_reasons.active: "0xZZ" is not a hex bit set`},
		{"counter not integer", "timestamp, clocks.sm [MHz], utilization.gpu [%], clocks_event_reasons_counters.sw_power_cap [us]\n2026/08/12 10:15:03.000, 1980, 90, 1.5 us\n", full(base()), `clocks_event_reasons_counters.sw_power_cap [us]: "1.5 us" is not an integer`},
		{"limit twice", "timestamp, clocks.sm [MHz], utilization.gpu [%], enforced.power.limit [W]\n2026/08/12 10:15:03.000, 1980, 90, 700 W\n", func() Options { o := full(base()); o.LimitW = 700; return o }(), "enforced.power.limit is a column; do not also give --limit-w"},
		{"uuids for GPUs", "timestamp, index, clocks.sm [MHz], utilization.gpu [%]\n2026/08/12 10:15:03.000, 0, 1980, 90\n2026/08/12 10:15:03.000, 1, 1980, 90\n", full(base()), "--gpu-uuid gives 1 uuids for 2 GPUs"},
		{"no timestamps", "clocks.sm [MHz], utilization.gpu [%]\n1980, 90\n", full(base()), "no timestamp column: give --start (RFC 3339) and --interval"},
		{"repeated field", "timestamp, clocks.sm [MHz], clocks.current.sm [MHz], utilization.gpu [%]\n2026/08/12 10:15:03.000, 1980, 1980, 90\n", full(base()), `column "clocks.current.sm [MHz]" repeats the field of column 2`},
		{"empty", hdr, full(base()), "cap.csv: no data rows"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Convert(strings.NewReader(c.csv), "cap.csv", c.o)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("err = %v, want %q", err, c.want)
			}
		})
	}
}

// A capture without timestamps is timed by --start and --interval, and
// that is reported as filled.
func TestConvertStartInterval(t *testing.T) {
	o := base()
	o.TZ = ""
	o.GPUUUID, o.GPUName, o.Driver, o.Persistence, o.PState, o.ClocksMaxSM, o.AppsClock, o.Throttle = "GPU-z", "g", "d", "Enabled", "P0", 1980, "1980", "0x0000000000000000"
	o.Start, o.Interval = "2026-08-12T10:00:00Z", 250e6
	res := convert(t, "clocks.sm [MHz], utilization.gpu [%]\n1980, 90\n1965, 91\n", o)
	got := lines(res)
	if !strings.HasPrefix(got[1], `{"t":"2026-08-12T10:00:00.250Z"`) {
		t.Fatalf("line 2 = %s", got[1])
	}
	if !strings.Contains(strings.Join(res.Filled, "\n"), "t = 2026-08-12T10:00:00Z + reading × 250ms (--start, --interval; the capture has no timestamps)") {
		t.Fatalf("filled = %q", res.Filled)
	}
}

// run writes PREFIX.samples.jsonl once and never replaces it.
func TestRunWritesOnce(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "cap.csv")
	csv := "timestamp, clocks.sm [MHz], utilization.gpu [%]\n2026/08/12 10:15:03.000, 1980 MHz, 90 %\n"
	if err := os.WriteFile(in, []byte(csv), 0o644); err != nil {
		t.Fatal(err)
	}
	prefix := filepath.Join(dir, "out", "r1")
	if err := os.MkdirAll(filepath.Dir(prefix), 0o755); err != nil {
		t.Fatal(err)
	}
	args := []string{"--out", prefix, "--boot-id", "b", "--tz", "UTC", "--gpu-uuid", "GPU-r", "--gpu-name", "g", "--driver", "d",
		"--persistence", "Enabled", "--pstate", "P0", "--clocks-max-sm", "1980", "--apps-clock", "1980", "--throttle", "0x0000000000000000", in}
	var out, errb bytes.Buffer
	if code := run(args, &out, &errb); code != exitOK {
		t.Fatalf("run = %d, stderr %s", code, errb.String())
	}
	data, err := os.ReadFile(prefix + ".samples.jsonl")
	if err != nil || !bytes.HasPrefix(data, []byte(`{"t":"2026-08-12T10:15:03.000Z","boot_id":"b"`)) {
		t.Fatalf("stream %q, %v", data, err)
	}
	if !strings.Contains(out.String(), "filled: persistence_mode = Enabled (--persistence; not in the capture)") {
		t.Fatalf("report = %s", out.String())
	}
	errb.Reset()
	if code := run(args, &out, &errb); code != exitError || !strings.Contains(errb.String(), "file exists") {
		t.Fatalf("second run = %d, stderr %q; want a refusal to replace", code, errb.String())
	}
	errb.Reset()
	if code := run([]string{"--out", prefix + ".samples.jsonl", in}, &out, &errb); code != exitUsage || !strings.Contains(errb.String(), "give the prefix") {
		t.Fatalf("suffix run = %d, %q", code, errb.String())
	}
}

// A not-available value in an optional column leaves that key out of the
// row and is named in a note; in the SM clock it is refused. The newer
// gpu.power.current_limit spelling is the enforced limit.
func TestConvertNotAvailable(t *testing.T) {
	o := base()
	o.GPUUUID, o.GPUName, o.Driver, o.Persistence, o.PState, o.ClocksMaxSM, o.AppsClock, o.Throttle = "GPU-z", "g", "d", "Enabled", "P0", 1980, "1980", "0x0000000000000000"
	csv := "timestamp, clocks.sm [MHz], utilization.gpu [%], temperature.gpu, gpu.power.current_limit [W], module.power.current_limit [W], clocks_event_reasons_counters.sw_power_cap [us]\n" +
		"2026/08/12 10:15:03.000, 1980 MHz, 90 %, [N/A], 700.00 W, [N/A], 12 us\n" +
		"2026/08/12 10:15:04.000, 1980 MHz, 90 %, 60, [Not Supported], [N/A], [N/A]\n"
	res := convert(t, csv, o)
	got := lines(res)
	if len(got) != 2 {
		t.Fatalf("want 2 samples, got %d", len(got))
	}
	if strings.Contains(got[0], "temperature_gpu_c") || !strings.Contains(got[1], `"temperature_gpu_c":60`) {
		t.Errorf("temperature: got %q", got)
	}
	if !strings.HasSuffix(got[0], `"enforced_power_limit_w":700}`) {
		t.Errorf("row 1: got %q", got[0])
	}
	if strings.Contains(got[1], "enforced_power_limit_w") || strings.Contains(got[1], "sw_power_cap") {
		t.Errorf("row 2 keeps a not-available value: %q", got[1])
	}
	for _, k := range []string{"module_enforced_power_limit_w"} {
		if strings.Contains(string(res.Stream), k) {
			t.Errorf("stream has %s, but every value was [N/A]", k)
		}
	}
	notes := strings.Join(res.Notes, "\n")
	for _, want := range []string{
		"temperature.gpu: not available in 1 of 2 rows; its key is left out of those rows",
		"module.power.current_limit [W]: not available in 2 of 2 rows",
		"gpu.power.current_limit [W]: not available in 1 of 2 rows",
		"clocks_event_reasons_counters.sw_power_cap [us]: not available in 1 of 2 rows",
	} {
		if !strings.Contains(notes, want) {
			t.Errorf("notes %q lack %q", notes, want)
		}
	}
	_, err := Convert(strings.NewReader("timestamp, clocks.sm [MHz], utilization.gpu [%]\n2026/08/12 10:15:03.000, [N/A], 90 %\n"), "cap.csv", o)
	if err == nil || !strings.Contains(err.Error(), `cap.csv:2: sm_clock_mhz: "[N/A]" is not a number`) {
		t.Fatalf("err = %v, want the SM clock refused", err)
	}
}
