//go:build linux

// Package cmdtest runs clockgate grid end to end, as a user runs it: the
// clockgate binary, the fake nvidia-smi (sampler/testdata/fakesmi), and the
// fake server and bench (grid/testdata), all built once for the package.
// Its tests have a package, and a test timeout, of their own.
package cmdtest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/clockgate/clockgate/grid"
	"github.com/clockgate/clockgate/sampler"
)

// The binaries the tests run, built once by TestMain.
var bins struct {
	clockgate, fakeSMI, server, bench string
}

const bootID = "13dc5579-455c-45c8-8e4d-d09c457fa826"

func TestMain(m *testing.M) {
	// The test process is a child subreaper that never reaps: a process
	// clockgate left unreaped when it exited comes here and stays a
	// zombie, whatever this machine's init does, so noneAlive finds it.
	if err := unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); err != nil {
		fmt.Fprintln(os.Stderr, "prctl(PR_SET_CHILD_SUBREAPER):", err)
		os.Exit(1)
	}
	dir, err := os.MkdirTemp("", "clockgate-grid-bins-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	for _, b := range []struct {
		out       *string
		name, pkg string
	}{
		{&bins.clockgate, "clockgate", "github.com/clockgate/clockgate/cmd/clockgate"},
		{&bins.fakeSMI, "fakesmi", "github.com/clockgate/clockgate/sampler/testdata/fakesmi"},
		{&bins.server, "fakeserver", "github.com/clockgate/clockgate/grid/testdata/fakeserver"},
		{&bins.bench, "fakebench", "github.com/clockgate/clockgate/grid/testdata/fakebench"},
	} {
		*b.out = filepath.Join(dir, b.name)
		cmd := exec.Command("go", "build", "-o", *b.out, b.pkg)
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		if out, err := cmd.CombinedOutput(); err != nil {
			fmt.Fprintf(os.Stderr, "building %s: %v\n%s", b.pkg, err, out)
			os.RemoveAll(dir)
			os.Exit(1)
		}
	}
	// The grids here read a quiet host, the fixture tree: this machine's
	// own /proc shows its steal and its other tenants.
	if os.Getenv("CLOCKGATE_HOST_ROOT") == "" {
		if root, err := filepath.Abs("../../host/testdata/vm"); err == nil {
			os.Setenv("CLOCKGATE_HOST_ROOT", root)
		}
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// gridTimingFast shortens the grid's waits for these tests: a 1 s idle
// read and slope window, 100 ms polls, a 2 s grace and 5 s bounded waits.
const gridTimingFast = "idle=1s,slope=1s,poll=100ms,ready=100ms,grace=2s,wait=5s"

// gridWorld is one grid test's machine: the fake nvidia-smi (whose
// compute processes are those the fake servers list while they live, and
// whose temperature follows them), the fake server and bench, a plan.
type gridWorld struct {
	t       *testing.T
	dir     string
	smiDir  string
	env     []string
	server  string
	bench   string
	pids    string
	port    int
	planDir string
	// benchDur is how long each bench point runs: the A/A grid needs 30
	// busy samples a leg at 250 ms.
	benchDur string
}

func freePort(t *testing.T) int {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

func newGridWorld(t *testing.T, thermal map[string]any) *gridWorld {
	t.Helper()
	return newGridWorldWith(t, thermal, bins.server, bins.bench)
}

// newGridWorldWith is newGridWorld with the fake server and bench at the
// paths given (a test that runs no leg names them without building them).
func newGridWorldWith(t *testing.T, thermal map[string]any, server, bench string) *gridWorld {
	t.Helper()
	if thermal == nil {
		thermal = map[string]any{"idle_c": 40, "load_c": 60, "tau_ms": 250, "mem_per_proc_mib": 1000, "state": "thermal.json"}
	}
	dir := t.TempDir()
	smiDir := filepath.Join(dir, "bin")
	os.Mkdir(smiDir, 0o755)
	// A hard link, not a copy: the fake reads fakesmi.json beside itself,
	// and an executable written while a parallel test forks can fail to
	// exec with "text file busy".
	if err := os.Link(bins.fakeSMI, filepath.Join(smiDir, "nvidia-smi")); err != nil {
		t.Fatal(err)
	}
	data, _ := json.Marshal(map[string]any{"compute_apps": "compute.txt", "live_only": true, "thermal": thermal})
	if err := os.WriteFile(filepath.Join(smiDir, "fakesmi.json"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	boot := filepath.Join(dir, "boot_id")
	os.WriteFile(boot, []byte(bootID+"\n"), 0o644)
	w := &gridWorld{t: t, dir: dir, smiDir: smiDir, server: server, bench: bench, port: freePort(t)}
	w.env = []string{"CLOCKGATE_BOOT_ID_FILE=" + boot, "PATH=" + smiDir + ":" + os.Getenv("PATH"), grid.TimingEnv + "=" + gridTimingFast,
		// The fake's time to answer on a loaded test machine is not a
		// GPU's: the sampler's interval check is given 1 ns for it.
		"CLOCKGATE_TEST_PROBE_LATENCY=1ns"}
	// CUDA_VISIBLE_DEVICES and CUDA_DEVICE_ORDER choose the GPUs: a test
	// sets them when it means to, never the box it runs on.
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		switch k {
		case "PATH", "CLOCKGATE_BOOT_ID_FILE", "CLOCKGATE_TEST_PROBE_LATENCY", grid.TimingEnv, sampler.EnvCUDAVisibleDevices, sampler.EnvCUDADeviceOrder:
			continue
		}
		w.env = append(w.env, kv)
	}
	w.pids = filepath.Join(w.dir, "pids.txt")
	w.benchDur = "1s"
	w.planDir = filepath.Join(w.dir, "plan")
	os.Mkdir(w.planDir, 0o755)
	return w
}

// plan writes plan.toml: two engines a and b, each the fake server with
// the extra arguments given, and returns its path.
func (w *gridWorld) plan(repeats int, serveA, serveB, benchExtra string, extra string) string {
	w.t.Helper()
	serve := func(more string) string {
		args := []string{strconv.Quote(w.server), `"-port"`, `"{port}"`, `"-pids"`, strconv.Quote(w.pids), `"-compute"`, strconv.Quote(filepath.Join(w.smiDir, "compute.txt"))}
		if more != "" {
			args = append(args, more)
		}
		return "[" + strings.Join(args, ", ") + "]"
	}
	bench := []string{strconv.Quote(w.bench), `"-url"`, `"{base_url}"`, `"-concurrency"`, `"{concurrency}"`, `"-rate"`, `"{rate}"`, `"-out"`, `"{result_dir}/{result_name}"`, `"-duration"`, strconv.Quote(w.benchDur)}
	if benchExtra != "" {
		bench = append(bench, benchExtra)
	}
	text := fmt.Sprintf(`tree = "tree"
model = "org/tiny"
gpus = "0"
port = %d
repeats = %d
allow_underpowered = true
order = "abba"
interval = "250ms"
%s
[[engine]]
name = "a"
serve = %s
ready = { path = "/health", timeout = "20s" }

[[engine]]
name = "b"
serve = %s
ready = { path = "/health", timeout = "20s" }

[bench]
points = ["1/inf", "2/inf", "4/inf"]
command = [%s]

[cooldown]
above_idle_c = 2.0
max_slope_c_per_min = 60
max_wait = "20s"
`, w.port, repeats, extra, serve(serveA), serve(serveB), strings.Join(bench, ", "))
	path := filepath.Join(w.planDir, "plan.toml")
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		w.t.Fatal(err)
	}
	return path
}

func (w *gridWorld) tree() string { return filepath.Join(w.planDir, "tree") }

// proc is a clockgate process under test, in a process group of its own
// with everything it starts; cleanup kills that whole group.
type proc struct {
	cmd    *exec.Cmd
	stdout bytes.Buffer
	stderr syncBuffer
	done   chan struct{}
}

// syncBuffer is a buffer a test may read while the process writes it.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// waitFor waits, up to d, until cond holds; it fails the test when the
// process exits first or the wait runs out.
func (p *proc) waitFor(t *testing.T, d time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		select {
		case <-p.done:
			t.Fatalf("exited before %s\n%s", what, p.stderr.String())
		case <-time.After(20 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("no %s within %v\n%s", what, d, p.stderr.String())
		}
	}
}

// start runs clockgate grid in a process of its own.
func (w *gridWorld) start(args ...string) *proc {
	w.t.Helper()
	p := &proc{cmd: exec.Command(bins.clockgate, append([]string{"grid", "--backend", "nvidia-smi"}, args...)...), done: make(chan struct{})}
	p.cmd.Env = w.env
	p.cmd.Stdout, p.cmd.Stderr = &p.stdout, &p.stderr
	p.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	p.cmd.WaitDelay = 2 * time.Second
	if err := p.cmd.Start(); err != nil {
		w.t.Fatal(err)
	}
	go func() {
		p.cmd.Wait()
		close(p.done)
	}()
	w.t.Cleanup(func() {
		syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
		<-p.done
	})
	return p
}

// waitLong waits up to d for the process and returns its exit code.
func (p *proc) waitLong(t *testing.T, d time.Duration) int {
	t.Helper()
	select {
	case <-p.done:
	case <-time.After(d):
		t.Fatalf("still running after %v\nstderr:\n%s", d, p.stderr.String())
	}
	return p.cmd.ProcessState.ExitCode()
}

// journal reads the grid's journal.
func (w *gridWorld) journal() []grid.Event {
	w.t.Helper()
	ev, _, err := grid.ReadJournal(filepath.Join(w.tree(), grid.JournalRel))
	if err != nil {
		w.t.Fatal(err)
	}
	return ev
}

// noneAlive checks that every process the fake servers started is gone.
func (w *gridWorld) noneAlive() {
	w.t.Helper()
	data, err := os.ReadFile(w.pids)
	if err != nil {
		w.t.Fatalf("no pids file: %v", err)
	}
	n := 0
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		f := strings.Fields(line)
		pid, _ := strconv.Atoi(f[len(f)-1])
		n++
		if st, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid)); err == nil {
			s := string(st)
			state := s[strings.LastIndexByte(s, ')')+2]
			w.t.Errorf("%s is still there (state %c)", line, state)
			syscall.Kill(pid, syscall.SIGKILL)
		}
	}
	if n == 0 {
		w.t.Error("the pids file lists no process")
	}
}

