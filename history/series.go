package history

import (
	"math"
	"math/rand/v2"
	"sort"
	"time"
)

// AttributionSharePct is how much of a throughput change, in percent of
// the throughput before, the free clock must have moved with it (same
// direction, in percent of the clock before) for the change to be marked
// "the box moved too": at least half.
const AttributionSharePct = 50

// TransferMinSpanPct is how far the grids' free clocks must spread, max
// over min, in percent of the min, before the elasticity of throughput in
// clock is fitted: below it the slope is noise over noise, "not
// identifiable".
const TransferMinSpanPct = 3

// BootstrapResamples is how many resamples of the grids give the
// transfer's 95% interval.
const BootstrapResamples = 1000

// bootstrapSeed makes the interval the same on every run.
const bootstrapSeed = 20260812

// maxPairs bounds the slopes one Theil–Sen estimate takes the median of:
// beyond it (64 grids and more) that many pairs are drawn, with the
// bootstrap's generator, rather than all n(n−1)/2.
const maxPairs = 2048

// Point is one grid's value of a series.
type Point struct {
	Date        time.Time
	Grid        string
	Value       float64
	Established bool
	// Legs are the grid's legs of the value (Value.Legs).
	Legs []float64
}

// SeriesChange is a change point of a series' established values.
type SeriesChange struct {
	Change
	// Date is the first grid after the change.
	Date time.Time
	// Clock is set on an engine's throughput series: the arm's free clock
	// over the same grids before and after, and whether it moved with
	// the throughput (nil when either side has no established clock).
	Clock *ClockMove
}

// ClockMove is the free clock around a throughput change.
type ClockMove struct {
	BeforeMHz, AfterMHz float64
	// BoxMoved is true when the clock moved in the throughput's
	// direction by at least AttributionSharePct of its change.
	BoxMoved bool
}

// Pct is the clock's change in percent of the clock before.
func (m ClockMove) Pct() float64 { return (m.AfterMHz/m.BeforeMHz - 1) * 100 }

// Transfer is the fitted elasticity of an engine's throughput at a point
// in its free clock: the Theil–Sen slope of log throughput on log clock
// across the established grids, with a bootstrap 95% interval.
type Transfer struct {
	Elasticity, Lo, Hi float64
	// Grids is how many grids it was fitted over.
	Grids int
}

// Series is one key's values across the grids, in date order, with its
// change points and, for an engine's throughput, the clock's part.
type Series struct {
	Key     Key
	Points  []Point
	Changes []SeriesChange
	// Transfer is nil where not identifiable, and on other series.
	Transfer *Transfer
	// ClockSpanPct is the established grids' free clock spread behind
	// Transfer, max over min in percent (an engine's throughput only;
	// NaN where no grid has both).
	ClockSpanPct float64
}

// Analyze builds every series of grids (in date order) and finds their
// change points with d, on the established values only.
func Analyze(grids []*Grid, d Detection) []*Series {
	byKey := map[Key]*Series{}
	var keys []Key
	for _, g := range grids {
		for _, v := range g.Values {
			s := byKey[v.Key]
			if s == nil {
				s = &Series{Key: v.Key, ClockSpanPct: math.NaN()}
				byKey[v.Key] = s
				keys = append(keys, v.Key)
			}
			s.Points = append(s.Points, Point{g.Date, g.ID, v.Value, v.Established, v.Legs})
		}
	}
	sort.Slice(keys, func(i, j int) bool { return keys[i].Less(keys[j]) })
	out := make([]*Series, len(keys))
	for i, k := range keys {
		s := byKey[k]
		s.detect(d)
		if k.Metric == MetricThroughput {
			clock := byKey[Key{k.Model, k.Engines, MetricFreeClock, "", k.GPU}]
			s.attribute(clock)
			s.fit(clock)
		}
		out[i] = s
	}
	return out
}

// established is the indexes of the established points.
func (s *Series) established() []int {
	var idx []int
	for i, p := range s.Points {
		if p.Established {
			idx = append(idx, i)
		}
	}
	return idx
}

func (s *Series) detect(d Detection) {
	idx := s.established()
	xs := make([]float64, len(idx))
	for i, at := range idx {
		xs[i] = s.Points[at].Value
	}
	for _, c := range Detect(xs, d) {
		sc := SeriesChange{Change: c, Date: s.Points[idx[c.Index]].Date}
		sc.Index = idx[c.Index]
		s.Changes = append(s.Changes, sc)
	}
}

// clockByGrid is a clock series' established values by grid.
func clockByGrid(clock *Series) map[string]float64 {
	m := map[string]float64{}
	if clock == nil {
		return m
	}
	for _, p := range clock.Points {
		if p.Established {
			m[p.Grid] = p.Value
		}
	}
	return m
}

// attribute sets each change's clock move: the mean established free
// clock over the grids of the change's two sides (its neighbouring
// changes bound them, as they bound the throughput means).
func (s *Series) attribute(clock *Series) {
	clk := clockByGrid(clock)
	for i := range s.Changes {
		lo, hi := 0, len(s.Points)
		if i > 0 {
			lo = s.Changes[i-1].Index
		}
		if i+1 < len(s.Changes) {
			hi = s.Changes[i+1].Index
		}
		at := s.Changes[i].Index
		before, okb := s.meanClock(clk, lo, at)
		after, oka := s.meanClock(clk, at, hi)
		if !okb || !oka {
			continue
		}
		c := &s.Changes[i]
		c.Clock = &ClockMove{BeforeMHz: before, AfterMHz: after,
			BoxMoved: boxMoved(c.MeanBefore, c.MeanAfter, before, after)}
	}
}

