//go:build linux && !nonvml

package sampler

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/clockgate/clockgate/clocks"
)

var fakeNVMLBuild struct {
	once sync.Once
	dirs map[string]string
	err  error
	out  []byte
}

// fakeNVMLLibrary compiles testdata/fakenvml/fakenvml.c into
// DIR/libnvidia-ml.so.1, once per test binary and variant ("" or "mig"), and
// returns DIR. It skips the test where no C compiler is installed: the
// bindings themselves need none, only this proof of their ABI does.
func fakeNVMLLibrary(t *testing.T, variant string) string {
	t.Helper()
	gcc, err := exec.LookPath("gcc")
	if err != nil {
		t.Skip("gcc not found: this test compiles a fake libnvidia-ml.so.1 to prove the NVML bindings' ABI, and needs a C compiler")
	}
	fakeNVMLBuild.once.Do(func() {
		fakeNVMLBuild.dirs = map[string]string{}
		for _, v := range []string{"", "mig"} {
			dir := filepath.Join(testBin, "fakenvml-"+v)
			if err := os.MkdirAll(dir, 0o755); err != nil {
				fakeNVMLBuild.err = err
				return
			}
			args := []string{"-shared", "-fPIC", "-Wall", "-Werror", "-o", filepath.Join(dir, "libnvidia-ml.so.1"), "testdata/fakenvml/fakenvml.c"}
			if v == "mig" {
				args = append([]string{"-DFAKENVML_MIG"}, args...)
			}
			if fakeNVMLBuild.out, fakeNVMLBuild.err = exec.Command(gcc, args...).CombinedOutput(); fakeNVMLBuild.err != nil {
				return
			}
			fakeNVMLBuild.dirs[v] = dir
		}
	})
	if fakeNVMLBuild.err != nil {
		t.Fatalf("compiling the fake libnvidia-ml.so.1: %v\n%s", fakeNVMLBuild.err, fakeNVMLBuild.out)
	}
	return fakeNVMLBuild.dirs[variant]
}

