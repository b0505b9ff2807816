//go:build cgo

package sampler

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock"

)

// mockGPU is a synthetic H100 behind go-nvml's mock; its fields say what
// each NVML call answers.
type mockGPU struct {
	mu      sync.Mutex
	symbols map[string]bool
	initRet nvml.Return
	sm      uint32
	smRet   nvml.Return
	app     uint32
	appRet  nvml.Return
	util    uint32
	pm      nvml.EnableState
	ps      nvml.Pstates
	tempRet nvml.Return
	powRet  nvml.Return
	shut    int
}

func newMockGPU() *mockGPU {
	return &mockGPU{
		symbols: map[string]bool{symEventReasons: true, symThrottleReasons: true, symAppClock: true},
		sm:      1980, app: 0, appRet: nvml.ERROR_DEPRECATED, util: 100,
		pm: nvml.FEATURE_ENABLED, ps: nvml.PSTATE_0,
	}
}

func (g *mockGPU) set(f func(*mockGPU)) {
	g.mu.Lock()
	f(g)
	g.mu.Unlock()
}

func (g *mockGPU) shutdowns() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.shut
}

func readFileString(path string) (string, error) {
	b, err := os.ReadFile(path)
	return string(b), err
}

func (g *mockGPU) get() mockGPU {
	g.mu.Lock()
	defer g.mu.Unlock()
	return mockGPU{sm: g.sm, smRet: g.smRet, app: g.app, appRet: g.appRet, util: g.util, pm: g.pm, ps: g.ps, tempRet: g.tempRet, powRet: g.powRet}
}

// lib returns the mock library and device. Calls that would change GPU
// state fail the test; any other call the mock does not set panics.
func (g *mockGPU) lib(t *testing.T) (*mock.Interface, *mock.Device) {
	mutate := func(name string) { t.Errorf("the sampler called %s, which changes GPU state", name) }
	dev := &mock.Device{
		GetUUIDFunc: func() (string, nvml.Return) { return "GPU-7f3a9c2e-5b1d-4e8f-a6c4-2d9e0b8f1a37", nvml.SUCCESS },
		GetNameFunc: func() (string, nvml.Return) { return "NVIDIA H100 80GB HBM3", nvml.SUCCESS },
		GetClockInfoFunc: func(ct nvml.ClockType) (uint32, nvml.Return) {
			s := g.get()
			switch ct {
			case nvml.CLOCK_SM:
				return s.sm, s.smRet
			case nvml.CLOCK_MEM:
				return 2619, nvml.SUCCESS
			}
			return 0, nvml.ERROR_INVALID_ARGUMENT
		},
		GetMaxClockInfoFunc: func(ct nvml.ClockType) (uint32, nvml.Return) {
			if ct != nvml.CLOCK_SM {
				return 0, nvml.ERROR_INVALID_ARGUMENT
			}
			return 1980, nvml.SUCCESS
		},
		GetApplicationsClockFunc: func(ct nvml.ClockType) (uint32, nvml.Return) {
			if ct != nvml.CLOCK_GRAPHICS {
				return 0, nvml.ERROR_INVALID_ARGUMENT
			}
			s := g.get()
			return s.app, s.appRet
		},
		GetCurrentClocksEventReasonsFunc: func() (uint64, nvml.Return) {
			if !g.symbols[symEventReasons] {
				t.Errorf("called %s, which this driver lacks", symEventReasons)
			}
			return 0, nvml.SUCCESS
		},
		GetCurrentClocksThrottleReasonsFunc: func() (uint64, nvml.Return) { return 0x4, nvml.SUCCESS },
		GetPersistenceModeFunc:              func() (nvml.EnableState, nvml.Return) { return g.get().pm, nvml.SUCCESS },
		GetPerformanceStateFunc:             func() (nvml.Pstates, nvml.Return) { return g.get().ps, nvml.SUCCESS },
		GetUtilizationRatesFunc: func() (nvml.Utilization, nvml.Return) {
			return nvml.Utilization{Gpu: g.get().util, Memory: 40}, nvml.SUCCESS
		},
		GetTemperatureFunc: func(nvml.TemperatureSensors) (uint32, nvml.Return) { return 45, g.get().tempRet },
		GetPowerUsageFunc:  func() (uint32, nvml.Return) { return 312450, g.get().powRet },

		SetApplicationsClocksFunc: func(uint32, uint32) nvml.Return { mutate("SetApplicationsClocks"); return nvml.SUCCESS },
		SetGpuLockedClocksFunc:    func(uint32, uint32) nvml.Return { mutate("SetGpuLockedClocks"); return nvml.SUCCESS },
		ResetGpuLockedClocksFunc:  func() nvml.Return { mutate("ResetGpuLockedClocks"); return nvml.SUCCESS },
		SetPersistenceModeFunc:    func(nvml.EnableState) nvml.Return { mutate("SetPersistenceMode"); return nvml.SUCCESS },
	}
	lib := &mock.Interface{
		InitFunc:     func() nvml.Return { return g.initRet },
		ShutdownFunc: func() nvml.Return { g.set(func(g *mockGPU) { g.shut++ }); return nvml.SUCCESS },
		ExtensionsFunc: func() nvml.ExtendedInterface {
			return &mock.ExtendedInterface{LookupSymbolFunc: func(s string) error {
				if g.symbols[s] {
					return nil
				}
				return fmt.Errorf("undefined symbol: %s", s)
			}}
		},
		DeviceGetHandleByIndexFunc: func(i int) (nvml.Device, nvml.Return) {
			if i != 0 {
				return nil, nvml.ERROR_INVALID_ARGUMENT
			}
			return dev, nvml.SUCCESS
		},
		SystemGetDriverVersionFunc: func() (string, nvml.Return) { return "590.44.01", nvml.SUCCESS },
	}
	return lib, dev
}

