package sampler

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/clockgate/clockgate/clocks"
)

// nvmlReturn is an nvmlReturn_t, the status every NVML call returns.
type nvmlReturn int32

// The nvmlReturn_t values the sampler names (nvml.h).
const (
	nvmlSuccess                nvmlReturn = 0
	nvmlErrorUninitialized     nvmlReturn = 1
	nvmlErrorInvalidArgument   nvmlReturn = 2
	nvmlErrorNotSupported      nvmlReturn = 3
	nvmlErrorNoPermission      nvmlReturn = 4
	nvmlErrorNotFound          nvmlReturn = 6
	nvmlErrorInsufficientSize  nvmlReturn = 7
	nvmlErrorDriverNotLoaded   nvmlReturn = 9
	nvmlErrorTimeout           nvmlReturn = 10
	nvmlErrorLibraryNotFound   nvmlReturn = 12
	nvmlErrorFunctionNotFound  nvmlReturn = 13
	nvmlErrorGPUIsLost         nvmlReturn = 15
	nvmlErrorLibRMVersionMatch nvmlReturn = 18
	nvmlErrorNoData            nvmlReturn = 21
	nvmlErrorDeprecated        nvmlReturn = 26
	nvmlErrorGPUNotFound       nvmlReturn = 28
	nvmlErrorUnknown           nvmlReturn = 999
)

var nvmlReturnNames = map[nvmlReturn]string{
	nvmlSuccess:                "SUCCESS",
	nvmlErrorUninitialized:     "ERROR_UNINITIALIZED",
	nvmlErrorInvalidArgument:   "ERROR_INVALID_ARGUMENT",
	nvmlErrorNotSupported:      "ERROR_NOT_SUPPORTED",
	nvmlErrorNoPermission:      "ERROR_NO_PERMISSION",
	nvmlErrorNotFound:          "ERROR_NOT_FOUND",
	nvmlErrorInsufficientSize:  "ERROR_INSUFFICIENT_SIZE",
	nvmlErrorDriverNotLoaded:   "ERROR_DRIVER_NOT_LOADED",
	nvmlErrorTimeout:           "ERROR_TIMEOUT",
	nvmlErrorLibraryNotFound:   "ERROR_LIBRARY_NOT_FOUND",
	nvmlErrorFunctionNotFound:  "ERROR_FUNCTION_NOT_FOUND",
	nvmlErrorGPUIsLost:         "ERROR_GPU_IS_LOST",
	nvmlErrorLibRMVersionMatch: "ERROR_LIB_RM_VERSION_MISMATCH",
	nvmlErrorNoData:            "ERROR_NO_DATA",
	nvmlErrorDeprecated:        "ERROR_DEPRECATED",
	nvmlErrorGPUNotFound:       "ERROR_GPU_NOT_FOUND",
	nvmlErrorUnknown:           "ERROR_UNKNOWN",
}

func (r nvmlReturn) String() string {
	if n, ok := nvmlReturnNames[r]; ok {
		return n
	}
	return fmt.Sprintf("nvmlReturn_t %d", int32(r))
}

// nvmlDevice is an nvmlDevice_t, an opaque handle.
type nvmlDevice uintptr

// nvmlClock is an nvmlClockType_t.
type nvmlClock uint32

const (
	nvmlClockGraphics nvmlClock = 0
	nvmlClockSM       nvmlClock = 1
	nvmlClockMem      nvmlClock = 2
)

// Further NVML enum values the sampler reads (nvml.h).
const (
	nvmlTemperatureGPU  = 0  // nvmlTemperatureSensors_t NVML_TEMPERATURE_GPU
	nvmlFeatureDisabled = 0  // nvmlEnableState_t
	nvmlFeatureEnabled  = 1  // nvmlEnableState_t
	nvmlPState15        = 15 // nvmlPstates_t NVML_PSTATE_15; 32 is unknown
	nvmlMIGEnabled      = 1  // NVML_DEVICE_MIG_ENABLE
)

// The NVML entry points whose presence is checked before they are called: a
// driver older than the call lacks the symbol.
const (
	symEventReasons    = "nvmlDeviceGetCurrentClocksEventReasons"
	symThrottleReasons = "nvmlDeviceGetCurrentClocksThrottleReasons"
	symAppClock        = "nvmlDeviceGetApplicationsClock"
	symMigMode         = "nvmlDeviceGetMigMode"
	symFieldValues     = "nvmlDeviceGetFieldValues"
	symComputeProcs    = "nvmlDeviceGetComputeRunningProcesses_v3"
	symTotalEnergy     = "nvmlDeviceGetTotalEnergyConsumption"
)

// FieldEnergy is the stream's energy_mj, as the sampler names the optional
// reading in its logs: the GPU's cumulative energy in mJ since the driver
// loaded (NVML, amd-smi; nvidia-smi has no such field).
const FieldEnergy = "energy_mj"

// The energy counter's field and scopes (nvml.h): field 83 is the total
// energy since the driver was last reloaded, in mJ, Volta and newer; a
// field value's scopeId selects the GPU (0) or its whole module (1,
// Grace: GPU and CPU).
const (
	nvmlFieldTotalEnergy = 83 // NVML_FI_DEV_TOTAL_ENERGY_CONSUMPTION
	nvmlScopeGPU         = 0  // NVML_POWER_SCOPE_GPU
	nvmlScopeModule      = 1  // NVML_POWER_SCOPE_MODULE
)

// nvmlFieldReq is one field value a reading asks for: its id and scope.
type nvmlFieldReq struct {
	ID, Scope uint32
}

