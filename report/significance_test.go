package report

import (
	"math"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/clockgate/clockgate/ratio"
)

// TestSignificanceLines reads report.md of the significance trees and of
// older ones with too few legs: the line under each ratio heading, word for
// word, and the interval and p cells of chosen points, as goldmark parses
// them (no strikethrough from "~").
func TestSignificanceLines(t *testing.T) {
	const (
		needed  = "; 4 legs per arm are needed to reach α"
		tooFew3 = "; too few legs: the smallest two-sided p is 0.100 with 3 legs per arm, not below α, so no difference can be detected" + needed
		tooFew2 = "; too few legs: the smallest two-sided p is 0.333 with 2 legs per arm, not below α, so no difference can be detected" + needed
	)
	for _, c := range []struct {
		tree             string
		throughput, mem  []string
		cells            map[int][3]string // points table row → ours CI, baseline CI, p
		comparisonTables int
	}{
		{tree: "significance-separated",
			throughput: []string{"significance: 4 of 4 points differ at α = 0.05 (Mann–Whitney U, 5 legs per arm)"},
			mem:        []string{"significance: peak GPU memory differs at α = 0.05 (Mann–Whitney U, p = 0.008, 5 legs per arm)"},
			cells:      map[int][3]string{1: {"[−∞, 13.07]", "[−∞, 12.22]", "0.008"}, 4: {"[−∞, 74.98]", "[−∞, 70.35]", "0.008"}}},
		{tree: "significance-interleaved",
			throughput: []string{"significance: 0 of 4 points differ at α = 0.05 (Mann–Whitney U, 5 legs per arm)"},
			mem:        []string{"significance: no difference in peak GPU memory detected at α = 0.05 (Mann–Whitney U, p = 0.690, 5 legs per arm)"},
			cells:      map[int][3]string{1: {"[−∞, 12.29]", "[−∞, 12.53]", "~ 0.690"}}},
		{tree: "significance-three-legs",
			throughput: []string{"significance: 0 of 4 points differ at α = 0.05 (Mann–Whitney U, 3 legs per arm)" + tooFew3},
			mem:        []string{"significance: no difference in peak GPU memory detected at α = 0.05 (Mann–Whitney U, p = 0.100, 3 legs per arm)" + tooFew3},
			cells:      map[int][3]string{2: {"[−∞, +∞]", "[−∞, +∞]", "~ 0.100"}}},
		{tree: "significance-ties",
			throughput: []string{"significance: 2 of 4 points differ at α = 0.05 (Mann–Whitney U, 6 legs per arm)"},
			mem: []string{"significance: no difference in peak GPU memory detected at α = 0.05 (Mann–Whitney U, p = 1.000, 6 legs per arm); " +
				"every leg of both arms has the same peak, so the test has nothing to rank"},
			cells: map[int][3]string{1: {"[12.20, 12.40]", "[12.00, 12.20]", "0.006"}, 2: {"[22.60, 22.80]", "[22.50, 22.70]", "~ 0.489"},
				3: {"[41.80, 41.90]", "[41.70, 41.90]", "~ 0.636"}, 4: {"[70.50, 70.70]", "[70.30, 70.50]", "0.006"}}},
		{tree: "cross-boot",
			// One leg against one: p is still given, and can only be 1.
			throughput: []string{"significance: 0 of 4 points differ at α = 0.05 (Mann–Whitney U, 1 leg per arm); " +
				"too few legs: the smallest two-sided p is 1.000 with 1 leg per arm, not below α, so no difference can be detected" + needed},
			mem: []string{"significance: no difference in peak GPU memory detected at α = 0.05 (Mann–Whitney U, p = 1.000, 1 leg per arm); " +
				"too few legs: the smallest two-sided p is 1.000 with 1 leg per arm, not below α, so no difference can be detected" + needed},
			cells: map[int][3]string{1: {"[−∞, +∞]", "[−∞, +∞]", "~ 1.000"}}},
		{tree: "all-failed-point",
			throughput: []string{"significance: 0 of 4 points differ at α = 0.05 (Mann–Whitney U, fastengine 0–2 legs, vllm 2 legs at a point); " +
				"too few legs: the smallest two-sided p is 0.333 with 2 legs per arm (1/inf, 4/inf) and 0.667 with fastengine 1 leg and vllm 2 (2/inf), not below α, so no difference can be detected there; " +
				"no p at 1 point, no leg with throughput in an arm: 8/inf (fastengine 0, vllm 2)" + needed},
			mem:   []string{"significance: no difference in peak GPU memory detected at α = 0.05 (Mann–Whitney U, p = 0.333, 2 legs per arm)" + tooFew2},
			cells: map[int][3]string{2: {"[−∞, +∞]", "[−∞, +∞]", "~ 0.667"}, 4: {"n/a", "[−∞, +∞]", "n/a"}}},
		{tree: "real-vllm-0.25",
			throughput: []string{
				"significance: no point both arms have, so nothing to test (Mann–Whitney U, α = 0.05)",
				"significance: 0 of 1 point differs at α = 0.05 (Mann–Whitney U, vllm-native 1 leg, vllm 2 legs); " +
					"too few legs: the smallest two-sided p is 0.667 with vllm-native 1 leg and vllm 2, not below α, so no difference can be detected" + needed,
				// Real runs: 93.75 and 199.37 against 186.48 and 191.20 tokens/s.
				"significance: 0 of 1 point differs at α = 0.05 (Mann–Whitney U, 2 legs per arm)" + tooFew2,
			},
			mem: []string{
				"significance: nothing to test: no valid memory record in an arm (legs with one: vllm-crashed 0, vllm 0)",
				"significance: nothing to test: no valid memory record in an arm (legs with one: vllm-native 0, vllm 0)",
				"significance: nothing to test: no valid memory record in an arm (legs with one: vllm-seqs4 0, vllm 0)",
			}},
	} {
		t.Run(c.tree, func(t *testing.T) {
			_, md := page(t, filepath.Join(treesDir, c.tree), false)
			p := parse(t, md)
			if p.struck != 0 {
				t.Errorf("%d strikethrough spans", p.struck)
			}
			var tput, mem []string
			for i, h := range p.headings {
				if h.level != 3 || !ratioHeading.MatchString(h.text) {
					continue
				}
				line := append(p.after[i], "")[0]
				if strings.HasPrefix(h.text, "THROUGHPUT") {
					tput = append(tput, line)
				} else {
					mem = append(mem, line)
				}
			}
			if strings.Join(tput, "\n") != strings.Join(c.throughput, "\n") {
				t.Errorf("THROUGHPUT lines\n%s\nwant\n%s", strings.Join(tput, "\n"), strings.Join(c.throughput, "\n"))
			}
			if strings.Join(mem, "\n") != strings.Join(c.mem, "\n") {
				t.Errorf("MEMORY lines\n%s\nwant\n%s", strings.Join(mem, "\n"), strings.Join(c.mem, "\n"))
			}
			for row, want := range c.cells {
				tb := p.tables[0]
				if got := [3]string{tb[row][5], tb[row][6], tb[row][7]}; got != want {
					t.Errorf("points table row %d: CI and p cells %q, want %q", row, got, want)
				}
			}
		})
	}
}

