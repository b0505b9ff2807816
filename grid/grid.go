package grid

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"time"

	"github.com/clockgate/clockgate/sampler"
)

// The durations of a leg's gates and stop (SPEC §11.2).
const (
	// IdleRead is how long the GPUs are read at grid start, before any
	// server, for their idle temperature (the median of the reading).
	IdleRead = 30 * time.Second
	// SlopeWindow is the span over which a GPU's temperature slope is
	// fitted before a leg may start.
	SlopeWindow = 30 * time.Second
	// GatePoll is the time between the idle gate's readings.
	GatePoll = time.Second
	// ReadyPoll is the time between readiness probes.
	ReadyPoll = time.Second
	// ReadyStreak is how many 200 answers in a row make a server ready.
	ReadyStreak = 2
	// StopGrace is how long a server's process group has after SIGTERM
	// before it and every descendant are killed.
	StopGrace = 30 * time.Second
	// StopWait bounds each wait of the stop: for the killed processes to
	// go, then for the GPUs to hold no compute process and the port to be
	// free. It bounds the pre-check's wait too.
	StopWait = 60 * time.Second
	// TailLines is how many of a failed server's last lines are quoted.
	TailLines = 20
	// MaxAttempts is how often a leg is tried: a failed leg is tried once
	// more at once, in the same slot; a second failure stops the grid.
	MaxAttempts = 2
)

// timing holds the durations a grid runs with; tests shorten them.
type timing struct {
	idleRead, slopeWindow, gatePoll, readyPoll, stopGrace, stopWait, trackPoll time.Duration
}

// trackPoll is how often the leg's processes are listed while its server
// runs (the stop lists them again, every process below clockgate that
// carries the leg's token, so this only catches one that drops it).
const trackPoll = time.Second

var defaultTiming = timing{IdleRead, SlopeWindow, GatePoll, ReadyPoll, StopGrace, StopWait, trackPoll}

// TimingEnv names the environment variable through which the tests of
// the command shorten the grid's waits ("idle=2s,slope=1s,poll=100ms,
// ready=100ms,grace=2s,wait=5s"). It is for tests only.
const TimingEnv = "CLOCKGATE_GRID_TEST_TIMING"

func timingFrom(env string) (timing, error) {
	t := defaultTiming
	if env == "" {
		return t, nil
	}
	for _, kv := range strings.Split(env, ",") {
		k, v, _ := strings.Cut(kv, "=")
		d, err := time.ParseDuration(v)
		if err != nil {
			return t, fmt.Errorf("%s: %q: %v", TimingEnv, kv, err)
		}
		switch k {
		case "idle":
			t.idleRead = d
		case "slope":
			t.slopeWindow = d
		case "poll":
			t.gatePoll = d
		case "ready":
			t.readyPoll = d
		case "grace":
			t.stopGrace = d
		case "wait":
			t.stopWait = d
		default:
			return t, fmt.Errorf("%s: unknown key %q", TimingEnv, k)
		}
	}
	return t, nil
}

// Exit codes of a grid (SPEC §11.2).
const (
	ExitOK      = 0
	ExitStopped = 1
	ExitUsage   = 2
)

// ExitError is how a grid ends other than by running every leg: Code is
// the command's exit status.
type ExitError struct {
	Code int
	Err  error
}

func (e *ExitError) Error() string { return e.Err.Error() }
func (e *ExitError) Unwrap() error { return e.Err }

func stopped(format string, args ...any) *ExitError {
	return &ExitError{Code: ExitStopped, Err: fmt.Errorf(format, args...)}
}

func usage(format string, args ...any) *ExitError {
	return &ExitError{Code: ExitUsage, Err: fmt.Errorf(format, args...)}
}

// SignalCause is the cause a command cancels the grid's context with when
// it receives a signal: the grid stops the running leg and exits 128+N.
type SignalCause struct{ Sig syscall.Signal }

func (s SignalCause) Error() string { return "interrupted by " + signame(s.Sig) }

func signame(s syscall.Signal) string {
	switch s {
	case syscall.SIGINT:
		return "SIGINT"
	case syscall.SIGTERM:
		return "SIGTERM"
	}
	return s.String()
}

