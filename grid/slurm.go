package grid

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/clockgate/clockgate/multileg"
)

// The environment an allocation gives every process in it (SPEC §12.4).
const (
	SlurmJobIDEnv    = "SLURM_JOB_ID"
	SlurmNodeListEnv = "SLURM_JOB_NODELIST"
	SlurmNodeNameEnv = "SLURMD_NODENAME"
)

// StepPoll is the time between two looks at the allocation's steps
// (squeue --steps) while a step starts or ends.
const StepPoll = 100 * time.Millisecond

// slurmAlloc is the allocation a [slurm] grid runs in, and how it runs a
// leg's processes there: each as a step (srun --overlap), each step
// named so that its id is found in squeue --steps and cancelled by id.
type slurmAlloc struct {
	g     *grid
	jobID string
	// all is the allocation's node list, in scontrol show hostnames
	// order; nodes the first [slurm] nodes of it, the grid's.
	all, nodes []string
	// exe is this clockgate, run on every node (the steps' command).
	exe string
	// tag names the grid's steps: cg-<tag>-<what>.
	tag string
	mu  sync.Mutex
	// steps are the ids of every step the grid started and has not seen
	// end, by step name.
	steps map[string]string
}

// Allocation is an allocation's job id and node list.
type Allocation struct {
	JobID string
	Nodes []string
}

// FindAllocation reads the allocation the grid runs in from the
// environment (SLURM_JOB_ID, SLURM_JOB_NODELIST expanded by scontrol show
// hostnames) and refuses, before anything runs, a plan whose [slurm]
// nodes (and so its roles) need more nodes than it has.
func FindAllocation(p *Plan, getenv func(string) string) (*Allocation, error) {
	job := getenv(SlurmJobIDEnv)
	if job == "" {
		return nil, usage("%s has [slurm] and %s is not set: this is not inside a Slurm allocation; run the grid inside one of at least %d nodes (salloc -N %d clockgate grid %s, or sbatch -N %d), clockgate never starts one",
			p.Name, SlurmJobIDEnv, p.Slurm.Nodes, p.Slurm.Nodes, p.Name, p.Slurm.Nodes)
	}
	list := getenv(SlurmNodeListEnv)
	if list == "" {
		return nil, usage("%s=%s but %s is not set: cannot tell the allocation's nodes", SlurmJobIDEnv, job, SlurmNodeListEnv)
	}
	nodes, err := multileg.ExpandHosts(list)
	if err != nil {
		return nil, usage("%s=%q: %v", SlurmNodeListEnv, list, err)
	}
	if len(nodes) < p.Slurm.Nodes {
		need := fmt.Sprintf("[slurm] nodes = %d", p.Slurm.Nodes)
		for _, e := range p.Engines {
			if n := e.nodes(); n > 1 {
				need += fmt.Sprintf("; engine %s's roles need %d", e.Name, n)
			}
		}
		return nil, usage("the allocation (job %s) has %d node(s), %s; the plan needs %d (%s): run it in an allocation of at least %d nodes (salloc -N %d); nothing was run",
			job, len(nodes), strings.Join(nodes, ","), p.Slurm.Nodes, need, p.Slurm.Nodes, p.Slurm.Nodes)
	}
	return &Allocation{JobID: job, Nodes: nodes}, nil
}

// nodes is how many nodes the engine's servers run on.
func (e Engine) nodes() int {
	if len(e.Roles) == 0 {
		return 1
	}
	n := 0
	for _, r := range e.Roles {
		n += r.Nodes
	}
	return n
}

// placedRole is a role given its nodes.
type placedRole struct {
	Role
	nodes []string
}

// Placement gives an engine's roles their nodes: taken from the grid's
// nodes in order, in plan order, the same for every engine, so that
// positions line up across arms. An engine without roles runs its serve
// on the first node, as the role "serve".
func Placement(e Engine, nodes []string) []placedRole {
	if len(e.Roles) == 0 {
		return []placedRole{{Role: Role{Name: "serve", Nodes: 1, Serve: e.Serve}, nodes: nodes[:1]}}
	}
	var out []placedRole
	k := 0
	for _, r := range e.Roles {
		out = append(out, placedRole{Role: r, nodes: nodes[k : k+r.Nodes]})
		k += r.Nodes
	}
	return out
}

