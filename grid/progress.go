package grid

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"text/tabwriter"
	"time"
)

// progress says how far the grid is: on a terminal one line, redrawn;
// otherwise one line per event.
type progress struct {
	mu       sync.Mutex
	w        io.Writer
	terminal bool
	now      func() time.Time
	start    time.Time
	// The leg running: k of n, its name, and how many legs were done
	// before this run (for the ETA).
	k, n, doneBefore int
	legName          string
	legStart         time.Time
	drawn            bool
}

func newProgress(w io.Writer, terminal bool, now func() time.Time) *progress {
	if w == nil {
		w = io.Discard
	}
	return &progress{w: w, terminal: terminal, now: now, start: now()}
}

// leg begins leg k of n.
func (p *progress) leg(k, n int, l Leg, done int) {
	p.mu.Lock()
	if p.doneBefore == 0 && p.k == 0 {
		p.doneBefore = done
	}
	p.k, p.n, p.legName, p.legStart = k, n, fmt.Sprintf("%s r%d", l.Engine, l.N), p.now()
	p.mu.Unlock()
	p.phase("start", "block %d", l.Block)
}

// eta is the time left, from the mean time of the legs run so far.
func (p *progress) eta() string {
	ran := p.k - 1 - p.doneBefore
	if ran <= 0 {
		return "ETA —"
	}
	per := p.now().Sub(p.start) / time.Duration(ran)
	return "ETA " + (per * time.Duration(p.n-p.k+1)).Round(time.Second).String()
}

// phase says what the running leg is doing.
func (p *progress) phase(ph, format string, args ...any) {
	p.mu.Lock()
	defer p.mu.Unlock()
	line := fmt.Sprintf("grid: leg %d/%d %s: %s: %s (%s)", p.k, p.n, p.legName, ph, fmt.Sprintf(format, args...), p.eta())
	if p.k == 0 {
		line = fmt.Sprintf("grid: %s: %s", ph, fmt.Sprintf(format, args...))
	}
	if p.terminal {
		fmt.Fprintf(p.w, "\r\x1b[K%s", line)
		p.drawn = true
		return
	}
	fmt.Fprintln(p.w, line)
}

// say prints an event that stays: on a terminal above the redrawn line.
func (p *progress) say(format string, args ...any) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.terminal && p.drawn {
		fmt.Fprint(p.w, "\r\x1b[K")
		p.drawn = false
	}
	fmt.Fprintf(p.w, "grid: %s\n", fmt.Sprintf(format, args...))
}

// end clears the redrawn line.
func (p *progress) end() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.terminal && p.drawn {
		fmt.Fprint(p.w, "\r\x1b[K")
		p.drawn = false
	}
}

// finish prints the verdict table and writes the summarize outputs into
// TREE/grid/summary/.
func (g *grid) finish() error {
	out := g.o.Out
	if out == nil {
		out = io.Discard
	}
	tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "slot\tleg\tblock\tstart °C\twait\tattempts\tclock verdict")
	names := make([]string, 0, len(g.legs))
	byName := map[string]Leg{}
	for _, l := range g.legs {
		names = append(names, l.Name())
		byName[l.Name()] = l
	}
	sort.SliceStable(names, func(i, j int) bool { return byName[names[i]].Slot < byName[names[j]].Slot })
	for _, n := range names {
		l := byName[n]
		v := g.verdicts[n]
		start, wait, tries := "(earlier run)", "", ""
		if v.tries > 0 {
			start, wait, tries = temps(v.temps), (time.Duration(v.wait * float64(time.Second))).Round(time.Second).String(), fmt.Sprint(v.tries)
		}
		fmt.Fprintf(tw, "%d\t%s\t%d\t%s\t%s\t%s\t%s\n", l.Slot, n, l.Block, start, wait, tries, v.verdict)
	}
	tw.Flush()
	if g.o.Summarize == nil {
		return nil
	}
	dir := filepath.Join(g.tree, "grid", "summary")
	if err := g.o.Summarize(g.tree, dir); err != nil {
		return stopped("summarize %s: %v", g.tree, err)
	}
	g.prog.say("summary written to %s", dir)
	return nil
}

