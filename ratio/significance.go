package ratio

import (
	"math"
	"strconv"
	"sync"

	"golang.org/x/perf/benchmath"
)

// Alpha is the significance level: a difference is detected where the
// two-sided p < Alpha. 0.05 is benchstat's (benchmath.DefaultThresholds),
// so "~" here means what it means for Go benchmarks.
const Alpha = 0.05

// Confidence is the confidence level of each arm's interval around its
// median: 0.95, the level benchstat's "±" reports.
const Confidence = 0.95

// MinLegs is the fewest legs with a value an arm needs for a p-value. With
// fewer legs than the test needs to reach α, p is still given (one leg
// against one can only give 1), and the report says how many legs per arm
// would be needed.
const MinLegs = 1

// TestName names the test in summary.json.
const TestName = "mann-whitney-u"

// maxLegsSearched bounds the search for the legs a test needs; benchmath
// computes the exact U distribution up to 50 legs per arm.
const maxLegsSearched = 50

// thresholds are benchmath's, at Alpha.
var thresholds = benchmath.Thresholds{CompareAlpha: Alpha}

// LegValue is one leg's value of a compared quantity.
type LegValue struct {
	// Leg is the leg's run label, "r<N>".
	Leg   string
	Value float64
}

// CI is a confidence interval [lo, hi] around an arm's median, each bound
// the value of one of its legs (an order statistic). A nil bound is
// unbounded on that side: the arm has too few legs for an interval at
// Confidence there. In JSON it is [lo, hi], null for an unbounded side.
type CI [2]*float64

// Test is a two-sided Mann–Whitney U test of ours against baseline over
// the legs' values of one quantity, with each arm's median confidence
// interval, as benchstat computes them (benchmath.AssumeNothing).
type Test struct {
	OursCI     CI `json:"ours_ci"`
	BaselineCI CI `json:"baseline_ci"`
	// P is the two-sided p-value, rounded to 4 significant digits; nil
	// when an arm has fewer than MinLegs legs with a value.
	P *float64 `json:"p"`
	// Exact is p as benchmath computed it, for printing at fewer digits
	// without rounding twice; P decides.
	Exact float64 `json:"-"`
	// OursLegs and BaselineLegs are the values the test read, in leg
	// order; they are for reports (all-runs.json has every leg).
	OursLegs     []LegValue `json:"-"`
	BaselineLegs []LegValue `json:"-"`
	// MinP is the smallest two-sided p the two arms' leg counts can give
	// (no value of one arm between values of the other); 0 when P is nil.
	MinP float64 `json:"-"`
}

// Significant reports whether the test detected a difference: p < Alpha.
// The rounded p decides, so that a reader of summary.json counts the same.
func (t Test) Significant() bool { return t.P != nil && *t.P < Alpha }

// Reaches reports whether the arms' leg counts can give p < Alpha at all.
func (t Test) Reaches() bool { return t.P != nil && t.MinP < Alpha }

// Significance is a family's count of significant comparisons.
type Significance struct {
	// Test is TestName.
	Test  string  `json:"test"`
	Alpha float64 `json:"alpha"`
	// Points are the comparisons tested or not: THROUGHPUT's points both
	// arms have; for MEMORY 1 when both arms have a memory record, else 0.
	Points int `json:"points"`
	// SignificantPoints are those where p < Alpha.
	SignificantPoints int `json:"significant_points"`
}

// newSignificance counts the significant tests among ts.
func newSignificance(ts []Test) Significance {
	s := Significance{Test: TestName, Alpha: Alpha, Points: len(ts)}
	for _, t := range ts {
		if t.Significant() {
			s.SignificantPoints++
		}
	}
	return s
}

// compareLegs tests ours against baseline over the legs' values.
func compareLegs(ours, baseline []LegValue) Test {
	t := Test{OursLegs: ours, BaselineLegs: baseline, OursCI: medianCI(ours), BaselineCI: medianCI(baseline)}
	if len(ours) < MinLegs || len(baseline) < MinLegs {
		return t
	}
	// benchmath reports samples that are all equal, which the U test
	// cannot rank, as p = 1 with a warning; so do we.
	c := benchmath.AssumeNothing.Compare(sample(ours), sample(baseline))
	t.P, t.Exact = sig4(c.P), c.P
	t.MinP = MinP(len(ours), len(baseline))
	return t
}

// sample is the legs' values as a benchmath sample (NewSample sorts its
// argument, so it gets a copy).
func sample(legs []LegValue) *benchmath.Sample {
	xs := make([]float64, len(legs))
	for i, l := range legs {
		xs[i] = l.Value
	}
	return benchmath.NewSample(xs, &thresholds)
}

// medianCI is the interval around the legs' median at Confidence, as
// benchmath's AssumeNothing.Summary computes it. Only the bounds are
// taken: the median itself is Median's (the contract's), and each bound,
// a leg's value, is written as medians are.
func medianCI(legs []LegValue) CI {
	if len(legs) == 0 {
		return CI{}
	}
	s := benchmath.AssumeNothing.Summary(sample(legs), Confidence)
	var ci CI
	if !math.IsInf(s.Lo, 0) {
		ci[0] = report(&s.Lo)
	}
	if !math.IsInf(s.Hi, 0) {
		ci[1] = report(&s.Hi)
	}
	return ci
}

// sig4 rounds p to 4 significant digits: p-values are written at that
// precision, so that the last bits of the exact distribution's sums cannot
// change a byte of the outputs.
func sig4(p float64) *float64 {
	r, _ := strconv.ParseFloat(strconv.FormatFloat(p, 'g', 4, 64), 64)
	return &r
}

var minPCache sync.Map // [2]int → float64

// MinP is the smallest two-sided p a Mann–Whitney U test of n1 legs
// against n2 can give, as benchmath computes it: the p of two arms whose
// values do not interleave at all. Both must be ≥ 1.
func MinP(n1, n2 int) float64 {
	key := [2]int{n1, n2}
	if p, ok := minPCache.Load(key); ok {
		return p.(float64)
	}
	a, b := make([]LegValue, n1), make([]LegValue, n2)
	for i := range a {
		a[i].Value = float64(i + 1)
	}
	for i := range b {
		b[i].Value = float64(n1 + i + 1)
	}
	p := *sig4(benchmath.AssumeNothing.Compare(sample(a), sample(b)).P)
	minPCache.Store(key, p)
	return p
}

// LegsNeeded is the fewest legs per arm with which the test can detect a
// difference at Alpha: the first n for which MinP(n, n) < Alpha. It is 0
// when no n up to 50 can.
var LegsNeeded = sync.OnceValue(func() int {
	for n := 1; n <= maxLegsSearched; n++ {
		if MinP(n, n) < Alpha {
			return n
		}
	}
	return 0
})

// CILegsNeeded is the fewest legs an arm needs for a median interval at
// Confidence bounded on both sides, as benchmath computes it; 0 when no
// n up to 50 gives one.
var CILegsNeeded = sync.OnceValue(func() int {
	for n := 1; n <= maxLegsSearched; n++ {
		legs := make([]LegValue, n)
		for i := range legs {
			legs[i].Value = float64(i + 1)
		}
		if ci := medianCI(legs); ci[0] != nil && ci[1] != nil {
			return n
		}
	}
	return 0
})
