package summarize

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/clockgate/clockgate/benchfmt"
	"github.com/clockgate/clockgate/clocks"
)

// runRE is a leg's run label: r<N>, N a positive decimal integer without
// leading zeros.
var runRE = regexp.MustCompile(`^r([1-9][0-9]*)$`)

const (
	subtreeBench  = "bench"
	subtreeMemory = "memory"
	subtreeClocks = "clocks"

	memorySuffix = ".summary.json"
	recordSuffix = ".summary.json"
	streamSuffix = ".samples.jsonl"
	hostSuffix   = ".host.jsonl"
	// importSuffix is what clockgate import writes beside an imported
	// leg's record: clocks.LoadLeg reads it there.
	importSuffix = ".import.json"
)

// legKey names one leg.
type legKey struct {
	model, engine string
	run           int
}

// legFiles is what the walk found of one leg in the three subtrees. Paths
// are relative to TREE, slash-separated.
type legFiles struct {
	benchDir   string
	benchFiles []string
	// benchArtifacts are the leg's AIPerf artifact directories, one per
	// point.
	benchArtifacts []string
	// benchRefused holds bench.invalid messages for entries refused unread.
	benchRefused []string
	memory       string
	memRefused   string
	record       string
	stream       string
	recRefused   string
	strRefused   string
	// points is the leg's points file (clockgate mark), pointsRefused
	// why it was refused unread.
	points        string
	pointsRefused string
	// multiHost is the leg's directory where it is in the directory form
	// of a multi-host leg (SPEC §12.3), judged by clocks.LoadMultiHostLeg.
	multiHost string
}

// walker walks an evidence tree.
type walker struct {
	root     string // absolute, cleaned
	realRoot string // root with every symbolic link resolved
	// realOut is Options.Out with every symbolic link resolved; "" when
	// there is none.
	realOut  string
	legs     map[legKey]*legFiles
	hasClock bool
	warnings []string
	// nested are the warnings about directories one level too deep (a
	// model id holding a "/").
	nested []string
	// benchOpt is what the bench readers need beyond the files.
	benchOpt benchfmt.Options
}

// ErrNotDir says TREE is not a directory.
var ErrNotDir = errors.New("not a directory")

// ErrNotTree says TREE holds none of bench/, memory/ and clocks/.
var ErrNotTree = errors.New("not an evidence tree")

// ErrNoLeg says TREE holds bench/, memory/ or clocks/ but no leg in them:
// nothing can be compared, which is never "0 of 0 ratios ESTABLISHED".
var ErrNoLeg = errors.New("no leg found")

// OutputFiles are the files summarize --out writes. A directory inside
// TREE that holds nothing else (an --out DIR of an earlier run) is not
// evidence: the walk skips it without a warning, so a second run gives the
// same bytes as the first.
var OutputFiles = []string{"summary.json", "all-runs.json", "report.md", "report.html"}

// errOutside says a symbolic link resolves outside TREE, or cannot be
// resolved at all.
var errOutside = errors.New("a symbolic link that leaves the tree or cannot be resolved (a loop or a dangling link); refused unread; " +
	"put the file or directory itself in its place (copy it into the tree), or remove the link")

func (w *walker) warn(format string, args ...any) {
	w.warnings = append(w.warnings, fmt.Sprintf(format, args...))
}

func (w *walker) abs(rel string) string { return filepath.Join(w.root, filepath.FromSlash(rel)) }

func (w *walker) leg(model, engine string, run int) *legFiles {
	k := legKey{model, engine, run}
	lf := w.legs[k]
	if lf == nil {
		lf = &legFiles{}
		w.legs[k] = lf
	}
	return lf
}

// entry is one directory entry, symbolic links already judged.
type entry struct {
	name string
	rel  string
	// dir and regular describe what the entry is, after following an
	// in-tree symbolic link.
	dir, regular bool
	// refused is set for a symbolic link that leaves TREE or cannot be
	// resolved; nothing else is known of it then.
	refused bool
}

