// Package ratio builds the THROUGHPUT and MEMORY ratios of one engine
// against a baseline engine for one model. Each ratio carries the two arms'
// clock block and is binding-eligible only when no reason stands and the
// clock state is established.
package ratio

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"

	"github.com/clockgate/clockgate/clocks"
)

// The ratio-level bench reason codes. The point and workload mismatches
// void the THROUGHPUT and the MEMORY ratio alike; the output mismatch only
// THROUGHPUT.
const (
	// CodeBenchInvalid is the leg reason for bench evidence that was
	// refused; such a leg's set of points is not known.
	CodeBenchInvalid = clocks.CodeBenchInvalid
	// CodePointMismatch: the set of points differs between two legs of the
	// two arms.
	CodePointMismatch = clocks.CodePointMismatch
	// CodeWorkloadMismatch: the arms did not run one workload (model_id, or
	// num_prompts / total_input_tokens at a point).
	CodeWorkloadMismatch = clocks.CodeWorkloadMismatch
	// CodeOutputMismatch: at a point, the arms generated total_output_tokens
	// that differ by more than MaxOutputDiffPct.
	CodeOutputMismatch = clocks.CodeOutputMismatch
	// CodeFormatMismatch: the arms' legs were written by bench clients
	// whose throughputs are not defined alike; THROUGHPUT only.
	CodeFormatMismatch = clocks.CodeFormatMismatch
	// CodeUndefined: a ratio's value cannot be computed (no common point, no
	// throughput at a point, no memory record, or a value that would be 0,
	// infinite or NaN); the value is null and this says why.
	CodeUndefined = clocks.CodeUndefined
)

// MaxOutputDiffPct bounds |ours − baseline| / baseline × 100 of
// total_output_tokens at a point: without --ignore-eos, sampling moves it by
// a few percent (2.38% between two real vLLM runs of one workload); more is
// an EOS or max-tokens problem in one engine.
const MaxOutputDiffPct = 5.0

// BenchPoint is what a ratio reads of one point of one leg.
type BenchPoint struct {
	// ID is the point's identity.
	ID PointID
	// ModelID is the model the point ran; "" when the file names none
	// (SGLang's bench_serving writes no model_id).
	ModelID           string
	NumPrompts        int
	TotalInputTokens  int
	TotalOutputTokens int
	// Completed counts the point's completed requests.
	Completed int
	// OutputThroughput is the point's output throughput, in tokens/s; 0
	// means the point has no throughput (every request failed, or none
	// produced a token).
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
	// Clients are the client families of the leg's bench results
	// (benchfmt.Family: vllm, aiperf, guidellm), with each one's name and
	// version as written for the report; sorted.
	Clients []string
}

// Arm is every leg of one (model, engine).
type Arm struct {
	Engine string
	Legs   []*Leg
}

// Point is one point of a THROUGHPUT ratio: each arm's median output
// throughput over its legs, in tokens/s, their ratio, and each arm's median
// total_output_tokens with their difference. A value that cannot be
// computed is nil.
type Point struct {
	ID       PointID
	Ours     *float64
	Baseline *float64
	Ratio    *float64
	// OursOutputTokens and BaselineOutputTokens are each arm's median
	// total_output_tokens over the legs with throughput at the point.
	OursOutputTokens     *float64
	BaselineOutputTokens *float64
	// OutputDiffPct is |ours − baseline| / baseline × 100 of those
	// medians, in percent.
	OutputDiffPct *float64
	// Common is true when both arms have the point, with or without
	// throughput there.
	Common bool
	// Test compares the legs' output throughputs at the point: each arm's
	// interval around its median, and p where both arms have the point.
	Test
	// Clock is the point's own clock (SPEC §10.2): nil unless some
	// trusted leg of either arm has a source of point windows.
	Clock *clocks.PointClock
	// reasons are the THROUGHPUT reasons about this point alone: its
	// ratio undefined, its output mismatch, its clock offset.
	reasons []clocks.Reason
}

