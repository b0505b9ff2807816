package sampler

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/clockgate/clockgate/clocks"
	"github.com/clockgate/clockgate/strictjson"
)

// amdStep and amdConfig mirror testdata/fakeamdsmi's fakeamdsmi.json.
type amdStep struct {
	MHz      int                 `json:"mhz,omitempty"`
	Clocks   []int               `json:"clocks,omitempty"`
	Activity *int                `json:"activity,omitempty"`
	PowerW   *float64            `json:"power_w,omitempty"`
	HotspotC *float64            `json:"hotspot_c,omitempty"`
	UsedMB   *float64            `json:"used_mb,omitempty"`
	MaxClk   int                 `json:"max_clk,omitempty"`
	Perf     string              `json:"perf_level,omitempty"`
	Advance  map[string]uint64   `json:"advance,omitempty"`
	Reset    bool                `json:"reset,omitempty"`
	NA       []string            `json:"na,omitempty"`
	Drop     []string            `json:"drop,omitempty"`
	Bare     bool                `json:"bare_numbers,omitempty"`
	GPU      map[string]*amdStep `json:"gpu,omitempty"`
	Exit     int                 `json:"exit,omitempty"`
	Msg      string              `json:"msg,omitempty"`
	SleepMS  int                 `json:"sleep_ms,omitempty"`
	Raw      *string             `json:"raw,omitempty"`
	Twice    bool                `json:"twice,omitempty"`
	Skip     bool                `json:"skip,omitempty"`
}

type amdConfig struct {
	ROCm      string                     `json:"rocm,omitempty"`
	OldKey    bool                       `json:"old_partition_key,omitempty"`
	Partition map[string]json.RawMessage `json:"partition,omitempty"`
	GPUs      int                        `json:"gpus,omitempty"`
	XCDs      int                        `json:"xcds,omitempty"`
	Name      string                     `json:"market_name,omitempty"`
	Driver    string                     `json:"driver,omitempty"`
	CapW      any                        `json:"cap_w,omitempty"`
	Compute   string                     `json:"compute_partition,omitempty"`
	Memory    string                     `json:"memory_partition,omitempty"`
	GPUStatic map[string]map[string]any  `json:"gpu_static,omitempty"`
	UUIDs     map[string]string          `json:"uuids,omitempty"`
	List      *amdStep                   `json:"list,omitempty"`
	Static    *amdStep                   `json:"static,omitempty"`
	Plan      []*amdStep                 `json:"plan,omitempty"`
	Cycle     bool                       `json:"cycle,omitempty"`

	// The PCIe link (SPEC §12.2).
	PCIe         bool `json:"pcie,omitempty"`
	PCIeDegraded bool `json:"pcie_degraded,omitempty"`
}

var fakeAMDBuild struct {
	once sync.Once
	path string
	err  error
	out  []byte
}

// fakeAMDBinary builds testdata/fakeamdsmi once per test binary.
func fakeAMDBinary(t *testing.T) string {
	t.Helper()
	fakeAMDBuild.once.Do(func() {
		fakeAMDBuild.path = filepath.Join(testBin, "fakeamdsmi")
		cmd := exec.Command("go", "build", "-o", fakeAMDBuild.path, "./testdata/fakeamdsmi")
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		fakeAMDBuild.out, fakeAMDBuild.err = cmd.CombinedOutput()
	})
	if fakeAMDBuild.err != nil {
		t.Fatalf("building the fake amd-smi: %v\n%s", fakeAMDBuild.err, fakeAMDBuild.out)
	}
	return fakeAMDBuild.path
}

// installFakeAMD puts the fake, configured with cfg, at DIR/amd-smi in a
// directory of its own (a hard link, as installFakeSMI explains) and
// returns that path.
func installFakeAMD(t *testing.T, cfg amdConfig) string {
	t.Helper()
	dir := t.TempDir()
	path := filepath.Join(dir, "amd-smi")
	if err := os.Link(fakeAMDBinary(t), path); err != nil {
		t.Fatal(err)
	}
	data, err := json.Marshal(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "fakeamdsmi.json"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// amdCalls returns the argument lists the fake was called with.
func amdCalls(t *testing.T, path string) []string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(filepath.Dir(path), "fakeamdsmi.log"))
	if err != nil {
		t.Fatal(err)
	}
	return strings.Split(strings.TrimSpace(string(data)), "\n")
}