func TestSamplerNVMLReads(t *testing.T) {
	g := newMockGPU()
	lib, dev := g.lib(t)
	n, err := NewNVML(lib, 0, t.Logf)
	if err != nil {
		t.Fatal(err)
	}
	if n.ThrottleField() != FieldEventReasons {
		t.Errorf("throttle field %s", n.ThrottleField())
	}
	smp, err := n.Read(context.Background(), time.Date(2026, 8, 12, 10, 15, 3, 123e6, time.UTC), testBoot)
	if err != nil {
		t.Fatal(err)
	}
	const want = `{"t":"2026-08-12T10:15:03.123Z","boot_id":"13dc5579-455c-45c8-8e4d-d09c457fa826","gpu_index":0,"gpu_uuid":"GPU-7f3a9c2e-5b1d-4e8f-a6c4-2d9e0b8f1a37","gpu_name":"NVIDIA H100 80GB HBM3","driver_version":"590.44.01","sm_clock_mhz":1980,"clocks_max_sm_mhz":1980,"clocks_applications_graphics_mhz":null,"throttle_reasons_active":"0x0000000000000000","persistence_mode":"Enabled","pstate":"P0","utilization_gpu_pct":100,"temperature_gpu_c":45,"power_draw_w":312.45,"clocks_mem_mhz":2619,"throttle_field":"clocks_event_reasons.active"}`
	if got := string(smp.AppendJSON(nil)); got != want {
		t.Errorf("sample\n got %s\nwant %s", got, want)
	}
	if len(dev.GetCurrentClocksThrottleReasonsCalls()) != 0 {
		t.Error("read the old throttle call although the event call exists")
	}
	n.Close()
	n.Close()
	if g.shutdowns() != 1 {
		t.Errorf("nvmlShutdown called %d times", g.shutdowns())
	}
}

// TestSamplerNVMLOldDriver: a driver without
// nvmlDeviceGetCurrentClocksEventReasons is read through the throttle call,
// the event call is never made, and an applications clock is a number.
func TestSamplerNVMLOldDriver(t *testing.T) {
	g := newMockGPU()
	g.symbols[symEventReasons] = false
	g.app, g.appRet = 1755, nvml.SUCCESS
	lib, dev := g.lib(t)
	n, err := NewNVML(lib, 0, t.Logf)
	if err != nil {
		t.Fatal(err)
	}
	smp, err := n.Read(context.Background(), time.Now(), testBoot)
	if err != nil {
		t.Fatal(err)
	}
	if smp.ThrottleField != FieldThrottleReasons || smp.ThrottleReasonsActive != "0x0000000000000004" ||
		smp.ClocksApplicationsGraphicsMHz == nil || *smp.ClocksApplicationsGraphicsMHz != 1755 {
		t.Errorf("sample %s", smp.AppendJSON(nil))
	}
	if c := len(dev.GetCurrentClocksEventReasonsCalls()); c != 0 {
		t.Errorf("%s called %d times", symEventReasons, c)
	}
}

func TestSamplerNVMLLibraryNotFound(t *testing.T) {
	g := newMockGPU()
	g.initRet = nvml.ERROR_LIBRARY_NOT_FOUND
	lib, _ := g.lib(t)
	_, err := NewNVML(lib, 0, nil)
	if !errors.Is(err, ErrNVMLUnavailable) || err.Error() != "NVML unavailable: libnvidia-ml.so.1 not found (nvmlInit: ERROR_LIBRARY_NOT_FOUND)" {
		t.Fatalf("err = %v", err)
	}
	g.initRet = nvml.ERROR_DRIVER_NOT_LOADED
	_, err = NewNVML(lib, 0, nil)
	if err == nil || errors.Is(err, ErrNVMLUnavailable) || err.Error() != "NVML: nvmlInit: ERROR_DRIVER_NOT_LOADED" {
		t.Fatalf("driver not loaded: %v (auto must not fall back on it)", err)
	}
}