func events(ev []grid.Event, kind string) []grid.Event {
	var out []grid.Event
	for _, e := range ev {
		if e.Event == kind {
			out = append(out, e)
		}
	}
	return out
}

// TestGridAA: the same fake engine under two names, two legs each, in
// ABBA order, nothing left running, and the comparison ESTABLISHED with no
// foreign process: the server's workers, the one that escaped its tree
// included, are the leg's own.
func TestGridAA(t *testing.T) {
	w := newGridWorld(t, nil)
	w.benchDur = "3s"
	plan := w.plan(2, "", "", "", "")
	p := w.start(plan)
	if code := p.waitLong(t, 240*time.Second); code != 0 {
		t.Fatalf("exit %d\nstderr:\n%s", code, p.stderr.String())
	}
	w.noneAlive()
	ev := w.journal()
	var order []string
	for _, e := range events(ev, grid.EvLegCommit) {
		order = append(order, fmt.Sprintf("%s/r%d", e.Engine, e.N))
		if len(e.Files) != 8 { // 3 bench points, memory, record, stream, marks, host stream
			t.Errorf("%s/r%d commits %d files: %v", e.Engine, e.N, len(e.Files), e.Files)
		}
	}
	if got := strings.Join(order, " "); got != "a/r1 b/r1 b/r2 a/r2" {
		t.Errorf("committed in order %s", got)
	}
	if n := len(events(ev, grid.EvLegFail)); n != 0 {
		t.Errorf("%d failed legs:\n%s", n, p.stderr.String())
	}
	if ev[len(ev)-1].Event != grid.EvGridEnd || ev[len(ev)-1].Status != "done" {
		t.Errorf("last event %+v", ev[len(ev)-1])
	}
	// Every leg's own processes include the escaped worker; none foreign.
	recs, _ := filepath.Glob(filepath.Join(w.tree(), "clocks", "org--tiny", "*", "r*.summary.json"))
	if len(recs) != 4 {
		t.Fatalf("records %v", recs)
	}
	for _, r := range recs {
		data, _ := os.ReadFile(r)
		var rec struct {
			CP *struct {
				First []struct {
					PID  int    `json:"pid"`
					Proc string `json:"proc"`
				} `json:"first"`
			} `json:"compute_processes"`
		}
		json.Unmarshal(data, &rec)
		if rec.CP == nil || len(rec.CP.First) != 3 {
			t.Errorf("%s: compute processes %s", r, data)
			continue
		}
		for _, cp := range rec.CP.First {
			if cp.Proc != "own" {
				t.Errorf("%s: %d is %s", r, cp.PID, cp.Proc)
			}
		}
	}
	sum, err := os.ReadFile(filepath.Join(w.tree(), "grid", "summary", "summary.json"))
	if err != nil {
		t.Fatal(err)
	}
	var s struct {
		GatePass    bool `json:"gate_pass"`
		Comparisons []struct {
			Throughput struct {
				BindingEligible bool `json:"binding_eligible"`
			} `json:"throughput"`
			Memory struct {
				BindingEligible bool `json:"binding_eligible"`
			} `json:"memory"`
		} `json:"comparisons"`
		Grid *struct {
			Order string `json:"order"`
			Legs  []struct {
				Engine     string    `json:"engine"`
				StartTempC []float64 `json:"start_temp_c"`
			} `json:"legs"`
		} `json:"grid"`
	}
	if err := json.Unmarshal(sum, &s); err != nil {
		t.Fatal(err)
	}
	if !s.GatePass || len(s.Comparisons) != 1 || !s.Comparisons[0].Throughput.BindingEligible || !s.Comparisons[0].Memory.BindingEligible {
		t.Errorf("not ESTABLISHED:\n%s", sum)
	}
	if bytes.Contains(sum, []byte("clock.foreign_process")) {
		t.Error("clock.foreign_process in the summary")
	}
	if s.Grid == nil || s.Grid.Order != "abba" || len(s.Grid.Legs) != 4 || len(s.Grid.Legs[0].StartTempC) != 1 {
		t.Errorf("grid block: %+v", s.Grid)
	}
	if !strings.Contains(p.stdout.String(), "a/r1") || !strings.Contains(p.stdout.String(), "clock verdict") {
		t.Errorf("verdict table:\n%s", p.stdout.String())
	}
}

