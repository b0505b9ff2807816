// Package history keeps summarized grids across nights and finds where
// their established values changed: per (model, ours, baseline) each ratio
// family and each point's ratio, per (model, engine, point) the arm's
// median throughput, per (model, engine) its free clock, every series
// keyed also by the GPU model. It reads what summarize writes
// (summary.json and all-runs.json) and nothing of summarize's insides; its
// store is one small interface that SQLite and PostgreSQL implement.
package history

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/clockgate/clockgate/clocks"
	"github.com/clockgate/clockgate/strictjson"
	"github.com/clockgate/clockgate/summarize"
)

// The metrics of a series.
const (
	MetricThroughputRatio = "THROUGHPUT ratio"
	MetricMemoryRatio     = "MEMORY ratio"
	MetricPointRatio      = "point ratio"
	MetricThroughput      = "throughput"
	MetricFreeClock       = "free clock"
	// MetricEnergyRatio is a point's ENERGY ratio (SPEC §11.3): ours /
	// baseline J per output token, from grids whose summary.json has it.
	MetricEnergyRatio = "ENERGY ratio"
)

// UnknownGPU names the GPU of an arm none of whose legs has a clock record.
const UnknownGPU = "unknown GPU"

// Key names one series. Ratio series name both engines, "ours/baseline";
// an engine's own series names one. Point is "max_concurrency/request_rate"
// as the report prints it ("8/inf", "none/4", and with its strategy where
// the point has one, "none/4:poisson"), or "" for a series of the whole
// arm or ratio. GPU is the arm's gpu_name (both arms', joined by
// " + ", when they differ); a history shared by boxes of different GPUs
// keeps them apart.
type Key struct {
	Model   string
	Engines string
	Metric  string
	Point   string
	GPU     string
}

// String is the key as the outputs print it, one line.
func (k Key) String() string {
	s := k.Model + " " + k.Engines + " " + k.Metric
	if k.Point != "" {
		s += " " + k.Point
	}
	return s + " [" + k.GPU + "]"
}

// Less orders keys by model, engines, GPU, metric, then point.
func (k Key) Less(o Key) bool {
	a := [...]string{k.Model, k.Engines, k.GPU, metricOrder(k.Metric), k.Point}
	b := [...]string{o.Model, o.Engines, o.GPU, metricOrder(o.Metric), o.Point}
	for i := range a {
		if a[i] != b[i] {
			return a[i] < b[i]
		}
	}
	return false
}

func metricOrder(m string) string {
	switch m {
	case MetricThroughputRatio:
		return "0"
	case MetricMemoryRatio:
		return "1"
	case MetricPointRatio:
		return "2"
	case MetricFreeClock:
		return "3"
	case MetricEnergyRatio:
		return "2e"
	}
	return "4" + m
}

// Value is one series' value in one grid.
type Value struct {
	Key   Key
	Value float64
	// Established is true for a ratio summary.json calls
	// binding-eligible, and for an engine's own value when every leg of
	// its arm is binding-eligible and the arm has no arm reason.
	Established bool
	// Legs are the value's legs, in run order (SPEC §12.1.1): an
	// engine's throughput at a point, each leg's; a ratio, each "ours"
	// leg's value over the grid's baseline median (per point; for the
	// THROUGHPUT ratio the geometric mean over the points, as the ratio
	// itself; for MEMORY each leg's peak). Nil where the grid does not
	// say (an ENERGY ratio, a grid added before legs were kept, a bench
	// format whose kept points are not read here).
	Legs []float64
}

// Grid is one summarized grid.
type Grid struct {
	// ID is the SHA-256 of its summary.json bytes, in hex.
	ID string
	// Date is the earliest window.first_t of its legs, in UTC.
	Date time.Time
	// Values are sorted by key.
	Values []Value
}

// The files a summarized grid is read from.
const (
	SummaryFile = "summary.json"
	AllRunsFile = "all-runs.json"
)

