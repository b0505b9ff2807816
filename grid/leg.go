package grid

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/clockgate/clockgate/benchfmt"
	"github.com/clockgate/clockgate/clocks"
	"github.com/clockgate/clockgate/ratio"
	"github.com/clockgate/clockgate/sampler"
)

// The phases of a leg, as leg.fail names them.
const (
	PhasePrecheck = "precheck"
	PhaseIdle     = "idle"
	PhaseStart    = "start"
	PhaseReady    = "ready"
	PhaseWarmup   = "warmup"
	PhaseSample   = "sample"
	PhaseBench    = "bench"
	PhaseStop     = "stop"
	PhaseCommit   = "commit"
)

// MarkerEnv is the variable the grid sets in a server's environment, to a
// token of the leg: every worker inherits it, so a process of the leg is
// known even where it left the server's tree.
const MarkerEnv = "CLOCKGATE_GRID_LEG"

// legError is a failed leg: where and why. fatal stops the grid without
// a retry; signal says a signal stopped it.
type legError struct {
	phase, cause string
	fatal        bool
	signal       syscall.Signal
	code         int
}

func legFail(phase, format string, args ...any) *legError {
	return &legError{phase: phase, cause: fmt.Sprintf(format, args...)}
}

// server is a running engine server.
type server struct {
	cmd    *exec.Cmd
	pid    int
	marker string
	tail   *tailWriter
	exited chan struct{}
	status string
	// seen is every process of the leg seen so far, by pid, with its
	// start time (a later process given the same pid is not the leg's).
	mu   sync.Mutex
	seen map[int]uint64
	stop chan struct{}
}

