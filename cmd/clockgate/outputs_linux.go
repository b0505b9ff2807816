//go:build linux

package main

import (
	"errors"

	"golang.org/x/sys/unix"
)

// exchangeDirs swaps the directories a and b in one step with renameat2
// RENAME_EXCHANGE: at every moment each name holds one whole directory. On
// a filesystem without the flag it falls back to renameBoth.
func exchangeDirs(a, b string) error {
	err := unix.Renameat2(unix.AT_FDCWD, a, unix.AT_FDCWD, b, unix.RENAME_EXCHANGE)
	if errors.Is(err, unix.EINVAL) || errors.Is(err, unix.ENOSYS) {
		return renameBoth(a, b)
	}
	if err != nil {
		return &renameError{a, b, err}
	}
	return nil
}
