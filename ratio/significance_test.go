package ratio

import (
	"encoding/json"
	"math"
	"reflect"
	"slices"
	"testing"

	"github.com/clockgate/clockgate/clocks"
)

func legValues(xs ...float64) []LegValue {
	out := make([]LegValue, len(xs))
	for i, x := range xs {
		out[i] = LegValue{Leg: "r" + string(rune('1'+i)), Value: x}
	}
	return out
}

// choose is n over k, exactly for the sizes here.
func choose(n, k int) float64 {
	r := 1.0
	for i := 1; i <= k; i++ {
		r = r * float64(n-k+i) / float64(i)
	}
	return r
}

// oracleP is the two-sided Mann–Whitney U p-value by enumeration: over
// every way of dealing the pooled values into arms of the two sizes, the
// share whose U (pairs where ours is above, ties counting one half) is at
// least as far from n1·n2/2 as the observed one. Ties are dealt as they
// are, which is the exact distribution given the ties.
func oracleP(ours, base []float64) float64 {
	pool := append(append([]float64{}, ours...), base...)
	n1, n := len(ours), len(ours)+len(base)
	u := func(in []bool) float64 {
		s := 0.0
		for i := range n {
			for j := range n {
				if in[i] && !in[j] {
					switch {
					case pool[i] > pool[j]:
						s++
					case pool[i] == pool[j]:
						s += 0.5
					}
				}
			}
		}
		return s
	}
	mu := float64(len(ours)*len(base)) / 2
	obs := make([]bool, n)
	for i := range n1 {
		obs[i] = true
	}
	far := math.Abs(u(obs) - mu)
	hits, total := 0, 0
	in := make([]bool, n)
	var deal func(from, left int)
	deal = func(from, left int) {
		if left == 0 {
			total++
			if math.Abs(u(in)-mu) >= far-1e-9 {
				hits++
			}
			return
		}
		for i := from; i <= n-left; i++ {
			in[i] = true
			deal(i+1, left-1)
			in[i] = false
		}
	}
	deal(0, n1)
	return float64(hits) / float64(total)
}

// TestLegsNeeded: the smallest two-sided p of n legs against n is that of
// two arms that do not interleave, 2 / C(2n, n): 3 legs per arm give 0.1,
// not below α = 0.05, and 4 give 2/70 = 0.02857, so 4 are needed.
func TestLegsNeeded(t *testing.T) {
	for n := 1; n <= 8; n++ {
		want := *sig4(min(1, 2/choose(2*n, n)))
		if got := MinP(n, n); got != want {
			t.Errorf("MinP(%d, %d) = %v, want 2/C(%d,%d) = %v", n, n, got, 2*n, n, want)
		}
	}
	if p := MinP(3, 3); p != 0.1 || p < Alpha {
		t.Errorf("3 legs per arm: smallest p %v; want 0.1, not below α %v", p, Alpha)
	}
	if p := MinP(4, 4); p != 0.02857 || !(p < Alpha) {
		t.Errorf("4 legs per arm: smallest p %v; want 0.02857, below α %v", p, Alpha)
	}
	if got := LegsNeeded(); got != 4 {
		t.Errorf("LegsNeeded() = %d, want 4", got)
	}
	// Unequal arms: 2 against 5 cannot reach α (2/21), 3 against 5 can (2/56).
	if p := MinP(2, 5); p != 0.09524 {
		t.Errorf("MinP(2, 5) = %v, want 2/21 = 0.09524", p)
	}
	if p := MinP(3, 5); p != 0.03571 {
		t.Errorf("MinP(3, 5) = %v, want 2/56 = 0.03571", p)
	}
}