// nvmlFieldValue is what the sampler reads of one nvmlFieldValue_t: the
// field asked for, the status NVML gave that field, and its value's type
// and 8 bytes (nvmlValue_t, a union).
type nvmlFieldValue struct {
	FieldID   uint32
	ValueType uint32
	Return    nvmlReturn
	Value     uint64
}

// The nvmlValueType_t values of the integer members of nvmlValue_t (nvml.h).
const (
	nvmlValueDouble       = 0
	nvmlValueUint         = 1
	nvmlValueUlong        = 2
	nvmlValueUlonglong    = 3
	nvmlValueSlonglong    = 4
	nvmlValueSint         = 5
	nvmlValueUshort       = 6
	nvmlCounterNSPerUS    = 1000 // the counter fields are in ns, the stream in µs
	nvmlCounterIDsBranch  = 590  // the first driver branch with the CUDA 13.1 field ids
	nvmlFieldSwPowerCap   = 74   // NVML_FI_DEV_CLOCKS_EVENT_REASON_SW_POWER_CAP, every header
	nvmlFieldSyncBoost    = 76   // NVML_FI_DEV_CLOCKS_EVENT_REASON_SYNC_BOOST, every header
	nvmlFieldSlowdown13_0 = 251  // SW_THERM, HW_THERM, HW_POWER_BRAKE are 251..253 up to nvml.h 13.0.39
	nvmlFieldSlowdown13_1 = 269  // and 269..271 from 13.1.2, where 251 became NVML_FI_PWR_SMOOTHING_ENABLED
)

// counterFieldIDs are the NVML field ids of the clock event counters, in
// clocks.CounterNames' order, for the driver whose version is given.
// nvml.h numbers the three slowdown counters 251, 252, 253 up to 13.0.39
// (CUDA 13.0, the 580 driver branch) and 269, 270, 271 from 13.1.2 (CUDA
// 13.1, driver 590 on), where 251..253 became power-smoothing fields that
// also answer NVML_SUCCESS on GPUs with power smoothing: asking a 590
// driver for 251 would read a 0/1 enablement as a counter. So the ids are
// chosen by the driver's branch (its version's first number), and the
// probe then requires all five to answer with an integer.
func counterFieldIDs(driver string) ([len(clocks.CounterNames)]uint32, error) {
	major, _, _ := strings.Cut(driver, ".")
	branch, err := strconv.Atoi(major)
	if err != nil || branch <= 0 {
		return [len(clocks.CounterNames)]uint32{}, fmt.Errorf("driver version %q has no branch number", driver)
	}
	first := uint32(nvmlFieldSlowdown13_0)
	if branch >= nvmlCounterIDsBranch {
		first = nvmlFieldSlowdown13_1
	}
	return [len(clocks.CounterNames)]uint32{nvmlFieldSwPowerCap, nvmlFieldSyncBoost, first, first + 1, first + 2}, nil
}

// counterUS turns one counter field value, in ns, into µs; ok is false
// for a value that is not a non-negative integer.
func counterUS(v nvmlFieldValue) (int64, bool) {
	ns, ok := fieldUint(v)
	if !ok {
		return 0, false
	}
	us := ns / nvmlCounterNSPerUS
	if us > 1<<53 {
		return 0, false
	}
	return int64(us), true
}

// fieldUint is a field value of an integer type as an unsigned integer;
// ok is false for a value that is not a non-negative integer.
func fieldUint(v nvmlFieldValue) (uint64, bool) {
	var ns uint64
	switch v.ValueType {
	case nvmlValueUint:
		ns = uint64(uint32(v.Value))
	case nvmlValueUlong, nvmlValueUlonglong:
		ns = v.Value
	case nvmlValueSlonglong:
		if int64(v.Value) < 0 {
			return 0, false
		}
		ns = v.Value
	case nvmlValueSint:
		if int32(uint32(v.Value)) < 0 {
			return 0, false
		}
		ns = uint64(uint32(v.Value))
	case nvmlValueUshort:
		ns = uint64(uint16(v.Value))
	default:
		return 0, false
	}
	return ns, true
}

