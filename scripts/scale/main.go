// Command scale measures clockgate summarize against the floor of reading
// the same bytes. It generates synthetic trees with the project's own
// generator, writes the same streams again in the layouts other recorders
// use, warms the page cache, then times, in one run and side by side, `cat`
// of every file of a tree into /dev/null, `clockgate summarize --json` and
// `clockgate summarize --out`, several times each, and prints a table of
// the least time of each (the run the rest of the machine disturbed
// least), ratios of wall and CPU time, peak RSS and CPU use.
//
//	go run ./scripts/scale                 # every layout at 200 legs × 3,600 samples; the memory shapes
//	go run ./scripts/scale -legs 40 -runs 3 -memory=false   # a quick look
//	go run ./scripts/scale -short          # CI's guard: small trees, bounds that fail on a regression
//	go run ./scripts/scale -runs 7 -curve  # the whole table, then peak RSS of --out at 2,000 to 20,000 legs × 60, in both shapes
//
// With -max-ratio, -max-rss-mib or -short it exits 1 when a measurement
// is past its bound (guard), after printing the table. -short also bounds
// peak RSS of --out, and its growth per leg, on the memory shapes: many
// arms of 20 legs and two arms of many legs (shapes.go).
package main

import (
	"bufio"
	"bytes"
	"cmp"
	"encoding/json"
	"flag"
	"fmt"
	"io/fs"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strings"
	"syscall"
	"time"

	"github.com/clockgate/clockgate/clocks"
	"github.com/clockgate/clockgate/strictjson"
)

// layouts are the ways other recorders write the same samples.
var layouts = []struct {
	name string
	// layout is how a stream line is written again, nil to keep it; eol
	// ends each line.
	layout func(rng *rand.Rand) strictjson.Layout
	eol    string
}{
	{"lines as clockgate sample writes them", nil, "\n"},
	{"keys in another recorder's order", func(*rand.Rand) strictjson.Layout {
		return strictjson.Layout{Order: []string{"gpu_name", "gpu_uuid", "gpu_index", "driver_version", "boot_id", "t",
			"pstate", "persistence_mode", "utilization_gpu_pct", "throttle_reasons_active",
			"clocks_applications_graphics_mhz", "clocks_max_sm_mhz", "sm_clock_mhz"}}
	}, "\n"},
	{`Python json.dumps separators (", ", ": ")`, func(*rand.Rand) strictjson.Layout {
		return strictjson.Layout{Comma: ", ", Colon: ": "}
	}, "\n"},
	{"CRLF line ends", nil, "\r\n"},
	{"key order changing on every line", func(rng *rand.Rand) strictjson.Layout {
		keys := []string{"t", "boot_id", "gpu_index", "gpu_uuid", "gpu_name", "driver_version", "sm_clock_mhz",
			"clocks_max_sm_mhz", "clocks_applications_graphics_mhz", "throttle_reasons_active", "persistence_mode",
			"pstate", "utilization_gpu_pct"}
		rng.Shuffle(len(keys), func(i, j int) { keys[i], keys[j] = keys[j], keys[i] })
		return strictjson.Layout{Order: keys}
	}, "\n"},
}

func relayout(layout func(*rand.Rand) strictjson.Layout) func(*rand.Rand, []byte) []byte {
	return func(rng *rand.Rand, l []byte) []byte {
		lay := layout(rng)
		if out, ok := quickLayout(l, lay); ok {
			return out
		}
		v, err := strictjson.ParseObject(l)
		check(err)
		return strictjson.AppendLayout(nil, v, lay)
	}
}

// quickLayout writes a flat line (no object or array in it, no comma in a
// string) as strictjson.AppendLayout would, without decoding its values:
// the generator's lines are such, and rewriting them is most of -short's
// setup otherwise. ok is false for any other line.
func quickLayout(l []byte, lay strictjson.Layout) (out []byte, ok bool) {
	if len(l) < 2 || l[0] != '{' || l[len(l)-1] != '}' || bytes.ContainsAny(l[1:len(l)-1], "{}[]\\") {
		return nil, false
	}
	parts := bytes.Split(l[1:len(l)-1], []byte(","))
	members := map[string][]byte{}
	var keys []string
	for _, m := range parts {
		k, v, found := bytes.Cut(m, []byte(`":`))
		if !found || len(k) < 2 || k[0] != '"' || bytes.Count(m, []byte(`"`))%2 != 0 {
			return nil, false
		}
		key := string(k[1:])
		if _, dup := members[key]; dup {
			return nil, false
		}
		members[key] = v
		keys = append(keys, key)
	}
	comma, colon := cmp.Or(lay.Comma, ","), cmp.Or(lay.Colon, ":")
	out = append(out, '{')
	written := map[string]bool{}
	for _, k := range append(append([]string(nil), lay.Order...), keys...) {
		v, has := members[k]
		if !has || written[k] {
			continue
		}
		if len(written) > 0 {
			out = append(out, comma...)
		}
		written[k] = true
		out = append(append(append(append(out, '"'), k...), '"'), colon...)
		out = append(out, v...)
	}
	return append(out, '}'), true
}