// Options say how to run a grid.
type Options struct {
	Plan *Plan
	// Backend is the sampler's backend kind (sampler.Kinds).
	Backend string
	// Procs is the process control; nil is SystemProcs().
	Procs Procs
	// Out receives the verdict table, ErrOut the progress.
	Out, ErrOut io.Writer
	// Terminal says ErrOut is a terminal: progress is one redrawn line.
	Terminal bool
	// BootIDFile is read for the boot id; "" is sampler.BootIDPath.
	BootIDFile string
	// ProbeLatency, when not zero, stands for the time the sampler's probe
	// reading took (sampler.Config.ProbeLatency): tests on fakes only.
	ProbeLatency time.Duration
	// Summarize writes the summarize outputs of tree into out.
	Summarize func(tree, out string) error
	// BenchTZ is the zone AIPerf's start_time and end_time are written in
	// (grid --bench-tz, as summarize's); nil reads no window from them.
	BenchTZ *time.Location
	// Now is the clock; nil is time.Now.
	Now func() time.Time
	// timing overrides the durations (tests); the zero value is the
	// contract's, or TimingEnv's.
	timing *timing
}

// grid is one run.
type grid struct {
	o       Options
	p       *Plan
	procs   Procs
	t       timing
	now     func() time.Time
	tree    string
	j       *journal
	backend sampler.Backend
	bootID  string
	uuids   []string
	indices []int
	driver  string
	idle    []float64
	seed    *int64
	legs    []Leg
	// history is the idle gate's readings since the last leg stopped.
	history []reading
	prog    *progress
	// verdicts are the committed legs' verdicts, by leg name.
	verdicts map[string]legSummary
	// sl is the allocation a [slurm] grid runs in; nil on this host.
	sl *slurmAlloc
	// labels name each GPU in messages on an allocation ("node3 GPU 0");
	// nil on this host ("GPU 0"). nodeUUIDs are each node's GPUs.
	labels    []string
	nodeUUIDs map[string][]string
}

type legSummary struct {
	leg     Leg
	verdict string
	temps   []float64
	wait    float64
	tries   int
}

// reading is one reading of every GPU's temperature.
type reading struct {
	t time.Time
	c []float64
}

// DrawSeed draws a seed for a plan that names none.
func DrawSeed() int64 {
	var b [8]byte
	if _, err := rand.Read(b[:]); err != nil {
		return time.Now().UnixNano() & (1<<53 - 1)
	}
	return int64(binary.LittleEndian.Uint64(b[:]) & (1<<53 - 1))
}

// Run runs the grid the plan describes, resuming it when the tree's
// journal says it ran before. It returns nil when every leg is committed
// (whatever the verdicts), else an *ExitError.
func Run(ctx context.Context, o Options) error {
	g := &grid{o: o, p: o.Plan, procs: o.Procs, now: o.Now, tree: o.Plan.Tree, verdicts: map[string]legSummary{}}
	if g.procs == nil {
		g.procs = SystemProcs()
	}
	if g.now == nil {
		g.now = time.Now
	}
	if o.timing != nil {
		g.t = *o.timing
	} else {
		t, err := timingFrom(os.Getenv(TimingEnv))
		if err != nil {
			return usage("%v", err)
		}
		g.t = t
	}
	g.prog = newProgress(o.ErrOut, o.Terminal, g.now)
	defer g.prog.end()
	if g.p.Slurm != nil {
		a, err := FindAllocation(g.p, os.Getenv)
		if err != nil {
			return err
		}
		if g.sl, err = newSlurmAlloc(g, a); err != nil {
			return usage("%v", err)
		}
	}
	err := g.run(ctx)
	if g.sl != nil {
		// Every exit path: no step of the grid is left running.
		if ids := g.sl.cancelAll(); len(ids) > 0 {
			g.prog.say("cancelled the grid's steps still running: %s", strings.Join(ids, ", "))
		}
	}
	if g.backend != nil {
		g.backend.Close()
	}
	if g.j != nil {
		g.j.close()
	}
	if err == nil {
		return nil
	}
	var ee *ExitError
	if errors.As(err, &ee) {
		return ee
	}
	return &ExitError{Code: ExitStopped, Err: err}
}

func (g *grid) run(ctx context.Context) error {
	if err := g.procs.Subreaper(); err != nil {
		return stopped("%v: without it a worker whose server died would leave the leg", err)
	}
	bootFile := g.o.BootIDFile
	if bootFile == "" {
		bootFile = sampler.BootIDPath
	}
	id, err := sampler.ReadBootID(bootFile)
	if err != nil {
		return usage("%v", err)
	}
	g.bootID = id
	if g.sl != nil {
		return g.runOn(ctx)
	}
	b, err := sampler.Open(ctx, sampler.Options{Kind: g.o.Backend, GPUs: g.p.Selection, Logf: func(string, ...any) {}})
	if err != nil {
		if errors.Is(err, sampler.ErrSelect) || errors.Is(err, sampler.ErrConfig) {
			return usage("gpus = %q: %v", g.p.GPUs, err)
		}
		return stopped("cannot read the GPUs: %v", err)
	}
	g.backend = b
	return g.runOn(ctx)
}