// nvmlLib is the part of NVML the sampler calls, one method per C entry
// point, each returning what the call wrote and its status. It holds only
// calls that read: nothing here can change GPU state. nvml_purego.go binds
// it to libnvidia-ml.so.1; tests fake it. Every device call takes the
// device's handle, so reading several GPUs is more handles, not another
// interface.
type nvmlLib interface {
	// Has reports whether the library exports symbol.
	Has(symbol string) bool
	Init() nvmlReturn // nvmlInit_v2
	Shutdown() nvmlReturn
	SystemGetDriverVersion() (string, nvmlReturn)
	DeviceGetCount() (int, nvmlReturn)                         // nvmlDeviceGetCount_v2
	DeviceGetHandleByIndex(index int) (nvmlDevice, nvmlReturn) // nvmlDeviceGetHandleByIndex_v2
	DeviceGetUUID(nvmlDevice) (string, nvmlReturn)
	DeviceGetName(nvmlDevice) (string, nvmlReturn)
	DeviceGetClockInfo(nvmlDevice, nvmlClock) (uint32, nvmlReturn)
	DeviceGetMaxClockInfo(nvmlDevice, nvmlClock) (uint32, nvmlReturn)
	DeviceGetApplicationsClock(nvmlDevice, nvmlClock) (uint32, nvmlReturn)
	DeviceGetCurrentClocksEventReasons(nvmlDevice) (uint64, nvmlReturn)
	DeviceGetCurrentClocksThrottleReasons(nvmlDevice) (uint64, nvmlReturn)
	DeviceGetPersistenceMode(nvmlDevice) (uint32, nvmlReturn)
	DeviceGetPerformanceState(nvmlDevice) (uint32, nvmlReturn)
	// DeviceGetUtilizationRates returns nvmlUtilization_t's gpu and memory.
	DeviceGetUtilizationRates(nvmlDevice) (gpu, memory uint32, ret nvmlReturn)
	DeviceGetTemperature(nvmlDevice, uint32) (uint32, nvmlReturn)
	DeviceGetPowerUsage(nvmlDevice) (uint32, nvmlReturn)
	// DeviceGetEnforcedPowerLimit returns the enforced power limit, in mW.
	DeviceGetEnforcedPowerLimit(nvmlDevice) (uint32, nvmlReturn)
	DeviceGetMigMode(nvmlDevice) (current, pending uint32, ret nvmlReturn)
	// DeviceGetFieldValues asks for the fields, each with its scope, and
	// returns one value per field, each with its own status.
	DeviceGetFieldValues(dev nvmlDevice, reqs []nvmlFieldReq) ([]nvmlFieldValue, nvmlReturn)
	// DeviceGetTotalEnergyConsumption returns the GPU's energy since the
	// driver was last reloaded, in mJ.
	DeviceGetTotalEnergyConsumption(nvmlDevice) (uint64, nvmlReturn)
	DeviceGetVbiosVersion(nvmlDevice) (string, nvmlReturn)
	// DeviceGetPcieLink returns the PCIe link field i (clocks.PCIeGen,
	// …): the call nvmlPCIeCalls[i] names.
	DeviceGetPcieLink(dev nvmlDevice, i int) (uint32, nvmlReturn)
	// DeviceGetMemoryInfo returns nvmlMemory_t's total, free and used
	// framebuffer memory, in bytes (nvmlDeviceGetMemoryInfo).
	DeviceGetMemoryInfo(nvmlDevice) (total, free, used uint64, ret nvmlReturn)
	// DeviceGetComputeRunningProcesses returns the pids of the device's
	// compute processes (nvmlDeviceGetComputeRunningProcesses_v3).
	DeviceGetComputeRunningProcesses(nvmlDevice) ([]uint32, nvmlReturn)
	SystemGetProcessName(pid uint32) (string, nvmlReturn)
}

// NVML reads its GPUs through NVML, the library nvidia-smi itself reads,
// in one pass over their handles per reading. Each field is the NVML call
// nvidia-smi answers the same query field with.
type NVML struct {
	// probe is how long the probe's reading took.
	probe time.Duration
	lib   nvmlLib
	// devs are the handles of the GPUs read, in the order of gpus (sorted
	// by index).
	devs     []nvmlDevice
	gpus     []int
	throttle string
	timeout  time.Duration
	// optional fields every device answered at open, in query order.
	temp, power, mem, limit bool
	// counters is set when every device gave all five clock event
	// counters at open; counterIDs are their field ids.
	counters   bool
	counterIDs [len(clocks.CounterNames)]uint32
	// vbios is set when every device gave its VBIOS version at open.
	vbios bool
	// memUsed is set when every device gave its memory used at open.
	memUsed bool
	// pcie is set when every device gave its PCIe link at open.
	pcie bool
	// energy is set when every device gave its energy counter at open:
	// in the field-values call (energyField) at energyScope, else by
	// nvmlDeviceGetTotalEnergyConsumption. reqs are the field values one
	// reading asks for: the counters', then the energy's.
	energy      bool
	energyField bool
	energyScope uint32
	reqs        []nvmlFieldReq

	mu     sync.Mutex
	closed bool
	// hung is set when a reading did not return within the timeout; busy
	// counts readings still inside the driver. Either leaves the library
	// alone at Close: nvmlShutdown under a running call is not safe.
	hung bool
	busy int
	// current is the GPU whose calls are in flight, for naming a hung one.
	current int
}