// slurmVars are a leg's placeholders on the allocation: {head} is the
// first node, and the bench reaches the server there.
func slurmVars(vars map[string]string, nodes []string, port int) map[string]string {
	vars["head"] = nodes[0]
	vars["base_url"] = fmt.Sprintf("http://%s:%d", nodes[0], port)
	return vars
}

func newSlurmAlloc(g *grid, a *Allocation) (*slurmAlloc, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("cannot name this clockgate for the steps: %v", err)
	}
	return &slurmAlloc{g: g, jobID: a.JobID, all: a.Nodes, nodes: a.Nodes[:g.p.Slurm.Nodes], exe: exe,
		tag: fmt.Sprintf("%s-%d", g.p.SHA256[:8], os.Getpid()), steps: map[string]string{}}, nil
}

// srun is the command of a step named name over nodes running argv.
func (s *slurmAlloc) srun(name string, nodes []string, argv ...string) *exec.Cmd {
	return s.srunContext(context.Background(), name, nodes, argv...)
}

func (s *slurmAlloc) srunContext(ctx context.Context, name string, nodes []string, argv ...string) *exec.Cmd {
	args := []string{"--jobid=" + s.jobID, "--overlap", "--nodes=" + strconv.Itoa(len(nodes)), "--ntasks-per-node=1",
		"--nodelist=" + strings.Join(nodes, ","), "--disable-status", "--kill-on-bad-exit=1", "--job-name=" + name}
	return exec.CommandContext(ctx, "srun", append(args, argv...)...)
}

// listed is every step of the job squeue --steps lists now, id by name.
func (s *slurmAlloc) listed(ctx context.Context) (map[string]string, error) {
	cmd := exec.CommandContext(ctx, "squeue", "--steps", "-h", "-j", s.jobID, "-o", "%i %j")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("squeue --steps -j %s: %v: %s", s.jobID, err, strings.TrimSpace(stderr.String()))
	}
	m := map[string]string{}
	for _, line := range strings.Split(string(out), "\n") {
		id, name, ok := strings.Cut(strings.TrimSpace(line), " ")
		if ok {
			m[name] = id
		}
	}
	return m, nil
}

// stepID waits for the step named name to be listed and returns its id;
// done closing first (srun exited) or the bound passing is an error.
func (s *slurmAlloc) stepID(name string, done <-chan struct{}) (string, error) {
	deadline := time.Now().Add(s.g.t.stopWait)
	for {
		m, err := s.listed(context.Background())
		if err == nil {
			if id, ok := m[name]; ok {
				s.mu.Lock()
				s.steps[name] = id
				s.mu.Unlock()
				return id, nil
			}
		}
		select {
		case <-done:
			return "", errors.New("srun exited before squeue --steps listed its step")
		default:
		}
		if !time.Now().Before(deadline) {
			if err == nil {
				err = errors.New("not listed")
			}
			return "", fmt.Errorf("step %s: not in squeue --steps within %v: %v", name, s.g.t.stopWait, err)
		}
		time.Sleep(StepPoll)
	}
}

// scancel sends sig to the step id.
func (s *slurmAlloc) scancel(id, sig string) error {
	out, err := exec.Command("scancel", "--signal="+sig, id).CombinedOutput()
	if err != nil {
		return fmt.Errorf("scancel --signal=%s %s: %v: %s", sig, id, err, strings.TrimSpace(string(out)))
	}
	return nil
}

// waitGone waits, up to d, until squeue --steps lists none of ids; it
// returns those still listed.
func (s *slurmAlloc) waitGone(ids []string, d time.Duration) []string {
	deadline := time.Now().Add(d)
	for {
		m, err := s.listed(context.Background())
		var left []string
		if err != nil {
			left = ids
		} else {
			have := map[string]bool{}
			for _, id := range m {
				have[id] = true
			}
			for _, id := range ids {
				if have[id] {
					left = append(left, id)
				}
			}
		}
		if len(left) == 0 || !time.Now().Before(deadline) {
			if len(left) == 0 {
				s.forget(ids)
			}
			return left
		}
		time.Sleep(StepPoll)
	}
}

func (s *slurmAlloc) forget(ids []string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for name, id := range s.steps {
		for _, x := range ids {
			if id == x {
				delete(s.steps, name)
			}
		}
	}
}

