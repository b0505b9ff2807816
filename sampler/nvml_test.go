package sampler

import (
	"context"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"
)

// fakeNVML is a box of synthetic H100s (one unless count says more)
// behind the nvmlLib interface; its fields say what each NVML call answers,
// on every device, and smBy, utilBy and smRetBy override the SM clock, the
// utilization and the SM clock call's status per device index. The
// interface has no call that changes GPU state, so no test needs to watch
// for one.
type fakeNVML struct {
	mu       sync.Mutex
	symbols  map[string]bool
	initRet  nvmlReturn
	count    int
	countRet nvmlReturn
	sm       uint32
	smRet    nvmlReturn
	app      uint32
	appRet   nvmlReturn
	util     uint32
	utilRet  nvmlReturn
	mig      uint32
	pm       uint32
	ps       uint32
	tempRet  nvmlReturn
	powRet   nvmlReturn
	limitRet nvmlReturn
	// memRet is what nvmlDeviceGetMemoryInfo answers; memUsed the bytes
	// used it gives, by device index (71234 MiB where not set).
	memRet  nvmlReturn
	memUsed map[int]uint64
	smBy    map[int]uint32
	utilBy  map[int]uint32
	smRetBy map[int]nvmlReturn
	// hang makes every SM clock read wait until release is closed; hangBy
	// makes one device's.
	hang    bool
	hangBy  map[int]bool
	release chan struct{}

	// fields are the field values DeviceGetFieldValues answers (the
	// symbol is absent unless a test adds symFieldValues), by id, and
	// fieldsRet the call's own status.
	fields    map[uint32]nvmlFieldValue
	fieldsRet nvmlReturn
	// moduleFields are what the field values answer at the module's scope.
	moduleFields map[uint32]nvmlFieldValue
	// energyMJ and energyRet are what nvmlDeviceGetTotalEnergyConsumption
	// answers (the symbol is absent unless a test adds symTotalEnergy);
	// each energy read adds energyStep mJ, counted in energyReads.
	energyMJ, energyStep uint64
	energyReads          uint64
	energyRet            nvmlReturn
	driver               string
	// vbios and vbiosRet are what nvmlDeviceGetVbiosVersion answers.
	vbios    string
	vbiosRet nvmlReturn
	// pcie and pcieRet are what the four PCIe link calls answer, in
	// nvmlPCIeCalls' order; pcieDegraded makes a busy device's link run
	// at Gen4 x8 (an idle one's at its maximum).
	pcie         [4]uint32
	pcieRet      nvmlReturn
	pcieDegraded bool
	// procs are each device's compute processes, by index; names their
	// names.
	procs map[int][]uint32
	names map[uint32]string

	shut       int
	eventCalls int
	throtCalls int
	// smReads counts the SM clock reads of each device.
	smReads map[int]int
}

func newFakeNVML() *fakeNVML {
	return &fakeNVML{
		symbols: map[string]bool{symEventReasons: true, symThrottleReasons: true, symAppClock: true, symMigMode: true},
		count:   1, sm: 1980, appRet: nvmlErrorDeprecated, util: 100, pm: nvmlFeatureEnabled,
		smBy: map[int]uint32{}, utilBy: map[int]uint32{}, smRetBy: map[int]nvmlReturn{}, hangBy: map[int]bool{}, smReads: map[int]int{},
		release: make(chan struct{}), fields: map[uint32]nvmlFieldValue{}, driver: "590.44.01", vbiosRet: nvmlErrorNotSupported,
		pcie: [4]uint32{5, 16, 5, 16}, pcieRet: nvmlErrorNotSupported,
	}
}

// withCounters gives the fake the field values of a 590 driver's clock
// event counters, in ns, and the power-smoothing enablement that 251
// means there.
func (g *fakeNVML) withCounters() *fakeNVML {
	g.symbols[symFieldValues] = true
	for id, ns := range map[uint32]uint64{74: 4_000_123_999, 76: 0, 269: 2_000_000, 270: 999, 271: 1 << 40} {
		g.fields[id] = nvmlFieldValue{FieldID: id, ValueType: nvmlValueUlonglong, Value: ns}
	}
	g.fields[251] = nvmlFieldValue{FieldID: 251, ValueType: nvmlValueUint, Value: 1}
	return g
}

func (g *fakeNVML) set(f func(*fakeNVML)) {
	g.mu.Lock()
	f(g)
	g.mu.Unlock()
}

// state is a copy of what device d answers now.
type fakeState struct {
	sm, app, util, mig, pm, ps      uint32
	smRet, appRet, utilRet, tempRet nvmlReturn
	powRet, limitRet                nvmlReturn
	hang                            bool
}

