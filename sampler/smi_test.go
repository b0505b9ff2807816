package sampler

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/clockgate/clockgate/clocks"
)

// smiStep and smiConfig mirror testdata/fakesmi's fakesmi.json.
type smiStep struct {
	Values    map[string]string            `json:"values,omitempty"`
	GPUValues map[string]map[string]string `json:"gpu_values,omitempty"`
	Exit      int                          `json:"exit,omitempty"`
	Msg       string                       `json:"msg,omitempty"`
	SleepMS   int                          `json:"sleep_ms,omitempty"`
	Raw       string                       `json:"raw,omitempty"`
	Spawn     bool                         `json:"spawn,omitempty"`
}

type smiConfig struct {
	Driver       string                       `json:"driver,omitempty"`
	GPUs         int                          `json:"gpus,omitempty"`
	GPUValues    map[string]map[string]string `json:"gpu_values,omitempty"`
	Power        bool                         `json:"power,omitempty"`
	Module       bool                         `json:"module,omitempty"`
	Vbios        bool                         `json:"vbios,omitempty"`
	PCIeDegraded bool                         `json:"pcie_degraded,omitempty"`
	PCIe         bool                         `json:"pcie,omitempty"`
	OptionalNA   []string                     `json:"optional_na,omitempty"`
	Rejects      []string                     `json:"rejects,omitempty"`
	RejectMS     int                          `json:"reject_sleep_ms,omitempty"`
	IgnoreI      bool                         `json:"ignore_i,omitempty"`
	WrongIndex   bool                         `json:"wrong_index,omitempty"`
	Order        []int                        `json:"order,omitempty"`
	List         *smiStep                     `json:"list,omitempty"`
	Plan         []smiStep                    `json:"plan,omitempty"`
	Cycle        bool                         `json:"cycle,omitempty"`
}

var fakeBuild struct {
	once sync.Once
	path string
	err  error
	out  []byte
}

// fakeSMIBinary builds testdata/fakesmi once per test binary.
func fakeSMIBinary(t *testing.T) string {
	t.Helper()
	fakeBuild.once.Do(func() {
		fakeBuild.path = filepath.Join(testBin, "fakesmi")
		cmd := exec.Command("go", "build", "-o", fakeBuild.path, "./testdata/fakesmi")
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		fakeBuild.out, fakeBuild.err = cmd.CombinedOutput()
	})
	if fakeBuild.err != nil {
		t.Fatalf("building the fake nvidia-smi: %v\n%s", fakeBuild.err, fakeBuild.out)
	}
	return fakeBuild.path
}

