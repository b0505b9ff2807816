//go:build cgo

package sampler

import (
	"context"
	"fmt"
	"time"

	"github.com/NVIDIA/go-nvml/pkg/nvml"

	"github.com/clockgate/clockgate/clocks"
)

// The NVML entry points whose presence is checked before they are called:
// go-nvml resolves symbols lazily, so calling one the installed driver lacks
// would crash instead of failing.
const (
	symEventReasons    = "nvmlDeviceGetCurrentClocksEventReasons"
	symThrottleReasons = "nvmlDeviceGetCurrentClocksThrottleReasons"
	symAppClock        = "nvmlDeviceGetApplicationsClock"
)

// NVML reads one GPU through NVML, the library nvidia-smi itself reads. Each
// field is the NVML call nvidia-smi answers the same query field with.
type NVML struct {
	lib      nvml.Interface
	dev      nvml.Device
	gpu      int
	throttle string
	// optional fields the device answered at open, in query order.
	temp, power, mem bool
	closed           bool
}

func openNVML(gpu int, logf func(string, ...any)) (Backend, error) {
	n, err := NewNVML(nvml.New(), gpu, logf)
	if err != nil {
		return nil, err
	}
	return n, nil
}

// NewNVML initializes lib, finds GPU gpu, picks the throttle call the driver
// has (nvmlDeviceGetCurrentClocksEventReasons, else
// nvmlDeviceGetCurrentClocksThrottleReasons), keeps each optional reading
// the device answers, and takes one probe reading that must succeed.
// ERROR_LIBRARY_NOT_FOUND from nvmlInit is ErrNVMLUnavailable.
func NewNVML(lib nvml.Interface, gpu int, logf func(string, ...any)) (*NVML, error) {
	if logf == nil {
		logf = func(string, ...any) {}
	}
	if gpu < 0 {
		return nil, fmt.Errorf("GPU index %d is negative", gpu)
	}
	if ret := lib.Init(); ret != nvml.SUCCESS {
		if ret == nvml.ERROR_LIBRARY_NOT_FOUND {
			return nil, fmt.Errorf("%w: libnvidia-ml.so.1 not found (nvmlInit: ERROR_LIBRARY_NOT_FOUND)", ErrNVMLUnavailable)
		}
		return nil, fmt.Errorf("NVML: nvmlInit: %v", ret)
	}
	n := &NVML{lib: lib, gpu: gpu}
	ok := false
	defer func() {
		if !ok {
			lib.Shutdown()
		}
	}()
	ext := lib.Extensions()
	switch {
	case ext.LookupSymbol(symEventReasons) == nil:
		n.throttle = FieldEventReasons
	case ext.LookupSymbol(symThrottleReasons) == nil:
		n.throttle = FieldThrottleReasons
		logf("NVML: %s not in this driver; reading %s", symEventReasons, symThrottleReasons)
	default:
		return nil, fmt.Errorf("NVML: the driver has neither %s nor %s", symEventReasons, symThrottleReasons)
	}
	if err := ext.LookupSymbol(symAppClock); err != nil {
		return nil, fmt.Errorf("NVML: the driver has no %s, so %s cannot be read: %v", symAppClock, FieldClocksApplicationsGraphics, err)
	}
	dev, ret := lib.DeviceGetHandleByIndex(gpu)
	if ret != nvml.SUCCESS {
		return nil, fmt.Errorf("NVML: nvmlDeviceGetHandleByIndex(%d): %v", gpu, ret)
	}
	n.dev = dev
	if _, ret := dev.GetTemperature(nvml.TEMPERATURE_GPU); ret == nvml.SUCCESS {
		n.temp = true
	} else {
		logf("NVML: optional field %s dropped: nvmlDeviceGetTemperature: %v", FieldTemperatureGPU, ret)
	}
	if _, ret := dev.GetPowerUsage(); ret == nvml.SUCCESS {
		n.power = true
	} else {
		logf("NVML: optional field %s dropped: nvmlDeviceGetPowerUsage: %v", FieldPowerDraw, ret)
	}
	if v, ret := dev.GetClockInfo(nvml.CLOCK_MEM); ret == nvml.SUCCESS && v > 0 {
		n.mem = true
	} else {
		logf("NVML: optional field %s dropped: nvmlDeviceGetClockInfo(MEM): %v (%d MHz)", FieldClocksMem, ret, v)
	}
	if _, err := n.Read(context.Background(), time.Now(), "probe"); err != nil {
		return nil, err
	}
	ok = true
	return n, nil
}