// cancelAll cancels, by id, every step of the grid that squeue --steps
// still lists (each named cg-<tag>-…; SIGKILL), and waits, up to the
// stop's bound, until none is listed: every exit path of the grid runs
// it. It returns the ids it cancelled (a short read step that is only
// ending is waited for, not named).
func (s *slurmAlloc) cancelAll() []string {
	deadline := time.Now().Add(s.g.t.stopWait)
	var cancelled []string
	for {
		m, err := s.listed(context.Background())
		if err != nil {
			return cancelled
		}
		var live []string
		for name, id := range m {
			if strings.HasPrefix(name, "cg-"+s.tag+"-") {
				live = append(live, id)
			}
		}
		sort.Strings(live)
		if len(live) == 0 || !time.Now().Before(deadline) {
			return cancelled
		}
		for _, id := range live {
			if contains(cancelled, id) {
				continue
			}
			s.mu.Lock()
			known := false
			for _, x := range s.steps {
				known = known || x == id
			}
			s.mu.Unlock()
			if known {
				s.scancel(id, "KILL")
				cancelled = append(cancelled, id)
			}
		}
		time.Sleep(StepPoll)
	}
}

// NodeReading is what the grid's read step prints on each node: the
// node's selected GPUs, the compute processes on them, whether the
// plan's port is free there.
type NodeReading struct {
	Node    string         `json:"node"`
	GPUs    []NodeGPU      `json:"gpus"`
	Compute []NodeCompute  `json:"compute"`
	Port    string         `json:"port,omitempty"`
	Err     string         `json:"error,omitempty"`
	BootID  string         `json:"boot_id,omitempty"`
	Extra   map[string]any `json:"-"`
}

// NodeGPU is one GPU of a node's reading.
type NodeGPU struct {
	Index  int      `json:"index"`
	UUID   string   `json:"uuid"`
	TempC  *float64 `json:"temp_c"`
	Driver string   `json:"driver"`
}

// NodeCompute is one compute process on a node's selected GPUs.
type NodeCompute struct {
	PID  int    `json:"pid"`
	Name string `json:"name"`
	UUID string `json:"uuid"`
}

// readNodes runs the read step on the grid's nodes (a short step,
// clockgate grid-task read) and returns each node's reading in node
// order.
func (s *slurmAlloc) readNodes(ctx context.Context) ([]NodeReading, error) {
	ctx, cancel := context.WithTimeout(ctx, s.g.t.stopWait)
	defer cancel()
	name := "cg-" + s.tag + "-read"
	cmd := s.srunContext(ctx, name, s.nodes, s.exe, TaskCommand, "read", "--backend", s.g.o.Backend, "--gpus", s.g.p.GPUs, "--port", strconv.Itoa(s.g.p.Port))
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGINT) }
	cmd.WaitDelay = 5 * time.Second
	err := cmd.Run()
	if ctx.Err() != nil && err != nil {
		return nil, fmt.Errorf("the read step on %s: %v", strings.Join(s.nodes, ","), ctx.Err())
	}
	by := map[string]NodeReading{}
	sc := bufio.NewScanner(&stdout)
	for sc.Scan() {
		var r NodeReading
		if json.Unmarshal(sc.Bytes(), &r) == nil && r.Node != "" {
			by[r.Node] = r
		}
	}
	out := make([]NodeReading, 0, len(s.nodes))
	var missing []string
	for _, n := range s.nodes {
		r, ok := by[n]
		if !ok {
			missing = append(missing, n)
			continue
		}
		if r.Err != "" {
			return nil, fmt.Errorf("node %s: %s", n, r.Err)
		}
		out = append(out, r)
	}
	if len(missing) > 0 {
		msg := strings.TrimSpace(stderr.String())
		if err != nil {
			msg = err.Error() + ": " + msg
		}
		return nil, fmt.Errorf("the read step (srun %s grid-task read) printed no reading for %s: %s", s.exe, strings.Join(missing, ", "), lastLines(msg, 5))
	}
	return out, nil
}