// runLeg runs one attempt of a leg, steps (1) to (8).
func (g *grid) runLeg(ctx context.Context, leg Leg, attempt int) *legError {
	jl := func(e Event) *legError {
		e.Engine, e.N, e.Block, e.Slot, e.Attempt = leg.Engine, leg.N, leg.Block, leg.Slot, attempt
		if err := g.j.write(e); err != nil {
			return &legError{phase: e.Event, cause: err.Error(), fatal: true}
		}
		return nil
	}
	fail := func(le *legError) *legError {
		if sc, ok := context.Cause(ctx).(SignalCause); ok && ctx.Err() != nil {
			le.signal = sc.Sig
			le.cause = "interrupted by " + signame(sc.Sig) + " (" + le.cause + ")"
		}
		e := Event{Event: EvLegFail, Phase: le.phase, Cause: le.cause}
		if _, err := os.Lstat(g.stagingDir(leg)); err == nil {
			dst, err := g.toFailed(leg, g.stagingDir(leg))
			if err != nil {
				le.cause += fmt.Sprintf("; its staging could not be moved aside: %v", err)
				le.fatal = true
			}
			e.Staging = dst
		}
		jl(e)
		return le
	}

	// (1) Pre-check.
	g.prog.phase("pre-check", "GPUs free, port %d free", g.p.Port)
	if err := g.precheck(ctx); err != nil {
		le := &legError{phase: PhasePrecheck, cause: err.Error(), fatal: true}
		if ctx.Err() != nil {
			le.cause = "interrupted"
		}
		return fail(le)
	}
	// (2) The idle gate.
	tc, sl, wait, err := g.gate(ctx)
	if err != nil {
		return fail(&legError{phase: PhaseIdle, cause: err.Error(), fatal: true})
	}
	ws := wait.Seconds()
	if le := jl(Event{Event: EvLegIdle, TempC: tc, SlopeCPerMin: sl, WaitS: &ws}); le != nil {
		return le
	}
	g.prog.say("%s: GPUs at %s after %v; starting", leg.Name(), temps(tc), wait.Round(time.Second))
	staging := g.stagingDir(leg)
	if err := os.RemoveAll(staging); err != nil {
		return fail(&legError{phase: PhaseStart, cause: err.Error(), fatal: true})
	}
	logPath := filepath.Join(g.tree, "grid", "logs", fmt.Sprintf("%s-r%d-%d.log", leg.Engine, leg.N, attempt))
	if err := os.MkdirAll(filepath.Dir(logPath), 0o755); err != nil {
		return fail(&legError{phase: PhaseStart, cause: err.Error(), fatal: true})
	}
	logf, err := os.Create(logPath)
	if err != nil {
		return fail(&legError{phase: PhaseStart, cause: err.Error(), fatal: true})
	}
	defer logf.Close()

	// (1 again) The GPUs and the port may have been taken while the gate
	// waited: looked at again, once, right before the server starts.
	if what, err := g.busy(ctx); err != nil || what != "" {
		if err != nil {
			what = err.Error()
		}
		return fail(&legError{phase: PhasePrecheck, cause: fmt.Sprintf("pre-check, again right before the server starts: the GPUs or the port are in use: %s; a leg shares them with nothing (stop it, or choose other gpus or another port)", what), fatal: true})
	}
	// (3) The server, in its own process group.
	eng := g.p.Engines[leg.EngineIndex]
	vars := g.p.Vars(leg)
	if g.sl != nil {
		return g.runLegSlurm(ctx, leg, attempt, eng, slurmVars(vars, g.sl.nodes, g.p.Port), staging, logf, jl, fail, tc, ws)
	}
	srv, err := g.startServer(eng, leg, attempt, vars, logf)
	if err != nil {
		return fail(&legError{phase: PhaseStart, cause: err.Error()})
	}
	if le := jl(Event{Event: EvServerStart, PID: srv.pid}); le != nil {
		g.stopServer(srv)
		return le
	}
	bodyErr := g.legBody(ctx, leg, eng, srv, staging, logf, vars, jl)
	// (7) Stop, whatever happened.
	g.prog.phase("stop", "stopping the server")
	killed, leftover, stopErr := g.stopServer(srv)
	if le := jl(Event{Event: EvServerStop, PID: srv.pid, Killed: killed, Leftover: leftover}); le != nil {
		return le
	}
	if stopErr != "" {
		cause := stopErr
		if bodyErr != nil {
			cause = bodyErr.cause + "; then " + stopErr
		}
		return fail(&legError{phase: PhaseStop, cause: cause, fatal: true})
	}
	g.history = nil
	if bodyErr != nil {
		return fail(bodyErr)
	}
	// (8) Commit.
	files, err := g.commit(staging)
	if err != nil {
		return fail(&legError{phase: PhaseCommit, cause: err.Error(), fatal: true})
	}
	verdict := g.legVerdict(leg)
	if le := jl(Event{Event: EvLegCommit, Files: files, Verdict: verdict}); le != nil {
		return le
	}
	g.verdicts[leg.Name()] = legSummary{leg: leg, verdict: verdict, temps: tc, wait: ws, tries: attempt}
	g.prog.say("%s committed: %s", leg.Name(), verdict)
	return nil
}

// legBody is steps (4) to (6): readiness, the warmup, and the sampled,
// marked bench points.
func (g *grid) legBody(ctx context.Context, leg Leg, eng Engine, srv *server, staging string, logf io.Writer, vars map[string]string, jl func(Event) *legError) *legError {
	// (4) Readiness.
	g.prog.phase("ready", "waiting for %s%s", vars["base_url"], eng.Ready.Path)
	if le := g.waitReady(ctx, eng, srv); le != nil {
		return le
	}
	if le := jl(Event{Event: EvServerReady, PID: srv.pid}); le != nil {
		return le
	}
	// (5) The warmup, not recorded.
	if le := g.warmup(ctx, leg, vars, logf); le != nil {
		return le
	}
	// (6) The sampler, in process, on the staging prefix.
	base := filepath.Join(g.p.ModelDir, leg.Engine, fmt.Sprintf("r%d", leg.N))
	prefix := filepath.Join(staging, "clocks", base)
	benchDir := filepath.Join(staging, "bench", base)
	if err := os.MkdirAll(benchDir, 0o755); err != nil {
		return legFail(PhaseSample, "%v", err)
	}
	memPath := filepath.Join(staging, "memory", base+".summary.json")
	rec, le := g.startSampler(ctx, prefix, memPath, srv, logf)
	if le != nil {
		return le
	}
	pointsErr := g.runPoints(ctx, leg, vars, prefix+benchfmt.PointsSuffix, "", benchDir, logf)
	res, serr := rec.stop()
	if pointsErr != nil {
		return pointsErr
	}
	if serr != nil && (res == nil || res.Record == nil) {
		return legFail(PhaseSample, "the sampler wrote no record: %v", serr)
	}
	if serr != nil {
		// A refused window is still the leg's evidence: its record says
		// so, and summarize judges it.
		g.prog.say("%s: the sampler refused: %v", leg.Name(), serr)
	}
	if res.MemoryErr != nil {
		// The leg is memory.missing: its verdict, never a failed leg.
		g.prog.say("%s: no memory record: %v", leg.Name(), res.MemoryErr)
	}
	return nil
}

