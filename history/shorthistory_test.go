package history

import (
	"bytes"
	"context"
	"database/sql"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/clockgate/clockgate/history/histgen"
)

// TestRankSumPExact: the one-sided Mann–Whitney p is exact: 4 legs
// entirely below 4 give 1/70 (the smallest, under LegAlpha), one pair
// swapped 2/70 (over it); and on random small samples, ties included, it
// is the share of all ways to draw the newest legs from the pooled ones
// whose rank sum is as extreme.
func TestRankSumPExact(t *testing.T) {
	less, greater := rankSumP([]float64{1, 2, 3, 4}, []float64{5, 6, 7, 8})
	if less != 1.0/70 || greater != 1 {
		t.Errorf("4 below 4: p %v, %v; want 1/70, 1", less, greater)
	}
	if less, _ := rankSumP([]float64{1, 2, 3, 5}, []float64{4, 6, 7, 8}); less != 2.0/70 {
		t.Errorf("one pair swapped: p %v, want 2/70", less)
	}
	if less := 1.0 / 70; !(less < LegAlpha) || !(2.0/70 > LegAlpha) {
		t.Fatalf("LegAlpha %v no longer between 1/70 and 2/70", LegAlpha)
	}
	r := rand.New(rand.NewPCG(3, 4))
	for trial := 0; trial < 40; trial++ {
		nx, ny := 2+r.IntN(5), 2+r.IntN(7)
		x, y := make([]float64, nx), make([]float64, ny)
		for i := range x {
			x[i] = math.Round(r.NormFloat64() * 2)
		}
		for i := range y {
			y[i] = math.Round(r.NormFloat64()*2 + 0.5)
		}
		less, greater := rankSumP(x, y)
		wl, wg := bruteRankSum(x, y)
		if math.Abs(less-wl) > 1e-12 || math.Abs(greater-wg) > 1e-12 {
			t.Errorf("x %v y %v: p %v, %v; by enumeration %v, %v", x, y, less, greater, wl, wg)
		}
	}
	// The normal approximation, used beyond maxExactWork, stays close to
	// the exact p where both apply.
	x, y := make([]float64, 12), make([]float64, 40)
	for i := range x {
		x[i] = r.NormFloat64() - 0.6
	}
	for i := range y {
		y[i] = r.NormFloat64()
	}
	exact, _ := rankSumP(x, y)
	all := append(append([]float64{}, x...), y...)
	r2 := make([]int, len(all))
	obs := 0
	for i, v := range all {
		for _, w := range all {
			if w < v {
				r2[i] += 2
			} else if w == v {
				r2[i]++
			}
		}
		r2[i]++
		if i < len(x) {
			obs += r2[i]
		}
	}
	approx, _ := rankSumNormal(r2, len(x), obs)
	if math.Abs(approx-exact) > 0.01 {
		t.Errorf("normal approximation %v, exact %v", approx, exact)
	}
}

// bruteRankSum enumerates every way to take len(x) of the pooled values.
func bruteRankSum(x, y []float64) (less, greater float64) {
	all := append(append([]float64{}, x...), y...)
	rank := func(v float64) float64 {
		lt, eq := 0, 0
		for _, w := range all {
			if w < v {
				lt++
			} else if w == v {
				eq++
			}
		}
		return float64(lt) + float64(eq+1)/2
	}
	obs := 0.0
	for _, v := range x {
		obs += rank(v)
	}
	var total, le, ge float64
	n := len(all)
	for mask := 0; mask < 1<<n; mask++ {
		if bitsSet(mask) != len(x) {
			continue
		}
		s := 0.0
		for i := 0; i < n; i++ {
			if mask&(1<<i) != 0 {
				s += rank(all[i])
			}
		}
		total++
		if s <= obs+1e-9 {
			le++
		}
		if s >= obs-1e-9 {
			ge++
		}
	}
	return le / total, ge / total
}

func bitsSet(m int) int {
	n := 0
	for ; m != 0; m &= m - 1 {
		n++
	}
	return n
}