// Name says which GPU is read and how.
func (n *NVML) Name() string {
	s := fmt.Sprintf("NVML GPU %d, throttle field %s", n.gpu, n.throttle)
	if opt := n.optional(); len(opt) > 0 {
		s += ", optional"
		for _, f := range opt {
			s += " " + f
		}
	}
	return s
}

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
	return o
}

// fail names the GPU, the field and the NVML call that failed.
func (n *NVML) fail(field, call string, ret nvml.Return) error {
	return fmt.Errorf("NVML GPU %d: %s: %s returned %v", n.gpu, field, call, ret)
}

// failf names the GPU and the field with an explanation.
func (n *NVML) failf(field, format string, args ...any) error {
	return fmt.Errorf("NVML GPU %d: %s: %s", n.gpu, field, fmt.Sprintf(format, args...))
}

// Read takes one reading. Every call must succeed, except that
// ERROR_DEPRECATED from nvmlDeviceGetApplicationsClock (what nvidia-smi
// prints as "[Requested functionality has been deprecated]") records the
// applications clock as null.
func (n *NVML) Read(_ context.Context, t time.Time, bootID string) (*clocks.Sample, error) {
	r := &Reading{Fields: append(QueryFields(n.throttle), n.optional()...), Index: n.gpu, ThrottleField: n.throttle}
	var ret nvml.Return
	if r.UUID, ret = n.dev.GetUUID(); ret != nvml.SUCCESS {
		return nil, n.fail(FieldUUID, "nvmlDeviceGetUUID", ret)
	}
	if r.Name, ret = n.dev.GetName(); ret != nvml.SUCCESS {
		return nil, n.fail(FieldName, "nvmlDeviceGetName", ret)
	}
	if r.DriverVersion, ret = n.lib.SystemGetDriverVersion(); ret != nvml.SUCCESS {
		return nil, n.fail(FieldDriverVersion, "nvmlSystemGetDriverVersion", ret)
	}
	var err error
	if r.SMClockMHz, err = n.clockMHz(FieldClocksSM, "nvmlDeviceGetClockInfo(SM)", n.dev.GetClockInfo, nvml.CLOCK_SM); err != nil {
		return nil, err
	}
	if r.ClocksMaxSMMHz, err = n.clockMHz(FieldClocksMaxSM, "nvmlDeviceGetMaxClockInfo(SM)", n.dev.GetMaxClockInfo, nvml.CLOCK_SM); err != nil {
		return nil, err
	}
	switch v, ret := n.dev.GetApplicationsClock(nvml.CLOCK_GRAPHICS); ret {
	case nvml.ERROR_DEPRECATED:
		r.ClocksApplicationsGraphicsMHz = nil
	case nvml.SUCCESS:
		if v == 0 {
			return nil, n.failf(FieldClocksApplicationsGraphics, "nvmlDeviceGetApplicationsClock(GRAPHICS) gave 0 MHz")
		}
		mhz := int(v)
		r.ClocksApplicationsGraphicsMHz = &mhz
	default:
		return nil, n.fail(FieldClocksApplicationsGraphics, "nvmlDeviceGetApplicationsClock(GRAPHICS)", ret)
	}
	var bits uint64
	if n.throttle == FieldEventReasons {
		bits, ret = n.dev.GetCurrentClocksEventReasons()
	} else {
		bits, ret = n.dev.GetCurrentClocksThrottleReasons()
	}
	if ret != nvml.SUCCESS {
		call := symEventReasons
		if n.throttle == FieldThrottleReasons {
			call = symThrottleReasons
		}
		return nil, n.fail(n.throttle, call, ret)
	}
	r.ThrottleReasonsActive = clocks.FormatThrottle(bits)
	switch pm, ret := n.dev.GetPersistenceMode(); {
	case ret != nvml.SUCCESS:
		return nil, n.fail(FieldPersistenceMode, "nvmlDeviceGetPersistenceMode", ret)
	case pm == nvml.FEATURE_ENABLED:
		r.PersistenceMode = "Enabled"
	case pm == nvml.FEATURE_DISABLED:
		r.PersistenceMode = "Disabled"
	default:
		return nil, n.failf(FieldPersistenceMode, "nvmlDeviceGetPersistenceMode gave unknown state %d", pm)
	}
	switch ps, ret := n.dev.GetPerformanceState(); {
	case ret != nvml.SUCCESS:
		return nil, n.fail(FieldPState, "nvmlDeviceGetPerformanceState", ret)
	case ps < nvml.PSTATE_0 || ps > nvml.PSTATE_15:
		return nil, n.failf(FieldPState, "nvmlDeviceGetPerformanceState gave unknown state %d", ps)
	default:
		r.PState = fmt.Sprintf("P%d", ps)
	}
	switch u, ret := n.dev.GetUtilizationRates(); {
	case ret != nvml.SUCCESS:
		return nil, n.fail(FieldUtilizationGPU, "nvmlDeviceGetUtilizationRates", ret)
	case u.Gpu > 100:
		return nil, n.failf(FieldUtilizationGPU, "nvmlDeviceGetUtilizationRates gave %d%%, more than 100", u.Gpu)
	default:
		r.UtilizationGPUPct = int(u.Gpu)
	}
	if n.temp {
		v, ret := n.dev.GetTemperature(nvml.TEMPERATURE_GPU)
		if ret != nvml.SUCCESS {
			return nil, n.fail(FieldTemperatureGPU, "nvmlDeviceGetTemperature(GPU)", ret)
		}
		c := float64(v)
		r.TemperatureGPUC = &c
	}
	if n.power {
		v, ret := n.dev.GetPowerUsage()
		if ret != nvml.SUCCESS {
			return nil, n.fail(FieldPowerDraw, "nvmlDeviceGetPowerUsage", ret)
		}
		w := float64(v) / 1000 // NVML reports mW
		r.PowerDrawW = &w
	}
	if n.mem {
		mhz, err := n.clockMHz(FieldClocksMem, "nvmlDeviceGetClockInfo(MEM)", n.dev.GetClockInfo, nvml.CLOCK_MEM)
		if err != nil {
			return nil, err
		}
		r.ClocksMemMHz = &mhz
	}
	s, err := r.Sample(t, bootID)
	if err != nil {
		return nil, fmt.Errorf("NVML GPU %d: %v", n.gpu, err)
	}
	return s, nil
}

// clockMHz reads one clock and refuses a failed call or a zero clock.
func (n *NVML) clockMHz(field, call string, get func(nvml.ClockType) (uint32, nvml.Return), ct nvml.ClockType) (int, error) {
	v, ret := get(ct)
	if ret != nvml.SUCCESS {
		return 0, n.fail(field, call, ret)
	}
	if v == 0 {
		return 0, n.failf(field, "%s gave 0 MHz", call)
	}
	return int(v), nil
}

// Close shuts NVML down.
func (n *NVML) Close() error {
	if n.closed {
		return nil
	}
	n.closed = true
	if ret := n.lib.Shutdown(); ret != nvml.SUCCESS {
		return fmt.Errorf("NVML: nvmlShutdown: %v", ret)
	}
	return nil
}
