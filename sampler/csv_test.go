package sampler

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/clockgate/clockgate/clocks"
)

// csvGB10Fields and csvGB10Line are the design document's live read-only sample
// from dgx.casa (GB10, driver 580.159.03), verbatim, with the fields it was
// queried with. It has no uuid and no utilization.gpu column.
var (
	csvGB10Fields = []string{"index", "name", "driver_version", "clocks.sm", "clocks.max.sm",
		"clocks.applications.graphics", "clocks_throttle_reasons.active", "persistence_mode", "pstate"}
	csvGB10Line = "0, NVIDIA GB10, 580.159.03, 2190 MHz, 3003 MHz, 2418 MHz, 0x0000000000000000, Enabled, P0"
)

// The H100 pair below is synthetic: lines in the shape a 590 driver prints
// for the canonical query (noheader,nounits), one idle and one busy. They are
// not a capture from a real box.
var (
	csvH100Fields = QueryFields(FieldEventReasons)
	csvH100Idle   = "0, GPU-7f3a9c2e-5b1d-4e8f-a6c4-2d9e0b8f1a37, NVIDIA H100 80GB HBM3, 590.44.01, 345, 1980, [Requested functionality has been deprecated], 0x0000000000000001, Enabled, P0, 0"
	csvH100Busy   = "0, GPU-7f3a9c2e-5b1d-4e8f-a6c4-2d9e0b8f1a37, NVIDIA H100 80GB HBM3, 590.44.01, 1980, 1980, [Requested functionality has been deprecated], 0x0000000000000000, Enabled, P0, 100"
	// csvH100Header is the header nvidia-smi prints for the canonical query
	// with --format=csv.
	csvH100Header = "index, uuid, name, driver_version, clocks.current.sm [MHz], clocks.max.sm [MHz], clocks.applications.graphics [MHz], clocks_event_reasons.active, persistence_mode, pstate, utilization.gpu [%]"
)

var csvT0 = time.Date(2026, 8, 12, 10, 15, 3, 123456789, time.UTC)

func TestCSVGB10LineParsesButIsNoSample(t *testing.T) {
	r, err := ParseCSVLine(csvGB10Fields, csvGB10Line)
	if err != nil {
		t.Fatalf("ParseCSVLine(GB10): %v", err)
	}
	if r.Index != 0 || r.Name != "NVIDIA GB10" || r.DriverVersion != "580.159.03" ||
		r.SMClockMHz != 2190 || r.ClocksMaxSMMHz != 3003 || r.ClocksApplicationsGraphicsMHz == nil ||
		*r.ClocksApplicationsGraphicsMHz != 2418 || r.ThrottleReasonsActive != "0x0000000000000000" ||
		r.ThrottleField != FieldThrottleReasons || r.PersistenceMode != "Enabled" || r.PState != "P0" {
		t.Errorf("GB10 reading = %+v", r)
	}
	if r.Has(FieldUUID) || r.Has(FieldUtilizationGPU) || !r.Has(FieldEventReasons) {
		t.Errorf("Has: uuid %v, utilization.gpu %v, either throttle spelling %v", r.Has(FieldUUID), r.Has(FieldUtilizationGPU), r.Has(FieldEventReasons))
	}
	_, err = r.Sample(csvT0, "13dc5579-455c-45c8-8e4d-d09c457fa826")
	const want = "missing required column(s): uuid, utilization.gpu"
	if err == nil || err.Error() != want {
		t.Fatalf("Sample(GB10) error = %v, want %q", err, want)
	}
}

