//go:build linux

package grid

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/clockgate/clockgate/sampler"
)

// linuxProcs is Procs on Linux: prctl(PR_SET_CHILD_SUBREAPER), process
// groups, /proc.
type linuxProcs struct{ root string }

// SystemProcs is the process control of the running system.
func SystemProcs() Procs { return linuxProcs{root: "/proc"} }

func (linuxProcs) Subreaper() error {
	if err := unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); err != nil {
		return fmt.Errorf("prctl(PR_SET_CHILD_SUBREAPER): %w", err)
	}
	return nil
}

func (linuxProcs) Start(cmd *exec.Cmd) error {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Setpgid = true
	// The server dies with clockgate if clockgate is killed outright.
	cmd.SysProcAttr.Pdeathsig = syscall.SIGKILL
	return cmd.Start()
}

// stat reads pid's state and parent from /proc/PID/stat.
func (p linuxProcs) stat(pid int) (state byte, ppid int, ok bool) {
	st, ok := p.Stat(pid)
	return st.State, st.PPID, ok
}

// Stat reads /proc/PID/stat: after the command name (in parentheses,
// which may hold spaces), field 3 is the state, 4 the parent, 5 the
// process group and 22 the start time.
func (p linuxProcs) Stat(pid int) (ProcStat, bool) {
	data, err := os.ReadFile(filepath.Join(p.root, strconv.Itoa(pid), "stat"))
	if err != nil {
		return ProcStat{}, false
	}
	s := string(data)
	k := strings.LastIndexByte(s, ')')
	if k < 0 {
		return ProcStat{}, false
	}
	f := strings.Fields(s[k+1:])
	if len(f) < 20 || len(f[0]) == 0 {
		return ProcStat{}, false
	}
	ppid, err1 := strconv.Atoi(f[1])
	pgid, err2 := strconv.Atoi(f[2])
	start, err3 := strconv.ParseUint(f[19], 10, 64)
	if err1 != nil || err2 != nil || err3 != nil {
		return ProcStat{}, false
	}
	return ProcStat{State: f[0][0], PPID: ppid, PGID: pgid, StartTicks: start}, true
}

func (p linuxProcs) pids() []int {
	ents, err := os.ReadDir(p.root)
	if err != nil {
		return nil
	}
	var out []int
	for _, e := range ents {
		if pid, err := strconv.Atoi(e.Name()); err == nil && pid > 0 {
			out = append(out, pid)
		}
	}
	return out
}

func (p linuxProcs) Tree(root int) []int {
	children := map[int][]int{}
	for _, pid := range p.pids() {
		if _, ppid, ok := p.stat(pid); ok {
			children[ppid] = append(children[ppid], pid)
		}
	}
	var out []int
	seen := map[int]bool{root: true}
	queue := []int{root}
	for len(queue) > 0 {
		q := queue[0]
		queue = queue[1:]
		for _, c := range children[q] {
			if !seen[c] {
				seen[c] = true
				out = append(out, c)
				queue = append(queue, c)
			}
		}
	}
	return out
}

func (p linuxProcs) Marked(marker string, pids []int) []int {
	want := []byte(marker)
	if pids == nil {
		pids = p.pids()
	}
	var out []int
	for _, pid := range pids {
		data, err := os.ReadFile(filepath.Join(p.root, strconv.Itoa(pid), "environ"))
		if err != nil {
			continue
		}
		for _, kv := range bytes.Split(data, []byte{0}) {
			if bytes.Equal(kv, want) {
				out = append(out, pid)
				break
			}
		}
	}
	return out
}

func (p linuxProcs) Group(pid int) int {
	data, err := os.ReadFile(filepath.Join(p.root, strconv.Itoa(pid), "stat"))
	if err != nil {
		return 0
	}
	s := string(data)
	k := strings.LastIndexByte(s, ')')
	if k < 0 {
		return 0
	}
	f := strings.Fields(s[k+1:])
	if len(f) < 3 {
		return 0
	}
	g, _ := strconv.Atoi(f[2])
	return g
}

func (linuxProcs) Kill(pid int, sig syscall.Signal) error { return syscall.Kill(pid, sig) }

func (p linuxProcs) Alive(pid int) bool {
	state, _, ok := p.stat(pid)
	return ok && state != 'Z' && state != 'X'
}

func (linuxProcs) Reap(pid int) bool {
	var ws syscall.WaitStatus
	for {
		got, err := syscall.Wait4(pid, &ws, syscall.WNOHANG, nil)
		if err == syscall.EINTR {
			continue
		}
		// ECHILD: not (or no longer) this process's child.
		return got == pid || err == syscall.ECHILD
	}
}

func (p linuxProcs) Listeners(port int) ([]int, error) {
	return sampler.PortListeners(p.root, port)
}

func (p linuxProcs) Describe(pid int) string {
	comm, err := os.ReadFile(filepath.Join(p.root, strconv.Itoa(pid), "comm"))
	if err != nil {
		return strconv.Itoa(pid)
	}
	return fmt.Sprintf("%d (%s)", pid, strings.TrimSpace(string(comm)))
}
