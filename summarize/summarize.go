// Package summarize walks an evidence tree, reads every leg's bench, memory
// and clock evidence, merges legs into arms and builds every ratio of an
// engine against the baseline engine.
//
// The tree:
//
//	TREE/
//	  bench/<model>/<engine>/r<N>/<point>.json     throughput: vLLM or SGLang results, one or more points per file
//	  memory/<model>/<engine>/r<N>.summary.json    memory record
//	  clocks/<model>/<engine>/r<N>.samples.jsonl   clock stream, one sample per line
//	  clocks/<model>/<engine>/r<N>.summary.json    clock record
//
// The set of legs is the union over the three subtrees; evidence missing in
// one is a reason on the leg. Files the walk does not recognise are
// warnings. Nothing in the tree is modified.
package summarize

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/clockgate/clockgate/benchfmt"
	"github.com/clockgate/clockgate/clocks"
	"github.com/clockgate/clockgate/ratio"
)

// The leg-level bench and memory reason codes.
const (
	CodeBenchMissing   = clocks.CodeBenchMissing
	CodeBenchInvalid   = clocks.CodeBenchInvalid
	CodeFailedRequests = clocks.CodeFailedRequests
	CodeMemoryMissing  = clocks.CodeMemoryMissing
	CodeMemoryInvalid  = clocks.CodeMemoryInvalid
)

// DefaultBaseline is the engine every other engine is compared against
// unless told otherwise.
const DefaultBaseline = "vllm"

// Options say how to summarize a tree.
type Options struct {
	// Baseline is the baseline engine; every other engine of a model is
	// compared against it.
	Baseline string
	// AllowCrossBoot waives boot identity, and nothing else, at the arm
	// fold and at the ratio; each waived check becomes a caveat.
	AllowCrossBoot bool
	// Progress, when not nil, is told after each leg is read how far the
	// reading has come. Calls never overlap.
	Progress func(Progress)
	// Out is the directory the outputs will be written to (summarize
	// --out), or "". When it lies inside TREE the walk skips it, whatever
	// it holds, and the directories on the way to it that hold nothing
	// else, without a warning: a run that creates it, or finds it empty,
	// reads the tree as the next run does, so both give the same bytes.
	Out string
	// Traces asks for each trusted leg's clock over time, reduced for a
	// picture (clocks.Trace), read in the same pass as its verdict.
	Traces bool
	// TraceSpool, when not nil, receives each leg's traces as the leg is
	// judged (clocks.TraceSpool.Put), so that no leg's points stay in
	// memory until its picture is drawn.
	TraceSpool *clocks.TraceSpool
	// Rows receives every leg's all-runs.json row as the leg is read, in
	// leg order, so that no leg's bench and memory objects stay in memory;
	// WriteAllRuns reads them back. nil keeps them in memory;
	// DiscardRows drops them, for a summary whose all-runs.json is not
	// wanted.
	Rows io.ReadWriteSeeker
	// BenchTZ is the zone AIPerf's start_time and end_time were written in
	// (summarize --bench-tz); nil places no window from them.
	BenchTZ *time.Location
}

// Progress is how far reading a tree has come. Bytes count the clock
// streams, which are nearly all of a tree's bytes.
type Progress struct {
	LegsDone, LegsTotal   int
	BytesDone, BytesTotal int64
}

// Leg is one (model, engine, run): its evidence and its verdict.
type Leg struct {
	Model  string
	Engine string
	Run    int
	// Clock is the leg's clock evidence and verdict.
	Clock *clocks.Leg
	// Reasons hold every reason of the leg: the clock ones, then bench,
	// then memory.
	Reasons []clocks.Reason
	// Points are the leg's valid bench points in increasing
	// max_concurrency, then request_rate; one per point: what ratios and
	// reports read of each.
	Points []LegPoint
	// bench are the same points as read, every field and the object as
	// written, until the leg's all-runs.json row is written (row); nil
	// after.
	bench []Point
	// BenchFormats are the formats of the leg's bench results, sorted:
	// FormatVLLM, FormatVLLMLegacy, FormatSGLang.
	BenchFormats []string
	// benchWarnings name the leg's bench files that are not results.
	benchWarnings []string
	// Memory is the leg's memory record; nil when missing or invalid.
	Memory *Memory
}