// TestGridDryRun prints the ABBA order with every argv, and runs nothing.
func TestGridDryRun(t *testing.T) {
	w := newGridWorldWith(t, nil, "/opt/fake/server", "/opt/fake/bench")
	plan := w.plan(4, "", "", "", "")
	p := w.start("--dry-run", plan)
	if code := p.waitLong(t, 30*time.Second); code != 0 {
		t.Fatalf("exit %d: %s", code, p.stderr.String())
	}
	out := p.stdout.String()
	var legs []string
	for _, line := range strings.Split(out, "\n") {
		if strings.HasPrefix(line, "leg ") {
			f := strings.Fields(line)
			legs = append(legs, f[4])
		}
	}
	if got := strings.Join(legs, " "); got != "a/r1 b/r1 b/r2 a/r2 a/r3 b/r3 b/r4 a/r4" {
		t.Errorf("order %s\n%s", got, out)
	}
	want := fmt.Sprintf("  point 4/inf: %s -url http://127.0.0.1:%d -concurrency 4 -rate inf -out %s -duration 1s",
		w.bench, w.port, filepath.Join(w.tree(), "grid", "staging", "b-r2", "bench", "org--tiny", "b", "r2", "c4-rinf.json"))
	if !strings.Contains(out, want) {
		t.Errorf("no line %q in\n%s", want, out)
	}
	if _, err := os.Stat(w.tree()); err == nil {
		t.Error("a dry run created the tree")
	}
}