// Load reads a grid from dir: summarize --out's summary.json and
// all-runs.json when dir holds them, else dir is an evidence tree and is
// summarized (default baseline, no override), as summarize --out would.
func Load(dir string) (*Grid, error) {
	sum, serr := os.ReadFile(filepath.Join(dir, SummaryFile))
	all, aerr := os.ReadFile(filepath.Join(dir, AllRunsFile))
	switch {
	case serr == nil && aerr == nil:
		return Parse(sum, all, filepath.Join(dir, SummaryFile), filepath.Join(dir, AllRunsFile))
	case serr == nil || aerr == nil:
		missing, err := AllRunsFile, aerr
		if serr != nil {
			missing, err = SummaryFile, serr
		}
		return nil, fmt.Errorf("%s: %v; a summarized grid needs both %s and %s", filepath.Join(dir, missing), err, SummaryFile, AllRunsFile)
	case !errors.Is(serr, fs.ErrNotExist) || !errors.Is(aerr, fs.ErrNotExist):
		if !errors.Is(serr, fs.ErrNotExist) {
			return nil, serr
		}
		return nil, aerr
	}
	return Summarize(dir)
}

// Summarize summarizes the evidence tree at tree and reads the grid from
// the summary.json and all-runs.json it gives.
func Summarize(tree string) (*Grid, error) {
	s, err := summarize.Summarize(tree, summarize.Options{Baseline: summarize.DefaultBaseline})
	if err != nil {
		return nil, err
	}
	sum, err := s.SummaryJSON()
	if err != nil {
		return nil, err
	}
	all, err := s.AllRunsJSON()
	if err != nil {
		return nil, err
	}
	return Parse(sum, all, filepath.Join(tree, "(summarized) "+SummaryFile), filepath.Join(tree, "(summarized) "+AllRunsFile))
}

// doc is a parsed document with its name, for errors that say where.
type doc struct {
	name string
	data []byte
}

func (d doc) parse() (*strictjson.Value, error) {
	v, err := strictjson.ParseObject(d.data)
	if err != nil {
		var se *strictjson.Error
		if errors.As(err, &se) {
			line := 1 + bytes.Count(d.data[:min(se.Offset, len(d.data))], []byte("\n"))
			return nil, fmt.Errorf("%s:%d: %s", d.name, line, se.Msg)
		}
		return nil, fmt.Errorf("%s: %v", d.name, err)
	}
	return v, nil
}

// field is one member of an object, found by a path, or an error that
// names the file and the path.
type field struct {
	d    doc
	path string
	v    *strictjson.Value
}

func (f field) errf(format string, args ...any) error {
	return fmt.Errorf("%s: %s: %s", f.d.name, f.path, fmt.Sprintf(format, args...))
}

func (f field) get(key string) (field, error) {
	p := f.path + "." + key
	if f.path == "" {
		p = key
	}
	if f.v.Kind != strictjson.Object {
		return field{}, f.errf("want an object, found %s", f.v.Kind)
	}
	m, ok := f.v.Fields[key]
	if !ok {
		return field{}, fmt.Errorf("%s: %s: missing", f.d.name, p)
	}
	return field{f.d, p, m}, nil
}

func (f field) kind(k strictjson.Kind) error {
	if f.v.Kind != k {
		return f.errf("want %s, found %s", k, f.v.Kind)
	}
	return nil
}

func (f field) elems() ([]field, error) {
	if err := f.kind(strictjson.Array); err != nil {
		return nil, err
	}
	out := make([]field, len(f.v.Elems))
	for i, e := range f.v.Elems {
		out[i] = field{f.d, fmt.Sprintf("%s[%d]", f.path, i), e}
	}
	return out, nil
}

// str, num and boolean read a member of that type.
func (f field) str(key string) (string, error) {
	m, err := f.get(key)
	if err != nil {
		return "", err
	}
	if err := m.kind(strictjson.String); err != nil {
		return "", err
	}
	return m.v.Str, nil
}

func (f field) num(key string) (float64, error) {
	m, err := f.get(key)
	if err != nil {
		return 0, err
	}
	if err := m.kind(strictjson.Number); err != nil {
		return 0, err
	}
	return m.v.Num, nil
}

// numOrNull reads a number that may be null (ok false).
func (f field) numOrNull(key string) (v float64, ok bool, err error) {
	m, err := f.get(key)
	if err != nil {
		return 0, false, err
	}
	if m.v.Kind == strictjson.Null {
		return 0, false, nil
	}
	if err := m.kind(strictjson.Number); err != nil {
		return 0, false, err
	}
	return m.v.Num, true, nil
}