// legGrids is one grid per element of legs, a day apart, each holding
// key's value (the legs' median) and its legs, established.
func legGrids(key Key, legs ...[]float64) []*Grid {
	out := make([]*Grid, len(legs))
	for i, l := range legs {
		out[i] = &Grid{ID: fmt.Sprintf("g%03d", i), Date: start.Add(time.Duration(i) * 24 * time.Hour),
			Values: []Value{{key, median(l), true, l}}}
	}
	return out
}

func judgeLegGrids(t *testing.T, key Key, minChange float64, legs ...[]float64) Judgement {
	t.Helper()
	c, err := CheckGrids(legGrids(key, legs...), DefaultDetection, minChange, false)
	if err != nil {
		t.Fatal(err)
	}
	return c.Judgements[0]
}

func scaled(xs []float64, f float64) []float64 {
	out := make([]float64, len(xs))
	for i, x := range xs {
		out[i] = x * f
	}
	return out
}

var fourLegs = []float64{100.3, 99.6, 100.9, 99.2}

// TestShortHistoryDirectionPerFamily: on a series' second grid, four
// legs 20% below four legs are a regression of THROUGHPUT (the ratio,
// a point's ratio, an engine's throughput) and an improvement of MEMORY
// and ENERGY, and 20% above the other way round, each saying the test
// and its p.
func TestShortHistoryDirectionPerFamily(t *testing.T) {
	for _, tc := range []struct {
		key      Key
		down, up string
	}{
		{tpKey, VerdictRegression, VerdictImprovement},
		{engineKey, VerdictRegression, VerdictImprovement},
		{Key{"m", "ours/vllm", MetricPointRatio, "8/inf", "GPU"}, VerdictRegression, VerdictImprovement},
		{memKey, VerdictImprovement, VerdictRegression},
		{energyKey, VerdictImprovement, VerdictRegression},
	} {
		for _, f := range []struct {
			factor float64
			want   string
		}{{0.8, tc.down}, {1.2, tc.up}} {
			j := judgeLegGrids(t, tc.key, DefaultMinChangePct, fourLegs, scaled(fourLegs, f.factor))
			dir := "worse"
			if f.want == VerdictImprovement {
				dir = "better"
			}
			how := "the last segment has 1 established values, under 8: no prediction interval; the newest grid's 4 legs (median " +
				num(median(scaled(fourLegs, f.factor))) + ") against the 4 legs of the 1 grid before (median 99.9500): " +
				dir + " beyond --min-change 1% (one-sided Mann–Whitney against the legs before moved by it) at p 0.01429 < 0.02, the medians 20.00% apart"
			if j.Verdict != f.want || j.How != how {
				t.Errorf("%s, newest ×%v: %s (%s), want %s (%s)", tc.key, f.factor, j.Verdict, j.How, f.want, how)
			}
			if math.Abs(math.Abs(j.MagnitudePct)-20) > 1e-9 {
				t.Errorf("%s: magnitude %v, want ±20", tc.key, j.MagnitudePct)
			}
		}
	}
}

// TestShortHistoryAlpha: four legs entirely below four lowered by
// --min-change (p = 1/70) are a regression; with one pair swapped (p =
// 2/70 > 0.02) they are not, the message saying the p and the level.
func TestShortHistoryAlpha(t *testing.T) {
	before := []float64{100, 101, 102, 103}
	j := judgeLegGrids(t, tpKey, DefaultMinChangePct, before, []float64{80, 81, 82, 83})
	if j.Verdict != VerdictRegression || !strings.HasSuffix(j.How, "worse beyond --min-change 1% (one-sided Mann–Whitney against the legs before moved by it) at p 0.01429 < 0.02, the medians 19.70% apart") {
		t.Errorf("separated: %s (%s)", j.Verdict, j.How)
	}
	// 99.5 lies above 99, the lowest leg before lowered by 1%, and below
	// the next (99.99): one pair swapped.
	j = judgeLegGrids(t, tpKey, DefaultMinChangePct, before, []float64{80, 81, 82, 99.5})
	if j.Verdict != VerdictStable || !strings.HasSuffix(j.How, "no move beyond --min-change 1% (one-sided Mann–Whitney against the legs before moved by it: p 0.02857 worse, 1 better, not below 0.02)") {
		t.Errorf("one swapped: %s (%s)", j.Verdict, j.How)
	}
}