// TestGridPlanRefusal: a plan refusal is exit 2 naming plan.toml:LINE.
func TestGridPlanRefusal(t *testing.T) {
	w := newGridWorldWith(t, nil, "/opt/fake/server", "/opt/fake/bench")
	plan := w.plan(2, "", "", "", "")
	data, _ := os.ReadFile(plan)
	os.WriteFile(plan, bytes.Replace(data, []byte(`name = "b"`), []byte("name = \"b\"\nenv = { HIP_VISIBLE_DEVICES = \"1\" }"), 1), 0o644)
	p := w.start(plan)
	if code := p.waitLong(t, 30*time.Second); code != 2 || !strings.Contains(p.stderr.String(), "plan.toml:17:9: env sets HIP_VISIBLE_DEVICES, a device selector") {
		t.Fatalf("exit %d: %s", code, p.stderr.String())
	}
}

// TestGridCooldownTimeout: a GPU that stays hot stops the grid at the
// idle gate (exit 1, naming GPU, temperature, target and wait); no server
// is started. The fake GPU holds its state from the start: 40 °C until
// the grid's journal holds its first line (grid.start, written after the
// idle read and before the first leg's gate), 80 °C from then on, so the
// gate reads it hot whatever the machine's load.
func TestGridCooldownTimeout(t *testing.T) {
	w := newGridWorld(t, map[string]any{"idle_c": 40, "load_c": 60, "tau_ms": 1500, "mem_per_proc_mib": 1000, "state": "thermal.json",
		"hot_when": filepath.Join("..", "plan", "tree", filepath.FromSlash(grid.JournalRel)), "hot_c": 80})
	plan := w.plan(2, "", "", "", "")
	data, _ := os.ReadFile(plan)
	os.WriteFile(plan, bytes.Replace(data, []byte(`max_wait = "20s"`), []byte(`max_wait = "1500ms"`), 1), 0o644)
	p := w.start(plan)
	code := p.waitLong(t, 60*time.Second)
	stderr := p.stderr.String()
	if code != 1 || !strings.Contains(stderr, "idle gate: not cool within max_wait 1.5s: GPU 0 at 80.0 °C, above the target 42.0 °C (idle 40.0 + 2.0)") {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if _, err := os.Stat(w.pids); err == nil {
		t.Error("a server was started")
	}
	ev := w.journal()
	if len(events(ev, grid.EvServerStart)) != 0 || len(events(ev, grid.EvLegFail)) != 1 || events(ev, grid.EvLegFail)[0].Phase != grid.PhaseIdle {
		t.Errorf("journal %+v", ev)
	}
	// Run again with a value changed: refused (exit 2), naming the key,
	// the value the grid started with and the new one.
	data, _ = os.ReadFile(plan)
	os.WriteFile(plan, bytes.Replace(data, []byte(`interval = "250ms"`), []byte(`interval = "500ms"`), 1), 0o644)
	p = w.start(plan)
	code = p.waitLong(t, 60*time.Second)
	want := `this grid cannot be resumed: changed since it started: the plan (interval: "250ms", now "500ms"; it started with ` +
		filepath.Join(w.tree(), "grid", "plan.toml") + ")"
	if code != 2 || !strings.Contains(p.stderr.String(), want) {
		t.Fatalf("exit %d, want 2 and %q:\n%s", code, want, p.stderr.String())
	}
}

// TestGridFailingBench: a bench that fails at one point fails the leg, the
// retry fails too, the grid stops (exit 1) with both attempts in the
// journal, and nothing is left running, also of a server that ignores
// SIGTERM.
func TestGridFailingBench(t *testing.T) {
	w := newGridWorld(t, nil)
	fail := filepath.Join(w.dir, "fail")
	os.WriteFile(fail, nil, 0o644)
	plan := w.plan(2, `"-mode", "ignore-term"`, "", `"-fail-file", `+strconv.Quote(fail), "")
	p := w.start(plan)
	code := p.waitLong(t, 90*time.Second)
	stderr := p.stderr.String()
	if code != 1 || !strings.Contains(stderr, "the grid stopped at a/r1 (slot 1 of 4) in bench: point 1/inf: "+w.bench+" exited 4") {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	w.noneAlive()
	ev := w.journal()
	fails := events(ev, grid.EvLegFail)
	if len(fails) != 2 || fails[0].Attempt != 1 || fails[1].Attempt != 2 || fails[1].Phase != grid.PhaseBench {
		t.Errorf("fails %+v", fails)
	}
	stops := events(ev, grid.EvServerStop)
	if len(stops) != 2 || len(stops[0].Killed) == 0 {
		t.Errorf("stops %+v", stops)
	}
	if ents, _ := os.ReadDir(filepath.Join(w.tree(), "grid", "failed")); len(ents) != 2 {
		t.Errorf("failed/ holds %d entries", len(ents))
	}
	if _, err := os.Stat(filepath.Join(w.tree(), "bench")); err == nil {
		t.Error("a failed leg was committed")
	}
}

// TestGridInterruptResume: SIGINT in the second leg stops it (exit 130),
// its staging kept in grid/failed/; the same command again runs the rest,
// the committed leg kept byte for byte and the interrupted one run again
// as b/r1. The first server of b crashes once: its retry is journaled.
func TestGridInterruptResume(t *testing.T) {
	w := newGridWorld(t, nil)
	state := filepath.Join(w.dir, "crashed")
	plan := w.plan(2, "", `"-mode", "crash-once", "-state", `+strconv.Quote(state), "", "")
	p := w.start(plan)
	deadline := time.Now().Add(90 * time.Second)
	for {
		ev, _, _ := grid.ReadJournal(filepath.Join(w.tree(), grid.JournalRel))
		if n := len(events(ev, grid.EvServerReady)); n >= 2 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no second leg ready\n%s", p.stderr.String())
		}
		select {
		case <-p.done:
			t.Fatalf("exited early\n%s", p.stderr.String())
		case <-time.After(50 * time.Millisecond):
		}
	}
	time.Sleep(500 * time.Millisecond)
	p.cmd.Process.Signal(syscall.SIGINT)
	if code := p.waitLong(t, 60*time.Second); code != 130 {
		t.Fatalf("exit %d\n%s", code, p.stderr.String())
	}
	w.noneAlive()
	ev := w.journal()
	fails := events(ev, grid.EvLegFail)
	if len(fails) != 2 || fails[0].Phase != grid.PhaseReady || !strings.Contains(fails[0].Cause, "fakeserver: loading line 25") ||
		strings.Contains(fails[0].Cause, "loading line 5\n") || !strings.Contains(fails[1].Cause, "interrupted by SIGINT") {
		t.Fatalf("fails %+v", fails)
	}
	if last := ev[len(ev)-1]; last.Status != "interrupted" || last.Signal != "SIGINT" {
		t.Errorf("last %+v", last)
	}
	committed := snapshotTree(t, w.tree())
	if len(committed) != 8 { // one leg: 3 bench points, memory, record, stream, marks, host stream
		t.Fatalf("after the interrupt the tree holds %v", committed)
	}
	// The grid keeps the plan it started with; a comment and a layout
	// changed since still resume (the plan is compared as parsed).
	original, _ := os.ReadFile(plan)
	keptPath := filepath.Join(w.tree(), filepath.FromSlash(grid.KeptPlanRel))
	if kept, err := os.ReadFile(keptPath); err != nil || !bytes.Equal(kept, original) {
		t.Fatalf("%s is not the plan the grid started with: %v\n%s", keptPath, err, kept)
	}
	relaid := append([]byte("# resumed after an interrupt\n"), bytes.Replace(original, []byte("repeats = 2"), []byte("repeats   =   2   # two legs each"), 1)...)
	os.WriteFile(plan, relaid, 0o644)

	p = w.start(plan)
	if code := p.waitLong(t, 120*time.Second); code != 0 {
		t.Fatalf("resume: exit %d\n%s", code, p.stderr.String())
	}
	w.noneAlive()
	after := snapshotTree(t, w.tree())
	for path, data := range committed {
		if after[path] != data {
			t.Errorf("%s changed on resume", path)
		}
	}
	if len(after) != 32 { // 4 legs of 8 files
		t.Errorf("after the resume the tree holds %d files", len(after))
	}
	if kept, _ := os.ReadFile(keptPath); !bytes.Equal(kept, original) {
		t.Errorf("the resume replaced %s", keptPath)
	}
	ev = w.journal()
	var order []string
	for _, e := range events(ev, grid.EvLegCommit) {
		order = append(order, fmt.Sprintf("%s/r%d", e.Engine, e.N))
	}
	if got := strings.Join(order, " "); got != "a/r1 b/r1 b/r2 a/r2" {
		t.Errorf("committed %s", got)
	}
	if ents, _ := os.ReadDir(filepath.Join(w.tree(), "grid", "failed")); len(ents) != 1 {
		t.Errorf("failed/ holds %d entries", len(ents))
	}
	sum, _ := os.ReadFile(filepath.Join(w.tree(), "grid", "summary", "summary.json"))
	if !bytes.Contains(sum, []byte(`"attempts": 3`)) && !bytes.Contains(sum, []byte(`"attempts":3`)) {
		t.Errorf("b/r1's attempts not in the grid block:\n%s", sum)
	}
}

// stranger listens on the world's port from the test process, answering
// 200 to every request, and counts the requests other than path.
func (w *gridWorld) stranger(probe string) *atomic.Int64 {
	w.t.Helper()
	l, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", w.port))
	if err != nil {
		w.t.Fatal(err)
	}
	var others atomic.Int64
	srv := &http.Server{Handler: http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		if r.URL.Path != probe {
			others.Add(1)
		}
		rw.WriteHeader(http.StatusOK)
	})}
	go srv.Serve(l)
	w.t.Cleanup(func() { srv.Close() })
	return &others
}