// DryRun prints the order the grid would run, with every expanded argv.
func DryRun(w io.Writer, p *Plan, seed int64, seedNote string) {
	legs := Order(p, seed)
	fmt.Fprintf(w, "plan %s (sha256 %s)\n", p.Name, p.SHA256)
	fmt.Fprintf(w, "tree %s\n", p.Tree)
	fmt.Fprintf(w, "order %s", p.Order)
	if p.UsesSeed() {
		fmt.Fprintf(w, ", seed %d%s", seed, seedNote)
	}
	fmt.Fprintf(w, ": %d legs, %d per engine\n", len(legs), p.Repeats)
	for _, l := range legs {
		vars := p.Vars(l)
		eng := p.Engines[l.EngineIndex]
		var pts []string
		for _, pt := range l.Points {
			pts = append(pts, pt.Label())
		}
		fmt.Fprintf(w, "\nleg %d/%d block %d: %s (points %s)\n", l.Slot, len(legs), l.Block, l.Name(), strings.Join(pts, " "))
		if p.Slurm != nil {
			nodes := dryRunNodes(p)
			vars = slurmVars(vars, nodes, p.Port)
			for _, r := range Placement(eng, nodes) {
				rv := map[string]string{"role": r.Name, "nnodes": strconv.Itoa(len(r.nodes))}
				for k, v := range vars {
					rv[k] = v
				}
				fmt.Fprintf(w, "  role %s on %s: serve: %s\n", r.Name, strings.Join(r.nodes, ","), quoteArgv(Expand(r.Serve, rv)))
				if r.Ready != nil {
					fmt.Fprintf(w, "  role %s ready: GET %s, 200 twice in a row within %v\n", r.Name, readyURL(*r.Ready, vars), r.Ready.Timeout)
				}
			}
		} else {
			fmt.Fprintf(w, "  serve: %s\n", quoteArgv(Expand(eng.Serve, vars)))
		}
		if len(eng.Env) > 0 {
			keys := make([]string, 0, len(eng.Env))
			for k := range eng.Env {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			for _, k := range keys {
				fmt.Fprintf(w, "  env: %s=%s\n", k, eng.Env[k])
			}
		}
		if eng.Ready.Path != "" || eng.Ready.URL != "" {
			fmt.Fprintf(w, "  ready: GET %s, 200 twice in a row within %v\n", readyURL(eng.Ready, vars), eng.Ready.Timeout)
		}
		dir := filepath.Join(p.Tree, "grid", "staging", fmt.Sprintf("%s-r%d", l.Engine, l.N), "bench", p.ModelDir, l.Engine, fmt.Sprintf("r%d", l.N))
		if p.Bench.HasWarmup {
			wdir := filepath.Join(p.Tree, "grid", "warmup", fmt.Sprintf("%s-r%d", l.Engine, l.N))
			fmt.Fprintf(w, "  warmup %s: %s\n", p.Bench.Warmup.Label(), quoteArgv(Expand(p.Bench.Command, PointVars(vars, p.Bench.Warmup, wdir))))
		}
		for _, pt := range l.Points {
			fmt.Fprintf(w, "  point %s: %s\n", pt.Label(), quoteArgv(Expand(p.Bench.Command, PointVars(vars, pt, dir))))
		}
	}
}

// quoteArgv writes an argv as a shell would need it.
func quoteArgv(argv []string) string {
	out := make([]string, len(argv))
	for i, a := range argv {
		if a == "" || strings.ContainsAny(a, " \t\n'\"\\$`*?[]{}()<>|&;#~") {
			out[i] = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
		} else {
			out[i] = a
		}
	}
	return strings.Join(out, " ")
}

// readyURL is the URL a ready probes.
func readyURL(r Ready, vars map[string]string) string {
	if r.URL != "" {
		return Expand([]string{r.URL}, vars)[0]
	}
	return vars["base_url"] + r.Path
}

// dryRunNodes are the nodes a dry run of a [slurm] plan shows: the
// allocation's when it runs in one with enough, else NODE1… (the first
// [slurm] nodes of the allocation the grid will run in).
func dryRunNodes(p *Plan) []string {
	if a, err := FindAllocation(p, os.Getenv); err == nil {
		return a.Nodes[:p.Slurm.Nodes]
	}
	nodes := make([]string, p.Slurm.Nodes)
	for i := range nodes {
		nodes[i] = fmt.Sprintf("NODE%d", i+1)
	}
	return nodes
}