// installFakeSMI puts the fake, configured with cfg, at DIR/nvidia-smi in a
// directory of its own and returns that path. It is a hard link, not a
// copy: writing an executable while a parallel test forks can leave the
// write descriptor open in the fork, and exec then fails with "text file
// busy".
func installFakeSMI(t *testing.T, cfg smiConfig) string {
	t.Helper()
	dir := t.TempDir()
	path := filepath.Join(dir, "nvidia-smi")
	if err := os.Link(fakeSMIBinary(t), path); err != nil {
		t.Fatal(err)
	}
	data, _ := json.Marshal(cfg)
	if err := os.WriteFile(filepath.Join(dir, "fakesmi.json"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// smiCalls returns the argument lists the fake was called with.
func smiCalls(t *testing.T, path string) []string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(filepath.Dir(path), "fakesmi.log"))
	if err != nil {
		t.Fatal(err)
	}
	return strings.Split(strings.TrimSpace(string(data)), "\n")
}

// readOnlyCall is the one form of nvidia-smi call a sampler may make.
// The listing (--query-gpu=index,uuid,name without -i) is the only call
// without -i.
var readOnlyCall = regexp.MustCompile(`^(--query-gpu=(index,uuid,name --format=csv,noheader,nounits|[a-z_.,]+ --format=csv,noheader,nounits -i [0-9]+(,[0-9]+)*)|--query-compute-apps=pid,process_name,gpu_uuid --format=csv,noheader)$`)

func assertReadOnly(t *testing.T, path string) {
	t.Helper()
	for _, c := range smiCalls(t, path) {
		if !readOnlyCall.MatchString(c) {
			t.Errorf("nvidia-smi called with %q", c)
		}
	}
}

func newSMI(t *testing.T, cfg smiConfig, gpu int) (*SMI, string, error) {
	t.Helper()
	path := installFakeSMI(t, cfg)
	s, err := NewSMI(context.Background(), SMIOptions{Path: path, GPUs: GPUIndices(gpu), QueryTimeout: 5 * time.Second, Logf: t.Logf})
	return s, path, err
}

func TestSamplerSMINewDriver(t *testing.T) {
	t.Parallel()
	s, path, err := newSMI(t, smiConfig{Power: true, Module: true, Vbios: true, PCIe: true}, 0)
	if err != nil {
		t.Fatal(err)
	}
	if s.ThrottleField() != FieldEventReasons {
		t.Errorf("throttle field %q", s.ThrottleField())
	}
	want := "index,uuid,name,driver_version,clocks.sm,clocks.max.sm,clocks.applications.graphics,clocks_event_reasons.active,persistence_mode,pstate,utilization.gpu,temperature.gpu,power.draw,clocks.mem," +
		"enforced.power.limit,module.enforced.power.limit,clocks_event_reasons_counters.sw_power_cap,clocks_event_reasons_counters.sync_boost," +
		"clocks_event_reasons_counters.sw_thermal_slowdown,clocks_event_reasons_counters.hw_thermal_slowdown,clocks_event_reasons_counters.hw_power_brake_slowdown,vbios_version,memory.used," +
		"pcie.link.gen.gpucurrent,pcie.link.width.current,pcie.link.gen.max,pcie.link.width.max"
	if got := strings.Join(s.Fields(), ","); got != want {
		t.Errorf("fields %s", got)
	}
	smp, err := one(s.Read(context.Background(), time.Date(2026, 8, 12, 10, 15, 3, 123e6, time.UTC), testBoot))
	if err != nil {
		t.Fatal(err)
	}
	line := string(smp.AppendJSON(nil))
	const wantLine = `{"t":"2026-08-12T10:15:03.123Z","boot_id":"13dc5579-455c-45c8-8e4d-d09c457fa826","gpu_index":0,"gpu_uuid":"GPU-7f3a9c2e-5b1d-4e8f-a6c4-2d9e0b8f1a30","gpu_name":"NVIDIA H100 80GB HBM3","driver_version":"590.44.01","sm_clock_mhz":1980,"clocks_max_sm_mhz":1980,"clocks_applications_graphics_mhz":null,"throttle_reasons_active":"0x0000000000000000","persistence_mode":"Enabled","pstate":"P0","utilization_gpu_pct":100,"temperature_gpu_c":45,"power_draw_w":312.45,"clocks_mem_mhz":2619,"throttle_field":"clocks_event_reasons.active",` +
		`"enforced_power_limit_w":700,"module_enforced_power_limit_w":900,"event_counters_us":{"sw_power_cap":0,"sync_boost":0,"sw_thermal_slowdown":0,"hw_thermal_slowdown":0,"hw_power_brake_slowdown":0},"vbios_version":"96.00.A5.00.01","memory_used_mib":71234,"pcie_gen":5,"pcie_width":16,"pcie_gen_max":5,"pcie_width_max":16}`
	if line != wantLine {
		t.Errorf("sample\n got %s\nwant %s", line, wantLine)
	}
	calls := smiCalls(t, path)
	// One probe asking for every field, one reading.
	if len(calls) != 2 || calls[0] != calls[1] || !strings.HasPrefix(calls[0], "--query-gpu="+want+" ") {
		t.Errorf("calls:\n%s", strings.Join(calls, "\n"))
	}
	assertReadOnly(t, path)
}

func TestSamplerSMIOldDriverFallsBack(t *testing.T) {
	t.Parallel()
	s, path, err := newSMI(t, smiConfig{Driver: "old"}, 0)
	if err != nil {
		t.Fatal(err)
	}
	if s.ThrottleField() != FieldThrottleReasons {
		t.Fatalf("throttle field %q", s.ThrottleField())
	}
	smp, err := one(s.Read(context.Background(), time.Now(), testBoot))
	if err != nil {
		t.Fatal(err)
	}
	if smp.ThrottleField != FieldThrottleReasons || smp.ClocksApplicationsGraphicsMHz == nil ||
		*smp.ClocksApplicationsGraphicsMHz != 1755 || smp.DriverVersion != "550.54.15" {
		t.Errorf("sample %s", smp.AppendJSON(nil))
	}
	calls := smiCalls(t, path)
	if len(calls) != 3 || !strings.Contains(calls[0], "clocks_event_reasons.active") || !strings.Contains(calls[1], "clocks_throttle_reasons.active") {
		t.Errorf("probe order:\n%s", strings.Join(calls, "\n"))
	}
	assertReadOnly(t, path)
}

func TestSamplerSMIOptionalFieldsDropped(t *testing.T) {
	t.Parallel()
	s, _, err := newSMI(t, smiConfig{OptionalNA: []string{"power.draw"}, Rejects: []string{"clocks.mem"}}, 0)
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(s.Dropped(), ","); got != "clocks.mem,power.draw,enforced.power.limit,module.enforced.power.limit,"+strings.Join(CounterFields[:], ",")+",vbios_version,"+strings.Join(PCIeQueryFields[:], ",") {
		t.Errorf("dropped %s", got)
	}
	smp, err := one(s.Read(context.Background(), time.Now(), testBoot))
	if err != nil {
		t.Fatal(err)
	}
	if smp.TemperatureGPUC == nil || smp.PowerDrawW != nil || smp.ClocksMemMHz != nil {
		t.Errorf("sample %s", smp.AppendJSON(nil))
	}
}

func TestSamplerSMIMultiGPU(t *testing.T) {
	t.Parallel()
	s, path, err := newSMI(t, smiConfig{GPUs: 2}, 1)
	if err != nil {
		t.Fatal(err)
	}
	smp, err := one(s.Read(context.Background(), time.Now(), testBoot))
	if err != nil {
		t.Fatal(err)
	}
	if smp.GPUIndex != 1 || smp.GPUUUID != "GPU-7f3a9c2e-5b1d-4e8f-a6c4-2d9e0b8f1a31" {
		t.Errorf("sample %s", smp.AppendJSON(nil))
	}
	for _, c := range smiCalls(t, path) {
		if !strings.HasSuffix(c, " -i 1") {
			t.Errorf("call without -i 1: %q", c)
		}
	}
}

// TestSMIRefusesAtStart: a driver whose answer cannot be read whole is
// refused before any sample, naming the cause.
func TestSamplerSMIRefusesAtStart(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		cfg  smiConfig
		gpu  int
		want string
	}{
		{"N/A clock", smiConfig{Plan: []smiStep{{Values: map[string]string{"clocks.sm": "[N/A]"}}}}, 0,
			`nvidia-smi -i 0: clocks.sm: nvidia-smi printed "[N/A]": no value`},
		{"failure", smiConfig{Plan: []smiStep{{Exit: 15, Msg: "Unable to determine the device handle for GPU0000:01:00.0: Unknown Error"}}}, 0,
			`nvidia-smi -i 0 exited with status 15: "Unable to determine the device handle for GPU0000:01:00.0: Unknown Error"`},
		{"both spellings rejected", smiConfig{Rejects: []string{"clocks_event_reasons.active"}}, 0,
			"nvidia-smi -i 0: the driver rejects both clocks_event_reasons.active and clocks_throttle_reasons.active"},
		{"required field rejected", smiConfig{Rejects: []string{"pstate"}}, 0,
			`nvidia-smi -i 0 exited with status 2: "Field \"pstate\" is not a valid field to query."`},
		{"no such GPU", smiConfig{GPUs: 2}, 2, `nvidia-smi -i 2 exited with status 6: "No devices were found"`},
		{"every GPU answers", smiConfig{GPUs: 2, IgnoreI: true}, 0, "nvidia-smi -i 0 printed 2 lines, want one: a line for GPU 1, which it was not asked for"},
		{"wrong GPU answers", smiConfig{GPUs: 2, WrongIndex: true}, 0, "nvidia-smi -i 0 answered for GPU 1"},
		{"nothing printed", smiConfig{Plan: []smiStep{{Raw: "\n"}}}, 0, "nvidia-smi -i 0 printed nothing"},
		{"missing column", smiConfig{Plan: []smiStep{{Raw: "0, GPU-x, NVIDIA H100 80GB HBM3, 590.44.01, 1980, 1980\n"}}}, 0,
			"nvidia-smi -i 0: 6 values for 27 queried fields"},
		{"empty value", smiConfig{Plan: []smiStep{{Values: map[string]string{"utilization.gpu": ""}}}}, 0,
			`nvidia-smi -i 0: utilization.gpu: nvidia-smi printed "": empty value`},
		{"negative GPU", smiConfig{}, -1, "--gpu -1: -1 is negative: want a GPU index ≥ 0"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			_, path, err := newSMI(t, c.cfg, c.gpu)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("NewSMI error = %v\nwant it to contain %s", err, c.want)
			}
			if c.gpu >= 0 {
				assertReadOnly(t, path)
			}
		})
	}
}

