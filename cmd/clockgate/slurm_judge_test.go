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
)

// benchTemplate is a vLLM result of point 1/inf (a scenario tree's), its
// date replaced by the time the point ends.
const benchTemplate = "../../testdata/trees/multihost-aa/bench/llama-3.1-8b-instruct/dynamo/r1/c1.json"

// slurmTree is an evidence tree whose legs are recorded across the three
// nodes of scripts/slurm.sh's cluster: prefill on node1, decode on node2
// and node3, each node's own fake GPU.
type slurmTree struct {
	t    *testing.T
	c    *slurmtest.Cluster
	l    *recLeg
	tree string
}

func newSlurmTree(t *testing.T, c *slurmtest.Cluster) *slurmTree {
	t.Helper()
	l, dir := multiLeg(t, newRecTools(t))
	env := l.env[:0:0]
	for _, kv := range l.env {
		if !strings.HasPrefix(kv, bootIDFileEnv+"=") {
			env = append(env, kv)
		}
	}
	l.env = append(env, "SLURM_CONF="+c.Conf)
	return &slurmTree{t: t, c: c, l: l, tree: filepath.Dir(filepath.Dir(filepath.Dir(filepath.Dir(dir))))}
}

// node writes fakesmi.NODE.json: that node's GPU's own values.
func (s *slurmTree) node(node string, values map[string]string) {
	s.t.Helper()
	data, _ := json.Marshal(map[string]any{"gpu_values": map[string]any{"0": values}})
	if err := os.WriteFile(filepath.Join(s.l.smiDir, "fakesmi."+node+".json"), data, 0o644); err != nil {
		s.t.Fatal(err)
	}
}

// leg records engine's leg r1 as docs/multi-host.md teaches: leg init,
// the sampler step on nodes (node[1-3] by default) under srun
// --disable-status, leg wait, one marked point of about 7 s whose vLLM
// result the bench writes, stop to srun, leg close. It returns srun's exit
// status.
func (s *slurmTree) leg(engine, nodes string, stop syscall.Signal) int {
	t, l := s.t, s.l
	t.Helper()
	dir := filepath.Join(s.tree, "clocks", "m", engine, "r1")
	if code, _, stderr := l.run("", "leg", "init", "--out", dir, "--hosts", "node[1-3]", "--role", "prefill=node1", "--role", "decode=node2,node3", "--interval", "200ms"); code != 0 {
		t.Fatalf("leg init: exit %d\n%s", code, stderr)
	}
	name := fmt.Sprintf("cg-judge-%s-%d", engine, time.Now().UnixNano())
	n := 3
	if nodes != "node[1-3]" {
		n = 2
	}
	srun := exec.Command("srun", "--overlap", fmt.Sprintf("--nodes=%d", n), "--nodelist="+nodes, "--ntasks-per-node=1", "--disable-status", "--job-name="+name, os.Args[0], "sample", "--leg", dir)
	srun.Env = l.env
	srun.Stdout, srun.Stderr = os.Stderr, os.Stderr
	srun.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := srun.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- srun.Wait() }()
	t.Cleanup(func() {
		if srun.ProcessState == nil {
			srun.Process.Kill()
			<-done
		}
		s.c.Command("scancel", "--name="+name).Run()
	})
	timeout := "60s"
	if n < 3 {
		timeout = "3s"
	}
	if code, _, stderr := l.run("", "leg", "wait", "--started", dir, "--timeout", timeout); (code == 0) != (n == 3) {
		t.Fatalf("leg wait: exit %d on %s\n%s", code, nodes, stderr)
	}
	bench := filepath.Join(s.tree, "bench", "m", engine, "r1")
	script := fmt.Sprintf(`sleep 7 && mkdir -p %q && sed "s/\"date\": \"[0-9-]*\"/\"date\": \"$(date -u +%%Y%%m%%d-%%H%%M%%S)\"/" %q > %q/c1.json`, bench, benchTemplate, bench)
	if code, _, stderr := l.run("", "mark", "--leg", dir, "--point", "1/inf", "--", "sh", "-c", script); code != 0 {
		t.Fatalf("mark: exit %d\n%s", code, stderr)
	}
	srun.Process.Signal(stop)
	var code int
	select {
	case err := <-done:
		var exit *exec.ExitError
		if errors.As(err, &exit) {
			code = exit.ExitCode()
		}
	case <-time.After(60 * time.Second):
		t.Fatalf("srun still running 60 s after %v", stop)
	}
	l.run("", "leg", "close", dir)
	return code
}