// selfName is how clockgate names the test process: "pid N (comm)".
func selfName(t *testing.T) string {
	comm, err := os.ReadFile("/proc/self/comm")
	if err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf("pid %d (%s)", os.Getpid(), strings.TrimSpace(string(comm)))
}

// TestGridReadyStranger: the leg's server dies at bind because another
// process took its port after the pre-check, and that process answers the
// readiness probe with 200. The leg fails naming it, never ready, and no
// warmup or point runs against it. The fake server binds only once the
// test holds the port (its -state file), and the test takes the port only
// once the server has started: no race with the grid's timing.
func TestGridReadyStranger(t *testing.T) {
	w := newGridWorld(t, nil)
	bindNow := filepath.Join(w.dir, "bind-now")
	plan := w.plan(2, `"-mode", "bind-late", "-state", `+strconv.Quote(bindNow), "", "", "")
	data, _ := os.ReadFile(plan)
	data = bytes.Replace(data, []byte("points = ["), []byte("warmup = \"1/inf\"\npoints = ["), 1)
	data = bytes.ReplaceAll(data, []byte(`path = "/health"`), []byte(`path = "/v1/ready"`))
	os.WriteFile(plan, data, 0o644)
	p := w.start(plan)
	p.waitFor(t, 60*time.Second, "server started", func() bool {
		b, _ := os.ReadFile(w.pids)
		return bytes.HasPrefix(b, []byte("server "))
	})
	others := w.stranger("/v1/ready")
	os.WriteFile(bindNow, nil, 0o644)
	code := p.waitLong(t, 90*time.Second)
	stderr := p.stderr.String()
	want := fmt.Sprintf("port %d answered by %s, not this leg's server", w.port, selfName(t))
	if code != 1 || !strings.Contains(stderr, want) {
		t.Fatalf("exit %d, want 1 and %q:\n%s", code, want, stderr)
	}
	ev := w.journal()
	if n := len(events(ev, grid.EvServerReady)); n != 0 {
		t.Errorf("%d server.ready events", n)
	}
	fails := events(ev, grid.EvLegFail)
	if len(fails) == 0 || !strings.Contains(fails[0].Cause, want) {
		t.Errorf("leg.fail %+v", fails)
	}
	if n := others.Load(); n != 0 {
		t.Errorf("the stranger served %d requests other than the readiness probe (a warmup or a point ran against it)", n)
	}
	if !strings.Contains(stderr, "address already in use") {
		t.Errorf("the server's bind failure is not quoted:\n%s", stderr)
	}
}