func (f field) boolean(key string) (bool, error) {
	m, err := f.get(key)
	if err != nil {
		return false, err
	}
	if err := m.kind(strictjson.Bool); err != nil {
		return false, err
	}
	return m.v.Bool, nil
}

// Parse reads a grid from summary.json's and all-runs.json's bytes; the
// names are for errors.
func Parse(summaryJSON, allRunsJSON []byte, summaryName, allRunsName string) (*Grid, error) {
	sd, ad := doc{summaryName, summaryJSON}, doc{allRunsName, allRunsJSON}
	sv, err := sd.parse()
	if err != nil {
		return nil, err
	}
	av, err := ad.parse()
	if err != nil {
		return nil, err
	}
	sum := sha256.Sum256(summaryJSON)
	g := &Grid{ID: hex.EncodeToString(sum[:])}
	arms, err := readLegs(field{ad, "", av})
	if err != nil {
		return nil, err
	}
	for _, a := range arms {
		if !a.dated {
			continue
		}
		if g.Date.IsZero() || a.first.Before(g.Date) {
			g.Date = a.first
		}
	}
	if g.Date.IsZero() {
		return nil, fmt.Errorf("%s: legs: no leg has a clock window (clock.window.first_t), so the grid has no date", ad.name)
	}
	if err := g.readComparisons(field{sd, "", sv}, arms); err != nil {
		return nil, err
	}
	sort.Slice(g.Values, func(i, j int) bool { return g.Values[i].Key.Less(g.Values[j].Key) })
	for i := 1; i < len(g.Values); i++ {
		if g.Values[i].Key == g.Values[i-1].Key {
			return nil, fmt.Errorf("%s: two values of series %s", sd.name, g.Values[i].Key)
		}
	}
	return g, nil
}

// arm is what all-runs.json says of one (model, engine).
type arm struct {
	gpus map[string]bool
	// eligible is false once a leg is not binding-eligible.
	eligible bool
	first    time.Time
	dated    bool
	// legs are its legs' values, in all-runs.json's order.
	legs []legValues
}

func (a *arm) gpu() string {
	if len(a.gpus) == 0 {
		return UnknownGPU
	}
	names := make([]string, 0, len(a.gpus))
	for n := range a.gpus {
		names = append(names, n)
	}
	sort.Strings(names)
	return strings.Join(names, " + ")
}

// readLegs reads all-runs.json's legs into arms keyed "model\x00engine".
func readLegs(root field) (map[string]*arm, error) {
	legs, err := root.get("legs")
	if err != nil {
		return nil, err
	}
	rows, err := legs.elems()
	if err != nil {
		return nil, err
	}
	arms := map[string]*arm{}
	for _, l := range rows {
		model, err := l.str("model")
		if err != nil {
			return nil, err
		}
		engine, err := l.str("engine")
		if err != nil {
			return nil, err
		}
		eligible, err := l.boolean("binding_eligible")
		if err != nil {
			return nil, err
		}
		k := model + "\x00" + engine
		a := arms[k]
		if a == nil {
			a = &arm{gpus: map[string]bool{}, eligible: true}
			arms[k] = a
		}
		a.eligible = a.eligible && eligible
		lv, err := readLegValues(l)
		if err != nil {
			return nil, err
		}
		a.legs = append(a.legs, lv)
		c, err := l.get("clock")
		if err != nil {
			return nil, err
		}
		if c.v.Kind == strictjson.Null {
			continue
		}
		if err := readLegClock(c, a); err != nil {
			return nil, err
		}
	}
	return arms, nil
}

// readLegClock adds a leg's clock record to its arm: its GPU names (one
// GPU's, or each of a tensor-parallel leg's gpus) and its first sample.
func readLegClock(c field, a *arm) error {
	if _, ok := c.v.Fields["gpus"]; ok {
		gs, err := c.get("gpus")
		if err != nil {
			return err
		}
		els, err := gs.elems()
		if err != nil {
			return err
		}
		for _, g := range els {
			n, err := g.str("gpu_name")
			if err != nil {
				return err
			}
			a.gpus[n] = true
		}
	} else {
		n, err := c.str("gpu_name")
		if err != nil {
			return err
		}
		a.gpus[n] = true
	}
	w, err := c.get("window")
	if err != nil {
		return err
	}
	ft, err := w.str("first_t")
	if err != nil {
		return err
	}
	t, perr := time.Parse(time.RFC3339Nano, ft)
	if perr != nil {
		ff, _ := w.get("first_t")
		return ff.errf("want an RFC 3339 time, found %q", ft)
	}
	t = t.UTC()
	if !a.dated || t.Before(a.first) {
		a.first, a.dated = t, true
	}
	return nil
}

