//go:build linux && !nonvml

package sampler

import (
	"fmt"
	"time"
	"unsafe"

	"github.com/clockgate/clockgate/clocks"
	"github.com/ebitengine/purego"
)

// nvmlLibrary is the file NVML is loaded from, by the dynamic loader's
// search path, as the driver installs it.
const nvmlLibrary = "libnvidia-ml.so.1"

// openNVML loads libnvidia-ml.so.1 at run time, without cgo, and opens the
// GPUs sel selects through it. A library that cannot be loaded is ErrNVMLUnavailable.
func openNVML(sel Selection, timeout time.Duration, logf func(string, ...any)) (Backend, error) {
	lib, err := loadNVML(nvmlLibrary)
	if err != nil {
		return nil, err
	}
	n, err := NewNVML(lib, sel, timeout, logf)
	if err != nil {
		return nil, err
	}
	return n, nil
}

// dlNVML binds nvmlLib to a loaded libnvidia-ml with purego: each field is
// the C function of the same name, nil when the library lacks it.
type dlNVML struct {
	handle  uintptr
	symbols map[string]bool

	init                       func() int32
	shutdown                   func() int32
	systemGetDriverVersion     func(buf *byte, n uint32) int32
	deviceGetCount             func(n *uint32) int32
	deviceGetHandleByIndex     func(i uint32, dev *uintptr) int32
	deviceGetUUID              func(dev uintptr, buf *byte, n uint32) int32
	deviceGetName              func(dev uintptr, buf *byte, n uint32) int32
	deviceGetClockInfo         func(dev uintptr, ct uint32, mhz *uint32) int32
	deviceGetMaxClockInfo      func(dev uintptr, ct uint32, mhz *uint32) int32
	deviceGetApplicationsClock func(dev uintptr, ct uint32, mhz *uint32) int32
	deviceGetClocksEvents      func(dev uintptr, bits *uint64) int32
	deviceGetClocksThrottle    func(dev uintptr, bits *uint64) int32
	deviceGetPersistenceMode   func(dev uintptr, mode *uint32) int32
	deviceGetPerformanceState  func(dev uintptr, ps *uint32) int32
	deviceGetUtilizationRates  func(dev uintptr, u *[2]uint32) int32
	deviceGetTemperature       func(dev uintptr, sensor uint32, c *uint32) int32
	deviceGetPowerUsage        func(dev uintptr, mw *uint32) int32
	deviceGetEnforcedLimit     func(dev uintptr, mw *uint32) int32
	deviceGetMemoryInfo        func(dev uintptr, mem *[3]uint64) int32
	deviceGetMigMode           func(dev uintptr, cur, pending *uint32) int32
	deviceGetFieldValues       func(dev uintptr, count int32, values *cFieldValue) int32
	deviceGetVbiosVersion      func(dev uintptr, buf *byte, n uint32) int32
	deviceGetPcieLink          [clocks.NumPCIe]func(dev uintptr, v *uint32) int32
	deviceGetTotalEnergy       func(dev uintptr, mj *uint64) int32
	deviceGetComputeProcs      func(dev uintptr, count *uint32, infos *cProcessInfo) int32
	systemGetProcessName       func(pid uint32, buf *byte, n uint32) int32
}

// cProcessInfo is nvmlProcessInfo_t (nvmlProcessInfo_v2_t) as nvml.h lays
// it out: unsigned int pid; unsigned long long usedGpuMemory; unsigned int
// gpuInstanceId, computeInstanceId: 24 bytes, usedGpuMemory at offset 8.
type cProcessInfo struct {
	pid               uint32
	usedGpuMemory     uint64
	gpuInstanceID     uint32
	computeInstanceID uint32
}

var _ = [1]struct{}{}[unsafe.Sizeof(cProcessInfo{})-24]

// maxComputeProcs bounds the processes one device is asked for.
const maxComputeProcs = 1024

// cFieldValue is nvmlFieldValue_t as nvml.h lays it out: unsigned int
// fieldId, scopeId; long long timestamp, latencyUsec; nvmlValueType_t
// valueType; nvmlReturn_t nvmlReturn; nvmlValue_t value (an 8-byte union).
// Every member falls on its natural alignment, so Go lays the struct out
// the same way: 40 bytes, value at offset 32 (checked below and, against
// the C compiler, by TestSamplerNVMLBindingsABI).
type cFieldValue struct {
	fieldID     uint32
	scopeID     uint32
	timestamp   int64
	latencyUsec int64
	valueType   uint32
	ret         int32
	value       uint64
}

// cFieldValueSize is sizeof(nvmlFieldValue_t).
const cFieldValueSize = 40