// runOn runs the grid once the GPUs can be read (on this host, or on the
// allocation's nodes).
func (g *grid) runOn(ctx context.Context) error {
	// The first reading sets the grid's GPUs (their UUIDs) and driver.
	if _, err := g.read(ctx); err != nil {
		return err
	}
	if err := os.MkdirAll(g.tree, 0o755); err != nil {
		return usage("tree %s: %v", g.tree, err)
	}
	events, torn, err := ReadJournal(filepath.Join(g.tree, JournalRel))
	if err != nil {
		return usage("%v", err)
	}
	resume := len(events) > 0
	committed := map[string]bool{}
	tries := map[string]int{}
	if resume {
		if err := g.checkResume(events); err != nil {
			return err
		}
		for _, e := range events {
			name := e.Engine + "/r" + fmt.Sprint(e.N)
			switch e.Event {
			case EvLegCommit:
				committed[name] = true
				g.verdicts[name] = legSummary{verdict: e.Verdict}
			case EvServerStart:
				tries[name]++
			}
		}
	} else {
		if err := g.checkFreshTree(); err != nil {
			return err
		}
		switch {
		case g.p.HasSeed:
			s := g.p.Seed
			g.seed = &s
		case g.p.UsesSeed():
			s := DrawSeed()
			g.seed = &s
		}
	}
	var seed int64
	if g.seed != nil {
		seed = *g.seed
	}
	g.legs = Order(g.p, seed)
	if resume && OrderString(g.legs) != strings.Join(events[0].Legs, " ") {
		return usage("%s: the journal's order is not the plan's: resume refused", filepath.Join(g.tree, JournalRel))
	}
	if g.j, err = openJournal(filepath.Join(g.tree, JournalRel), g.now); err != nil {
		return stopped("journal: %v", err)
	}
	if torn {
		g.prog.say("the journal's last line was cut short (the grid died writing it); it is ignored")
	}
	if !resume {
		if err := g.keepPlan(); err != nil {
			return stopped("keeping the plan in %s: %v", filepath.Join(g.tree, filepath.FromSlash(KeptPlanRel)), err)
		}
		if err := g.precheck(ctx); err != nil {
			return err
		}
		if err := g.idleRead(ctx); err != nil {
			return err
		}
		legs := strings.Fields(OrderString(g.legs))
		if err := g.j.write(Event{Event: EvGridStart, PlanSHA256: g.p.SHA256, Model: g.p.ModelDir, Order: g.p.Order, Seed: g.seed, Legs: legs,
			BootID: g.bootID, GPUUUIDs: g.uuids, Driver: g.driver, IdleTempC: g.idle, SlurmJobID: g.jobID(), Nodes: g.slurmNodes()}); err != nil {
			return stopped("%v", err)
		}
	} else {
		if err := g.quarantine(events, committed); err != nil {
			return err
		}
		if err := g.j.write(Event{Event: EvGridResume, PlanSHA256: g.p.SHA256, BootID: g.bootID, GPUUUIDs: g.uuids, Driver: g.driver, SlurmJobID: g.jobID(), Nodes: g.slurmNodes()}); err != nil {
			return stopped("%v", err)
		}
		g.prog.say("resuming: %d of %d legs committed", len(committed), len(g.legs))
	}
	done := len(committed)
	for i, leg := range g.legs {
		if committed[leg.Name()] {
			continue
		}
		g.prog.leg(i+1, len(g.legs), leg, done)
		var lerr *legError
		for attempt := tries[leg.Name()] + 1; ; attempt++ {
			lerr = g.runLeg(ctx, leg, attempt)
			if lerr == nil {
				break
			}
			g.prog.say("%s attempt %d failed in %s: %s", leg.Name(), attempt, lerr.phase, lerr.cause)
			if lerr.fatal || lerr.signal != 0 || attempt-tries[leg.Name()] >= MaxAttempts {
				break
			}
		}
		if lerr != nil {
			status := "stopped"
			if lerr.signal != 0 {
				status = "interrupted"
			}
			e := Event{Event: EvGridEnd, Status: status}
			if lerr.signal != 0 {
				e.Signal = signame(lerr.signal)
			}
			g.j.write(e)
			if lerr.signal != 0 {
				return &ExitError{Code: 128 + int(lerr.signal), Err: fmt.Errorf("%s: %s; the leg was stopped and its staging kept in %s; run the same command again to resume",
					leg.Name(), signame(lerr.signal), filepath.Join(g.tree, "grid", "failed"))}
			}
			if lerr.code == ExitUsage {
				return &ExitError{Code: ExitUsage, Err: fmt.Errorf("%s: %s: %s", leg.Name(), lerr.phase, lerr.cause)}
			}
			return stopped("the grid stopped at %s (slot %d of %d) in %s: %s", leg.Name(), leg.Slot, len(g.legs), lerr.phase, lerr.cause)
		}
		done++
	}
	if err := g.j.write(Event{Event: EvGridEnd, Status: "done"}); err != nil {
		return stopped("%v", err)
	}
	g.prog.end()
	return g.finish()
}