// MarshalJSON writes the point's identity as vLLM writes it
// (max_concurrency an integer or null, request_rate a number or "inf"),
// and its strategy where it has one, beside its values.
func (p Point) MarshalJSON() ([]byte, error) {
	mc, rr := p.ID.identityJSON()
	m := map[string]any{
		"max_concurrency":        mc,
		"request_rate":           rr,
		"ours":                   p.Ours,
		"baseline":               p.Baseline,
		"ratio":                  p.Ratio,
		"ours_output_tokens":     p.OursOutputTokens,
		"baseline_output_tokens": p.BaselineOutputTokens,
		"output_tokens_diff_pct": p.OutputDiffPct,
		"ours_ci":                p.OursCI,
		"baseline_ci":            p.BaselineCI,
		"p":                      p.P,
	}
	if p.ID.Strategy != "" {
		m["strategy"] = p.ID.Strategy
	}
	if p.Clock != nil {
		m["clock"] = p.Clock
	}
	return json.Marshal(m)
}

// Throughput is the THROUGHPUT ratio: the geometric mean, over the points
// both arms have, of ours / baseline median output throughput.
type Throughput struct {
	// Value is the headline ratio, rounded to 4 decimals; nil when it
	// cannot be computed.
	Value  *float64 `json:"value"`
	Points []Point  `json:"points"`
	// BindingEligible is true only with no reason and the clock block
	// established; significance never enters it.
	BindingEligible bool `json:"binding_eligible"`
	// Reasons holds every reason, the clock block's included.
	Reasons []clocks.Reason `json:"reasons"`
	Clock   *clocks.Block   `json:"clock"`
	// Significance counts the points both arms have where the legs'
	// throughputs differ at Alpha. It is reported, never a gate term.
	Significance Significance `json:"significance"`
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
	// established; significance never enters it.
	BindingEligible bool `json:"binding_eligible"`
	// Reasons holds every reason, the clock block's included.
	Reasons []clocks.Reason `json:"reasons"`
	Clock   *clocks.Block   `json:"clock"`
	// Test compares the legs' peak GPU memory: ours_ci, baseline_ci and p
	// on the family itself.
	Test
	// Significance is 1 point when both arms have a memory record, and
	// whether it differs at Alpha. It is reported, never a gate term.
	Significance Significance `json:"significance"`
}

// Comparison is one engine against the baseline engine for one model.
type Comparison struct {
	Model      string     `json:"model"`
	Ours       string     `json:"ours"`
	Baseline   string     `json:"baseline"`
	Throughput Throughput `json:"throughput"`
	Memory     Memory     `json:"memory"`
	// Energy is the ENERGY family (SPEC §11.3): never a term of GatePass.
	Energy Energy `json:"energy"`
	// BenchClients name each arm's bench client and its version, where
	// either arm's results were written by a client other than vLLM's or
	// SGLang's (SPEC §12.5); nil otherwise.
	BenchClients *BenchClients `json:"bench_clients,omitempty"`
	// Warnings name each trusted leg without a window for a point both
	// arms ran, where points are judged on their own clocks.
	Warnings []string `json:"-"`
}