func TestCSVH100PairMakesSamples(t *testing.T) {
	const boot = "13dc5579-455c-45c8-8e4d-d09c457fa826"
	cases := []struct {
		name, line string
		want       string
	}{
		{"idle", csvH100Idle, `{"t":"2026-08-12T10:15:03.123Z","boot_id":"` + boot + `","gpu_index":0,"gpu_uuid":"GPU-7f3a9c2e-5b1d-4e8f-a6c4-2d9e0b8f1a37","gpu_name":"NVIDIA H100 80GB HBM3","driver_version":"590.44.01","sm_clock_mhz":345,"clocks_max_sm_mhz":1980,"clocks_applications_graphics_mhz":null,"throttle_reasons_active":"0x0000000000000001","persistence_mode":"Enabled","pstate":"P0","utilization_gpu_pct":0,"throttle_field":"clocks_event_reasons.active"}`},
		{"busy", csvH100Busy, `{"t":"2026-08-12T10:15:03.123Z","boot_id":"` + boot + `","gpu_index":0,"gpu_uuid":"GPU-7f3a9c2e-5b1d-4e8f-a6c4-2d9e0b8f1a37","gpu_name":"NVIDIA H100 80GB HBM3","driver_version":"590.44.01","sm_clock_mhz":1980,"clocks_max_sm_mhz":1980,"clocks_applications_graphics_mhz":null,"throttle_reasons_active":"0x0000000000000000","persistence_mode":"Enabled","pstate":"P0","utilization_gpu_pct":100,"throttle_field":"clocks_event_reasons.active"}`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r, err := ParseCSVLine(csvH100Fields, c.line)
			if err != nil {
				t.Fatal(err)
			}
			s, err := r.Sample(csvT0, boot)
			if err != nil {
				t.Fatal(err)
			}
			got := string(s.AppendJSON(nil))
			if got != c.want {
				t.Fatalf("sample\n got %s\nwant %s", got, c.want)
			}
			// The line must read back as a valid stream sample.
			back, err := clocks.ParseSample([]byte(got))
			if err != nil {
				t.Fatalf("ParseSample: %v", err)
			}
			if back.Idle() != (c.name == "idle") {
				t.Errorf("Idle() = %v", back.Idle())
			}
		})
	}
}

func TestCSVHeaderMapsToCanonicalFields(t *testing.T) {
	fields, err := ParseCSVHeader(csvH100Header)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(fields, ",") != strings.Join(csvH100Fields, ",") {
		t.Fatalf("header fields = %v, want %v", fields, csvH100Fields)
	}
	// A hand capture with units, read through its own header.
	line := "0, GPU-7f3a9c2e-5b1d-4e8f-a6c4-2d9e0b8f1a37, NVIDIA H100 80GB HBM3, 590.44.01, 1980 MHz, 1980 MHz, [Requested functionality has been deprecated], 0x0000000000000000, Enabled, P0, 97 %"
	r, err := ParseCSVLine(fields, line)
	if err != nil {
		t.Fatal(err)
	}
	if r.SMClockMHz != 1980 || r.UtilizationGPUPct != 97 || r.ClocksApplicationsGraphicsMHz != nil {
		t.Errorf("reading = %+v", r)
	}

	aliases, err := ParseCSVHeader("index, gpu_uuid, gpu_name, clocks.applications.gr [MHz], clocks_throttle_reasons.active, clocks.current.memory [MHz], power.draw [W], temperature.gpu")
	if err != nil {
		t.Fatal(err)
	}
	want := "index,uuid,name,clocks.applications.graphics,clocks_throttle_reasons.active,clocks.mem,power.draw,temperature.gpu"
	if strings.Join(aliases, ",") != want {
		t.Errorf("aliases = %v, want %s", aliases, want)
	}
	r, err = ParseCSVLine(aliases, "1, GPU-x, NVIDIA H100 80GB HBM3, 1755 MHz, 0x0000000000000004, 2619 MHz, 250.50 W, 47")
	if err != nil {
		t.Fatal(err)
	}
	if *r.ClocksMemMHz != 2619 || *r.PowerDrawW != 250.5 || *r.TemperatureGPUC != 47 || *r.ClocksApplicationsGraphicsMHz != 1755 || r.Index != 1 {
		t.Errorf("optional fields = mem %v power %v temp %v", *r.ClocksMemMHz, *r.PowerDrawW, *r.TemperatureGPUC)
	}
}

func TestCSVHeaderRefusals(t *testing.T) {
	cases := []struct{ header, want string }{
		{"index, timestamp, uuid", `header column 2: unknown nvidia-smi field "timestamp"`},
		{"index, clocks.sm, clocks.current.sm [MHz]", `header column 3: "clocks.current.sm" repeats "clocks.sm"`},
		{"index, clocks_event_reasons.active, clocks_throttle_reasons.active", `header column 3: "clocks_throttle_reasons.active" repeats "clocks_event_reasons.active"`},
		{"0, GPU-x, NVIDIA H100 80GB HBM3", `header column 1: unknown nvidia-smi field "0"`},
	}
	for _, c := range cases {
		_, err := ParseCSVHeader(c.header)
		if err == nil || err.Error() != c.want {
			t.Errorf("ParseCSVHeader(%q) = %v, want %q", c.header, err, c.want)
		}
	}
}

