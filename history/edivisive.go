package history

import (
	"math"
	"sort"

	"gonum.org/v1/gonum/stat/distuv"
)

// Window is the length of the sliding windows the split step runs
// E-divisive on (Otava's default).
const Window = 50

// DefaultP is the significance a change point must reach: its two-sided
// Student t-test p below it (Otava's default).
const DefaultP = 0.001

// firstPassFactor widens the p bound of the split step: the weak change
// points it finds are pruned to DefaultP (or --p) by the merge step, as
// Otava does (10× below 0.05, 2× below 0.5).
const firstPassFactor = 10

// Method is how change points are found and tested.
type Method int

const (
	// Calibrated is the default: binary segmentation by the largest
	// rank-sum statistic over splits, each p from that maximum's
	// permutation null at the segment's length (detectCalibrated), then
	// the merge step.
	Calibrated Method = iota
	// Otava is E-divisive means with a Student t-test in windows, split
	// then merge, as Apache Otava does: its p is that of the t-test at a
	// split chosen to look different, not a false-alarm probability.
	Otava
)

// String names the method as the outputs print it.
func (m Method) String() string {
	if m == Otava {
		return "otava"
	}
	return "calibrated"
}

// Detection says how change points are found.
type Detection struct {
	// Method is Calibrated (the default) or Otava.
	Method Method
	// P is the bound a change's p must stay below.
	P float64
	// Window is the split step's window length, at least 2.
	Window int
	// MinMagnitude is the relative change (max of forward and backward)
	// a change must exceed when every p passes; 0 keeps every
	// significant change.
	MinMagnitude float64
	// retestRightOnly reproduces Otava's merge exactly: after a drop it
	// retests only the change that followed the dropped one, leaving the
	// one before it with a p of sides that no longer exist. Only the test
	// against Otava's published results sets it.
	retestRightOnly bool
}

// DefaultDetection is the calibrated detection at p < 0.001, no
// magnitude floor (Window serves Otava's method only).
var DefaultDetection = Detection{P: DefaultP, Window: Window}

// Change is one change point of a series of values.
type Change struct {
	// Index is the first value after the change.
	Index int
	// MeanBefore and MeanAfter are the means of the values between the
	// neighbouring change points (or the series' ends) and this one.
	MeanBefore, MeanAfter float64
	// StdBefore and StdAfter are their population standard deviations.
	StdBefore, StdAfter float64
	// P is the two-sided Student t-test p of the two sides.
	P float64
	// qhat is the E-divisive statistic that proposed it.
	qhat float64
}

// MagnitudePct is the change in percent of the mean before.
func (c Change) MagnitudePct() float64 {
	if c.MeanBefore == 0 {
		return 0
	}
	return (c.MeanAfter/c.MeanBefore - 1) * 100
}

// magnitude is the larger of the forward and backward relative changes.
func (c Change) magnitude() float64 {
	f, b := 0.0, 0.0
	if c.MeanBefore != 0 {
		f = math.Abs(c.MeanAfter/c.MeanBefore - 1)
	}
	if c.MeanAfter != 0 {
		b = math.Abs(c.MeanBefore/c.MeanAfter - 1)
	}
	return math.Max(f, b)
}

// Detect finds the change points of xs: E-divisive means proposes, in
// overlapping windows, the split that most separates the two sides; a
// Student t-test of the two sides keeps it (the split step, at a p bound
// widened by firstPassFactor); then the weakest change is dropped, and its
// neighbours' tests redone, until every change has p below d.P (the merge
// step). This is the method of Apache Otava (formerly Hunter; Fleming et
// al., "Hunter: Using Change Point Detection to Hunt for Performance
// Regressions", ICPE 2023), written here from its description.
//
// With d.Method Calibrated (the default) it is detectCalibrated instead.
func Detect(xs []float64, d Detection) []Change {
	if d.Method == Calibrated {
		return detectCalibrated(xs, d)
	}
	if d.Window < 2 {
		d.Window = Window
	}
	first := d.P
	switch {
	case d.P < 0.05:
		first = d.P * firstPassFactor
	case d.P < 0.5:
		first = d.P * 2
	}
	return merge(split(xs, d.Window, first), xs, d.P, d.MinMagnitude, d.retestRightOnly)
}

