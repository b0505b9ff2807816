package history

import (
	"fmt"
	"math"
	"math/rand/v2"
	"sort"
	"sync"
)

// NullDraws is how many random orderings of a segment's ranks make the
// null distribution of the split statistic at that length: a calibrated p
// is never below 1/(NullDraws+1).
const NullDraws = 20000

// nullSeed makes every length's null distribution the same on every run.
const nullSeed = 20261201

// MinP is the smallest p the calibration can resolve, 1/(NullDraws+1): a
// --p at or below it could never be met.
const MinP = 1.0 / (NullDraws + 1)

// splitStat is the largest standardized Mann–Whitney (rank-sum) statistic
// of xs over every split τ in [1, n), with the first τ at which it is
// reached:
//
//	Z(τ) = |S(τ) − τ(n+1)/2| / √(τ(n−τ)(n+1)/12)
//
// where S(τ) is the sum of the ranks (ties given their mean rank) of
// xs[:τ] within xs. Under independent, identically distributed values the
// ranks are a uniformly random ordering of 1…n whatever the values'
// distribution, so the maximum's null distribution depends on n alone.
func splitStat(xs []float64) (tau int, z float64) {
	return maxRankZ(ranks(xs))
}

// maxRankZ is splitStat on ranks already computed.
func maxRankZ(r []float64) (int, float64) {
	n := float64(len(r))
	best, bestZ := 0, -1.0
	var s float64
	for t := 1; t < len(r); t++ {
		s += r[t-1]
		ft := float64(t)
		z := math.Abs(s-ft*(n+1)/2) / math.Sqrt(ft*(n-ft)*(n+1)/12)
		if z > bestZ {
			best, bestZ = t, z
		}
	}
	return best, bestZ
}

// rankZAt is Z(τ) of xs at one split.
func rankZAt(xs []float64, tau int) float64 {
	r := ranks(xs)
	n, ft := float64(len(r)), float64(tau)
	var s float64
	for _, v := range r[:tau] {
		s += v
	}
	return math.Abs(s-ft*(n+1)/2) / math.Sqrt(ft*(n-ft)*(n+1)/12)
}

// ranks is each value's rank within xs, 1…n, ties given their mean rank.
func ranks(xs []float64) []float64 {
	idx := make([]int, len(xs))
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool { return xs[idx[a]] < xs[idx[b]] })
	r := make([]float64, len(xs))
	for i := 0; i < len(idx); {
		j := i + 1
		for j < len(idx) && xs[idx[j]] == xs[idx[i]] {
			j++
		}
		mid := float64(i+j+1) / 2 // mean of ranks i+1 … j
		for k := i; k < j; k++ {
			r[idx[k]] = mid
		}
		i = j
	}
	return r
}

// nullCache holds, per length, the sorted maxima of the split statistic
// over NullDraws random orderings of 1…n.
var nullCache = struct {
	sync.Mutex
	by map[int][]float32
}{by: map[int][]float32{}}

// null is the sorted null sample of the split statistic's maximum at
// length n, drawn once per length with a seed of its own.
func null(n int) []float32 {
	nullCache.Lock()
	defer nullCache.Unlock()
	if s, ok := nullCache.by[n]; ok {
		return s
	}
	r := rand.New(rand.NewPCG(nullSeed, uint64(n)))
	perm := make([]float64, n)
	for i := range perm {
		perm[i] = float64(i + 1)
	}
	s := make([]float32, NullDraws)
	for k := range s {
		r.Shuffle(n, func(i, j int) { perm[i], perm[j] = perm[j], perm[i] })
		_, z := maxRankZ(perm)
		s[k] = float32(z)
	}
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	nullCache.by[n] = s
	return s
}

// calibratedP is the permutation p of a split statistic z at length n:
// (1 + how many null maxima reach it) / (NullDraws + 1). It accounts for
// the split having been chosen as the best of the n−1, so it is the
// probability that noise alone gives any split that large. A statistic
// at a given split is compared with the same null of maxima, which can
// only make its p larger.
func calibratedP(n int, z float64) float64 {
	if n < 2 {
		return 1
	}
	s := null(n)
	// The null is stored in float32: a statistic within rounding of a
	// null value counts as reaching it.
	zf := float32(z * (1 - 1e-6))
	at := sort.Search(len(s), func(i int) bool { return s[i] >= zf })
	return float64(1+len(s)-at) / float64(len(s)+1)
}

// detectCalibrated is the calibrated detection: binary segmentation by the
// split statistic, each segment's best split kept when its calibrated p
// is below d.P, then the merge step as Otava's method has it (the weakest
// change dropped while its p, retested between its neighbours, is not
// below d.P, or while it is the smallest and not above d.MinMagnitude).
// Under pure noise the first test, of the whole series, is the only one
// that can start a detection, so the share of noise series with any
// change is the level of that one test: d.P.
func detectCalibrated(xs []float64, d Detection) []Change {
	var idx []int
	var seg func(a, b int)
	seg = func(a, b int) {
		if b-a < 2 {
			return
		}
		tau, z := splitStat(xs[a:b])
		if !(calibratedP(b-a, z) < d.P) {
			return
		}
		idx = append(idx, a+tau)
		seg(a, a+tau)
		seg(a+tau, b)
	}
	seg(0, len(xs))
	sort.Ints(idx)
	cps := make([]Change, len(idx))
	for i := range idx {
		cps[i] = testCalibrated(xs, idx, i)
	}
	return mergeWith(cps, xs, d.P, d.MinMagnitude, false, testCalibrated)
}

// describe is the detection in words, as the reports print it.
func (d Detection) describe() string {
	if d.Method == Otava {
		return fmt.Sprintf("E-divisive means with a Student t-test (Otava's method), window %d, p < %g", d.Window, d.P)
	}
	return fmt.Sprintf("binary segmentation by the largest rank-sum (Mann–Whitney) statistic over splits, its p from %d random orderings of the segment (so it accounts for the split being the best of all), p < %g, then Otava's merge step", NullDraws, d.P)
}

// testCalibrated is change i of idx tested between its neighbours: the
// split statistic at that split, its p from the null of maxima at the
// length between the neighbours.
func testCalibrated(xs []float64, idx []int, i int) Change {
	lo, hi := 0, len(xs)
	if i > 0 {
		lo = idx[i-1]
	}
	if i+1 < len(idx) {
		hi = idx[i+1]
	}
	c := Change{Index: idx[i]}
	c.MeanBefore, c.StdBefore = meanStd(xs[lo:idx[i]])
	c.MeanAfter, c.StdAfter = meanStd(xs[idx[i]:hi])
	c.P = calibratedP(hi-lo, rankZAt(xs[lo:hi], idx[i]-lo))
	return c
}