// logName is the path of the leg's log, for messages.
func logName(w io.Writer) string {
	if f, ok := w.(*os.File); ok {
		return f.Name()
	}
	return "the leg's log"
}

// startServer starts the engine's server in a process group of its own,
// its output to the leg's log and a tail kept for messages, its
// environment marked with the leg's token.
func (g *grid) startServer(eng Engine, leg Leg, attempt int, vars map[string]string, logf io.Writer) (*server, error) {
	argv := Expand(eng.Serve, vars)
	marker := fmt.Sprintf("%s=%s-%s-r%d-%d-%d", MarkerEnv, g.p.SHA256[:12], leg.Engine, leg.N, attempt, os.Getpid())
	cmd := exec.Command(argv[0], argv[1:]...)
	env := make([]string, 0, len(os.Environ())+len(eng.Env)+2)
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
	// The server sees the plan's GPUs, named by UUID.
	env = append(env, "CUDA_VISIBLE_DEVICES="+strings.Join(g.uuids, ","), marker)
	cmd.Env = env
	tail := newTail(TailLines)
	cmd.Stdout = io.MultiWriter(logf, tail)
	cmd.Stderr = cmd.Stdout
	cmd.Stdin = nil
	if err := g.procs.Start(cmd); err != nil {
		return nil, fmt.Errorf("cannot start %s: %v", argv[0], err)
	}
	s := &server{cmd: cmd, pid: cmd.Process.Pid, marker: marker, tail: tail, exited: make(chan struct{}), seen: map[int]uint64{}, stop: make(chan struct{})}
	go func() {
		err := cmd.Wait()
		s.status = "exited 0"
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
				s.status = "killed by " + ws.Signal().String()
			} else {
				s.status = "exited " + strconv.Itoa(ee.ExitCode())
			}
		} else if err != nil {
			s.status = err.Error()
		}
		close(s.exited)
	}()
	go g.track(s)
	g.prog.say("server %s started: pid %d: %s", eng.Name, s.pid, strings.Join(argv, " "))
	return s, nil
}

// track records every process of the leg while the server runs: the
// server's tree, and every process below the grid that carries the leg's
// token (a worker reparented to the grid, its subreaper).
func (g *grid) track(s *server) {
	t := time.NewTicker(g.t.trackPoll)
	defer t.Stop()
	for {
		g.snapshot(s)
		select {
		case <-s.stop:
			return
		case <-t.C:
		}
	}
}

func (g *grid) snapshot(s *server) []int {
	pids := g.procs.Tree(s.pid)
	pids = append(pids, g.procs.Marked(s.marker, g.procs.Tree(os.Getpid()))...)
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, p := range pids {
		if _, ok := s.seen[p]; ok {
			continue
		}
		if st, ok := g.procs.Stat(p); ok {
			s.seen[p] = st.StartTicks
		}
	}
	out := make([]int, 0, len(s.seen))
	for p := range s.seen {
		out = append(out, p)
	}
	sort.Ints(out)
	return out
}