var _ = [1]struct{}{}[unsafe.Sizeof(cFieldValue{})-cFieldValueSize]
var _ = [1]struct{}{}[unsafe.Offsetof(cFieldValue{}.value)-32]

// loadNVML loads the NVML library at path (a file name is looked up on the
// loader's search path) and binds the calls nvmlLib names. A library that
// cannot be loaded, or that lacks nvmlInit_v2, is ErrNVMLUnavailable.
func loadNVML(path string) (*dlNVML, error) {
	h, err := purego.Dlopen(path, purego.RTLD_NOW|purego.RTLD_LOCAL)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrNVMLUnavailable, err)
	}
	l := &dlNVML{handle: h, symbols: map[string]bool{}}
	bind := func(fptr any, name string) {
		if _, err := purego.Dlsym(h, name); err != nil {
			return
		}
		purego.RegisterLibFunc(fptr, h, name)
		l.symbols[name] = true
	}
	bind(&l.init, "nvmlInit_v2")
	bind(&l.shutdown, "nvmlShutdown")
	bind(&l.systemGetDriverVersion, "nvmlSystemGetDriverVersion")
	bind(&l.deviceGetCount, "nvmlDeviceGetCount_v2")
	bind(&l.deviceGetHandleByIndex, "nvmlDeviceGetHandleByIndex_v2")
	bind(&l.deviceGetUUID, "nvmlDeviceGetUUID")
	bind(&l.deviceGetName, "nvmlDeviceGetName")
	bind(&l.deviceGetClockInfo, "nvmlDeviceGetClockInfo")
	bind(&l.deviceGetMaxClockInfo, "nvmlDeviceGetMaxClockInfo")
	bind(&l.deviceGetApplicationsClock, symAppClock)
	bind(&l.deviceGetClocksEvents, symEventReasons)
	bind(&l.deviceGetClocksThrottle, symThrottleReasons)
	bind(&l.deviceGetPersistenceMode, "nvmlDeviceGetPersistenceMode")
	bind(&l.deviceGetPerformanceState, "nvmlDeviceGetPerformanceState")
	bind(&l.deviceGetUtilizationRates, "nvmlDeviceGetUtilizationRates")
	bind(&l.deviceGetTemperature, "nvmlDeviceGetTemperature")
	bind(&l.deviceGetPowerUsage, "nvmlDeviceGetPowerUsage")
	bind(&l.deviceGetEnforcedLimit, "nvmlDeviceGetEnforcedPowerLimit")
	bind(&l.deviceGetMemoryInfo, "nvmlDeviceGetMemoryInfo")
	bind(&l.deviceGetMigMode, symMigMode)
	bind(&l.deviceGetFieldValues, symFieldValues)
	bind(&l.deviceGetVbiosVersion, "nvmlDeviceGetVbiosVersion")
	for i, call := range nvmlPCIeCalls {
		bind(&l.deviceGetPcieLink[i], call)
	}
	bind(&l.deviceGetTotalEnergy, symTotalEnergy)
	bind(&l.deviceGetComputeProcs, symComputeProcs)
	bind(&l.systemGetProcessName, "nvmlSystemGetProcessName")
	if l.init == nil || l.shutdown == nil {
		purego.Dlclose(h)
		return nil, fmt.Errorf("%w: %s has no nvmlInit_v2 or nvmlShutdown; it is not NVML, or older than any driver clockgate reads", ErrNVMLUnavailable, path)
	}
	return l, nil
}

func (l *dlNVML) Has(symbol string) bool { return l.symbols[symbol] }

// missing is what a call the library lacks returns, as NVML's own stubs do.
const missing = int32(nvmlErrorFunctionNotFound)

func (l *dlNVML) Init() nvmlReturn     { return nvmlReturn(l.init()) }
func (l *dlNVML) Shutdown() nvmlReturn { return nvmlReturn(l.shutdown()) }

// nvmlStringSize is the buffer NVML's string calls are given: the largest
// of NVML_DEVICE_UUID_V2_BUFFER_SIZE (96), NVML_DEVICE_NAME_V2_BUFFER_SIZE
// (96) and NVML_SYSTEM_DRIVER_VERSION_BUFFER_SIZE (80).
const nvmlStringSize = 96

// cString calls f with a zeroed buffer and returns the NUL-terminated
// string it wrote.
func cString(f func(buf *byte, n uint32) int32) (string, nvmlReturn) {
	if f == nil {
		return "", nvmlReturn(missing)
	}
	var buf [nvmlStringSize + 1]byte // one more: always NUL-terminated
	ret := nvmlReturn(f(&buf[0], nvmlStringSize))
	if ret != nvmlSuccess {
		return "", ret
	}
	for i, b := range buf {
		if b == 0 {
			return string(buf[:i]), ret
		}
	}
	return string(buf[:nvmlStringSize]), ret
}