// TestPText: p is printed as benchstat prints it, at three decimals of the
// unrounded value, "~ " where p ≥ α, including p = α itself.
func TestPText(t *testing.T) {
	p := func(x float64) *float64 { return &x }
	for _, c := range []struct {
		t    ratio.Test
		want string
	}{
		{ratio.Test{}, "n/a"},
		{ratio.Test{P: p(0.007937), Exact: 0.007936507936507938}, "0.008"},
		{ratio.Test{P: p(0.6905), Exact: 0.6904761904761906}, "~ 0.690"},
		{ratio.Test{P: p(ratio.Alpha), Exact: ratio.Alpha}, "~ 0.050"},
		{ratio.Test{P: p(0.04999), Exact: 0.049991}, "0.050"},
		{ratio.Test{P: p(4.114e-05), Exact: 4.113533525298231e-05}, "< 0.001"},
	} {
		if got := PText(c.t); got != c.want {
			t.Errorf("PText(p %v) = %q, want %q", *c.t.P, got, c.want)
		}
	}
}

// TestSpreadPicture draws rows by hand: five legs give a bar closed on the
// right with a dashed left end; six tied legs a closed bar and their dots
// spread over the line; fewer than six on both sides no bar; a row whose
// baseline has no median is not drawn and says why; values at float64's
// edges still give a well-formed picture with numbers only.
func TestSpreadPicture(t *testing.T) {
	f := func(x float64) *float64 { return &x }
	legs := func(xs ...float64) []ratio.LegValue {
		out := make([]ratio.LegValue, len(xs))
		for i, x := range xs {
			out[i] = ratio.LegValue{Leg: "r" + strconv.Itoa(i+1), Value: x}
		}
		return out
	}
	rows := []spreadRow{
		{id: "five", label: "1/inf", unit: "tokens/s", medians: [2]*float64{f(12), f(10)}, ratio: f(1.2),
			test: ratio.Test{OursLegs: legs(11, 12, 12.5, 11.5, 13), BaselineLegs: legs(9, 10, 11, 9.5, 10.5),
				OursCI: ratio.CI{nil, f(13)}, BaselineCI: ratio.CI{nil, f(11)}, P: f(0.007937), Exact: 0.0079365}},
		{id: "ties", label: "2/inf", unit: "tokens/s", medians: [2]*float64{f(10), f(10)}, ratio: f(1),
			test: ratio.Test{OursLegs: legs(10, 10, 10, 10, 10, 10), BaselineLegs: legs(9, 10, 10, 10, 10, 11),
				OursCI: ratio.CI{f(10), f(10)}, BaselineCI: ratio.CI{f(9), f(11)}, P: f(1), Exact: 1}},
		{id: "two", label: "4/inf", unit: "tokens/s", medians: [2]*float64{f(10.5), f(10)}, ratio: f(1.05),
			test: ratio.Test{OursLegs: legs(10, 11), BaselineLegs: legs(9.5, 10.5), P: f(0.3333), Exact: 1.0 / 3}},
		{id: "nobase", label: "8/inf", unit: "tokens/s", medians: [2]*float64{f(10), nil},
			test: ratio.Test{OursLegs: legs(10, 10.2), BaselineLegs: legs()}},
	}
	d := parsePage(t, []byte(spreadSVGOf("s", "ours", "base", "output throughput", rows)))
	xs := newXScale(rows)
	row := func(id string) *elem {
		g := d.byID("s-" + id)
		if g == nil {
			t.Fatalf("no row %s", id)
		}
		return g
	}
	lines := func(g *elem, class, colour string) []*elem {
		return g.all(func(e *elem) bool { return withClass("line", class)(e) && e.attr["stroke"] == colour })
	}
	// Five legs: (−∞, 13]: a bar from the lowest leg to the cap at 13, and
	// a dashed end of spreadOpen units left of the lowest leg.
	five := row("five")
	bar, open, caps := lines(five, "ci", colourOurs), lines(five, "ci-open", colourOurs), lines(five, "ci-cap", colourOurs)
	if len(bar) != 1 || bar[0].attr["x1"] != n(xs.x(11.0/10)) || bar[0].attr["x2"] != n(xs.x(13.0/10)) {
		t.Errorf("five legs: bar %v, want from x %s (11) to %s (13)", bar, n(xs.x(1.1)), n(xs.x(1.3)))
	}
	if len(open) != 1 || open[0].attr["x1"] != n(xs.x(1.1)-spreadOpen) || open[0].attr["x2"] != n(xs.x(1.1)) {
		t.Errorf("five legs: dashed end %v, want %v units left of x %s", open, spreadOpen, n(xs.x(1.1)))
	}
	if len(caps) != 1 || caps[0].attr["x1"] != n(xs.x(1.3)) {
		t.Errorf("five legs: caps %v, want one at x %s", caps, n(xs.x(1.3)))
	}
	if p := five.all(withClass("text", "row-p")); len(p) != 1 || p[0].text != "p = 0.008" {
		t.Errorf("five legs: p text %v", p)
	}
	// Six tied legs at one value: six dots at one x, six distinct heights
	// within spreadStack of the line; the bar closed on both sides.
	ties := row("ties")
	var ys []string
	for _, c := range ties.all(func(e *elem) bool { return e.name == "circle" && e.attr["fill"] == colourOurs }) {
		if c.attr["cx"] != n(xs.x(1)) {
			t.Errorf("a tied leg at x %s, want %s", c.attr["cx"], n(xs.x(1)))
		}
		ys = append(ys, c.attr["cy"])
	}
	line := spreadPadT + float64(spreadRowH) + spreadArmH/2
	want := []string{n(line - 6), n(line - 3.6), n(line - 1.2), n(line + 1.2), n(line + 3.6), n(line + 6)}
	if strings.Join(ys, " ") != strings.Join(want, " ") {
		t.Errorf("tied legs at y %v, want %v", ys, want)
	}
	if b := lines(ties, "ci", colourBaseline); len(b) != 1 || len(lines(ties, "ci-open", colourBaseline)) != 0 ||
		len(lines(ties, "ci-cap", colourBaseline)) != 2 || b[0].attr["x1"] != n(xs.x(0.9)) || b[0].attr["x2"] != n(xs.x(1.1)) {
		t.Errorf("six legs [9, 11]: want a closed bar from x %s to %s with two caps", n(xs.x(0.9)), n(xs.x(1.1)))
	}
	if p := ties.all(withClass("text", "row-p")); len(p) != 1 || p[0].text != "~ (p = 1.000)" {
		t.Errorf("ties: p text %v", p)
	}
	// Two legs: no bound, no bar.
	two := row("two")
	if got := len(two.all(withClass("line", "ci"))) + len(two.all(withClass("line", "ci-open"))) + len(two.all(withClass("line", "ci-cap"))); got != 0 {
		t.Errorf("two legs: %d interval marks, want none", got)
	}
	if got := len(two.all(named("circle"))); got != 4 {
		t.Errorf("two legs: %d dots, want 4", got)
	}
	// No baseline median: the row says so and draws nothing on the scale.
	nobase := row("nobase")
	if note := nobase.all(withClass("text", "row-note")); len(note) != 1 || note[0].text != "not drawn: no baseline median to draw relative to" {
		t.Errorf("no baseline: note %v", note)
	}
	if got := len(nobase.all(named("circle"))) + len(nobase.all(named("line"))); got != 0 {
		t.Errorf("no baseline: %d marks drawn", got)
	}
	if p := nobase.all(withClass("text", "row-p")); len(p) != 1 || p[0].text != "p n/a" {
		t.Errorf("no baseline: p text %v", p)
	}

	// Float64's edges: 1e+305 against 12, and 5e-324 against 1.8e308.
	edge := []spreadRow{
		{id: "huge", label: "1/inf", unit: "tokens/s", medians: [2]*float64{f(1e305), f(12)},
			test: ratio.Test{OursLegs: legs(1e305, 1e305), BaselineLegs: legs(12, 12)}},
		{id: "inf", label: "memory", unit: "MiB", medians: [2]*float64{f(1.7976931348623157e308), f(5e-324)},
			test: ratio.Test{OursLegs: legs(1.7976931348623157e308), BaselineLegs: legs(5e-324)}},
	}
	svg := spreadSVGOf("e", "ours", "base", "output throughput", edge)
	for _, bad := range []string{"NaN", "Inf"} {
		if strings.Contains(svg, bad) {
			t.Errorf("the picture prints %s", bad)
		}
	}
	de := parsePage(t, []byte(svg))
	ticks := de.all(withClass("text", "tick"))
	if len(ticks) < 3 || len(ticks) > 41 {
		t.Errorf("%d ticks at float64's edges", len(ticks))
	}
	for _, tk := range ticks {
		if v, err := strconv.ParseFloat(tk.text, 64); err != nil || math.IsInf(v, 0) || v < 0 {
			t.Errorf("tick %q", tk.text)
		}
	}
	if note := de.byID("e-inf").all(withClass("text", "row-note")); len(note) != 1 ||
		note[0].text != "not drawn: a value is beyond any scale relative to the baseline median" {
		t.Errorf("a ratio beyond float64: note %v", note)
	}
}