// armReason reports whether a clock block reason is about arm engine as a
// whole: a code of arm scope whose message names it ("arm <engine> …").
func armReason(r field, engine string) (bool, error) {
	code, err := r.str("code")
	if err != nil {
		return false, err
	}
	msg, err := r.str("message")
	if err != nil {
		return false, err
	}
	for _, ci := range clocks.Registry {
		if ci.Code == code {
			return ci.Scope == clocks.ScopeArm && strings.HasPrefix(msg, "arm "+engine+" "), nil
		}
	}
	return false, nil
}

// pointID is a point as the report prints it, "max_concurrency/request_rate".
func pointID(p field) (string, error) {
	var parts [2]string
	for i, k := range []string{"max_concurrency", "request_rate"} {
		m, err := p.get(k)
		if err != nil {
			return "", err
		}
		switch m.v.Kind {
		case strictjson.Null:
			parts[i] = "none"
		case strictjson.Number:
			parts[i] = m.v.Raw
		case strictjson.String:
			parts[i] = m.v.Str
		default:
			return "", m.errf("want a number, a string or null, found %s", m.v.Kind)
		}
	}
	id := parts[0] + "/" + parts[1]
	// A point written with a strategy (GuideLLM's constant and poisson,
	// SPEC §12.5) is a point of its own: its series is keyed with it, as
	// report.md labels it ("none/4:poisson"). A point without one keeps
	// the key it always had, so a history added before reads on.
	if _, ok := p.v.Fields["strategy"]; ok {
		m, _ := p.get("strategy")
		if m.v.Kind != strictjson.String || m.v.Str == "" {
			return "", m.errf("want the strategy of a rate point as a name (GuideLLM's constant, poisson), found %s", m.v.Describe())
		}
		id += ":" + m.v.Str
	}
	return id, nil
}

// side is one engine of a comparison, as its series need it.
type side struct {
	engine, label string
}

// readComparisons reads every ratio and every engine's own values.
// readEnergy reads a comparison's ENERGY points, each a series of its
// own; a summary.json written before the family has none.
func (g *Grid) readEnergy(c field, model, engines, gpu string) error {
	if _, ok := c.v.Fields["energy"]; !ok {
		return nil
	}
	e, err := c.get("energy")
	if err != nil {
		return err
	}
	pts, err := e.get("points")
	if err != nil {
		return err
	}
	points, err := pts.elems()
	if err != nil {
		return err
	}
	for _, p := range points {
		label, err := p.str("point")
		if err != nil {
			return err
		}
		v, ok, err := p.numOrNull("value")
		if err != nil {
			return err
		}
		est, err := p.boolean("binding_eligible")
		if err != nil {
			return err
		}
		if ok {
			g.Values = append(g.Values, Value{Key{model, engines, MetricEnergyRatio, label, gpu}, v, est, nil})
		}
	}
	return nil
}

