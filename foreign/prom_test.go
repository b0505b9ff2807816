package foreign

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/clockgate/clockgate/clocks"
)

// t4Labels are the labels of a real dcgm-exporter scrape of a Tesla T4
// (testdata/foreign-real/dcgm-exporter/t4-scrape.txt).
func t4Labels(name string) map[string]string {
	return map[string]string{"__name__": name, "gpu": "0", "UUID": "GPU-960adb66-4b24-7335-74f2-f334f2220a84",
		"pci_bus_id": "00000000:00:1E.0", "device": "nvidia0", "modelName": "Tesla T4",
		"Hostname": "ip-10-180-14-93.eu-central-1.compute.internal", "DCGM_FI_DRIVER_VERSION": "570.195.03"}
}

// matrix builds a Prometheus API matrix answer: per metric, its values at
// the given scrape times (seconds since t0).
func matrix(t0 float64, series map[string][]float64, times []float64) []byte {
	type res struct {
		Metric map[string]string `json:"metric"`
		Values [][2]any          `json:"values"`
	}
	var out []res
	for _, name := range sortedNames(series) {
		r := res{Metric: t4Labels(name)}
		for i, v := range series[name] {
			r.Values = append(r.Values, [2]any{t0 + times[i], fmt.Sprint(v)})
		}
		out = append(out, r)
	}
	b, _ := json.Marshal(map[string]any{"status": "success", "data": map[string]any{"resultType": "matrix", "result": out}})
	return b
}

func sortedNames(m map[string][]float64) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	sortStrings(out)
	return out
}

func series(n int, f func(i int) float64) []float64 {
	out := make([]float64, n)
	for i := range out {
		out[i] = f(i)
	}
	return out
}

// TestPrometheusRawScrapes: raw scrapes (an instant query of a range
// selector) with a missed stretch in the middle keep the gap: the leg is
// clock.coverage, and the reason bitmask, max clock and enforced limit are
// read so nothing but the boot and persistence is unproven.
func TestPrometheusRawScrapes(t *testing.T) {
	var times []float64
	for i := 0; i < 40; i++ {
		times = append(times, float64(i))
	}
	for i := 0; i < 40; i++ {
		times = append(times, float64(100+i)) // 60 s without a scrape
	}
	n := len(times)
	data := matrix(1784422665.123, map[string][]float64{
		"DCGM_FI_DEV_SM_CLOCK":                 series(n, func(int) float64 { return 1590 }),
		"DCGM_FI_DEV_GPU_UTIL":                 series(n, func(int) float64 { return 97 }),
		"DCGM_FI_DEV_MAX_SM_CLOCK":             series(n, func(int) float64 { return 1590 }),
		"DCGM_FI_DEV_CLOCKS_EVENT_REASONS":     series(n, func(int) float64 { return 0 }),
		"DCGM_FI_DEV_ENFORCED_POWER_LIMIT":     series(n, func(int) float64 { return 70 }),
		"DCGM_FI_DEV_POWER_USAGE":              series(n, func(int) float64 { return 69.5 }),
		"DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION": series(n, func(i int) float64 { return 5e9 + float64(i)*70000 }),
		"DCGM_FI_DEV_MEMORY_TEMP":              series(n, func(int) float64 { return 0 }),
	}, times)
	res, leg := importLegData(t, FormatPrometheus, Options{RawScrapes: true}, "q.json", data)
	if res.Record.Window.SamplesTotal != 80 {
		t.Fatalf("samples %d, want 80 (a missed scrape is no sample)", res.Record.Window.SamplesTotal)
	}
	if got := strings.Join(res.Import.Unproven, " "); got != "clock.unproven_boot clock.unproven_persistence clock.unproven_static" {
		t.Errorf("unproven %s", got)
	}
	if res.Import.UnprovenWhy[clocks.CodeUnprovenStatic] != "no applications clock: clocks_applications_graphics_mhz is unproven and written null (log clocks.applications.graphics)" {
		t.Errorf("static %q", res.Import.UnprovenWhy[clocks.CodeUnprovenStatic])
	}
	want := "largest gap between samples 61.000 s > 3 × interval_s 1 s = 3.000 s: from 2026-07-19T00:58:24.123Z to 2026-07-19T00:59:25.123Z (line 41); the sampler did not read the GPU for that long"
	if got := reasonMap(leg)[clocks.CodeCoverage]; got != want {
		t.Errorf("coverage\n got %q\nwant %q", got, want)
	}
	bc := res.Import.BootCounters[0]
	if e := bc.Counters[clocks.EnergyCounter]; e[0] != 5e6 || e[1] != 5e6+79*70 {
		t.Errorf("energy %v J: DCGM's mJ not converted", e)
	}
}