// resolve follows the symbolic link at rel and returns what it resolves to,
// or false when it leaves TREE or cannot be resolved (a loop, a dangling
// link). filepath.EvalSymlinks bounds the links it follows, so a loop ends.
func (w *walker) resolve(rel string) (fs.FileInfo, bool) {
	real, err := filepath.EvalSymlinks(w.abs(rel))
	if err != nil {
		return nil, false
	}
	if real != w.realRoot && !strings.HasPrefix(real, w.realRoot+string(filepath.Separator)) {
		return nil, false
	}
	st, err := os.Stat(real)
	if err != nil {
		return nil, false
	}
	return st, true
}

// list reads the directory at rel, sorted by name.
func (w *walker) list(rel string) ([]entry, error) {
	des, err := os.ReadDir(w.abs(rel))
	if err != nil {
		if rel == "." {
			return nil, unwrapPath(err)
		}
		return nil, fmt.Errorf("%s: %w", rel, unwrapPath(err))
	}
	out := make([]entry, 0, len(des))
	for _, de := range des {
		e := entry{name: de.Name(), rel: path.Join(rel, de.Name())}
		mode := de.Type()
		if mode&fs.ModeSymlink != 0 {
			st, ok := w.resolve(e.rel)
			if !ok {
				e.refused = true
				out = append(out, e)
				continue
			}
			mode = st.Mode().Type()
		}
		e.dir = mode.IsDir()
		e.regular = mode.IsRegular()
		out = append(out, e)
	}
	return out, nil
}

func unwrapPath(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// subdirs lists the directories under rel that stand for models or
// engines; anything else there is a warning. A symbolic link that leaves
// the tree is an error naming it: the legs below it cannot be known.
func (w *walker) subdirs(rel, what string) ([]entry, error) {
	es, err := w.list(rel)
	if err != nil {
		return nil, err
	}
	var out []entry
	for _, e := range es {
		switch {
		case e.refused:
			return nil, fmt.Errorf("%s: %w", e.rel, errOutside)
		case !e.dir:
			w.warn("%s: not a %s directory; ignored", e.rel, what)
		default:
			out = append(out, e)
		}
	}
	return out, nil
}

// maxRunBits sets maxRun.
const maxRunBits = 30

// maxRun bounds a run number: no one runs a billion legs, and it fits an
// int on any platform.
const maxRun = 1 << maxRunBits

// runNumber reads N from r<N>, or says why the name is not a run.
func runNumber(name string) (int, bool) {
	m := runRE.FindStringSubmatch(name)
	if m == nil {
		return 0, false
	}
	n, err := strconv.Atoi(m[1])
	if err != nil || n > maxRun {
		return 0, false
	}
	return n, true
}

// runN is what N of r<N> must be, for a message.
var runN = fmt.Sprintf("N a decimal integer from 1 to 2^%d (%d) without leading zeros", maxRunBits, maxRun)

var runWant = "want r<N>, " + runN

// walk finds every leg of the tree at root and every file it does not
// recognise; out is Options.Out. The only errors are a root that cannot be
// read, a directory below it that cannot be read, and a subtree, model or
// engine directory that is a symbolic link leaving the tree; an error names
// the path relative to root, or nothing for root itself.
func walk(root, out string) (*walker, error) {
	abs, err := filepath.Abs(root)
	if err != nil {
		return nil, err
	}
	st, err := os.Stat(abs)
	if err != nil {
		return nil, unwrapPath(err)
	}
	if !st.IsDir() {
		return nil, ErrNotDir
	}
	real, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return nil, unwrapPath(err)
	}
	w := &walker{root: filepath.Clean(abs), realRoot: real, legs: map[legKey]*legFiles{}}
	if out != "" {
		if w.realOut, err = RealPath(out); err != nil {
			return nil, fmt.Errorf("--out %s: %w", out, unwrapPath(err))
		}
	}
	top, err := w.list(".")
	if err != nil {
		return nil, err
	}
	found := false
	for _, e := range top {
		switch {
		case e.refused && (e.name == subtreeBench || e.name == subtreeMemory || e.name == subtreeClocks):
			return nil, fmt.Errorf("%s: %w", e.rel, errOutside)
		case e.name == subtreeBench && e.dir:
			found = true
			err = w.walkBench()
		case e.name == subtreeMemory && e.dir:
			found = true
			err = w.walkFlat(subtreeMemory)
		case e.name == subtreeClocks && e.dir:
			found = true
			w.hasClock = true
			err = w.walkFlat(subtreeClocks)
		case e.name == GridDir && e.dir && !e.refused:
			// clockgate grid's journal, staging and logs: not evidence.
		case e.dir && w.outputsOnly(e.rel, 0):
			// summarize's own outputs (--out inside TREE): not evidence.
		default:
			w.warn("%s: not bench/, memory/ or clocks/; ignored", e.rel)
		}
		if err != nil {
			return nil, err
		}
	}
	if found && len(w.legs) == 0 {
		return nil, w.noLeg()
	}
	if !found {
		names := make([]string, 0, len(top))
		for _, e := range top {
			names = append(names, e.name)
		}
		held := "nothing"
		if len(names) > 0 {
			if len(names) > 6 {
				names = append(names[:6], "…")
			}
			held = strings.Join(names, ", ")
		}
		return nil, fmt.Errorf("%w: want bench/, memory/ or clocks/ directly under it, found none (it holds %s); give the directory that holds them",
			ErrNotTree, held)
	}
	return w, nil
}