type result struct {
	tree, what string
	// layout says the tree is one of the layouts, which -max-ratio bounds.
	layout   bool
	bytes    int64
	cat, sum time.Duration
	// cpu and catCPU are the user and system CPU time of clockgate and of
	// cat, which a second job on the machine does not lengthen as it does
	// their wall times.
	cpu, catCPU time.Duration
	rss         int64
}

// cpuRatio is clockgate's CPU time against cat's.
func (r result) cpuRatio() float64 { return r.cpu.Seconds() / r.catCPU.Seconds() }

func main() {
	legs := flag.Int("legs", 200, "legs of the layout trees")
	samples := flag.Int("samples", 3600, "clock samples per leg of the layout trees")
	runs := flag.Int("runs", 5, "timed runs of each command per tree")
	memory := flag.Bool("memory", true, "also measure the memory shapes: 400 legs × 7,200 samples, and 20,000 legs × 60 as arms of 20 legs and as two arms")
	tp := flag.Int("tp", 8, "also measure a tensor-parallel tree of 50 legs × -ticks ticks of this many GPUs against a single-GPU tree of the same bytes (0: not)")
	ticks := flag.Int("ticks", 3600, "ticks per leg of the tensor-parallel tree")
	work := flag.String("work", "", "directory for the trees and binary (default: a temporary one, removed after)")
	short := flag.Bool("short", false, fmt.Sprintf("CI's guard: every layout at %d legs × 3,600 samples, %d runs, and --out on 2,000 legs × 60 for memory, "+
		"with the bounds -max-ratio %v, -max-layout-ratio %v, -max-out-ratio %v and -max-rss-mib %v unless given",
		shortLegs, shortRuns, shortBounds.MaxRatio, shortBounds.MaxLayoutRatio, shortBounds.MaxOutRatio, shortBounds.MaxRSSMiB))
	reportLegs := flag.Int("report-legs", 0, "also measure report.html (size, Chromium's render time, legs drawn one by one) on this many legs × 60 samples as two arms (0: not; -short: 2,000)")
	curve := flag.Bool("curve", false, "also measure peak RSS and time of --out at 2,000, 5,000, 10,000 and 20,000 legs × 60 samples, "+
		"as many arms of 20 legs and as two arms, and the growth per leg")
	sb := shortShapes
	flag.Float64Var(&sb.MaxGrowthKiB, "max-growth-kib", sb.MaxGrowthKiB, "with -short: fail when --out's peak RSS on two arms of many legs grows by more than this many KiB a leg "+
		"from 1,000 legs to 2,000 (0: no bound)")
	hostStreams := flag.Bool("host", true, "also measure the layout trees' first with a host stream beside every stream (SPEC §12.2), bounded by -max-host-ratio")
	maxHostRatio := flag.Float64("max-host-ratio", 0, "fail when the host-stream tree's --json takes more than this many times cat of the same bytes (0: no bound; -short: "+fmt.Sprint(hostBounds.MaxRatio)+")")
	var b bounds
	flag.Float64Var(&b.MaxRatio, "max-ratio", 0, "fail when a layout's --json takes more than this many times cat of the same bytes: the sampler's own layout's when -max-layout-ratio bounds the others, else every layout's (0: no bound)")
	flag.Float64Var(&b.MaxRSSMiB, "max-rss-mib", 0, "fail when any command's peak RSS is more than this many MiB (0: no bound)")
	flag.Float64Var(&b.MaxOutRatio, "max-out-ratio", 0, "fail when any layout's --out uses more than this many times the CPU of its --json (0: no bound)")
	flag.Float64Var(&b.MaxLayoutRatio, "max-layout-ratio", 0, "fail when any layout's --json uses more than this many times the CPU of the sampler's own layout's (0: no bound)")
	flag.Parse()
	if *short {
		set := map[string]bool{}
		flag.Visit(func(f *flag.Flag) { set[f.Name] = true })
		*legs, *samples, *runs, *tp = shortLegs, 3600, shortRuns, 0
		*memory = false
		if !set["report-legs"] {
			*reportLegs = 2000
		}
		if !set["max-ratio"] {
			b.MaxRatio = shortBounds.MaxRatio
		}
		if !set["max-out-ratio"] {
			b.MaxOutRatio = shortBounds.MaxOutRatio
		}
		if !set["max-layout-ratio"] {
			b.MaxLayoutRatio = shortBounds.MaxLayoutRatio
		}
		if !set["max-rss-mib"] {
			b.MaxRSSMiB = shortBounds.MaxRSSMiB
		}
		if !set["max-host-ratio"] {
			*maxHostRatio = hostBounds.MaxRatio
		}
	}

	dir := *work
	if dir == "" {
		d, err := os.MkdirTemp("", "clockgate-scale-*")
		check(err)
		defer os.RemoveAll(d)
		dir = d
	}
	bin := filepath.Join(dir, "clockgate")
	run("go", "build", "-o", bin, "./cmd/clockgate")

	fmt.Println(machine())
	base := generate(dir, *legs, *samples)
	var trees, names []string
	for i, l := range layouts {
		tree := base
		if i > 0 {
			var line func(*rand.Rand, []byte) []byte
			if l.layout != nil {
				line = relayout(l.layout)
			}
			tree = derive(base, fmt.Sprintf("%s-layout%d", base, i), line, l.eol)
		}
		trees, names = append(trees, tree), append(names, l.name)
	}
	// The layouts in turn within each run, so that the guard's comparison
	// of one layout with another sees the same machine.
	results := timeTrees(bin, trees, names, *runs)
	for k := range results {
		results[k].layout = true
	}
	if *hostStreams {
		tree := hostTree(base)
		checkHostTree(bin, tree)
		results = append(results, timeTree(bin, tree, hostTreeName, *runs)...)
	}
	if *short {
		tree := generate(dir, 2000, 60)
		results = append(results, timeTree(bin, tree, "2000 legs × 60 samples", 1)...)
	}
	var growths []growth
	if *short {
		for _, sh := range shapes {
			growths = append(growths, measureGrowth(bin, dir, 60, sh, shortShapeSizes))
		}
	}
	if *memory {
		for _, shape := range [][2]int{{400, 7200}, {20000, 60}} {
			tree := generate(dir, shape[0], shape[1])
			results = append(results, timeTree(bin, tree, fmt.Sprintf("%d legs × %d samples", shape[0], shape[1]), max(1, *runs/2))...)
		}
		few := generateShape(dir, 20000, 60, fewArms)
		results = append(results, timeTree(bin, few, shapeName(20000, 60, fewArms), max(1, *runs/2))...)
	}

	if *tp > 1 {
		single := generate(dir, 50, *ticks**tp)
		results = append(results, timeTree(bin, single, fmt.Sprintf("50 legs × %d samples, one GPU", *ticks**tp), *runs)...)
		multi := severalGPUs(generate(dir, 50, *ticks), *tp)
		results = append(results, timeTree(bin, multi, fmt.Sprintf("50 legs × %d ticks × %d GPUs", *ticks, *tp), *runs)...)
	}

	fmt.Printf("least of %d runs, warm cache\n\n", *runs)
	fmt.Println("| tree | command | bytes | cat (floor) | clockgate | ratio | cores used | CPU: cat | CPU: clockgate | CPU ratio | peak RSS |")
	fmt.Println("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
	for _, r := range results {
		fmt.Printf("| %s | %s | %.0f MiB | %.3f s | %.3f s | %.2f× | %.2f | %.3f s | %.3f s | %.2f× | %.1f MiB |\n", r.tree, r.what,
			float64(r.bytes)/(1<<20), r.cat.Seconds(), r.sum.Seconds(), r.sum.Seconds()/r.cat.Seconds(),
			r.cpu.Seconds()/r.sum.Seconds(), r.catCPU.Seconds(), r.cpu.Seconds(), r.cpuRatio(), float64(r.rss)/1024)
	}
	for i := 0; i+1 < len(results); i += 2 {
		if results[i].tree == results[i+1].tree {
			fmt.Printf("\n%s: --out costs %.2f× --json (CPU %.2f×)", results[i].tree, results[i+1].sum.Seconds()/results[i].sum.Seconds(),
				results[i+1].cpu.Seconds()/results[i].cpu.Seconds())
		}
	}
	fmt.Println()
	if len(growths) > 0 {
		fmt.Println()
		printGrowth(growths)
	}
	if *curve {
		fmt.Println()
		shapeCurve(bin, dir, []int{2000, 5000, 10000, 20000})
		fmt.Println("\nat the end:", machine())
	}
	// The report part: report.html on two arms of many legs.
	var reportBad []string
	if *reportLegs > 0 {
		rr := measureReport(bin, dir, twoArms(generate(dir, *reportLegs, 60), 20), fmt.Sprintf("%d legs × 60 samples as two arms", *reportLegs), *reportLegs, min(*runs, 3))
		printReport(rr)
		if *short {
			rb := shortReportBounds
			fmt.Printf("\nguard: report.html at most %.2f MB, rendered in at most %.2f s beyond a blank page, at most %d legs one by one in a picture\n",
				rb.MaxMB, rb.MaxRenderS, rb.MaxLegsDraw)
			reportBad = rb.check(rr)
			for _, msg := range reportBad {
				fmt.Println("guard: FAILED:", msg)
			}
			if len(reportBad) == 0 {
				fmt.Println("guard: report ok")
			}
		}
	}
	shapesFailed := false
	if len(growths) > 0 {
		fmt.Printf("\nguard on the shapes: --out at %d legs at most %.0f MiB (many arms) and %.0f MiB (two arms), growing at most %.0f and %.0f KiB a leg from %d legs\n",
			shortShapeSizes[1], sb.ManyArmsRSSMiB, sb.MaxRSSMiB, sb.ManyArmsGrowthKiB, sb.MaxGrowthKiB, shortShapeSizes[0])
		bad := sb.check(growths)
		for _, msg := range bad {
			fmt.Println("guard: FAILED:", msg)
		}
		if shapesFailed = len(bad) > 0; !shapesFailed {
			fmt.Println("guard on the shapes: ok")
		}
	}
	if b.MaxRatio > 0 || b.MaxRSSMiB > 0 || b.MaxOutRatio > 0 || b.MaxLayoutRatio > 0 || *maxHostRatio > 0 {
		fmt.Printf("\nguard (0: no bound): on every layout --json at most %.2f× cat (wall) and %.2f× the sampler's own layout (CPU), --out at most %.2f× --json (CPU); peak RSS at most %.0f MiB\n",
			b.MaxRatio, b.MaxLayoutRatio, b.MaxOutRatio, b.MaxRSSMiB)
		if *maxHostRatio > 0 {
			fmt.Printf("guard: --json at most %.2f× cat on the host-stream tree\n", *maxHostRatio)
		}
		bad := b.check(results)
		if *maxHostRatio > 0 {
			bad = append(bad, checkHost(results, *maxHostRatio)...)
		}
		if len(bad) > 0 {
			for _, msg := range bad {
				fmt.Println("guard: FAILED:", msg)
			}
			os.Exit(1)
		}
		fmt.Println("guard: ok")
	}
	if len(reportBad) > 0 || shapesFailed {
		os.Exit(1)
	}
}

// bounds are the guard's: the most a layout's --json may take against
// cat of the same bytes, and the most peak RSS any command may reach.
type bounds struct {
	MaxRatio  float64
	MaxRSSMiB float64
	// MaxOutRatio is the most CPU time a layout's --out may take against
	// its --json in the same run.
	MaxOutRatio float64
	// MaxLayoutRatio is the most CPU time a layout's --json may take
	// against that of the sampler's own layout (the first), the same
	// bytes in the same run: a second job on the machine slows both
	// alike, so this holds each layout's reader to the learned layout's
	// however loaded the machine.
	MaxLayoutRatio float64
}

// shortBounds are -short's bounds, for CI (docs/performance-notes.md).
// -short times each layout at 60 legs × 3,600 samples (103–109 MiB, cat
// 30–60 ms), the layouts in turn within each of 5 runs, and takes the
// least time of each, the run the rest of the machine disturbed least.
// The wall bound against cat stays 4×, and holds the sampler's own
// layout only: on the shared 2-core machine (load average 5–15) the
// layouts read at 3.1–6.5× cat, and a clean CI run read the changing key
// order at 5.15× while the others read at 2.2–3.2×, so each other layout
// is held to the sampler's own by CPU, which the machine's load does not
// move, and through it to cat. The CPU bounds hold however
// loaded the machine, since a second job slows both sides alike: each
// layout's --json took 0.81–1.70× the CPU of the sampler's own layout's
// (the changing key order 1.28–1.70×, 1.93–1.98× before its memo), so 2×
// is 18% above the highest: it fails a reader slower by a few µs a line,
// not the reader of before; --out took 1.19–1.68× the CPU of --json, and
// 2× is 19% above. Its 2,000 legs peak at 53–68 MiB with --out (68–78
// MiB before the traces were spooled); 80 MiB is 18% above the highest,
// room for the collector's timing, and fails a leg that keeps its samples
// (about 20 KiB a leg of 60) or that summary and report holding every leg
// while the pages are written, as before. The growth per leg is held
// exactly, without timing, by summarize's TestLiveMemoryPerLeg.
var shortBounds = bounds{MaxRatio: 4, MaxRSSMiB: 80, MaxOutRatio: 2, MaxLayoutRatio: 2}

// shortLegs and shortRuns are -short's layout trees and runs.
const (
	shortLegs = 60
	shortRuns = 5
)

// check returns a message for every result past a bound.
func (b bounds) check(results []result) []string {
	var bad []string
	var own *result // the sampler's own layout's --json
	for i, r := range results {
		if r.layout && r.what == "--json" && r.tree == layouts[0].name {
			own = &results[i]
		}
	}
	for i, r := range results {
		if j := i - 1; b.MaxOutRatio > 0 && r.what == "--out" && r.layout && j >= 0 && results[j].tree == r.tree && results[j].what == "--json" {
			if ratio := r.cpu.Seconds() / results[j].cpu.Seconds(); ratio > b.MaxOutRatio {
				bad = append(bad, fmt.Sprintf("%s: --out used %.3f s of CPU, %.2f× --json's %.3f s; the bound is %.2f×",
					r.tree, r.cpu.Seconds(), ratio, results[j].cpu.Seconds(), b.MaxOutRatio))
			}
		}
		if b.MaxLayoutRatio > 0 && r.what == "--json" && r.layout && own != nil {
			if ratio := r.cpu.Seconds() / own.cpu.Seconds(); ratio > b.MaxLayoutRatio {
				bad = append(bad, fmt.Sprintf("%s: --json used %.3f s of CPU, %.2f× the sampler's own layout's %.3f s; the bound is %.2f×",
					r.tree, r.cpu.Seconds(), ratio, own.cpu.Seconds(), b.MaxLayoutRatio))
			}
		}
		// The wall bound against cat is the sampler's own layout's when the
		// layouts are bounded by their CPU against it: the other layouts'
		// wall times add only the machine's noise to what that holds.
		ratio := r.sum.Seconds() / r.cat.Seconds()
		walled := b.MaxLayoutRatio == 0 || r.tree == layouts[0].name
		if b.MaxRatio > 0 && r.what == "--json" && r.layout && walled && ratio > b.MaxRatio {
			bad = append(bad, fmt.Sprintf("%s: --json took %.3f s, %.2f× cat's %.3f s of the same bytes; the bound is %.2f×",
				r.tree, r.sum.Seconds(), ratio, r.cat.Seconds(), b.MaxRatio))
		}
		if rss := float64(r.rss) / 1024; b.MaxRSSMiB > 0 && rss > b.MaxRSSMiB {
			bad = append(bad, fmt.Sprintf("%s: %s peaked at %.1f MiB RSS; the bound is %.0f MiB", r.tree, r.what, rss, b.MaxRSSMiB))
		}
	}
	return bad
}

// machine describes where the measurement ran: cores, CPU, load, date.
func machine() string {
	load := "unknown"
	if b, err := os.ReadFile("/proc/loadavg"); err == nil {
		load = strings.Join(strings.Fields(string(b))[:3], " ")
	}
	return fmt.Sprintf("machine: %d cores (GOMAXPROCS %d), %s/%s, %s, %s; load average %s; %s",
		runtime.NumCPU(), runtime.GOMAXPROCS(0), runtime.GOOS, runtime.GOARCH, cpuName(), runtime.Version(), load,
		time.Now().UTC().Format("2006-01-02 15:04 UTC"))
}

// generate writes a tree of legs × samples with the generator, once.
func generate(dir string, legs, samples int) string {
	tree := filepath.Join(dir, fmt.Sprintf("tree-%dx%d", legs, samples))
	if _, err := os.Stat(tree); err != nil {
		fmt.Fprintf(os.Stderr, "generating %d legs × %d samples into %s\n", legs, samples, tree)
		run("go", "run", "./summarize/internal/treegen/cmd/treegen", "-out", tree,
			"-legs", fmt.Sprint(legs), "-samples", fmt.Sprint(samples))
	}
	return tree
}

// derive writes tree again into out, every stream line rewritten by line
// and ended by eol; other files are linked.
func derive(tree, out string, line func(*rand.Rand, []byte) []byte, eol string) string {
	if _, err := os.Stat(out); err == nil {
		return out
	}
	fmt.Fprintf(os.Stderr, "rewriting %s's streams into %s\n", tree, out)
	rng := rand.New(rand.NewSource(1))
	check(filepath.WalkDir(tree, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(tree, p)
		dst := filepath.Join(out, rel)
		if d.IsDir() {
			return os.MkdirAll(dst, 0o755)
		}
		if !strings.HasSuffix(p, ".samples.jsonl") {
			return os.Link(p, dst)
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		var b bytes.Buffer
		sc := bufio.NewScanner(bytes.NewReader(data))
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			l := sc.Bytes()
			if line != nil {
				l = line(rng, l)
			}
			b.Write(l)
			b.WriteString(eol)
		}
		return os.WriteFile(dst, b.Bytes(), 0o644)
	}))
	return out
}