// read takes one reading of the GPUs, the first of which sets the grid's
// GPU identity.
func (g *grid) read(ctx context.Context) (reading, error) {
	if g.sl != nil {
		return g.readNodes(ctx)
	}
	t := g.now()
	rows, err := g.backend.Read(ctx, t, g.bootID)
	if err != nil {
		return reading{}, stopped("reading the GPUs: %v", err)
	}
	r := reading{t: t}
	var uuids []string
	var idx []int
	for _, s := range rows {
		uuids = append(uuids, s.GPUUUID)
		idx = append(idx, s.GPUIndex)
		if s.TemperatureGPUC == nil {
			return reading{}, stopped("GPU %d (%s) reports no temperature (temperature.gpu): the idle gate cannot run", s.GPUIndex, s.GPUUUID)
		}
		r.c = append(r.c, *s.TemperatureGPUC)
		if g.driver == "" {
			g.driver = s.DriverVersion
		}
	}
	if g.uuids == nil {
		g.uuids, g.indices = uuids, idx
	} else if strings.Join(uuids, ",") != strings.Join(g.uuids, ",") {
		return reading{}, stopped("the GPUs read changed: %s, was %s", strings.Join(uuids, ","), strings.Join(g.uuids, ","))
	}
	return r, nil
}

// checkResume refuses a journal whose grid is not this one: another plan,
// boot, GPU set or driver.
func (g *grid) checkResume(events []Event) error {
	start := events[0]
	jp := filepath.Join(g.tree, JournalRel)
	if start.Event != EvGridStart {
		return usage("%s:1: want a grid.start event first, found %s: not a grid journal", jp, start.Event)
	}
	var changed []string
	kept, err := g.keptPlan(start.PlanSHA256)
	if err != nil {
		return usage("%s: %v", filepath.Join(g.tree, filepath.FromSlash(KeptPlanRel)), err)
	}
	if kept != nil {
		// The plan as parsed, key by key: a comment or the layout may
		// change, a value may not.
		if d := PlanChanges(kept, g.p); len(d) > 0 {
			changed = append(changed, fmt.Sprintf("the plan (%s; it started with %s)", strings.Join(d, "; "), filepath.Join(g.tree, filepath.FromSlash(KeptPlanRel))))
		}
	} else if start.PlanSHA256 != g.p.SHA256 {
		changed = append(changed, fmt.Sprintf("the plan (sha256 %s, the journal's %s; the tree keeps no %s to compare it with key by key)", short(g.p.SHA256), short(start.PlanSHA256), KeptPlanRel))
	}
	if g.sl != nil || len(start.Nodes) > 0 {
		// Positions (node rank, GPU) line up only on the same nodes.
		if strings.Join(start.Nodes, ",") != strings.Join(g.slurmNodes(), ",") {
			return usage("%s: this grid ran on the nodes %s (job %s); this allocation's are %s (job %s): its legs' positions would not line up with new ones; resume it in an allocation of %s (salloc --nodelist=%s), or start a new tree",
				jp, orNone(start.Nodes), orNone([]string{start.SlurmJobID}), orNone(g.slurmNodes()), orNone([]string{g.jobID()}), strings.Join(start.Nodes, ","), strings.Join(start.Nodes, ","))
		}
	}
	if start.BootID != g.bootID {
		changed = append(changed, fmt.Sprintf("the boot (%s, the journal's %s)", g.bootID, start.BootID))
	}
	if strings.Join(start.GPUUUIDs, ",") != strings.Join(g.uuids, ",") {
		changed = append(changed, fmt.Sprintf("the GPU set (%s, the journal's %s)", strings.Join(g.uuids, ","), strings.Join(start.GPUUUIDs, ",")))
	}
	if start.Driver != g.driver {
		changed = append(changed, fmt.Sprintf("the driver (%s, the journal's %s)", g.driver, start.Driver))
	}
	if len(changed) > 0 {
		return usage("%s: this grid cannot be resumed: changed since it started: %s; its committed legs would not be one grid with new ones (start a new tree)", jp, strings.Join(changed, "; "))
	}
	for _, e := range events {
		if e.Event == EvGridEnd && e.Status == "done" {
			g.prog.say("the journal says the grid is done; summarizing it again")
		}
	}
	g.seed = start.Seed
	g.idle = start.IdleTempC
	if len(g.idle) != len(g.uuids) {
		return usage("%s:1: idle_temp_c has %d temperatures for %d GPUs", jp, len(g.idle), len(g.uuids))
	}
	return nil
}

