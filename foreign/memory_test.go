package foreign

import (
	"encoding/csv"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/clockgate/clockgate/clocks"
)

// peakBySharedTime is the memory record's peak computed apart from the
// import: the rows of one nvidia-smi query share its timestamp, so a
// reading is the rows of one timestamp, and its value their sum.
func peakBySharedTime(t *testing.T, path string) (peak float64, readings int) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	col := -1
	for i, h := range rows[0] {
		if strings.HasPrefix(strings.TrimSpace(h), "memory.used") {
			col = i
		}
	}
	if col < 0 {
		t.Fatalf("%s has no memory.used", path)
	}
	sums := map[string]float64{}
	for _, r := range rows[1:] {
		v, err := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(r[col]), " MiB"), 64)
		if err != nil {
			t.Fatal(err)
		}
		sums[r[0]] += v
	}
	for _, s := range sums {
		peak = max(peak, s)
	}
	return peak, len(sums)
}

// TestRealMemoryRecord: the memory record an import writes from logged GPU
// memory used, on real logs others wrote: the peak over readings of the
// sum over the leg's GPUs (as the sampler folds it), the host RSS not
// recorded, n the readings; the stream carries each sample's
// memory_used_mib, and the column map says what was read.
func TestRealMemoryRecord(t *testing.T) {
	for _, c := range []struct {
		dir  string
		gpus int
	}{
		{"h100-vllm-qwen3-8b-tp1", 1},
		{"a100-vllm-qwen3-8b-tp1", 1},
		{"h100-vllm-qwen3-30b-tp2-window", 2},
	} {
		t.Run(c.dir, func(t *testing.T) {
			path := filepath.Join("..", "testdata", "smi-real", c.dir, "capture.csv")
			res, _ := importLeg(t, t.TempDir(), FormatSMICSV, Options{TZ: zone(t, "-07:00"), TZName: "-07:00"}, path)
			peak, n := peakBySharedTime(t, path)
			if res.Memory == nil {
				t.Fatalf("no memory record: %s", res.MemoryWhy)
			}
			if res.Memory.PeakGPUMemoryMiB != peak || res.Memory.N != n || res.Memory.PeakHostRSSMiB != nil {
				t.Errorf("memory record %s, want peak %v over %d readings, host RSS null", res.Memory.JSON(), peak, n)
			}
			if c.gpus == 2 && peak <= 74940 {
				t.Errorf("a TP2 peak of %v MiB is one GPU's, not the sum of two", peak)
			}
			if res.Import.Columns["memory.used"] != "memory_used_mib" {
				t.Errorf("columns %v", res.Import.Columns)
			}
			first := strings.SplitN(string(res.Stream), "\n", 2)[0]
			if !strings.Contains(first, `"memory_used_mib":`) {
				t.Errorf("stream line without memory_used_mib: %s", first)
			}
		})
	}
	// The -lms log printed with units (23028 MiB), given the SM clock it
	// lacks and a busy utilization (it idled): "21 MiB" read as 21, one
	// GPU, five readings.
	data, err := os.ReadFile(filepath.Join("..", "testdata", "foreign-real", "smi-csv-units", "capture.csv"))
	if err != nil {
		t.Fatal(err)
	}
	fixed := strings.Replace(string(data), "timestamp, pstate,", "timestamp, clocks.sm [MHz], pstate,", 1)
	for _, ms := range []string{".977", ".981", ".986", ".990", ".095"} {
		fixed = strings.Replace(fixed, ms+", P8", ms+", 210 MHz, P8", 1)
	}
	fixed = strings.ReplaceAll(fixed, ", 0 %, 0 %,", ", 40 %, 0 %,")
	res, err := Convert(FormatSMICSV, []Input{{Path: "capture.csv", Data: []byte(fixed)}}, Options{TZ: time.UTC})
	if err != nil {
		t.Fatal(err)
	}
	if res.Memory == nil || string(res.Memory.JSON()) != `{"peak_gpu_memory_mib":21,"peak_host_rss_mib":null,"n":5}`+"\n" {
		t.Errorf("units log: %v (%s)", res.Memory, res.MemoryWhy)
	}
	// dmon -s m's fb column (MB, counted in MiB): 239, 74, 7, 478, 67, 7.
	res, _ = importLeg(t, t.TempDir(), FormatDmon, Options{TZ: time.UTC, TZName: "UTC"},
		filepath.Join("..", "testdata", "foreign-real", "dmon-535-mutc", "capture.txt"))
	if res.Memory == nil || string(res.Memory.JSON()) != `{"peak_gpu_memory_mib":478,"peak_host_rss_mib":null,"n":6}`+"\n" || res.Import.Columns["fb"] != "memory_used_mib" {
		t.Errorf("dmon: %v (%s), columns %v", res.Memory, res.MemoryWhy, res.Import.Columns)
	}
	// The amd-smi log was written without --mem-usage: no record, and
	// what to log.
	res, _ = importLeg(t, t.TempDir(), FormatAMDCSV, Options{GPU: "0,1,2,3"},
		filepath.Join("..", "testdata", "foreign-real", "amdsmi-metric-mi355x", "capture.csv"))
	if want := "the log has no GPU memory used; log the VRAM used (amd-smi metric --mem-usage --csv: used_vram; or amd-smi monitor -v --csv: vram_used)"; res.Memory != nil || res.MemoryWhy != want {
		t.Errorf("amd-smi without VRAM: %v, %q\nwant %q", res.Memory, res.MemoryWhy, want)
	}
}