// NewNVML initializes lib, resolves sel (the zero Selection is GPU 0)
// against the GPUs NVML lists where the selection needs them listed, finds
// each GPU's handle, picks the throttle call the driver has
// (nvmlDeviceGetCurrentClocksEventReasons, else
// nvmlDeviceGetCurrentClocksThrottleReasons), keeps each optional reading
// every device answers, and takes one probe reading that must succeed
// within timeout (zero: DefaultQueryTimeout), as must every reading after
// it.
func NewNVML(lib nvmlLib, sel Selection, timeout time.Duration, logf func(string, ...any)) (*NVML, error) {
	if logf == nil {
		logf = func(string, ...any) {}
	}
	if sel.Source == "" {
		sel = DefaultSelection()
	}
	if timeout <= 0 {
		timeout = DefaultQueryTimeout
	}
	if ret := lib.Init(); ret != nvmlSuccess {
		return nil, fmt.Errorf("NVML: nvmlInit_v2: %v", ret)
	}
	n := &NVML{lib: lib, timeout: timeout}
	ok := false
	defer func() {
		if !ok {
			n.Close()
		}
	}()
	switch {
	case lib.Has(symEventReasons):
		n.throttle = FieldEventReasons
	case lib.Has(symThrottleReasons):
		n.throttle = FieldThrottleReasons
		logf("NVML: %s not in this driver; reading %s", symEventReasons, symThrottleReasons)
	default:
		return nil, fmt.Errorf("NVML: the driver has neither %s nor %s, so %s cannot be read; %s",
			symEventReasons, symThrottleReasons, FieldEventReasons, nvmlDriverAdvice)
	}
	if !lib.Has(symAppClock) {
		return nil, fmt.Errorf("NVML: the driver has no %s, so %s cannot be read; %s",
			symAppClock, FieldClocksApplicationsGraphics, nvmlDriverAdvice)
	}
	var listed []GPU
	if sel.NeedsList() {
		var err error
		if listed, err = listNVML(lib); err != nil {
			return nil, err
		}
	}
	res, err := sel.Resolve(listed)
	if err != nil {
		return nil, err
	}
	n.gpus = res.Indices
	for _, gpu := range n.gpus {
		dev, ret := lib.DeviceGetHandleByIndex(gpu)
		if ret != nvmlSuccess {
			msg := fmt.Sprintf("NVML: nvmlDeviceGetHandleByIndex_v2(%d): %v", gpu, ret)
			if ret == nvmlErrorInvalidArgument || ret == nvmlErrorNotFound {
				return nil, selectErrf("%s: NVML knows no GPU %d; nvidia-smi -L lists the GPUs", msg, gpu)
			}
			return nil, errors.New(msg)
		}
		n.devs = append(n.devs, dev)
	}
	logf("%v", res)
	n.temp, n.power, n.mem, n.limit = true, true, true, true
	n.vbios, n.memUsed, n.pcie = true, true, true
	n.counters = lib.Has(symFieldValues)
	if !n.counters {
		logf("NVML: optional fields clocks_event_reasons_counters.* dropped: the driver has no %s", symFieldValues)
	} else {
		driver, ret := lib.SystemGetDriverVersion()
		if ret != nvmlSuccess {
			return nil, fmt.Errorf("NVML: nvmlSystemGetDriverVersion: %v", ret)
		}
		var err error
		if n.counterIDs, err = counterFieldIDs(driver); err != nil {
			n.counters = false
			logf("NVML: optional fields clocks_event_reasons_counters.* dropped: %v", err)
		}
	}
	if n.counters {
		for _, id := range n.counterIDs {
			n.reqs = append(n.reqs, nvmlFieldReq{ID: id})
		}
	}
	n.probeEnergy(logf)
	for i, dev := range n.devs {
		on := n.onGPU(n.gpus[i])
		if n.pcie {
			n.pcie = n.probePCIe(dev, on, logf)
		}
		if n.counters {
			if _, _, err := n.readFields(n.gpus[i], dev, n.reqs); err != nil {
				n.counters = false
				n.reqs = nil
				logf("NVML: optional fields clocks_event_reasons_counters.* dropped: %s%v", on, err)
			}
		}
		if _, ret := lib.DeviceGetTemperature(dev, nvmlTemperatureGPU); ret != nvmlSuccess && n.temp {
			n.temp = false
			logf("NVML: optional field %s dropped: %snvmlDeviceGetTemperature: %v", FieldTemperatureGPU, on, ret)
		}
		if _, ret := lib.DeviceGetPowerUsage(dev); ret != nvmlSuccess && n.power {
			n.power = false
			logf("NVML: optional field %s dropped: %snvmlDeviceGetPowerUsage: %v", FieldPowerDraw, on, ret)
		}
		if v, ret := lib.DeviceGetClockInfo(dev, nvmlClockMem); (ret != nvmlSuccess || v == 0) && n.mem {
			n.mem = false
			logf("NVML: optional field %s dropped: %snvmlDeviceGetClockInfo(MEM): %v (%d MHz)", FieldClocksMem, on, ret, v)
		}
		if v, ret := lib.DeviceGetVbiosVersion(dev); (ret != nvmlSuccess || !printable(v)) && n.vbios {
			n.vbios = false
			logf("NVML: optional field %s dropped: %snvmlDeviceGetVbiosVersion: %v (%q)", FieldVbiosVersion, on, ret, v)
		}
		if total, _, _, ret := lib.DeviceGetMemoryInfo(dev); (ret != nvmlSuccess || total == 0) && n.memUsed {
			n.memUsed = false
			logf("NVML: optional field %s dropped: %snvmlDeviceGetMemoryInfo: %v (%d bytes in all)", FieldMemoryUsed, on, ret, total)
		}
		if v, ret := lib.DeviceGetEnforcedPowerLimit(dev); (ret != nvmlSuccess || v == 0) && n.limit {
			n.limit = false
			logf("NVML: optional field %s dropped: %snvmlDeviceGetEnforcedPowerLimit: %v (%d mW)", FieldEnforcedPowerLimit, on, ret, v)
		}
	}
	if n.energyField {
		n.reqs = append(n.reqs, nvmlFieldReq{ID: nvmlFieldTotalEnergy, Scope: n.energyScope})
	}
	began := time.Now()
	_, err = n.Read(context.Background(), began, "probe")
	n.probe = time.Since(began)
	if err != nil {
		return nil, err
	}
	ok = true
	return n, nil
}

// probeEnergy keeps the energy counter where every device gives it: field
// 83 at the GPU's scope in the field-values call, else at the module's
// scope (a Grace module, whose GPU scope fails), else
// nvmlDeviceGetTotalEnergyConsumption; one way for every device.
func (n *NVML) probeEnergy(logf func(string, ...any)) {
	try := func(scope uint32) bool {
		for i, dev := range n.devs {
			if _, _, err := n.readFields(n.gpus[i], dev, []nvmlFieldReq{{ID: nvmlFieldTotalEnergy, Scope: scope}}); err != nil {
				return false
			}
		}
		return true
	}
	switch {
	case n.lib.Has(symFieldValues) && try(nvmlScopeGPU):
		n.energy, n.energyField, n.energyScope = true, true, nvmlScopeGPU
	case n.lib.Has(symFieldValues) && try(nvmlScopeModule):
		n.energy, n.energyField, n.energyScope = true, true, nvmlScopeModule
		logf("NVML: %s is the module's energy (field %d at NVML_POWER_SCOPE_MODULE; the GPU's scope does not answer)", FieldEnergy, nvmlFieldTotalEnergy)
	case n.lib.Has(symTotalEnergy):
		n.energy = true
		for i, dev := range n.devs {
			if _, ret := n.lib.DeviceGetTotalEnergyConsumption(dev); ret != nvmlSuccess {
				n.energy = false
				logf("NVML: optional field %s dropped: %s%s: %v", FieldEnergy, n.onGPU(n.gpus[i]), symTotalEnergy, ret)
				break
			}
		}
	default:
		logf("NVML: optional field %s dropped: neither %s (field %d) nor %s answers", FieldEnergy, symFieldValues, nvmlFieldTotalEnergy, symTotalEnergy)
	}
}