// TestSamplerNVMLBindingsABI loads a compiled libnvidia-ml.so.1 through the
// purego bindings and reads both of its GPUs: every value crosses the C ABI
// (strings, a pointer to a device handle, unsigned ints, the 64-bit
// throttle set with a high bit, the utilization struct, an array of
// nvmlFieldValue_t read back at its C offsets), and a call the
// library lacks is known absent; nvmlDeviceGetCount_v2 lists both GPUs,
// and one reading reads both.
func TestSamplerNVMLBindingsABI(t *testing.T) {
	dir := fakeNVMLLibrary(t, "")
	lib, err := loadNVML(filepath.Join(dir, "libnvidia-ml.so.1"))
	if err != nil {
		t.Fatal(err)
	}
	if !lib.Has(symEventReasons) || lib.Has(symThrottleReasons) || !lib.Has(symAppClock) {
		t.Errorf("symbols %v", lib.symbols)
	}
	if _, ret := lib.DeviceGetCurrentClocksThrottleReasons(1); ret != nvmlErrorFunctionNotFound {
		t.Errorf("a call the library lacks returned %v", ret)
	}
	want := map[int]string{
		0: `{"t":"2026-08-12T10:15:03.123Z","boot_id":"13dc5579-455c-45c8-8e4d-d09c457fa826","gpu_index":0,"gpu_uuid":"GPU-7f3a9c2e-5b1d-4e8f-a6c4-2d9e0b8f1a30","gpu_name":"NVIDIA H100 80GB HBM3","driver_version":"590.44.01","sm_clock_mhz":1755,"clocks_max_sm_mhz":1980,"clocks_applications_graphics_mhz":null,"throttle_reasons_active":"0x0000010000000004","persistence_mode":"Enabled","pstate":"P2","utilization_gpu_pct":87,"temperature_gpu_c":47,"power_draw_w":412.345,"clocks_mem_mhz":2619,"throttle_field":"clocks_event_reasons.active","event_counters_us":{"sw_power_cap":1250999896,"sync_boost":0,"sw_thermal_slowdown":7,"hw_thermal_slowdown":0,"hw_power_brake_slowdown":2000},"vbios_version":"96.00.A5.00.01","memory_used_mib":71234,"pcie_gen":5,"pcie_width":16,"pcie_gen_max":5,"pcie_width_max":16}`,
		1: `{"t":"2026-08-12T10:15:03.123Z","boot_id":"13dc5579-455c-45c8-8e4d-d09c457fa826","gpu_index":1,"gpu_uuid":"GPU-7f3a9c2e-5b1d-4e8f-a6c4-2d9e0b8f1a31","gpu_name":"NVIDIA H100 80GB HBM3","driver_version":"590.44.01","sm_clock_mhz":1740,"clocks_max_sm_mhz":1980,"clocks_applications_graphics_mhz":null,"throttle_reasons_active":"0x0000010000000004","persistence_mode":"Enabled","pstate":"P2","utilization_gpu_pct":87,"temperature_gpu_c":47,"power_draw_w":412.345,"clocks_mem_mhz":2619,"throttle_field":"clocks_event_reasons.active","event_counters_us":{"sw_power_cap":1251000896,"sync_boost":1000,"sw_thermal_slowdown":1007,"hw_thermal_slowdown":1000,"hw_power_brake_slowdown":3000},"vbios_version":"96.00.A5.00.02","memory_used_mib":70000.5,"pcie_gen":4,"pcie_width":8,"pcie_gen_max":5,"pcie_width_max":16}`,
	}
	for gpu := 0; gpu < 2; gpu++ {
		n, err := NewNVML(lib, GPUIndices(gpu), time.Second, t.Logf)
		if err != nil {
			t.Fatalf("GPU %d: %v", gpu, err)
		}
		smp, err := one(n.Read(context.Background(), time.Date(2026, 8, 12, 10, 15, 3, 123e6, time.UTC), testBoot))
		if err != nil {
			t.Fatalf("GPU %d: %v", gpu, err)
		}
		if got := withoutEnergy(t, smp.AppendJSON(nil)); got != want[gpu] {
			t.Errorf("GPU %d sample\n got %s\nwant %s", gpu, got, want[gpu])
		}
		if err := n.Close(); err != nil {
			t.Errorf("GPU %d: %v", gpu, err)
		}
	}
	// Both GPUs in one pass, chosen by --gpu all through
	// nvmlDeviceGetCount_v2 and by UUID through the listing.
	for _, text := range []string{"all", "GPU-7f3a9c2e-5b1d-4e8f-a6c4-2d9e0b8f1a31,GPU-7f3a9c2e-5b1d-4e8f-a6c4-2d9e0b8f1a30"} {
		sel, err := ParseGPUFlag(text)
		if err != nil {
			t.Fatal(err)
		}
		n, err := NewNVML(lib, sel, time.Second, t.Logf)
		if err != nil {
			t.Fatalf("--gpu %s: %v", text, err)
		}
		rows, err := n.Read(context.Background(), time.Date(2026, 8, 12, 10, 15, 3, 123e6, time.UTC), testBoot)
		if err != nil || len(rows) != 2 {
			t.Fatalf("--gpu %s: %d rows, %v", text, len(rows), err)
		}
		for i, smp := range rows {
			if got := withoutEnergy(t, smp.AppendJSON(nil)); got != want[i] {
				t.Errorf("--gpu %s, GPU %d sample\n got %s\nwant %s", text, i, got, want[i])
			}
		}
		if err := n.Close(); err != nil {
			t.Error(err)
		}
	}
	// The compute processes: an array of nvmlProcessInfo_t read at its C
	// offsets, each named through nvmlSystemGetProcessName.
	n, err := NewNVML(lib, GPUIndices(0, 1), time.Second, t.Logf)
	if err != nil {
		t.Fatal(err)
	}
	procs, err := n.ComputeProcesses(context.Background())
	wantProcs := []clocks.ComputeProcess{{PID: 4100, Name: "python3", GPUUUID: "GPU-7f3a9c2e-5b1d-4e8f-a6c4-2d9e0b8f1a30"},
		{PID: 777, Name: "/usr/bin/trainer", GPUUUID: "GPU-7f3a9c2e-5b1d-4e8f-a6c4-2d9e0b8f1a30"}}
	if err != nil || !reflect.DeepEqual(procs, wantProcs) {
		t.Errorf("compute processes %+v, %v", procs, err)
	}
	n.Close()
	_, err = NewNVML(lib, GPUIndices(2), time.Second, t.Logf)
	if err == nil || err.Error() != "NVML: nvmlDeviceGetHandleByIndex_v2(2): ERROR_INVALID_ARGUMENT: NVML knows no GPU 2; nvidia-smi -L lists the GPUs" || !errors.Is(err, ErrSelect) {
		t.Errorf("GPU 2: %v", err)
	}
}