// TestCSVRefusals names each refusal by its field and quotes what nvidia-smi
// printed.
func TestCSVRefusals(t *testing.T) {
	base := strings.Split(csvH100Busy, ", ")
	col := map[string]int{}
	for i, f := range csvH100Fields {
		col[f] = i
	}
	with := func(field, value string) string {
		cells := append([]string(nil), base...)
		cells[col[field]] = value
		return strings.Join(cells, ", ")
	}
	cases := []struct {
		name, line, want string
	}{
		{"N/A clock", with("clocks.sm", "[N/A]"), `clocks.sm: nvidia-smi printed "[N/A]": no value (not available on this GPU or driver)`},
		{"bare N/A", with("clocks.max.sm", "N/A"), `clocks.max.sm: nvidia-smi printed "N/A": no value`},
		{"Not Supported", with("clocks.max.sm", "[Not Supported]"), `clocks.max.sm: nvidia-smi printed "[Not Supported]": the driver does not support this field on this GPU`},
		{"Unknown Error", with("utilization.gpu", "[Unknown Error]"), `utilization.gpu: nvidia-smi printed "[Unknown Error]": the driver failed to read it`},
		{"Insufficient Permissions", with("clocks_event_reasons.active", "[Insufficient Permissions]"), `clocks_event_reasons.active: nvidia-smi printed "[Insufficient Permissions]": reading it needs privileges this process lacks`},
		{"other bracketed token", with("pstate", "[GPU requires reset]"), `pstate: nvidia-smi printed "[GPU requires reset]": an nvidia-smi error token, not a value`},
		{"deprecated outside applications clock", with("clocks.sm", DeprecatedToken), `clocks.sm: nvidia-smi printed "[Requested functionality has been deprecated]": deprecated; only clocks.applications.graphics may be`},
		{"empty clock", with("clocks.sm", ""), `clocks.sm: nvidia-smi printed "": empty value`},
		{"empty uuid", with("uuid", ""), `uuid: nvidia-smi printed "": empty value`},
		{"zero clock", with("clocks.sm", "0"), `clocks.sm: nvidia-smi printed "0": want a clock in MHz, a positive integer`},
		{"negative clock", with("clocks.max.sm", "-1980"), `clocks.max.sm: nvidia-smi printed "-1980": want a clock in MHz, a positive integer`},
		{"fractional clock", with("clocks.sm", "1980.5"), `clocks.sm: nvidia-smi printed "1980.5": want a clock in MHz, a positive integer`},
		{"wrong unit", with("clocks.sm", "1980 %"), `clocks.sm: nvidia-smi printed "1980 %": want a clock in MHz`},
		{"applications clock N/A", with("clocks.applications.graphics", "[N/A]"), `clocks.applications.graphics: nvidia-smi printed "[N/A]": no value`},
		{"negative index", with("index", "-1"), `index: nvidia-smi printed "-1": want a GPU index, a non-negative integer`},
		{"utilization over 100", with("utilization.gpu", "101"), `utilization.gpu: nvidia-smi printed "101": want a percentage, an integer 0 to 100`},
		{"utilization fraction", with("utilization.gpu", "9.5 %"), `utilization.gpu: nvidia-smi printed "9.5 %": want a percentage`},
		{"throttle not hex", with("clocks_event_reasons.active", "0"), `clocks_event_reasons.active: nvidia-smi printed "0": want a hex bit set like 0x0000000000000000`},
		{"throttle too wide", with("clocks_event_reasons.active", "0x00000000000000000"), `clocks_event_reasons.active: nvidia-smi printed "0x00000000000000000": want a hex bit set`},
		{"persistence", with("persistence_mode", "Maybe"), `persistence_mode: nvidia-smi printed "Maybe": want Enabled or Disabled`},
		{"pstate", with("pstate", "P16"), `pstate: nvidia-smi printed "P16": want a performance state P0 to P15`},
		{"missing column", strings.Join(base[:10], ", "), "10 values for 11 queried fields (index, uuid, name, driver_version, clocks.sm, clocks.max.sm, clocks.applications.graphics, clocks_event_reasons.active, persistence_mode, pstate, utilization.gpu)"},
		{"extra column", csvH100Busy + ", 45", "12 values for 11 queried fields"},
		{"empty line", "", "1 values for 11 queried fields"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r, err := ParseCSVLine(csvH100Fields, c.line)
			if err == nil {
				t.Fatalf("ParseCSVLine accepted %q: %+v", c.line, r)
			}
			if !strings.Contains(err.Error(), c.want) {
				t.Fatalf("error = %q, want it to contain %q", err, c.want)
			}
		})
	}
}