func newAMD(t *testing.T, cfg amdConfig, gpu string) (*AMDSMI, string, error) {
	t.Helper()
	path := installFakeAMD(t, cfg)
	sel := DefaultSelection()
	if gpu != "" {
		var err error
		if sel, err = ParseGPUFlag(gpu); err != nil {
			t.Fatal(err)
		}
	}
	a, err := NewAMDSMI(context.Background(), AMDSMIOptions{Path: path, GPUs: sel, Logf: t.Logf})
	return a, path, err
}

func readAMD(t *testing.T, a *AMDSMI) []*clocks.Sample {
	t.Helper()
	ss, err := a.Read(context.Background(), time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC), "13dc5579-455c-45c8-8e4d-d09c457fa826")
	if err != nil {
		t.Fatal(err)
	}
	return ss
}

func TestAMDSMIReadsROCm7(t *testing.T) {
	t.Parallel()
	cfg := amdConfig{GPUs: 2, Plan: []*amdStep{
		{MHz: 2100},
		{MHz: 2080, GPU: map[string]*amdStep{"1": {MHz: 2120}}},
		{MHz: 2040, Advance: map[string]uint64{"ppt_accumulated": 12}},
		{MHz: 2010, Advance: map[string]uint64{"socket_thermal_accumulated": 3, "prochot_accumulated": 1}},
		{MHz: 2010, Advance: map[string]uint64{"hbm_thermal_accumulated": 1, "vr_thermal_accumulated": 2}},
	}}
	a, path, err := newAMD(t, cfg, "all")
	if err != nil {
		t.Fatal(err)
	}
	if want := "amd-smi (" + path + ") GPUs 0,1, violations from metric --violation"; a.Name() != want {
		t.Errorf("name %q, want %q", a.Name(), want)
	}
	ss := readAMD(t, a)
	if len(ss) != 2 || ss[0].GPUIndex != 0 || ss[1].GPUIndex != 1 {
		t.Fatalf("samples %+v", ss)
	}
	s := ss[0]
	line := string(s.AppendJSON(nil))
	for _, want := range []string{`"gpu_uuid":"abff74a1-0000-1000-80d1-3c23a9580000"`, `"gpu_name":"AMD Instinct MI300X"`,
		`"driver_version":"6.10.5"`, `"sm_clock_mhz":2080`, `"clocks_max_sm_mhz":2100`, `"clocks_applications_graphics_mhz":null`,
		`"throttle_reasons_active":"0x0000000000000000"`, `"persistence_mode":null`, `"pstate":null`, `"utilization_gpu_pct":97`,
		`"temperature_gpu_c":71`, `"power_draw_w":612`, `"enforced_power_limit_w":750`, `"throttle_field":"amd-smi metric --violation"`,
		`"vendor":"amd"`, `"perf_level":"AUTO"`, `"memory_partition":"NPS1"`, `"xcd_clocks_mhz":[2080,2092,2110,2088,2121,2085,2099,2106]`} {
		if !strings.Contains(line, want) {
			t.Errorf("sample %s lacks %s", line, want)
		}
	}
	// The line is a valid stream line.
	if _, err := clocks.ParseSample([]byte(line)); err != nil {
		t.Fatalf("%s: %v", line, err)
	}
	if ss[1].SMClockMHz != 2120 || ss[1].GPUUUID != "bcff74a1-0000-1000-80d1-3c23a9580001" {
		t.Errorf("GPU 1: %+v", ss[1])
	}
	for i, want := range []string{"0x0000000000000004", "0x0000000000000048", "0x0000000000000040"} {
		ss = readAMD(t, a)
		for _, s := range ss {
			if s.ThrottleReasonsActive != want {
				t.Errorf("reading %d GPU %d: bits %s, want %s", i+2, s.GPUIndex, s.ThrottleReasonsActive, want)
			}
		}
	}
	// Once at start: list, static, the probe; then one metric call per
	// reading for both GPUs, and nothing else.
	calls := amdCalls(t, path)
	metric := "metric -g 0 1 --usage --power --clock --temperature --perf-level --mem-usage --pcie --violation --energy --json"
	want := []string{"list --json", "static --asic --bus --driver --limit --partition --json", metric, metric, metric, metric, metric}
	if strings.Join(calls, "\n") != strings.Join(want, "\n") {
		t.Errorf("calls:\n%s\nwant:\n%s", strings.Join(calls, "\n"), strings.Join(want, "\n"))
	}
}