// noLeg is the error of a tree whose bench/, memory/ and clocks/ hold no
// leg: what the walk found instead, the model ids holding a "/" first.
func (w *walker) noLeg() error {
	found := append(append([]string{}, w.nested...), w.warnings...)
	if len(found) == 0 {
		found = []string{"no file or directory in them"}
	}
	seen := map[string]bool{}
	var uniq []string
	for _, f := range found {
		if !seen[f] {
			seen[f] = true
			uniq = append(uniq, f)
		}
	}
	if len(uniq) > maxNoLegFound {
		uniq = append(uniq[:maxNoLegFound], fmt.Sprintf("and %d more", len(uniq)-maxNoLegFound))
	}
	return fmt.Errorf("%w: want bench/<model>/<engine>/r<N>/<point>.json, memory/<model>/<engine>/r<N>.summary.json or clocks/<model>/<engine>/r<N>.summary.json; found: %s",
		ErrNoLeg, strings.Join(uniq, "; "))
}

// maxNoLegFound bounds what the no-leg error lists of what was found.
const maxNoLegFound = 5

// tooDeep reports whether the entry e under <subtree>/<model>/<engine>/ is
// a directory holding legs (r<N>/ under bench/, r<N>.* files elsewhere):
// the tree is one level too deep there, as a model id holding a "/" makes
// it. It then records the warning, naming the model as it was meant.
func (w *walker) tooDeep(subtree string, e entry) bool {
	if !e.dir || e.refused {
		return false
	}
	es, err := w.list(e.rel)
	if err != nil {
		return false
	}
	legs := false
	for _, c := range es {
		name := c.name
		if subtree != subtreeBench {
			name, _, _ = strings.Cut(name, ".")
		} else if !c.dir {
			continue
		}
		if _, ok := runNumber(name); ok {
			legs = true
			break
		}
	}
	if !legs {
		return false
	}
	parts := strings.Split(e.rel, "/")
	if len(parts) != 4 {
		return false
	}
	model := parts[1] + "/" + parts[2]
	msg := fmt.Sprintf("%s: one level too deep: the model id %q holds a \"/\", which made a directory of each part; "+
		"give each model one path segment, e.g. %s (in bash: ${model//\\//--}), under bench/, memory/ and clocks/ alike; ignored",
		e.rel, model, parts[1]+"--"+parts[2])
	w.nested = append(w.nested, msg)
	w.warn("%s", msg)
	return true
}

