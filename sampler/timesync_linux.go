package sampler

import (
	"golang.org/x/sys/unix"
)

// bootTime is CLOCK_BOOTTIME in seconds (the time since boot, counting
// suspend, which no wall-clock step moves), or false where it cannot be
// read.
func bootTime() (float64, bool) {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_BOOTTIME, &ts); err != nil {
		return 0, false
	}
	return float64(ts.Sec) + float64(ts.Nsec)/1e9, true
}

// The kernel's constants (linux/timex.h).
const (
	timeError = 5      // TIME_ERROR: the clock is not synchronised
	staUnsync = 0x0040 // STA_UNSYNC
)

// kernelTime reads the kernel's time state without changing it (adjtimex
// with no mode bits set only reads).
func kernelTime() (state int, status int32, maxErrUS, estErrUS int64, err error) {
	var tx unix.Timex
	st, err := unix.Adjtimex(&tx)
	if err != nil {
		return 0, 0, 0, 0, err
	}
	return st, tx.Status, tx.Maxerror, tx.Esterror, nil
}