// TestShortHistoryMinLegs: three legs tonight against eight before, or
// four against three, are insufficient however far apart (3 against 8
// could reach p = 1/165), saying how many legs each side has and what to
// do; four against four are judged.
func TestShortHistoryMinLegs(t *testing.T) {
	eight := append(append([]float64{}, fourLegs...), scaled(fourLegs, 1.001)...)
	for _, tc := range []struct {
		name          string
		legs          [][]float64
		want, wantHow string
	}{
		{"3 against 8", [][]float64{fourLegs, scaled(fourLegs, 1.001), {70, 71, 72}}, VerdictInsufficient,
			"the last segment has 2 established values, under 8: no prediction interval; the newest grid has 3 legs and the 2 grids before it 8, under 4 a side: no leg test; record at least 4 legs per arm, or pass --allow-short-history"},
		{"4 against 3", [][]float64{{100, 101, 102}, {70, 71, 72, 73}}, VerdictInsufficient,
			"the last segment has 1 established values, under 8: no prediction interval; the newest grid has 4 legs and the 1 grid before it 3, under 4 a side: no leg test; record at least 4 legs per arm, or pass --allow-short-history"},
		{"4 against 8", [][]float64{fourLegs, scaled(fourLegs, 1.001), {70, 71, 72, 73}}, VerdictRegression, ""},
	} {
		_ = eight
		j := judgeLegGrids(t, tpKey, DefaultMinChangePct, tc.legs...)
		if j.Verdict != tc.want || (tc.wantHow != "" && j.How != tc.wantHow) {
			t.Errorf("%s: %s (%s), want %s (%s)", tc.name, j.Verdict, j.How, tc.want, tc.wantHow)
		}
		if tc.want == VerdictInsufficient && !math.IsNaN(j.MagnitudePct) {
			t.Errorf("%s: magnitude %v, want none", tc.name, j.MagnitudePct)
		}
	}
}

// TestShortHistoryNoLegs: a series whose newest grid keeps no legs (an
// ENERGY ratio, whose legs the store never keeps, or a grid added before
// it kept legs) is insufficient on a short history, saying the series
// keeps no legs, that it is judged once its segment holds 8 values, and
// --allow-short-history; never asking for legs nothing can record.
func TestShortHistoryNoLegs(t *testing.T) {
	want := "the last segment has 2 established values, under 8: no prediction interval; the series keeps no legs (an ENERGY ratio, a grid added before the store kept legs, or a bench format whose results name no max_concurrency, request_rate and output_throughput): no leg test; it is judged once its last segment holds 8 established values, or pass --allow-short-history"
	for _, tc := range []struct {
		name string
		key  Key
		legs [][]float64
	}{
		{"ENERGY ratio", energyKey, [][]float64{nil, nil, nil}},
		{"grids added before legs were kept", tpKey, [][]float64{fourLegs, nil, nil}},
	} {
		grids := legGrids(tc.key, tc.legs...)
		for i, l := range tc.legs {
			if l == nil {
				grids[i].Values[0].Value = 100 + float64(i)
			}
		}
		j := judgeGrids(t, grids)
		if j.Verdict != VerdictInsufficient || j.How != want || !math.IsNaN(j.MagnitudePct) {
			t.Errorf("%s: %s (%s, magnitude %v), want insufficient (%s)", tc.name, j.Verdict, j.How, j.MagnitudePct, want)
		}
	}
}

// TestShortHistoryNoLegsEnergyTree: the ENERGY ratio of a summarized
// tree (energy-clean), checked on its second night, is insufficient
// saying the series keeps no legs.
func TestShortHistoryNoLegsEnergyTree(t *testing.T) {
	var grids []*Grid
	for i := 0; i < 2; i++ {
		g, err := Load("../testdata/trees/energy-clean")
		if err != nil {
			t.Fatal(err)
		}
		g.ID = fmt.Sprintf("night%d", i)
		g.Date = g.Date.Add(time.Duration(i) * 24 * time.Hour)
		grids = append(grids, g)
	}
	c, err := CheckGrids(grids, DefaultDetection, DefaultMinChangePct, false)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, j := range c.Judgements {
		if j.Key.Metric != MetricEnergyRatio {
			continue
		}
		n++
		if j.Verdict != VerdictInsufficient || !strings.Contains(j.How, "; the series keeps no legs (an ENERGY ratio, a grid added before the store kept legs, or a bench format whose results name no max_concurrency, request_rate and output_throughput): no leg test; it is judged once its last segment holds 8 established values, or pass --allow-short-history") {
			t.Errorf("%s: %s (%s)", j.Key, j.Verdict, j.How)
		}
	}
	if n == 0 {
		t.Fatal("no ENERGY ratio series in energy-clean")
	}
}