// TestMedianCI checks the interval against order statistics derived by
// hand. Under the null the number of legs below the population median is
// Binomial(n, ½); benchmath starts at the mode and adds the likelier
// neighbouring interval, the left one on a tie, until the mass reaches
// 0.95: n ≤ 4 never closes a side before taking both tails (both bounds
// infinite); n = 5 (1,5,10,10,5,1)/32 stops at 31/32 having taken the left
// tail: (−∞, X5]; n = 6 stops at 62/64 on [X1, X6]; n = 8 at 246/256 on
// [X1, X7]; n = 10 at 1002/1024 on [X2, X9].
func TestMedianCI(t *testing.T) {
	// The legs in an order that is not sorted: the interval is over the
	// sorted values, and the legs keep their order.
	vals := []float64{70, 10, 90, 30, 100, 50, 20, 80, 40, 60}
	for _, c := range []struct {
		n      int
		lo, hi float64 // 0: unbounded
	}{
		{1, 0, 0}, {2, 0, 0}, {3, 0, 0}, {4, 0, 0},
		{5, 0, 100},        // sorted 10 30 70 90 100: X5 = 100
		{6, 10, 100},       // X1, X6
		{8, 10, 90},        // sorted 10 20 30 50 70 80 90 100: X1 = 10, X7 = 90
		{10, 20, 90},       // X2 = 20, X9 = 90
		{7, 10, 100},       // n = 7: 126/128 on [X1, X7]
		{9, 20, 90},        // n = 9: 492/512 on [X2, X8] of 10 20 30 40 50 70 80 90 100
		{0, math.NaN(), 0}, // no legs: no interval
	} {
		legs := legValues(vals[:c.n]...)
		before := slices.Clone(legs)
		ci := medianCI(legs)
		if !slices.Equal(legs, before) {
			t.Errorf("n=%d: the legs were reordered", c.n)
		}
		check := func(side string, got *float64, want float64) {
			switch {
			case want == 0 || math.IsNaN(want):
				if got != nil {
					t.Errorf("n=%d: %s bound %v, want unbounded (null)", c.n, side, *got)
				}
			case got == nil || *got != want:
				t.Errorf("n=%d: %s bound %v, want %v", c.n, side, got, want)
			}
		}
		check("lower", ci[0], c.lo)
		check("upper", ci[1], c.hi)
	}
	if got := CILegsNeeded(); got != 6 {
		t.Errorf("CILegsNeeded() = %d, want 6", got)
	}
}