// TestGridPrecheckAgain: the port is taken while the idle gate waits,
// after the leg's pre-check passed; the pre-check looks again right before
// the server starts, so the grid stops there (exit 1, naming the holder)
// and no server is started. The fake GPU is hot from the grid's first
// journal line until the test has taken the port (its cool file), so the
// port is taken while the gate waits, whatever the machine's load.
func TestGridPrecheckAgain(t *testing.T) {
	cool := "cool"
	w := newGridWorld(t, map[string]any{"idle_c": 40, "load_c": 60, "tau_ms": 250, "mem_per_proc_mib": 1000, "state": "thermal.json",
		"hot_when": filepath.Join("..", "plan", "tree", filepath.FromSlash(grid.JournalRel)), "hot_c": 80, "cool_when": cool})
	plan := w.plan(2, "", "", "", "")
	p := w.start(plan)
	p.waitFor(t, 60*time.Second, "the idle gate waiting", func() bool { return strings.Contains(p.stderr.String(), ": cooling: ") })
	w.stranger("/health")
	os.WriteFile(filepath.Join(w.smiDir, cool), nil, 0o644)
	code := p.waitLong(t, 60*time.Second)
	stderr := p.stderr.String()
	want := fmt.Sprintf("in precheck: pre-check, again right before the server starts: the GPUs or the port are in use: port %d is taken by %s", w.port, selfName(t))
	if code != 1 || !strings.Contains(stderr, want) {
		t.Fatalf("exit %d, want 1 and %q:\n%s", code, want, stderr)
	}
	if _, err := os.Stat(w.pids); err == nil {
		t.Error("a server was started")
	}
	ev := w.journal()
	fails := events(ev, grid.EvLegFail)
	if len(events(ev, grid.EvServerStart)) != 0 || len(events(ev, grid.EvLegIdle)) != 1 || len(fails) != 1 || fails[0].Phase != grid.PhasePrecheck {
		t.Errorf("journal %+v", ev)
	}
}

