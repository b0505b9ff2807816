package history

import (
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"strings"
	"testing"
	"time"
)

// The bounds of SPEC §11.5 the calibration is held to.
const (
	// maxFalseAlarm is the largest share of pure-noise series that may
	// report any change at the default setting.
	maxFalseAlarm = 0.01
	// minPower2 and minPower3 are the smallest shares of series of 80
	// values with a 2σ (3σ) step in the middle in which a change is found
	// within datingSlack grids of the step.
	minPower2 = 0.90
	minPower3 = 0.98
	// datingSlack is how far from the step, in grids, a change may be
	// dated and still count as finding it.
	datingSlack = 3
	// ratesSeries is how many series each case measures.
	ratesSeries = 1000
)

// noise draws one value of unit scale.
type noise struct {
	name string
	draw func(r *rand.Rand) float64
}

var (
	gaussian = noise{"Gaussian", func(r *rand.Rand) float64 { return r.NormFloat64() }}
	// student3 is Student-t with 3 degrees of freedom: a normal over the
	// root of an independent χ²(3)/3.
	student3 = noise{"Student-t 3 dof", func(r *rand.Rand) float64 {
		z := r.NormFloat64()
		a, b, c := r.NormFloat64(), r.NormFloat64(), r.NormFloat64()
		return z / math.Sqrt((a*a+b*b+c*c)/3)
	}}
)

// series is n values of noise, AR(1) with coefficient rho (0:
// independent), scaled to unit variance, plus a step of size step at
// index at (step 0: none), around 100.
func series(r *rand.Rand, nz noise, n int, rho float64, at int, step float64) []float64 {
	xs := make([]float64, n)
	prev := 0.0
	for i := range xs {
		e := nz.draw(r)
		if rho != 0 {
			e = rho*prev + math.Sqrt(1-rho*rho)*e
			prev = e
		}
		xs[i] = 100 + e
		if step != 0 && i >= at {
			xs[i] += step
		}
	}
	return xs
}

// rate is the share of ratesSeries series for which hit is true, with
// the default detection.
func rate(seed uint64, gen func(r *rand.Rand) []float64, hit func(xs []float64, cs []Change) bool) float64 {
	return rateWith(seed, DefaultDetection, gen, hit)
}

// rateWith is rate with detection d.
func rateWith(seed uint64, d Detection, gen func(r *rand.Rand) []float64, hit func(xs []float64, cs []Change) bool) float64 {
	r := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	hits := 0
	for k := 0; k < ratesSeries; k++ {
		xs := gen(r)
		if hit(xs, Detect(xs, d)) {
			hits++
		}
	}
	return float64(hits) / ratesSeries
}

func anyChange(_ []float64, cs []Change) bool { return len(cs) > 0 }

func foundNear(at int) func([]float64, []Change) bool {
	return func(_ []float64, cs []Change) bool {
		for _, c := range cs {
			if c.Index >= at-datingSlack && c.Index <= at+datingSlack {
				return true
			}
		}
		return false
	}
}