// TestPValues checks p against the enumeration oracle and against values
// worked by hand, ties included.
func TestPValues(t *testing.T) {
	for _, c := range []struct {
		name       string
		ours, base []float64
		want       float64 // rounded to 4 significant digits
	}{
		{"separated 5 v 5: 2/252", []float64{11, 11.5, 12, 12.5, 13}, []float64{6, 6.5, 7, 7.5, 8}, 0.007937},
		{"interleaved 5 v 5, U = 10: 2 × 87/252", []float64{1, 2, 12, 30, 31}, []float64{1.5, 2.5, 7, 32, 33}, 0.6905},
		{"separated 3 v 3: 2/20", []float64{5, 6, 7}, []float64{1, 2, 3}, 0.1},
		{"separated 4 v 4: 2/70", []float64{5, 6, 7, 8}, []float64{1, 2, 3, 4}, 0.02857},
		{"U = n1·n2/2: p = 1", []float64{1, 4}, []float64{2, 3}, 1},
		{"ties across arms 6 v 6: 6/924", []float64{12.3, 12.2, 12.3, 12.4, 12.2, 12.3}, []float64{12.0, 12.1, 12.0, 12.2, 12.1, 12.0}, 0.006494},
		{"heavy ties 6 v 6: 452/924", []float64{22.7, 22.6, 22.7, 22.6, 22.8, 22.6}, []float64{22.6, 22.7, 22.6, 22.6, 22.7, 22.5}, 0.4892},
		{"heavy ties 6 v 6: 588/924", []float64{41.8, 41.8, 41.8, 41.9, 41.8, 41.9}, []float64{41.8, 41.8, 41.7, 41.8, 41.8, 41.9}, 0.6364},
		{"ties only within arms: still 2/252", []float64{13, 13, 13.1, 13.1, 13.2}, []float64{12, 12, 12.1, 12.1, 12.1}, 0.007937},
		{"every leg equal: p = 1, as benchmath", []float64{7, 7, 7}, []float64{7, 7, 7}, 1},
	} {
		tst := compareLegs(legValues(c.ours...), legValues(c.base...))
		if tst.P == nil || *tst.P != c.want {
			t.Errorf("%s: p %v, want %v", c.name, tst.P, c.want)
			continue
		}
		if o := oracleP(c.ours, c.base); math.Abs(o-tst.Exact) > 1e-12 {
			t.Errorf("%s: benchmath p %v, enumeration %v", c.name, tst.Exact, o)
		}
		if got, want := tst.Significant(), c.want < Alpha; got != want {
			t.Errorf("%s: significant %v, want %v (p %v, α %v)", c.name, got, want, c.want, Alpha)
		}
		if want := MinP(len(c.ours), len(c.base)); tst.MinP != want {
			t.Errorf("%s: MinP %v, want %v", c.name, tst.MinP, want)
		}
	}
	// With fewer legs than the test needs to reach α, p is still given:
	// one leg against one can only say 1, one against four 2/5.
	for _, c := range []struct {
		ours, base []float64
		want       float64
	}{{[]float64{1}, []float64{2}, 1}, {[]float64{1}, []float64{2, 3, 4, 5}, 0.4}, {[]float64{9}, []float64{2, 3}, 0.6667}} {
		tst := compareLegs(legValues(c.ours...), legValues(c.base...))
		if tst.P == nil || *tst.P != c.want || tst.Significant() || tst.Reaches() {
			t.Errorf("%v against %v: p %v, reaches α %v; want %v, never significant", c.ours, c.base, tst.P, tst.Reaches(), c.want)
		}
	}
	// An arm with no leg has no p.
	for _, c := range [][2][]float64{{{}, {2, 3}}, {{1, 2}, {}}} {
		tst := compareLegs(legValues(c[0]...), legValues(c[1]...))
		if tst.P != nil || tst.Significant() || tst.Reaches() {
			t.Errorf("%v against %v: p %v; want none (fewer than %d legs in an arm)", c[0], c[1], tst.P, MinLegs)
		}
	}
	// p exactly at α is not below it.
	at := Test{P: sig4(Alpha)}
	if at.Significant() {
		t.Errorf("p = α = %v counts as significant; want p < α only", Alpha)
	}
}

// The arms of TestSignificanceNeverGates: five legs each, one point and a
// memory record per leg, on one boot; the legs' values are given.
func armOf(t *testing.T, engine string, mhz int, tput, memMiB []float64) Arm {
	t.Helper()
	a := Arm{Engine: engine}
	for i := range tput {
		name := "r" + string(rune('1'+i))
		a.Legs = append(a.Legs, &Leg{Clock: clockLeg(t, name, boot, flat(mhz, 60), 4), Points: points("m/M", tput[i]),
			PeakGPUMemoryMiB: mem(memMiB[i])})
	}
	return a
}