func (g *fakeNVML) get(d nvmlDevice) fakeState {
	g.mu.Lock()
	defer g.mu.Unlock()
	i := int(d - fakeDev)
	s := fakeState{sm: g.sm, smRet: g.smRet, app: g.app, appRet: g.appRet, util: g.util, utilRet: g.utilRet,
		mig: g.mig, pm: g.pm, ps: g.ps, tempRet: g.tempRet, powRet: g.powRet, limitRet: g.limitRet, hang: g.hang}
	if v, ok := g.smBy[i]; ok {
		s.sm = v
	}
	if v, ok := g.utilBy[i]; ok {
		s.util = v
	}
	if v, ok := g.smRetBy[i]; ok {
		s.smRet = v
	}
	s.hang = s.hang || g.hangBy[i]
	return s
}

func (g *fakeNVML) shutdowns() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.shut
}

// fakeDev is device 0's handle; device i's is fakeDev+i.
const fakeDev nvmlDevice = 0x5000

func (g *fakeNVML) dev(d nvmlDevice) nvmlReturn {
	if d < fakeDev || int(d-fakeDev) >= g.count {
		return nvmlErrorInvalidArgument
	}
	return nvmlSuccess
}

// fakeUUID is device i's UUID.
func fakeUUID(i int) string { return fmt.Sprintf("GPU-7f3a9c2e-5b1d-4e8f-a6c4-2d9e0b8f1a%d", 37+i) }