// energyKeys are the energy counter's keys at a sample's end.
var energyKeys = regexp.MustCompile(`,"energy_mj":([0-9]+),"energy_scope":"gpu"(,"pcie_gen".*)?}$`)

// withoutEnergy is a sample line without its energy keys, which it must
// have: the fake's counter runs on the clock.
func withoutEnergy(t *testing.T, line []byte) string {
	t.Helper()
	if !energyKeys.Match(line) {
		t.Errorf("sample without energy_mj and energy_scope \"gpu\": %s", line)
	}
	return energyKeys.ReplaceAllString(string(line), "$2}")
}

// TestSamplerNVMLBindingsEnergy: field 83 crosses the C ABI in the
// counters' own nvmlDeviceGetFieldValues call, an unsigned long long of
// mJ, and advances between two readings by the fake's 412.345 W times the
// time between them; nvmlDeviceGetTotalEnergyConsumption crosses it too.
func TestSamplerNVMLBindingsEnergy(t *testing.T) {
	dir := fakeNVMLLibrary(t, "")
	lib, err := loadNVML(filepath.Join(dir, "libnvidia-ml.so.1"))
	if err != nil {
		t.Fatal(err)
	}
	n, err := NewNVML(lib, GPUIndices(0), time.Second, t.Logf)
	if err != nil {
		t.Fatal(err)
	}
	defer n.Close()
	if !n.energyField || n.energyScope != nvmlScopeGPU || len(n.reqs) != 6 {
		t.Fatalf("energy by field %v at scope %d, requests %v", n.energyField, n.energyScope, n.reqs)
	}
	read := func() (int64, time.Time, time.Time) {
		before := time.Now()
		smp, err := one(n.Read(context.Background(), time.Now(), testBoot))
		if err != nil || smp.EnergyMJ == nil {
			t.Fatalf("%+v, %v", smp, err)
		}
		return *smp.EnergyMJ, before, time.Now()
	}
	a, a0, a1 := read()
	time.Sleep(200 * time.Millisecond)
	b, b0, b1 := read()
	if d := b - a; float64(d) < 412.345*b0.Sub(a1).Seconds()*1000-1 || float64(d) > 412.345*b1.Sub(a0).Seconds()*1000+1 {
		t.Errorf("the counter advanced %d mJ over %v to %v between the readings (412.345 W)", d, b0.Sub(a1), b1.Sub(a0))
	}
	mj, ret := lib.DeviceGetTotalEnergyConsumption(n.devs[0])
	if ret != nvmlSuccess || mj < uint64(b) {
		t.Errorf("nvmlDeviceGetTotalEnergyConsumption: %d mJ, %v (field 83 read %d)", mj, ret, b)
	}
}