// severalGPUs writes tree again with every stream line repeated once per
// GPU of a tensor-parallel leg of gpus GPUs (each row naming its GPU, the
// same clock), and each record recomputed from its new stream with the
// original's interval and stop reason.
func severalGPUs(tree string, gpus int) string {
	out := fmt.Sprintf("%s-tp%d", tree, gpus)
	if _, err := os.Stat(out); err == nil {
		return out
	}
	fmt.Fprintf(os.Stderr, "writing %s's legs on %d GPUs into %s\n", tree, gpus, out)
	check(rewriteStreams(tree, out, func(p, dst string) error {
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		var b bytes.Buffer
		for _, l := range bytes.SplitAfter(data, []byte("\n")) {
			if len(l) == 0 {
				continue
			}
			v, err := strictjson.ParseObject(bytes.TrimSuffix(l, []byte("\n")))
			if err != nil {
				return fmt.Errorf("%s: %w", p, err)
			}
			uuid := v.Fields["gpu_uuid"].Str
			for g := range gpus {
				v.Fields["gpu_index"] = &strictjson.Value{Kind: strictjson.Number, Raw: fmt.Sprint(g), Num: float64(g)}
				v.Fields["gpu_uuid"] = &strictjson.Value{Kind: strictjson.String, Str: fmt.Sprintf("%s%02d", uuid[:len(uuid)-2], g)}
				b.Write(strictjson.AppendLayout(nil, v, strictjson.Layout{}))
				b.WriteByte('\n')
			}
		}
		if err := os.WriteFile(dst, b.Bytes(), 0o644); err != nil {
			return err
		}
		recPath := strings.TrimSuffix(p, ".samples.jsonl") + ".summary.json"
		old, err := clocks.ReadJSONFile(recPath)
		if err != nil {
			return err
		}
		orig, err := clocks.ParseRecord(old)
		if err != nil {
			return fmt.Errorf("%s: %w", recPath, err)
		}
		f := clocks.NewFold()
		if err := f.FoldStream(bytes.NewReader(b.Bytes()), dst); err != nil {
			return err
		}
		rec, err := f.Record(orig.Window.IntervalS, orig.Window.StopReason)
		if err != nil {
			return err
		}
		recJSON, err := json.Marshal(rec)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(tree, recPath)
		return os.WriteFile(filepath.Join(out, rel), recJSON, 0o644)
	}))
	return out
}