// outputsOnly reports whether the directory at rel holds summarize's
// outputs and nothing else (directories of the same kind included). The
// --out directory (Options.Out) counts whatever it holds, and a directory
// on the way to it also when it is empty: a run that creates them, or
// finds them empty, must read the tree as the next run does.
func (w *walker) outputsOnly(rel string, depth int) bool {
	onPath := false
	if w.realOut != "" {
		real, err := filepath.EvalSymlinks(w.abs(rel))
		if err == nil && real == w.realOut {
			return true
		}
		onPath = err == nil && strings.HasPrefix(w.realOut, real+string(filepath.Separator))
	}
	es, err := w.list(rel)
	if err != nil || (len(es) == 0 && !onPath) || (depth > 8 && !onPath) {
		return false
	}
	for _, e := range es {
		switch {
		case e.refused:
			return false
		case e.dir:
			if !w.outputsOnly(e.rel, depth+1) {
				return false
			}
		case !e.regular || !slices.Contains(OutputFiles, e.name):
			return false
		}
	}
	return true
}

// RealPath is path made absolute with every symbolic link resolved, for
// the part of it that exists; the rest is appended as written (an --out
// DIR that is yet to be created).
func RealPath(path string) (string, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", err
	}
	var rest []string
	p := abs
	for {
		r, err := filepath.EvalSymlinks(p)
		if err == nil {
			return filepath.Join(append([]string{r}, rest...)...), nil
		}
		if !errors.Is(err, fs.ErrNotExist) {
			return "", err
		}
		parent := filepath.Dir(p)
		if parent == p {
			return abs, nil
		}
		rest = append([]string{filepath.Base(p)}, rest...)
		p = parent
	}
}

// modelEngines calls fn for each <subtree>/<model>/<engine> directory.
func (w *walker) modelEngines(subtree string, fn func(model, engine, rel string) error) error {
	models, err := w.subdirs(subtree, "model")
	if err != nil {
		return err
	}
	for _, m := range models {
		engines, err := w.subdirs(m.rel, "engine")
		if err != nil {
			return err
		}
		for _, e := range engines {
			if err := fn(m.name, e.name, e.rel); err != nil {
				return err
			}
		}
	}
	return nil
}

func (w *walker) walkBench() error {
	return w.modelEngines(subtreeBench, func(model, engine, rel string) error {
		runs, err := w.list(rel)
		if err != nil {
			return err
		}
		for _, r := range runs {
			n, ok := runNumber(r.name)
			if !ok {
				if !w.tooDeep(subtreeBench, r) {
					w.warn("%s: not a leg: %s; ignored", r.rel, runWant)
				}
				continue
			}
			if r.refused {
				lf := w.leg(model, engine, n)
				lf.benchDir = r.rel
				lf.benchRefused = append(lf.benchRefused, fmt.Sprintf("%s: %v", r.rel, errOutside))
				continue
			}
			if !r.dir {
				w.warn("%s: not a directory of bench points; ignored", r.rel)
				continue
			}
			lf := w.leg(model, engine, n)
			lf.benchDir = r.rel
			files, err := w.list(r.rel)
			if err != nil {
				return err
			}
			for _, f := range files {
				switch {
				case benchfmt.IsAIPerfAggregate(f.name):
					w.warn("%s: AIPerf's aggregate over a sweep's points: it holds no window and no point of its own; skipped (each point's artifact directory is read)", f.rel)
				case f.dir && !f.refused && !strings.HasSuffix(f.name, ".json") && !strings.HasSuffix(f.name, ".jsonl"):
					lf.benchArtifacts = append(lf.benchArtifacts, f.rel)
				case benchfmt.IsGuideLLMYAML(f.name):
					lf.benchRefused = append(lf.benchRefused, benchfmt.GuideLLMYAMLRefusal(f.rel))
				case !strings.HasSuffix(f.name, ".json") && !strings.HasSuffix(f.name, ".jsonl"):
					w.warn("%s: not a bench result file (<point>.json, or .jsonl as SGLang writes); ignored", f.rel)
				case f.refused:
					lf.benchRefused = append(lf.benchRefused, fmt.Sprintf("%s: %v", f.rel, errOutside))
				default:
					// A directory or FIFO named *.json is refused when read.
					lf.benchFiles = append(lf.benchFiles, f.rel)
				}
			}
		}
		return nil
	})
}