// BenchClients are the bench clients of a comparison's arms: "aiperf
// 0.3.0", "guidellm 0.5.0", "vllm"; an arm of several lists each, comma
// separated.
type BenchClients struct {
	Ours     string `json:"ours"`
	Baseline string `json:"baseline"`
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
	oursArm, baseArm := mergeArm(ours, allowCrossBoot), mergeArm(baseline, allowCrossBoot)
	block := clocks.Compare(oursArm, baseArm, allowCrossBoot)

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
	bench = append(bench, clocks.HostPCIeMismatch(oursArm, baseArm)...)
	own := append(legReasons, bench...)
	own = append(own, clocks.HostReasons(ours.Engine, oursArm.Legs, baseline.Engine, baseArm.Legs)...)

	c := &Comparison{Model: model, Ours: ours.Engine, Baseline: baseline.Engine}

	var undefined []clocks.Reason
	c.Throughput.Points, c.Throughput.Value, undefined = throughputPoints(ours, baseline)
	c.Throughput.Significance = pointsSignificance(c.Throughput.Points)
	output := outputMismatch(ours.Engine, baseline.Engine, c.Throughput.Points)
	format := formatMismatch(ours, baseline)
	var pointClock []clocks.Reason
	if clocks.PointsActive(oursArm, baseArm) {
		pointClock, c.Warnings = pointClocks(model, c.Throughput.Points, oursArm, baseArm)
	}
	c.Throughput.Clock = block
	c.Throughput.Reasons = joinReasons(block.Reasons, own, format, output, pointClock, undefined)
	// The clock term is its own term: a ratio is binding only when its
	// clock block is established, whatever the other reasons say.
	c.Throughput.BindingEligible = len(own) == 0 && len(format) == 0 && len(output) == 0 && len(pointClock) == 0 && block.Established && c.Throughput.Value != nil

	oursMem, baseMem := memoryLegs(ours), memoryLegs(baseline)
	c.Memory.Ours, c.Memory.Baseline = Median(values(oursMem)), Median(values(baseMem))
	c.Memory.Test = compareLegs(oursMem, baseMem)
	var memTests []Test
	if len(oursMem) > 0 && len(baseMem) > 0 {
		memTests = append(memTests, c.Memory.Test)
	}
	c.Memory.Significance = newSignificance(memTests)
	var memUndefined []clocks.Reason
	c.Memory.Value, memUndefined = memoryRatio(ours.Engine, baseline.Engine, c.Memory.Ours, c.Memory.Baseline)
	c.Memory.Clock = block
	c.Memory.Reasons = joinReasons(block.Reasons, own, memUndefined)
	// The MEMORY ratio checks its own clock term, independently of THROUGHPUT.
	c.Memory.BindingEligible = len(own) == 0 && block.Established && c.Memory.Value != nil

	for i := range c.Throughput.Points {
		pt := &c.Throughput.Points[i]
		pt.reasons = append(pt.reasons, outputMismatch(ours.Engine, baseline.Engine, c.Throughput.Points[i:i+1])...)
	}
	c.Energy = energyFamily(c, ours, baseline, own)
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
// the two middle values, taken as a/2 + b/2 so that two values near the
// float64 maximum do not overflow. It is nil for no values.
func Median(xs []float64) *float64 {
	if len(xs) == 0 {
		return nil
	}
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	m := s[len(s)/2]
	if len(s)%2 == 0 {
		a, b := s[len(s)/2-1], s[len(s)/2]
		m = a/2 + b/2
		if a == b {
			m = a // exact, also for the smallest subnormal
		}
	}
	return &m
}

// maxRoundable is the magnitude from which a float64 has no decimal digit
// left to round: rounding it to 4 decimals is the identity (and x × 1e4
// could overflow).
const maxRoundable = 1e15

// round4 rounds x to 4 decimals, the precision ratios are written at. It
// returns nil for a value that is not finite or not > 0, or that rounds to
// 0: a ratio is never 0, infinite or NaN.
func round4(x float64) *float64 {
	if !(x > 0) || math.IsInf(x, 0) {
		return nil
	}
	r := x
	if x < maxRoundable {
		r = math.Round(x*1e4) / 1e4
	}
	if r == 0 {
		return nil
	}
	return &r
}

// report is a median as written: rounded to 4 decimals like a ratio, but
// kept as it is where rounding would make a positive value 0 (5e-324
// tokens/s is not 0 tokens/s).
func report(x *float64) *float64 {
	if x == nil {
		return nil
	}
	if r := round4(*x); r != nil {
		return r
	}
	v := *x
	return &v
}

// armPoint is what one arm ran at one point: the throughput and output
// tokens of each leg that has throughput there, and the legs that do not.
type armPoint struct {
	tput, out []float64
	legs      []string
	none      []string
}

// legValues are the throughputs of the legs that have one at the point.
func (ap *armPoint) legValues() []LegValue {
	out := make([]LegValue, len(ap.tput))
	for i, x := range ap.tput {
		out[i] = LegValue{Leg: ap.legs[i], Value: x}
	}
	return out
}

func byPoint(a Arm) map[PointID]*armPoint {
	by := map[PointID]*armPoint{}
	for _, l := range a.Legs {
		for _, p := range l.Points {
			ap := by[p.ID]
			if ap == nil {
				ap = &armPoint{}
				by[p.ID] = ap
			}
			if p.OutputThroughput > 0 {
				ap.tput = append(ap.tput, p.OutputThroughput)
				ap.out = append(ap.out, float64(p.TotalOutputTokens))
				ap.legs = append(ap.legs, l.Clock.Name)
			} else {
				ap.none = append(ap.none, l.Clock.Name)
			}
		}
	}
	return by
}

// throughputPoints returns one Point per point either arm has, in
// increasing order, and the geometric mean of the ratios over the points
// both arms have, computed in log space. The headline is nil, with a
// ratio.undefined reason saying why, when there is no common point or a
// common point's ratio cannot be computed: no throughput in an arm (every
// request failed), or a ratio that would be 0 or infinite.
func throughputPoints(ours, baseline Arm) ([]Point, *float64, []clocks.Reason) {
	oursBy, baseBy := byPoint(ours), byPoint(baseline)
	var ids []PointID
	for id := range oursBy {
		ids = append(ids, id)
	}
	for id := range baseBy {
		if oursBy[id] == nil {
			ids = append(ids, id)
		}
	}
	SortPoints(ids)
	var why []clocks.Reason
	undefined := func(format string, args ...any) {
		why = append(why, clocks.Reason{Code: CodeUndefined, Scope: clocks.ScopeRatio, Message: fmt.Sprintf(format, args...)})
	}
	points := []Point{}
	var logSum float64
	common, undefinedPoints := 0, 0
	for _, id := range ids {
		pt := Point{ID: id}
		before := len(why)
		o, b := oursBy[id], baseBy[id]
		var om, bm *float64
		var ol, bl []LegValue
		if o != nil {
			om = Median(o.tput)
			pt.Ours, pt.OursOutputTokens = report(om), Median(o.out)
			ol = o.legValues()
		}
		if b != nil {
			bm = Median(b.tput)
			pt.Baseline, pt.BaselineOutputTokens = report(bm), Median(b.out)
			bl = b.legValues()
		}
		if pt.Common = o != nil && b != nil; pt.Common {
			pt.Test = compareLegs(ol, bl)
		} else {
			// A point one arm lacks is no comparison: no p.
			pt.Test = Test{OursLegs: ol, BaselineLegs: bl, OursCI: medianCI(ol), BaselineCI: medianCI(bl)}
		}
		if pt.OursOutputTokens != nil && pt.BaselineOutputTokens != nil {
			pt.OutputDiffPct = diffPct(*pt.OursOutputTokens, *pt.BaselineOutputTokens)
		}
		if o != nil && b != nil {
			common++
			switch {
			case om == nil || bm == nil:
				undefinedPoints++
				for _, side := range []struct {
					engine string
					ap     *armPoint
					m      *float64
				}{{ours.Engine, o, om}, {baseline.Engine, b, bm}} {
					if side.m == nil {
						undefined("%s: no THROUGHPUT ratio: %s has no throughput there (output_throughput 0 in %s: every request failed or none produced a token); rerun the point in those legs",
							id, side.engine, strings.Join(side.ap.none, ", "))
					}
				}
			default:
				r := *om / *bm
				if pt.Ratio = round4(r); pt.Ratio == nil {
					undefinedPoints++
					undefined("%s: no THROUGHPUT ratio: %s / %s = %s / %s tokens/s is %s, not a finite ratio > 0 at 4 decimals; check how these values were written, rerun the point",
						id, ours.Engine, baseline.Engine, fmtG(*om), fmtG(*bm), fmtG(r))
					break
				}
				logSum += math.Log(r)
			}
		}
		pt.reasons = append(pt.reasons, why[before:]...)
		points = append(points, pt)
	}
	switch {
	case common == 0:
		undefined("no THROUGHPUT ratio: no point both %s and %s have (%s has %s; %s has %s); run one set of points in both arms",
			ours.Engine, baseline.Engine, ours.Engine, labels(oursBy), baseline.Engine, labels(baseBy))
		return points, nil, why
	case undefinedPoints > 0:
		undefined("no THROUGHPUT ratio: the geometric mean needs a ratio at every point both arms have, and %d of %d have none (each named above)",
			undefinedPoints, common)
		return points, nil, why
	}
	g := round4(math.Exp(logSum / float64(common)))
	if g == nil {
		undefined("no THROUGHPUT ratio: the geometric mean over %d points, exp(%s), is not a finite ratio > 0 at 4 decimals; check how the throughputs were written",
			common, fmtG(logSum/float64(common)))
	}
	return points, g, why
}

// diffPct is |a − b| / b × 100, or nil when b is 0 and a is not.
func diffPct(a, b float64) *float64 {
	if a == b {
		z := 0.0
		return &z
	}
	if b == 0 {
		return nil
	}
	d := math.Abs(a-b) / b * 100
	if math.IsInf(d, 0) || math.IsNaN(d) {
		return nil
	}
	return round4(d)
}

// outputMismatch is bench.output_mismatch for each point where both arms
// have output tokens and they differ by more than MaxOutputDiffPct. The
// comparison is |ours − baseline| × 100 ≤ MaxOutputDiffPct × baseline,
// exact for token counts: no division, no drift at the boundary.
func outputMismatch(oursEngine, baseEngine string, points []Point) []clocks.Reason {
	var out []clocks.Reason
	for _, pt := range points {
		if pt.OursOutputTokens == nil || pt.BaselineOutputTokens == nil {
			continue
		}
		o, b := *pt.OursOutputTokens, *pt.BaselineOutputTokens
		if math.Abs(o-b)*100 <= MaxOutputDiffPct*b {
			continue
		}
		diff := "infinite (baseline 0)"
		if pt.OutputDiffPct != nil {
			diff = fmt.Sprintf("%.2f%%", *pt.OutputDiffPct)
		}
		out = append(out, clocks.Reason{Code: CodeOutputMismatch, Scope: clocks.ScopeRatio, Message: fmt.Sprintf(
			"%s: total_output_tokens differ by %s > %.1f%%: %s %s, %s %s (median over legs): one engine stops generating early or late (EOS, max_tokens); rerun both arms with --ignore-eos, or find which engine ignores the request's stop",
			pt.ID, diff, MaxOutputDiffPct, oursEngine, fmtG(o), baseEngine, fmtG(b))})
	}
	return out
}

// memoryRatio is ours / baseline peak GPU memory, or nil with a
// ratio.undefined reason.
func memoryRatio(oursEngine, baseEngine string, o, b *float64) (*float64, []clocks.Reason) {
	var missing []string
	if o == nil {
		missing = append(missing, oursEngine)
	}
	if b == nil {
		missing = append(missing, baseEngine)
	}
	if len(missing) > 0 {
		return nil, []clocks.Reason{{Code: CodeUndefined, Scope: clocks.ScopeRatio, Message: fmt.Sprintf(
			"no MEMORY ratio: no valid memory record in any leg of %s; record memory with the legs and rerun",
			strings.Join(missing, " or "))}}
	}
	r := *o / *b
	v := round4(r)
	if v == nil {
		return nil, []clocks.Reason{{Code: CodeUndefined, Scope: clocks.ScopeRatio, Message: fmt.Sprintf(
			"no MEMORY ratio: %s / %s = %s / %s MiB is %s, not a finite ratio > 0 at 4 decimals; check how the memory records were written",
			oursEngine, baseEngine, fmtG(*o), fmtG(*b), fmtG(r))}}
	}
	return v, nil
}

// fmtG prints a number in its shortest exact form, in exponent form when
// it is very large or very small.
func fmtG(x float64) string {
	a := math.Abs(x)
	if a != 0 && (a >= 1e15 || a < 1e-6) {
		return strconv.FormatFloat(x, 'g', -1, 64)
	}
	return strconv.FormatFloat(x, 'f', -1, 64)
}

func labels(by map[PointID]*armPoint) string {
	ids := make([]PointID, 0, len(by))
	for id := range by {
		ids = append(ids, id)
	}
	return pointSet(ids)
}

// pointSet prints points as a sorted set of labels: "{1/inf, 2/inf}".
func pointSet(ids []PointID) string {
	SortPoints(ids)
	ls := make([]string, len(ids))
	for i, id := range ids {
		ls[i] = id.Label()
	}
	return "{" + strings.Join(ls, ", ") + "}"
}

// memoryLegs are the peak GPU memory of each leg with a valid memory record.
func memoryLegs(a Arm) []LegValue {
	var out []LegValue
	for _, l := range a.Legs {
		if l.PeakGPUMemoryMiB != nil {
			out = append(out, LegValue{Leg: l.Clock.Name, Value: *l.PeakGPUMemoryMiB})
		}
	}
	return out
}

func values(legs []LegValue) []float64 {
	out := make([]float64, len(legs))
	for i, l := range legs {
		out[i] = l.Value
	}
	return out
}

// pointsSignificance counts the significant points among those both arms
// have.
func pointsSignificance(points []Point) Significance {
	var ts []Test
	for _, pt := range points {
		if pt.Common {
			ts = append(ts, pt.Test)
		}
	}
	return newSignificance(ts)
}

// legLabel names a leg in a ratio message: "engine r1".
func legLabel(engine string, l *Leg) string { return engine + " " + l.Clock.Name }

// formatMismatch is bench.format_mismatch when the legs of the two arms
// name more than one client family: a throughput of one is not a
// throughput of the other, so THROUGHPUT is not defined.
func formatMismatch(ours, baseline Arm) []clocks.Reason {
	legs := map[string][]string{}
	var order []string
	for _, a := range []Arm{ours, baseline} {
		for _, l := range a.Legs {
			for _, c := range l.Clients {
				if _, ok := legs[c]; !ok {
					order = append(order, c)
				}
				legs[c] = append(legs[c], legLabel(a.Engine, l))
			}
		}
	}
	if len(order) < 2 {
		return nil
	}
	parts := make([]string, len(order))
	for i, c := range order {
		parts[i] = fmt.Sprintf("%s in %s", c, strings.Join(legs[c], ", "))
	}
	return []clocks.Reason{{Code: CodeFormatMismatch, Scope: clocks.ScopeRatio, Message: fmt.Sprintf(
		"want one bench client across %s and %s (their throughputs are defined alike only within one), found %d: %s; rerun both arms with one client",
		ours.Engine, baseline.Engine, len(order), strings.Join(parts, "; "))}}
}

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
			ids := make([]PointID, len(l.Points))
			for i, p := range l.Points {
				ids[i] = p.ID
			}
			key := pointSet(ids)
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
		"want one set of points (max_concurrency/request_rate) across every leg of %s and %s, found %d: %s; run the missing points in every leg of both arms",
		ours.Engine, baseline.Engine, len(groups), strings.Join(parts, "; "))}}
}

