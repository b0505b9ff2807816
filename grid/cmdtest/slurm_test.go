//go:build linux

package cmdtest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/clockgate/clockgate/grid"
	"github.com/clockgate/clockgate/internal/slurmtest"
)

// alloc is an allocation of the cluster the test holds: salloc --no-shell,
// cancelled when the test ends.
type alloc struct {
	id, nodeList string
}

// allocate takes an allocation of n nodes (optionally named) with salloc.
func allocate(t *testing.T, c *slurmtest.Cluster, n int, nodelist string) alloc {
	t.Helper()
	args := []string{"-N", strconv.Itoa(n), "--no-shell", "--job-name=cg-grid-" + t.Name()}
	if nodelist != "" {
		args = append(args, "--nodelist="+nodelist)
	}
	out, err := c.Command("salloc", args...).CombinedOutput()
	m := regexp.MustCompile(`Granted job allocation (\d+)`).FindSubmatch(out)
	if err != nil || m == nil {
		t.Fatalf("salloc %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	a := alloc{id: string(m[1])}
	t.Cleanup(func() { c.Command("scancel", a.id).Run() })
	a.nodeList = strings.TrimSpace(c.Run(t, "squeue", "-h", "-j", a.id, "-o", "%N"))
	return a
}

// slurmWorld is gridWorld on the cluster: one fake GPU per node (each its
// own compute_apps file, thermal state and UUID), the fake servers told
// their node.
func newSlurmWorld(t *testing.T, c *slurmtest.Cluster, a alloc) *gridWorld {
	t.Helper()
	w := newGridWorld(t, nil)
	for _, n := range slurmtest.Nodes {
		data, _ := json.Marshal(map[string]any{"compute_apps": "compute." + n + ".txt"})
		if err := os.WriteFile(filepath.Join(w.smiDir, "fakesmi."+n+".json"), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	env := w.env[:0:0]
	for _, kv := range w.env {
		k, _, _ := strings.Cut(kv, "=")
		switch k {
		case "CLOCKGATE_BOOT_ID_FILE", "SLURM_JOB_ID", "SLURM_JOBID", "SLURM_JOB_NODELIST", "SLURM_CONF", grid.TimingEnv:
			continue
		}
		env = append(env, kv)
	}
	// srun and squeue take a moment on a loaded machine: a longer grace.
	w.env = append(env, "SLURM_CONF="+c.Conf, grid.TimingEnv+"=idle=1s,slope=1s,poll=200ms,ready=100ms,grace=3s,wait=20s")
	if a.id != "" {
		w.env = append(w.env, "SLURM_JOB_ID="+a.id, "SLURM_JOB_NODELIST="+a.nodeList)
	}
	return w
}

// slurmPlan writes a disaggregated plan: two engines a and b, each with
// prefill on one node (the fake server on the port) and decode on two
// (the fake server serving nothing), on [slurm] nodes = 3.
func (w *gridWorld) slurmPlan(repeats int, prefillExtra string) string {
	w.t.Helper()
	serve := func(role, extra string) string {
		args := []string{strconv.Quote(w.server), `"-node"`, `"{node}"`, `"-no-escape"`, `"-pids"`, strconv.Quote(w.pids),
			`"-compute"`, strconv.Quote(filepath.Join(w.smiDir, "compute.{node}.txt"))}
		if role == "prefill" {
			args = append(args, `"-port"`, `"{port}"`)
		} else {
			args = append(args, `"-no-listen"`)
		}
		if extra != "" {
			args = append(args, extra)
		}
		return "[" + strings.Join(args, ", ") + "]"
	}
	bench := []string{strconv.Quote(w.bench), `"-url"`, `"http://127.0.0.1:{port}"`, `"-concurrency"`, `"{concurrency}"`, `"-rate"`, `"{rate}"`,
		`"-out"`, `"{result_dir}/{result_name}"`, `"-duration"`, strconv.Quote(w.benchDur)}
	engine := func(name string) string {
		return fmt.Sprintf(`[[engine]]
name = %q
[[engine.role]]
name = "prefill"
nodes = 1
serve = %s
ready = { url = "http://127.0.0.1:{port}/health", timeout = "30s" }
[[engine.role]]
name = "decode"
nodes = 2
serve = %s
`, name, serve("prefill", prefillExtra), serve("decode", ""))
	}
	text := fmt.Sprintf(`tree = "tree"
model = "org/tiny"
gpus = "0"
port = %d
repeats = %d
allow_underpowered = true
order = "abba"
interval = "100ms"

[slurm]
nodes = 3
skew_bound = "100ms"

%s
%s
[bench]
points = ["1/inf", "2/inf"]
command = [%s]

[cooldown]
above_idle_c = 2.0
max_slope_c_per_min = 60
max_wait = "30s"
`, w.port, repeats, engine("a"), engine("b"), strings.Join(bench, ", "))
	path := filepath.Join(w.planDir, "plan.toml")
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		w.t.Fatal(err)
	}
	return path
}

// noSteps checks that squeue --steps lists no step of the allocation.
func noSteps(t *testing.T, c *slurmtest.Cluster, a alloc) {
	t.Helper()
	if out := strings.TrimSpace(c.Run(t, "squeue", "--steps", "-h", "-j", a.id, "-o", "%i %j")); out != "" {
		t.Errorf("squeue --steps lists steps after the grid:\n%s", out)
	}
}

// assertJudged checks the grid's summary is ESTABLISHED: the multi-host
// legs judged (SPEC §12.3) and the gate passed.
func assertJudged(t *testing.T, tree string) {
	t.Helper()
	sum, err := os.ReadFile(filepath.Join(tree, "grid", "summary", "summary.json"))
	if err != nil {
		t.Fatal(err)
	}
	var s struct {
		GatePass bool `json:"gate_pass"`
	}
	if err := json.Unmarshal(sum, &s); err != nil || !s.GatePass {
		t.Errorf("not ESTABLISHED (%v):\n%s", err, sum)
	}
}

// noneLeft checks, within d, that every process the fake servers started
// is gone: a worker killed on a node is its slurmstepd's to reap, which
// it does a moment after the step has left squeue.
func (w *gridWorld) noneLeft(d time.Duration) {
	w.t.Helper()
	deadline := time.Now().Add(d)
	for {
		data, err := os.ReadFile(w.pids)
		if err != nil {
			w.t.Fatalf("no pids file: %v", err)
		}
		var left []string
		for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
			f := strings.Fields(line)
			if _, err := os.Stat(fmt.Sprintf("/proc/%s", f[len(f)-1])); err == nil {
				left = append(left, line)
			}
		}
		if len(left) == 0 {
			return
		}
		if time.Now().After(deadline) {
			w.t.Errorf("still there %v after the grid: %s", d, strings.Join(left, "; "))
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// TestGridSlurmAA: an A/A grid of 4 legs per engine, ABBA, each leg
// prefill on node1 and decode on node2 and node3, run inside an
// allocation: every leg's directory holds every node's records, the
// journal the allocation and each server step, nothing is left running
// (no fake process, no step).
func TestGridSlurmAA(t *testing.T) {
	c := slurmtest.Need(t)
	a := allocate(t, c, 3, "")
	w := newSlurmWorld(t, c, a)
	// Two points of 2 s a leg at the plan's 100 ms: 40 busy samples, over
	// the judge's floor of 30.
	w.benchDur = "2s"
	plan := w.slurmPlan(4, "")
	p := w.start(plan)
	if code := p.waitLong(t, 480*time.Second); code != 0 {
		t.Fatalf("exit %d\nstderr:\n%s", code, p.stderr.String())
	}
	w.noneLeft(10 * time.Second)
	noSteps(t, c, a)
	ev := w.journal()
	if st := ev[0]; st.SlurmJobID != a.id || strings.Join(st.Nodes, ",") != "node1,node2,node3" {
		t.Errorf("grid.start: job %q nodes %v", st.SlurmJobID, st.Nodes)
	}
	var order []string
	for _, e := range events(ev, grid.EvLegCommit) {
		order = append(order, fmt.Sprintf("%s/r%d", e.Engine, e.N))
		base := fmt.Sprintf("clocks/org--tiny/%s/r%d/", e.Engine, e.N)
		for _, f := range []string{"leg.json", "points.jsonl", "hosts/node1.summary.json", "hosts/node2.summary.json", "hosts/node3.summary.json",
			"hosts/node1.samples.jsonl", "hosts/node3.memory.json"} {
			if _, ok := e.Files[base+f]; !ok {
				t.Errorf("%s/r%d commits no %s%s: %v", e.Engine, e.N, base, f, e.Files)
			}
		}
		// The leg's verdict is clockgate check's on its directory.
		if e.Verdict != "ok" {
			t.Errorf("%s/r%d: verdict %q, want ok", e.Engine, e.N, e.Verdict)
		}
		if _, ok := e.Files[fmt.Sprintf("memory/org--tiny/%s/r%d.summary.json", e.Engine, e.N)]; !ok {
			t.Errorf("%s/r%d commits no memory record", e.Engine, e.N)
		}
	}
	if got := strings.Join(order, " "); got != "a/r1 b/r1 b/r2 a/r2 a/r3 b/r3 b/r4 a/r4" {
		t.Errorf("committed in order %s", got)
	}
	for _, e := range events(ev, grid.EvServerStart) {
		if len(e.Steps) != 2 || !strings.HasPrefix(e.Steps[0], a.id+".") {
			t.Errorf("server.start steps %v, want the two roles' steps of job %s", e.Steps, a.id)
		}
	}
	if n := len(events(ev, grid.EvLegFail)); n != 0 {
		t.Errorf("%d failed legs:\n%s", n, p.stderr.String())
	}
	// Each node's record names its server's processes as the leg's own
	// (the sampler's task found them by the leg's marker): none foreign.
	recs, _ := filepath.Glob(filepath.Join(w.tree(), "clocks", "org--tiny", "*", "r*", "hosts", "node*.summary.json"))
	if len(recs) != 24 {
		t.Errorf("%d node records, want 8 legs × 3 nodes", len(recs))
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
		if rec.CP == nil || len(rec.CP.First) == 0 {
			t.Errorf("%s: compute processes %s", r, data)
			continue
		}
		for _, cp := range rec.CP.First {
			if cp.Proc != "own" {
				t.Errorf("%s: %d is %s", r, cp.PID, cp.Proc)
			}
		}
	}
	// The prefill role ran on node1, decode on node2 and node3: each
	// node's fake GPU listed its own server's processes.
	for _, n := range slurmtest.Nodes {
		if data, err := os.ReadFile(filepath.Join(w.smiDir, "compute."+n+".txt")); err != nil || !bytes.Contains(data, []byte("fakeserver-server")) {
			t.Errorf("node %s's GPU never held a server: %v %s", n, err, data)
		}
	}
	assertJudged(t, w.tree())
}

// TestGridSlurmRefusals: a [slurm] plan outside an allocation is refused
// naming SLURM_JOB_ID; inside an allocation of two nodes, a plan whose
// roles need three is refused before anything runs (no tree, no step).
func TestGridSlurmRefusals(t *testing.T) {
	c := slurmtest.Need(t)
	w := newSlurmWorld(t, c, alloc{})
	plan := w.slurmPlan(4, "")
	p := w.start(plan)
	if code := p.waitLong(t, 60*time.Second); code != 2 || !strings.Contains(p.stderr.String(), "plan.toml has [slurm] and SLURM_JOB_ID is not set: this is not inside a Slurm allocation") {
		t.Fatalf("outside: exit %d\n%s", code, p.stderr.String())
	}
	a := allocate(t, c, 2, "")
	w = newSlurmWorld(t, c, a)
	plan = w.slurmPlan(4, "")
	p = w.start(plan)
	want := fmt.Sprintf("the allocation (job %s) has 2 node(s), node1,node2; the plan needs 3 ([slurm] nodes = 3; engine a's roles need 3; engine b's roles need 3)", a.id)
	if code := p.waitLong(t, 60*time.Second); code != 2 || !strings.Contains(p.stderr.String(), want) {
		t.Fatalf("two nodes: exit %d, want 2 and %q\n%s", code, want, p.stderr.String())
	}
	if _, err := os.Stat(w.tree()); err == nil {
		t.Error("a refused grid created its tree")
	}
	noSteps(t, c, a)
}

// TestGridSlurmHotNode: node3's GPU never cools (hot from the grid's
// first journal line): the grid stops at the idle gate naming the node,
// no server step started, none left.
func TestGridSlurmHotNode(t *testing.T) {
	c := slurmtest.Need(t)
	a := allocate(t, c, 3, "")
	w := newSlurmWorld(t, c, a)
	data, _ := json.Marshal(map[string]any{"compute_apps": "compute.node3.txt", "thermal": map[string]any{"idle_c": 40, "load_c": 60, "tau_ms": 250,
		"mem_per_proc_mib": 1000, "state": "thermal.json", "hot_when": filepath.Join("..", "plan", "tree", filepath.FromSlash(grid.JournalRel)), "hot_c": 80}})
	os.WriteFile(filepath.Join(w.smiDir, "fakesmi.node3.json"), data, 0o644)
	plan := w.slurmPlan(2, "")
	text, _ := os.ReadFile(plan)
	os.WriteFile(plan, bytes.Replace(text, []byte(`max_wait = "30s"`), []byte(`max_wait = "2s"`), 1), 0o644)
	p := w.start(plan)
	code := p.waitLong(t, 120*time.Second)
	want := "idle gate: not cool within max_wait 2s: node node3 GPU 0 at 80.0 °C, above the target 42.0 °C (idle 40.0 + 2.0)"
	if code != 1 || !strings.Contains(p.stderr.String(), want) {
		t.Fatalf("exit %d, want 1 and %q\n%s", code, want, p.stderr.String())
	}
	ev := w.journal()
	if len(events(ev, grid.EvServerStart)) != 0 || len(events(ev, grid.EvLegFail)) != 1 || events(ev, grid.EvLegFail)[0].Phase != grid.PhaseIdle {
		t.Errorf("journal %+v", ev)
	}
	noSteps(t, c, a)
}

// TestGridSlurmIgnoresSIGINT: the prefill server ignores SIGINT (and
// SIGTERM): after the grace its step is killed by scancel --signal=KILL
// and named in the journal's server.stop; the grid goes on, nothing left.
func TestGridSlurmIgnoresSIGINT(t *testing.T) {
	c := slurmtest.Need(t)
	a := allocate(t, c, 3, "")
	w := newSlurmWorld(t, c, a)
	plan := w.slurmPlan(2, `"-mode", "ignore-int"`)
	p := w.start(plan)
	if code := p.waitLong(t, 480*time.Second); code != 0 {
		t.Fatalf("exit %d\n%s", code, p.stderr.String())
	}
	w.noneLeft(10 * time.Second)
	noSteps(t, c, a)
	stops := events(w.journal(), grid.EvServerStop)
	if len(stops) != 4 {
		t.Fatalf("server.stop %+v", stops)
	}
	for _, s := range stops {
		if len(s.Killed) != 1 || !strings.HasPrefix(s.Killed[0], "step "+s.Steps[0]+" (role prefill on node1)") || len(s.Leftover) != 0 {
			t.Errorf("server.stop killed %v leftover %v, want the prefill step %s named", s.Killed, s.Leftover, s.Steps[0])
		}
	}
	if !strings.Contains(p.stderr.String(), "killed after SIGINT and 3s: step "+a.id+".") {
		t.Errorf("the kill is not said:\n%s", p.stderr.String())
	}
}

// TestGridSlurmInterruptResume: SIGINT to the grid in its second leg
// stops it (exit 130) with no step left; the same command again runs the
// rest, the committed leg kept byte for byte; in an allocation of other
// nodes the resume is refused naming them.
func TestGridSlurmInterruptResume(t *testing.T) {
	c := slurmtest.Need(t)
	a := allocate(t, c, 3, "")
	w := newSlurmWorld(t, c, a)
	plan := w.slurmPlan(2, "")
	p := w.start(plan)
	deadline := time.Now().Add(240 * time.Second)
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
	time.Sleep(time.Second)
	p.cmd.Process.Signal(syscall.SIGINT)
	if code := p.waitLong(t, 120*time.Second); code != 130 {
		t.Fatalf("exit %d\n%s", code, p.stderr.String())
	}
	noSteps(t, c, a)
	w.noneLeft(10 * time.Second)
	committed := snapshotTree(t, w.tree())
	if len(committed) == 0 {
		t.Fatal("nothing committed before the interrupt")
	}
	ev := w.journal()
	if last := ev[len(ev)-1]; last.Status != "interrupted" || last.Signal != "SIGINT" {
		t.Errorf("last %+v", last)
	}

	// Another allocation. The cluster has three nodes only: the other
	// nodes are the same three given in another order, as an allocation
	// of other nodes would put other names in those positions.
	c.Run(t, "scancel", a.id)
	b := allocate(t, c, 3, "")
	w.env = inAlloc(w.env, b.id, "node[2-3],node1")
	p = w.start(plan)
	want := fmt.Sprintf("this grid ran on the nodes node1,node2,node3 (job %s); this allocation's are node2,node3,node1 (job %s)", a.id, b.id)
	if code := p.waitLong(t, 60*time.Second); code != 2 || !strings.Contains(p.stderr.String(), want) {
		t.Fatalf("other nodes: exit %d, want 2 and %q\n%s", code, want, p.stderr.String())
	}

	// The same nodes: the rest runs, the committed leg kept.
	w.env = inAlloc(w.env, b.id, b.nodeList)
	p = w.start(plan)
	if code := p.waitLong(t, 480*time.Second); code != 0 {
		t.Fatalf("resume: exit %d\n%s", code, p.stderr.String())
	}
	noSteps(t, c, b)
	w.noneLeft(10 * time.Second)
	after := snapshotTree(t, w.tree())
	for path, data := range committed {
		if after[path] != data {
			t.Errorf("%s changed on resume", path)
		}
	}
	var order []string
	for _, e := range events(w.journal(), grid.EvLegCommit) {
		order = append(order, fmt.Sprintf("%s/r%d", e.Engine, e.N))
	}
	if got := strings.Join(order, " "); got != "a/r1 b/r1 b/r2 a/r2" {
		t.Errorf("committed %s", got)
	}
	if ents, _ := os.ReadDir(filepath.Join(w.tree(), "grid", "failed")); len(ents) == 0 {
		t.Error("the interrupted leg's staging is not in grid/failed/")
	}
}

// inAlloc is env with the allocation's job id and node list replaced.
func inAlloc(env []string, id, nodes string) []string {
	out := make([]string, 0, len(env)+2)
	for _, kv := range env {
		if !strings.HasPrefix(kv, "SLURM_JOB_ID=") && !strings.HasPrefix(kv, "SLURM_JOB_NODELIST=") {
			out = append(out, kv)
		}
	}
	return append(out, "SLURM_JOB_ID="+id, "SLURM_JOB_NODELIST="+nodes)
}

// docBlocks reads the blocks of page marked <!-- run: NAME … -->, in
// order: each its marker's file= (or "" for a script) and its text.
func docBlocks(t *testing.T, page, name string) (files []string, texts []string) {
	t.Helper()
	data, err := os.ReadFile(page)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(data), "\n")
	marker := regexp.MustCompile(`^<!-- run: ` + regexp.QuoteMeta(name) + `((?: [^ ]+)*) -->$`)
	for i := 0; i < len(lines); i++ {
		m := marker.FindStringSubmatch(lines[i])
		if m == nil {
			continue
		}
		file := ""
		for _, opt := range strings.Fields(m[1]) {
			if v, ok := strings.CutPrefix(opt, "file="); ok {
				file = v
			}
		}
		i++
		if !strings.HasPrefix(lines[i], "```") {
			t.Fatalf("%s:%d: no block after the marker", page, i)
		}
		var b []string
		for i++; i < len(lines) && lines[i] != "```"; i++ {
			b = append(b, lines[i])
		}
		files, texts = append(files, file), append(texts, strings.Join(b, "\n")+"\n")
	}
	if len(texts) == 0 {
		t.Fatalf("%s has no block marked run: %s", page, name)
	}
	return files, texts
}

// TestGridSlurmWalkthrough runs docs/grid.md's Slurm walkthrough word for
// word: its plan, and the sbatch line that runs it on three nodes, with
// a vllm that stands in for vLLM (the fake server and bench) and one fake
// GPU per node. The grid runs in the batch job on node1, every leg is
// committed in ABBA order, and no step is left.
func TestGridSlurmWalkthrough(t *testing.T) {
	c := slurmtest.Need(t)
	w := newSlurmWorld(t, c, alloc{})
	dir := filepath.Join(w.dir, "walk")
	os.Mkdir(dir, 0o755)
	files, texts := docBlocks(t, filepath.Join(slurmtest.Root(t), "docs", "grid.md"), "slurm-grid")
	shim, _ := filepath.Abs(filepath.Join("..", "testdata", "fakevllm"))
	env := w.env[:0:0]
	for _, kv := range w.env {
		if !strings.HasPrefix(kv, "PATH=") {
			env = append(env, kv)
		}
	}
	env = append(env, "PATH="+w.smiDir+":"+shim+":"+filepath.Dir(bins.clockgate)+":"+os.Getenv("PATH"),
		"FAKEVLLM_SERVER="+bins.server, "FAKEVLLM_BENCH="+bins.bench, "FAKEVLLM_DIR="+w.smiDir, "FAKEVLLM_PIDS="+w.pids,
		// Two points of 4 s a leg: 32 busy samples at the plan's 250 ms,
		// over the judge's floor of 30, so the A/A can be ESTABLISHED.
		"FAKEVLLM_BENCH_DURATION=4s")
	for i, text := range texts {
		if files[i] != "" {
			if err := os.WriteFile(filepath.Join(dir, files[i]), []byte(text), 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		cmd := exec.Command("bash", "-e", "-o", "pipefail", "-c", text)
		cmd.Dir, cmd.Env = dir, env
		out, err := cmd.CombinedOutput()
		log, _ := os.ReadFile(filepath.Join(dir, "grid.out"))
		if err != nil {
			t.Fatalf("%s: %v\n%s\ngrid.out:\n%s", text, err, out, log)
		}
	}
	ev, _, err := grid.ReadJournal(filepath.Join(dir, "evidence", grid.JournalRel))
	if err != nil || len(ev) == 0 {
		t.Fatalf("journal: %v", err)
	}
	var order []string
	for _, e := range events(ev, grid.EvLegCommit) {
		order = append(order, fmt.Sprintf("%s/r%d", e.Engine, e.N))
	}
	if got := strings.Join(order, " "); got != "vllm-a/r1 vllm-b/r1 vllm-b/r2 vllm-a/r2 vllm-a/r3 vllm-b/r3 vllm-b/r4 vllm-a/r4" {
		t.Errorf("committed %s", got)
	}
	if st := ev[0]; strings.Join(st.Nodes, ",") != "node1,node2,node3" || st.SlurmJobID == "" {
		t.Errorf("grid.start %+v", st)
	}
	w.noneLeft(10 * time.Second)
	if out := strings.TrimSpace(c.Run(t, "squeue", "--steps", "-h", "-o", "%i %j")); out != "" {
		t.Errorf("squeue --steps lists steps after the batch job:\n%s", out)
	}
	assertJudged(t, filepath.Join(dir, "evidence"))
}