func TestAMDSMIReadsROCm6(t *testing.T) {
	t.Parallel()
	var logs []string
	path := installFakeAMD(t, amdConfig{ROCm: "6", Plan: []*amdStep{{}, {Advance: map[string]uint64{"ppt_accumulated": 1}}}})
	a, err := NewAMDSMI(context.Background(), AMDSMIOptions{Path: path, Logf: func(f string, args ...any) { logs = append(logs, f) }})
	if err != nil {
		t.Fatal(err)
	}
	if a.ViolationFlag() != "--throttle" || !strings.HasSuffix(a.Name(), "violations from metric --throttle") {
		t.Errorf("flag %s, name %s", a.ViolationFlag(), a.Name())
	}
	if !strings.Contains(strings.Join(logs, "\n"), "amd-smi: metric does not know %s; asking for %s") {
		t.Errorf("logs %q", logs)
	}
	ss := readAMD(t, a)
	if ss[0].ThrottleReasonsActive != "0x0000000000000004" || ss[0].ThrottleField != "amd-smi metric --throttle" || *ss[0].EnforcedPowerLimitW != 750 {
		t.Errorf("sample %+v", ss[0])
	}
	calls := amdCalls(t, path)
	if len(calls) != 5 || !strings.HasSuffix(calls[2], "--violation --energy --json") || !strings.HasSuffix(calls[3], "--throttle --energy --json") {
		t.Errorf("calls %q", calls)
	}
}