// split runs E-divisive with the t-test on windows of length window that
// advance by half a window, or to the last change found, whichever is
// further; it returns the union of their changes, each tested against its
// neighbours in the whole series.
func split(xs []float64, window int, p float64) []Change {
	step := window / 2
	var idx []int
	seen := map[int]bool{}
	for start := 0; start < len(xs); {
		end := min(start+window, len(xs))
		found := detectWindow(xs[start:end], p)
		last := 0
		for _, c := range found {
			if !seen[c+start] {
				seen[c+start] = true
				idx = append(idx, c+start)
			}
			last = c + start
		}
		start = max(last, start+step)
	}
	sort.Ints(idx)
	return testAll(xs, idx)
}

// detectWindow is E-divisive over one window: the best split of any
// interval between the changes found so far is tested, and kept while
// significant. It returns the changes' indexes in xs, sorted.
func detectWindow(xs []float64, p float64) []int {
	e := newEnergy(xs)
	var cps []int
	for {
		bounds := append(append([]int{0}, cps...), len(xs))
		best, bestQ, bestAt := -1, 0.0, -1
		for i := 0; i+1 < len(bounds); i++ {
			a, b := bounds[i], bounds[i+1]
			if b-a < 2 {
				continue
			}
			tau, q := e.best(a, b)
			if bestAt < 0 || q > bestQ {
				best, bestQ, bestAt = tau, q, i
			}
		}
		if bestAt < 0 {
			return cps
		}
		a, b := bounds[bestAt], bounds[bestAt+1]
		c := compare(xs[a:best], xs[best:b])
		if !(c.P <= p) {
			return cps
		}
		cps = append(cps, best)
		sort.Ints(cps)
	}
}

// testAll tests each change against the values between its neighbours.
func testAll(xs []float64, idx []int) []Change {
	out := make([]Change, len(idx))
	for i := range idx {
		out[i] = testAt(xs, idx, i)
	}
	return out
}

// testAt is change i of idx tested between its neighbours.
func testAt(xs []float64, idx []int, i int) Change {
	lo, hi := 0, len(xs)
	if i > 0 {
		lo = idx[i-1]
	}
	if i+1 < len(idx) {
		hi = idx[i+1]
	}
	c := compare(xs[lo:idx[i]], xs[idx[i]:hi])
	c.Index = idx[i]
	return c
}

// merge drops the change with the largest p while it is not below p (or,
// when every p is, the smallest change while not above minMagnitude),
// retesting after each drop both its neighbours, whose sides grew. Otava
// retests only the one after it (rightOnly); a change before a dropped
// one then keeps the p of its old, shorter side and can be dropped for
// it: a 4σ step in 80 values was lost that way.
func merge(cps []Change, xs []float64, p, minMagnitude float64, rightOnly bool) []Change {
	return mergeWith(cps, xs, p, minMagnitude, rightOnly, testAt)
}

// mergeWith is merge with test retesting a change between its neighbours.
func mergeWith(cps []Change, xs []float64, p, minMagnitude float64, rightOnly bool, test func([]float64, []int, int) Change) []Change {
	for len(cps) > 0 {
		weakest := 0
		for i, c := range cps {
			if c.P > cps[weakest].P {
				weakest = i
			}
		}
		if cps[weakest].P < p {
			weakest = 0
			for i, c := range cps {
				if c.magnitude() < cps[weakest].magnitude() {
					weakest = i
				}
			}
			if cps[weakest].magnitude() > minMagnitude {
				return cps
			}
		}
		cps = append(cps[:weakest], cps[weakest+1:]...)
		idx := make([]int, len(cps))
		for i, c := range cps {
			idx[i] = c.Index
		}
		retest := []int{weakest - 1, weakest}
		if rightOnly {
			retest = []int{weakest, weakest + 1}
		}
		for _, n := range retest {
			if n >= 0 && n < len(cps) {
				cps[n] = test(xs, idx, n)
			}
		}
	}
	return cps
}