// timeTree times cat, summarize --json and summarize --out of tree,
// alternating them so that all see the same machine.
func timeTree(bin, tree, name string, runs int) []result {
	return timeTrees(bin, []string{tree}, []string{name}, runs)
}

// timeTrees times cat, summarize --json and summarize --out of each tree,
// named by names, all of them in turn within each run, and returns each
// tree's --json and --out results in order.
func timeTrees(bin string, trees, names []string, runs int) []result {
	type timed struct {
		cat  []string
		cmds [][]string
		res  []result
		// cats and catCPUs are cat's times; sums and cpus each command's.
		cats, catCPUs []time.Duration
		sums, cpus    [2][]time.Duration
	}
	ts := make([]*timed, len(trees))
	for i, tree := range trees {
		_, size := listFiles(tree)
		out := tree + "-out"
		// cat of every file, the floor; xargs splits the list where a tree
		// has more files than one command line holds.
		t := &timed{
			cat:  []string{"sh", "-c", `find "$1" -type f -print0 | sort -z | xargs -0 cat > /dev/null`, "cat", tree},
			cmds: [][]string{{bin, "summarize", "--json", tree}, {bin, "summarize", "--out", out, tree}},
			res:  []result{{tree: names[i], what: "--json", bytes: size}, {tree: names[i], what: "--out", bytes: size}},
		}
		measure(t.cat) // warm the cache
		for _, c := range t.cmds {
			measure(c)
		}
		ts[i] = t
	}
	for range runs {
		for _, t := range ts {
			m := measure(t.cat)
			t.cats, t.catCPUs = append(t.cats, m.wall), append(t.catCPUs, m.cpu)
			for k, c := range t.cmds {
				m := measure(c)
				t.sums[k], t.cpus[k] = append(t.sums[k], m.wall), append(t.cpus[k], m.cpu)
				t.res[k].rss = max(t.res[k].rss, m.maxRSS)
			}
		}
	}
	var results []result
	for _, t := range ts {
		for k := range t.cmds {
			t.res[k].cat, t.res[k].sum, t.res[k].cpu, t.res[k].catCPU = least(t.cats), least(t.sums[k]), least(t.cpus[k]), least(t.catCPUs)
		}
		results = append(results, t.res...)
	}
	return results
}

