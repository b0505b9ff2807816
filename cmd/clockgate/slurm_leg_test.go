//go:build linux

package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/clockgate/clockgate/clocks"
	"github.com/clockgate/clockgate/internal/slurmtest"
	"github.com/clockgate/clockgate/multileg"
)

// slurmLeg is a multi-host leg on scripts/slurm.sh's cluster: leg.json
// over node[1-3], prefill on node1 and decode on node2 and node3, and the
// sampler step started under srun as SPEC §12.3 teaches.
type slurmLeg struct {
	l    *recLeg
	c    *slurmtest.Cluster
	dir  string
	srun *exec.Cmd
	done chan error
	name string
}

// startSlurmLeg sets the leg up and starts its samplers, one per node, and
// waits until each has its first reading.
func startSlurmLeg(t *testing.T, c *slurmtest.Cluster) *slurmLeg {
	t.Helper()
	tools := newRecTools(t)
	l, dir := multiLeg(t, tools)
	// Each node reads its own boot id, not the test's file.
	env := l.env[:0:0]
	for _, kv := range l.env {
		if !strings.HasPrefix(kv, bootIDFileEnv+"=") {
			env = append(env, kv)
		}
	}
	l.env = append(env, "SLURM_CONF="+c.Conf)
	if code, _, stderr := l.run("", "leg", "init", "--out", dir, "--hosts", "node[1-3]", "--role", "prefill=node1", "--role", "decode=node2,node3", "--interval", "200ms"); code != 0 {
		t.Fatalf("leg init: exit %d\n%s", code, stderr)
	}
	s := &slurmLeg{l: l, c: c, dir: dir, done: make(chan error, 1), name: fmt.Sprintf("cg-%s-%d", t.Name(), time.Now().UnixNano())}
	s.srun = exec.Command("srun", "--overlap", "--nodes=3", "--ntasks-per-node=1", "--disable-status", "--job-name="+s.name, os.Args[0], "sample", "--leg", dir)
	s.srun.Env = l.env
	s.srun.Stdout, s.srun.Stderr = os.Stderr, os.Stderr
	s.srun.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := s.srun.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { s.done <- s.srun.Wait() }()
	t.Cleanup(func() {
		if s.srun.ProcessState == nil {
			s.srun.Process.Kill()
			<-s.done
		}
		c.Command("scancel", "--name="+s.name).Run()
	})
	if code, _, stderr := l.run("", "leg", "wait", "--started", dir, "--timeout", "60s"); code != 0 {
		t.Fatalf("leg wait: exit %d\n%s", code, stderr)
	}
	for _, p := range []string{"1/inf", "2/inf"} {
		if code, _, stderr := l.run("", "mark", "--leg", dir, "--point", p, "--", "sleep", "0.4"); code != 0 {
			t.Fatalf("mark %s: exit %d\n%s", p, code, stderr)
		}
	}
	return s
}

// stop sends sig to srun and returns its exit status.
func (s *slurmLeg) stop(t *testing.T, sig syscall.Signal) int {
	t.Helper()
	s.srun.Process.Signal(sig)
	select {
	case err := <-s.done:
		var exit *exec.ExitError
		if errors.As(err, &exit) {
			return exit.ExitCode()
		}
		if err != nil {
			t.Fatal(err)
		}
		return 0
	case <-time.After(60 * time.Second):
		t.Fatalf("srun still running 60 s after %v", sig)
		return -1
	}
}