// compare is the two-sided Student t-test (pooled variance) of left
// against right, from each side's mean and population standard deviation
// as Otava computes them. Fewer than three values in all, or two sides
// equal and without spread, give p = 1.
func compare(left, right []float64) Change {
	c := Change{P: 1}
	c.MeanBefore, c.StdBefore = meanStd(left)
	c.MeanAfter, c.StdAfter = meanStd(right)
	n1, n2 := float64(len(left)), float64(len(right))
	df := n1 + n2 - 2
	if df <= 0 {
		return c
	}
	pooled := ((n1-1)*c.StdBefore*c.StdBefore + (n2-1)*c.StdAfter*c.StdAfter) / df
	denom := math.Sqrt(pooled * (1/n1 + 1/n2))
	d := c.MeanBefore - c.MeanAfter
	switch {
	case denom == 0 && d == 0:
		return c
	case denom == 0:
		c.P = 0
	default:
		t := math.Abs(d / denom)
		c.P = 2 * distuv.StudentsT{Mu: 0, Sigma: 1, Nu: df}.Survival(t)
	}
	return c
}

// meanStd is the mean and population standard deviation of xs; the
// deviation of fewer than two values is 0.
func meanStd(xs []float64) (mean, std float64) {
	for _, x := range xs {
		mean += x
	}
	mean /= float64(len(xs))
	if len(xs) < 2 {
		return mean, 0
	}
	var ss float64
	for _, x := range xs {
		ss += (x - mean) * (x - mean)
	}
	return mean, math.Sqrt(ss / float64(len(xs)))
}

// energy answers E-divisive's question for any interval of one window:
// which split τ, with some end κ, maximises
//
//	Q(X, Y) = 2/(m+n) Σ|Xi−Yj| − 2m/((m+n)(n−1)) Σi<k |Xi−Xk| − 2n/((m+n)(m−1)) Σj<k |Yj−Yk|
//
// for X = xs[a:τ] (n values) and Y = xs[τ:κ] (m values), a < τ < κ ≤ b.
// The within-side term of a side of one value is 0.
type energy struct {
	xs []float64
	// col[i][y] is Σ_{i' < i} |xs[i'] − xs[y]|: each column's prefix sums.
	col [][]float64
}

func newEnergy(xs []float64) *energy {
	n := len(xs)
	col := make([][]float64, n+1)
	col[0] = make([]float64, n)
	for i := 1; i <= n; i++ {
		col[i] = make([]float64, n)
		for y := 0; y < n; y++ {
			col[i][y] = col[i-1][y] + math.Abs(xs[i-1]-xs[y])
		}
	}
	return &energy{xs: xs, col: col}
}

// dist is Σ_{i in [lo, hi)} |xs[i] − xs[y]|.
func (e *energy) dist(lo, hi, y int) float64 { return e.col[hi][y] - e.col[lo][y] }

// best is the split τ of [a, b) with the largest Q over every end κ, the
// first in τ then κ order on ties, and that Q.
func (e *energy) best(a, b int) (int, float64) {
	bestTau, bestQ := a+1, math.Inf(-1)
	var withinX float64 // Σ over pairs of xs[a:τ]
	for tau := a + 1; tau < b; tau++ {
		withinX += e.dist(a, tau-1, tau-1)
		n := float64(tau - a)
		var cross, withinY float64
		for kappa := tau + 1; kappa <= b; kappa++ {
			y := kappa - 1
			cross += e.dist(a, tau, y)
			withinY += e.dist(tau, y, y)
			m := float64(kappa - tau)
			q := 2 / (m + n) * cross
			if n > 1 {
				q -= 2 * m / ((m + n) * (n - 1)) * withinX
			}
			if m > 1 {
				q -= 2 * n / ((m + n) * (m - 1)) * withinY
			}
			if q > bestQ {
				bestTau, bestQ = tau, q
			}
		}
	}
	return bestTau, bestQ
}
