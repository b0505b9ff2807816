package report

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/clockgate/clockgate/ratio"
)

// alphaText is ratio.Alpha as the report prints it: "0.05".
func alphaText() string { return strconv.FormatFloat(ratio.Alpha, 'f', -1, 64) }

// confidenceText is ratio.Confidence as a percentage: "95".
func confidenceText() string { return strconv.FormatFloat(ratio.Confidence*100, 'f', -1, 64) }

// CIHeader is the header of an arm's interval column: "fastengine (95% CI)".
func CIHeader(engine string) string { return engine + " (" + confidenceText() + "% CI)" }

// PText is a p-value as the report prints it, benchstat's way: three
// decimals, "~ " before it where no difference is detected (p ≥ α), and
// "n/a" where there is no p.
func PText(t ratio.Test) string {
	if t.P == nil {
		return "n/a"
	}
	if t.Significant() {
		return pNum(t.Exact)
	}
	return "~ " + pNum(t.Exact)
}

// pNum prints a p-value with three decimals, as benchstat does; one that
// three decimals would show as 0 is "< 0.001".
func pNum(p float64) string {
	if p < 0.0005 {
		return "< 0.001"
	}
	return strconv.FormatFloat(p, 'f', 3, 64)
}

// CIText prints an interval with d decimals: "[12.95, 13.10]", "−∞" or
// "+∞" for an unbounded side; "n/a" when the arm has no value.
func CIText(ci ratio.CI, legs []ratio.LegValue, d int) string {
	if len(legs) == 0 {
		return "n/a"
	}
	lo, hi := "−∞", "+∞"
	if ci[0] != nil {
		lo = fixed(*ci[0], d)
	}
	if ci[1] != nil {
		hi = fixed(*ci[1], d)
	}
	return "[" + lo + ", " + hi + "]"
}

func legsWord(n int) string { return strconv.Itoa(n) + " " + plural(n, "leg", "legs") }

// sizes names two arms' leg counts: "3 legs per arm", "fastengine 2 legs
// and vllm 5".
func sizes(ours, base string, n1, n2 int) string {
	if n1 == n2 {
		return legsWord(n1) + " per arm"
	}
	return fmt.Sprintf("%s %s and %s %d", ours, legsWord(n1), base, n2)
}

// span prints a range of counts: "5", "3–5".
func span(lo, hi int) string {
	if lo == hi {
		return strconv.Itoa(lo)
	}
	return fmt.Sprintf("%d–%d", lo, hi)
}

// legsPhrase says how many legs each arm has at the points: "5 legs per
// arm", "fastengine 5 legs, vllm 4 legs", "fastengine 3–5 legs, vllm 5
// legs at a point".
func legsPhrase(ours, base string, pts []ratio.Point) string {
	lo1, hi1, lo2, hi2 := -1, -1, -1, -1
	for _, pt := range pts {
		n1, n2 := len(pt.OursLegs), len(pt.BaselineLegs)
		if lo1 < 0 {
			lo1, hi1, lo2, hi2 = n1, n1, n2, n2
		}
		lo1, hi1, lo2, hi2 = min(lo1, n1), max(hi1, n1), min(lo2, n2), max(hi2, n2)
	}
	switch {
	case lo1 == hi1 && lo2 == hi2 && lo1 == lo2:
		return legsWord(lo1) + " per arm"
	case lo1 == hi1 && lo2 == hi2:
		return fmt.Sprintf("%s %s, %s %s", ours, legsWord(lo1), base, legsWord(lo2))
	}
	return fmt.Sprintf("%s %s legs, %s %s legs at a point", ours, span(lo1, hi1), base, span(lo2, hi2))
}

// tooFew is the clause for tests whose leg counts cannot give p < α: each
// distinct pair of counts with the smallest p it can give, and, when
// only some points are concerned, which.
func tooFew(ours, base string, pts []ratio.Point, partial bool) string {
	type group struct {
		n1, n2 int
		minP   float64
		labels []string
	}
	var groups []*group
	for _, pt := range pts {
		n1, n2 := len(pt.OursLegs), len(pt.BaselineLegs)
		var g *group
		for _, h := range groups {
			if h.n1 == n1 && h.n2 == n2 {
				g = h
			}
		}
		if g == nil {
			g = &group{n1: n1, n2: n2, minP: pt.MinP}
			groups = append(groups, g)
		}
		g.labels = append(g.labels, pt.ID.Label())
	}
	parts := make([]string, len(groups))
	for i, g := range groups {
		parts[i] = pNum(g.minP) + " with " + sizes(ours, base, g.n1, g.n2)
		if partial || len(groups) > 1 {
			parts[i] += " (" + strings.Join(g.labels, ", ") + ")"
		}
	}
	there := ""
	if partial {
		there = " there"
	}
	return fmt.Sprintf("too few legs: the smallest two-sided p is %s, not below α, so no difference can be detected%s",
		strings.Join(parts, " and "), there)
}