func judgeGrids(t *testing.T, grids []*Grid) Judgement {
	t.Helper()
	c, err := CheckGrids(grids, DefaultDetection, DefaultMinChangePct, false)
	if err != nil {
		t.Fatal(err)
	}
	return c.Judgements[0]
}

// TestShortHistoryMinChange: legs entirely below but with medians 0.5%
// apart are stable at --min-change 1% and a regression at 0.4%.
func TestShortHistoryMinChange(t *testing.T) {
	before := []float64{100.0, 100.01, 100.02, 100.03}
	tonight := []float64{99.5, 99.51, 99.52, 99.53}
	j := judgeLegGrids(t, tpKey, 1, before, tonight)
	if j.Verdict != VerdictStable || !strings.HasSuffix(j.How, "no move beyond --min-change 1% (one-sided Mann–Whitney against the legs before moved by it: p 1 worse, 1 better, not below 0.02)") {
		t.Errorf("at 1%%: %s (%s)", j.Verdict, j.How)
	}
	if j := judgeLegGrids(t, tpKey, 0.4, before, tonight); j.Verdict != VerdictRegression {
		t.Errorf("at 0.4%%: %s (%s)", j.Verdict, j.How)
	}
}

// TestShortHistoryTestsTheMoveBeyondMinChange: legs entirely below the
// legs before, their medians 2.24% apart, but two of them above the legs
// before lowered by --min-change 1% (98.5 and 98.9 over 98.01): noise as
// wide as --min-change, stable; the plain test (p 1/70) would call it a
// regression. Memory legs above likewise, with the bad side up; at
// --min-change 0.1% both moves are beyond it and regressions.
func TestShortHistoryTestsTheMoveBeyondMinChange(t *testing.T) {
	before := []float64{99, 100, 101, 102}
	tonight := []float64{97, 98, 98.5, 98.9}
	j := judgeLegGrids(t, tpKey, 1, before, tonight)
	if j.Verdict != VerdictStable || !strings.HasSuffix(j.How, "no move beyond --min-change 1% (one-sided Mann–Whitney against the legs before moved by it: p 0.05714 worse, 1 better, not below 0.02)") {
		t.Errorf("throughput at 1%%: %s (%s)", j.Verdict, j.How)
	}
	// The same on the other side: memory (higher is worse) legs above.
	// 102.2 and 102.5 lie above every leg before, below 103.02 (102 raised
	// by 1%).
	up := before
	high := []float64{102.2, 102.5, 104, 105}
	if j := judgeLegGrids(t, memKey, 1, up, high); j.Verdict != VerdictStable || !strings.Contains(j.How, "no move beyond --min-change 1%") {
		t.Errorf("memory at 1%%: %s (%s)", j.Verdict, j.How)
	}
	// At --min-change 0.1% the move is beyond it: both are regressions.
	if j := judgeLegGrids(t, tpKey, 0.1, before, tonight); j.Verdict != VerdictRegression {
		t.Errorf("throughput at 0.1%%: %s (%s)", j.Verdict, j.How)
	}
	if j := judgeLegGrids(t, memKey, 0.1, up, high); j.Verdict != VerdictRegression {
		t.Errorf("memory at 0.1%%: %s (%s)", j.Verdict, j.How)
	}
}

