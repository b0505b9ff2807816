package sampler

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"strconv"
	"syscall"
	"time"
)

// PIDPollInterval is how often the end of --pid is polled where the kernel
// cannot tell it at once (no pidfd: Linux before 5.3, or a sandbox that
// forbids pidfd_open): five polls inside MaxPIDExitLatency.
const PIDPollInterval = 20 * time.Millisecond

// MaxPIDExitLatency is how soon after the --pid process ends a sampler
// stops, whatever its interval: a leg's window must end with its leg.
const MaxPIDExitLatency = 100 * time.Millisecond

// process watches the process a sampler is bounded by.
type process struct {
	pid int
	// start is the process's start time from /proc/PID/stat (clock ticks
	// since boot), "" when /proc could not tell. A pid whose start time
	// changes is a new process that reused the number.
	start string
}

// watchProcess starts watching pid; it fails with ErrNoProcess when pid is
// not running (gone, or a zombie that has already exited).
func watchProcess(pid int) (*process, error) {
	if pid <= 0 {
		return nil, fmt.Errorf("pid %d: %w", pid, ErrNoProcess)
	}
	if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) {
		return nil, fmt.Errorf("pid %d: %w", pid, ErrNoProcess)
	}
	p := &process{pid: pid}
	if state, start, err := readStat(pid); err == nil {
		if exited(state) {
			return nil, fmt.Errorf("pid %d: %w (it has exited and is a zombie)", pid, ErrNoProcess)
		}
		p.start = start
	}
	return p, nil
}

// alive reports whether the watched process is still running. kill(pid, 0)
// failing with ESRCH means gone; EPERM means it exists under another user.
// A zombie has exited even though its pid still answers, and a pid whose
// start time changed belongs to another process now.
func (p *process) alive() bool {
	if err := syscall.Kill(p.pid, 0); errors.Is(err, syscall.ESRCH) {
		return false
	}
	state, start, err := readStat(p.pid)
	if err != nil {
		// It answered kill; without /proc that is all there is to know,
		// unless /proc knew it at start and no longer does.
		return !(p.start != "" && errors.Is(err, os.ErrNotExist))
	}
	if exited(state) {
		return false
	}
	return p.start == "" || start == p.start
}

// watch calls gone once, as soon as the process has ended, unless done is
// closed first. It waits on a pidfd where the kernel has one (the process
// is then known by identity, not by number, and its end wakes the watcher
// at once); elsewhere it polls alive every PIDPollInterval.
func (p *process) watch(done <-chan struct{}, gone func()) {
	fd, err := pidfdOpen(p.pid)
	if err == nil && !p.alive() {
		// The pid ended, or was reused, between the start check and
		// pidfd_open: the pidfd may name another process.
		closeFD(fd)
		go gone()
		return
	}
	go func() {
		if err == nil {
			ended, werr := waitPidfd(fd, done)
			closeFD(fd)
			if werr == nil {
				if ended {
					gone()
				}
				return
			}
		}
		t := time.NewTicker(PIDPollInterval)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				if !p.alive() {
					gone()
					return
				}
			}
		}
	}()
}

// exited reports whether a /proc state letter is one of a process that has
// exited: Z (zombie) or X (dead).
func exited(state byte) bool { return state == 'Z' || state == 'X' }

func readStat(pid int) (state byte, start string, err error) {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, "", err
	}
	return parseStat(data)
}

// parseStat reads the state (field 3) and start time (field 22) from the
// text of /proc/PID/stat. The command name (field 2) is in parentheses and
// may itself hold spaces and parentheses, so fields are counted from the
// last ')'.
func parseStat(data []byte) (state byte, start string, err error) {
	i := bytes.LastIndexByte(data, ')')
	if i < 0 {
		return 0, "", errors.New("no command name in /proc stat")
	}
	f := bytes.Fields(data[i+1:])
	// f[0] is field 3 (state); field 22 (starttime) is f[19].
	if len(f) < 20 || len(f[0]) != 1 {
		return 0, "", errors.New("short /proc stat")
	}
	return f[0][0], string(f[19]), nil
}