type measurement struct {
	wall, cpu time.Duration
	maxRSS    int64 // KiB
}

func measure(args []string) measurement {
	cmd := exec.Command(args[0], args[1:]...)
	devnull, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	check(err)
	defer devnull.Close()
	cmd.Stdout, cmd.Stderr = devnull, os.Stderr
	start := time.Now()
	if err := cmd.Run(); err != nil {
		// summarize exits 0 on a judged tree; anything else is a failure here.
		check(fmt.Errorf("%s: %w", strings.Join(args[:min(len(args), 3)], " "), err))
	}
	wall := time.Since(start)
	ru := cmd.ProcessState.SysUsage().(*syscall.Rusage)
	return measurement{wall: wall, cpu: cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime(), maxRSS: ru.Maxrss}
}

func listFiles(root string) ([]string, int64) {
	var files []string
	var size int64
	check(filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		files, size = append(files, p), size+info.Size()
		return nil
	}))
	sort.Strings(files)
	return files, size
}

// least is the shortest of ds: the run the rest of the machine disturbed
// least, the closest to what the command itself costs.
func least(ds []time.Duration) time.Duration {
	return slices.Min(ds)
}

func cpuName() string {
	b, err := os.ReadFile("/proc/cpuinfo")
	if err != nil {
		return "unknown CPU"
	}
	for _, line := range strings.Split(string(b), "\n") {
		if name, ok := strings.CutPrefix(line, "model name"); ok {
			return strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(name), ":"))
		}
	}
	return "unknown CPU"
}

func run(name string, args ...string) {
	cmd := exec.Command(name, args...)
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	check(cmd.Run())
}

func check(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, "scale:", err)
		os.Exit(1)
	}
}

// rewriteStreams writes tree again into out: every file linked but the
// clock streams and their records, each stream (p, to be written at dst)
// given to stream, which writes it and its record.
func rewriteStreams(tree, out string, stream func(p, dst string) error) error {
	return filepath.WalkDir(tree, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(tree, p)
		dst := filepath.Join(out, rel)
		switch {
		case d.IsDir():
			return os.MkdirAll(dst, 0o755)
		case strings.HasSuffix(p, ".summary.json") && strings.HasPrefix(rel, "clocks"+string(filepath.Separator)):
			return nil // the clock record, written with its stream
		case !strings.HasSuffix(p, ".samples.jsonl"):
			return os.Link(p, dst)
		}
		return stream(p, dst)
	})
}