// ProbeLatency is how long the probe's reading took.
func (n *NVML) ProbeLatency() time.Duration { return n.probe }

// onGPU is "GPU 2: " where several GPUs are read, "" for one.
func (n *NVML) onGPU(gpu int) string {
	if len(n.gpus) == 1 {
		return ""
	}
	return fmt.Sprintf("GPU %d: ", gpu)
}

// listNVML lists every GPU NVML knows: its index, UUID and name.
func listNVML(lib nvmlLib) ([]GPU, error) {
	count, ret := lib.DeviceGetCount()
	if ret != nvmlSuccess {
		return nil, fmt.Errorf("NVML: listing the GPUs: nvmlDeviceGetCount_v2: %v", ret)
	}
	gpus := []GPU{}
	for i := 0; i < count; i++ {
		dev, ret := lib.DeviceGetHandleByIndex(i)
		if ret != nvmlSuccess {
			return nil, fmt.Errorf("NVML: listing the GPUs: nvmlDeviceGetHandleByIndex_v2(%d): %v; name the GPUs to sample by index with --gpu", i, ret)
		}
		g := GPU{Index: i}
		if g.UUID, ret = lib.DeviceGetUUID(dev); ret != nvmlSuccess {
			return nil, fmt.Errorf("NVML: listing the GPUs: GPU %d: nvmlDeviceGetUUID: %v; name the GPUs to sample by index with --gpu", i, ret)
		}
		if g.Name, ret = lib.DeviceGetName(dev); ret != nvmlSuccess {
			return nil, fmt.Errorf("NVML: listing the GPUs: GPU %d: nvmlDeviceGetName: %v; name the GPUs to sample by index with --gpu", i, ret)
		}
		gpus = append(gpus, g)
	}
	return gpus, nil
}

// nvmlDriverAdvice says what to do about a driver that lacks a call every
// sample needs.
const nvmlDriverAdvice = "clockgate cannot record clock evidence through this driver: update the NVIDIA driver, or try --backend nvidia-smi"

// Name says which GPUs are read and how.
func (n *NVML) Name() string {
	s := fmt.Sprintf("NVML %s, throttle field %s", gpusWord(n.gpus), n.throttle)
	if opt := n.optional(); len(opt) > 0 {
		s += ", optional " + strings.Join(opt, " ")
	}
	return s
}

// GPUs returns the indices of the GPUs read, sorted.
func (n *NVML) GPUs() []int { return append([]int(nil), n.gpus...) }

// ThrottleField returns the nvidia-smi spelling of the throttle call used.
func (n *NVML) ThrottleField() string { return n.throttle }

func (n *NVML) optional() []string {
	var o []string
	if n.temp {
		o = append(o, FieldTemperatureGPU)
	}
	if n.power {
		o = append(o, FieldPowerDraw)
	}
	if n.mem {
		o = append(o, FieldClocksMem)
	}
	if n.limit {
		o = append(o, FieldEnforcedPowerLimit)
	}
	if n.counters {
		o = append(o, CounterFields[:]...)
	}
	if n.vbios {
		o = append(o, FieldVbiosVersion)
	}
	if n.memUsed {
		o = append(o, FieldMemoryUsed)
	}
	if n.energy {
		o = append(o, FieldEnergy)
	}
	if n.pcie {
		o = append(o, PCIeQueryFields[:]...)
	}
	return o
}

// nvmlPCIeCalls are the NVML calls of the PCIe link fields, in
// clocks.PCIeFields' order: what nvidia-smi answers
// pcie.link.gen.gpucurrent, pcie.link.width.current, pcie.link.gen.max
// and pcie.link.width.max with.
var nvmlPCIeCalls = [clocks.NumPCIe]string{
	"nvmlDeviceGetCurrPcieLinkGeneration",
	"nvmlDeviceGetCurrPcieLinkWidth",
	"nvmlDeviceGetMaxPcieLinkGeneration",
	"nvmlDeviceGetMaxPcieLinkWidth",
}

// probePCIe reports whether dev gives its whole PCIe link at open; where
// it does not, the four fields are dropped together, with the call that
// failed named (a sample carries the link whole or not at all).
func (n *NVML) probePCIe(dev nvmlDevice, on string, logf func(string, ...any)) bool {
	for i, call := range nvmlPCIeCalls {
		if v, ret := n.lib.DeviceGetPcieLink(dev, i); ret != nvmlSuccess || v < 1 || v > maxPCIe {
			logf("NVML: optional fields pcie.link.* dropped: %s%s: %v (%d)", on, call, ret, v)
			return false
		}
	}
	return true
}