// walkFlat walks memory/ or clocks/, whose legs are files named r<N>.*.
func (w *walker) walkFlat(subtree string) error {
	return w.modelEngines(subtree, func(model, engine, rel string) error {
		files, err := w.list(rel)
		if err != nil {
			return err
		}
		for _, f := range files {
			if n, ok := runNumber(f.name); ok && subtree == subtreeClocks && f.dir && clocks.IsMultiHostLeg(w.abs(f.rel)) {
				// A multi-host leg (SPEC §12.3): its directory is read
				// whole when the leg is judged; the client's marks are
				// its points file.
				w.hasClock = true
				lf := w.leg(model, engine, n)
				lf.multiHost = f.rel
				if marks := clocks.MultiHostPointsPath(f.rel); fileExists(w.abs(marks)) {
					lf.points = marks
				}
				continue
			}
			var suffix string
			switch {
			case subtree == subtreeMemory && strings.HasSuffix(f.name, memorySuffix):
				suffix = memorySuffix
			case subtree == subtreeClocks && strings.HasSuffix(f.name, recordSuffix):
				suffix = recordSuffix
			case subtree == subtreeClocks && strings.HasSuffix(f.name, hostSuffix):
				// The host stream is read with its leg's record (SPEC §12.2).
				if _, ok := runNumber(strings.TrimSuffix(f.name, hostSuffix)); ok {
					continue
				}
			case subtree == subtreeClocks && strings.HasSuffix(f.name, streamSuffix):
				suffix = streamSuffix
			case subtree == subtreeClocks && strings.HasSuffix(f.name, PointsSuffix):
				suffix = PointsSuffix
			case subtree == subtreeClocks && strings.HasSuffix(f.name, importSuffix):
				suffix = importSuffix
			}
			n, ok := runNumber(strings.TrimSuffix(f.name, suffix))
			if suffix == "" && w.tooDeep(subtree, f) {
				continue
			}
			if suffix == "" || !ok {
				want := "r<N>.summary.json"
				if subtree == subtreeClocks {
					want = "r<N>.samples.jsonl or r<N>.summary.json"
				}
				w.warn("%s: not a leg's file: want %s, %s; ignored", f.rel, want, runN)
				continue
			}
			lf := w.leg(model, engine, n)
			var refused string
			if f.refused {
				refused = fmt.Sprintf("%s: %v", f.rel, errOutside)
			}
			switch {
			case subtree == subtreeMemory:
				lf.memory, lf.memRefused = f.rel, refused
			case suffix == recordSuffix:
				lf.record, lf.recRefused = f.rel, refused
			case suffix == PointsSuffix:
				lf.points, lf.pointsRefused = f.rel, refused
			case suffix == importSuffix:
				// Read beside its record, when the record says imported.
			default:
				lf.stream, lf.strRefused = f.rel, refused
			}
		}
		return nil
	})
}

// sortedLegs returns the legs in model, engine, run order.
func (w *walker) sortedLegs() []legKey {
	keys := make([]legKey, 0, len(w.legs))
	for k := range w.legs {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		a, b := keys[i], keys[j]
		if a.model != b.model {
			return a.model < b.model
		}
		if a.engine != b.engine {
			return a.engine < b.engine
		}
		return a.run < b.run
	})
	return keys
}

// fileExists reports whether p names something, a file or not.
func fileExists(p string) bool {
	_, err := os.Lstat(p)
	return err == nil
}