func TestCSVOptionalFieldRefusals(t *testing.T) {
	fields := append(QueryFields(FieldEventReasons), FieldTemperatureGPU, FieldPowerDraw, FieldClocksMem)
	ok := csvH100Busy + ", 45, 312.45, 2619"
	r, err := ParseCSVLine(fields, ok)
	if err != nil {
		t.Fatal(err)
	}
	if *r.TemperatureGPUC != 45 || *r.PowerDrawW != 312.45 || *r.ClocksMemMHz != 2619 {
		t.Fatalf("optional = %v %v %v", *r.TemperatureGPUC, *r.PowerDrawW, *r.ClocksMemMHz)
	}
	cases := []struct{ tail, want string }{
		{", [N/A], 312.45, 2619", `temperature.gpu: nvidia-smi printed "[N/A]"`},
		{", 45, [Not Supported], 2619", `power.draw: nvidia-smi printed "[Not Supported]"`},
		{", 45, -3.0, 2619", `power.draw: nvidia-smi printed "-3.0": want a power in W, a non-negative number`},
		{", 45, 312.45 MHz, 2619", `power.draw: nvidia-smi printed "312.45 MHz": want a power in W`},
		{", 45, 312.45, 0", `clocks.mem: nvidia-smi printed "0": want a clock in MHz, a positive integer`},
		{", hot, 312.45, 2619", `temperature.gpu: nvidia-smi printed "hot": want a temperature in degrees C, a number`},
	}
	for _, c := range cases {
		_, err := ParseCSVLine(fields, csvH100Busy+c.tail)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("tail %q: error = %v, want %q", c.tail, err, c.want)
		}
	}
}

// The power fields of SPEC §10.1: limits in W, counters in µs, in either
// CSV form; a sample carries the counters only when all five are read, and
// a module limit only beside the GPU's own.
func TestCSVPowerFields(t *testing.T) {
	fields := append(QueryFields(FieldEventReasons), FieldPowerDraw, FieldEnforcedPowerLimit, FieldModulePowerLimit)
	fields = append(fields, CounterFields[:]...)
	r, err := ParseCSVLine(fields, csvH100Busy+", 699.12, 700.00, 900.00, 123456789, 0, 17, 0, 5")
	if err != nil {
		t.Fatal(err)
	}
	s, err := r.Sample(time.Unix(1, 0), "boot")
	if err != nil {
		t.Fatal(err)
	}
	if *s.EnforcedPowerLimitW != 700 || *s.ModuleEnforcedPowerLimitW != 900 ||
		*s.EventCountersUS != (clocks.Counters{SwPowerCap: 123456789, SwThermal: 17, HwPowerBrake: 5}) {
		t.Fatalf("sample %s", s.AppendJSON(nil))
	}
	if _, err := ParseCSVLine(fields, csvH100Busy+", 699.12 W, 700.00 W, 900.00 W, 123456789 us, 0 us, 17 us, 0 us, 5 us"); err != nil {
		t.Fatalf("unit-bearing form: %v", err)
	}
	for _, c := range []struct{ tail, want string }{
		{", 699.12, 0, 900.00, 1, 0, 17, 0, 5", `enforced.power.limit: nvidia-smi printed "0": want a power limit in W, a positive number`},
		{", 699.12, 700.00, [N/A], 1, 0, 17, 0, 5", `module.enforced.power.limit: nvidia-smi printed "[N/A]"`},
		{", 699.12, 700.00, 900.00, -1, 0, 17, 0, 5", `clocks_event_reasons_counters.sw_power_cap: nvidia-smi printed "-1": want a time in µs, a non-negative integer`},
		{", 699.12, 700.00, 900.00, 1, 0.5, 17, 0, 5", `clocks_event_reasons_counters.sync_boost: nvidia-smi printed "0.5"`},
		{", 699.12, 700.00, 900.00, 1, 0, 9007199254740993, 0, 5", `clocks_event_reasons_counters.sw_thermal_slowdown: nvidia-smi printed "9007199254740993"`},
	} {
		if _, err := ParseCSVLine(fields, csvH100Busy+c.tail); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("tail %q: error = %v, want %q", c.tail, err, c.want)
		}
	}
	// Four counters of five: none; a module limit alone: none.
	r, err = ParseCSVLine(append(QueryFields(FieldEventReasons), FieldModulePowerLimit, CounterFields[0], CounterFields[1], CounterFields[2], CounterFields[3]),
		csvH100Busy+", 900.00, 1, 2, 3, 4")
	if err != nil {
		t.Fatal(err)
	}
	if s, _ := r.Sample(time.Unix(1, 0), "boot"); s.EventCountersUS != nil || s.ModuleEnforcedPowerLimitW != nil {
		t.Fatalf("sample %s", s.AppendJSON(nil))
	}
}