// workloadMismatch checks that both arms ran one workload: one model_id
// over every point of every leg that names one (when both arms name one;
// SGLang's files name none), and at each point one num_prompts and
// total_input_tokens. total_output_tokens is not workload: it is what the
// engine generated (outputMismatch).
func workloadMismatch(ours, baseline Arm) []clocks.Reason {
	var out []clocks.Reason
	ids := map[string][]string{}
	var idOrder []string
	armHasID := map[string]bool{}
	type load struct{ prompts, in int }
	byPoint := map[PointID]map[load][]string{}
	loadOrder := map[PointID][]load{}
	for _, a := range []Arm{ours, baseline} {
		for _, l := range a.Legs {
			label := legLabel(a.Engine, l)
			for _, p := range l.Points {
				if p.ModelID != "" {
					armHasID[a.Engine] = true
					q := fmt.Sprintf("%q", p.ModelID)
					if _, ok := ids[q]; !ok {
						idOrder = append(idOrder, q)
					}
					if !contains(ids[q], label) {
						ids[q] = append(ids[q], label)
					}
				}
				w := load{p.NumPrompts, p.TotalInputTokens}
				if byPoint[p.ID] == nil {
					byPoint[p.ID] = map[load][]string{}
				}
				if _, ok := byPoint[p.ID][w]; !ok {
					loadOrder[p.ID] = append(loadOrder[p.ID], w)
				}
				byPoint[p.ID][w] = append(byPoint[p.ID][w], label)
			}
		}
	}
	if len(ids) > 1 && armHasID[ours.Engine] && armHasID[baseline.Engine] {
		parts := make([]string, len(idOrder))
		for i, q := range idOrder {
			parts[i] = fmt.Sprintf("%s in %s", q, strings.Join(ids[q], ", "))
		}
		out = append(out, clocks.Reason{Code: CodeWorkloadMismatch, Scope: clocks.ScopeRatio, Message: fmt.Sprintf(
			"want one model_id across %s and %s, found %d: %s; rerun the legs of one model with one --model",
			ours.Engine, baseline.Engine, len(ids), strings.Join(parts, "; "))})
	}
	points := make([]PointID, 0, len(byPoint))
	for p := range byPoint {
		points = append(points, p)
	}
	SortPoints(points)
	for _, p := range points {
		if len(byPoint[p]) < 2 {
			continue
		}
		parts := make([]string, len(loadOrder[p]))
		for i, w := range loadOrder[p] {
			parts[i] = fmt.Sprintf("%d/%d in %s", w.prompts, w.in, strings.Join(byPoint[p][w], ", "))
		}
		out = append(out, clocks.Reason{Code: CodeWorkloadMismatch, Scope: clocks.ScopeRatio, Message: fmt.Sprintf(
			"%s: want one num_prompts/total_input_tokens across %s and %s, found %s; rerun with one dataset, --num-prompts and --seed in every leg (failed requests shrink total_input_tokens: fix them first)",
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

// pointClocks judges each point both arms ran on its own clock and
// attaches the point's clock block; a point one arm lacks gets an
// unjudged one. It returns the clock.point_offset reasons and a warning
// for each trusted leg without a window for a point both arms ran.
func pointClocks(model string, points []Point, ours, baseline *clocks.Arm) ([]clocks.Reason, []string) {
	var reasons []clocks.Reason
	var warnings []string
	for i := range points {
		pt := &points[i]
		if !pt.Common {
			pt.Clock = &clocks.PointClock{NotJudged: "only one arm ran it"}
			continue
		}
		label := pt.ID.Label()
		pc, r, missing := clocks.ComparePoint(label, ours, baseline)
		pt.Clock = pc
		if r != nil {
			reasons = append(reasons, *r)
			pt.reasons = append(pt.reasons, *r)
		}
		for _, m := range missing {
			if m.NoBench {
				continue // not run in that leg: no window to miss
			}
			warnings = append(warnings, fmt.Sprintf("%s/%s/%s: point %s has no clock window: %s; the point is not judged on its own clock",
				model, m.Engine, m.Leg.Name, label, m.Why))
		}
	}
	return reasons, warnings
}
