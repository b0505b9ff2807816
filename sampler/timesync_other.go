//go:build !linux

package sampler

import "errors"

func bootTime() (float64, bool) { return 0, false }

const (
	timeError = 5
	staUnsync = 0x0040
)

func kernelTime() (int, int32, int64, int64, error) {
	return 0, 0, 0, 0, errors.New("adjtimex is Linux's")
}