// TestSignificanceNeverGates flips every p to the other side of α on
// otherwise identical evidence (the same medians, clocks and reasons; only
// which legs are high differs): the values, verdicts, reasons, clock
// blocks and gate stay identical, for an ESTABLISHED pair and for one
// refused on its clock alike.
func TestSignificanceNeverGates(t *testing.T) {
	// Medians 12 and 7, memory 102 and 202, in both layouts.
	separated := [4][]float64{{11, 11.5, 12, 12.5, 13}, {6, 6.5, 7, 7.5, 8}, {100, 101, 102, 103, 104}, {200, 201, 202, 203, 204}}
	interleaved := [4][]float64{{1, 2, 12, 30, 31}, {1.5, 2.5, 7, 32, 33}, {10, 20, 102, 300, 310}, {15, 25, 202, 320, 330}}
	for _, c := range []struct {
		name        string
		baseMHz     int
		established bool
	}{{"established", 2300, true}, {"clock offset", 2190, false}} {
		t.Run(c.name, func(t *testing.T) {
			var got [2]*Comparison
			for i, v := range [][4][]float64{separated, interleaved} {
				cmp, err := Compare("m", armOf(t, "ours", 2300, v[0], v[2]), armOf(t, "base", c.baseMHz, v[1], v[3]), false)
				if err != nil {
					t.Fatal(err)
				}
				got[i] = cmp
			}
			a, b := got[0], got[1]
			// The p-values are on opposite sides of α.
			if pa, pb := a.Throughput.Points[0].P, b.Throughput.Points[0].P; pa == nil || pb == nil || *pa != 0.007937 || *pb != 0.6905 {
				t.Fatalf("THROUGHPUT p %v and %v; want 0.007937 and 0.6905", pa, pb)
			}
			if pa, pb := a.Memory.P, b.Memory.P; pa == nil || pb == nil || *pa != 0.007937 || *pb != 0.5476 {
				t.Fatalf("MEMORY p %v and %v; want 0.007937 and 0.5476 (U = 9)", pa, pb)
			}
			if a.Throughput.Significance.SignificantPoints != 1 || b.Throughput.Significance.SignificantPoints != 0 ||
				a.Memory.Significance.SignificantPoints != 1 || b.Memory.Significance.SignificantPoints != 0 {
				t.Fatalf("significant points %+v, %+v / %+v, %+v", a.Throughput.Significance, b.Throughput.Significance,
					a.Memory.Significance, b.Memory.Significance)
			}
			for _, f := range []struct {
				name                 string
				eligA, eligB         bool
				valueA, valueB       *float64
				reasonsA, reasonsB   []clocks.Reason
				clockA, clockB       *clocks.Block
				wantElig             bool
				wantValue            float64
				wantNoReasonsIfEstab bool
			}{
				{"THROUGHPUT", a.Throughput.BindingEligible, b.Throughput.BindingEligible, a.Throughput.Value, b.Throughput.Value,
					a.Throughput.Reasons, b.Throughput.Reasons, a.Throughput.Clock, b.Throughput.Clock, c.established, 1.7143, true},
				{"MEMORY", a.Memory.BindingEligible, b.Memory.BindingEligible, a.Memory.Value, b.Memory.Value,
					a.Memory.Reasons, b.Memory.Reasons, a.Memory.Clock, b.Memory.Clock, c.established, 0.505, true},
			} {
				if f.eligA != f.wantElig || f.eligB != f.wantElig {
					t.Errorf("%s: binding_eligible %v (p < α) and %v (p ≥ α); want %v for both", f.name, f.eligA, f.eligB, f.wantElig)
				}
				if f.valueA == nil || f.valueB == nil || *f.valueA != f.wantValue || *f.valueB != f.wantValue {
					t.Errorf("%s: value %v and %v, want %v for both", f.name, f.valueA, f.valueB, f.wantValue)
				}
				if !reflect.DeepEqual(f.reasonsA, f.reasonsB) || !reflect.DeepEqual(f.clockA, f.clockB) {
					t.Errorf("%s: reasons or clock block differ with the p-value: %+v / %+v", f.name, f.reasonsA, f.reasonsB)
				}
				if c.established && len(f.reasonsA) != 0 {
					t.Errorf("%s: reasons %+v on a clean pair", f.name, f.reasonsA)
				}
				if !c.established && !slices.Equal(clocks.Codes(f.reasonsA), []string{clocks.CodeOffset}) {
					t.Errorf("%s: codes %v, want only %s", f.name, clocks.Codes(f.reasonsA), clocks.CodeOffset)
				}
			}
			if GatePass([]*Comparison{a}) != c.established || GatePass([]*Comparison{b}) != c.established {
				t.Errorf("gate %v and %v, want %v for both", GatePass([]*Comparison{a}), GatePass([]*Comparison{b}), c.established)
			}
		})
	}
}