// TestShortHistoryNewAndInsufficient: a series' first grid is new (exit
// 0); a second grid after a NOT ESTABLISHED first is insufficient, which
// fails the check (exit 1, the heading saying so and how many series)
// unless short histories are allowed; the outcome is never "stable".
func TestShortHistoryNewAndInsufficient(t *testing.T) {
	c, err := CheckGrids(legGrids(tpKey, fourLegs), DefaultDetection, 1, false)
	if err != nil {
		t.Fatal(err)
	}
	if j := c.Judgements[0]; j.Verdict != VerdictNew || j.How != "the series' first grid: nothing to compare it with" || c.Exit() != 0 {
		t.Errorf("one grid: %s (%s), exit %d", j.Verdict, j.How, c.Exit())
	}
	grids := legGrids(tpKey, fourLegs, scaled(fourLegs, 0.8))
	grids[0].Values[0].Established = false
	other := Key{"m", "ours/vllm", MetricPointRatio, "8/inf", "GPU"}
	grids[0].Values = append(grids[0].Values, Value{other, 1, true, fourLegs})
	grids[1].Values = append(grids[1].Values, Value{other, 1, true, scaled(fourLegs, 1.0001)})
	for _, allow := range []bool{false, true} {
		c, err := CheckGrids(grids, DefaultDetection, 1, false)
		if err != nil {
			t.Fatal(err)
		}
		c.AllowShortHistory = allow
		var j Judgement
		for _, x := range c.Judgements {
			if x.Key == tpKey {
				j = x
			}
		}
		if j.Verdict != VerdictInsufficient || j.How != "no established grid before the newest (1 grid, none ESTABLISHED): nothing to compare it with" {
			t.Errorf("after a NOT ESTABLISHED grid: %s (%s)", j.Verdict, j.How)
		}
		var md bytes.Buffer
		if err := c.Markdown(&md); err != nil {
			t.Fatal(err)
		}
		head, _, _ := strings.Cut(md.String(), "\n")
		wantExit, wantHead := 1, "## clockgate history check: INSUFFICIENT HISTORY; 1 of 2 series could not be judged"
		if allow {
			wantExit, wantHead = 0, "## clockgate history check: no regression; 1 of 2 series could not be judged (allowed: --allow-short-history)"
		}
		if c.Exit() != wantExit || head != wantHead {
			t.Errorf("allow %v: exit %d, heading %q; want %d, %q", allow, c.Exit(), head, wantExit, wantHead)
		}
		if !strings.Contains(md.String(), " 0 regression, 0 NOT ESTABLISHED, 1 insufficient, 0 improvement, 0 new, 1 stable. Exit ") {
			t.Errorf("allow %v: counts:\n%s", allow, md.String())
		}
		if !allow && !strings.Contains(md.String(), "| **insufficient** |") {
			t.Errorf("an insufficient series that fails is not in bold:\n%s", md.String())
		}
	}
}

var (
	legTmplMu sync.Mutex
	legTmpls  = map[string]*histgen.Template{}
)

// legTemplate is a summarized tree of testdata/trees as a template.
func legTemplate(t testing.TB, tree string) *histgen.Template {
	t.Helper()
	legTmplMu.Lock()
	defer legTmplMu.Unlock()
	if tm := legTmpls[tree]; tm != nil {
		return tm
	}
	tm, err := histgen.New("../testdata/trees/" + tree)
	if err != nil {
		t.Fatal(err)
	}
	legTmpls[tree] = tm
	return tm
}

// armsOf is the template's arms of engine.
func armsOf(tm *histgen.Template, engine string) []histgen.Arm {
	var out []histgen.Arm
	for _, a := range tm.Arms {
		if a.Engine == engine {
			out = append(out, a)
		}
	}
	return out
}