func (g *fakeNVML) Has(s string) bool { return g.symbols[s] }
func (g *fakeNVML) Init() nvmlReturn  { return g.initRet }
func (g *fakeNVML) Shutdown() nvmlReturn {
	g.set(func(g *fakeNVML) { g.shut++ })
	return nvmlSuccess
}
func (g *fakeNVML) SystemGetDriverVersion() (string, nvmlReturn) {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.driver, nvmlSuccess
}
func (g *fakeNVML) DeviceGetVbiosVersion(d nvmlDevice) (string, nvmlReturn) {
	if ret := g.dev(d); ret != nvmlSuccess {
		return "", ret
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.vbios, g.vbiosRet
}
func (g *fakeNVML) DeviceGetPcieLink(d nvmlDevice, i int) (uint32, nvmlReturn) {
	if ret := g.dev(d); ret != nvmlSuccess || i < 0 || i > 3 {
		return 0, nvmlErrorInvalidArgument
	}
	util := g.get(d).util
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.pcieDegraded && util > 0 && i < 2 {
		return [2]uint32{4, 8}[i], g.pcieRet
	}
	return g.pcie[i], g.pcieRet
}
func (g *fakeNVML) DeviceGetComputeRunningProcesses(d nvmlDevice) ([]uint32, nvmlReturn) {
	if ret := g.dev(d); ret != nvmlSuccess {
		return nil, ret
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.procs[int(d-fakeDev)], nvmlSuccess
}
func (g *fakeNVML) SystemGetProcessName(pid uint32) (string, nvmlReturn) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if n, ok := g.names[pid]; ok {
		return n, nvmlSuccess
	}
	return "", nvmlErrorNotFound
}
func (g *fakeNVML) DeviceGetFieldValues(d nvmlDevice, reqs []nvmlFieldReq) ([]nvmlFieldValue, nvmlReturn) {
	if ret := g.dev(d); ret != nvmlSuccess {
		return nil, ret
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.fieldsRet != nvmlSuccess {
		return nil, g.fieldsRet
	}
	out := make([]nvmlFieldValue, len(reqs))
	for i, r := range reqs {
		fields := g.fields
		if r.Scope == nvmlScopeModule {
			fields = g.moduleFields
		}
		v, ok := fields[r.ID]
		if !ok {
			v = nvmlFieldValue{FieldID: r.ID, Return: nvmlErrorNotSupported}
		}
		if r.ID == nvmlFieldTotalEnergy && ok {
			v.Value += g.energyStep * uint64(g.energyReads)
			g.energyReads++
		}
		out[i] = v
	}
	return out, nvmlSuccess
}
func (g *fakeNVML) DeviceGetTotalEnergyConsumption(d nvmlDevice) (uint64, nvmlReturn) {
	if ret := g.dev(d); ret != nvmlSuccess {
		return 0, ret
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if !g.symbols[symTotalEnergy] {
		return 0, nvmlErrorFunctionNotFound
	}
	v := g.energyMJ + g.energyStep*uint64(g.energyReads)
	g.energyReads++
	return v, g.energyRet
}
func (g *fakeNVML) DeviceGetCount() (int, nvmlReturn) { return g.count, g.countRet }
func (g *fakeNVML) DeviceGetHandleByIndex(i int) (nvmlDevice, nvmlReturn) {
	if i < 0 || i >= g.count {
		return 0, nvmlErrorInvalidArgument
	}
	return fakeDev + nvmlDevice(i), nvmlSuccess
}
func (g *fakeNVML) DeviceGetUUID(d nvmlDevice) (string, nvmlReturn) {
	return fakeUUID(int(d - fakeDev)), g.dev(d)
}
func (g *fakeNVML) DeviceGetName(d nvmlDevice) (string, nvmlReturn) {
	return "NVIDIA H100 80GB HBM3", g.dev(d)
}
func (g *fakeNVML) DeviceGetClockInfo(d nvmlDevice, ct nvmlClock) (uint32, nvmlReturn) {
	s := g.get(d)
	switch ct {
	case nvmlClockSM:
		g.set(func(g *fakeNVML) { g.smReads[int(d-fakeDev)]++ })
		if s.hang {
			<-g.release
		}
		if ret := g.dev(d); ret != nvmlSuccess {
			return 0, ret
		}
		return s.sm, s.smRet
	case nvmlClockMem:
		return 2619, g.dev(d)
	}
	return 0, nvmlErrorInvalidArgument
}
func (g *fakeNVML) DeviceGetMaxClockInfo(d nvmlDevice, ct nvmlClock) (uint32, nvmlReturn) {
	if ct != nvmlClockSM {
		return 0, nvmlErrorInvalidArgument
	}
	return 1980, g.dev(d)
}
func (g *fakeNVML) DeviceGetApplicationsClock(d nvmlDevice, ct nvmlClock) (uint32, nvmlReturn) {
	if ct != nvmlClockGraphics {
		return 0, nvmlErrorInvalidArgument
	}
	s := g.get(d)
	return s.app, s.appRet
}
func (g *fakeNVML) DeviceGetCurrentClocksEventReasons(d nvmlDevice) (uint64, nvmlReturn) {
	g.set(func(g *fakeNVML) { g.eventCalls++ })
	return 0, g.dev(d)
}
func (g *fakeNVML) DeviceGetCurrentClocksThrottleReasons(d nvmlDevice) (uint64, nvmlReturn) {
	g.set(func(g *fakeNVML) { g.throtCalls++ })
	return 0x4, g.dev(d)
}
func (g *fakeNVML) DeviceGetPersistenceMode(d nvmlDevice) (uint32, nvmlReturn) {
	return g.get(d).pm, g.dev(d)
}
func (g *fakeNVML) DeviceGetPerformanceState(d nvmlDevice) (uint32, nvmlReturn) {
	return g.get(d).ps, g.dev(d)
}
func (g *fakeNVML) DeviceGetUtilizationRates(d nvmlDevice) (uint32, uint32, nvmlReturn) {
	s := g.get(d)
	if s.utilRet != nvmlSuccess {
		return 0, 0, s.utilRet
	}
	return s.util, 40, g.dev(d)
}
func (g *fakeNVML) DeviceGetTemperature(d nvmlDevice, sensor uint32) (uint32, nvmlReturn) {
	return 45, g.get(d).tempRet
}
func (g *fakeNVML) DeviceGetPowerUsage(d nvmlDevice) (uint32, nvmlReturn) {
	return 312450, g.get(d).powRet
}
func (g *fakeNVML) DeviceGetEnforcedPowerLimit(d nvmlDevice) (uint32, nvmlReturn) {
	return 700000, g.get(d).limitRet
}
func (g *fakeNVML) DeviceGetMemoryInfo(d nvmlDevice) (uint64, uint64, uint64, nvmlReturn) {
	g.mu.Lock()
	defer g.mu.Unlock()
	used, ok := g.memUsed[int(d-fakeDev)]
	if !ok {
		used = 71234 << 20
	}
	const total = 81559 << 20
	return total, total - min(used, total), used, g.memRet
}
func (g *fakeNVML) DeviceGetMigMode(d nvmlDevice) (uint32, uint32, nvmlReturn) {
	s := g.get(d)
	return s.mig, s.mig, g.dev(d)
}

func readFileString(path string) (string, error) {
	b, err := os.ReadFile(path)
	return string(b), err
}

func TestSamplerNVMLReads(t *testing.T) {
	g := newFakeNVML()
	n, err := NewNVML(g, GPUIndices(0), time.Second, t.Logf)
	if err != nil {
		t.Fatal(err)
	}
	if n.ThrottleField() != FieldEventReasons {
		t.Errorf("throttle field %s", n.ThrottleField())
	}
	smp, err := one(n.Read(context.Background(), time.Date(2026, 8, 12, 10, 15, 3, 123e6, time.UTC), testBoot))
	if err != nil {
		t.Fatal(err)
	}
	const want = `{"t":"2026-08-12T10:15:03.123Z","boot_id":"13dc5579-455c-45c8-8e4d-d09c457fa826","gpu_index":0,"gpu_uuid":"GPU-7f3a9c2e-5b1d-4e8f-a6c4-2d9e0b8f1a37","gpu_name":"NVIDIA H100 80GB HBM3","driver_version":"590.44.01","sm_clock_mhz":1980,"clocks_max_sm_mhz":1980,"clocks_applications_graphics_mhz":null,"throttle_reasons_active":"0x0000000000000000","persistence_mode":"Enabled","pstate":"P0","utilization_gpu_pct":100,"temperature_gpu_c":45,"power_draw_w":312.45,"clocks_mem_mhz":2619,"throttle_field":"clocks_event_reasons.active","enforced_power_limit_w":700,"memory_used_mib":71234}`
	if got := string(smp.AppendJSON(nil)); got != want {
		t.Errorf("sample\n got %s\nwant %s", got, want)
	}
	if g.throtCalls != 0 {
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
	g := newFakeNVML()
	g.symbols[symEventReasons] = false
	g.app, g.appRet = 1755, nvmlSuccess
	n, err := NewNVML(g, GPUIndices(0), time.Second, t.Logf)
	if err != nil {
		t.Fatal(err)
	}
	smp, err := one(n.Read(context.Background(), time.Now(), testBoot))
	if err != nil {
		t.Fatal(err)
	}
	if smp.ThrottleField != FieldThrottleReasons || smp.ThrottleReasonsActive != "0x0000000000000004" ||
		smp.ClocksApplicationsGraphicsMHz == nil || *smp.ClocksApplicationsGraphicsMHz != 1755 {
		t.Errorf("sample %s", smp.AppendJSON(nil))
	}
	if g.eventCalls != 0 {
		t.Errorf("%s called %d times", symEventReasons, g.eventCalls)
	}
}

func TestSamplerNVMLInitFails(t *testing.T) {
	g := newFakeNVML()
	g.initRet = nvmlErrorDriverNotLoaded
	_, err := NewNVML(g, GPUIndices(0), time.Second, nil)
	if err == nil || err.Error() != "NVML: nvmlInit_v2: ERROR_DRIVER_NOT_LOADED" {
		t.Fatalf("driver not loaded: %v", err)
	}
}

// TestSamplerNVMLRefusesAtOpen: a device or driver that cannot give a
// reading whole is refused at open, saying what is unsupported and what to
// do.
func TestSamplerNVMLRefusesAtOpen(t *testing.T) {
	cases := []struct {
		name string
		edit func(*fakeNVML)
		gpu  int
		want string
	}{
		{"no throttle call", func(g *fakeNVML) { g.symbols[symEventReasons], g.symbols[symThrottleReasons] = false, false }, 0,
			"NVML: the driver has neither nvmlDeviceGetCurrentClocksEventReasons nor nvmlDeviceGetCurrentClocksThrottleReasons, so clocks_event_reasons.active cannot be read; " + nvmlDriverAdvice},
		{"no applications clock call", func(g *fakeNVML) { g.symbols[symAppClock] = false }, 0,
			"NVML: the driver has no nvmlDeviceGetApplicationsClock, so clocks.applications.graphics cannot be read; " + nvmlDriverAdvice},
		{"no such GPU", func(*fakeNVML) {}, 3, "NVML: nvmlDeviceGetHandleByIndex_v2(3): ERROR_INVALID_ARGUMENT"},
		{"SM clock not supported", func(g *fakeNVML) { g.smRet = nvmlErrorNotSupported }, 0,
			"NVML GPU 0: clocks.sm: nvmlDeviceGetClockInfo(SM) returned ERROR_NOT_SUPPORTED: the driver cannot give clocks.sm, which every sample needs; " + nvmlDriverAdvice},
		{"applications clock not supported", func(g *fakeNVML) { g.appRet = nvmlErrorNotSupported }, 0,
			"NVML GPU 0: clocks.applications.graphics: nvmlDeviceGetApplicationsClock(GRAPHICS) returned ERROR_NOT_SUPPORTED: the driver cannot give clocks.applications.graphics"},
		{"no permission", func(g *fakeNVML) { g.smRet = nvmlErrorNoPermission }, 0,
			"NVML GPU 0: clocks.sm: nvmlDeviceGetClockInfo(SM) returned ERROR_NO_PERMISSION: reading it needs privileges this process lacks; run clockgate as a user the driver lets read it"},
		{"MIG: no utilization", func(g *fakeNVML) { g.utilRet, g.mig = nvmlErrorNotSupported, nvmlMIGEnabled }, 0,
			"NVML GPU 0: utilization.gpu: nvmlDeviceGetUtilizationRates returned ERROR_NOT_SUPPORTED: this GPU reports no utilization. GPU 0 is in MIG mode, where NVML gives no utilization. " + migAdvice},
		{"no utilization, MIG off", func(g *fakeNVML) { g.utilRet = nvmlErrorNotSupported }, 0,
			"NVML GPU 0: utilization.gpu: nvmlDeviceGetUtilizationRates returned ERROR_NOT_SUPPORTED: this GPU reports no utilization. " + migAdvice},
		{"zero SM clock", func(g *fakeNVML) { g.sm = 0 }, 0, "NVML GPU 0: clocks.sm: nvmlDeviceGetClockInfo(SM) gave 0 MHz"},
		{"unknown persistence", func(g *fakeNVML) { g.pm = 7 }, 0, "NVML GPU 0: persistence_mode: nvmlDeviceGetPersistenceMode gave unknown state 7"},
		{"unknown pstate", func(g *fakeNVML) { g.ps = 32 }, 0, "NVML GPU 0: pstate: nvmlDeviceGetPerformanceState gave unknown state 32"},
		{"utilization over 100", func(g *fakeNVML) { g.util = 101 }, 0, "NVML GPU 0: utilization.gpu: nvmlDeviceGetUtilizationRates gave 101%, more than 100"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			g := newFakeNVML()
			c.edit(g)
			_, err := NewNVML(g, GPUIndices(c.gpu), time.Second, t.Logf)
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
	g := newFakeNVML()
	g.tempRet = nvmlErrorNotSupported
	n, err := NewNVML(g, GPUIndices(0), time.Second, t.Logf)
	if err != nil {
		t.Fatal(err)
	}
	smp, err := one(n.Read(context.Background(), time.Now(), testBoot))
	if err != nil {
		t.Fatal(err)
	}
	if smp.TemperatureGPUC != nil || smp.PowerDrawW == nil || *smp.PowerDrawW != 312.45 {
		t.Errorf("sample %s", smp.AppendJSON(nil))
	}
	if !strings.HasSuffix(n.Name(), "optional power.draw clocks.mem enforced.power.limit memory.used") {
		t.Errorf("name %q", n.Name())
	}
	g.set(func(g *fakeNVML) { g.powRet = nvmlErrorUnknown })
	_, err = n.Read(context.Background(), time.Now(), testBoot)
	if err == nil || err.Error() != "NVML GPU 0: power.draw: nvmlDeviceGetPowerUsage returned ERROR_UNKNOWN" {
		t.Fatalf("err = %v", err)
	}
}

// TestSamplerNVMLHungCall: a reading whose NVML call does not return is
// refused after the timeout, later readings are refused at once, and the
// library is not shut down under the hung call.
func TestSamplerNVMLHungCall(t *testing.T) {
	g := newFakeNVML()
	n, err := NewNVML(g, GPUIndices(0), 200*time.Millisecond, t.Logf)
	if err != nil {
		t.Fatal(err)
	}
	defer close(g.release)
	g.set(func(g *fakeNVML) { g.hang = true })
	start := time.Now()
	_, err = n.Read(context.Background(), time.Now(), testBoot)
	if err == nil || err.Error() != "NVML GPU 0 did not answer within 200ms" {
		t.Fatalf("err = %v", err)
	}
	if el := time.Since(start); el > 2*time.Second {
		t.Errorf("a hung NVML call held the reading %v", el)
	}
	if _, err := n.Read(context.Background(), time.Now(), testBoot); err == nil || !strings.Contains(err.Error(), "an earlier reading never returned") {
		t.Errorf("second read: %v", err)
	}
	n.Close()
	if g.shutdowns() != 0 {
		t.Error("nvmlShutdown called under a hung call")
	}
}

// TestSamplerRunsOnNVML records a window through the fake NVML and refuses
// when a clock read starts failing mid-run: the record is written with
// stop_reason refused.
func TestSamplerRunsOnNVML(t *testing.T) {
	t.Parallel()
	g := newFakeNVML()
	cfg := testConfig(t)
	open := func(context.Context) (Backend, error) { return NewNVML(g, GPUIndices(0), time.Second, t.Logf) }
	s, err := New(context.Background(), cfg, open)
	if err != nil {
		t.Fatal(err)
	}
	reads := 0
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			data, _ := readFileString(StreamPath(cfg.Prefix))
			if reads = strings.Count(data, "\n"); reads >= 3 {
				g.set(func(g *fakeNVML) { g.smRet = nvmlErrorGPUIsLost })
				return
			}
			time.Sleep(5 * time.Millisecond)
		}
	}()
	res, err := runWithTimeout(t, s, context.Background(), nil)
	<-done
	const why = "NVML GPU 0: clocks.sm: nvmlDeviceGetClockInfo(SM) returned ERROR_GPU_IS_LOST"
	if err == nil || !strings.HasPrefix(err.Error(), "refusing to sample: "+why+"; the record says stop_reason refused") {
		t.Fatalf("err = %v", err)
	}
	fold, _ := readStream(t, StreamPath(cfg.Prefix))
	if fold.Total != res.Samples || fold.Total < 3 {
		t.Errorf("stream %d samples, result %d", fold.Total, res.Samples)
	}
	if res.Record == nil || res.Record.Window.StopReason != "refused" || res.Record.Refusal != why {
		t.Errorf("record %+v", res.Record)
	}
	if g.shutdowns() != 1 {
		t.Errorf("nvmlShutdown called %d times", g.shutdowns())
	}
}

// The enforced power limit: read in mW and recorded in W; a GPU that
// cannot give it drops it at the start; one that stops giving it, or
// gives 0 mW, is a refusal naming it.
func TestSamplerNVMLPowerLimit(t *testing.T) {
	g := newFakeNVML()
	g.limitRet = nvmlErrorNotSupported
	n, err := NewNVML(g, GPUIndices(0), time.Second, nil)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(n.Name(), "enforced.power.limit") {
		t.Fatalf("name %q", n.Name())
	}
	g = newFakeNVML()
	if n, err = NewNVML(g, GPUIndices(0), time.Second, nil); err != nil {
		t.Fatal(err)
	}
	rows, err := n.Read(context.Background(), time.Now(), testBoot)
	if err != nil || *rows[0].EnforcedPowerLimitW != 700 {
		t.Fatalf("rows %v, %v", rows, err)
	}
	g.set(func(g *fakeNVML) { g.limitRet = nvmlErrorUnknown })
	if _, err := n.Read(context.Background(), time.Now(), testBoot); err == nil || !strings.Contains(err.Error(), "enforced.power.limit: nvmlDeviceGetEnforcedPowerLimit returned ERROR_UNKNOWN") {
		t.Fatalf("error %v", err)
	}
}

// The clock event counters through nvmlDeviceGetFieldValues: on a 590
// driver the slowdown counters are read from fields 269..271 (251 there is
// power smoothing), each ns value is recorded in µs (floored), all five
// join the sample as event_counters_us and the name lists them.
func TestSamplerNVMLCounters(t *testing.T) {
	g := newFakeNVML().withCounters()
	n, err := NewNVML(g, GPUIndices(0), time.Second, t.Logf)
	if err != nil {
		t.Fatal(err)
	}
	smp, err := one(n.Read(context.Background(), time.Now(), testBoot))
	if err != nil {
		t.Fatal(err)
	}
	const want = `"event_counters_us":{"sw_power_cap":4000123,"sync_boost":0,"sw_thermal_slowdown":2000,"hw_thermal_slowdown":0,"hw_power_brake_slowdown":1099511627}`
	if got := string(smp.AppendJSON(nil)); !strings.Contains(got, want) {
		t.Errorf("sample %s\nwant it to hold %s", got, want)
	}
	if !strings.HasSuffix(n.Name(), "enforced.power.limit "+strings.Join(CounterFields[:], " ")+" memory.used") {
		t.Errorf("name %q", n.Name())
	}
	// A counter that stops answering is a refusal naming it.
	g.set(func(g *fakeNVML) { g.fields[270] = nvmlFieldValue{FieldID: 270, Return: nvmlErrorUnknown} })
	_, err = n.Read(context.Background(), time.Now(), testBoot)
	if err == nil || err.Error() != "NVML GPU 0: clocks_event_reasons_counters.hw_thermal_slowdown: nvmlDeviceGetFieldValues(field 270) returned ERROR_UNKNOWN" {
		t.Fatalf("err = %v", err)
	}
	g.set(func(g *fakeNVML) { g.fieldsRet = nvmlErrorGPUIsLost })
	_, err = n.Read(context.Background(), time.Now(), testBoot)
	if err == nil || !strings.HasSuffix(err.Error(), ": nvmlDeviceGetFieldValues returned ERROR_GPU_IS_LOST") {
		t.Fatalf("err = %v", err)
	}
}

// The counter ids follow the driver's branch: 251..253 before 590,
// 269..271 from it; a version without a branch number is refused.
func TestSamplerNVMLCounterIDs(t *testing.T) {
	for _, c := range []struct {
		driver string
		want   [5]uint32
	}{
		{"580.173.02", [5]uint32{74, 76, 251, 252, 253}},
		{"589.99", [5]uint32{74, 76, 251, 252, 253}},
		{"590.48.01", [5]uint32{74, 76, 269, 270, 271}},
		{"595.80", [5]uint32{74, 76, 269, 270, 271}},
	} {
		got, err := counterFieldIDs(c.driver)
		if err != nil || got != c.want {
			t.Errorf("%s: %v, %v; want %v", c.driver, got, err, c.want)
		}
	}
	if _, err := counterFieldIDs("r590"); err == nil || err.Error() != `driver version "r590" has no branch number` {
		t.Errorf("err = %v", err)
	}
	// A 580 driver reads 251..253 as counters.
	g := newFakeNVML().withCounters()
	g.driver = "580.173.02"
	for i, id := range []uint32{251, 252, 253} {
		g.fields[id] = nvmlFieldValue{FieldID: id, ValueType: nvmlValueUlonglong, Value: uint64(i+1) * 1000}
	}
	n, err := NewNVML(g, GPUIndices(0), time.Second, t.Logf)
	if err != nil {
		t.Fatal(err)
	}
	smp, err := one(n.Read(context.Background(), time.Now(), testBoot))
	if err != nil {
		t.Fatal(err)
	}
	if c := smp.EventCountersUS; c == nil || c.SwThermal != 1 || c.HwThermal != 2 || c.HwPowerBrake != 3 {
		t.Errorf("sample %s", smp.AppendJSON(nil))
	}
}

// All five or none: a driver without the call, a counter it does not
// give at open, or one given as a double drops the counters with a log
// line naming why, and the samples carry none.
func TestSamplerNVMLCountersDropped(t *testing.T) {
	cases := []struct {
		name string
		edit func(*fakeNVML)
		log  string
	}{
		{"no call", func(g *fakeNVML) { g.symbols[symFieldValues] = false },
			"NVML: optional fields clocks_event_reasons_counters.* dropped: the driver has no nvmlDeviceGetFieldValues"},
		{"one not supported", func(g *fakeNVML) { delete(g.fields, 271) },
			"NVML: optional fields clocks_event_reasons_counters.* dropped: clocks_event_reasons_counters.hw_power_brake_slowdown: nvmlDeviceGetFieldValues(field 271) returned ERROR_NOT_SUPPORTED"},
		{"a double", func(g *fakeNVML) {
			g.fields[76] = nvmlFieldValue{FieldID: 76, ValueType: nvmlValueDouble, Value: 0x3ff0000000000000}
		},
			"NVML: optional fields clocks_event_reasons_counters.* dropped: clocks_event_reasons_counters.sync_boost: nvmlDeviceGetFieldValues(field 76) gave value type 0 (0x3ff0000000000000), not a non-negative integer"},
		{"a negative", func(g *fakeNVML) {
			g.fields[74] = nvmlFieldValue{FieldID: 74, ValueType: nvmlValueSlonglong, Value: 1 << 63}
		},
			"NVML: optional fields clocks_event_reasons_counters.* dropped: clocks_event_reasons_counters.sw_power_cap: nvmlDeviceGetFieldValues(field 74) gave value type 4 (0x8000000000000000), not a non-negative integer"},
		{"call fails", func(g *fakeNVML) { g.fieldsRet = nvmlErrorNotSupported },
			"NVML: optional fields clocks_event_reasons_counters.* dropped: " + strings.Join(CounterFields[:], ", ") + ": nvmlDeviceGetFieldValues returned ERROR_NOT_SUPPORTED"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			g := newFakeNVML().withCounters()
			c.edit(g)
			var logs []string
			n, err := NewNVML(g, GPUIndices(0), time.Second, func(f string, a ...any) { logs = append(logs, fmt.Sprintf(f, a...)) })
			if err != nil {
				t.Fatal(err)
			}
			smp, err := one(n.Read(context.Background(), time.Now(), testBoot))
			if err != nil {
				t.Fatal(err)
			}
			if smp.EventCountersUS != nil || strings.Contains(n.Name(), "counters") {
				t.Errorf("sample %s, name %q", smp.AppendJSON(nil), n.Name())
			}
			found := false
			for _, l := range logs {
				found = found || l == c.log
			}
			if !found {
				t.Errorf("logs %q\nwant %q", logs, c.log)
			}
		})
	}
}

// vbios_version through nvmlDeviceGetVbiosVersion: kept where every GPU
// gives printable text at open, dropped with a log line where one does
// not, and a refusal naming it when it stops answering.
func TestSamplerNVMLVbios(t *testing.T) {
	g := newFakeNVML()
	g.vbios, g.vbiosRet = "96.00.A5.00.01", nvmlSuccess
	n, err := NewNVML(g, GPUIndices(0), time.Second, t.Logf)
	if err != nil {
		t.Fatal(err)
	}
	smp, err := one(n.Read(context.Background(), time.Now(), testBoot))
	if err != nil {
		t.Fatal(err)
	}
	if got := string(smp.AppendJSON(nil)); !strings.HasSuffix(got, `,"vbios_version":"96.00.A5.00.01","memory_used_mib":71234}`) || !strings.HasSuffix(n.Name(), " vbios_version memory.used") {
		t.Errorf("sample %s, name %q", got, n.Name())
	}
	g.set(func(g *fakeNVML) { g.vbiosRet = nvmlErrorUnknown })
	if _, err := n.Read(context.Background(), time.Now(), testBoot); err == nil || err.Error() != "NVML GPU 0: vbios_version: nvmlDeviceGetVbiosVersion returned ERROR_UNKNOWN" {
		t.Errorf("err = %v", err)
	}
	for _, c := range []struct {
		v   string
		ret nvmlReturn
		log string
	}{
		{"", nvmlErrorNotSupported, `NVML: optional field vbios_version dropped: nvmlDeviceGetVbiosVersion: ERROR_NOT_SUPPORTED ("")`},
		{"96.00\x01", nvmlSuccess, `NVML: optional field vbios_version dropped: nvmlDeviceGetVbiosVersion: SUCCESS ("96.00\x01")`},
	} {
		g := newFakeNVML()
		g.vbios, g.vbiosRet = c.v, c.ret
		var logs []string
		n, err := NewNVML(g, GPUIndices(0), time.Second, func(f string, a ...any) { logs = append(logs, fmt.Sprintf(f, a...)) })
		if err != nil {
			t.Fatal(err)
		}
		smp, err := one(n.Read(context.Background(), time.Now(), testBoot))
		if err != nil || smp.VbiosVersion != nil {
			t.Errorf("%q: %v, %v", c.v, smp, err)
		}
		if len(logs) == 0 || logs[len(logs)-1] != c.log {
			t.Errorf("logs %q\nwant %q", logs, c.log)
		}
	}
}

// NVML's memory used (nvmlDeviceGetMemoryInfo, bytes) is each sample's
// memory_used_mib; a driver without it at open drops the field, one that
// stops giving it, or gives more used than there is, is a refusal.
func TestSamplerNVMLMemoryUsed(t *testing.T) {
	g := newFakeNVML()
	g.memUsed = map[int]uint64{0: 1536 << 19}
	n, err := NewNVML(g, GPUIndices(0), time.Second, t.Logf)
	if err != nil {
		t.Fatal(err)
	}
	smp, err := one(n.Read(context.Background(), time.Now(), testBoot))
	if err != nil || smp.MemoryUsedMiB == nil || *smp.MemoryUsedMiB != 768 {
		t.Fatalf("sample %v, %v; want 768 MiB", smp, err)
	}
	g.set(func(g *fakeNVML) { g.memRet = nvmlErrorUnknown })
	if _, err := n.Read(context.Background(), time.Now(), testBoot); err == nil || !strings.Contains(err.Error(), "NVML GPU 0: memory.used: nvmlDeviceGetMemoryInfo returned ERROR_UNKNOWN") {
		t.Errorf("a memory reading that fails: %v", err)
	}
	g.set(func(g *fakeNVML) { g.memRet = nvmlSuccess; g.memUsed[0] = 1 << 40 })
	if _, err := n.Read(context.Background(), time.Now(), testBoot); err == nil || !strings.Contains(err.Error(), "nvmlDeviceGetMemoryInfo gave 1099511627776 bytes used of 85520809984") {
		t.Errorf("more used than there is: %v", err)
	}
	n.Close()
	g = newFakeNVML()
	g.memRet = nvmlErrorNotSupported
	var logged []string
	n, err = NewNVML(g, GPUIndices(0), time.Second, func(f string, a ...any) { logged = append(logged, fmt.Sprintf(f, a...)) })
	if err != nil {
		t.Fatal(err)
	}
	defer n.Close()
	if smp, err := one(n.Read(context.Background(), time.Now(), testBoot)); err != nil || smp.MemoryUsedMiB != nil || strings.Contains(n.Name(), "memory.used") {
		t.Errorf("a driver without memory info: %v, %v, %q", smp, err, n.Name())
	}
	if !contains(logged, "NVML: optional field memory.used dropped: nvmlDeviceGetMemoryInfo: ERROR_NOT_SUPPORTED (85520809984 bytes in all)") {
		t.Errorf("log %q", logged)
	}
}