func lastLines(s string, n int) string {
	lines := strings.Split(s, "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, " | ")
}

// step is a running step: its srun, its name and id, what it prints.
type step struct {
	name, id string
	role     string
	nodes    []string
	cmd      *exec.Cmd
	tail     *tailWriter
	exited   chan struct{}
	status   string
}

// start starts srun for the step and waits until squeue lists it.
func (s *slurmAlloc) start(st *step, env []string, logf io.Writer, argv ...string) error {
	cmd := s.srun(st.name, st.nodes, argv...)
	cmd.Env = env
	st.tail = newTail(TailLines)
	cmd.Stdout = io.MultiWriter(logf, st.tail)
	cmd.Stderr = cmd.Stdout
	if err := s.g.procs.Start(cmd); err != nil {
		return fmt.Errorf("cannot start srun: %v", err)
	}
	st.cmd = cmd
	st.exited = make(chan struct{})
	go func() {
		err := cmd.Wait()
		st.status = "exited 0"
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
				st.status = "killed by " + ws.Signal().String()
			} else {
				st.status = "exited " + strconv.Itoa(ee.ExitCode())
			}
		}
		close(st.exited)
	}()
	id, err := s.stepID(st.name, st.exited)
	if err != nil {
		cmd.Process.Signal(syscall.SIGKILL)
		<-st.exited
		return fmt.Errorf("%v; srun %s; its last lines:\n%s", err, st.status, st.tail.String())
	}
	st.id = id
	return nil
}

// slurmServer is a leg's servers: one step per role.
type slurmServer struct {
	steps  []*step
	marker string
}

func (ss *slurmServer) ids() []string {
	var out []string
	for _, st := range ss.steps {
		if st.id != "" {
			out = append(out, st.id)
		}
	}
	return out
}

// startServers starts each role's server as a step over its nodes:
// clockgate grid-task exec on each node expands {node} and {node_rank}
// and runs the role's serve there, its GPUs named by UUID.
func (s *slurmAlloc) startServers(eng Engine, leg Leg, attempt int, vars map[string]string, logf io.Writer) (*slurmServer, error) {
	marker := fmt.Sprintf("%s=%s-%s-r%d-%d-%d", MarkerEnv, s.g.p.SHA256[:12], leg.Engine, leg.N, attempt, os.Getpid())
	env := serverEnv(eng, marker)
	ss := &slurmServer{marker: marker}
	for _, r := range Placement(eng, s.nodes) {
		rv := make(map[string]string, len(vars)+2)
		for k, v := range vars {
			rv[k] = v
		}
		rv["role"], rv["nnodes"] = r.Name, strconv.Itoa(len(r.nodes))
		argv := Expand(r.Serve, rv)
		task := []string{s.exe, TaskCommand, "exec", "--nodes", strings.Join(r.nodes, ",")}
		for _, n := range r.nodes {
			if u := s.g.nodeUUIDs[n]; len(u) > 0 {
				task = append(task, "--gpus-of", n+"="+strings.Join(u, ","))
			}
		}
		task = append(task, "--")
		st := &step{name: fmt.Sprintf("cg-%s-%s-r%d-%d-%s", s.tag, leg.Engine, leg.N, attempt, r.Name), role: r.Name, nodes: r.nodes}
		if err := s.start(st, env, logf, append(task, argv...)...); err != nil {
			s.stopServers(ss)
			return nil, fmt.Errorf("role %s on %s: %v", r.Name, strings.Join(r.nodes, ","), err)
		}
		ss.steps = append(ss.steps, st)
		s.g.prog.say("role %s started: step %s on %s: %s", r.Name, st.id, strings.Join(r.nodes, ","), strings.Join(argv, " "))
	}
	return ss, nil
}

// serverEnv is the environment of a server: this one without the leg
// marker and the device selectors, the engine's env, the marker.
func serverEnv(eng Engine, marker string) []string {
	env := make([]string, 0, len(os.Environ())+len(eng.Env)+1)
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		drop := k == MarkerEnv
		for _, s := range DeviceSelectors {
			drop = drop || k == s
		}
		if _, over := eng.Env[k]; over {
			drop = true
		}
		if !drop {
			env = append(env, kv)
		}
	}
	keys := make([]string, 0, len(eng.Env))
	for k := range eng.Env {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		env = append(env, k+"="+eng.Env[k])
	}
	return append(env, marker)
}