func TestCSVQueryFieldRefusals(t *testing.T) {
	cases := []struct {
		fields []string
		want   string
	}{
		{[]string{"index", "clocks.gr"}, `query field 2: unknown nvidia-smi field "clocks.gr"`},
		{[]string{"index", "index"}, `query field 2: "index" repeats "index"`},
		{[]string{"clocks_throttle_reasons.active", "clocks_event_reasons.active"}, `query field 2: "clocks_event_reasons.active" repeats "clocks_throttle_reasons.active"`},
	}
	for _, c := range cases {
		_, err := ParseCSVLine(c.fields, "0, 0")
		if err == nil || err.Error() != c.want {
			t.Errorf("ParseCSVLine(%v) = %v, want %q", c.fields, err, c.want)
		}
	}
}

func TestCSVSampleNeedsTimeAndBoot(t *testing.T) {
	r, err := ParseCSVLine(csvH100Fields, csvH100Busy)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.Sample(time.Time{}, "b"); err == nil || err.Error() != "no time for the sample" {
		t.Errorf("zero time: %v", err)
	}
	if _, err := r.Sample(csvT0, ""); err == nil || err.Error() != "no boot id for the sample" {
		t.Errorf("empty boot id: %v", err)
	}
	// A throttle-spelled query records that spelling.
	old, err := ParseCSVLine(QueryFields(FieldThrottleReasons), csvH100Busy)
	if err != nil {
		t.Fatal(err)
	}
	s, err := old.Sample(csvT0.In(time.FixedZone("X", 3600)), "b")
	if err != nil {
		t.Fatal(err)
	}
	if s.ThrottleField != FieldThrottleReasons || s.T != "2026-08-12T10:15:03.123Z" {
		t.Errorf("ThrottleField %q, T %q", s.ThrottleField, s.T)
	}
	// Only the throttle column missing: named with both spellings.
	fields := QueryFields(FieldEventReasons)
	noThrottle := append(append([]string(nil), fields[:7]...), fields[8:]...)
	cells := strings.Split(csvH100Busy, ", ")
	line := strings.Join(append(append([]string(nil), cells[:7]...), cells[8:]...), ", ")
	r, err = ParseCSVLine(noThrottle, line)
	if err != nil {
		t.Fatal(err)
	}
	_, err = r.Sample(csvT0, "b")
	if want := "missing required column(s): clocks_event_reasons.active or clocks_throttle_reasons.active"; err == nil || err.Error() != want {
		t.Errorf("Sample without throttle: %v, want %q", err, want)
	}
}

func TestCSVQueryFieldsOrder(t *testing.T) {
	want := "index,uuid,name,driver_version,clocks.sm,clocks.max.sm,clocks.applications.graphics,clocks_throttle_reasons.active,persistence_mode,pstate,utilization.gpu"
	if got := strings.Join(QueryFields(FieldThrottleReasons), ","); got != want {
		t.Errorf("QueryFields = %s", got)
	}
	if got := strings.Join(OptionalQueryFields(), ","); got != "temperature.gpu,power.draw,clocks.mem,enforced.power.limit,module.enforced.power.limit,"+
		"clocks_event_reasons_counters.sw_power_cap,clocks_event_reasons_counters.sync_boost,clocks_event_reasons_counters.sw_thermal_slowdown,"+
		"clocks_event_reasons_counters.hw_thermal_slowdown,clocks_event_reasons_counters.hw_power_brake_slowdown,vbios_version,memory.used,"+
		"pcie.link.gen.gpucurrent,pcie.link.width.current,pcie.link.gen.max,pcie.link.width.max" {
		t.Errorf("OptionalQueryFields = %s", got)
	}
}

// TestCSVRefusesUnprintableText: text fields go into every stream line,
// so bytes JSON cannot carry, and control characters, are a refusal to
// sample, naming the field.
func TestCSVRefusesUnprintableText(t *testing.T) {
	for _, c := range []struct{ from, to, field string }{
		{"NVIDIA H100 80GB HBM3", "NVIDIA H100\xee", "name"},
		{"NVIDIA H100 80GB HBM3", "NVIDIA\x07H100", "name"},
		{"GPU-7f3a9c2e-5b1d-4e8f-a6c4-2d9e0b8f1a37", "GPU-\x7f", "uuid"},
		{"590.44.01", "590.44\u0080x", "driver_version"},
	} {
		line := strings.Replace(csvH100Busy, c.from, c.to, 1)
		_, err := ParseCSVLine(csvH100Fields, line)
		want := fmt.Sprintf("%s: nvidia-smi printed %q: want printable UTF-8 text", c.field, c.to)
		if err == nil || err.Error() != want {
			t.Errorf("%q: err %v, want %q", c.to, err, want)
		}
	}
}