// TestMemoryRecordEveryFormat: each format's memory used column or metric
// is read (DCGM_FI_DEV_FB_USED, amd-smi used_vram and vram_used included);
// a reading without it, or GPUs with unequal readings, give no record and
// say why; a log without it names what to log.
func TestMemoryRecordEveryFormat(t *testing.T) {
	// Prometheus: two GPUs, three scrapes; FB_USED sums 1000+2000,
	// 5000+100, 2500+2600.5 → the peak is 5100.5 of the second scrape.
	times := []float64{0, 1, 2}
	series := map[string][]float64{}
	for _, n := range []string{"DCGM_FI_DEV_SM_CLOCK", "DCGM_FI_DEV_GPU_UTIL"} {
		series[n] = []float64{1980, 1980, 1980}
	}
	series["DCGM_FI_DEV_GPU_UTIL"] = []float64{90, 90, 90}
	prom := promTwoGPUs(t, series, map[string][2][]float64{"DCGM_FI_DEV_FB_USED": {{1000, 5000, 2500}, {2000, 100, 2600.5}}}, times)
	res, err := Convert(FormatPrometheus, []Input{{Path: "q.json", Data: prom}}, Options{RawScrapes: true})
	if err != nil {
		t.Fatal(err)
	}
	if res.Memory == nil || string(res.Memory.JSON()) != `{"peak_gpu_memory_mib":5100.5,"peak_host_rss_mib":null,"n":3}`+"\n" {
		t.Errorf("prometheus: %v (%s)", res.Memory, res.MemoryWhy)
	}
	res, err = Convert(FormatPrometheus, []Input{{Path: "q.json", Data: promTwoGPUs(t, series, nil, times)}}, Options{RawScrapes: true})
	if err != nil {
		t.Fatal(err)
	}
	if want := "the log has no GPU memory used; " + clocks.ImportMemoryHint(FormatPrometheus); res.Memory != nil || res.MemoryWhy != want {
		t.Errorf("prometheus without FB_USED: %q", res.MemoryWhy)
	}

	// amd-smi metric --mem-usage (used_vram) and monitor -v (vram_used).
	for _, col := range []string{"used_vram", "vram_used"} {
		log := "timestamp,gpu,gfx_activity,gfx_0_clk," + col + "\n" +
			"1754000000,0,90,2100,1000\n1754000000,1,90,2100,3000\n" +
			"1754000001,0,90,2100,4000\n1754000001,1,90,2100,100\n"
		res, err := Convert(FormatAMDCSV, []Input{{Path: "a.csv", Data: []byte(log)}}, Options{})
		if err != nil {
			t.Fatal(err)
		}
		if res.Memory == nil || string(res.Memory.JSON()) != `{"peak_gpu_memory_mib":4100,"peak_host_rss_mib":null,"n":2}`+"\n" {
			t.Errorf("amd-smi %s: %v (%s)", col, res.Memory, res.MemoryWhy)
		}
	}

	// nvidia-smi CSV: a reading without memory used is no record.
	header := "timestamp, index, clocks.sm [MHz], utilization.gpu [%], memory.used [MiB]\n"
	res, err = Convert(FormatSMICSV, []Input{{Path: "s.csv", Data: []byte(header +
		"2026/07/18 17:00:00.000, 0, 1980 MHz, 50 %, 100 MiB\n2026/07/18 17:00:01.000, 0, 1980 MHz, 50 %, [N/A]\n")}}, Options{TZ: time.UTC})
	if err != nil {
		t.Fatal(err)
	}
	if want := "s.csv:3: GPU 0 gave no memory used; " + clocks.ImportMemoryHint(FormatSMICSV); res.Memory != nil || res.MemoryWhy != want {
		t.Errorf("[N/A] memory used: %v, %q", res.Memory, res.MemoryWhy)
	}
	// GPUs with unequal readings: no per-reading sum.
	res, err = Convert(FormatSMICSV, []Input{{Path: "s.csv", Data: []byte(header +
		"2026/07/18 17:00:00.000, 0, 1980 MHz, 50 %, 100 MiB\n2026/07/18 17:00:00.000, 1, 1980 MHz, 50 %, 100 MiB\n2026/07/18 17:00:01.000, 0, 1980 MHz, 50 %, 100 MiB\n")}}, Options{TZ: time.UTC})
	if err != nil {
		t.Fatal(err)
	}
	if want := "GPU 0 has 2 readings and GPU 1 1: the memory used cannot be summed over the GPUs reading by reading"; res.Memory != nil || res.MemoryWhy != want {
		t.Errorf("unequal readings: %v, %q", res.Memory, res.MemoryWhy)
	}
}

// promTwoGPUs is a matrix answer for GPUs 0 and 1 of one host: series
// give both GPUs the same values, perGPU each its own.
func promTwoGPUs(t *testing.T, series map[string][]float64, perGPU map[string][2][]float64, times []float64) []byte {
	t.Helper()
	type res struct {
		Metric map[string]string `json:"metric"`
		Values [][2]any          `json:"values"`
	}
	var out []res
	add := func(name string, gpu int, vs []float64) {
		r := res{Metric: map[string]string{"__name__": name, "gpu": strconv.Itoa(gpu), "UUID": "GPU-" + strconv.Itoa(gpu), "Hostname": "node-a"}}
		for i, v := range vs {
			r.Values = append(r.Values, [2]any{1754000000 + times[i], strconv.FormatFloat(v, 'f', -1, 64)})
		}
		out = append(out, r)
	}
	for gpu := range 2 {
		for _, name := range sortedNames(series) {
			add(name, gpu, series[name])
		}
		for name, vs := range perGPU {
			add(name, gpu, vs[gpu])
		}
	}
	b, err := json.Marshal(map[string]any{"status": "success", "data": map[string]any{"resultType": "matrix", "result": out}})
	if err != nil {
		t.Fatal(err)
	}
	return b
}