// stopServers is step (7) on the allocation: SIGINT to each server step
// (scancel --signal=INT, by id), the grace, scancel --signal=KILL to
// those still running, then the waits until squeue --steps lists none of
// them and no compute process is left on any node's GPUs and the port is
// free on each. It returns the steps it killed, what is left, and why the
// grid must stop when something is.
func (s *slurmAlloc) stopServers(ss *slurmServer) (killed, leftover []string, why string) {
	ids := ss.ids()
	for _, id := range ids {
		s.scancel(id, "INT")
	}
	deadline := time.Now().Add(s.g.t.stopGrace)
	for _, st := range ss.steps {
		select {
		case <-st.exited:
		case <-time.After(time.Until(deadline)):
		}
	}
	left := s.waitGone(ids, time.Until(deadline))
	for _, st := range ss.steps {
		for _, id := range left {
			if st.id == id {
				s.scancel(id, "KILL")
				killed = append(killed, fmt.Sprintf("step %s (role %s on %s)", id, st.role, strings.Join(st.nodes, ",")))
			}
		}
	}
	if left = s.waitGone(ids, s.g.t.stopWait); len(left) > 0 {
		for _, st := range ss.steps {
			for _, id := range left {
				if st.id == id {
					leftover = append(leftover, fmt.Sprintf("step %s (role %s on %s)", id, st.role, strings.Join(st.nodes, ",")))
				}
			}
		}
		s.reapSruns(ss)
		return killed, leftover, fmt.Sprintf("after scancel --signal=KILL and %v, squeue --steps still lists %s", s.g.t.stopWait, strings.Join(leftover, ", "))
	}
	s.reapSruns(ss)
	what, err := s.g.waitFree(context.Background())
	if err != nil {
		return killed, []string{err.Error()}, fmt.Sprintf("the GPUs could not be read after the stop: %v", err)
	}
	if what != "" {
		return killed, []string{what}, fmt.Sprintf("after the stop and %v, the GPUs or the port are still in use: %s", s.g.t.stopWait, what)
	}
	return killed, nil, ""
}

// reapSruns waits for each step's srun, killing one still running after
// its step has gone (or after the bound).
func (s *slurmAlloc) reapSruns(ss *slurmServer) {
	for _, st := range ss.steps {
		select {
		case <-st.exited:
		case <-time.After(s.g.t.stopWait):
			st.cmd.Process.Signal(syscall.SIGKILL)
			<-st.exited
		}
	}
}

// legDir is the leg's directory in the staging (SPEC §12.3).
func (g *grid) legDir(staging string, leg Leg) string {
	return filepath.Join(staging, "clocks", g.p.ModelDir, leg.Engine, fmt.Sprintf("r%d", leg.N))
}

// clockgate runs this clockgate with args here (leg init, wait, close),
// its output to the leg's log.
func (s *slurmAlloc) clockgate(ctx context.Context, logf io.Writer, args ...string) error {
	cmd := exec.CommandContext(ctx, s.exe, args...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = io.MultiWriter(logf, &out), io.MultiWriter(logf, &out)
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("clockgate %s: %v: %s", strings.Join(args, " "), err, lastLines(strings.TrimSpace(out.String()), 5))
	}
	return nil
}

// slurmSampler is the leg's sampler step over every node.
type slurmSampler struct {
	st  *step
	dir string
}

// startSamplers writes the leg's leg.json (leg init: the grid's nodes,
// each with its role), starts the sampler step over every node (sample
// --leg) and waits until each node has its first reading (leg wait).
func (s *slurmAlloc) startSamplers(ctx context.Context, eng Engine, leg Leg, attempt int, dir, marker string, logf io.Writer) (*slurmSampler, *legError) {
	args := []string{"leg", "init", "--out", dir, "--hosts", strings.Join(s.nodes, ","), "--interval", s.g.p.Interval.String(),
		"--skew-bound", s.g.p.Slurm.SkewBound.String()}
	if len(eng.Roles) > 0 {
		used := 0
		for _, r := range Placement(eng, s.nodes) {
			args = append(args, "--role", r.Name+"="+strings.Join(r.nodes, ","))
			used += len(r.nodes)
		}
		if used < len(s.nodes) {
			args = append(args, "--role", "spare="+strings.Join(s.nodes[used:], ","))
		}
	}
	if err := os.MkdirAll(filepath.Dir(dir), 0o755); err != nil {
		return nil, legFail(PhaseSample, "%v", err)
	}
	if err := s.clockgate(ctx, logf, args...); err != nil {
		return nil, legFail(PhaseSample, "%v", err)
	}
	st := &step{name: fmt.Sprintf("cg-%s-%s-r%d-%d-sample", s.tag, leg.Engine, leg.N, attempt), role: "samplers", nodes: s.nodes}
	sargs := []string{s.exe, TaskCommand, "sample", "--marker", marker, "--", "sample", "--leg", dir, "--gpu", s.g.p.GPUs, "--backend", s.g.o.Backend}
	if s.g.p.Expect != nil {
		for _, kv := range s.g.p.Expect.Decls() {
			sargs = append(sargs, "--expect", kv)
		}
	}
	if err := s.start(st, os.Environ(), logf, sargs...); err != nil {
		return nil, legFail(PhaseSample, "the sampler step did not start: %v", err)
	}
	ss := &slurmSampler{st: st, dir: dir}
	if err := s.clockgate(ctx, logf, "leg", "wait", "--started", dir, "--timeout", s.g.t.stopWait.String()); err != nil {
		s.stopSamplers(ss)
		return nil, legFail(PhaseSample, "%v", err)
	}
	return ss, nil
}