// verdict summarizes the tree, b against a, and returns the THROUGHPUT
// ratio's clock block.
func (s *slurmTree) verdict() clockVerdict {
	s.t.Helper()
	out := filepath.Join(s.t.TempDir(), "report")
	s.l.run("", "summarize", s.tree, "--baseline", "a", "--out", out)
	data, err := os.ReadFile(filepath.Join(out, "summary.json"))
	if err != nil {
		s.t.Fatal(err)
	}
	var sum struct {
		Comparisons []struct {
			Throughput struct {
				Clock clockVerdict `json:"clock"`
			} `json:"throughput"`
		} `json:"comparisons"`
	}
	if err := json.Unmarshal(data, &sum); err != nil || len(sum.Comparisons) != 1 {
		s.t.Fatalf("summary.json: %v\n%s", err, data)
	}
	return sum.Comparisons[0].Throughput.Clock
}

type clockVerdict struct {
	Established bool `json:"established"`
	Reasons     []struct {
		Code    string `json:"code"`
		Message string `json:"message"`
	} `json:"reasons"`
}

// want fails unless the block is NOT ESTABLISHED with a reason of code
// whose message holds every fragment: the block's own, or, for a leg's
// code, its leg.ineligible and the message check prints for the leg.
func (s *slurmTree) want(v clockVerdict, code string, fragments ...string) {
	s.t.Helper()
	if v.Established {
		s.t.Fatalf("ESTABLISHED, want NOT ESTABLISHED with %s", code)
	}
	for _, r := range v.Reasons {
		ok := r.Code == code || r.Code == clocks.CodeLegIneligible && strings.Contains(r.Message, code)
		for _, f := range fragments {
			ok = ok && (r.Code != code || strings.Contains(r.Message, f))
		}
		if ok && r.Code == code || ok && len(fragments) == 0 {
			return
		}
	}
	if info, ok := clocks.Info(code); ok && info.Scope == clocks.ScopeLeg {
		code2, stdout, _ := s.l.run("", "check", filepath.Join(s.tree, "clocks", "m", "b", "r1"), filepath.Join(s.tree, "clocks", "m", "a", "r1"))
		for _, f := range fragments {
			if !strings.Contains(stdout, f) {
				s.t.Fatalf("check: exit %d, no %q in:\n%s", code2, f, stdout)
			}
		}
		if strings.Contains(stdout, code+": ") {
			return
		}
		s.t.Fatalf("check: no %s in:\n%s", code, stdout)
	}
	s.t.Fatalf("no %s with %q in %+v", code, fragments, v.Reasons)
}

// synced holds the kernel synchronised by chronyd for the test, checked
// right before a leg.
func synced(t *testing.T) {
	t.Helper()
	slurmtest.Synchronised(t)
}

// TestSlurmAAEstablished is the done case of SPEC §12.3: an A/A of a
// three-host leg (prefill node1, decode node2 and node3), each arm
// recorded by the documented pattern with chronyd synchronising the
// kernel, is ESTABLISHED.
func TestSlurmAAEstablished(t *testing.T) {
	c := slurmtest.Need(t)
	slurmtest.Synchronised(t)
	s := newSlurmTree(t, c)
	for _, e := range []string{"a", "b"} {
		synced(t)
		if code := s.leg(e, "node[1-3]", syscall.SIGINT); code != 0 {
			t.Fatalf("srun exited %d after SIGINT", code)
		}
	}
	if v := s.verdict(); !v.Established {
		t.Fatalf("A/A of a three-host leg on chronyd: NOT ESTABLISHED: %+v", v.Reasons)
	}
}