// TestCalibrationRates measures, over ratesSeries seeded series per case,
// the share of pure-noise series (independent Gaussian and Student-t 3
// dof; 30, 80, 200 and 1,000 values) in which the default detection
// reports any change, and the share of series of 80 values with a 2σ and
// a 3σ step after the 40th in which it finds a change within 3 grids of
// it, and holds them to SPEC §11.5's bounds. The AR(1) ρ = 0.3 noise is
// measured and printed, not held to a bound: the calibration assumes
// independent values. CLOCKGATE_RATES_TABLE=1 prints the tables as
// docs/history-check.md has them.
func TestCalibrationRates(t *testing.T) {
	began := time.Now()
	var table strings.Builder
	table.WriteString("| noise | values | series | any change reported |\n|:--|--:|--:|--:|\n")
	for ci, nz := range []noise{gaussian, student3} {
		for li, n := range []int{30, 80, 200, 1000} {
			got := rate(uint64(100+10*ci+li), func(r *rand.Rand) []float64 { return series(r, nz, n, 0, 0, 0) }, anyChange)
			fmt.Fprintf(&table, "| %s | %d | %d | %.1f%% |\n", nz.name, n, ratesSeries, 100*got)
			if got > maxFalseAlarm {
				t.Errorf("%s noise, %d values: %.1f%% of %d series report a change, over %.0f%%", nz.name, n, 100*got, ratesSeries, 100*maxFalseAlarm)
			}
		}
	}
	if os.Getenv("CLOCKGATE_RATES_TABLE") != "" {
		// Otava's method on the same Gaussian series, for comparison
		// (about 8 s more, so only when the tables are asked for).
		otava := Detection{Method: Otava, P: DefaultP, Window: Window}
		for li, n := range []int{30, 80, 200, 1000} {
			got := rateWith(uint64(100+li), otava, func(r *rand.Rand) []float64 { return series(r, gaussian, n, 0, 0, 0) }, anyChange)
			fmt.Fprintf(&table, "| Gaussian, Otava's method (for comparison) | %d | %d | %.1f%% |\n", n, ratesSeries, 100*got)
		}
	}
	for li, n := range []int{30, 80, 200, 1000} {
		got := rate(uint64(200+li), func(r *rand.Rand) []float64 { return series(r, gaussian, n, 0.3, 0, 0) }, anyChange)
		fmt.Fprintf(&table, "| AR(1) ρ = 0.3, Gaussian (reported, no bound) | %d | %d | %.1f%% |\n", n, ratesSeries, 100*got)
	}
	table.WriteString("\n| step (80 values, after the 40th) | noise | series | found within 3 grids | bound |\n|:--|:--|--:|--:|--:|\n")
	for _, tc := range []struct {
		nz    noise
		sigma float64
		bound float64
	}{{gaussian, 2, minPower2}, {gaussian, 3, minPower3}, {student3, 2, 0}, {student3, 3, 0}} {
		// Student-t 3 has variance 3: its σ is √3 of its scale.
		step := tc.sigma
		if tc.nz.name == student3.name {
			step *= math.Sqrt(3)
		}
		got := rate(uint64(300+10*tc.sigma)+uint64(len(tc.nz.name)), func(r *rand.Rand) []float64 { return series(r, tc.nz, 80, 0, 40, -step) }, foundNear(40))
		bound := "reported"
		if tc.bound > 0 {
			bound = fmt.Sprintf("≥ %.0f%%", 100*tc.bound)
		}
		fmt.Fprintf(&table, "| %gσ | %s | %d | %.1f%% | %s |\n", tc.sigma, tc.nz.name, ratesSeries, 100*got, bound)
		if got < tc.bound {
			t.Errorf("%gσ step in %s noise, 80 values: found within %d grids in %.1f%% of %d series, under %.0f%%", tc.sigma, tc.nz.name, datingSlack, 100*got, ratesSeries, 100*tc.bound)
		}
	}
	t.Logf("calibration over %d series per case, in %v:\n%s", ratesSeries, time.Since(began).Round(time.Millisecond), table.String())
	if os.Getenv("CLOCKGATE_RATES_TABLE") != "" {
		fmt.Print(table.String())
	}
}

// TestCalibratedPAgainstPermutations: the calibrated p of a series' best
// split is the share of random orderings of the series itself whose best
// split reaches the same statistic, to within four standard errors of
// that share (2,000 orderings), on
// series whose p spans 0.0001 to 0.99, Gaussian and heavy-tailed, with
// ties.
func TestCalibratedPAgainstPermutations(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 8))
	for trial := 0; trial < 12; trial++ {
		nz := []noise{gaussian, student3}[trial%2]
		n := []int{20, 45, 90}[trial%3]
		xs := series(r, nz, n, 0, n/2, -0.15*float64(trial))
		if trial%4 == 3 {
			for i := range xs {
				xs[i] = math.Round(xs[i] * 2)
			}
		}
		_, z := splitStat(xs)
		got := calibratedP(n, z)
		perm := append([]float64{}, xs...)
		hits := 0
		const perms = 2000
		for k := 0; k < perms; k++ {
			r.Shuffle(len(perm), func(i, j int) { perm[i], perm[j] = perm[j], perm[i] })
			if _, pz := splitStat(perm); pz >= z-1e-9 {
				hits++
			}
		}
		want := float64(hits) / perms
		t.Logf("trial %d: p %.4f vs %.4f", trial, got, want)
		tol := 4*math.Sqrt(want*(1-want)/perms) + 1.0/perms
		if math.Abs(got-want) > tol {
			t.Errorf("trial %d (%s, %d values): calibrated p %.4f, permutations of the series %.4f", trial, nz.name, n, got, want)
		}
	}
}
