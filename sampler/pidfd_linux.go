package sampler

import (
	"errors"
	"time"

	"golang.org/x/sys/unix"
)

// usePidfd is false in tests of the polling fallback.
var usePidfd = true

func pidfdOpen(pid int) (int, error) {
	if !usePidfd {
		return -1, errors.ErrUnsupported
	}
	return unix.PidfdOpen(pid, 0)
}

func closeFD(fd int) { unix.Close(fd) }

// waitPidfd waits until the pidfd is readable (its process has ended:
// exited, killed, or a zombie not yet reaped) and reports true, or until done
// is closed and reports false. done is checked every PIDPollInterval; the
// end of the process wakes it at once. An error means the pidfd cannot be
// waited on, and the caller polls instead.
func waitPidfd(fd int, done <-chan struct{}) (bool, error) {
	fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
	for {
		select {
		case <-done:
			return false, nil
		default:
		}
		n, err := unix.Poll(fds, int(PIDPollInterval/time.Millisecond))
		if err != nil && !errors.Is(err, unix.EINTR) {
			return false, err
		}
		if n > 0 {
			return true, nil
		}
	}
}
