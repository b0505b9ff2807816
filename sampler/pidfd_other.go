//go:build !linux

package sampler

import "errors"

var usePidfd = false

func pidfdOpen(int) (int, error)                   { return -1, errors.ErrUnsupported }
func closeFD(int)                                  {}
func waitPidfd(int, <-chan struct{}) (bool, error) { return false, errors.ErrUnsupported }