// stopSamplers stops the sampler step by SIGINT to its srun (forwarded
// as SIGINT to every task: SIGTERM would SIGKILL them, SPEC §12.3),
// waits for it, cancels it by id (SIGKILL) past the bound, and closes the
// leg (leg close: every node's record, the leg's memory record).
func (s *slurmAlloc) stopSamplers(ss *slurmSampler) error {
	ss.st.cmd.Process.Signal(syscall.SIGINT)
	select {
	case <-ss.st.exited:
	case <-time.After(s.g.t.stopWait):
		s.scancel(ss.st.id, "KILL")
		select {
		case <-ss.st.exited:
		case <-time.After(s.g.t.stopWait):
			ss.st.cmd.Process.Signal(syscall.SIGKILL)
			<-ss.st.exited
		}
	}
	if left := s.waitGone([]string{ss.st.id}, s.g.t.stopWait); len(left) > 0 {
		s.scancel(ss.st.id, "KILL")
		return fmt.Errorf("the sampler step %s is still listed by squeue --steps after %v", ss.st.id, s.g.t.stopWait)
	}
	return nil
}

// readNodes takes one reading of every node's GPUs through the read
// step; the first sets the grid's GPUs (node by node, in node order).
func (g *grid) readNodes(ctx context.Context) (reading, error) {
	t := g.now()
	rs, err := g.sl.readNodes(ctx)
	if err != nil {
		if ctx.Err() != nil {
			return reading{}, g.interrupted(ctx, "a reading of the nodes' GPUs")
		}
		return reading{}, stopped("reading the nodes' GPUs: %v", err)
	}
	r := reading{t: t}
	var uuids, labels []string
	var idx []int
	byNode := map[string][]string{}
	for _, n := range rs {
		if len(n.GPUs) == 0 {
			return reading{}, stopped("node %s: gpus = %q selects no GPU there", n.Node, g.p.GPUs)
		}
		for _, gp := range n.GPUs {
			if gp.TempC == nil {
				return reading{}, stopped("node %s GPU %d (%s) reports no temperature (temperature.gpu): the idle gate cannot run", n.Node, gp.Index, gp.UUID)
			}
			uuids = append(uuids, gp.UUID)
			idx = append(idx, gp.Index)
			labels = append(labels, fmt.Sprintf("node %s GPU %d", n.Node, gp.Index))
			byNode[n.Node] = append(byNode[n.Node], gp.UUID)
			r.c = append(r.c, *gp.TempC)
			if g.driver == "" {
				g.driver = gp.Driver
			}
		}
	}
	if g.uuids == nil {
		g.uuids, g.indices, g.labels, g.nodeUUIDs = uuids, idx, labels, byNode
	} else if strings.Join(uuids, ",") != strings.Join(g.uuids, ",") {
		return reading{}, stopped("the GPUs read changed: %s, was %s", strings.Join(uuids, ","), strings.Join(g.uuids, ","))
	}
	return r, nil
}

// busyNodes says what holds any node's GPUs or the port on any node, ""
// when nothing does.
func (g *grid) busyNodes(ctx context.Context) (string, error) {
	rs, err := g.sl.readNodes(ctx)
	if err != nil {
		return "", err
	}
	var what []string
	for _, n := range rs {
		for _, p := range n.Compute {
			what = append(what, fmt.Sprintf("compute process %d (%s) on node %s %s", p.PID, p.Name, n.Node, p.UUID))
		}
		if n.Port != "" {
			what = append(what, n.Port)
		}
	}
	return strings.Join(what, "; "), nil
}

// gpuLabel names the grid's i-th GPU in a message.
func (g *grid) gpuLabel(i int) string {
	if g.labels != nil {
		return g.labels[i]
	}
	return fmt.Sprintf("GPU %d", g.indices[i])
}