// TestSMIRefusesMidRun: once sampling, every failure is a refusal, also of
// an optional field that was kept at start.
func TestSamplerSMIRefusesMidRun(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		step smiStep
		want string
	}{
		{"N/A clock", smiStep{Values: map[string]string{"clocks.max.sm": "[N/A]"}}, `clocks.max.sm: nvidia-smi printed "[N/A]"`},
		{"Unknown Error", smiStep{Values: map[string]string{"clocks.sm": "[Unknown Error]"}}, `clocks.sm: nvidia-smi printed "[Unknown Error]": the driver failed to read it`},
		{"kept optional N/A", smiStep{Values: map[string]string{"power.draw": "[N/A]"}}, `power.draw: nvidia-smi printed "[N/A]"`},
		{"non-zero exit", smiStep{Exit: 3, Msg: "GPU is lost"}, `nvidia-smi -i 0 exited with status 3: "GPU is lost"`},
		{"not a number", smiStep{Values: map[string]string{"utilization.gpu": "busy"}}, `utilization.gpu: nvidia-smi printed "busy": want a percentage`},
		{"deprecated elsewhere", smiStep{Values: map[string]string{"clocks.max.sm": DeprecatedToken}}, `clocks.max.sm: nvidia-smi printed "[Requested functionality has been deprecated]": deprecated`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			s, _, err := newSMI(t, smiConfig{Plan: []smiStep{{}, c.step}}, 0)
			if err != nil {
				t.Fatal(err)
			}
			_, err = s.Read(context.Background(), time.Now(), testBoot)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("Read error = %v\nwant it to contain %s", err, c.want)
			}
		})
	}
}