// readPCIe reads dev's PCIe link into r; a call that answered at open
// and fails now is a refusal, as any other optional field's.
func (n *NVML) readPCIe(gpu int, dev nvmlDevice, r *Reading) error {
	for i, call := range nvmlPCIeCalls {
		v, ret := n.lib.DeviceGetPcieLink(dev, i)
		switch {
		case ret != nvmlSuccess:
			return n.fail(gpu, dev, PCIeQueryFields[i], call, ret)
		case v < 1 || v > maxPCIe:
			return n.failf(gpu, PCIeQueryFields[i], "%s gave %d, not 1 to %d", call, v, maxPCIe)
		}
		r.PCIe[i], r.HasPCIe[i] = int(v), true
	}
	return nil
}

// fail names the GPU, the field and the NVML call that failed, and, when
// the driver cannot give a field every sample needs, what to do.
func (n *NVML) fail(gpu int, dev nvmlDevice, field, call string, ret nvmlReturn) error {
	msg := fmt.Sprintf("NVML GPU %d: %s: %s returned %v", gpu, field, call, ret)
	if ret == nvmlErrorNotSupported || ret == nvmlErrorNoPermission {
		if why := n.unsupported(gpu, dev, field, ret); why != "" {
			msg += ": " + why
		}
	}
	return fmt.Errorf("%s", msg)
}

// unsupported explains a required field the device will not give.
func (n *NVML) unsupported(gpu int, dev nvmlDevice, field string, ret nvmlReturn) string {
	if ret == nvmlErrorNoPermission {
		return "reading it needs privileges this process lacks; run clockgate as a user the driver lets read it"
	}
	if field == FieldUtilizationGPU {
		mig := ""
		if n.lib.Has(symMigMode) {
			if cur, _, ret := n.lib.DeviceGetMigMode(dev); ret == nvmlSuccess && cur == nvmlMIGEnabled {
				mig = fmt.Sprintf(" GPU %d is in MIG mode, where NVML gives no utilization.", gpu)
			}
		}
		return "this GPU reports no utilization." + mig + " " + migAdvice
	}
	if isOptional(field) {
		return ""
	}
	return fmt.Sprintf("the driver cannot give %s, which every sample needs; %s", field, nvmlDriverAdvice)
}

// migAdvice says what to do when utilization.gpu is not available, as on a
// MIG-enabled GPU.
const migAdvice = "clockgate needs utilization.gpu to tell busy samples from idle ones, so it cannot sample a MIG instance or a GPU in MIG mode: record the leg on a GPU with MIG disabled (nvidia-smi --query-gpu=index,mig.mode.current --format=csv shows which)"

// failf names the GPU and the field with an explanation.
func (n *NVML) failf(gpu int, field, format string, args ...any) error {
	return fmt.Errorf("NVML GPU %d: %s: %s", gpu, field, fmt.Sprintf(format, args...))
}

// Read takes one reading of every GPU, one pass over their handles.
// Every call must succeed, except that ERROR_DEPRECATED from
// nvmlDeviceGetApplicationsClock (what nvidia-smi prints as "[Requested
// functionality has been deprecated]") records the applications clock as
// null. A pass that does not return within the timeout is refused, naming
// the GPU whose call was in flight; the calls it made are left to the
// driver, and the library is never shut down under them.
func (n *NVML) Read(ctx context.Context, t time.Time, bootID string) ([]*clocks.Sample, error) {
	n.mu.Lock()
	if n.hung {
		gpu := n.current
		n.mu.Unlock()
		return nil, fmt.Errorf("NVML GPU %d: an earlier reading never returned", gpu)
	}
	n.busy++
	n.mu.Unlock()
	type result struct {
		s   []*clocks.Sample
		err error
	}
	c := make(chan result, 1)
	go func() {
		var out []*clocks.Sample
		var err error
		for i, dev := range n.devs {
			n.mu.Lock()
			n.current = n.gpus[i]
			n.mu.Unlock()
			var s *clocks.Sample
			if s, err = n.read(n.gpus[i], dev, t, bootID); err != nil {
				out = nil
				break
			}
			out = append(out, s)
		}
		n.mu.Lock()
		n.busy--
		n.mu.Unlock()
		c <- result{out, err}
	}()
	timer := time.NewTimer(n.timeout)
	defer timer.Stop()
	select {
	case r := <-c:
		return r.s, r.err
	case <-timer.C:
		n.mu.Lock()
		n.hung = true
		gpu := n.current
		n.mu.Unlock()
		return nil, fmt.Errorf("NVML GPU %d did not answer within %v", gpu, n.timeout)
	case <-ctx.Done():
		// The stop cut this reading short; its calls finish on their own
		// and Close leaves the library to them.
		return nil, ctx.Err()
	}
}