// TestPrometheusQueryRange: the same file without --raw-scrapes is read as
// query_range steps, which may repeat a value across a gap:
// clock.unproven_coverage.
func TestPrometheusQueryRange(t *testing.T) {
	times := []float64{0, 15, 30}
	data := matrix(1784422665, map[string][]float64{
		"DCGM_FI_DEV_SM_CLOCK": {1590, 1590, 1590}, "DCGM_FI_DEV_GPU_UTIL": {90, 90, 90}}, times)
	res, err := Convert(FormatPrometheus, []Input{{Path: "q.json", Data: data}}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	want := "a query_range answer: its steps repeat the last value across a missed scrape, so a gap would read as samples (read raw scrapes: an instant query of metric[DURATION], --raw-scrapes)"
	if got := res.Import.UnprovenWhy[clocks.CodeUnprovenCoverage]; got != want {
		t.Errorf("unproven_coverage %q", got)
	}
}

// TestPrometheusRefusals: an unknown metric, a DCGM blank sentinel where a
// value is required, a scrape without utilization, a vector answer.
func TestPrometheusRefusals(t *testing.T) {
	times := []float64{0, 1}
	cases := []struct {
		name string
		data []byte
		want string
	}{
		{"unknown metric", matrix(1784422665, map[string][]float64{"DCGM_FI_DEV_SM_CLOCK": {1590, 1590}, "DCGM_FI_DEV_TURBO": {1, 1}}, times),
			`q.json:2: unknown metric "DCGM_FI_DEV_TURBO" (series 2)`},
		{"blank sentinel", matrix(1784422665, map[string][]float64{"DCGM_FI_DEV_SM_CLOCK": {1590, 2147483632}, "DCGM_FI_DEV_GPU_UTIL": {90, 90}}, times),
			`q.json:2:2: result[1] DCGM_FI_DEV_SM_CLOCK at 2026-07-19T00:57:46Z: 2.147483632e+09 is a DCGM blank sentinel where a value is required`},
		{"no utilization", matrix(1784422665, map[string][]float64{"DCGM_FI_DEV_SM_CLOCK": {1590, 1590}}, times),
			`q.json:1:1: scrape at 2026-07-19T00:57:45Z has no DCGM_FI_DEV_GPU_UTIL: enable it, or pass --busy-above-mhz N`},
		{"vector answer", []byte(`{"status":"success","data":{"resultType":"vector","result":[]}}`),
			`q.json: resultType "vector", want matrix (a range selector's raw samples, or query_range)`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Convert(FormatPrometheus, []Input{{Path: "q.json", Data: c.data}}, Options{RawScrapes: true})
			if err == nil || err.Error() != c.want {
				t.Errorf("err\n got %v\nwant %s", err, c.want)
			}
		})
	}
}

// TestPrometheusNodeBootTime: node_boot_time_seconds from the same
// Prometheus is a boot identity; the leg carries no clock.unproven_boot.
func TestPrometheusNodeBootTime(t *testing.T) {
	times := []float64{0, 1}
	data := matrix(1784422665, map[string][]float64{"DCGM_FI_DEV_SM_CLOCK": {1590, 1590}, "DCGM_FI_DEV_GPU_UTIL": {90, 90},
		"node_boot_time_seconds": {1784400000, 1784400000}}, times)
	res, err := Convert(FormatPrometheus, []Input{{Path: "q.json", Data: data}}, Options{RawScrapes: true})
	if err != nil {
		t.Fatal(err)
	}
	if res.Record.BootID != `node_boot_time_seconds{instance=""} 1784400000` {
		t.Errorf("boot id %q", res.Record.BootID)
	}
	for _, c := range res.Import.Unproven {
		if c == clocks.CodeUnprovenBoot {
			t.Errorf("unproven_boot with node_boot_time_seconds")
		}
	}
}

func importLegData(t *testing.T, format string, o Options, name string, data []byte) (*Result, *clocks.Leg) {
	t.Helper()
	res, err := Convert(format, []Input{{Path: name, Data: data}}, o)
	if err != nil {
		t.Fatal(err)
	}
	return res, writeAndJudge(t, t.TempDir(), "r1", res)
}

// TestDCGMTableIsTheCountersCSVs: every field dcgm-exporter's default and
// DCP counter lists name, enabled or commented out, is in the metric
// table, and each one read is read in the unit the list states.
func TestDCGMTableIsTheCountersCSVs(t *testing.T) {
	for _, name := range []string{"default-counters.csv", "dcp-metrics-included.csv"} {
		data, err := os.ReadFile(filepath.Join("..", "testdata", "foreign-real", "dcgm-exporter", name))
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for i, line := range strings.Split(string(data), "\n") {
			line = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(line), "#"))
			if !strings.HasPrefix(line, "DCGM_FI_") {
				continue
			}
			parts := strings.SplitN(line, ",", 3)
			field, kind := strings.TrimSpace(parts[0]), strings.TrimSpace(parts[1])
			if kind == "label" {
				continue
			}
			n++
			m, ok := dcgmMetrics[field]
			if !ok {
				t.Errorf("%s:%d: %s is not in the metric table", name, i+1, field)
				continue
			}
			help := parts[2]
			if j := strings.Index(help, "(in "); j >= 0 && m.role != roleIgnored {
				unit := help[j+4 : strings.Index(help[j:], ")")+j]
				if unit != m.unit {
					t.Errorf("%s:%d: %s is in %s, the table reads %s", name, i+1, field, unit, m.unit)
				}
			}
		}
		if n < 20 {
			t.Errorf("%s: %d fields read", name, n)
		}
	}
}

// TestPrometheusNodeRebooted: node_boot_time_seconds that changes within
// the window is a reboot: no boot identity, clock.unproven_boot says why.
func TestPrometheusNodeRebooted(t *testing.T) {
	data := matrix(1784422665, map[string][]float64{"DCGM_FI_DEV_SM_CLOCK": {1590, 1590}, "DCGM_FI_DEV_GPU_UTIL": {90, 90},
		"node_boot_time_seconds": {1784400000, 1784422665.5}}, []float64{0, 1})
	res, err := Convert(FormatPrometheus, []Input{{Path: "q.json", Data: data}}, Options{RawScrapes: true})
	if err != nil {
		t.Fatal(err)
	}
	want := "no boot id: node_boot_time_seconds changed within the window (a reboot); proven across legs only by counter continuity"
	if res.Record.BootID != clocks.Unproven || res.Import.UnprovenWhy[clocks.CodeUnprovenBoot] != want {
		t.Errorf("boot id %q, unproven_boot %q", res.Record.BootID, res.Import.UnprovenWhy[clocks.CodeUnprovenBoot])
	}
}