func (l *dlNVML) SystemGetDriverVersion() (string, nvmlReturn) {
	return cString(l.systemGetDriverVersion)
}

func (l *dlNVML) DeviceGetCount() (int, nvmlReturn) {
	if l.deviceGetCount == nil {
		return 0, nvmlReturn(missing)
	}
	var n uint32
	ret := l.deviceGetCount(&n)
	return int(n), nvmlReturn(ret)
}

func (l *dlNVML) DeviceGetHandleByIndex(i int) (nvmlDevice, nvmlReturn) {
	if l.deviceGetHandleByIndex == nil {
		return 0, nvmlReturn(missing)
	}
	if i < 0 || i > 1<<20 {
		return 0, nvmlErrorInvalidArgument
	}
	var dev uintptr
	ret := l.deviceGetHandleByIndex(uint32(i), &dev)
	return nvmlDevice(dev), nvmlReturn(ret)
}

func (l *dlNVML) DeviceGetUUID(d nvmlDevice) (string, nvmlReturn) {
	if l.deviceGetUUID == nil {
		return "", nvmlReturn(missing)
	}
	return cString(func(b *byte, n uint32) int32 { return l.deviceGetUUID(uintptr(d), b, n) })
}

// DeviceGetVbiosVersion is given nvmlStringSize bytes, more than
// NVML_DEVICE_VBIOS_VERSION_BUFFER_SIZE (32).
func (l *dlNVML) DeviceGetVbiosVersion(d nvmlDevice) (string, nvmlReturn) {
	if l.deviceGetVbiosVersion == nil {
		return "", nvmlReturn(missing)
	}
	return cString(func(b *byte, n uint32) int32 { return l.deviceGetVbiosVersion(uintptr(d), b, n) })
}

// DeviceGetPcieLink calls nvmlPCIeCalls[i]: each takes the device and an
// unsigned int it writes.
func (l *dlNVML) DeviceGetPcieLink(d nvmlDevice, i int) (uint32, nvmlReturn) {
	if i < 0 || i >= len(l.deviceGetPcieLink) || l.deviceGetPcieLink[i] == nil {
		return 0, nvmlReturn(missing)
	}
	var v uint32
	ret := l.deviceGetPcieLink[i](uintptr(d), &v)
	return v, nvmlReturn(ret)
}

func (l *dlNVML) DeviceGetName(d nvmlDevice) (string, nvmlReturn) {
	if l.deviceGetName == nil {
		return "", nvmlReturn(missing)
	}
	return cString(func(b *byte, n uint32) int32 { return l.deviceGetName(uintptr(d), b, n) })
}

func clockCall(f func(uintptr, uint32, *uint32) int32, d nvmlDevice, ct nvmlClock) (uint32, nvmlReturn) {
	if f == nil {
		return 0, nvmlReturn(missing)
	}
	var v uint32
	ret := f(uintptr(d), uint32(ct), &v)
	return v, nvmlReturn(ret)
}

func (l *dlNVML) DeviceGetClockInfo(d nvmlDevice, ct nvmlClock) (uint32, nvmlReturn) {
	return clockCall(l.deviceGetClockInfo, d, ct)
}

func (l *dlNVML) DeviceGetMaxClockInfo(d nvmlDevice, ct nvmlClock) (uint32, nvmlReturn) {
	return clockCall(l.deviceGetMaxClockInfo, d, ct)
}

func (l *dlNVML) DeviceGetApplicationsClock(d nvmlDevice, ct nvmlClock) (uint32, nvmlReturn) {
	return clockCall(l.deviceGetApplicationsClock, d, ct)
}

// outCall calls an NVML device function that writes one value through
// its pointer; a function the library lacks answers missing.
func outCall[T uint32 | uint64](f func(uintptr, *T) int32, d nvmlDevice) (T, nvmlReturn) {
	if f == nil {
		return 0, nvmlReturn(missing)
	}
	var v T
	ret := f(uintptr(d), &v)
	return v, nvmlReturn(ret)
}

func (l *dlNVML) DeviceGetCurrentClocksEventReasons(d nvmlDevice) (uint64, nvmlReturn) {
	return outCall(l.deviceGetClocksEvents, d)
}

func (l *dlNVML) DeviceGetCurrentClocksThrottleReasons(d nvmlDevice) (uint64, nvmlReturn) {
	return outCall(l.deviceGetClocksThrottle, d)
}

func (l *dlNVML) DeviceGetPersistenceMode(d nvmlDevice) (uint32, nvmlReturn) {
	return outCall(l.deviceGetPersistenceMode, d)
}

func (l *dlNVML) DeviceGetPerformanceState(d nvmlDevice) (uint32, nvmlReturn) {
	return outCall(l.deviceGetPerformanceState, d)
}