// waitReady is step (4): ready.path answers 200 ReadyStreak times in a
// row, polled every ReadyPoll, within ready.timeout, each answer from a
// listener of the leg's server tree (the port's listener found as
// --engine-port finds it, SPEC §11.1) while the server is alive. An
// answer from another process fails the leg naming it; the server exiting
// first fails it with its last lines.
func (g *grid) waitReady(ctx context.Context, eng Engine, srv *server) *legError {
	url := fmt.Sprintf("http://127.0.0.1:%d%s", g.p.Port, eng.Ready.Path)
	client := &http.Client{Timeout: max(g.t.readyPoll, 500*time.Millisecond)}
	deadline := time.Now().Add(eng.Ready.Timeout)
	streak := 0
	last := "no answer yet"
	for {
		exited := false
		select {
		case <-srv.exited:
			exited = true
		default:
		}
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		resp, err := client.Do(req)
		ok := false
		if err == nil {
			io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<16))
			resp.Body.Close()
			last = resp.Status
			ok = resp.StatusCode == http.StatusOK
		} else {
			last = err.Error()
		}
		if ok {
			// Whose answer it was: the port's listener now.
			if who, err := g.foreignListener(srv); err != nil {
				ok, last = false, fmt.Sprintf("200 from a listener that cannot be named: %v", err)
			} else if who != "" {
				why := "while the server was starting"
				if exited {
					why = "after the server " + srv.status
				}
				return legFail(PhaseReady, "port %d answered by %s, not this leg's server (%s): another process serves the port; stop it, or choose another port; the server's last %d lines:\n%s",
					g.p.Port, who, why, TailLines, srv.tail.String())
			}
		}
		if exited {
			return legFail(PhaseReady, "the server %s before it was ready; its last %d lines:\n%s", srv.status, TailLines, srv.tail.String())
		}
		if ok {
			streak++
		} else {
			streak = 0
		}
		if streak >= ReadyStreak {
			select {
			case <-srv.exited:
				return legFail(PhaseReady, "the server %s as it became ready; its last %d lines:\n%s", srv.status, TailLines, srv.tail.String())
			default:
			}
			return nil
		}
		if ctx.Err() != nil {
			return legFail(PhaseReady, "waiting for %s", url)
		}
		if !time.Now().Before(deadline) {
			return legFail(PhaseReady, "%s did not answer 200 %d times in a row within ready.timeout %v (last: %s); the server's last %d lines:\n%s",
				url, ReadyStreak, eng.Ready.Timeout, last, TailLines, srv.tail.String())
		}
		select {
		case <-ctx.Done():
		case <-srv.exited:
		case <-time.After(g.t.readyPoll):
		}
	}
}

// foreignListener names the processes listening on the plan's port that
// are not of the leg's server tree ("pid 1234 (python3)"), "" when every
// listener is; an error when no listener can be named.
func (g *grid) foreignListener(srv *server) (string, error) {
	pids, err := g.procs.Listeners(g.p.Port)
	if err != nil {
		return "", err
	}
	leg := map[int]bool{srv.pid: true}
	for _, p := range g.snapshot(srv) {
		leg[p] = true
	}
	var others []string
	for _, p := range pids {
		if !leg[p] {
			others = append(others, "pid "+g.procs.Describe(p))
		}
	}
	return strings.Join(others, ", "), nil
}

// runBench runs one bench command to its end, its output to the leg's
// log, and returns its exit status (128+N for a signal).
func (g *grid) runBench(ctx context.Context, argv []string, logf io.Writer) (int, error) {
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGTERM) }
	cmd.WaitDelay = 10 * time.Second
	err := cmd.Run()
	if cmd.ProcessState == nil {
		return 127, fmt.Errorf("cannot run %s: %v", argv[0], err)
	}
	if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return 128 + int(ws.Signal()), nil
	}
	return cmd.ProcessState.ExitCode(), nil
}