// LegPoint is what a leg keeps of a bench point once its all-runs.json
// row is written: the point's identity and numbers, and the format and
// client version of the result it came from. A point as read (Point)
// holds its file's name, date and window besides, which only reading the
// leg uses: about half as much again, a leg of four points 0.6 KiB, held
// for every leg of a tree until the arms are compared.
type LegPoint struct {
	ratio.BenchPoint
	// Format is the writer of the point's result (Point.Format).
	Format string
	// ClientVersion is the version of the client that wrote it
	// (Point.ClientVersion).
	ClientVersion string
}

// Name is the leg's run label, "r<N>".
func (l *Leg) Name() string { return "r" + strconv.Itoa(l.Run) }

// BindingEligible reports whether the leg carries no reason at all.
func (l *Leg) BindingEligible() bool { return len(l.Reasons) == 0 }

// Summary is a summarized tree: every leg, every comparison, and every
// warning, in a fixed order.
type Summary struct {
	// Root is TREE as given. It is never written into an output.
	Root           string
	Baseline       string
	AllowCrossBoot bool
	Contract       clocks.Contract
	// Legs are sorted by model, engine, then run number.
	Legs []*Leg
	// Comparisons are sorted by model, then engine.
	Comparisons []*ratio.Comparison
	// Warnings name each file or directory the walk did not use, and each
	// model that could not be compared.
	Warnings []string
	// GatePass is true when there is at least one comparison and every
	// ratio is binding-eligible.
	GatePass bool
	// Grid is what clockgate grid's journal says of how the tree was
	// run; nil when the tree has no journal.
	Grid *GridBlock
	// rows holds all-runs.json's leg rows, as Options.Rows says.
	rows io.ReadWriteSeeker
	// released counts the legs ReleaseLegs let go of.
	released int
}

// ErrNoBaseline says no baseline engine was named.
var ErrNoBaseline = errors.New("no baseline engine named")

// Summarize walks the tree at root and builds its summary. The error is for
// a tree that cannot be read at all, or a directory in it that is a
// symbolic link leaving it; defects of the evidence are reasons and
// warnings, never errors. It begins with root.
func Summarize(root string, opts Options) (*Summary, error) {
	if opts.Baseline == "" {
		return nil, ErrNoBaseline
	}
	if strings.ContainsRune(opts.Baseline, '/') {
		return nil, fmt.Errorf("baseline engine %q: want a single path segment; name an engine directory, bench/<model>/<engine>", opts.Baseline)
	}
	w, err := walk(root, opts.Out)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", root, err)
	}
	w.benchOpt = benchfmt.Options{BenchTZ: opts.BenchTZ}
	s := &Summary{Root: root, Baseline: opts.Baseline, AllowCrossBoot: opts.AllowCrossBoot,
		Contract: clocks.InForce(), Legs: []*Leg{}, Comparisons: []*ratio.Comparison{}, rows: opts.Rows}
	if s.rows == nil {
		s.rows = &memRows{}
	}
	if s.Legs, err = w.loadAll(w.sortedLegs(), opts, s.rows); err != nil {
		return nil, err
	}
	s.Warnings = append([]string{}, w.warnings...)
	for _, l := range s.Legs {
		s.Warnings = append(s.Warnings, l.benchWarnings...)
	}
	grid, gw := readGrid(w.root, s.Legs)
	s.Grid = grid
	s.Warnings = append(s.Warnings, gw...)
	if err := s.compare(); err != nil {
		return nil, err
	}
	s.GatePass = ratio.GatePass(s.Comparisons)
	// The arms are merged and compared: what is left of each fold is what
	// the reports print and draw.
	for _, l := range s.Legs {
		if l.Clock.Fold != nil {
			l.Clock.Fold.Shed()
		}
		l.Clock.BenchPoints = nil
	}
	return s, nil
}

// ReleaseLegs lets go of every leg, once all that reads them is done (a
// report's document is built): Legs is nil after, and Arm finds no leg.
// summary.json and all-runs.json are written as before, since neither
// reads a leg (all-runs.json's rows were written as the legs were read):
// a tree of many legs then writes its pages without holding their
// evidence and verdicts twice.
func (s *Summary) ReleaseLegs() {
	s.released += len(s.Legs)
	s.Legs = nil
}

// Ratios counts the binding-eligible ratios and all ratios.
func (s *Summary) Ratios() (binding, total int) {
	for _, c := range s.Comparisons {
		total += 2
		if c.Throughput.BindingEligible {
			binding++
		}
		if c.Memory.BindingEligible {
			binding++
		}
	}
	return binding, total
}

