package sampler

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/clockgate/clockgate/clocks"
)

// FuzzAMDMetric holds the amd-smi parser to its contract on any answer:
// it never panics; a GPU object it reads gives values in range (a clock a
// positive number of MHz, the lowest XCD's the sample's SM clock, a
// utilization 0 to 100), never from an "N/A"; and the sample made of it is
// a stream line the strict stream parser reads back as the same sample.
func FuzzAMDMetric(f *testing.F) {
	for _, name := range []string{"rocm7-metric-2gpu-radeon.json", "rocm61-metric-power.json", "rocm7-static-limit.json"} {
		data, err := os.ReadFile(filepath.Join("testdata", "amd-smi-real", name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	one := `{"gpu": 0, "usage": {"gfx_activity": {"value": 97, "unit": "%"}}, "power": {"socket_power": {"value": 612.5, "unit": "W"}},
 "clock": {"gfx_0": {"clk": {"value": 2080, "unit": "MHz"}, "max_clk": {"value": 2100, "unit": "MHz"}},
  "gfx_1": {"clk": {"value": 2092, "unit": "MHz"}}, "gfx_2": {"clk": "N/A"}},
 "temperature": {"hotspot": {"value": 71, "unit": "C"}}, "perf_level": "AMDSMI_DEV_PERF_LEVEL_AUTO",
 "violation": {"ppt_accumulated": 5, "socket_thermal_accumulated": 0, "vr_thermal_accumulated": {"value": 1}, "hbm_thermal_accumulated": 0, "prochot_accumulated": 0}}`
	f.Add([]byte("[" + one + "]"))
	f.Add([]byte(`{"gpu_data": [` + one + `]}`))
	f.Add([]byte(`{"gpu_data": [` + strings.Replace(one, `"value": 97`, `"value": "N/A"`, 1) + `]}`))
	f.Add([]byte(`[` + strings.Replace(one, `"violation"`, `"throttle"`, 1) + `]`))
	f.Fuzz(func(t *testing.T, data []byte) {
		gs, err := amdGPUs(data)
		if err != nil {
			return
		}
		for _, g := range gs {
			m, err := parseAMDMetric(g, nil, "violation")
			if err != nil {
				if m != nil {
					t.Fatalf("a refused object gave a reading %+v", m)
				}
				continue
			}
			if m.activityPct < 0 || m.activityPct > 100 || m.maxMHz < 1 || len(m.clocks) == 0 || len(m.clocks) != len(m.xcds) ||
				m.perfLevel == "" || m.powerW < 0 || m.xcds[0] != 0 {
				t.Fatalf("reading out of range: %+v", m)
			}
			for _, c := range m.clocks {
				if c < 1 || c > amdMaxMHz {
					t.Fatalf("XCD clock %d", c)
				}
			}
			if strings.Contains(m.perfLevel, "N/A") {
				t.Fatalf("perf level %q", m.perfLevel)
			}
			// Read again against the XCDs it found: the same reading.
			again, err := parseAMDMetric(g, m.xcds, "violation")
			if err != nil || again.lowest() != m.lowest() {
				t.Fatalf("read against its own XCDs: %v", err)
			}
			s := &clocks.Sample{T: "2026-12-01T10:00:00.000Z", BootID: "13dc5579-455c-45c8-8e4d-d09c457fa826", GPUIndex: m.index,
				GPUUUID: "abff74a1", GPUName: "AMD Instinct MI300X", DriverVersion: "6.10.5", SMClockMHz: m.lowest(),
				ClocksMaxSMMHz: m.maxMHz, ThrottleReasonsActive: "0x0000000000000000", UtilizationGPUPct: m.activityPct,
				TemperatureGPUC: ptrTo(m.hotspotC), PowerDrawW: ptrTo(m.powerW), Vendor: clocks.VendorAMD,
				PerfLevel: m.perfLevel, XCDClocksMHz: m.clocks}
			line := s.AppendJSON(nil)
			back, err := clocks.ParseSample(line)
			if err != nil {
				t.Fatalf("%s: %v", line, err)
			}
			if string(back.AppendJSON(nil)) != string(line) {
				t.Fatalf("read back as %s, want %s", back.AppendJSON(nil), line)
			}
		}
		for _, g := range gs {
			if st, err := parseAMDStatic(g); err == nil && (!(st.capW > 0) || st.name == "" || st.driver == "" || st.name == "N/A") {
				t.Fatalf("static out of range: %+v", st)
			}
		}
		if gpus, err := amdListed(data); err == nil {
			for i, g := range gpus {
				if g.UUID == "" || g.UUID == "N/A" || i > 0 && g.Index <= gpus[i-1].Index {
					t.Fatalf("listing %+v", gpus)
				}
			}
		}
	})
}