// TestSamplerNVMLBindingsMIG: through the real bindings, a GPU in MIG mode
// (utilization not supported) is refused, saying what and what to do.
func TestSamplerNVMLBindingsMIG(t *testing.T) {
	dir := fakeNVMLLibrary(t, "mig")
	lib, err := loadNVML(filepath.Join(dir, "libnvidia-ml.so.1"))
	if err != nil {
		t.Fatal(err)
	}
	_, err = NewNVML(lib, GPUIndices(0), time.Second, t.Logf)
	want := "NVML GPU 0: utilization.gpu: nvmlDeviceGetUtilizationRates returned ERROR_NOT_SUPPORTED: this GPU reports no utilization. GPU 0 is in MIG mode, where NVML gives no utilization. " + migAdvice
	if err == nil || err.Error() != want {
		t.Fatalf("err = %v\nwant %s", err, want)
	}
}

// TestSamplerNVMLNotInstalled: a library that cannot be loaded is
// ErrNVMLUnavailable, which --backend auto falls back on.
func TestSamplerNVMLNotInstalled(t *testing.T) {
	_, err := loadNVML(filepath.Join(t.TempDir(), "libnvidia-ml.so.1"))
	if !errors.Is(err, ErrNVMLUnavailable) || !strings.Contains(err.Error(), "libnvidia-ml.so.1") {
		t.Fatalf("err = %v", err)
	}
	notNVML := filepath.Join(t.TempDir(), "libnotnvml.so")
	if gcc, lerr := exec.LookPath("gcc"); lerr == nil {
		src := filepath.Join(t.TempDir(), "x.c")
		os.WriteFile(src, []byte("int unrelated(void) { return 0; }\n"), 0o644)
		if out, err := exec.Command(gcc, "-shared", "-fPIC", "-o", notNVML, src).CombinedOutput(); err != nil {
			t.Fatalf("%v\n%s", err, out)
		}
		_, err = loadNVML(notNVML)
		if !errors.Is(err, ErrNVMLUnavailable) || !strings.Contains(err.Error(), "has no nvmlInit_v2 or nvmlShutdown") {
			t.Fatalf("a library that is not NVML: %v", err)
		}
	}
}

// BenchmarkSamplerNVMLReading times one reading of one GPU through the
// compiled fake libnvidia-ml.so.1 and the purego bindings, without the
// energy counter (the sampler as it was) and with it (field 83 in the
// counters' call, then by nvmlDeviceGetTotalEnergyConsumption): the
// reading's own cost, every call of it crossing the C ABI. The fake
// answers at once, so the time is the sampler's CPU, not the driver's.
func BenchmarkSamplerNVMLReading(b *testing.B) {
	gcc, err := exec.LookPath("gcc")
	if err != nil {
		b.Skip("gcc not found")
	}
	dir := b.TempDir()
	so := filepath.Join(dir, "libnvidia-ml.so.1")
	if out, err := exec.Command(gcc, "-shared", "-fPIC", "-O2", "-o", so, "testdata/fakenvml/fakenvml.c").CombinedOutput(); err != nil {
		b.Fatalf("%v\n%s", err, out)
	}
	lib, err := loadNVML(so)
	if err != nil {
		b.Fatal(err)
	}
	t := time.Date(2026, 8, 12, 10, 15, 3, 123e6, time.UTC)
	for _, c := range []struct {
		name string
		set  func(n *NVML)
	}{
		{"before-energy", func(n *NVML) { n.energy, n.energyField, n.reqs = false, false, n.reqs[:len(n.reqs)-1] }},
		{"energy-field", func(n *NVML) {}},
		{"energy-call", func(n *NVML) { n.energyField, n.reqs = false, n.reqs[:len(n.reqs)-1] }},
	} {
		b.Run(c.name, func(b *testing.B) {
			n, err := NewNVML(lib, GPUIndices(0), time.Second, nil)
			if err != nil {
				b.Fatal(err)
			}
			defer n.Close()
			c.set(n)
			b.ReportAllocs()
			cpu0 := processCPU(b)
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if _, err := n.Read(context.Background(), t, testBoot); err != nil {
					b.Fatal(err)
				}
			}
			b.StopTimer()
			b.ReportMetric(float64(processCPU(b)-cpu0)/float64(b.N), "cpu-ns/op")
		})
	}
}

// processCPU is the process's user and system CPU time so far, in ns.
func processCPU(b *testing.B) int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}