// TestSignificanceJSON: each throughput point carries ours_ci,
// baseline_ci and p, a point one arm lacks has no p, each family its
// significance, and MEMORY its p and intervals on the family itself.
func TestSignificanceJSON(t *testing.T) {
	ours := armOf(t, "ours", 2300, []float64{11, 11.5, 12, 12.5, 13, 14}, []float64{100, 101, 102, 103, 104, 105})
	base := armOf(t, "base", 2300, []float64{6, 6.5, 7, 7.5, 8, 9}, []float64{100, 100, 100, 100, 100, 101})
	// Ours ran a second point in one leg only: no comparison there.
	ours.Legs[0].Points = append(ours.Legs[0].Points, BenchPoint{ID: PointID{MaxConcurrency: 2}, ModelID: "m/M", OutputThroughput: 30})
	c, err := Compare("m", ours, base, false)
	if err != nil {
		t.Fatal(err)
	}
	raw, err := json.Marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Throughput struct {
			Points []struct {
				MaxConcurrency int        `json:"max_concurrency"`
				OursCI         []*float64 `json:"ours_ci"`
				BaselineCI     []*float64 `json:"baseline_ci"`
				P              *float64   `json:"p"`
			}
			Significance map[string]any
		}
		Memory struct {
			OursCI       []*float64 `json:"ours_ci"`
			BaselineCI   []*float64 `json:"baseline_ci"`
			P            *float64   `json:"p"`
			Significance map[string]any
		}
	}
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	f := func(x *float64) any {
		if x == nil {
			return nil
		}
		return *x
	}
	pts := doc.Throughput.Points
	if len(pts) != 2 {
		t.Fatalf("%d points, want 2", len(pts))
	}
	// Six legs: [X1, X6], both bounded; separated: p = 2/924.
	if p := pts[0]; p.MaxConcurrency != 1 || f(p.OursCI[0]) != 11.0 || f(p.OursCI[1]) != 14.0 || f(p.BaselineCI[0]) != 6.0 ||
		f(p.BaselineCI[1]) != 9.0 || f(p.P) != 0.002165 {
		t.Errorf("point 1: ci %v %v, %v %v, p %v; want [11, 14], [6, 9], 0.002165", f(p.OursCI[0]), f(p.OursCI[1]),
			f(p.BaselineCI[0]), f(p.BaselineCI[1]), f(p.P))
	}
	if p := pts[1]; p.MaxConcurrency != 2 || p.P != nil || len(p.OursCI) != 2 || p.OursCI[0] != nil || p.OursCI[1] != nil ||
		len(p.BaselineCI) != 2 || p.BaselineCI[0] != nil || p.BaselineCI[1] != nil {
		t.Errorf("point 2 (one leg of ours, none of base): %+v; want [null, null] twice and p null", p)
	}
	want := map[string]any{"test": "mann-whitney-u", "alpha": 0.05, "points": 1.0, "significant_points": 1.0}
	if !reflect.DeepEqual(doc.Throughput.Significance, want) {
		t.Errorf("throughput significance %v, want %v", doc.Throughput.Significance, want)
	}
	// Memory: ours 100…105 against five 100s and a 101: ties across arms.
	m := doc.Memory
	if f(m.OursCI[0]) != 100.0 || f(m.OursCI[1]) != 105.0 || f(m.BaselineCI[0]) != 100.0 || f(m.BaselineCI[1]) != 101.0 {
		t.Errorf("memory ci %v %v, %v %v; want [100, 105], [100, 101]", f(m.OursCI[0]), f(m.OursCI[1]), f(m.BaselineCI[0]), f(m.BaselineCI[1]))
	}
	o := oracleP([]float64{100, 101, 102, 103, 104, 105}, []float64{100, 100, 100, 100, 100, 101})
	if m.P == nil || *m.P != *sig4(o) {
		t.Errorf("memory p %v, want %v (enumeration)", f(m.P), *sig4(o))
	}
	wantMem := map[string]any{"test": "mann-whitney-u", "alpha": 0.05, "points": 1.0, "significant_points": 1.0}
	if o >= Alpha {
		wantMem["significant_points"] = 0.0
	}
	if !reflect.DeepEqual(m.Significance, wantMem) {
		t.Errorf("memory significance %v, want %v", m.Significance, wantMem)
	}
}