func TestSamplerSMIQueryTimeout(t *testing.T) {
	t.Parallel()
	path := installFakeSMI(t, smiConfig{Plan: []smiStep{{}, {SleepMS: 5000}}})
	s, err := NewSMI(context.Background(), SMIOptions{Path: path, QueryTimeout: 300 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	_, err = s.Read(context.Background(), time.Now(), testBoot)
	if err == nil || err.Error() != "nvidia-smi -i 0 did not answer within 300ms; its process group was killed" {
		t.Fatalf("err = %v", err)
	}
	if el := time.Since(start); el > 3*time.Second {
		t.Errorf("a hung nvidia-smi held the sampler %v", el)
	}
}

func TestSamplerSMINotOnPath(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	_, err := NewSMI(context.Background(), SMIOptions{})
	if err == nil || !strings.HasPrefix(err.Error(), "nvidia-smi not found on PATH") {
		t.Fatalf("err = %v", err)
	}
	_, err = Open(context.Background(), Options{Kind: KindSMI})
	if err == nil || !strings.HasPrefix(err.Error(), "nvidia-smi not found on PATH") {
		t.Fatalf("Open err = %v", err)
	}
}

func TestSamplerSMIFoundOnPath(t *testing.T) {
	path := installFakeSMI(t, smiConfig{})
	t.Setenv("PATH", filepath.Dir(path)+string(os.PathListSeparator)+os.Getenv("PATH"))
	s, err := NewSMI(context.Background(), SMIOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if s.path != path {
		t.Errorf("path %s, want %s", s.path, path)
	}
}

func TestSamplerOpenBackends(t *testing.T) {
	t.Parallel()
	path := installFakeSMI(t, smiConfig{})
	var lines []string
	logf := func(f string, a ...any) { lines = append(lines, f) }
	b, err := Open(context.Background(), Options{Kind: KindAuto, SMIPath: path, Logf: logf})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if strings.HasPrefix(b.Name(), "NVML") {
		t.Skip("NVML is installed here; auto does not fall back")
	}
	if !strings.HasPrefix(b.Name(), "nvidia-smi ("+path+") GPU 0, throttle field clocks_event_reasons.active") {
		t.Errorf("auto chose %s", b.Name())
	}
	_, err = Open(context.Background(), Options{Kind: KindNVML})
	if !errors.Is(err, ErrNVMLUnavailable) {
		t.Errorf("nvml: %v", err)
	}
	_, err = Open(context.Background(), Options{Kind: "cuda"})
	if !errors.Is(err, ErrConfig) || !strings.Contains(err.Error(), `unknown backend "cuda"`) {
		t.Errorf("unknown kind: %v", err)
	}
}

// TestSamplerRunsOnNvidiaSMI records a window through the fake nvidia-smi:
// an idle then busy H100 pattern (synthetic values), stopped by the caller.
func TestSamplerRunsOnNvidiaSMI(t *testing.T) {
	t.Parallel()
	idle := smiStep{Values: map[string]string{"clocks.sm": "345", "throttle": "0x0000000000000001", "utilization.gpu": "0"}}
	busy := smiStep{Values: map[string]string{"clocks.sm": "1980", "utilization.gpu": "100"}}
	path := installFakeSMI(t, smiConfig{Plan: []smiStep{busy, idle, busy, busy, busy}, Cycle: true})
	cfg := testConfig(t)
	stop := make(chan string, 1)
	open := func(ctx context.Context) (Backend, error) {
		return Open(ctx, Options{Kind: KindSMI, SMIPath: path, Logf: t.Logf})
	}
	s, err := New(context.Background(), cfg, open)
	if err != nil {
		t.Fatal(err)
	}
	go func() {
		for {
			data, _ := os.ReadFile(StreamPath(cfg.Prefix))
			if strings.Count(string(data), "\n") >= 8 {
				stop <- clocks.StopSignal
				return
			}
			time.Sleep(10 * time.Millisecond)
		}
	}()
	res, err := runWithTimeout(t, s, context.Background(), stop)
	if err != nil {
		t.Fatal(err)
	}
	fold, samples := readStream(t, StreamPath(cfg.Prefix))
	// Plan step 0 answered the probe; the first sample is step 1, idle.
	if !samples[0].Idle() || samples[0].SMClockMHz != 345 || samples[1].Idle() || samples[1].SMClockMHz != 1980 {
		t.Errorf("first sample %s", samples[0].AppendJSON(nil))
	}
	if res.Idle == 0 || res.Busy == 0 || fold.Idle() != res.Idle {
		t.Errorf("idle %d busy %d, stream idle %d", res.Idle, res.Busy, fold.Idle())
	}
	// Idle samples' throttle bits are excluded from the record.
	if strings.Join(res.Record.GPUs[0].ThrottleReasonsActive, ",") != "0x0000000000000000" || res.Record.GPUs[0].ClocksApplicationsGraphicsMHz != nil {
		t.Errorf("record %+v", res.Record)
	}
	assertReadOnly(t, path)
}

// gonePID reports whether pid has ended (no such process, or a zombie
// waiting for its parent).
func gonePID(pid int) bool {
	if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) {
		return true
	}
	st, _, err := readStat(pid)
	return err != nil || exited(st)
}

// spawnedPIDs reads the pids the fake wrote for Spawn steps: each call's
// and its child's.
func spawnedPIDs(t *testing.T, path string) []int {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(filepath.Dir(path), "fakesmi.pids"))
	if err != nil {
		t.Fatal(err)
	}
	var pids []int
	for _, f := range strings.Fields(string(data)) {
		n, err := strconv.Atoi(f)
		if err != nil {
			t.Fatal(err)
		}
		pids = append(pids, n)
	}
	return pids
}

// waitGone waits up to 2 s for every pid to end.
func waitGone(t *testing.T, pids []int) {
	t.Helper()
	deadline := time.Now().Add(2 * time.Second)
	for _, pid := range pids {
		for !gonePID(pid) {
			if time.Now().After(deadline) {
				syscall.Kill(pid, syscall.SIGKILL)
				t.Errorf("pid %d (of the hung nvidia-smi call's process group) outlived the call", pid)
				break
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
}

// TestSamplerSMIHungQueryKillsItsGroup: a reading that hangs, having
// started a child of its own, is refused at the timeout, and its whole
// process group is killed: the call and its child.
func TestSamplerSMIHungQueryKillsItsGroup(t *testing.T) {
	t.Parallel()
	path := installFakeSMI(t, smiConfig{Plan: []smiStep{{}, {SleepMS: 20000, Spawn: true}}})
	s, err := NewSMI(context.Background(), SMIOptions{Path: path, QueryTimeout: 300 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	_, err = s.Read(context.Background(), time.Now(), testBoot)
	if err == nil || err.Error() != "nvidia-smi -i 0 did not answer within 300ms; its process group was killed" {
		t.Fatalf("err = %v", err)
	}
	// The group is killed at the timeout: nothing waits queryWaitDelay for
	// the child that holds the call's output.
	if el := time.Since(start); el > 300*time.Millisecond+queryWaitDelay/2 {
		t.Errorf("the hung call held the reading %v", el)
	}
	pids := spawnedPIDs(t, path)
	if len(pids) != 2 {
		t.Fatalf("pids %v", pids)
	}
	waitGone(t, pids)
}

// TestSamplerSMIStragglerKilled: a call that answers and exits, leaving a
// child of its own behind (holding its output), is read, and the child is
// killed with the call's process group.
func TestSamplerSMIStragglerKilled(t *testing.T) {
	t.Parallel()
	path := installFakeSMI(t, smiConfig{Plan: []smiStep{{}, {Spawn: true}}})
	s, err := NewSMI(context.Background(), SMIOptions{Path: path})
	if err != nil {
		t.Fatal(err)
	}
	smp, err := one(s.Read(context.Background(), time.Now(), testBoot))
	if err != nil || smp.SMClockMHz != 1980 {
		t.Fatalf("read %v, %v", smp, err)
	}
	pids := spawnedPIDs(t, path)
	if len(pids) != 2 {
		t.Fatalf("pids %v", pids)
	}
	waitGone(t, pids[1:])
}

// TestSamplerSMIStopKillsItsGroup: a stop during a reading kills the call's
// whole process group at once.
func TestSamplerSMIStopKillsItsGroup(t *testing.T) {
	t.Parallel()
	path := installFakeSMI(t, smiConfig{Plan: []smiStep{{}, {SleepMS: 20000, Spawn: true}}})
	s, err := NewSMI(context.Background(), SMIOptions{Path: path})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(300*time.Millisecond, cancel)
	start := time.Now()
	if _, err := s.Read(ctx, time.Now(), testBoot); !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v", err)
	}
	if el := time.Since(start); el > 2*time.Second {
		t.Errorf("the stop took %v to end the reading", el)
	}
	waitGone(t, spawnedPIDs(t, path))
}

// TestSamplerSMIHungAtStart: a hung nvidia-smi is refused after one query
// timeout, with one call: the startup probe is bounded as a whole.
func TestSamplerSMIHungAtStart(t *testing.T) {
	t.Parallel()
	path := installFakeSMI(t, smiConfig{Plan: []smiStep{{SleepMS: 20000, Spawn: true}}})
	start := time.Now()
	_, err := NewSMI(context.Background(), SMIOptions{Path: path, QueryTimeout: 400 * time.Millisecond})
	el := time.Since(start)
	if err == nil || err.Error() != "nvidia-smi -i 0 did not answer within 400ms; its process group was killed (the startup probe; nothing was sampled)" {
		t.Fatalf("err = %v", err)
	}
	t.Logf("a hung nvidia-smi was refused after %v (query timeout 400ms)", el)
	if el > 1200*time.Millisecond {
		t.Errorf("refusing a hung nvidia-smi took %v, more than one 400ms timeout (and slack)", el)
	}
	if calls := smiCalls(t, path); len(calls) != 1 {
		t.Errorf("%d calls to a hung nvidia-smi:\n%s", len(calls), strings.Join(calls, "\n"))
	}
	waitGone(t, spawnedPIDs(t, path))
}

// TestSamplerSMIProbeBoundedAsAWhole: the startup probe's retries share one
// timeout: an old driver that answers each call slowly cannot stretch it.
func TestSamplerSMIProbeBoundedAsAWhole(t *testing.T) {
	t.Parallel()
	// The fake takes 600 ms to reject the newer spelling; the retry (step
	// 0) hangs. With one budget of 1 s for the probe the retry gets what
	// is left (about 400 ms, time enough to start it on a loaded machine)
	// and the probe ends near 1 s; with a budget per call it would run
	// 1.6 s. The bound, 1.3 s, lies halfway.
	path := installFakeSMI(t, smiConfig{Driver: "old", RejectMS: 600, Plan: []smiStep{{SleepMS: 20000}}})
	start := time.Now()
	_, err := NewSMI(context.Background(), SMIOptions{Path: path, QueryTimeout: time.Second})
	if err == nil || !regexp.MustCompile(`^nvidia-smi -i 0 did not answer within \d+ms; its process group was killed \(the startup probe; nothing was sampled\)$`).MatchString(err.Error()) {
		t.Fatalf("err = %v", err)
	}
	if el := time.Since(start); el > 1300*time.Millisecond {
		t.Errorf("the probe took %v for a 1s budget", el)
	}
	if calls := smiCalls(t, path); len(calls) != 2 {
		t.Errorf("calls:\n%s", strings.Join(calls, "\n"))
	}
}

// TestSamplerSMIUnsupported: a GPU or driver that cannot give a field every
// sample needs is refused, saying what is unsupported and what to do: a
// MIG-enabled GPU's utilization [N/A] (at start and mid-run), a required
// field the driver does not support or does not know, and a field the user
// may not read.
func TestSamplerSMIUnsupported(t *testing.T) {
	t.Parallel()
	mig := smiStep{Values: map[string]string{"utilization.gpu": "[N/A]"}}
	cases := []struct {
		name  string
		cfg   smiConfig
		start bool
		want  string
	}{
		{"MIG at start", smiConfig{Plan: []smiStep{mig}}, true,
			`nvidia-smi -i 0: utilization.gpu: nvidia-smi printed "[N/A]": no value (not available on this GPU or driver); this GPU reports no utilization, as a MIG-enabled GPU does: ` + migAdvice},
		{"MIG mid-run", smiConfig{Plan: []smiStep{{}, mig}}, false,
			`nvidia-smi -i 0: utilization.gpu: nvidia-smi printed "[N/A]": no value (not available on this GPU or driver); this GPU reports no utilization, as a MIG-enabled GPU does: ` + migAdvice},
		{"required field not supported", smiConfig{Plan: []smiStep{{Values: map[string]string{"clocks.max.sm": "[Not Supported]"}}}}, true,
			`nvidia-smi -i 0: clocks.max.sm: nvidia-smi printed "[Not Supported]": the driver does not support this field on this GPU; the driver cannot give clocks.max.sm, which every sample needs: ` + smiDriverAdvice},
		{"required field unknown to the driver", smiConfig{Rejects: []string{"pstate"}}, true,
			`nvidia-smi -i 0 exited with status 2: "Field \"pstate\" is not a valid field to query."; pstate is a field every sample needs, and ` + smiDriverAdvice},
		{"no permission", smiConfig{Plan: []smiStep{{Values: map[string]string{"clocks.sm": "[Insufficient Permissions]"}}}}, true,
			`nvidia-smi -i 0: clocks.sm: nvidia-smi printed "[Insufficient Permissions]": reading it needs privileges this process lacks; run clockgate as a user the driver lets read it`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			s, _, err := newSMI(t, c.cfg, 0)
			if !c.start {
				if err != nil {
					t.Fatal(err)
				}
				_, err = s.Read(context.Background(), time.Now(), testBoot)
			}
			if err == nil || err.Error() != c.want {
				t.Fatalf("err = %v\nwant %s", err, c.want)
			}
		})
	}
}

// A driver that does not know the clock event counters (before 590)
// costs the probe one more call, not five: a sample carries all five
// counters or none.
func TestSamplerSMICountersDroppedTogether(t *testing.T) {
	t.Parallel()
	s, path, err := newSMI(t, smiConfig{Power: true, Rejects: CounterFields[:]}, 0)
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(s.Dropped(), ","); got != strings.Join(CounterFields[:], ",")+",module.enforced.power.limit,vbios_version,"+strings.Join(PCIeQueryFields[:], ",") {
		t.Errorf("dropped %s", got)
	}
	if calls := smiCalls(t, path); len(calls) != 2 {
		t.Errorf("%d probe calls, want 2:\n%s", len(calls), strings.Join(calls, "\n"))
	}
	smp, err := one(s.Read(context.Background(), time.Now(), testBoot))
	if err != nil {
		t.Fatal(err)
	}
	if smp.EventCountersUS != nil || smp.EnforcedPowerLimitW == nil || *smp.EnforcedPowerLimitW != 700 {
		t.Errorf("sample %s", smp.AppendJSON(nil))
	}
	// One counter the GPU cannot give drops them all.
	s, _, err = newSMI(t, smiConfig{Power: true, OptionalNA: []string{CounterFields[3]}}, 0)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(strings.Join(s.Fields(), ","), "clocks_event_reasons_counters") {
		t.Errorf("fields %v", s.Fields())
	}
}

// A power field the driver gave at the start and stops giving is a
// refusal, naming it, never a default.
func TestSamplerSMIPowerFieldStopsMidWindow(t *testing.T) {
	t.Parallel()
	s, _, err := newSMI(t, smiConfig{Power: true, Plan: []smiStep{{}, {Values: map[string]string{"enforced.power.limit": "[N/A]"}}}}, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Read(context.Background(), time.Now(), testBoot); err == nil || !strings.Contains(err.Error(), `enforced.power.limit: nvidia-smi printed "[N/A]"`) {
		t.Fatalf("error %v", err)
	}
}