func TestAMDSMIRefusesAtStart(t *testing.T) {
	t.Parallel()
	na := "N/A"
	for _, tc := range []struct {
		name string
		cfg  amdConfig
		gpu  string
		want string
		sel  bool
	}{
		{"compute partition CPX", amdConfig{Compute: "CPX"}, "", "GPU 0 (abff74a1-0000-1000-80d1-3c23a9580000) is in compute partition mode CPX: " + partitionAdvice, true},
		{"compute partition DPX on the GPU asked for", amdConfig{GPUs: 2, GPUStatic: map[string]map[string]any{"1": {"compute_partition": "DPX"}}}, "1",
			"GPU 1 (bcff74a1-0000-1000-80d1-3c23a9580001) is in compute partition mode DPX: " + partitionAdvice, true},
		{"compute partition CPX as amd-smi 25 and 26 print it (accelerator_partition)", amdConfig{Compute: "CPX"}, "", "GPU 0 (abff74a1-0000-1000-80d1-3c23a9580000) is in compute partition mode CPX: " + partitionAdvice, true},
		{"compute partition CPX as older amd-smi prints it (compute_partition)", amdConfig{Compute: "CPX", OldKey: true}, "", "GPU 0 (abff74a1-0000-1000-80d1-3c23a9580000) is in compute partition mode CPX: " + partitionAdvice, true},
		{"compute partition CPX, ROCm 6", amdConfig{ROCm: "6", Compute: "CPX"}, "", "GPU 0 (abff74a1-0000-1000-80d1-3c23a9580000) is in compute partition mode CPX: " + partitionAdvice, true},
		{"compute partition not a string", amdConfig{GPUStatic: map[string]map[string]any{"0": {"compute_partition": 3}}}, "", amdStaticWhat + `: GPU 0: partition.accelerator_partition: want a string, found number 3`, false},
		{"socket power cap N/A", amdConfig{CapW: "N/A"}, "", amdStaticWhat + `: GPU 0: limit.ppt0.socket_power_limit: "N/A", where every sample needs a number`, false},
		{"socket power cap N/A, ROCm 6", amdConfig{ROCm: "6", CapW: "N/A"}, "", amdStaticWhat + `: GPU 0: limit.socket_power: "N/A", where every sample needs a number`, false},
		{"market name N/A", amdConfig{GPUStatic: map[string]map[string]any{"0": {"market_name": "N/A"}}}, "", amdStaticWhat + `: GPU 0: asic.market_name: "N/A"`, false},
		{"no such GPU", amdConfig{GPUs: 2}, "2", "--gpu 2: there is no GPU 2 on this box", true},
		{"a partition's second device", amdConfig{GPUs: 2, UUIDs: map[string]string{"1": "abff74a1-0000-1000-80d1-3c23a9580000"},
			GPUStatic: map[string]map[string]any{"1": {"compute_partition": "N/A", "cap_w": "N/A"}}}, "1",
			"GPU 1 (abff74a1-0000-1000-80d1-3c23a9580000) shares its UUID with GPU 0: one physical GPU shown as several devices", true},
		{"a broken GPU the leg does not read", amdConfig{GPUs: 2, GPUStatic: map[string]map[string]any{"1": {"cap_w": "N/A"}}}, "0", "", false},
		{"a broken GPU the leg reads", amdConfig{GPUs: 2, GPUStatic: map[string]map[string]any{"1": {"cap_w": "N/A"}}}, "1",
			amdStaticWhat + `: GPU 1: limit.ppt0.socket_power_limit: "N/A"`, false},
		{"utilization N/A", amdConfig{Plan: []*amdStep{{NA: []string{"usage.gfx_activity"}}}}, "",
			`amd-smi metric -g 0 --violation: GPU 0: usage.gfx_activity: "N/A", where every sample needs a number; ` + amdDriverAdvice, false},
		{"accumulators N/A", amdConfig{Plan: []*amdStep{{NA: []string{"violation.ppt_accumulated"}}}}, "",
			`GPU 0: violation.ppt_accumulated: "N/A", where every sample needs a number; ` + amdDriverAdvice, false},
		{"a whole block N/A", amdConfig{Plan: []*amdStep{{NA: []string{"temperature"}}}}, "", `GPU 0: temperature: "N/A", where every sample needs a number`, false},
		{"bare numbers", amdConfig{Plan: []*amdStep{{Bare: true}}}, "", `GPU 0: usage.gfx_activity: want {"value": …, "unit": "%"}, found number 97`, false},
		{"gfx_0 N/A", amdConfig{Plan: []*amdStep{{NA: []string{"clock.gfx_0.clk"}}}}, "", `GPU 0: clock.gfx_0.clk: "N/A"`, false},
		{"max clock missing", amdConfig{Plan: []*amdStep{{Drop: []string{"clock.gfx_0.max_clk"}}}}, "", `GPU 0: clock.gfx_0.max_clk: missing`, false},
		{"not JSON", amdConfig{Plan: []*amdStep{{Raw: &na}}}, "", `amd-smi metric -g 0 --violation: not JSON: `, false},
		{"static fails", amdConfig{Static: &amdStep{Exit: 1, Msg: "AMDSMI_STATUS_INIT_ERROR"}}, "", amdStaticWhat + ` exited with status 1: "AMDSMI_STATUS_INIT_ERROR"`, false},
		{"list hangs", amdConfig{List: &amdStep{SleepMS: 10000}}, "", amdListWhat + " did not answer within 1s; its process group was killed (the startup probe; nothing was sampled)", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			path := installFakeAMD(t, tc.cfg)
			sel := DefaultSelection()
			if tc.gpu != "" {
				sel, _ = ParseGPUFlag(tc.gpu)
			}
			// The probe's budget covers three calls of the fake: 1 s only
			// where a hang is the point, 10 s elsewhere, so that a loaded
			// machine starting the fake slowly is no refusal.
			budget := 10 * time.Second
			if tc.cfg.List != nil && tc.cfg.List.SleepMS > 0 {
				budget = time.Second
			}
			_, err := NewAMDSMI(context.Background(), AMDSMIOptions{Path: path, GPUs: sel, QueryTimeout: budget})
			if tc.want == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("%v, want %q", err, tc.want)
			}
			if errors.Is(err, ErrSelect) != tc.sel {
				t.Errorf("ErrSelect %v, want %v", errors.Is(err, ErrSelect), tc.sel)
			}
		})
	}
}