// Arm returns the legs of one (model, engine), in run order.
func (s *Summary) Arm(model, engine string) []*Leg {
	var out []*Leg
	for _, l := range s.Legs {
		if l.Model == model && l.Engine == engine {
			out = append(out, l)
		}
	}
	return out
}

// compare builds every comparison: per model, each engine other than the
// baseline against the baseline.
func (s *Summary) compare() error {
	var models []string
	engines := map[string][]string{}
	for _, l := range s.Legs {
		es, seen := engines[l.Model]
		if !seen {
			models = append(models, l.Model)
		}
		if len(es) == 0 || es[len(es)-1] != l.Engine {
			engines[l.Model] = append(es, l.Engine)
		}
	}
	seenWarning := map[string]bool{}
	for _, m := range models {
		var others []string
		hasBase := false
		for _, e := range engines[m] {
			if e == s.Baseline {
				hasBase = true
			} else {
				others = append(others, e)
			}
		}
		switch {
		case !hasBase:
			s.Warnings = append(s.Warnings, fmt.Sprintf("model %s: no baseline arm %s (found %s); not compared: measure %s on this model too, or name another baseline engine (--baseline)",
				m, s.Baseline, strings.Join(others, ", "), s.Baseline))
			continue
		case len(others) == 0:
			s.Warnings = append(s.Warnings, fmt.Sprintf("model %s: only the baseline arm %s; nothing to compare", m, s.Baseline))
			continue
		}
		base := s.ratioArm(m, s.Baseline)
		for _, e := range others {
			c, err := ratio.Compare(m, s.ratioArm(m, e), base, s.AllowCrossBoot)
			if err != nil {
				return err
			}
			c.BenchClients = s.benchClients(m, e)
			s.Comparisons = append(s.Comparisons, c)
			for _, w := range c.Warnings {
				if !seenWarning[w] {
					seenWarning[w] = true
					s.Warnings = append(s.Warnings, w)
				}
			}
		}
	}
	return nil
}

// benchClients names each arm's bench clients and versions, when either
// arm's results were written by a client other than vLLM's or SGLang's.
func (s *Summary) benchClients(model, engine string) *ratio.BenchClients {
	other := false
	name := func(engine string) string {
		seen := map[string]bool{}
		var out []string
		for _, l := range s.Arm(model, engine) {
			for _, p := range l.Points {
				c := benchfmt.Family(p.Format)
				other = other || c != benchfmt.FormatVLLM
				if p.ClientVersion != "" {
					c += " " + p.ClientVersion
				}
				if !seen[c] {
					seen[c] = true
					out = append(out, c)
				}
			}
		}
		sort.Strings(out)
		return strings.Join(out, ", ")
	}
	bc := &ratio.BenchClients{Ours: name(engine), Baseline: name(s.Baseline)}
	if !other {
		return nil
	}
	return bc
}

func (s *Summary) ratioArm(model, engine string) ratio.Arm {
	a := ratio.Arm{Engine: engine}
	for _, l := range s.Arm(model, engine) {
		rl := &ratio.Leg{Clock: l.Clock, Reasons: l.Reasons}
		families := map[string]bool{}
		for _, p := range l.Points {
			rl.Points = append(rl.Points, p.BenchPoint)
			if f := benchfmt.Family(p.Format); !families[f] {
				families[f] = true
				rl.Clients = append(rl.Clients, f)
			}
		}
		sort.Strings(rl.Clients)
		if l.Memory != nil {
			v := l.Memory.PeakGPUMemoryMiB
			rl.PeakGPUMemoryMiB = &v
		}
		a.Legs = append(a.Legs, rl)
	}
	return a
}