// TestSlurmNotEstablished: the same A/A with one thing wrong in arm b's
// leg (or between the arms) is NOT ESTABLISHED, the reason saying what
// to do.
func TestSlurmNotEstablished(t *testing.T) {
	c := slurmtest.Need(t)
	for _, tc := range []struct {
		name      string
		before    func(s *slurmTree)
		nodes     string
		stop      syscall.Signal
		code      string
		fragments []string
	}{
		{name: "a host that never sampled", nodes: "node[1-2]", stop: syscall.SIGINT, code: clocks.CodeHostMissing,
			fragments: []string{"host node3 (rank 3 of 3 in leg.json) has no record", "SIGINT to `srun --disable-status`"}},
		{name: "SIGTERM to srun", stop: syscall.SIGTERM, code: clocks.CodeHostMissing,
			fragments: []string{"host node1 (rank 1 of 3 in leg.json) has no record", "never SIGTERM to srun"}},
		{name: "a reboot of node2 between arms", before: func(s *slurmTree) { s.c.Reboot(s.t, "node2") }, stop: syscall.SIGINT, code: clocks.CodeCrossBoot,
			fragments: []string{"node2="}},
		{name: "a slower GPU in the decode group", before: func(s *slurmTree) { s.node("node3", map[string]string{"clocks.sm": "1900"}) }, stop: syscall.SIGINT,
			code: clocks.CodeGPUSkew, fragments: []string{"group decode: GPU busy medians across hosts differ by", "host node3 GPU 0 at 1900 MHz (the slowest)"}},
		{name: "another clock in the prefill role", before: func(s *slurmTree) { s.node("node1", map[string]string{"clocks.sm": "1900"}) }, stop: syscall.SIGINT,
			code: clocks.CodeOffset, fragments: []string{"GPU position 0 (host node1, role prefill, GPU 0): median offset"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newSlurmTree(t, c)
			synced(t)
			if code := s.leg("a", "node[1-3]", syscall.SIGINT); code != 0 {
				t.Fatalf("arm a: srun exited %d after SIGINT", code)
			}
			synced(t)
			if tc.before != nil {
				tc.before(s)
			}
			nodes := tc.nodes
			if nodes == "" {
				nodes = "node[1-3]"
			}
			s.leg("b", nodes, tc.stop)
			s.want(s.verdict(), tc.code, tc.fragments...)
		})
	}
}

// TestSlurmUnsynchronised: the A/A of TestSlurmAAEstablished on the
// machine's own unsynchronised clock (chronyd stopped) is NOT ESTABLISHED:
// clock.host_skew, saying to run chronyd.
func TestSlurmUnsynchronised(t *testing.T) {
	c := slurmtest.Need(t)
	slurmtest.Unsynchronised(t)
	if k, err := slurmtest.KernelSync(); err != nil || k.Synchronised {
		t.Fatalf("the kernel is synchronised with chronyd stopped: %+v %v", k, err)
	}
	s := newSlurmTree(t, c)
	for _, e := range []string{"a", "b"} {
		if code := s.leg(e, "node[1-3]", syscall.SIGINT); code != 0 {
			t.Fatalf("srun exited %d after SIGINT", code)
		}
	}
	s.want(s.verdict(), clocks.CodeHostSkew, "the kernel's clock is not synchronised at the window's start", "run chronyd")
}

// TestDocsSbatchOnSlurm runs docs/multi-host.md's sbatch pattern word for
// word on scripts/slurm.sh's cluster, chronyd synchronising the kernel:
// the batch script written as the page writes it, sbatch --wait, and
// check of the leg it recorded, which passes. Its run_bench keeps the
// fake GPUs busy for 16 s a point (30 busy readings at the default 1 s).
func TestDocsSbatchOnSlurm(t *testing.T) {
	c := slurmtest.Need(t)
	slurmtest.Synchronised(t)
	var script *docScript
	for _, s := range docScripts(t) {
		if s.key == "docs/multi-host.md multihost-sbatch" {
			script = &s
		}
	}
	if script == nil || len(script.blocks) != 2 || script.blocks[0].file != "leg.sbatch" {
		t.Fatalf("docs/multi-host.md's multihost-sbatch script: %+v", script)
	}
	bin := t.TempDir()
	if err := os.WriteFile(filepath.Join(bin, "run_bench"), []byte("#!/bin/sh\nsleep 16\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", bin+":"+os.Getenv("PATH"))
	repo, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	realPy, _ := exec.LookPath("python3")
	// The batch job's output, shown when the script fails.
	logs := t.TempDir()
	env := append(docsEnv(t, newRecTools(t), exe, realPy, 1), "SLURM_CONF="+c.Conf, "SBATCH_OUTPUT="+filepath.Join(logs, "slurm-%j.out"))
	t.Cleanup(func() {
		if !t.Failed() {
			return
		}
		outs, _ := filepath.Glob(filepath.Join(logs, "*"))
		for _, o := range outs {
			data, _ := os.ReadFile(o)
			t.Logf("%s:\n%s", o, data)
		}
	})
	synced(t)
	runDocScript(t, *script, repo, env)
}