// nights checks a history of the template tree's grids as the scenario
// says, added to s.
func nights(t *testing.T, s Store, tree string, sc histgen.Scenario, allowShort bool) *Check {
	t.Helper()
	tm := legTemplate(t, tree)
	for i, g := range tm.Grids(sc) {
		sum, all, err := tm.Documents(g)
		if err != nil {
			t.Fatal(err)
		}
		gr, err := Parse(sum, all, fmt.Sprintf("night%d/summary.json", i), fmt.Sprintf("night%d/all-runs.json", i))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.Add(context.Background(), gr); err != nil {
			t.Fatal(err)
		}
	}
	grids, err := s.Grids(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	c, err := CheckGrids(grids, DefaultDetection, DefaultMinChangePct, false)
	if err != nil {
		t.Fatal(err)
	}
	c.AllowShortHistory = allowShort
	return c
}

// twoNights is a history of n nights from the template, a step from the
// second night on.
func twoNights(n int, steps ...histgen.Step) histgen.Scenario {
	return histgen.Scenario{Grids: n, Start: start, Seed: 7, NoiseTP: 0, NoiseClock: 0, BaseClockMHz: 1980, Steps: steps}
}

// TestShortHistoryNights: the new user's case and its neighbours, on
// SQLite and PostgreSQL alike, each markdown a golden: two nights, 5 legs
// per arm, fastengine 20% slower on the second (an ESTABLISHED drop):
// every fastengine series and every ratio of it a regression, exit 1;
// one night: every series new, exit 0; two nights with 3 legs per arm:
// insufficient, exit 1, and 0 with --allow-short-history. And the bad arm
// on the other side: vllm 25% faster on the second night lowers every
// ratio by 20%, a regression of the ratios (fastengine's legs over vllm's
// new median), vllm's own throughput an improvement.
func TestShortHistoryNights(t *testing.T) {
	for store, open := range stores(t) {
		for _, tc := range []struct {
			name       string
			tree       string
			sc         func(tm *histgen.Template) histgen.Scenario
			allowShort bool
			exit       int
			want       func(k Key) string
		}{
			{"two-nights-drop", "significance-separated", func(tm *histgen.Template) histgen.Scenario {
				return twoNights(2, histgen.Step{At: 1, Arms: armsOf(tm, "fastengine"), Throughput: 0.8, Clock: 1})
			}, false, 1, func(k Key) string {
				switch {
				case k.Metric == MetricMemoryRatio, k.Engines == "vllm":
					return VerdictStable
				}
				return VerdictRegression
			}},
			{"baseline-faster", "significance-separated", func(tm *histgen.Template) histgen.Scenario {
				return twoNights(2, histgen.Step{At: 1, Arms: armsOf(tm, "vllm"), Throughput: 1.25, Clock: 1})
			}, false, 1, func(k Key) string {
				switch {
				case k.Metric == MetricMemoryRatio, k.Engines == "fastengine":
					return VerdictStable
				case k.Engines == "vllm":
					return VerdictImprovement
				}
				return VerdictRegression
			}},
			{"one-night", "significance-separated", func(*histgen.Template) histgen.Scenario { return twoNights(1) }, false, 0,
				func(Key) string { return VerdictNew }},
			{"two-nights-three-legs", "significance-three-legs", func(tm *histgen.Template) histgen.Scenario {
				return twoNights(2, histgen.Step{At: 1, Arms: armsOf(tm, "fastengine"), Throughput: 0.8, Clock: 1})
			}, false, 1, func(Key) string { return VerdictInsufficient }},
			{"two-nights-three-legs-allowed", "significance-three-legs", func(tm *histgen.Template) histgen.Scenario {
				return twoNights(2, histgen.Step{At: 1, Arms: armsOf(tm, "fastengine"), Throughput: 0.8, Clock: 1})
			}, true, 0, func(Key) string { return VerdictInsufficient }},
		} {
			t.Run(store+"/"+tc.name, func(t *testing.T) {
				c := nights(t, open(t), tc.tree, tc.sc(legTemplate(t, tc.tree)), tc.allowShort)
				if c.Exit() != tc.exit {
					t.Errorf("exit %d, want %d", c.Exit(), tc.exit)
				}
				for _, j := range c.Judgements {
					if want := tc.want(j.Key); j.Verdict != want {
						t.Errorf("%s: %s (%s), want %s", j.Key, j.Verdict, j.How, want)
					}
					if j.Verdict == VerdictRegression && math.Abs(j.MagnitudePct+20) > 0.01 {
						t.Errorf("%s: magnitude %v%%, want -20%%", j.Key, j.MagnitudePct)
					}
				}
				var md bytes.Buffer
				if err := c.Markdown(&md); err != nil {
					t.Fatal(err)
				}
				checkTable(t, md.Bytes(), len(c.Judgements))
				if tc.name != "baseline-faster" {
					golden(t, "check-"+tc.name+".md", md.Bytes())
				}
			})
		}
	}
}

// TestLegsFromAllRuns: a grid's legs are what all-runs.json says of each
// leg, in run order: an engine's throughput legs have the arm's median
// as their median, a point ratio's legs (ours over the baseline's
// median) the point's ratio, the MEMORY ratio's legs the MEMORY ratio;
// the THROUGHPUT ratio has one leg per ours leg. An ENERGY ratio has
// none.
func TestLegsFromAllRuns(t *testing.T) {
	g, err := Load("../testdata/trees/significance-separated")
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]int{}
	for _, v := range g.Values {
		if v.Key.Metric == MetricFreeClock {
			if v.Legs != nil {
				t.Errorf("%s: legs %v", v.Key, v.Legs)
			}
			continue
		}
		if len(v.Legs) != 5 {
			t.Errorf("%s: %d legs, want 5", v.Key, len(v.Legs))
			continue
		}
		seen[v.Key.Metric]++
		if v.Key.Metric == MetricThroughputRatio {
			continue
		}
		if m := median(v.Legs); math.Abs(m-v.Value) > 0.00005 {
			t.Errorf("%s: legs' median %v, value %v", v.Key, m, v.Value)
		}
	}
	if fmt.Sprint(seen) != "map[MEMORY ratio:1 THROUGHPUT ratio:1 point ratio:4 throughput:8]" {
		t.Errorf("series with legs: %v", seen)
	}
	e, err := Load("../testdata/trees/energy-clean")
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range e.Values {
		if v.Key.Metric == MetricEnergyRatio && v.Legs != nil {
			t.Errorf("%s: legs %v", v.Key, v.Legs)
		}
	}
}