// loadAll reads and judges every leg, on as many cores as there are, and
// returns them in the order of keys. Each leg's all-runs.json row is
// written to rows, in that order, as soon as the legs before it are;
// the leg then keeps only what ratios and reports need.
func (w *walker) loadAll(keys []legKey, opts Options, rows io.ReadWriteSeeker) ([]*Leg, error) {
	progress := opts.Progress
	legs := make([]*Leg, len(keys))
	var (
		mu   sync.Mutex
		p    = Progress{LegsTotal: len(keys)}
		size = make([]int64, len(keys))
	)
	if progress != nil {
		for i, k := range keys {
			if rel := w.legs[k].stream; rel != "" {
				if st, err := os.Stat(w.abs(rel)); err == nil && st.Mode().IsRegular() {
					size[i] = st.Size()
					p.BytesTotal += size[i]
				}
			}
		}
	}
	// Each leg's file names, in the order of keys, and the walk's map let
	// go of: a worker drops a leg's entry once the leg is read, so that a
	// tree of many legs does not hold their names (nor the map's entries)
	// until the last leg is read.
	files := make([]*legFiles, len(keys))
	for i, k := range keys {
		files[i] = w.legs[k]
	}
	w.legs = nil
	workers := min(runtime.GOMAXPROCS(0), len(keys))
	// A leg is begun only when a token is free, and a token is freed when
	// a row is written: the rows waiting for an earlier leg stay few,
	// whatever order the legs end in.
	tokens := make(chan struct{}, 4*workers+4)
	type done struct {
		i   int
		row []byte
		err error
	}
	results := make(chan done, cap(tokens))
	var next atomic.Int64
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for {
				tokens <- struct{}{}
				i := int(next.Add(1) - 1)
				if i >= len(keys) {
					<-tokens
					return
				}
				l := w.load(keys[i], files[i], opts.Traces)
				files[i] = nil
				var row []byte
				var err error
				if rows != DiscardRows {
					row, err = l.row()
				} else {
					l.dropRaw()
				}
				if err == nil {
					err = spoolTraces(l, opts.TraceSpool)
				}
				legs[i] = l
				results <- done{i, row, err}
				if progress != nil {
					mu.Lock()
					p.LegsDone++
					p.BytesDone += size[i]
					progress(p)
					mu.Unlock()
				}
			}
		})
	}
	go func() { wg.Wait(); close(results) }()
	pending := map[int][]byte{}
	var firstErr error
	flushed := 0
	for d := range results {
		if d.err != nil && firstErr == nil {
			firstErr = d.err
		}
		pending[d.i] = d.row
		for row, ok := pending[flushed]; ok; row, ok = pending[flushed] {
			delete(pending, flushed)
			if firstErr == nil {
				sep := ",\n"
				if flushed == 0 {
					sep = ""
				}
				if _, err := io.WriteString(rows, sep); err != nil {
					firstErr = rowsErr(err)
				} else if _, err := rows.Write(row); err != nil {
					firstErr = rowsErr(err)
				}
			}
			flushed++
			<-tokens
		}
	}
	return legs, firstErr
}

// spoolTraces puts the leg's traces in spool, if there is one.
func spoolTraces(l *Leg, spool *clocks.TraceSpool) error {
	if spool == nil || l.Clock.Fold == nil {
		return nil
	}
	for _, g := range l.Clock.Fold.GPUs {
		if err := spool.Put(g.Trace); err != nil {
			return fmt.Errorf("the clock pictures' traces: %w", unwrapPath(err))
		}
	}
	return nil
}

// rowsErr is a failed write of all-runs.json's leg rows, without the
// name of the temporary file they go to, which no one sees.
func rowsErr(err error) error {
	return fmt.Errorf("all-runs.json's leg rows: %w", unwrapPath(err))
}