// read reads one GPU.
func (n *NVML) read(gpu int, dev nvmlDevice, t time.Time, bootID string) (*clocks.Sample, error) {
	r := &Reading{Fields: append(QueryFields(n.throttle), n.optional()...), Index: gpu, ThrottleField: n.throttle}
	lib := n.lib
	var ret nvmlReturn
	if r.UUID, ret = lib.DeviceGetUUID(dev); ret != nvmlSuccess {
		return nil, n.fail(gpu, dev, FieldUUID, "nvmlDeviceGetUUID", ret)
	}
	if r.Name, ret = lib.DeviceGetName(dev); ret != nvmlSuccess {
		return nil, n.fail(gpu, dev, FieldName, "nvmlDeviceGetName", ret)
	}
	if r.DriverVersion, ret = lib.SystemGetDriverVersion(); ret != nvmlSuccess {
		return nil, n.fail(gpu, dev, FieldDriverVersion, "nvmlSystemGetDriverVersion", ret)
	}
	var err error
	if r.SMClockMHz, err = n.clockMHz(gpu, dev, FieldClocksSM, "nvmlDeviceGetClockInfo(SM)", lib.DeviceGetClockInfo, nvmlClockSM); err != nil {
		return nil, err
	}
	if r.ClocksMaxSMMHz, err = n.clockMHz(gpu, dev, FieldClocksMaxSM, "nvmlDeviceGetMaxClockInfo(SM)", lib.DeviceGetMaxClockInfo, nvmlClockSM); err != nil {
		return nil, err
	}
	switch v, ret := lib.DeviceGetApplicationsClock(dev, nvmlClockGraphics); ret {
	case nvmlErrorDeprecated:
		r.ClocksApplicationsGraphicsMHz = nil
	case nvmlSuccess:
		if v == 0 {
			return nil, n.failf(gpu, FieldClocksApplicationsGraphics, "nvmlDeviceGetApplicationsClock(GRAPHICS) gave 0 MHz")
		}
		mhz := int(v)
		r.ClocksApplicationsGraphicsMHz = &mhz
	default:
		return nil, n.fail(gpu, dev, FieldClocksApplicationsGraphics, "nvmlDeviceGetApplicationsClock(GRAPHICS)", ret)
	}
	var bits uint64
	call := symEventReasons
	if n.throttle == FieldEventReasons {
		bits, ret = lib.DeviceGetCurrentClocksEventReasons(dev)
	} else {
		call = symThrottleReasons
		bits, ret = lib.DeviceGetCurrentClocksThrottleReasons(dev)
	}
	if ret != nvmlSuccess {
		return nil, n.fail(gpu, dev, n.throttle, call, ret)
	}
	r.ThrottleReasonsActive = clocks.FormatThrottle(bits)
	switch pm, ret := lib.DeviceGetPersistenceMode(dev); {
	case ret != nvmlSuccess:
		return nil, n.fail(gpu, dev, FieldPersistenceMode, "nvmlDeviceGetPersistenceMode", ret)
	case pm == nvmlFeatureEnabled:
		r.PersistenceMode = "Enabled"
	case pm == nvmlFeatureDisabled:
		r.PersistenceMode = "Disabled"
	default:
		return nil, n.failf(gpu, FieldPersistenceMode, "nvmlDeviceGetPersistenceMode gave unknown state %d", pm)
	}
	switch ps, ret := lib.DeviceGetPerformanceState(dev); {
	case ret != nvmlSuccess:
		return nil, n.fail(gpu, dev, FieldPState, "nvmlDeviceGetPerformanceState", ret)
	case ps > nvmlPState15:
		return nil, n.failf(gpu, FieldPState, "nvmlDeviceGetPerformanceState gave unknown state %d", ps)
	default:
		r.PState = fmt.Sprintf("P%d", ps)
	}
	switch u, _, ret := lib.DeviceGetUtilizationRates(dev); {
	case ret != nvmlSuccess:
		return nil, n.fail(gpu, dev, FieldUtilizationGPU, "nvmlDeviceGetUtilizationRates", ret)
	case u > 100:
		return nil, n.failf(gpu, FieldUtilizationGPU, "nvmlDeviceGetUtilizationRates gave %d%%, more than 100", u)
	default:
		r.UtilizationGPUPct = int(u)
	}
	if n.temp {
		v, ret := lib.DeviceGetTemperature(dev, nvmlTemperatureGPU)
		if ret != nvmlSuccess {
			return nil, n.fail(gpu, dev, FieldTemperatureGPU, "nvmlDeviceGetTemperature(GPU)", ret)
		}
		c := float64(v)
		r.TemperatureGPUC = &c
	}
	if n.power {
		v, ret := lib.DeviceGetPowerUsage(dev)
		if ret != nvmlSuccess {
			return nil, n.fail(gpu, dev, FieldPowerDraw, "nvmlDeviceGetPowerUsage", ret)
		}
		w := float64(v) / 1000 // NVML reports mW
		r.PowerDrawW = &w
	}
	if n.mem {
		mhz, err := n.clockMHz(gpu, dev, FieldClocksMem, "nvmlDeviceGetClockInfo(MEM)", lib.DeviceGetClockInfo, nvmlClockMem)
		if err != nil {
			return nil, err
		}
		r.ClocksMemMHz = &mhz
	}
	if n.limit {
		v, ret := lib.DeviceGetEnforcedPowerLimit(dev)
		switch {
		case ret != nvmlSuccess:
			return nil, n.fail(gpu, dev, FieldEnforcedPowerLimit, "nvmlDeviceGetEnforcedPowerLimit", ret)
		case v == 0:
			return nil, n.failf(gpu, FieldEnforcedPowerLimit, "nvmlDeviceGetEnforcedPowerLimit gave 0 mW")
		}
		w := float64(v) / 1000 // NVML reports mW
		r.EnforcedPowerLimitW = &w
	}
	if n.vbios {
		v, ret := lib.DeviceGetVbiosVersion(dev)
		switch {
		case ret != nvmlSuccess:
			return nil, n.fail(gpu, dev, FieldVbiosVersion, "nvmlDeviceGetVbiosVersion", ret)
		case !printable(v):
			return nil, n.failf(gpu, FieldVbiosVersion, "nvmlDeviceGetVbiosVersion gave %q, not printable text", v)
		}
		r.VbiosVersion = &v
	}
	if n.memUsed {
		total, _, used, ret := lib.DeviceGetMemoryInfo(dev)
		switch {
		case ret != nvmlSuccess:
			return nil, n.fail(gpu, dev, FieldMemoryUsed, "nvmlDeviceGetMemoryInfo", ret)
		case used > total:
			return nil, n.failf(gpu, FieldMemoryUsed, "nvmlDeviceGetMemoryInfo gave %d bytes used of %d", used, total)
		}
		mib := float64(used) / (1 << 20) // NVML reports bytes
		r.MemoryUsedMiB = &mib
	}
	if n.pcie {
		if err := n.readPCIe(gpu, dev, r); err != nil {
			return nil, err
		}
	}
	if len(n.reqs) > 0 {
		us, mj, err := n.readFields(gpu, dev, n.reqs)
		if err != nil {
			return nil, fmt.Errorf("NVML GPU %d: %v", gpu, err)
		}
		if n.counters {
			for i := range us {
				r.CountersUS[i], r.HasCounter[i] = us[i], true
			}
		}
		if n.energyField {
			r.EnergyMJ = &mj
		}
	}
	if n.energy && !n.energyField {
		v, ret := lib.DeviceGetTotalEnergyConsumption(dev)
		switch {
		case ret != nvmlSuccess:
			return nil, n.failf(gpu, FieldEnergy, "%s returned %v: a counter that stops answering mid-window is refused", symTotalEnergy, ret)
		case v > maxEnergyMJ:
			return nil, n.failf(gpu, FieldEnergy, "%s gave %d mJ, more than %d", symTotalEnergy, v, uint64(maxEnergyMJ))
		}
		mj := int64(v)
		r.EnergyMJ = &mj
	}
	if n.energy {
		scope := clocks.EnergyScopeGPU
		if n.energyField && n.energyScope == nvmlScopeModule {
			scope = clocks.EnergyScopeModule
		}
		r.EnergyScope = &scope
	}
	s, err := r.Sample(t, bootID)
	if err != nil {
		return nil, fmt.Errorf("NVML GPU %d: %v", gpu, err)
	}
	return s, nil
}

