package grid

import (
	"os/exec"
	"syscall"
)

// ProcStat is what /proc/PID/stat says of a process: its state (R, S,
// Z, ...), its parent, its process group, and its start time (clock
// ticks after boot), which tells it from a later process given its pid.
type ProcStat struct {
	State      byte
	PPID, PGID int
	StartTicks uint64
}

// Procs is the process control a leg needs: its Linux calls are in
// procs_linux.go, and a test may stand in for it.
type Procs interface {
	// Subreaper makes this process the child subreaper of everything it
	// starts: a process whose parent dies is reparented to it, not to
	// init, so every worker of a server stays its descendant.
	Subreaper() error
	// Start starts cmd in a process group of its own (its pid is the
	// group's id).
	Start(cmd *exec.Cmd) error
	// Tree is every process below root (not root itself) as /proc shows
	// them now.
	Tree(root int) []int
	// Marked is every process of pids (every process /proc shows, when
	// pids is nil) whose environment holds marker (KEY=VALUE): the leg's
	// token, which its server and every worker inherit.
	Marked(marker string, pids []int) []int
	// Group is pid's process group id, 0 when pid is gone.
	Group(pid int) int
	// Kill sends sig to pid (a negative pid: to the process group -pid).
	Kill(pid int, sig syscall.Signal) error
	// Alive reports whether pid is a process that has not exited: a
	// zombie is not alive.
	Alive(pid int) bool
	// Stat is pid as /proc shows it now; false when pid is gone.
	Stat(pid int) (ProcStat, bool)
	// Reap collects pid's exit status, by its pid, if it is this
	// process's child and has exited, so that it leaves the process
	// table: true when it was collected. It never waits for any child
	// but pid (never wait4(-1)), so os/exec keeps the status of the
	// children it waits for.
	Reap(pid int) bool
	// Listeners are the processes holding a socket that listens on TCP
	// port, topmost first (as --engine-port finds them, SPEC §11.1), or
	// why none can be named.
	Listeners(port int) ([]int, error)
	// Describe names pid for a message: "1234 (python3)".
	Describe(pid int) string
}