func TestAMDSMIRefusesMidRun(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		step *amdStep
		want string
	}{
		{"an XCD N/A", &amdStep{NA: []string{"clock.gfx_3.clk"}}, `GPU 0: clock.gfx_3.clk: "N/A", where every sample needs a number; ` + amdDriverAdvice},
		{"an XCD gone", &amdStep{Drop: []string{"clock.gfx_7"}}, `GPU 0: clock.gfx_7: missing: an XCD read at the start is not in the answer`},
		{"power N/A", &amdStep{NA: []string{"power.socket_power"}}, `GPU 0: power.socket_power: "N/A"`},
		{"hotspot N/A", &amdStep{NA: []string{"temperature.hotspot"}}, `GPU 0: temperature.hotspot: "N/A"`},
		{"perf level N/A", &amdStep{NA: []string{"perf_level"}}, `GPU 0: perf_level: "N/A"`},
		{"another unit", &amdStep{NA: []string{"power.socket_power.unit"}}, `GPU 0: power.socket_power.unit: want "W", found string "N/A"`},
		{"utilization past 100", &amdStep{Activity: ptrTo(101)}, `GPU 0: usage.gfx_activity.value: want a whole number from 0 to 100, found 101`},
		{"a GPU left out", &amdStep{Skip: true}, `printed no entry for GPU 1 (bcff74a1-0000-1000-80d1-3c23a9580001)`},
		{"a GPU twice", &amdStep{Twice: true}, `answered twice for GPU 0`},
		{"accumulator back", &amdStep{Reset: true}, `GPU 0: violation.ppt_accumulated went back from 5 to 0: the driver was reloaded or the GPU reset within the window`},
		{"fails", &amdStep{Exit: 1, Msg: "boom"}, `amd-smi metric -g 0 1 --violation exited with status 1: "boom"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			a, _, err := newAMD(t, amdConfig{GPUs: 2, XCDs: 8, Plan: []*amdStep{{Advance: map[string]uint64{"ppt_accumulated": 5}}, {}, tc.step}}, "all")
			if err != nil {
				t.Fatal(err)
			}
			readAMD(t, a)
			_, err = a.Read(context.Background(), time.Now(), "boot")
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("%v, want %q", err, tc.want)
			}
		})
	}
}

func TestAMDSMIFewerXCDs(t *testing.T) {
	t.Parallel()
	// A GPU with four XCDs: gfx_4 … gfx_7 are N/A, and not read.
	a, _, err := newAMD(t, amdConfig{XCDs: 4, Plan: []*amdStep{{}, {}, {Clocks: []int{2000, 2010, 2020, 2030, 2040}}}}, "")
	if err != nil {
		t.Fatal(err)
	}
	if s := readAMD(t, a)[0]; len(s.XCDClocksMHz) != 4 || s.SMClockMHz != 2080 {
		t.Errorf("sample %+v", s)
	}
	// An XCD that gave no clock at the start gives one now: refused.
	_, err = a.Read(context.Background(), time.Now(), "boot")
	if want := "GPU 0: clock.gfx_4.clk: a clock (2040 MHz) for an XCD that gave none at the start (the XCDs read are gfx 0, 1, 2, 3)"; err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("%v, want %q", err, want)
	}
}

func TestAMDSMIGPUByUUID(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ flag, want string }{
		{"bcff74a1-0000-1000-80d1-3c23a9580001", "GPU 1"},
		{"bcff", "GPU 1"},
		{"abff74a1,2", "GPUs 0,2"},
	} {
		a, _, err := newAMD(t, amdConfig{GPUs: 3}, tc.flag)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(a.Name(), ") "+tc.want+", ") {
			t.Errorf("--gpu %s: %s, want %s", tc.flag, a.Name(), tc.want)
		}
	}
	_, _, err := newAMD(t, amdConfig{GPUs: 3, Name: "AMD Instinct MI300X"}, "ffff")
	if want := "no GPU on this box has UUID ffff (or one starting with it): the driver lists GPU 0 abff74a1-0000-1000-80d1-3c23a9580000 (AMD Instinct MI300X), 1 "; err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("%v, want %q", err, want)
	}
}

func TestSamplerOpenAMDSMI(t *testing.T) {
	// auto on a box with amd-smi and no NVIDIA driver: amd-smi.
	dir := filepath.Dir(installFakeAMD(t, amdConfig{}))
	t.Setenv("PATH", dir)
	var logs []string
	b, err := Open(context.Background(), Options{Kind: KindAuto, Logf: func(f string, a ...any) { logs = append(logs, f) }})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if strings.HasPrefix(b.Name(), "NVML") {
		t.Skip("NVML is installed here; auto does not fall back")
	}
	if !strings.HasPrefix(b.Name(), "amd-smi ("+filepath.Join(dir, "amd-smi")+") GPU 0") {
		t.Errorf("auto chose %s", b.Name())
	}
	if !strings.Contains(strings.Join(logs, "\n"), "nvidia-smi: %v; using amd-smi") {
		t.Errorf("logs %q", logs)
	}
	b, err = Open(context.Background(), Options{Kind: KindAMDSMI})
	if err != nil || !strings.HasPrefix(b.Name(), "amd-smi") {
		t.Errorf("amd-smi: %v", err)
	}
	// auto where neither answers says both.
	t.Setenv("PATH", t.TempDir())
	if _, err := Open(context.Background(), Options{Kind: KindAuto, AMDSMIPath: filepath.Join(t.TempDir(), "amd-smi")}); err == nil ||
		!strings.Contains(err.Error(), "no NVIDIA driver answered (nvidia-smi: nvidia-smi not found on PATH") || !strings.Contains(err.Error(), "neither did amd-smi") {
		t.Errorf("auto with nothing: %v", err)
	}
}

// realAMD reads a file of testdata/amd-smi-real.
func realAMD(t *testing.T, name string) []byte {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", "amd-smi-real", name))
	if err != nil {
		t.Fatal(err)
	}
	return data
}

func TestAMDRealOutputs(t *testing.T) {
	// A ROCm 7 answer of a Radeon: gfx_0's max_clk is 0 MHz, and the
	// accumulators are N/A: refused, naming the field, never a number.
	gs, err := amdGPUs(realAMD(t, "rocm7-metric-2gpu-radeon.json"))
	if err != nil || len(gs) != 2 {
		t.Fatalf("%d GPUs, %v", len(gs), err)
	}
	_, err = parseAMDMetric(gs[0], nil, "violation")
	if want := "clock.gfx_0.max_clk.value: want a whole number from 1 to 100000, found 0"; err == nil || err.Error() != want {
		t.Fatalf("%v, want %q", err, want)
	}
	gs[0].Fields["clock"].Fields["gfx_0"].Fields["max_clk"].Fields["value"] = &strictjson.Value{Kind: strictjson.Number, Num: 2482, Raw: "2482"}
	_, err = parseAMDMetric(gs[0], nil, "violation")
	if want := `throttle.ppt_accumulated: "N/A", where every sample needs a number`; err == nil || err.Error() != want {
		t.Fatalf("%v, want %q", err, want)
	}
	// Its other fields read as the capture printed them.
	for key, want := range map[string]float64{"usage.gfx_activity": 91, "power.socket_power": 12.3, "temperature.hotspot": 63, "clock.gfx_0.clk": 2774} {
		units := map[string]string{"usage.gfx_activity": "%", "power.socket_power": "W", "temperature.hotspot": "C", "clock.gfx_0.clk": "MHz"}
		if got, err := amdQuantity(gs[0], key, units[key]); err != nil || got != want {
			t.Errorf("%s = %v, %v; want %v", key, got, err, want)
		}
	}
	if xs := gfxKeys(gs[1].Fields["clock"]); len(xs) != 8 {
		t.Errorf("gfx keys %v", xs)
	}
	// The VRAM used, as metric --mem-usage prints it, in MB (MiB).
	for i, want := range []float64{20450, 57} {
		if got, err := amdQuantity(gs[i], amdMemUsed, "MB"); err != nil || got != want {
			t.Errorf("GPU %d %s = %v, %v; want %v", i, amdMemUsed, got, err, want)
		}
	}
	// A ROCm 6.1 bare list, power only: the usage a reading needs is missing.
	gs, err = amdGPUs(realAMD(t, "rocm61-metric-power.json"))
	if err != nil || len(gs) != 1 {
		t.Fatalf("%d GPUs, %v", len(gs), err)
	}
	if _, err := parseAMDMetric(gs[0], nil, "throttle"); err == nil || err.Error() != "usage: missing" {
		t.Errorf("%v, want usage: missing", err)
	}
	if w, err := amdQuantity(gs[0], "power.socket_power", "W"); err != nil || w != 10 {
		t.Errorf("socket power %v, %v", w, err)
	}
	// ROCm 7's static limit: the cap is limit.ppt0.socket_power_limit.
	gs, err = amdGPUs(realAMD(t, "rocm7-static-limit.json"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := parseAMDStatic(gs[0]); err == nil || err.Error() != "asic: missing" {
		t.Errorf("%v, want asic: missing", err)
	}
	g := gs[0]
	g.Fields["asic"] = &strictjson.Value{Kind: strictjson.Object, Keys: []string{"market_name"},
		Fields: map[string]*strictjson.Value{"market_name": {Kind: strictjson.String, Str: "AMD Instinct MI300X"}}}
	g.Fields["driver"] = &strictjson.Value{Kind: strictjson.Object, Keys: []string{"version"},
		Fields: map[string]*strictjson.Value{"version": {Kind: strictjson.String, Str: "6.10.5"}}}
	if _, err := parseAMDStatic(g); err == nil || err.Error() != "partition: missing" {
		t.Errorf("%v, want partition: missing", err)
	}
	na := &strictjson.Value{Kind: strictjson.String, Str: "N/A"}
	g.Fields["partition"] = &strictjson.Value{Kind: strictjson.Object, Keys: []string{"compute_partition", "memory_partition"},
		Fields: map[string]*strictjson.Value{"compute_partition": na, "memory_partition": na}}
	st, err := parseAMDStatic(g)
	if err != nil || st.capW != 100 || st.compute != "" || st.memory != "" {
		t.Errorf("static %+v, %v", st, err)
	}
}

func TestAMDShapes(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{`{"gpu_data": [], "other": 1}`, `want a list of GPUs, or {"gpu_data": [...]} (ROCm 7), found an object with keys gpu_data, other`},
		{`{"gpu_data": {"gpu": 0}}`, `want a list of GPUs, or {"gpu_data": [...]} (ROCm 7), found object`},
		{`"N/A"`, `want a list of GPUs, or {"gpu_data": [...]} (ROCm 7), found string "N/A"`},
		{`[{"gpu": 0}, 3]`, `entry 1: want a GPU object, found number 3`},
		{`[{"gpu": 0, "gpu": 1}]`, `not JSON: `},
	} {
		if _, err := amdGPUs([]byte(tc.in)); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", tc.in, err, tc.want)
		}
	}
	g, _ := amdGPUs([]byte(`[{"gpu": 0, "violation": {"ppt_accumulated": 18446744073709551615, "prochot_accumulated": 18446744073709551616,
		"vr_thermal_accumulated": -1, "hbm_thermal_accumulated": {"value": 3}, "socket_thermal_accumulated": [1, 2]}}]`))
	for _, tc := range []struct{ key, want string }{
		{"ppt_accumulated", "violation.ppt_accumulated: 18446744073709551615, the largest 64-bit value, which amd-smi prints for a counter the GPU does not support"},
		{"prochot_accumulated", "violation.prochot_accumulated: want a counter (a whole number ≥ 0 within 64 bits), found number 18446744073709551616"},
		{"vr_thermal_accumulated", "violation.vr_thermal_accumulated: want a counter (a whole number ≥ 0 within 64 bits), found number -1"},
		{"socket_thermal_accumulated", "violation.socket_thermal_accumulated: want a counter (a whole number ≥ 0), found array"},
	} {
		if _, err := amdCounter(g[0], "violation."+tc.key); err == nil || err.Error() != tc.want {
			t.Errorf("%s: %v, want %q", tc.key, err, tc.want)
		}
	}
	if n, err := amdCounter(g[0], "violation.hbm_thermal_accumulated"); err != nil || n != 3 {
		t.Errorf("a counter as {\"value\": 3}: %d, %v", n, err)
	}
	for _, tc := range []struct{ in, want string }{
		{`[{"gpu": 0, "uuid": "N/A"}]`, `GPU 0: uuid: "N/A"`},
		{`[{"gpu": -1, "uuid": "x"}]`, `entry 0: gpu: want a GPU index, found number -1`},
		{`[{"gpu": 0, "uuid": "a"}, {"gpu": 0, "uuid": "b"}]`, `GPU 0 listed twice`},
	} {
		if _, err := amdListed([]byte(tc.in)); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", tc.in, err, tc.want)
		}
	}
}

func TestAMDSMIReadNeedsTimeAndBoot(t *testing.T) {
	t.Parallel()
	a, _, err := newAMD(t, amdConfig{}, "")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		t    time.Time
		boot string
	}{{time.Time{}, "boot"}, {time.Now(), ""}} {
		if _, err := a.Read(context.Background(), c.t, c.boot); err == nil || err.Error() != "a reading needs its time and the boot id" {
			t.Errorf("%v %q: %v", c.t, c.boot, err)
		}
	}
}

// amd-smi metric --mem-usage's used VRAM is each sample's memory_used_mib;
// a GPU that gives none at the probe drops the field (said), one that
// stops giving it is a refusal.
func TestAMDSMIMemoryUsed(t *testing.T) {
	t.Parallel()
	mb := func(x float64) *float64 { return &x }
	a, _, err := newAMD(t, amdConfig{GPUs: 2, Plan: []*amdStep{{GPU: map[string]*amdStep{"1": {UsedMB: mb(1234.5)}}}, {},
		{NA: []string{"mem_usage.used_vram"}}}}, "0,1")
	if err != nil {
		t.Fatal(err)
	}
	rows, err := a.Read(context.Background(), time.Now(), testBoot)
	if err != nil || len(rows) != 2 || rows[0].MemoryUsedMiB == nil || *rows[0].MemoryUsedMiB != 150000 || rows[1].MemoryUsedMiB == nil || *rows[1].MemoryUsedMiB != 150000 {
		t.Fatalf("rows %v, %v", rows, err)
	}
	if !strings.Contains(string(rows[0].AppendJSON(nil)), `,"memory_used_mib":150000,"energy_mj":`) {
		t.Errorf("sample %s", rows[0].AppendJSON(nil))
	}
	if _, err := a.Read(context.Background(), time.Now(), testBoot); err == nil ||
		!strings.Contains(err.Error(), `GPU 0: mem_usage.used_vram: "N/A", where every sample needs a number (it gave it at the probe)`) {
		t.Errorf("used VRAM gone: %v", err)
	}
	var logged []string
	path := installFakeAMD(t, amdConfig{Plan: []*amdStep{{NA: []string{"mem_usage"}}}})
	b, err := NewAMDSMI(context.Background(), AMDSMIOptions{Path: path, GPUs: DefaultSelection(), QueryTimeout: 5 * time.Second,
		Logf: func(f string, a ...any) { logged = append(logged, fmt.Sprintf(f, a...)) }})
	if err != nil {
		t.Fatal(err)
	}
	if rows, err := b.Read(context.Background(), time.Now(), testBoot); err != nil || rows[0].MemoryUsedMiB != nil {
		t.Errorf("no mem_usage: %v, %v", rows, err)
	}
	if want := `amd-smi: optional field mem_usage.used_vram dropped: GPU 0: mem_usage: "N/A", where every sample needs a number`; !slices.Contains(logged, want) {
		t.Errorf("log %q\nwant %q", logged, want)
	}
}

// TestAMDRealPartition: the static partition block of a real amd-smi 26
// answer (ROCm 7: accelerator_partition, no compute_partition), written as
// the JSON form writes it, read through the fake amd-smi: SPX is sampled,
// its memory partition recorded; the same block in CPX is refused.
func TestAMDRealPartition(t *testing.T) {
	t.Parallel()
	text := string(realAMD(t, "rocm7-static-partition-mi300a.txt"))
	_, block, ok := strings.Cut(text, "    PARTITION:\n")
	if !ok {
		t.Fatal("no PARTITION block")
	}
	fields := map[string]any{}
	var keys []string
	for _, line := range strings.Split(block, "\n") {
		if !strings.HasPrefix(line, "        ") {
			break
		}
		k, v, _ := strings.Cut(strings.TrimSpace(line), ": ")
		k = strings.ToLower(k)
		keys = append(keys, k)
		if n, err := strconv.Atoi(v); err == nil {
			fields[k] = n
		} else {
			fields[k] = v
		}
	}
	if strings.Join(keys, " ") != "accelerator_partition memory_partition partition_id compute_partition_mem_alloc_mode" {
		t.Fatalf("keys %v", keys)
	}
	for _, tc := range []struct{ mode, want string }{{"SPX", ""}, {"CPX", "GPU 0 (abff74a1-0000-1000-80d1-3c23a9580000) is in compute partition mode CPX: " + partitionAdvice}} {
		fields["accelerator_partition"] = tc.mode
		raw, err := json.Marshal(fields)
		if err != nil {
			t.Fatal(err)
		}
		path := installFakeAMD(t, amdConfig{Partition: map[string]json.RawMessage{"0": raw}})
		a, err := NewAMDSMI(context.Background(), AMDSMIOptions{Path: path, GPUs: DefaultSelection(), QueryTimeout: 5 * time.Second})
		if tc.want != "" {
			if err == nil || err.Error() != tc.want || !errors.Is(err, ErrSelect) {
				t.Errorf("%s: %v\nwant %s", tc.mode, err, tc.want)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%s: %v", tc.mode, err)
		}
		rows, err := a.Read(context.Background(), time.Now(), testBoot)
		if err != nil || rows[0].MemoryPartition != "NPS1" {
			t.Errorf("%s: %v, %v", tc.mode, rows, err)
		}
	}
}