// jobID is the allocation's job id; "" on this host.
func (g *grid) jobID() string {
	if g.sl == nil {
		return ""
	}
	return g.sl.jobID
}

// slurmNodes are the grid's nodes; nil on this host.
func (g *grid) slurmNodes() []string {
	if g.sl == nil {
		return nil
	}
	return g.sl.nodes
}

func orNone(xs []string) string {
	if len(xs) == 0 || len(xs) == 1 && xs[0] == "" {
		return "(none)"
	}
	return strings.Join(xs, ",")
}

func short(s string) string {
	if len(s) > 12 {
		return s[:12]
	}
	return s
}

// checkFreshTree refuses a tree that holds legs and no journal: they are
// not this grid's.
func (g *grid) checkFreshTree() error {
	for _, sub := range []string{"bench", "memory", "clocks"} {
		ents, err := os.ReadDir(filepath.Join(g.tree, sub))
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil || len(ents) > 0 {
			return usage("tree %s already holds %s/ and no grid journal (%s): legs already there are not this grid's; name a new tree", g.tree, sub, JournalRel)
		}
	}
	return nil
}

// quarantine moves what an uncommitted leg left (its staging, and any of
// its files already renamed into the tree) to grid/failed/, and says so in
// the journal: the leg runs again under the same r<N>.
func (g *grid) quarantine(events []Event, committed map[string]bool) error {
	for _, leg := range g.legs {
		if committed[leg.Name()] {
			continue
		}
		var moved []string
		staging := g.stagingDir(leg)
		if _, err := os.Lstat(staging); err == nil {
			dst, err := g.toFailed(leg, staging)
			if err != nil {
				return stopped("%v", err)
			}
			moved = append(moved, dst)
		}
		for _, rel := range g.legTreePaths(leg) {
			src := filepath.Join(g.tree, rel)
			if _, err := os.Lstat(src); err != nil {
				continue
			}
			dst := filepath.Join(g.tree, "grid", "failed", leg.Engine+"-r"+fmt.Sprint(leg.N)+"-tree", rel)
			if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
				return stopped("%v", err)
			}
			if err := os.Rename(src, dst); err != nil {
				return stopped("%v", err)
			}
			moved = append(moved, dst)
		}
		if len(moved) > 0 {
			sort.Strings(moved)
			if err := g.j.write(Event{Event: EvLegFail, Engine: leg.Engine, N: leg.N, Block: leg.Block, Slot: leg.Slot, Phase: "resume",
				Cause: "the leg was not committed when the grid stopped; what it left was moved aside", Staging: strings.Join(moved, " ")}); err != nil {
				return stopped("%v", err)
			}
		}
	}
	return nil
}

// legTreePaths are the paths a leg's evidence takes in the tree.
func (g *grid) legTreePaths(l Leg) []string {
	base := filepath.Join(g.p.ModelDir, l.Engine, fmt.Sprintf("r%d", l.N))
	return []string{
		filepath.Join("clocks", base),
		filepath.Join("bench", base),
		filepath.Join("memory", base+".summary.json"),
		filepath.Join("clocks", base+".samples.jsonl"),
		filepath.Join("clocks", base+".summary.json"),
		filepath.Join("clocks", base+".points.jsonl"),
		filepath.Join("clocks", base+".host.jsonl"),
	}
}

func (g *grid) stagingDir(l Leg) string {
	return filepath.Join(g.tree, "grid", "staging", fmt.Sprintf("%s-r%d", l.Engine, l.N))
}

// toFailed moves a leg's staging to grid/failed/<engine>-r<N>-<k>.
func (g *grid) toFailed(l Leg, staging string) (string, error) {
	dir := filepath.Join(g.tree, "grid", "failed")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	for k := 1; ; k++ {
		dst := filepath.Join(dir, fmt.Sprintf("%s-r%d-%d", l.Engine, l.N, k))
		if _, err := os.Lstat(dst); err == nil {
			continue
		}
		if err := os.Rename(staging, dst); err != nil {
			return "", err
		}
		return dst, syncDir(dir)
	}
}
