package history

import (
	"math"
	"sort"
	"strconv"

	"github.com/clockgate/clockgate/ratio"
	"github.com/clockgate/clockgate/strictjson"
)

// legValues is what all-runs.json says of one leg that the small-history
// rule tests: its output throughput at each point (by pointKey) and its
// peak GPU memory.
type legValues struct {
	run  int
	tput map[string]float64
	mem  float64
	// hasMem is false where the leg has no memory record.
	hasMem bool
}

// pointKey is a point's identity in one spelling, whichever way the
// document wrote it: a max_concurrency of null or absent is "none", a
// request_rate of "inf", "Infinity" or absent-bound is "inf", numbers as
// ratio.PointID labels them. ok is false for a point it cannot read.
func pointKey(p *strictjson.Value) (string, bool) {
	if p == nil || p.Kind != strictjson.Object {
		return "", false
	}
	var id ratio.PointID
	switch mc := p.Fields["max_concurrency"]; {
	case mc == nil || mc.Kind == strictjson.Null:
	case mc.Kind == strictjson.Number:
		n, err := strconv.Atoi(mc.Raw)
		if err != nil || n < 1 {
			return "", false
		}
		id.MaxConcurrency = n
	default:
		return "", false
	}
	switch rr := p.Fields["request_rate"]; {
	case rr == nil:
		return "", false
	case rr.Kind == strictjson.String && (rr.Str == "inf" || rr.Str == "Infinity"):
	case rr.Kind == strictjson.Number:
		x, err := strconv.ParseFloat(rr.Raw, 64)
		if err != nil || !(x > 0) || math.IsInf(x, 0) {
			return "", false
		}
		id.RequestRate = x
	default:
		return "", false
	}
	return id.Label(), true
}

// positive reads a finite number > 0 from an object's member.
func positive(o *strictjson.Value, key string) (float64, bool) {
	if o == nil || o.Kind != strictjson.Object {
		return 0, false
	}
	m := o.Fields[key]
	if m == nil || m.Kind != strictjson.Number {
		return 0, false
	}
	x, err := strconv.ParseFloat(m.Raw, 64)
	if err != nil || !(x > 0) || math.IsInf(x, 0) {
		return 0, false
	}
	return x, true
}

// readLegValues reads one all-runs.json leg's values: each kept bench
// point's output_throughput by its point, and the memory record's peak.
// A point the leg holds twice, or whose object this reader cannot place
// (a bench format without max_concurrency, request_rate and
// output_throughput), gives the leg no value there: a leg the test
// cannot read is a leg fewer, never a guess.
func readLegValues(l field) (legValues, error) {
	lv := legValues{tput: map[string]float64{}}
	run, err := l.num("run")
	if err != nil {
		return lv, err
	}
	lv.run = int(run)
	bench, err := l.get("bench")
	if err != nil {
		return lv, err
	}
	pts, err := bench.elems()
	if err != nil {
		return lv, err
	}
	twice := map[string]bool{}
	for _, p := range pts {
		k, ok := pointKey(p.v)
		if !ok {
			continue
		}
		v, ok := positive(p.v, "output_throughput")
		if !ok {
			continue
		}
		if _, dup := lv.tput[k]; dup {
			twice[k] = true
		}
		lv.tput[k] = v
	}
	for k := range twice {
		delete(lv.tput, k)
	}
	if m, ok := l.v.Fields["memory"]; ok {
		lv.mem, lv.hasMem = positive(m, "peak_gpu_memory_mib")
	}
	return lv, nil
}

// median is the median of xs (the mean of the middle two for an even
// count), as the ratios' arms take it; NaN for none.
func median(xs []float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	if m := ratio.Median(xs); m != nil {
		return *m
	}
	return math.NaN()
}

// armLegs is one arm's legs in run order.
func (a *arm) sortedLegs() []legValues {
	out := append([]legValues{}, a.legs...)
	sort.SliceStable(out, func(i, j int) bool { return out[i].run < out[j].run })
	return out
}

// atPoint is each leg's throughput at point key k, in run order, legs
// without one left out.
func atPoint(legs []legValues, k string) []float64 {
	var out []float64
	for _, l := range legs {
		if v, ok := l.tput[k]; ok {
			out = append(out, v)
		}
	}
	return out
}

// pointRatioLegs is each ours leg's throughput at point k over the
// baseline legs' median there; nil where either arm has none.
func pointRatioLegs(ours, base []legValues, k string) []float64 {
	bm := median(atPoint(base, k))
	if math.IsNaN(bm) {
		return nil
	}
	var out []float64
	for _, v := range atPoint(ours, k) {
		out = append(out, v/bm)
	}
	return out
}

// throughputRatioLegs is, for each ours leg that has every one of the
// common points, the geometric mean over them of its throughput over the
// baseline legs' median at the point: the THROUGHPUT ratio as one leg
// gives it. Nil without a common point or where the baseline lacks one.
func throughputRatioLegs(ours, base []legValues, common []string) []float64 {
	if len(common) == 0 {
		return nil
	}
	bms := make([]float64, len(common))
	for i, k := range common {
		if bms[i] = median(atPoint(base, k)); math.IsNaN(bms[i]) {
			return nil
		}
	}
	var out []float64
legs:
	for _, l := range ours {
		var logSum float64
		for i, k := range common {
			v, ok := l.tput[k]
			if !ok {
				continue legs
			}
			logSum += math.Log(v / bms[i])
		}
		out = append(out, math.Exp(logSum/float64(len(common))))
	}
	return out
}

// memoryRatioLegs is each ours leg's peak GPU memory over the baseline
// legs' median peak; nil where the baseline has none.
func memoryRatioLegs(ours, base []legValues) []float64 {
	var bs []float64
	for _, l := range base {
		if l.hasMem {
			bs = append(bs, l.mem)
		}
	}
	bm := median(bs)
	if math.IsNaN(bm) {
		return nil
	}
	var out []float64
	for _, l := range ours {
		if l.hasMem {
			out = append(out, l.mem/bm)
		}
	}
	return out
}
