//go:build !linux

package grid

import (
	"errors"
	"os/exec"
	"syscall"
)

// otherProcs is Procs where there is no child subreaper: the grid refuses
// to run there, since a worker whose server died would leave the leg.
type otherProcs struct{}

// SystemProcs is the process control of the running system.
func SystemProcs() Procs { return otherProcs{} }

var errNotLinux = errors.New("clockgate grid needs Linux (PR_SET_CHILD_SUBREAPER and /proc)")

func (otherProcs) Subreaper() error                       { return errNotLinux }
func (otherProcs) Start(cmd *exec.Cmd) error              { return errNotLinux }
func (otherProcs) Tree(int) []int                         { return nil }
func (otherProcs) Marked(string, []int) []int             { return nil }
func (otherProcs) Group(int) int                          { return 0 }
func (otherProcs) Kill(pid int, sig syscall.Signal) error { return errNotLinux }
func (otherProcs) Alive(int) bool                         { return false }
func (otherProcs) Stat(int) (ProcStat, bool)              { return ProcStat{}, false }
func (otherProcs) Reap(int) bool                          { return false }
func (otherProcs) Listeners(int) ([]int, error)           { return nil, errNotLinux }
func (otherProcs) Describe(int) string                    { return "" }
