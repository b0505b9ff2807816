package grid

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"time"

	"github.com/clockgate/clockgate/multileg"
)

// runLegSlurm is steps (3) to (8) of a leg on the allocation: each
// role's server a step, readiness, the warmup, the sampler step over
// every node around the marked points (leg init, wait, close), the stop
// of every step, the commit. The driver around it (order, journal,
// retries, resume) is the grid's, unchanged.
func (g *grid) runLegSlurm(ctx context.Context, leg Leg, attempt int, eng Engine, vars map[string]string, staging string, logf io.Writer,
	jl func(Event) *legError, fail func(*legError) *legError, tc []float64, ws float64) *legError {
	ss, err := g.sl.startServers(eng, leg, attempt, vars, logf)
	if err != nil {
		return fail(&legError{phase: PhaseStart, cause: err.Error()})
	}
	if le := jl(Event{Event: EvServerStart, Steps: ss.ids(), Nodes: g.sl.nodes}); le != nil {
		g.sl.stopServers(ss)
		return le
	}
	bodyErr := g.legBodySlurm(ctx, leg, attempt, eng, ss, staging, logf, vars, jl)
	// (7) Stop, whatever happened.
	g.prog.phase("stop", "stopping the server steps %s", strings.Join(ss.ids(), ", "))
	killed, leftover, stopErr := g.sl.stopServers(ss)
	if le := jl(Event{Event: EvServerStop, Steps: ss.ids(), Killed: killed, Leftover: leftover}); le != nil {
		return le
	}
	if stopErr != "" {
		cause := stopErr
		if bodyErr != nil {
			cause = bodyErr.cause + "; then " + stopErr
		}
		return fail(&legError{phase: PhaseStop, cause: cause, fatal: true})
	}
	if len(killed) > 0 {
		g.prog.say("%s: killed after SIGINT and %v: %s", leg.Name(), g.t.stopGrace, strings.Join(killed, ", "))
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
	verdict := g.legVerdictDir(leg)
	if le := jl(Event{Event: EvLegCommit, Files: files, Verdict: verdict}); le != nil {
		return le
	}
	g.verdicts[leg.Name()] = legSummary{leg: leg, verdict: verdict, temps: tc, wait: ws, tries: attempt}
	g.prog.say("%s committed: %s", leg.Name(), verdict)
	return nil
}

// legBodySlurm is steps (4) to (6) on the allocation.
func (g *grid) legBodySlurm(ctx context.Context, leg Leg, attempt int, eng Engine, ss *slurmServer, staging string, logf io.Writer, vars map[string]string, jl func(Event) *legError) *legError {
	g.prog.phase("ready", "waiting for the servers of %s", eng.Name)
	if le := g.waitReadySlurm(ctx, eng, ss, vars); le != nil {
		return le
	}
	if le := jl(Event{Event: EvServerReady, Steps: ss.ids()}); le != nil {
		return le
	}
	if le := g.warmup(ctx, leg, vars, logf); le != nil {
		return le
	}
	dir := g.legDir(staging, leg)
	benchDir := filepath.Join(staging, "bench", g.p.ModelDir, leg.Engine, fmt.Sprintf("r%d", leg.N))
	if err := os.MkdirAll(benchDir, 0o755); err != nil {
		return legFail(PhaseSample, "%v", err)
	}
	smp, le := g.sl.startSamplers(ctx, eng, leg, attempt, dir, ss.marker, logf)
	if le != nil {
		return le
	}
	pointsErr := g.runPoints(ctx, leg, vars, filepath.Join(dir, multileg.PointsName), taskNode(), benchDir, logf)
	serr := g.sl.stopSamplers(smp)
	if pointsErr != nil {
		return pointsErr
	}
	if serr != nil {
		return legFail(PhaseSample, "%v", serr)
	}
	// leg close: every node wrote its record; the leg's memory record.
	if err := g.sl.clockgate(context.Background(), logf, "leg", "close", dir); err != nil {
		return legFail(PhaseSample, "%v", err)
	}
	return nil
}

// probe is one readiness URL of an engine on the allocation.
type probe struct {
	url     string
	timeout time.Duration
	streak  int
	last    string
}

// waitReadySlurm is step (4) on the allocation: every role's ready (and
// the engine's) answers 200 ReadyStreak times in a row, each within its
// timeout; a server step ending first fails the leg with its last lines.
func (g *grid) waitReadySlurm(ctx context.Context, eng Engine, ss *slurmServer, vars map[string]string) *legError {
	url := func(r Ready) string {
		if r.URL != "" {
			return Expand([]string{r.URL}, vars)[0]
		}
		return vars["base_url"] + r.Path
	}
	var probes []*probe
	for _, r := range eng.Roles {
		if r.Ready != nil {
			probes = append(probes, &probe{url: url(*r.Ready), timeout: r.Ready.Timeout, last: "no answer yet"})
		}
	}
	if eng.Ready.Path != "" || eng.Ready.URL != "" {
		probes = append(probes, &probe{url: url(eng.Ready), timeout: eng.Ready.Timeout, last: "no answer yet"})
	}
	client := &http.Client{Timeout: max(g.t.readyPoll, 500*time.Millisecond)}
	start := time.Now()
	for {
		for _, st := range ss.steps {
			select {
			case <-st.exited:
				return legFail(PhaseReady, "the server step %s (role %s on %s) %s before it was ready; its last %d lines:\n%s",
					st.id, st.role, strings.Join(st.nodes, ","), st.status, TailLines, st.tail.String())
			default:
			}
		}
		ready := true
		for _, p := range probes {
			if p.streak >= ReadyStreak {
				continue
			}
			req, _ := http.NewRequestWithContext(ctx, http.MethodGet, p.url, nil)
			resp, err := client.Do(req)
			if err == nil {
				resp.Body.Close()
				p.last = resp.Status
				if resp.StatusCode == http.StatusOK {
					p.streak++
				} else {
					p.streak = 0
				}
			} else {
				p.last, p.streak = err.Error(), 0
			}
			if p.streak < ReadyStreak {
				ready = false
				if time.Since(start) > p.timeout {
					var tails []string
					for _, st := range ss.steps {
						tails = append(tails, fmt.Sprintf("role %s (step %s):\n%s", st.role, st.id, st.tail.String()))
					}
					return legFail(PhaseReady, "%s did not answer 200 %d times in a row within ready.timeout %v (last: %s); the servers' last %d lines: %s",
						p.url, ReadyStreak, p.timeout, p.last, TailLines, strings.Join(tails, "\n"))
				}
			}
		}
		if ready {
			return nil
		}
		if ctx.Err() != nil {
			return legFail(PhaseReady, "waiting for the servers' readiness")
		}
		sleep(ctx, g.t.readyPoll)
	}
}

var codeRE = regexp.MustCompile(`\b(?:clock|bench|memory|energy|host)\.[a-z_]+\b`)

// legVerdictDir is a committed multi-host leg's clock verdict, as
// clockgate check DIR judges it: "ok", or its reason codes.
func (g *grid) legVerdictDir(leg Leg) string {
	dir := filepath.Join(g.tree, "clocks", g.p.ModelDir, leg.Engine, fmt.Sprintf("r%d", leg.N))
	out, err := exec.Command(g.sl.exe, "check", dir).CombinedOutput()
	if err == nil {
		return "ok"
	}
	seen := map[string]bool{}
	var codes []string
	for _, c := range codeRE.FindAllString(string(out), -1) {
		if !seen[c] {
			seen[c] = true
			codes = append(codes, c)
		}
	}
	sort.Strings(codes)
	if len(codes) == 0 {
		return "not checked: " + lastLines(strings.TrimSpace(string(out)), 1)
	}
	return strings.Join(codes, " ")
}
