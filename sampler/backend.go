package sampler

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"time"
)

// Backend kinds Open accepts.
const (
	// KindAuto prefers NVML, falls back to nvidia-smi when NVML is
	// unavailable (no libnvidia-ml.so.1, or a build with the nonvml tag),
	// and to amd-smi where no NVIDIA driver answers either.
	KindAuto = "auto"
	// KindNVML reads through NVML, libnvidia-ml.so.1 loaded at run time.
	KindNVML = "nvml"
	// KindSMI runs nvidia-smi once per reading.
	KindSMI = "nvidia-smi"
	// KindAMDSMI runs amd-smi once per reading, for AMD Instinct GPUs.
	KindAMDSMI = "amd-smi"
)

// Kinds lists the backend kinds, for flag help.
var Kinds = []string{KindAuto, KindNVML, KindSMI, KindAMDSMI}

// ErrNVMLUnavailable says NVML cannot be used here at all: the library is
// not installed, or this binary was built without NVML (the nonvml tag).
// KindAuto falls back to nvidia-smi on it and on nothing else.
var ErrNVMLUnavailable = errors.New("NVML unavailable")

// Options selects and configures a backend.
type Options struct {
	// Kind is KindAuto, KindNVML or KindSMI.
	Kind string
	// GPUs selects the GPUs to read (ParseGPUFlag, SelectFromEnv); the zero
	// Selection is GPU 0.
	GPUs Selection
	// SMIPath is the nvidia-smi executable; "" finds it on PATH.
	SMIPath string
	// AMDSMIPath is the amd-smi executable; "" finds it on PATH.
	AMDSMIPath string
	// QueryTimeout bounds one reading and the startup probe; zero means
	// DefaultQueryTimeout.
	QueryTimeout time.Duration
	// Logf, when not nil, receives status lines.
	Logf func(format string, args ...any)
}

// Open opens and probes the backend o.Kind names, for the GPUs o.GPUs
// selects, resolved against the box. A selection the box cannot satisfy is
// ErrSelect.
func Open(ctx context.Context, o Options) (Backend, error) {
	logf := o.Logf
	if logf == nil {
		logf = func(string, ...any) {}
	}
	smi := func() (Backend, error) {
		return NewSMI(ctx, SMIOptions{Path: o.SMIPath, GPUs: o.GPUs, QueryTimeout: o.QueryTimeout, Logf: logf})
	}
	amd := func() (Backend, error) {
		return NewAMDSMI(ctx, AMDSMIOptions{Path: o.AMDSMIPath, GPUs: o.GPUs, QueryTimeout: o.QueryTimeout, Logf: logf})
	}
	switch o.Kind {
	case KindSMI:
		return smi()
	case KindNVML:
		return openNVML(o.GPUs, o.QueryTimeout, logf)
	case KindAMDSMI:
		return amd()
	case KindAuto, "":
		b, err := openNVML(o.GPUs, o.QueryTimeout, logf)
		if !errors.Is(err, ErrNVMLUnavailable) {
			return b, err
		}
		logf("%v; using nvidia-smi", err)
		b, err = smi()
		if err == nil || errors.Is(err, ErrSelect) || !haveAMDSMI(o.AMDSMIPath) {
			// An NVIDIA driver answered (a selection it cannot satisfy is
			// its answer), or there is no amd-smi to ask.
			return b, err
		}
		logf("nvidia-smi: %v; using amd-smi", err)
		b, aerr := amd()
		if aerr != nil {
			return nil, fmt.Errorf("no NVIDIA driver answered (nvidia-smi: %v), and neither did amd-smi: %w", err, aerr)
		}
		return b, nil
	}
	return nil, fmt.Errorf("%w: unknown backend %q (want auto, nvml, nvidia-smi or amd-smi)", ErrConfig, o.Kind)
}

// haveAMDSMI reports whether amd-smi is at path, or on PATH for "".
func haveAMDSMI(path string) bool {
	if path != "" {
		return true
	}
	_, err := exec.LookPath("amd-smi")
	return err == nil
}