func (l *dlNVML) DeviceGetPowerUsage(d nvmlDevice) (uint32, nvmlReturn) {
	return outCall(l.deviceGetPowerUsage, d)
}

func (l *dlNVML) DeviceGetEnforcedPowerLimit(d nvmlDevice) (uint32, nvmlReturn) {
	return outCall(l.deviceGetEnforcedLimit, d)
}

// DeviceGetMemoryInfo reads nvmlMemory_t (v1): unsigned long long total,
// free, used, in bytes.
func (l *dlNVML) DeviceGetMemoryInfo(d nvmlDevice) (total, free, used uint64, ret nvmlReturn) {
	if l.deviceGetMemoryInfo == nil {
		return 0, 0, 0, nvmlReturn(missing)
	}
	var m [3]uint64
	r := l.deviceGetMemoryInfo(uintptr(d), &m)
	return m[0], m[1], m[2], nvmlReturn(r)
}

func (l *dlNVML) DeviceGetUtilizationRates(d nvmlDevice) (gpu, memory uint32, ret nvmlReturn) {
	if l.deviceGetUtilizationRates == nil {
		return 0, 0, nvmlReturn(missing)
	}
	var u [2]uint32 // nvmlUtilization_t: unsigned int gpu, memory
	r := l.deviceGetUtilizationRates(uintptr(d), &u)
	return u[0], u[1], nvmlReturn(r)
}

func (l *dlNVML) DeviceGetTemperature(d nvmlDevice, sensor uint32) (uint32, nvmlReturn) {
	if l.deviceGetTemperature == nil {
		return 0, nvmlReturn(missing)
	}
	var v uint32
	ret := l.deviceGetTemperature(uintptr(d), sensor, &v)
	return v, nvmlReturn(ret)
}

func (l *dlNVML) DeviceGetMigMode(d nvmlDevice) (current, pending uint32, ret nvmlReturn) {
	if l.deviceGetMigMode == nil {
		return 0, 0, nvmlReturn(missing)
	}
	r := l.deviceGetMigMode(uintptr(d), &current, &pending)
	return current, pending, nvmlReturn(r)
}

func (l *dlNVML) DeviceGetFieldValues(d nvmlDevice, reqs []nvmlFieldReq) ([]nvmlFieldValue, nvmlReturn) {
	if l.deviceGetFieldValues == nil {
		return nil, nvmlReturn(missing)
	}
	if len(reqs) == 0 {
		return nil, nvmlErrorInvalidArgument
	}
	c := make([]cFieldValue, len(reqs))
	for i, r := range reqs {
		c[i].fieldID, c[i].scopeID = r.ID, r.Scope
	}
	if r := nvmlReturn(l.deviceGetFieldValues(uintptr(d), int32(len(c)), &c[0])); r != nvmlSuccess {
		return nil, r
	}
	out := make([]nvmlFieldValue, len(c))
	for i, v := range c {
		out[i] = nvmlFieldValue{FieldID: v.fieldID, ValueType: v.valueType, Return: nvmlReturn(v.ret), Value: v.value}
	}
	return out, nvmlSuccess
}

// DeviceGetTotalEnergyConsumption reads the energy counter, in mJ.
func (l *dlNVML) DeviceGetTotalEnergyConsumption(d nvmlDevice) (uint64, nvmlReturn) {
	if l.deviceGetTotalEnergy == nil {
		return 0, nvmlReturn(missing)
	}
	var mj uint64
	return mj, nvmlReturn(l.deviceGetTotalEnergy(uintptr(d), &mj))
}

// DeviceGetComputeRunningProcesses asks with room for maxComputeProcs
// processes; NVML answers ERROR_INSUFFICIENT_SIZE where more run.
func (l *dlNVML) DeviceGetComputeRunningProcesses(d nvmlDevice) ([]uint32, nvmlReturn) {
	if l.deviceGetComputeProcs == nil {
		return nil, nvmlReturn(missing)
	}
	infos := make([]cProcessInfo, maxComputeProcs)
	count := uint32(len(infos))
	if r := nvmlReturn(l.deviceGetComputeProcs(uintptr(d), &count, &infos[0])); r != nvmlSuccess {
		return nil, r
	}
	if count > uint32(len(infos)) {
		return nil, nvmlErrorInsufficientSize
	}
	pids := make([]uint32, count)
	for i := range pids {
		pids[i] = infos[i].pid
	}
	return pids, nvmlSuccess
}

func (l *dlNVML) SystemGetProcessName(pid uint32) (string, nvmlReturn) {
	if l.systemGetProcessName == nil {
		return "", nvmlReturn(missing)
	}
	return cString(func(b *byte, n uint32) int32 { return l.systemGetProcessName(pid, b, n) })
}
