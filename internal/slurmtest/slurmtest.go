//go:build linux

// Package slurmtest gives tests the real Slurm cluster that
// scripts/slurm.sh starts (three nodes, node1 to node3, on this machine)
// and the real chronyd that scripts/chrony.sh starts, for the multi-host
// tests:
//
//	export CLOCKGATE_TEST_SLURM=$(scripts/slurm.sh start)    # slurm.conf
//	export CLOCKGATE_TEST_CHRONY=$(scripts/chrony.sh start)  # its directory
//
// Without them the tests that need them skip, unless
// CLOCKGATE_REQUIRE_SLURM or CLOCKGATE_REQUIRE_CHRONY is set (CI sets
// both), when they fail.
//
// Tests share the machine-wide cluster and kernel clock, across test
// binaries: Need holds the cluster for one test at a time, Synchronised
// and Unsynchronised hold the kernel's time state (shared and exclusive).
// Take Need first, then the time state.
package slurmtest

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The environment the tests read.
const (
	SlurmEnv         = "CLOCKGATE_TEST_SLURM"     // slurm.conf of scripts/slurm.sh's cluster
	RequireSlurmEnv  = "CLOCKGATE_REQUIRE_SLURM"  // set: a missing cluster fails the test
	ChronyEnv        = "CLOCKGATE_TEST_CHRONY"    // scripts/chrony.sh's directory
	RequireChronyEnv = "CLOCKGATE_REQUIRE_CHRONY" // set: a missing chronyd fails the test
)

// Nodes are the cluster's nodes, in Slurm's order.
var Nodes = []string{"node1", "node2", "node3"}

// lockWait bounds the wait for another test's hold on the cluster or the
// clock state: a test that waits longer fails rather than hangs.
const lockWait = 5 * time.Minute

// syncWait bounds the wait for chronyd to mark the kernel synchronised
// again (it does at each update, twice a second, with scripts/chrony.sh's
// configuration; the hypervisor may have stepped the clock since).
const syncWait = 10 * time.Second

// Cluster is the running cluster.
type Cluster struct {
	Conf string // slurm.conf, for SLURM_CONF
	Dir  string // scripts/slurm.sh's directory: logs, NODE.boot_id
}

// Root is the repository's root (where scripts/ is).
func Root(t testing.TB) string {
	t.Helper()
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		t.Fatal("slurmtest: cannot find the repository root")
	}
	return filepath.Clean(filepath.Join(filepath.Dir(file), "..", ".."))
}

// missing skips the test, or fails it when required.
func missing(t testing.TB, require, why string) {
	t.Helper()
	if os.Getenv(require) != "" {
		t.Fatalf("%s, and %s is set: these tests must run", why, require)
	}
	t.Skip(why)
}

// Need returns the cluster and holds it for the test (other tests that
// call Need wait), or skips without it (fails under
// CLOCKGATE_REQUIRE_SLURM). A cluster named but not answering fails.
func Need(t testing.TB) *Cluster {
	t.Helper()
	conf := os.Getenv(SlurmEnv)
	if conf == "" {
		missing(t, RequireSlurmEnv, SlurmEnv+" is not set: no Slurm cluster to test against (export "+SlurmEnv+"=$(scripts/slurm.sh start))")
	}
	c := &Cluster{Conf: conf, Dir: filepath.Dir(conf)}
	if _, err := os.Stat(conf); err != nil {
		t.Fatalf("%s=%s: %v (scripts/slurm.sh start prints the path)", SlurmEnv, conf, err)
	}
	hold(t, filepath.Join(c.Dir, "test.lock"), syscall.LOCK_EX)
	out, err := c.Command("sinfo", "-h", "-N", "-o", "%N %t").CombinedOutput()
	if err != nil {
		t.Fatalf("sinfo: %v\n%s(is the cluster up? scripts/slurm.sh status)", err, out)
	}
	return c
}

// hold takes a flock on path (created if missing) until the test ends.
func hold(t testing.TB, path string, how int) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o666)
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(lockWait)
	for {
		err := syscall.Flock(int(f.Fd()), how|syscall.LOCK_NB)
		if err == nil {
			break
		}
		if !errors.Is(err, syscall.EWOULDBLOCK) || time.Now().After(deadline) {
			f.Close()
			t.Fatalf("lock %s: %v (another test held it for %v)", path, err, lockWait)
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Cleanup(func() { f.Close() })
}

// Env is the environment of a Slurm command against the cluster.
func (c *Cluster) Env() []string {
	return append(os.Environ(), "SLURM_CONF="+c.Conf)
}

// Command is a Slurm command (srun, squeue, scancel…) against the cluster.
func (c *Cluster) Command(name string, args ...string) *exec.Cmd {
	cmd := exec.Command(name, args...)
	cmd.Env = c.Env()
	return cmd
}

// Run runs a Slurm command and returns its standard output, failing the
// test on an error.
func (c *Cluster) Run(t testing.TB, name string, args ...string) string {
	t.Helper()
	var stderr bytes.Buffer
	cmd := c.Command(name, args...)
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%s %s: %v\n%s%s", name, strings.Join(args, " "), err, out, stderr.Bytes())
	}
	return string(out)
}