func TestSamplerNVMLRefusesAtOpen(t *testing.T) {
	cases := []struct {
		name string
		edit func(*mockGPU)
		gpu  int
		want string
	}{
		{"no throttle call", func(g *mockGPU) { g.symbols[symEventReasons], g.symbols[symThrottleReasons] = false, false }, 0,
			"NVML: the driver has neither nvmlDeviceGetCurrentClocksEventReasons nor nvmlDeviceGetCurrentClocksThrottleReasons"},
		{"no applications clock call", func(g *mockGPU) { g.symbols[symAppClock] = false }, 0,
			"NVML: the driver has no nvmlDeviceGetApplicationsClock, so clocks.applications.graphics cannot be read"},
		{"no such GPU", func(*mockGPU) {}, 3, "NVML: nvmlDeviceGetHandleByIndex(3): ERROR_INVALID_ARGUMENT"},
		{"SM clock not supported", func(g *mockGPU) { g.smRet = nvml.ERROR_NOT_SUPPORTED }, 0,
			"NVML GPU 0: clocks.sm: nvmlDeviceGetClockInfo(SM) returned ERROR_NOT_SUPPORTED"},
		{"applications clock not supported", func(g *mockGPU) { g.appRet = nvml.ERROR_NOT_SUPPORTED }, 0,
			"NVML GPU 0: clocks.applications.graphics: nvmlDeviceGetApplicationsClock(GRAPHICS) returned ERROR_NOT_SUPPORTED"},
		{"zero SM clock", func(g *mockGPU) { g.sm = 0 }, 0, "NVML GPU 0: clocks.sm: nvmlDeviceGetClockInfo(SM) gave 0 MHz"},
		{"unknown persistence", func(g *mockGPU) { g.pm = 7 }, 0, "NVML GPU 0: persistence_mode: nvmlDeviceGetPersistenceMode gave unknown state 7"},
		{"unknown pstate", func(g *mockGPU) { g.ps = nvml.PSTATE_UNKNOWN }, 0, "NVML GPU 0: pstate: nvmlDeviceGetPerformanceState gave unknown state 32"},
		{"utilization over 100", func(g *mockGPU) { g.util = 101 }, 0, "NVML GPU 0: utilization.gpu: nvmlDeviceGetUtilizationRates gave 101%, more than 100"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			g := newMockGPU()
			c.edit(g)
			lib, _ := g.lib(t)
			_, err := NewNVML(lib, c.gpu, t.Logf)
			if err == nil || !strings.HasPrefix(err.Error(), c.want) {
				t.Fatalf("err = %v\nwant %s", err, c.want)
			}
			if g.shutdowns() != 1 {
				t.Errorf("nvmlShutdown called %d times after a failed open", g.shutdowns())
			}
		})
	}
}

// TestSamplerNVMLOptionalFields: an optional reading the device cannot give
// at open is dropped; one it gave at open and then fails is a refusal.
func TestSamplerNVMLOptionalFields(t *testing.T) {
	g := newMockGPU()
	g.tempRet = nvml.ERROR_NOT_SUPPORTED
	lib, _ := g.lib(t)
	n, err := NewNVML(lib, 0, t.Logf)
	if err != nil {
		t.Fatal(err)
	}
	smp, err := n.Read(context.Background(), time.Now(), testBoot)
	if err != nil {
		t.Fatal(err)
	}
	if smp.TemperatureGPUC != nil || smp.PowerDrawW == nil || *smp.PowerDrawW != 312.45 {
		t.Errorf("sample %s", smp.AppendJSON(nil))
	}
	if !strings.HasSuffix(n.Name(), "optional power.draw clocks.mem") {
		t.Errorf("name %q", n.Name())
	}
	g.set(func(g *mockGPU) { g.powRet = nvml.ERROR_UNKNOWN })
	_, err = n.Read(context.Background(), time.Now(), testBoot)
	if err == nil || err.Error() != "NVML GPU 0: power.draw: nvmlDeviceGetPowerUsage returned ERROR_UNKNOWN" {
		t.Fatalf("err = %v", err)
	}
}

// TestSamplerRunsOnNVML records a window through the NVML mock and refuses
// when a clock read starts failing mid-run.
func TestSamplerRunsOnNVML(t *testing.T) {
	g := newMockGPU()
	lib, _ := g.lib(t)
	cfg := testConfig(t)
	open := func(context.Context) (Backend, error) { return NewNVML(lib, 0, t.Logf) }
	s, err := New(context.Background(), cfg, open)
	if err != nil {
		t.Fatal(err)
	}
	reads := 0
	stop := make(chan string)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			data, _ := readFileString(StreamPath(cfg.Prefix))
			if reads = strings.Count(data, "\n"); reads >= 4 {
				g.set(func(g *mockGPU) { g.smRet = nvml.ERROR_GPU_IS_LOST })
				return
			}
			time.Sleep(5 * time.Millisecond)
		}
	}()
	res, err := runWithTimeout(t, s, context.Background(), stop)
	<-done
	if err == nil || !strings.Contains(err.Error(), "refusing to sample: NVML GPU 0: clocks.sm: nvmlDeviceGetClockInfo(SM) returned ERROR_GPU_IS_LOST; no record written") {
		t.Fatalf("err = %v", err)
	}
	fold, _ := readStream(t, StreamPath(cfg.Prefix))
	if fold.Total != res.Samples || fold.Total < 4 {
		t.Errorf("stream %d samples, result %d", fold.Total, res.Samples)
	}
	if g.shutdowns() != 1 {
		t.Errorf("nvmlShutdown called %d times", g.shutdowns())
	}
}