func (g *Grid) readComparisons(root field, arms map[string]*arm) error {
	cs, err := root.get("comparisons")
	if err != nil {
		return err
	}
	els, err := cs.elems()
	if err != nil {
		return err
	}
	// Each engine's own values are taken once, from the first comparison
	// that has it (the baseline is in every comparison of its model).
	done := map[string]bool{}
	for _, c := range els {
		model, err := c.str("model")
		if err != nil {
			return err
		}
		ours, err := c.str("ours")
		if err != nil {
			return err
		}
		baseline, err := c.str("baseline")
		if err != nil {
			return err
		}
		armOf := func(engine string) *arm {
			if a := arms[model+"\x00"+engine]; a != nil {
				return a
			}
			return &arm{gpus: map[string]bool{}}
		}
		ratioGPU := joinGPU(armOf(ours).gpu(), armOf(baseline).gpu())
		oursLegs, baseLegs := armOf(ours).sortedLegs(), armOf(baseline).sortedLegs()
		engines := ours + "/" + baseline
		tp, err := c.get("throughput")
		if err != nil {
			return err
		}
		mem, err := c.get("memory")
		if err != nil {
			return err
		}
		tpPoints, err := tp.get("points")
		if err != nil {
			return err
		}
		tpEls, err := tpPoints.elems()
		if err != nil {
			return err
		}
		// The points both arms have a throughput at: the ratio's.
		var common []string
		for _, p := range tpEls {
			if _, ok, err := p.numOrNull("ratio"); err != nil {
				return err
			} else if k, kok := pointKey(p.v); ok && kok {
				common = append(common, k)
			}
		}
		famLegs := map[string][]float64{
			MetricThroughputRatio: throughputRatioLegs(oursLegs, baseLegs, common),
			MetricMemoryRatio:     memoryRatioLegs(oursLegs, baseLegs),
		}
		for _, fam := range []struct {
			f      field
			metric string
		}{{tp, MetricThroughputRatio}, {mem, MetricMemoryRatio}} {
			v, ok, err := fam.f.numOrNull("value")
			if err != nil {
				return err
			}
			est, err := fam.f.boolean("binding_eligible")
			if err != nil {
				return err
			}
			if ok {
				g.Values = append(g.Values, Value{Key{model, engines, fam.metric, "", ratioGPU}, v, est, famLegs[fam.metric]})
			}
		}
		if err := g.readEnergy(c, model, engines, ratioGPU); err != nil {
			return err
		}
		tpEst, err := tp.boolean("binding_eligible")
		if err != nil {
			return err
		}
		pts, err := tp.get("points")
		if err != nil {
			return err
		}
		points, err := pts.elems()
		if err != nil {
			return err
		}
		clock, err := tp.get("clock")
		if err != nil {
			return err
		}
		// An arm reason stands in the clock blocks of both families;
		// either one is enough to find it.
		var reasons []field
		for _, fam := range []field{tp, mem} {
			cb, err := fam.get("clock")
			if err != nil {
				return err
			}
			rs, err := cb.get("reasons")
			if err != nil {
				return err
			}
			els, err := rs.elems()
			if err != nil {
				return err
			}
			reasons = append(reasons, els...)
		}
		for _, s := range []side{{ours, "ours"}, {baseline, "baseline"}} {
			if done[model+"\x00"+s.engine] {
				continue
			}
			done[model+"\x00"+s.engine] = true
			a := armOf(s.engine)
			est := a.eligible && len(arms) > 0 && arms[model+"\x00"+s.engine] != nil
			for _, r := range reasons {
				isArm, err := armReason(r, s.engine)
				if err != nil {
					return err
				}
				est = est && !isArm
			}
			gpu := a.gpu()
			sc, err := clock.get(s.label)
			if err != nil {
				return err
			}
			if mhz, ok, err := sc.numOrNull("median_mhz"); err != nil {
				return err
			} else if ok {
				g.Values = append(g.Values, Value{Key{model, s.engine, MetricFreeClock, "", gpu}, mhz, est, nil})
			}
			for _, p := range points {
				id, err := pointID(p)
				if err != nil {
					return err
				}
				if v, ok, err := p.numOrNull(s.label); err != nil {
					return err
				} else if ok {
					var legs []float64
					if k, kok := pointKey(p.v); kok {
						legs = atPoint(armOf(s.engine).sortedLegs(), k)
					}
					g.Values = append(g.Values, Value{Key{model, s.engine, MetricThroughput, id, gpu}, v, est, legs})
				}
			}
		}
		for _, p := range points {
			id, err := pointID(p)
			if err != nil {
				return err
			}
			if v, ok, err := p.numOrNull("ratio"); err != nil {
				return err
			} else if ok {
				var legs []float64
				if k, kok := pointKey(p.v); kok {
					legs = pointRatioLegs(oursLegs, baseLegs, k)
				}
				g.Values = append(g.Values, Value{Key{model, engines, MetricPointRatio, id, ratioGPU}, v, tpEst, legs})
			}
		}
	}
	return nil
}

// joinGPU is a ratio's GPU: its arms' one GPU, or both.
func joinGPU(ours, baseline string) string {
	if ours == baseline {
		return ours
	}
	return ours + " vs " + baseline
}
