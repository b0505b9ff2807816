package grid

import (
	"fmt"
	"os"
	"os/exec"
	"reflect"
	"sort"
	"syscall"
	"testing"
	"time"
)

// fakeProcs is a process table: Reap removes a zombie that is this
// process's child, and records every pid it was asked for.
type fakeProcs struct {
	table  map[int]ProcStat
	comm   map[int]string
	reaped []int
	// listen are the port's listeners, listenErr why none can be named.
	listen    []int
	listenErr error
}

func (f *fakeProcs) Subreaper() error           { return nil }
func (f *fakeProcs) Start(*exec.Cmd) error      { return nil }
func (f *fakeProcs) Marked(string, []int) []int { return nil }
func (f *fakeProcs) Group(pid int) int          { return f.table[pid].PGID }
func (f *fakeProcs) Kill(int, syscall.Signal) error {
	return nil
}
func (f *fakeProcs) Alive(pid int) bool {
	st, ok := f.table[pid]
	return ok && st.State != 'Z'
}
func (f *fakeProcs) Listeners(int) ([]int, error) { return f.listen, f.listenErr }
func (f *fakeProcs) Describe(pid int) string      { return fmt.Sprintf("%d (%s)", pid, f.comm[pid]) }
func (f *fakeProcs) Stat(pid int) (ProcStat, bool) {
	st, ok := f.table[pid]
	return st, ok
}
func (f *fakeProcs) Tree(root int) []int {
	var out []int
	for p, st := range f.table {
		if st.PPID == root {
			out = append(out, p)
		}
	}
	sort.Ints(out)
	return out
}
func (f *fakeProcs) Reap(pid int) bool {
	f.reaped = append(f.reaped, pid)
	if st, ok := f.table[pid]; ok && st.PPID == os.Getpid() && st.State == 'Z' {
		delete(f.table, pid)
		return true
	}
	return false
}

// TestReapLegByPID: the stop waits, by pid, for the leg's dead processes
// that are clockgate's children (one the tracking saw, and an orphan of
// the server's group it never saw), and for nothing else: not the server
// (os/exec waits for it), not a pid now another process's (its start
// time changed), not a child of clockgate outside the server's group (a
// bench or nvidia-smi run that os/exec waits for). What it cannot collect
// is named with its state and parent.
func TestReapLegByPID(t *testing.T) {
	self := os.Getpid()
	const srvPID = 1000
	f := &fakeProcs{
		table: map[int]ProcStat{
			srvPID: {State: 'Z', PPID: self, PGID: srvPID, StartTicks: 1},
			1001:   {State: 'Z', PPID: self, PGID: 1001, StartTicks: 5}, // seen: the escaped worker
			1002:   {State: 'Z', PPID: self, PGID: self, StartTicks: 8}, // seen at start 7: its pid reused by nvidia-smi
			1003:   {State: 'Z', PPID: self, PGID: srvPID, StartTicks: 9},
			1004:   {State: 'Z', PPID: self, PGID: self, StartTicks: 9}, // the bench
			1005:   {State: 'S', PPID: 1, PGID: srvPID, StartTicks: 3},  // seen: out of reach
		},
		comm: map[int]string{1005: "worker"},
	}
	g := &grid{procs: f}
	srv := &server{pid: srvPID, seen: map[int]uint64{srvPID: 1, 1001: 5, 1002: 7, 1005: 3}}
	left := g.reapLeg(srv, time.Now().Add(100*time.Millisecond))
	if want := []string{"1005 (worker) state S, parent 1"}; !reflect.DeepEqual(left, want) {
		t.Errorf("left %q, want %q", left, want)
	}
	reaped := map[int]bool{}
	for _, p := range f.reaped {
		reaped[p] = true
	}
	if !reaped[1001] || !reaped[1003] {
		t.Errorf("reaped %v: want 1001 (seen) and 1003 (an orphan of the server's group)", f.reaped)
	}
	for _, p := range []int{srvPID, 1002, 1004, 1005} {
		if reaped[p] {
			t.Errorf("waited for %d: reaped %v", p, f.reaped)
		}
	}
	if _, ok := f.table[1001]; ok {
		t.Error("1001 is still in the table")
	}
}

// TestStopServerReapsWhenOneIsLeft: a process of the leg that SIGKILL
// does not end (a D-state worker) stops the grid, but the stop still
// waits, by pid, for the processes of the leg that did die (one the
// tracking saw, an orphan of the server's group it never saw), so none
// is left a zombie; a dead one it cannot collect (another's child) is
// named beside the live one, each once.
func TestStopServerReapsWhenOneIsLeft(t *testing.T) {
	self := os.Getpid()
	const srvPID = 2000
	f := &fakeProcs{
		table: map[int]ProcStat{
			2001: {State: 'D', PPID: self, PGID: srvPID, StartTicks: 5}, // seen: SIGKILL cannot end it
			2002: {State: 'Z', PPID: self, PGID: srvPID, StartTicks: 6}, // seen: died
			2003: {State: 'Z', PPID: self, PGID: srvPID, StartTicks: 9}, // never seen: died
			2004: {State: 'Z', PPID: 1, PGID: srvPID, StartTicks: 7},    // seen: died, init's child
		},
		comm: map[int]string{2001: "worker", 2004: "helper"},
	}
	g := &grid{procs: f, t: timing{stopGrace: 10 * time.Millisecond, stopWait: 50 * time.Millisecond}}
	srv := &server{pid: srvPID, exited: make(chan struct{}), stop: make(chan struct{}),
		seen: map[int]uint64{srvPID: 1, 2001: 5, 2002: 6, 2004: 7}}
	close(srv.exited)
	_, left, why := g.stopServer(srv)
	want := []string{"2001 (worker)", "2004 (helper) state Z, parent 1"}
	if !reflect.DeepEqual(left, want) {
		t.Errorf("left %q, want %q", left, want)
	}
	if wantWhy := "after SIGKILL and 50ms, processes of the leg are still there: 2001 (worker), 2004 (helper) state Z, parent 1"; why != wantWhy {
		t.Errorf("why %q, want %q", why, wantWhy)
	}
	for _, p := range []int{2002, 2003} {
		if _, ok := f.table[p]; ok {
			t.Errorf("%d left a zombie: reaped %v", p, f.reaped)
		}
	}
	for _, p := range f.reaped {
		if p == 2001 || p == 2004 || p == srvPID {
			t.Errorf("waited for %d: reaped %v", p, f.reaped)
		}
	}
}
