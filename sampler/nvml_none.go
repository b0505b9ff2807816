//go:build !linux || nonvml

package sampler

import (
	"fmt"
	"time"
)

// openNVML reports NVML unavailable: this clockgate was built with the
// nonvml tag (a fully static binary that reads nvidia-smi only), or for a
// system NVML is not loaded on.
func openNVML(sel Selection, timeout time.Duration, logf func(string, ...any)) (Backend, error) {
	return nil, fmt.Errorf("%w: this clockgate was built without NVML (the nonvml tag, or not for Linux)", ErrNVMLUnavailable)
}
