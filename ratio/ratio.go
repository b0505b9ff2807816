// Package ratio builds the THROUGHPUT and MEMORY ratios of one engine
// against a baseline engine for one model. Each ratio carries the two arms'
// clock block and is binding-eligible only when no reason stands and the
// clock state is established.
package ratio

import (
	"errors"
	"fmt"
	"math"
	"sort"
	"strings"

	"github.com/clockgate/clockgate/clocks"
)

// The ratio-level bench reason codes. Both void the THROUGHPUT and the
// MEMORY ratio alike.
const (
	// CodeBenchInvalid is the leg reason for bench evidence that was
	// refused; such a leg's set of points is not known.
	CodeBenchInvalid = clocks.CodeBenchInvalid
	// CodePointMismatch: the set of concurrency points differs between two
	// legs of the two arms.
	CodePointMismatch = clocks.CodePointMismatch
	// CodeWorkloadMismatch: the arms did not run one workload (model_id, or
	// num_prompts / total_input_tokens / total_output_tokens at a point).
	CodeWorkloadMismatch = clocks.CodeWorkloadMismatch
)

// BenchPoint is what a ratio reads of one concurrency point of one leg.
type BenchPoint struct {
	// MaxConcurrency is the point's identity.
	MaxConcurrency    int
	ModelID           string
	NumPrompts        int
	TotalInputTokens  int
	TotalOutputTokens int
	// OutputThroughput is the point's output throughput, in tokens/s.
	OutputThroughput float64
}

// Leg is one leg as a ratio reads it.
type Leg struct {
	// Clock is the leg's clock evidence and verdict.
	Clock *clocks.Leg
	// Reasons are every reason of the leg: its clock reasons, then bench
	// and memory ones.
	Reasons []clocks.Reason
	// Points are the leg's valid bench points, one per MaxConcurrency.
	Points []BenchPoint
	// PeakGPUMemoryMiB is the leg's peak GPU memory, in MiB; nil when the
	// leg has no valid memory record.
	PeakGPUMemoryMiB *float64
}

// Arm is every leg of one (model, engine).
type Arm struct {
	Engine string
	Legs   []*Leg
}

// Point is one concurrency point of a THROUGHPUT ratio: each arm's median
// output throughput over its legs, in tokens/s, and their ratio. A value
// that cannot be computed is nil.
type Point struct {
	MaxConcurrency int      `json:"max_concurrency"`
	Ours           *float64 `json:"ours"`
	Baseline       *float64 `json:"baseline"`
	Ratio          *float64 `json:"ratio"`
}

// Throughput is the THROUGHPUT ratio: the geometric mean, over the points
// both arms have, of ours / baseline median output throughput.
type Throughput struct {
	// Value is the headline ratio, rounded to 4 decimals; nil when it
	// cannot be computed.
	Value  *float64 `json:"value"`
	Points []Point  `json:"points"`
	// BindingEligible is true only with no reason and the clock block
	// established.
	BindingEligible bool `json:"binding_eligible"`
	// Reasons holds every reason, the clock block's included.
	Reasons []clocks.Reason `json:"reasons"`
	Clock   *clocks.Block   `json:"clock"`
}

// Memory is the MEMORY ratio: ours / baseline median peak GPU memory.
type Memory struct {
	// Value is the ratio, rounded to 4 decimals; nil when it cannot be
	// computed.
	Value *float64 `json:"value"`
	// Ours and Baseline are the arms' median peak GPU memory over their
	// legs, in MiB; nil when an arm has no valid memory record. They are
	// for reports, not part of the ratio document.
	Ours     *float64 `json:"-"`
	Baseline *float64 `json:"-"`
	// BindingEligible is true only with no reason and the clock block
	// established.
	BindingEligible bool `json:"binding_eligible"`
	// Reasons holds every reason, the clock block's included.
	Reasons []clocks.Reason `json:"reasons"`
	Clock   *clocks.Block   `json:"clock"`
}

// Comparison is one engine against the baseline engine for one model.
type Comparison struct {
	Model      string     `json:"model"`
	Ours       string     `json:"ours"`
	Baseline   string     `json:"baseline"`
	Throughput Throughput `json:"throughput"`
	Memory     Memory     `json:"memory"`
}

// GatePass reports whether the comparisons pass the gate: at least one
// ratio, and every ratio, THROUGHPUT and MEMORY alike, binding-eligible.
func GatePass(cs []*Comparison) bool {
	pass := len(cs) > 0
	for _, c := range cs {
		pass = pass && c.Throughput.BindingEligible && c.Memory.BindingEligible
	}
	return pass
}

// ErrSameEngine says an engine was compared with itself.
var ErrSameEngine = errors.New("an engine compared with itself")