// runPoints runs each point of the leg as clockgate mark runs it, and
// checks its result file: one readable bench point of its concurrency.
func (g *grid) runPoints(ctx context.Context, leg Leg, vars map[string]string, marks, host, benchDir string, logf io.Writer) *legError {
	line := func(point, event string, t time.Time, exit *int) string {
		l := benchfmt.MarkLine(point, event, t, exit)
		if host == "" {
			return l
		}
		// A multi-host leg's marks name the client (SPEC §12.3).
		return l[:len(l)-1] + `,"host":` + strconv.Quote(host) + "}"
	}
	for k, pt := range leg.Points {
		g.prog.phase("bench", "point %s (%d of %d)", pt.Label(), k+1, len(leg.Points))
		argv := Expand(g.p.Bench.Command, PointVars(vars, pt, pointResultDir(g.p.Bench.Format, benchDir, pt)))
		if err := benchfmt.AppendMark(marks, line(pt.Label(), benchfmt.MarkBegin, g.now(), nil)); err != nil {
			return legFail(PhaseBench, "%s: %v", marks, err)
		}
		code, err := g.runBench(ctx, argv, logf)
		if err2 := benchfmt.AppendMark(marks, line(pt.Label(), benchfmt.MarkEnd, g.now(), &code)); err2 != nil && err == nil {
			err = fmt.Errorf("%s: %v", marks, err2)
		}
		if err != nil {
			return legFail(PhaseBench, "point %s: %v", pt.Label(), err)
		}
		if code != 0 {
			return legFail(PhaseBench, "point %s: %s exited %d (see %s)", pt.Label(), argv[0], code, logName(logf))
		}
		if err := checkPointResult(g.p.Bench.Format, benchDir, pt, benchfmt.Options{BenchTZ: g.o.BenchTZ}); err != nil {
			return legFail(PhaseBench, "point %s: %v", pt.Label(), err)
		}
	}
	return nil
}

// checkResult refuses a point's result file that is not one readable
// bench point (SPEC §2.1, §9.1) of the point's concurrency.
func checkResult(path string, pt ratio.PointID) error {
	rel := filepath.Base(path)
	if _, err := os.Lstat(path); err != nil {
		return fmt.Errorf("the bench wrote no result at %s: pass {result_dir} and {result_name} to it (--result-dir, --result-filename)", path)
	}
	points, invalid, _, err := benchfmt.ReadResult(path, rel)
	if err != nil {
		return fmt.Errorf("the result is not readable: %v", err)
	}
	if len(invalid) > 0 {
		return fmt.Errorf("the result is not a readable bench point: %s", strings.Join(invalid, "; "))
	}
	if len(points) != 1 {
		return fmt.Errorf("%s holds %d bench points: want exactly one, the point's", rel, len(points))
	}
	if got := points[0].ID.MaxConcurrency; got != pt.MaxConcurrency {
		return fmt.Errorf("%s is a point of max_concurrency %d, not %s's: the bench was not given {concurrency}", rel, got, pt.Label())
	}
	return nil
}

// samplerRun is a sampler running in process.
type samplerRun struct {
	stopc chan string
	done  chan struct{}
	res   *sampler.Result
	err   error
}

