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

// The bounds of SPEC §12.1.1 the small-history rule is held to.
const (
	// minShortPower is the smallest share of two-night series, 4 legs a
	// side, a 20% drop on the second night, that the check calls a
	// regression.
	minShortPower = 0.99
	// shortLegs is the legs per grid of the calibration's series.
	shortLegs = 4
	// shortSeriesQuick is how many series each case measures in a plain
	// go test; CLOCKGATE_RATES_TABLE=1 measures ratesSeries, the table
	// docs/history-check.md prints.
	shortSeriesQuick = 250
)

// legSeries is n grids of shortLegs legs each, every leg 100 plus noise
// of scale sigma (in percent of 100, as §11.5's series: unit scale is 1%),
// the legs of grids from dropAt on multiplied by factor.
func legSeries(r *rand.Rand, nz noise, n int, sigma float64, dropAt int, factor float64) [][]float64 {
	out := make([][]float64, n)
	for i := range out {
		legs := make([]float64, shortLegs)
		for k := range legs {
			legs[k] = 100 + sigma*nz.draw(r)
			if dropAt > 0 && i >= dropAt {
				legs[k] *= factor
			}
		}
		out[i] = legs
	}
	return out
}

// shortRates is the share of series the check calls a regression and an
// improvement at their newest grid, over count seeded series of gen,
// judged as a THROUGHPUT ratio at the default --min-change.
func shortRates(t *testing.T, seed uint64, count int, gen func(r *rand.Rand) [][]float64) (regression, improvement float64) {
	t.Helper()
	r := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	reg, imp := 0, 0
	for k := 0; k < count; k++ {
		c, err := CheckGrids(legGrids(tpKey, gen(r)...), DefaultDetection, DefaultMinChangePct, false)
		if err != nil {
			t.Fatal(err)
		}
		switch j := c.Judgements[0]; j.Verdict {
		case VerdictRegression:
			reg++
		case VerdictImprovement:
			imp++
		case VerdictStable:
		default:
			t.Fatalf("series %d: %s (%s), want a judged verdict", k, j.Verdict, j.How)
		}
	}
	return float64(reg) / float64(count), float64(imp) / float64(count)
}

// TestCalibrationShortHistory measures the small-history rule of SPEC
// §12.1.1 as §11.5 measures the detection: on pure-noise series (4 legs
// per grid, each 100 plus Gaussian or Student-t 3 dof noise of scale
// 0.5, 1 and 5, that is 0.5%, 1% and 5% of the value; 1 is §11.5's) of
// 2, 3, 5 and 8 grids, the share the check calls a regression at the
// newest grid; and on two-night series with a 20% drop on the second, 1%
// noise, the share it finds, held to at least 99%.
//
// Where the legs' noise is at most --min-change (0.5% and §11.5's 1%),
// the share of series reporting any change (a regression or an
// improvement) is held to SPEC §12.1.1's 1% (maxFalseAlarm). Noise five
// times --min-change is beyond the SPEC's cases: there the rule's test
// of a move beyond --min-change is nearly the plain test, and its rate
// is held to the rule's level, LegAlpha (with three standard errors of
// the measured share), and printed, met or not. A plain go test measures
// shortSeriesQuick series per case; CLOCKGATE_RATES_TABLE=1 measures
// ratesSeries and prints the table docs/history-check.md has.
func TestCalibrationShortHistory(t *testing.T) {
	began := time.Now()
	count := shortSeriesQuick
	full := os.Getenv("CLOCKGATE_RATES_TABLE") != ""
	if full {
		count = ratesSeries
	}
	levelBound := LegAlpha + 3*math.Sqrt(LegAlpha*(1-LegAlpha)/float64(count))
	var table strings.Builder
	table.WriteString("| noise (per leg) | grids | legs per grid | series | regression | improvement | SPEC's 1% (any change) |\n|:--|--:|--:|--:|--:|--:|:--|\n")
	for ci, nz := range []noise{gaussian, student3} {
		for si, sigma := range []float64{0.5, 1, 5} {
			for ni, n := range []int{2, 3, 5, 8} {
				seed := uint64(500 + 100*ci + 10*si + ni)
				reg, imp := shortRates(t, seed, count, func(r *rand.Rand) [][]float64 { return legSeries(r, nz, n, sigma, 0, 1) })
				met := "met"
				if reg+imp > maxFalseAlarm {
					met = "**not met**"
				}
				if sigma <= DefaultMinChangePct && reg+imp > maxFalseAlarm {
					t.Errorf("%s noise of %g%%, %d grids: %.1f%% of %d series report a change (%.1f%% regression, %.1f%% improvement), over SPEC §12.1.1's %g%%",
						nz.name, sigma, n, 100*(reg+imp), count, 100*reg, 100*imp, 100*maxFalseAlarm)
				}
				if reg > levelBound {
					t.Errorf("%s noise of %g%%, %d grids: %.1f%% of %d series a regression, over the rule's level %g (%.1f%% with 3 standard errors)", nz.name, sigma, n, 100*reg, count, LegAlpha, 100*levelBound)
				}
				fmt.Fprintf(&table, "| %s, %g%% | %d | %d | %d | %.1f%% | %.1f%% | %s |\n", nz.name, sigma, n, shortLegs, count, 100*reg, 100*imp, met)
			}
		}
	}
	table.WriteString("\n| 20% drop on night 2 | noise (per leg) | legs a side | series | found (regression) | bound |\n|:--|:--|--:|--:|--:|--:|\n")
	for ci, nz := range []noise{gaussian, student3} {
		reg, _ := shortRates(t, uint64(700+ci), count, func(r *rand.Rand) [][]float64 { return legSeries(r, nz, 2, 1, 1, 0.8) })
		fmt.Fprintf(&table, "| two nights | %s, 1%% | %d | %d | %.1f%% | ≥ %.0f%% |\n", nz.name, shortLegs, count, 100*reg, 100*minShortPower)
		if reg < minShortPower {
			t.Errorf("20%% drop on night 2, %s noise: found in %.1f%% of %d series, under %.0f%%", nz.name, 100*reg, count, 100*minShortPower)
		}
	}
	t.Logf("small-history calibration over %d series per case, in %v:\n%s", count, time.Since(began).Round(time.Millisecond), table.String())
	if !full {
		return
	}
	fmt.Print(table.String())
	// The documentation's table is the measured one.
	doc, err := os.ReadFile("../docs/history-check.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(table.String(), "\n") {
		if line != "" && !strings.Contains(string(doc), line+"\n") {
			t.Errorf("docs/history-check.md lacks the measured row %q", line)
		}
	}
}