// allEqual reports whether every leg of both arms has one value.
func allEqual(t ratio.Test) bool {
	legs := append(append([]ratio.LegValue{}, t.OursLegs...), t.BaselineLegs...)
	for _, l := range legs {
		if l.Value != legs[0].Value {
			return false
		}
	}
	return len(legs) > 0
}

// needed is the closing clause of a line whose test cannot reach α.
func needed() string {
	n := ratio.LegsNeeded()
	return fmt.Sprintf("%s per arm are needed to reach α", legsWord(n))
}

// ThroughputSignificance is the line under a THROUGHPUT heading: how many
// of the points both arms have differ at α, over how many legs, and, where
// the legs are too few for the test, that and how many are needed.
func ThroughputSignificance(ours, base string, points []ratio.Point, sig ratio.Significance) string {
	var common, unreachable, untested []ratio.Point
	for _, pt := range points {
		if !pt.Common {
			continue
		}
		common = append(common, pt)
		switch {
		case pt.P == nil:
			untested = append(untested, pt)
		case !pt.Reaches():
			unreachable = append(unreachable, pt)
		}
	}
	if len(common) == 0 {
		return fmt.Sprintf("significance: no point both arms have, so nothing to test (Mann–Whitney U, α = %s)", alphaText())
	}
	verb := "differ"
	if sig.SignificantPoints == 1 || sig.Points == 1 {
		verb = "differs"
	}
	line := fmt.Sprintf("significance: %d of %d %s %s at α = %s (Mann–Whitney U, %s)", sig.SignificantPoints, sig.Points,
		plural(sig.Points, "point", "points"), verb, alphaText(), legsPhrase(ours, base, common))
	var clauses []string
	if len(unreachable) > 0 {
		clauses = append(clauses, tooFew(ours, base, unreachable, len(unreachable) < len(common)))
	}
	uniform := true
	for _, pt := range untested {
		uniform = uniform && len(pt.OursLegs) == len(untested[0].OursLegs) && len(pt.BaselineLegs) == len(untested[0].BaselineLegs)
	}
	switch {
	case len(untested) > 1 && len(untested) == len(common) && uniform:
		// The legs phrase above already says how many: no need to list.
		clauses = append(clauses, "no p at any point: "+tooFewLegs("throughput"))
	case len(untested) > 0:
		items := make([]string, len(untested))
		for i, pt := range untested {
			items[i] = fmt.Sprintf("%s (%s %d, %s %d)", pt.ID.Label(), ours, len(pt.OursLegs), base, len(pt.BaselineLegs))
		}
		clauses = append(clauses, fmt.Sprintf("no p at %d %s, %s: %s",
			len(untested), plural(len(untested), "point", "points"), tooFewLegs("throughput"), strings.Join(items, ", ")))
	}
	if len(clauses) > 0 {
		clauses = append(clauses, needed())
		line += "; " + strings.Join(clauses, "; ")
	}
	return line
}

// MemorySignificance is the line under a MEMORY heading: whether the legs'
// peak GPU memory differs at α, with p and the legs, and, where the legs
// are too few for the test, that and how many are needed.
func MemorySignificance(ours, base string, t ratio.Test) string {
	n1, n2 := len(t.OursLegs), len(t.BaselineLegs)
	switch {
	case n1 == 0 || n2 == 0:
		return fmt.Sprintf("significance: nothing to test: no valid memory record in an arm (legs with one: %s %d, %s %d)", ours, n1, base, n2)
	case t.P == nil:
		return fmt.Sprintf("significance: no p (Mann–Whitney U, %s): %s; %s",
			sizes(ours, base, n1, n2), tooFewLegs("a memory record"), needed())
	case t.Significant():
		return fmt.Sprintf("significance: peak GPU memory differs at α = %s (Mann–Whitney U, p = %s, %s)",
			alphaText(), pNum(t.Exact), sizes(ours, base, n1, n2))
	}
	line := fmt.Sprintf("significance: no difference in peak GPU memory detected at α = %s (Mann–Whitney U, p = %s, %s)",
		alphaText(), pNum(t.Exact), sizes(ours, base, n1, n2))
	if allEqual(t) {
		line += "; every leg of both arms has the same peak, so the test has nothing to rank"
	}
	if !t.Reaches() {
		line += "; " + tooFew(ours, base, []ratio.Point{{Test: t}}, false) + "; " + needed()
	}
	return line
}

// tooFewLegs says an arm has fewer legs with what than a p-value needs.
func tooFewLegs(what string) string {
	if ratio.MinLegs == 1 {
		return "no leg with " + what + " in an arm"
	}
	return fmt.Sprintf("fewer than %d legs with %s in an arm", ratio.MinLegs, what)
}