// Compare builds both ratios of ours against baseline for model. The arms'
// clocks are merged and compared with clocks.Merge and clocks.Compare, and
// the one clock block is attached to both ratios.
func Compare(model string, ours, baseline Arm, allowCrossBoot bool) (*Comparison, error) {
	if ours.Engine == baseline.Engine {
		return nil, fmt.Errorf("model %s: %w: %s", model, ErrSameEngine, ours.Engine)
	}
	block := clocks.Compare(mergeArm(ours, allowCrossBoot), mergeArm(baseline, allowCrossBoot), allowCrossBoot)

	// Legs ineligible only for bench or memory reasons: the clock block
	// lists those with a clock reason already, each leg once.
	var legReasons []clocks.Reason
	for _, a := range []Arm{ours, baseline} {
		for _, l := range a.Legs {
			if len(l.Reasons) > 0 && !clocks.HasClock(l.Reasons) {
				legReasons = append(legReasons, clocks.IneligibleReason(a.Engine, l.Clock, l.Reasons))
			}
		}
	}
	bench := append(pointMismatch(ours, baseline), workloadMismatch(ours, baseline)...)
	own := append(legReasons, bench...)

	c := &Comparison{Model: model, Ours: ours.Engine, Baseline: baseline.Engine}

	c.Throughput.Points, c.Throughput.Value = throughputPoints(ours, baseline)
	c.Throughput.Clock = block
	c.Throughput.Reasons = joinReasons(block.Reasons, own)
	// The clock term is its own term: a ratio is binding only when its
	// clock block is established, whatever the other reasons say.
	c.Throughput.BindingEligible = len(own) == 0 && block.Established && c.Throughput.Value != nil

	c.Memory.Ours, c.Memory.Baseline = medianMemory(ours), medianMemory(baseline)
	if c.Memory.Ours != nil && c.Memory.Baseline != nil {
		c.Memory.Value = round4(*c.Memory.Ours / *c.Memory.Baseline)
	}
	c.Memory.Clock = block
	c.Memory.Reasons = joinReasons(block.Reasons, own)
	// The MEMORY ratio checks its own clock term, independently of THROUGHPUT.
	c.Memory.BindingEligible = len(own) == 0 && block.Established && c.Memory.Value != nil
	return c, nil
}

// mergeArm merges an arm's clock evidence; a leg's leg.ineligible names
// all its reasons' codes.
func mergeArm(a Arm, allowCrossBoot bool) *clocks.Arm {
	legs := make([]*clocks.Leg, len(a.Legs))
	reasons := make([][]clocks.Reason, len(a.Legs))
	for i, l := range a.Legs {
		legs[i], reasons[i] = l.Clock, l.Reasons
	}
	m := clocks.Merge(a.Engine, legs, allowCrossBoot)
	m.LegReasons = reasons
	return m
}

func joinReasons(parts ...[]clocks.Reason) []clocks.Reason {
	out := []clocks.Reason{}
	for _, p := range parts {
		out = append(out, p...)
	}
	return out
}

// Median is the median of xs; the median of an even count is the mean of
// the two middle values. It is nil for no values.
func Median(xs []float64) *float64 {
	if len(xs) == 0 {
		return nil
	}
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	m := s[len(s)/2]
	if len(s)%2 == 0 {
		m = (s[len(s)/2-1] + s[len(s)/2]) / 2
	}
	return &m
}

// round4 rounds x to 4 decimals, the precision ratios are written at.
func round4(x float64) *float64 {
	r := math.Round(x*1e4) / 1e4
	return &r
}

// throughputPoints returns one Point per concurrency point either arm has,
// in increasing order, and the geometric mean of the ratios over the points
// both arms have. The headline is nil when there is no common point or a
// common point's ratio cannot be computed (a baseline median of zero).
func throughputPoints(ours, baseline Arm) ([]Point, *float64) {
	oursBy, baseBy := throughputByPoint(ours), throughputByPoint(baseline)
	seen := map[int]bool{}
	for p := range oursBy {
		seen[p] = true
	}
	for p := range baseBy {
		seen[p] = true
	}
	keys := make([]int, 0, len(seen))
	for p := range seen {
		keys = append(keys, p)
	}
	sort.Ints(keys)
	points := []Point{}
	var logSum float64
	common, computable := 0, true
	for _, p := range keys {
		pt := Point{MaxConcurrency: p}
		o, b := Median(oursBy[p]), Median(baseBy[p])
		if o != nil {
			pt.Ours = round4(*o)
		}
		if b != nil {
			pt.Baseline = round4(*b)
		}
		if o != nil && b != nil {
			common++
			if *b > 0 {
				r := *o / *b
				pt.Ratio = round4(r)
				logSum += math.Log(r)
			} else {
				computable = false
			}
		}
		points = append(points, pt)
	}
	if common == 0 || !computable {
		return points, nil
	}
	return points, round4(math.Exp(logSum / float64(common)))
}

func throughputByPoint(a Arm) map[int][]float64 {
	by := map[int][]float64{}
	for _, l := range a.Legs {
		for _, p := range l.Points {
			by[p.MaxConcurrency] = append(by[p.MaxConcurrency], p.OutputThroughput)
		}
	}
	return by
}

