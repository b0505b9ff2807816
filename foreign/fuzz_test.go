package foreign

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

// fuzzConvert converts data in format and holds that it converts or is
// refused, never panics, and that a conversion has a stream, a record and
// import.json.
func fuzzConvert(t *testing.T, format string, data []byte, o Options) {
	res, err := Convert(format, []Input{{Path: "f", Data: data}}, o)
	if err != nil {
		return
	}
	if res.Record == nil || res.Import == nil || len(res.Stream) == 0 {
		t.Fatalf("converted without a record, import.json or stream")
	}
	if res.Record.Window.SamplesTotal == 0 {
		t.Fatalf("a record of no samples")
	}
}

func seed(f *testing.F, paths ...string) {
	for _, p := range paths {
		data, err := os.ReadFile(filepath.Join("..", "testdata", p))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
}

// FuzzSMICSV: any bytes read as an nvidia-smi CSV log convert or are
// refused, never a panic.
func FuzzSMICSV(f *testing.F) {
	seed(f, "smi-real/h100-590-query-gpu-idle-load/capture.csv", "foreign-real/smi-csv-units/capture.csv")
	f.Add(smiLog(smiHead, smiRow("2026/07/18 17:00:00.000", 0, "1980", "50"), smiRow("2026/07/18 17:00:01.000", 0, "1980 MHz", "50 %")))
	f.Fuzz(func(t *testing.T, data []byte) {
		fuzzConvert(t, FormatSMICSV, data, Options{TZ: time.UTC})
	})
}

// FuzzDmon: any bytes read as nvidia-smi dmon output convert or are
// refused, never a panic.
func FuzzDmon(f *testing.F) {
	seed(f, "foreign-real/dmon-535-mutc/capture.txt")
	f.Fuzz(func(t *testing.T, data []byte) {
		fuzzConvert(t, FormatDmon, data, Options{TZ: time.UTC, Start: time.Unix(0, 0), Interval: time.Second})
	})
}

// FuzzPrometheus: any bytes read as a Prometheus API answer convert or are
// refused, never a panic.
func FuzzPrometheus(f *testing.F) {
	f.Add(matrix(1784422665.123, map[string][]float64{"DCGM_FI_DEV_SM_CLOCK": {1590, 1590}, "DCGM_FI_DEV_GPU_UTIL": {90, 0},
		"DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION": {5e9, 5.1e9}, "DCGM_FI_DEV_CLOCKS_EVENT_REASONS": {0, 4}}, []float64{0, 1}))
	f.Fuzz(func(t *testing.T, data []byte) {
		fuzzConvert(t, FormatPrometheus, data, Options{RawScrapes: true})
	})
}

// FuzzAMDCSV: any bytes read as an amd-smi metric or monitor CSV convert
// or are refused, never a panic.
func FuzzAMDCSV(f *testing.F) {
	seed(f, "foreign-amd/metric-mi325x-2gpu.csv")
	f.Add(smiLog(amdHead, amdRow(1772939616, 0, "2100", "2090", "1"), amdRow(1772939617, 0, "2100", "N/A", "2")))
	f.Add(smiLog("timestamp,gpu,power_usage,gfx,gfx_clock,pviol", "1740686195,0,640,100,2100,0", "1740686196,0,640,100,2080,12.5"))
	f.Fuzz(func(t *testing.T, data []byte) {
		fuzzConvert(t, FormatAMDCSV, data, Options{Start: time.Unix(0, 0), Interval: time.Second})
	})
}