// startSampler starts the sampler on the staging prefix, the server named
// as the engine under test (its tree the leg's own, SPEC §11.1), the
// memory record going to memPath.
func (g *grid) startSampler(ctx context.Context, prefix, memPath string, srv *server, logf io.Writer) (*samplerRun, *legError) {
	logfn := func(format string, args ...any) {
		fmt.Fprintf(logf, "clockgate grid: sampler: %s\n", fmt.Sprintf(format, args...))
	}
	if err := os.MkdirAll(filepath.Dir(memPath), 0o755); err != nil {
		return nil, legFail(PhaseSample, "%v", err)
	}
	cfg := sampler.Config{Prefix: prefix, Interval: g.p.Interval, PID: srv.pid, EnginePIDs: []int{srv.pid}, MemoryOut: memPath,
		BootIDFile: g.o.BootIDFile, Logf: logfn, ProbeLatency: g.o.ProbeLatency, Expect: g.p.Expect,
		IntervalSetting: func(d time.Duration) string { return fmt.Sprintf("interval = %q", d.String()) }}
	open := func(ctx context.Context) (sampler.Backend, error) {
		return sampler.Open(ctx, sampler.Options{Kind: g.o.Backend, GPUs: g.p.Selection, Logf: logfn})
	}
	s, err := sampler.New(ctx, cfg, open)
	if err != nil {
		return nil, legFail(PhaseSample, "the sampler did not start: %v", err)
	}
	r := &samplerRun{stopc: make(chan string, 1), done: make(chan struct{})}
	go func() {
		r.res, r.err = s.Run(ctx, r.stopc)
		close(r.done)
	}()
	return r, nil
}

func (r *samplerRun) stop() (*sampler.Result, error) {
	r.stopc <- clocks.StopCommandExit
	<-r.done
	return r.res, r.err
}