// meanClock is the mean clock of the established points in [lo, hi).
func (s *Series) meanClock(clk map[string]float64, lo, hi int) (float64, bool) {
	var sum float64
	n := 0
	for _, p := range s.Points[lo:hi] {
		if !p.Established {
			continue
		}
		if c, ok := clk[p.Grid]; ok {
			sum += c
			n++
		}
	}
	return sum / float64(n), n > 0
}

// boxMoved is the attribution rule: the clock moved in the same direction
// as the throughput, by at least AttributionSharePct of the throughput's
// change, both in percent of the value before. It is compared
// cross-multiplied, so exact at the boundary.
func boxMoved(tpBefore, tpAfter, clkBefore, clkAfter float64) bool {
	dt, dc := tpAfter-tpBefore, clkAfter-clkBefore
	if dt == 0 || dc == 0 || (dt < 0) != (dc < 0) {
		return false
	}
	return math.Abs(dc)*tpBefore*100 >= AttributionSharePct*math.Abs(dt)*clkBefore
}

// fit sets the transfer where the established grids' free clocks span at
// least TransferMinSpanPct.
func (s *Series) fit(clock *Series) {
	clk := clockByGrid(clock)
	var lx, ly []float64
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, p := range s.Points {
		c, ok := clk[p.Grid]
		if !p.Established || !ok || c <= 0 || p.Value <= 0 {
			continue
		}
		lx = append(lx, math.Log(c))
		ly = append(ly, math.Log(p.Value))
		lo, hi = math.Min(lo, c), math.Max(hi, c)
	}
	if len(lx) == 0 {
		return
	}
	s.ClockSpanPct = (hi/lo - 1) * 100
	if (hi-lo)*100 < TransferMinSpanPct*lo {
		return
	}
	r := rand.New(rand.NewPCG(bootstrapSeed, bootstrapSeed))
	e, ok := theilSen(lx, ly, r)
	if !ok {
		return
	}
	boot := make([]float64, 0, BootstrapResamples)
	bx, by := make([]float64, len(lx)), make([]float64, len(lx))
	for b := 0; b < BootstrapResamples; b++ {
		for i := range bx {
			j := r.IntN(len(lx))
			bx[i], by[i] = lx[j], ly[j]
		}
		if v, ok := theilSen(bx, by, r); ok {
			boot = append(boot, v)
		}
	}
	if len(boot) == 0 {
		return
	}
	sort.Float64s(boot)
	s.Transfer = &Transfer{Elasticity: e, Lo: quantile(boot, 0.025), Hi: quantile(boot, 0.975), Grids: len(lx)}
}

// quantile is the q quantile of sorted xs, interpolated linearly between
// order statistics.
func quantile(xs []float64, q float64) float64 {
	h := q * float64(len(xs)-1)
	i := int(math.Floor(h))
	if i+1 >= len(xs) {
		return xs[len(xs)-1]
	}
	return xs[i] + (h-float64(i))*(xs[i+1]-xs[i])
}

// theilSen is the median of the slopes between pairs of points of
// distinct x: every pair, or maxPairs pairs drawn with r beyond that.
func theilSen(x, y []float64, r *rand.Rand) (float64, bool) {
	n := len(x)
	var slopes []float64
	add := func(i, j int) {
		if x[i] != x[j] {
			slopes = append(slopes, (y[j]-y[i])/(x[j]-x[i]))
		}
	}
	if n*(n-1)/2 <= maxPairs {
		for i := 0; i < n; i++ {
			for j := i + 1; j < n; j++ {
				add(i, j)
			}
		}
	} else {
		for k := 0; k < maxPairs; k++ {
			i, j := r.IntN(n), r.IntN(n)
			if i != j {
				add(i, j)
			}
		}
	}
	if len(slopes) == 0 {
		return 0, false
	}
	m := len(slopes)
	hi := nth(slopes, m/2)
	if m%2 == 1 {
		return hi, true
	}
	// nth left the smaller half below m/2: its largest is the other
	// middle value.
	lo := slopes[0]
	for _, v := range slopes[1 : m/2] {
		lo = math.Max(lo, v)
	}
	return (lo + hi) / 2, true
}

// nth reorders xs so that xs[k] is the value sorted order puts there,
// smaller or equal values before it, and returns it (Hoare's selection).
func nth(xs []float64, k int) float64 {
	lo, hi := 0, len(xs)-1
	for lo < hi {
		pivot := xs[lo+(hi-lo)/2]
		i, j := lo, hi
		for i <= j {
			for xs[i] < pivot {
				i++
			}
			for xs[j] > pivot {
				j--
			}
			if i <= j {
				xs[i], xs[j] = xs[j], xs[i]
				i++
				j--
			}
		}
		switch {
		case k <= j:
			hi = j
		case k >= i:
			lo = i
		default:
			return xs[k]
		}
	}
	return xs[k]
}