// load reads and judges one leg's evidence. It only reads the walker, so
// legs load concurrently.
func (w *walker) load(k legKey, lf *legFiles, trace bool) *Leg {
	l := &Leg{Model: k.model, Engine: k.engine, Run: k.run}
	base := path.Join(k.model, k.engine, l.Name())
	// The bench points first: their dates are windows the stream's fold
	// counts in the same pass.
	bench := w.loadBench(l, base, lf)
	files := clocks.LegFiles{Name: l.Name(), Engine: k.engine, Run: k.run, Root: w.root,
		RecordPath: path.Join(subtreeClocks, base) + recordSuffix,
		StreamPath: path.Join(subtreeClocks, base) + streamSuffix, Trace: trace,
		Points: w.pointEvidence(l, lf)}
	l.Clock = w.loadClock(files, lf)
	l.Reasons = append(l.Reasons, l.Clock.Reasons...)
	l.Clock.BenchPoints = map[string]bool{}
	for _, p := range l.Points {
		l.Clock.BenchPoints[p.ID.Label()] = true
	}
	if ev := files.Points; ev != nil && ev.MarksPath != "" {
		named := map[string]bool{}
		for _, m := range ev.Marks {
			if !l.Clock.BenchPoints[m.Point] && !named[m.Point] {
				named[m.Point] = true
				l.benchWarnings = append(l.benchWarnings, fmt.Sprintf("%s/%s/%s: %s marks point %s, which no bench file of the leg has: a mislabelled mark (--point), or a point whose result was not saved in bench/%s/",
					k.model, k.engine, l.Name(), ev.MarksPath, m.Point, base))
			}
		}
	}
	for _, msg := range l.Clock.PointWarnings {
		l.benchWarnings = append(l.benchWarnings, fmt.Sprintf("%s/%s/%s: %s", k.model, k.engine, l.Name(), msg))
	}
	add := func(code, msg string) {
		l.Reasons = append(l.Reasons, clocks.Reason{Code: code, Message: msg, Scope: clocks.ScopeLeg, Engine: k.engine, Run: k.run})
	}
	for _, r := range bench {
		add(r.Code, r.Message)
	}
	memRel := path.Join(subtreeMemory, base) + memorySuffix
	switch {
	case lf.memory == "":
		hint := hintMemMissing
		if im := l.Clock.Import; im != nil {
			// An imported leg: import writes the record where the log
			// has the GPU memory used (SPEC §12.1).
			hint = fmt.Sprintf("this leg's clocks were imported (--format %s), and clockgate import writes the memory record only from GPU memory used in the log: %s, and import the leg again", im.Format, clocks.ImportMemoryHint(im.Format))
		}
		add(CodeMemoryMissing, fmt.Sprintf("no memory record at %s; %s", memRel, hint))
	case lf.memRefused != "":
		add(CodeMemoryInvalid, lf.memRefused)
	default:
		data, err := clocks.ReadJSONFile(w.abs(memRel))
		if err != nil {
			add(CodeMemoryInvalid, fmt.Sprintf("%s: %v; %s", memRel, unwrapPath(err), hintMemUnread))
			break
		}
		m, msg := parseMemory(memRel, data)
		if msg != "" {
			add(CodeMemoryInvalid, msg)
			break
		}
		l.Memory = m
	}
	return l
}

// loadClock reads and judges a leg's clock evidence, unless the walk
// refused its files already.
func (w *walker) loadClock(files clocks.LegFiles, lf *legFiles) *clocks.Leg {
	switch {
	case lf.multiHost != "":
		return clocks.LoadMultiHostLeg(files, lf.multiHost)
	case lf.recRefused != "":
		cl := clocks.NewLeg(files)
		cl.Reasons = append(cl.Reasons, cl.Reason(clocks.CodeInvalid, "clock record %s", lf.recRefused))
		return cl
	case lf.strRefused != "":
		data, err := clocks.ReadJSONFile(w.abs(files.RecordPath))
		if err != nil {
			// LoadLeg judges a record it cannot read before it opens the stream.
			return clocks.LoadLeg(files)
		}
		cl := clocks.NewLeg(files)
		cl.JudgeRecord(data, lf.strRefused)
		return cl
	}
	return clocks.LoadLeg(files)
}

// pointEvidence is what the tree holds of a leg's point windows: its
// points file, read here, or its vLLM results' dates; nil when neither.
func (w *walker) pointEvidence(l *Leg, lf *legFiles) *clocks.PointEvidence {
	ev := &clocks.PointEvidence{}
	for _, p := range l.bench {
		ev.Times = append(ev.Times, pointTime(p))
	}
	switch {
	case lf.points != "":
		ev.MarksPath = lf.points
		if lf.pointsRefused != "" {
			ev.MarksInvalid = lf.pointsRefused + "; its points have no window"
			return ev
		}
		ReadMarks(ev, lf.points, w.abs(lf.points))
		return ev
	}
	for _, p := range l.bench {
		switch {
		case p.HasWindow():
			ev.Exact = append(ev.Exact, clocks.Mark{Point: p.ID.Label(), Span: clocks.Span{From: p.Start.UnixNano(), To: p.End.UnixNano()}})
		case p.Format == benchfmt.FormatAIPerf || p.Format == benchfmt.FormatGuideLLM:
			ev.Exact = append(ev.Exact, clocks.Mark{Point: p.ID.Label(), NoWindow: "its " + p.Format + " result places it in no window (see the leg's warnings)"})
		case p.Format == FormatSGLang:
		default:
			ev.Dates = append(ev.Dates, datePoint(p))
		}
	}
	if len(ev.Dates) == 0 && len(ev.Exact) == 0 && len(ev.Times) == 0 {
		return nil
	}
	return ev
}