// stopServer is step (7): SIGTERM to the server's group, a grace, SIGKILL
// to the group and every process of the leg, all reaped; then the wait for
// the GPUs and the port. It returns the processes it killed, those left,
// and, when something is left, why the grid must stop.
func (g *grid) stopServer(srv *server) (killed, leftover []string, why string) {
	ctx := context.Background()
	pgid := srv.pid
	g.procs.Kill(-pgid, syscall.SIGTERM)
	deadline := time.Now().Add(g.t.stopGrace)
	for time.Now().Before(deadline) {
		if !g.groupAlive(srv, pgid) {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	close(srv.stop)
	// SIGKILL to the group and to every process of the leg, until none
	// is left, each reaped.
	deadline = time.Now().Add(g.t.stopWait)
	for {
		set := g.snapshot(srv)
		g.procs.Kill(-pgid, syscall.SIGKILL)
		alive := 0
		for _, p := range set {
			if p == srv.pid {
				continue
			}
			if g.procs.Alive(p) {
				alive++
				if g.procs.Kill(p, syscall.SIGKILL) == nil {
					d := g.procs.Describe(p)
					if !contains(killed, d) {
						killed = append(killed, d)
					}
				}
			}
		}
		select {
		case <-srv.exited:
		default:
			alive++
		}
		if alive == 0 {
			break
		}
		if !time.Now().Before(deadline) {
			for _, p := range set {
				if g.procs.Alive(p) {
					leftover = append(leftover, g.procs.Describe(p))
				}
			}
			select {
			case <-srv.exited:
			default:
				leftover = append(leftover, g.procs.Describe(srv.pid)+" (the server)")
			}
			// The processes that did die are still waited for (one pass),
			// so that none is left a zombie for an init that may not reap;
			// what that pass cannot collect is named too.
			for _, r := range g.reapLeg(srv, time.Now()) {
				if !namedIn(leftover, r) {
					leftover = append(leftover, r)
				}
			}
			return killed, leftover, fmt.Sprintf("after SIGKILL and %v, processes of the leg are still there: %s", g.t.stopWait, strings.Join(leftover, ", "))
		}
		time.Sleep(20 * time.Millisecond)
	}
	// Every process of the leg that died as clockgate's child (a worker
	// reparented to it, its subreaper) is waited for, so that none is
	// left a zombie for an init that may not reap.
	if left := g.reapLeg(srv, time.Now().Add(g.t.stopWait)); len(left) > 0 {
		return killed, left, fmt.Sprintf("processes of the leg could not be collected (waited for) within %v: %s", g.t.stopWait, strings.Join(left, ", "))
	}
	// A process of the leg outside the grid's tree (it cannot be reaped
	// from here): named, never ignored.
	for _, p := range g.procs.Marked(srv.marker, nil) {
		if g.procs.Alive(p) {
			leftover = append(leftover, g.procs.Describe(p))
		}
	}
	if len(leftover) > 0 {
		return killed, leftover, fmt.Sprintf("processes of the leg outside clockgate's reach are still there: %s", strings.Join(leftover, ", "))
	}
	what, err := g.waitFree(ctx)
	if err != nil {
		return killed, []string{err.Error()}, fmt.Sprintf("the GPUs could not be read after the stop: %v", err)
	}
	if what != "" {
		return killed, []string{what}, fmt.Sprintf("after the stop and %v, the GPUs or the port are still in use: %s", g.t.stopWait, what)
	}
	return killed, nil, ""
}

// reapLeg waits, by pid, for every process of the leg that is or will
// become clockgate's child, until none of the leg is left in the process
// table or the deadline has passed: a process the leg's tracking saw
// (still the same process: its start time unchanged), and any child of
// clockgate in the server's process group (an orphan that exited before
// it was seen). The server itself is os/exec's to wait for, and every
// other child of clockgate (the bench, nvidia-smi) is never waited for
// here: no wait4(-1). It names, with state and parent, what is left.
func (g *grid) reapLeg(srv *server, deadline time.Time) []string {
	self := os.Getpid()
	srv.mu.Lock()
	want := make(map[int]uint64, len(srv.seen))
	for p, start := range srv.seen {
		want[p] = start
	}
	srv.mu.Unlock()
	delete(want, srv.pid)
	for {
		for _, p := range g.procs.Tree(self) {
			if _, ok := want[p]; ok || p == srv.pid {
				continue
			}
			if st, ok := g.procs.Stat(p); ok && st.PPID == self && st.PGID == srv.pid {
				want[p] = st.StartTicks
			}
		}
		var left []int
		for p, start := range want {
			st, ok := g.procs.Stat(p)
			if !ok || st.StartTicks != start {
				delete(want, p) // gone: collected, or by its own parent
				continue
			}
			if st.PPID == self && (st.State == 'Z' || st.State == 'X') {
				g.procs.Reap(p)
				if st2, ok := g.procs.Stat(p); !ok || st2.StartTicks != start {
					delete(want, p)
					continue
				}
			}
			left = append(left, p)
		}
		if len(left) == 0 {
			return nil
		}
		if !time.Now().Before(deadline) {
			sort.Ints(left)
			out := make([]string, 0, len(left))
			for _, p := range left {
				st, _ := g.procs.Stat(p)
				out = append(out, fmt.Sprintf("%s state %c, parent %d", g.procs.Describe(p), st.State, st.PPID))
			}
			return out
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// namedIn reports whether reapLeg's line r (a process described, then
// its state and parent) names a process already among named.
func namedIn(named []string, r string) bool {
	for _, d := range named {
		if strings.HasPrefix(r, d+" state ") {
			return true
		}
	}
	return false
}

func contains(xs []string, x string) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}

// groupAlive reports whether any process of the server's group is alive.
func (g *grid) groupAlive(srv *server, pgid int) bool {
	select {
	case <-srv.exited:
	default:
		return true
	}
	for _, p := range g.snapshot(srv) {
		if g.procs.Alive(p) && g.procs.Group(p) == pgid {
			return true
		}
	}
	return false
}

// commit is step (8): every staged file renamed to its place in the tree,
// each file and directory synced. It returns each file's SHA-256 by its
// path in the tree.
func (g *grid) commit(staging string) (map[string]string, error) {
	var rels []string
	err := filepath.WalkDir(staging, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.Type().IsRegular() {
			rel, _ := filepath.Rel(staging, p)
			rels = append(rels, rel)
		} else if !d.IsDir() {
			return fmt.Errorf("%s: not a regular file", p)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	sort.Strings(rels)
	files := map[string]string{}
	for _, rel := range rels {
		dst := filepath.Join(g.tree, rel)
		if _, err := os.Lstat(dst); err == nil {
			return nil, fmt.Errorf("%s is already in the tree; the leg's evidence was not committed over it", dst)
		}
		src := filepath.Join(staging, rel)
		sum, err := syncFile(src)
		if err != nil {
			return nil, err
		}
		if err := mkdirSync(filepath.Dir(dst), g.tree); err != nil {
			return nil, err
		}
		if err := os.Rename(src, dst); err != nil {
			return nil, err
		}
		if err := syncDir(filepath.Dir(dst)); err != nil {
			return nil, err
		}
		files[filepath.ToSlash(rel)] = sum
	}
	if err := os.RemoveAll(staging); err != nil {
		return nil, err
	}
	return files, nil
}

// syncFile fsyncs a file and returns its SHA-256.
func syncFile(path string) (string, error) {
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	if err := f.Sync(); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// mkdirSync creates dir and its missing parents up to root, syncing each
// parent whose entries changed.
func mkdirSync(dir, root string) error {
	if _, err := os.Stat(dir); err == nil {
		return nil
	}
	parent := filepath.Dir(dir)
	if parent != dir && parent != root {
		if err := mkdirSync(parent, root); err != nil {
			return err
		}
	}
	if err := os.Mkdir(dir, 0o755); err != nil && !errors.Is(err, fs.ErrExist) {
		return err
	}
	return syncDir(parent)
}

// legVerdict is the committed leg's clock verdict, as clockgate check
// judges it: "ok", or its reason codes.
func (g *grid) legVerdict(leg Leg) string {
	base := filepath.Join(g.tree, "clocks", g.p.ModelDir, leg.Engine, fmt.Sprintf("r%d", leg.N))
	l := clocks.LoadLeg(clocks.LegFiles{Name: fmt.Sprintf("r%d", leg.N), Engine: leg.Engine, Run: leg.N,
		RecordPath: sampler.RecordPath(base), StreamPath: sampler.StreamPath(base)})
	if l.Eligible() {
		return "ok"
	}
	return strings.Join(clocks.Codes(l.Reasons), " ")
}

// tailWriter keeps the last n lines written to it.
type tailWriter struct {
	mu    sync.Mutex
	n     int
	lines []string
	part  []byte
}

func newTail(n int) *tailWriter { return &tailWriter{n: n} }

func (t *tailWriter) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.part = append(t.part, p...)
	for {
		i := strings.IndexByte(string(t.part), '\n')
		if i < 0 {
			break
		}
		t.lines = append(t.lines, string(t.part[:i]))
		t.part = t.part[i+1:]
		if len(t.lines) > t.n {
			t.lines = t.lines[len(t.lines)-t.n:]
		}
	}
	if len(t.part) > 64<<10 {
		t.part = t.part[len(t.part)-64<<10:]
	}
	return len(p), nil
}

func (t *tailWriter) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	lines := append([]string(nil), t.lines...)
	if len(t.part) > 0 {
		lines = append(lines, string(t.part))
	}
	if len(lines) > t.n {
		lines = lines[len(lines)-t.n:]
	}
	return strings.Join(lines, "\n")
}

// warmup is step (5): the warmup point, not recorded.
func (g *grid) warmup(ctx context.Context, leg Leg, vars map[string]string, logf io.Writer) *legError {
	if g.p.Bench.HasWarmup {
		g.prog.phase("warmup", "point %s", g.p.Bench.Warmup.Label())
		dir := filepath.Join(g.tree, "grid", "warmup", fmt.Sprintf("%s-r%d", leg.Engine, leg.N))
		os.RemoveAll(dir)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return legFail(PhaseWarmup, "%v", err)
		}
		argv := Expand(g.p.Bench.Command, PointVars(vars, g.p.Bench.Warmup, dir))
		code, err := g.runBench(ctx, argv, logf)
		os.RemoveAll(dir)
		if err != nil {
			return legFail(PhaseWarmup, "%v", err)
		}
		if code != 0 {
			return legFail(PhaseWarmup, "the warmup point %s: %s exited %d (see %s)", g.p.Bench.Warmup.Label(), argv[0], code, logName(logf))
		}
	}
	return nil
}
