//go:build !cgo

package sampler

import "fmt"

// openNVML reports NVML unavailable: go-nvml needs cgo, and this binary was
// built without it.
func openNVML(gpu int, logf func(string, ...any)) (Backend, error) {
	return nil, fmt.Errorf("%w: this clockgate was built without cgo", ErrNVMLUnavailable)
}