func medianMemory(a Arm) *float64 {
	var xs []float64
	for _, l := range a.Legs {
		if l.PeakGPUMemoryMiB != nil {
			xs = append(xs, *l.PeakGPUMemoryMiB)
		}
	}
	return Median(xs)
}

// legLabel names a leg in a ratio message: "engine r1".
func legLabel(engine string, l *Leg) string { return engine + " " + l.Clock.Name }

// pointMismatch compares the point sets of every leg of both arms that has
// bench points at all (a leg with none already carries bench.missing or
// bench.invalid) and reports one reason naming each set and its legs.
func pointMismatch(ours, baseline Arm) []clocks.Reason {
	groups := map[string][]string{}
	var order []string
	for _, a := range []Arm{ours, baseline} {
		for _, l := range a.Legs {
			// A leg with no points carries bench.missing, and one with
			// refused bench evidence bench.invalid: its set of points is
			// not known, and it voids the ratio on its own already.
			if len(l.Points) == 0 || clocks.HasCode(l.Reasons, CodeBenchInvalid) {
				continue
			}
			ps := make([]string, len(l.Points))
			for i, p := range l.Points {
				ps[i] = fmt.Sprint(p.MaxConcurrency)
			}
			key := "{" + strings.Join(ps, ", ") + "}"
			if _, ok := groups[key]; !ok {
				order = append(order, key)
			}
			groups[key] = append(groups[key], legLabel(a.Engine, l))
		}
	}
	if len(groups) < 2 {
		return nil
	}
	parts := make([]string, len(order))
	for i, k := range order {
		parts[i] = fmt.Sprintf("%s in %s", k, strings.Join(groups[k], ", "))
	}
	return []clocks.Reason{{Code: CodePointMismatch, Scope: clocks.ScopeRatio, Message: fmt.Sprintf(
		"want one set of max_concurrency points across every leg of %s and %s, found %d: %s",
		ours.Engine, baseline.Engine, len(groups), strings.Join(parts, "; "))}}
}

// workloadMismatch checks that both arms ran one workload: one model_id
// over every point of every leg, and at each point one num_prompts,
// total_input_tokens and total_output_tokens.
func workloadMismatch(ours, baseline Arm) []clocks.Reason {
	var out []clocks.Reason
	ids := map[string][]string{}
	var idOrder []string
	type load struct{ prompts, in, out int }
	byPoint := map[int]map[load][]string{}
	loadOrder := map[int][]load{}
	for _, a := range []Arm{ours, baseline} {
		for _, l := range a.Legs {
			label := legLabel(a.Engine, l)
			for _, p := range l.Points {
				q := fmt.Sprintf("%q", p.ModelID)
				if _, ok := ids[q]; !ok {
					idOrder = append(idOrder, q)
				}
				if !contains(ids[q], label) {
					ids[q] = append(ids[q], label)
				}
				w := load{p.NumPrompts, p.TotalInputTokens, p.TotalOutputTokens}
				if byPoint[p.MaxConcurrency] == nil {
					byPoint[p.MaxConcurrency] = map[load][]string{}
				}
				if _, ok := byPoint[p.MaxConcurrency][w]; !ok {
					loadOrder[p.MaxConcurrency] = append(loadOrder[p.MaxConcurrency], w)
				}
				byPoint[p.MaxConcurrency][w] = append(byPoint[p.MaxConcurrency][w], label)
			}
		}
	}
	if len(ids) > 1 {
		parts := make([]string, len(idOrder))
		for i, q := range idOrder {
			parts[i] = fmt.Sprintf("%s in %s", q, strings.Join(ids[q], ", "))
		}
		out = append(out, clocks.Reason{Code: CodeWorkloadMismatch, Scope: clocks.ScopeRatio, Message: fmt.Sprintf(
			"want one model_id across %s and %s, found %d: %s",
			ours.Engine, baseline.Engine, len(ids), strings.Join(parts, "; "))})
	}
	points := make([]int, 0, len(byPoint))
	for p := range byPoint {
		points = append(points, p)
	}
	sort.Ints(points)
	for _, p := range points {
		if len(byPoint[p]) < 2 {
			continue
		}
		parts := make([]string, len(loadOrder[p]))
		for i, w := range loadOrder[p] {
			parts[i] = fmt.Sprintf("%d/%d/%d in %s", w.prompts, w.in, w.out, strings.Join(byPoint[p][w], ", "))
		}
		out = append(out, clocks.Reason{Code: CodeWorkloadMismatch, Scope: clocks.ScopeRatio, Message: fmt.Sprintf(
			"max_concurrency %d: want one num_prompts/total_input_tokens/total_output_tokens across %s and %s, found %s",
			p, ours.Engine, baseline.Engine, strings.Join(parts, "; "))})
	}
	return out
}

func contains(xs []string, s string) bool {
	for _, x := range xs {
		if x == s {
			return true
		}
	}
	return false
}