// snapshotTree reads every evidence file of the tree (bench, memory,
// clocks) by path.
func snapshotTree(t *testing.T, tree string) map[string]string {
	out := map[string]string{}
	for _, sub := range []string{"bench", "memory", "clocks"} {
		filepath.Walk(filepath.Join(tree, sub), func(p string, fi os.FileInfo, err error) error {
			if err == nil && fi.Mode().IsRegular() {
				data, _ := os.ReadFile(p)
				out[p] = string(data)
			}
			return nil
		})
	}
	return out
}

// TestGridAIPerf: a grid whose [bench] format is "aiperf" runs on the
// fakes: {result_dir} is each point's artifact directory, the result is
// read by AIPerf's reader before the leg commits, and summarize reads the
// committed directories and names the client.
func TestGridAIPerf(t *testing.T) {
	w := newGridWorld(t, nil)
	w.benchDur = "2s"
	plan := w.plan(2, "", "", `"-aiperf"`, "")
	data, err := os.ReadFile(plan)
	if err != nil {
		t.Fatal(err)
	}
	text := strings.Replace(string(data), `"{result_dir}/{result_name}"`, `"{result_dir}"`, 1)
	text = strings.Replace(text, "[bench]\n", "[bench]\nformat = \"aiperf\"\n", 1)
	if err := os.WriteFile(plan, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	p := w.start(plan)
	if code := p.waitLong(t, 240*time.Second); code != 0 {
		t.Fatalf("exit %d\nstderr:\n%s", code, p.stderr.String())
	}
	w.noneAlive()
	if n := len(events(w.journal(), grid.EvLegFail)); n != 0 {
		t.Fatalf("%d failed legs:\n%s", n, p.stderr.String())
	}
	dirs, _ := filepath.Glob(filepath.Join(w.tree(), "bench", "org--tiny", "*", "r*", "*", "profile_export_aiperf.json"))
	if len(dirs) != 12 {
		t.Errorf("artifact directories %v, want 3 points × 2 engines × 2 legs", dirs)
	}
	sum, err := os.ReadFile(filepath.Join(w.tree(), "grid", "summary", "summary.json"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(sum, []byte(`"bench_clients": {`)) || !bytes.Contains(sum, []byte(`"baseline": "aiperf"`)) || bytes.Contains(sum, []byte("bench.invalid")) {
		t.Errorf("summary.json does not read the AIPerf legs:\n%s", sum)
	}
}
