package history

import (
	"math"
	"sort"
)

// maxExactWork bounds the exact rank-sum distribution's work (legs ×
// newest legs × rank sums); beyond it, the normal approximation with
// the ties' correction is used. Histories under MinSegment grids of up to
// about 60 legs each stay exact.
const maxExactWork = 50_000_000

// rankSumP is the one-sided Mann–Whitney U test of x against y: less is
// the probability, were x and y one distribution, of x's rank sum being
// at most the one observed (x lower), greater of its being at least it
// (x higher). Ties take their mean rank, and the distribution is the
// exact one of the rank sum of len(x) values drawn from these very ranks
// (a test conditional on the ties, as benchmath's).
func rankSumP(x, y []float64) (less, greater float64) {
	type obs struct {
		v   float64
		inX bool
	}
	all := make([]obs, 0, len(x)+len(y))
	for _, v := range x {
		all = append(all, obs{v, true})
	}
	for _, v := range y {
		all = append(all, obs{v, false})
	}
	sort.SliceStable(all, func(i, j int) bool { return all[i].v < all[j].v })
	n, m := len(all), len(x)
	// Twice each mid-rank, an integer: a run of ties at positions i..j
	// (from 1) has mid-rank (i+j)/2.
	r2 := make([]int, n)
	for i := 0; i < n; {
		j := i
		for j+1 < n && all[j+1].v == all[i].v {
			j++
		}
		for k := i; k <= j; k++ {
			r2[k] = (i + 1) + (j + 1)
		}
		i = j + 1
	}
	obsSum := 0
	for i, o := range all {
		if o.inX {
			obsSum += r2[i]
		}
	}
	maxSum := 0
	for _, r := range r2[n-m:] {
		maxSum += r
	}
	if float64(n)*float64(m)*float64(maxSum+1) > maxExactWork {
		return rankSumNormal(r2, m, obsSum)
	}
	// ways[k][s]: how many k-subsets of the ranks seen so far have
	// doubled rank sum s.
	ways := make([][]float64, m+1)
	for k := range ways {
		ways[k] = make([]float64, maxSum+1)
	}
	ways[0][0] = 1
	for i, r := range r2 {
		for k := min(i+1, m); k >= 1; k-- {
			row, prev := ways[k], ways[k-1]
			for s := maxSum; s >= r; s-- {
				row[s] += prev[s-r]
			}
		}
	}
	var total, le, ge float64
	for s, w := range ways[m] {
		total += w
		if s <= obsSum {
			le += w
		}
		if s >= obsSum {
			ge += w
		}
	}
	return le / total, ge / total
}

// rankSumNormal is rankSumP's normal approximation, with the ties'
// variance correction and a continuity correction of half a rank.
func rankSumNormal(r2 []int, m, obsSum int) (less, greater float64) {
	n := len(r2)
	var sum, sq float64
	for _, r := range r2 {
		sum += float64(r)
		sq += float64(r) * float64(r)
	}
	mean := sum / float64(n)
	pop := sq/float64(n) - mean*mean
	// The variance of a sum of m values drawn without replacement.
	v := float64(m) * pop * float64(n-m) / float64(n-1)
	if v <= 0 {
		return 1, 1
	}
	sd := math.Sqrt(v)
	mu := float64(m) * mean
	o := float64(obsSum)
	less = 0.5 * math.Erfc(-((o+1)-mu)/sd/math.Sqrt2)
	greater = 0.5 * math.Erfc(((o-1)-mu)/sd/math.Sqrt2)
	return math.Min(less, 1), math.Min(greater, 1)
}