// maxEnergyMJ is the largest energy a sample may hold (2^53 mJ).
const maxEnergyMJ = 1 << 53

// readFields reads the field values reqs asks for in one
// nvmlDeviceGetFieldValues call: the five clock event counters, in µs,
// where reqs holds them, and the energy counter, in mJ, where it does.
// The error names the first field the driver did not give as a
// non-negative integer.
func (n *NVML) readFields(gpu int, dev nvmlDevice, reqs []nvmlFieldReq) ([len(clocks.CounterNames)]int64, int64, error) {
	var us [len(clocks.CounterNames)]int64
	var mj int64
	names := func(i int) string {
		if reqs[i].ID == nvmlFieldTotalEnergy {
			return FieldEnergy
		}
		return CounterFields[i]
	}
	vals, ret := n.lib.DeviceGetFieldValues(dev, reqs)
	if ret != nvmlSuccess {
		all := make([]string, len(reqs))
		for i := range reqs {
			all[i] = names(i)
		}
		return us, mj, fmt.Errorf("%s: %s returned %v", strings.Join(all, ", "), symFieldValues, ret)
	}
	if len(vals) != len(reqs) {
		return us, mj, fmt.Errorf("%s gave %d values for %d fields", symFieldValues, len(vals), len(reqs))
	}
	for i, v := range vals {
		id := reqs[i].ID
		switch {
		case v.FieldID != id:
			return us, mj, fmt.Errorf("%s: %s answered field %d for field %d", names(i), symFieldValues, v.FieldID, id)
		case v.Return != nvmlSuccess:
			return us, mj, fmt.Errorf("%s: %s(field %d) returned %v", names(i), symFieldValues, id, v.Return)
		}
		if id == nvmlFieldTotalEnergy {
			e, ok := fieldUint(v)
			if !ok || e > maxEnergyMJ {
				return us, mj, fmt.Errorf("%s: %s(field %d) gave value type %d (%#x), not a non-negative integer of mJ", names(i), symFieldValues, id, v.ValueType, v.Value)
			}
			mj = int64(e)
			continue
		}
		var ok bool
		if us[i], ok = counterUS(v); !ok {
			return us, mj, fmt.Errorf("%s: %s(field %d) gave value type %d (%#x), not a non-negative integer", names(i), symFieldValues, id, v.ValueType, v.Value)
		}
	}
	return us, mj, nil
}

// clockMHz reads one clock and refuses a failed call or a zero clock.
func (n *NVML) clockMHz(gpu int, dev nvmlDevice, field, call string, get func(nvmlDevice, nvmlClock) (uint32, nvmlReturn), ct nvmlClock) (int, error) {
	v, ret := get(dev, ct)
	if ret != nvmlSuccess {
		return 0, n.fail(gpu, dev, field, call, ret)
	}
	if v == 0 {
		return 0, n.failf(gpu, field, "%s gave 0 MHz", call)
	}
	return int(v), nil
}

// Close shuts NVML down, unless a reading is still inside it (a hung one,
// or one a stop cut short): the process is about to exit anyway.
func (n *NVML) Close() error {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.closed {
		return nil
	}
	n.closed = true
	if n.hung || n.busy > 0 {
		return nil
	}
	if ret := n.lib.Shutdown(); ret != nvmlSuccess {
		return fmt.Errorf("NVML: nvmlShutdown: %v", ret)
	}
	return nil
}

// printable reports whether s is non-empty printable UTF-8, as every
// string the sampler writes into a stream must be.
func printable(s string) bool {
	return s != "" && utf8.ValidString(s) && !strings.ContainsFunc(s, unicode.IsControl)
}

// isOptional reports whether field is one of OptionalQueryFields.
func isOptional(field string) bool {
	for _, f := range OptionalQueryFields() {
		if f == field {
			return true
		}
	}
	return false
}