// TestHTMLAxisAtLeastMinChange: history.html draws a quiet series (a
// 0.01% move) on an axis of ± --min-change around its median, its
// labels at 99 and 101 for a median of 100 at 1% (at 97 and 103 at 3%);
// a series that moves further keeps its own range.
func TestHTMLAxisAtLeastMinChange(t *testing.T) {
	quiet := gridsOf(tpKey, []float64{100, 100.01, 100, 99.99, 100})
	for _, tc := range []struct {
		grids  []*Grid
		minPct float64
		lo, hi string
	}{
		{quiet, 1, "99.0000", "101.0000"},
		{quiet, 3, "97.0000", "103.0000"},
		{gridsOf(tpKey, []float64{100, 95, 104, 100, 100}), 1, "95.0000", "104.0000"},
	} {
		r := Build(tc.grids, DefaultDetection)
		r.MinChangePct = tc.minPct
		var b bytes.Buffer
		if err := r.HTML(&b); err != nil {
			t.Fatal(err)
		}
		for _, label := range []string{tc.lo, tc.hi} {
			if !strings.Contains(b.String(), `text-anchor="end">`+label+`</text>`) {
				t.Errorf("--min-change %g%%: no axis label %s in:\n%s", tc.minPct, label, b.String())
			}
		}
	}
	if r := Build(quiet, DefaultDetection); r.MinChangePct != DefaultMinChangePct {
		t.Errorf("Build's axis bound %v, want the default --min-change", r.MinChangePct)
	}
}