// BootID is the boot id node's slurmd and its tasks see.
func (c *Cluster) BootID(t testing.TB, node string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(c.Dir, node+".boot_id"))
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(data))
}

// Reboot gives node a new boot id and restarts its slurmd (its running
// tasks end), as a reboot of that host would; it returns the new boot id.
func (c *Cluster) Reboot(t testing.TB, node string) string {
	t.Helper()
	cmd := exec.Command(filepath.Join(Root(t), "scripts", "slurm.sh"), "reboot", node)
	cmd.Env = append(c.Env(), "CLOCKGATE_SLURM_DIR="+c.Dir)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("scripts/slurm.sh reboot %s: %v\n%s", node, err, stderr.Bytes())
	}
	return strings.TrimSpace(string(out))
}

// Sync is the kernel's view of its clock (adjtimex).
type Sync struct {
	Synchronised bool  // the state is not TIME_ERROR and STA_UNSYNC is clear
	State        int   // TIME_OK 0 … TIME_ERROR 5
	Status       int32 // the status bits
	MaxErrorUS   int64
	EstErrorUS   int64
}

// The kernel's constants (linux/timex.h).
const (
	timeError = 5
	staUnsync = 0x0040
)

// KernelSync reads the kernel's time state without changing it.
func KernelSync() (Sync, error) {
	var tx syscall.Timex
	state, err := syscall.Adjtimex(&tx)
	if err != nil {
		return Sync{}, fmt.Errorf("adjtimex: %w", err)
	}
	return Sync{
		Synchronised: state != timeError && tx.Status&staUnsync == 0,
		State:        state,
		Status:       tx.Status,
		MaxErrorUS:   tx.Maxerror,
		EstErrorUS:   tx.Esterror,
	}, nil
}

// chronyDir is scripts/chrony.sh's directory, or a skip (a failure under
// CLOCKGATE_REQUIRE_CHRONY).
func chronyDir(t testing.TB) string {
	t.Helper()
	dir := os.Getenv(ChronyEnv)
	if dir == "" {
		missing(t, RequireChronyEnv, ChronyEnv+" is not set: no chronyd to synchronise the kernel (export "+ChronyEnv+"=$(scripts/chrony.sh start))")
	}
	return dir
}

// chrony runs scripts/chrony.sh with its directory.
func chrony(t testing.TB, dir, verb string) (string, error) {
	t.Helper()
	cmd := exec.Command(filepath.Join(Root(t), "scripts", "chrony.sh"), verb)
	cmd.Env = append(os.Environ(), "CLOCKGATE_CHRONY_DIR="+dir)
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// waitSync waits up to d for the kernel to reach want.
func waitSync(want bool, d time.Duration) (Sync, error) {
	deadline := time.Now().Add(d)
	for {
		s, err := KernelSync()
		if err != nil || s.Synchronised == want || time.Now().After(deadline) {
			return s, err
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// Synchronised holds the kernel synchronised by scripts/chrony.sh's
// chronyd for the test (shared with other such tests; Unsynchronised
// waits), checking it now: a hypervisor that paused the machine and
// stepped its clock leaves the kernel unsynchronised until chronyd's next
// update, and a chronyd that has gone is started again. It skips without
// CLOCKGATE_TEST_CHRONY (fails under CLOCKGATE_REQUIRE_CHRONY). Check
// again with KernelSync right before a step that relies on it.
func Synchronised(t testing.TB) Sync {
	t.Helper()
	dir := chronyDir(t)
	hold(t, filepath.Join(dir, "..", filepath.Base(dir)+".lock"), syscall.LOCK_SH)
	s, err := waitSync(true, syncWait)
	if err != nil {
		t.Fatal(err)
	}
	if !s.Synchronised {
		out, err := chrony(t, dir, "start")
		if err != nil {
			t.Fatalf("scripts/chrony.sh start: %v\n%s", err, out)
		}
		if s, err = waitSync(true, syncWait); err != nil || !s.Synchronised {
			t.Fatalf("the kernel is not synchronised under scripts/chrony.sh (%+v, %v); its log: %s/chronyd.log", s, err, dir)
		}
	}
	return s
}

// Unsynchronised holds the kernel unsynchronised for the test, as the
// machine's own clock is: it waits for the tests holding Synchronised,
// stops scripts/chrony.sh's chronyd, and starts it again when the test
// ends. It skips without CLOCKGATE_TEST_CHRONY (fails under
// CLOCKGATE_REQUIRE_CHRONY).
func Unsynchronised(t testing.TB) Sync {
	t.Helper()
	dir := chronyDir(t)
	hold(t, filepath.Join(dir, "..", filepath.Base(dir)+".lock"), syscall.LOCK_EX)
	if out, err := chrony(t, dir, "stop"); err != nil {
		t.Fatalf("scripts/chrony.sh stop: %v\n%s", err, out)
	}
	t.Cleanup(func() {
		if out, err := chrony(t, dir, "start"); err != nil {
			t.Errorf("scripts/chrony.sh start: %v\n%s", err, out)
		}
	})
	s, err := KernelSync()
	if err != nil {
		t.Fatal(err)
	}
	return s
}