// TestLegOnSlurm records a leg across the three nodes of a real Slurm
// cluster with chronyd synchronising the kernel: leg init, the sampler
// step under srun --disable-status, leg wait, two marks, SIGINT to srun,
// leg close. Each node wrote its stream (its own boot id and GPU, mono_s
// on every line), its record (time_sync synchronised at start and end,
// chronyc's tracking with leap status Normal) and memory record; the leg's
// memory record sums the three.
func TestLegOnSlurm(t *testing.T) {
	c := slurmtest.Need(t)
	slurmtest.Synchronised(t)
	if s, err := slurmtest.KernelSync(); err != nil || !s.Synchronised {
		slurmtest.Synchronised(t) // checked again right before the leg
	}
	s := startSlurmLeg(t, c)
	if code := s.stop(t, syscall.SIGINT); code != 0 {
		t.Fatalf("srun --disable-status exited %d after SIGINT, want 0", code)
	}
	uuids := map[string]string{}
	for _, node := range slurmtest.Nodes {
		prefix := multileg.Prefix(s.dir, node)
		lines := streamLines(t, prefix+".samples.jsonl")
		for i, line := range lines {
			if line["boot_id"] != c.BootID(t, node) {
				t.Fatalf("%s line %d: boot_id %v, want the node's %s", node, i+1, line["boot_id"], c.BootID(t, node))
			}
			if _, ok := line["mono_s"].(float64); !ok {
				t.Fatalf("%s line %d: no mono_s", node, i+1)
			}
		}
		uuids[lines[0]["gpu_uuid"].(string)] = node
		data, err := os.ReadFile(prefix + ".summary.json")
		if err != nil {
			t.Fatalf("%s wrote no record: %v", node, err)
		}
		rec, err := clocks.ParseRecord(data)
		if err != nil || rec.Window.StopReason != clocks.StopSignal {
			t.Fatalf("%s: record %v, stop reason %q; want signal", node, err, rec.Window.StopReason)
		}
		var raw struct {
			TimeSync *clocks.TimeSyncWindow `json:"time_sync"`
		}
		json.Unmarshal(data, &raw)
		ts := raw.TimeSync
		if ts == nil {
			t.Fatalf("%s: no time_sync in %s", node, data)
		}
		for what, r := range map[string]*clocks.TimeSync{"start": ts.Start, "end": ts.End} {
			if r == nil || r.Kernel == nil || !r.Kernel.Synchronised || r.Chrony == nil || r.Chrony.LeapStatus != "Normal" {
				t.Fatalf("%s: time_sync.%s %+v, want the kernel synchronised and chronyc's tracking (leap Normal); record:\n%s", node, what, r, data)
			}
		}
		if _, err := os.Stat(multileg.MemoryPath(s.dir, node)); err != nil {
			t.Fatal(err)
		}
	}
	if len(uuids) != 3 {
		t.Fatalf("GPU uuids %v: want one GPU of each node's own", uuids)
	}
	points, _ := os.ReadFile(filepath.Join(s.dir, multileg.PointsName))
	host, _ := os.Hostname()
	if strings.Count(string(points), `"host":"`+host+`"`) != 4 {
		t.Fatalf("points.jsonl:\n%s", points)
	}
	code, _, stderr := s.l.run("", "leg", "close", s.dir)
	if code != 0 {
		t.Fatalf("leg close: exit %d\n%s", code, stderr)
	}
	tree := filepath.Dir(filepath.Dir(filepath.Dir(filepath.Dir(s.dir))))
	mem, err := os.ReadFile(filepath.Join(tree, "memory", "m", "e", "r1.summary.json"))
	if err != nil || !strings.Contains(string(mem), `"peak_gpu_memory_mib": 213702,`) || strings.Count(string(mem), `{"host": "node`) != 3 {
		t.Fatalf("memory record: %s (%v)", mem, err)
	}
}

// TestLegOnSlurmStoppedBySIGTERM: SIGTERM to srun SIGKILLs every sampler
// (exit 137), so no node writes its record; leg close names the three
// hosts and says how to stop samplers, and writes nothing.
func TestLegOnSlurmStoppedBySIGTERM(t *testing.T) {
	c := slurmtest.Need(t)
	s := startSlurmLeg(t, c)
	if code := s.stop(t, syscall.SIGTERM); code != 137 {
		t.Fatalf("srun exited %d after SIGTERM, want 137", code)
	}
	code, _, stderr := s.l.run("", "leg", "close", s.dir)
	for _, want := range []string{
		"3 of 3 hosts have no record: node1 (hosts/node1.summary.json: its sampler is still running, or was killed), node2 (",
		"stop samplers with SIGINT to `srun --disable-status` (kill -INT $srun_pid; wait $srun_pid) or `scancel --signal=INT JOBID.STEPID`, never SIGTERM to srun",
	} {
		if code != ExitFailed || !strings.Contains(stderr, want) {
			t.Fatalf("leg close: exit %d, want 1 with %q:\n%s", code, want, stderr)
		}
	}
	tree := filepath.Dir(filepath.Dir(filepath.Dir(filepath.Dir(s.dir))))
	if _, err := os.Stat(filepath.Join(tree, "memory")); err == nil {
		t.Fatal("leg close wrote a memory record")
	}
}