// TestMigrationToLegs: a history of schema version 1 (no legs) is
// migrated when opened: its grids read back with no legs (judged
// insufficient where their legs would be needed), and grids added after
// keep theirs.
func TestMigrationToLegs(t *testing.T) {
	path := filepath.Join(t.TempDir(), "v1.sqlite")
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	for _, stmt := range append(strings.Split(migrations[0], ";"),
		`CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY)`,
		`INSERT INTO schema_migrations (version) VALUES (1)`,
		`INSERT INTO grids (id, date) VALUES ('old', '2026-09-01T02:00:00.000000000Z')`,
		`INSERT INTO grid_values VALUES ('old', 'm', 'ours/vllm', 'THROUGHPUT ratio', '', 'GPU', 1.1, 1)`) {
		if _, err := db.Exec(stmt); err != nil {
			t.Fatalf("%s: %v", stmt, err)
		}
	}
	db.Close()
	s, err := Open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	g := legGrids(tpKey, fourLegs, scaled(fourLegs, 0.8))[1]
	g.ID = "new"
	if _, err := s.Add(context.Background(), g); err != nil {
		t.Fatal(err)
	}
	grids, err := s.Grids(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(grids) != 2 || grids[0].Values[0].Legs != nil || !reflect.DeepEqual(grids[1].Values[0].Legs, scaled(fourLegs, 0.8)) {
		t.Fatalf("read back %+v, %+v", grids[0].Values, grids[1].Values)
	}
	c, err := CheckGrids(grids, DefaultDetection, DefaultMinChangePct, false)
	if err != nil {
		t.Fatal(err)
	}
	if j := c.Judgements[0]; j.Verdict != VerdictInsufficient || !strings.Contains(j.How, "the 1 grid before it 0, under 4 a side") {
		t.Errorf("after a grid of version 1: %s (%s)", j.Verdict, j.How)
	}
}

// TestLegsFromRealFiles: the legs are read from all-runs.json as
// summarize kept real files written by vLLM 0.25.1, vLLM 0.5.4 and
// SGLang's bench_serving (testdata/bench-real, their sources in its
// README.md): a point by its max_concurrency (null: none) and
// request_rate ("inf", SGLang's Infinity, a number), its
// output_throughput as written; a point whose throughput is 0 (every
// request failed) gives no leg value.
func TestLegsFromRealFiles(t *testing.T) {
	for _, tc := range []struct {
		tree, arm string
		want      map[string]float64
	}{
		{"real-vllm-0.25", "opt-125m\x00vllm", map[string]float64{"2/inf": 191.2005994745598}},
		{"real-vllm-0.25", "opt-125m\x00vllm-crashed", map[string]float64{}},
		{"real-sglang", "deepseek-v3\x00sglang", map[string]float64{"none/inf": 12412.394674113431}},
		{"real-sglang", "llama-3.3-70b-instruct\x00sglang", map[string]float64{"none/1": 537.4147638064377, "none/2": 987.4153150360022,
			"none/4": 2048.3392828707633, "none/8": 3515.838989447663, "none/16": 4238.110256944623}},
		{"real-vllm-0.5", "mistral-7b-instruct-v0.3\x00vllm", map[string]float64{"none/inf": 238.39258442037368}},
	} {
		data, err := os.ReadFile("../golden/" + tc.tree + "/all-runs.json")
		if err != nil {
			t.Fatal(err)
		}
		d := doc{tc.tree + "/all-runs.json", data}
		v, err := d.parse()
		if err != nil {
			t.Fatal(err)
		}
		arms, err := readLegs(field{d, "", v})
		if err != nil {
			t.Fatal(err)
		}
		a := arms[tc.arm]
		if a == nil || len(a.legs) == 0 {
			t.Fatalf("%s: no arm %q", tc.tree, tc.arm)
		}
		if got := a.sortedLegs()[0].tput; !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s %q r1: %v, want %v", tc.tree, tc.arm, got, tc.want)
		}
	}
}

// TestShortHistoryMediansBeyondMinChange: the rank test can find tonight's
// legs below the legs before lowered by --min-change while their medians
// are 0.50% apart (two humps: 19 legs before at 95, 2 at 100, 19 at 150;
// tonight 19 at 50 and 21 at 99.5): stable, the message saying why; at
// --min-change 0.4% a regression.
func TestShortHistoryMediansBeyondMinChange(t *testing.T) {
	var before, tonight []float64
	for i := 0; i < 19; i++ {
		before = append(before, 95, 150)
		tonight = append(tonight, 50)
	}
	before = append(before, 100, 100)
	for i := 0; i < 21; i++ {
		tonight = append(tonight, 99.5)
	}
	j := judgeLegGrids(t, tpKey, 1, before, tonight)
	if j.Verdict != VerdictStable || !strings.Contains(j.How, " < 0.02 beyond --min-change 1%, but the medians 0.50% apart, not beyond it") {
		t.Errorf("at 1%%: %s (%s)", j.Verdict, j.How)
	}
	if j := judgeLegGrids(t, tpKey, 0.4, before, tonight); j.Verdict != VerdictRegression {
		t.Errorf("at 0.4%%: %s (%s)", j.Verdict, j.How)
	}
}
