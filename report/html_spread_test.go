package report

import (
	"fmt"
	"math"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/clockgate/clockgate/ratio"
)

// spreadTick is a spread picture's tick label: a number, maybe in
// exponent form.
var spreadTick = regexp.MustCompile(`^[0-9]+(\.[0-9]+)?(e[+-][0-9]+)?$`)

// median is the median of xs, the contract's way.
func median(xs []float64) float64 {
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return s[len(s)/2-1]/2 + s[len(s)/2]/2
}

// near is within the 0.1 unit coordinates are printed at, and a little.
func near(a, b float64) bool { return math.Abs(a-b) <= 0.15 }

func attrF(t *testing.T, e *elem, name string) float64 {
	t.Helper()
	v, err := strconv.ParseFloat(e.attr[name], 64)
	if err != nil {
		t.Fatalf("<%s> %s=%q is not a number", e.name, name, e.attr[name])
	}
	return v
}

// wantP is a row's p text for summary.json's p, its three decimals taken
// from the rounded p.
func checkRowP(t *testing.T, where, got string, p *float64) {
	t.Helper()
	switch {
	case p == nil:
		if got != "p n/a" {
			t.Errorf("%s: p text %q, summary.json p null", where, got)
		}
	case *p < ratio.Alpha:
		v, err := strconv.ParseFloat(strings.TrimPrefix(got, "p = "), 64)
		if !strings.HasPrefix(got, "p = ") || err != nil || math.Abs(v-*p) > 0.0006 {
			t.Errorf("%s: p text %q, want p = %.3f", where, got, *p)
		}
	default:
		v, err := strconv.ParseFloat(strings.TrimSuffix(strings.TrimPrefix(got, "~ (p = "), ")"), 64)
		if !strings.HasPrefix(got, "~ (p = ") || err != nil || math.Abs(v-*p) > 0.0006 {
			t.Errorf("%s: p text %q, want ~ (p = %.3f)", where, got, *p)
		}
	}
}

// checkSpread checks each picture of the legs' spread against summary.json
// and all-runs.json: one per family with something to compare, one row per
// point both arms have (MEMORY one), a dot per leg with a value at the
// place its value divided by the baseline median puts it, each median's
// tick, each finite bound's cap on the scale, the dashed ends of the
// unbounded sides, and the ratio and p of summary.json.
func checkSpread(t *testing.T, doc *elem, sum htmlSummary, legs htmlLegs) {
	t.Helper()
	figures := 0
	for i, c := range sum.Comparisons {
		ours, base := legs.legValues(c.Model, c.Ours), legs.legValues(c.Model, c.Baseline)
		type row struct {
			id, key        string
			oursCI, baseCI []*float64
			p, ratio       *float64
			unit           string
		}
		var tput []row
		for k, pt := range c.Throughput.Points {
			key := label(pt.MaxConcurrency, pt.RequestRate)
			if _, o := ours.present[key]; o {
				if _, b := base.present[key]; b {
					tput = append(tput, row{fmt.Sprintf("%s-p%d", SpreadID(i, FamilyThroughput), k+1), key, pt.OursCI, pt.BaselineCI, pt.P, pt.Ratio, "tokens/s"})
				}
			}
		}
		if len(tput) != c.Throughput.Significance.Points {
			t.Errorf("%s: %d points both arms have in all-runs.json, summary.json's significance says %d", c.Ours, len(tput), c.Throughput.Significance.Points)
		}
		m := c.Memory
		var mem []row
		if len(ours.values["memory"]) > 0 && len(base.values["memory"]) > 0 {
			mem = append(mem, row{SpreadID(i, FamilyMemory) + "-memory", "memory", m.OursCI, m.BaselineCI, m.P, m.Value, "MiB"})
		}
		for _, fam := range []struct {
			family, quantity string
			rows             []row
		}{{FamilyThroughput, "output throughput", tput}, {FamilyMemory, "peak GPU memory", mem}} {
			fig := doc.byID(SpreadID(i, fam.family))
			if len(fam.rows) == 0 {
				if fig != nil {
					t.Errorf("#%s drawn with nothing to compare", SpreadID(i, fam.family))
				}
				continue
			}
			figures++
			if fig == nil || fig.attr["class"] != "spread" {
				t.Errorf("no figure #%s", SpreadID(i, fam.family))
				continue
			}
			svgs := fig.all(withClass("svg", "spread"))
			if len(svgs) != 1 {
				t.Errorf("#%s holds %d spread SVGs", fig.attr["id"], len(svgs))
				continue
			}
			svg := svgs[0]
			if kids := svg.all(func(e *elem) bool { return e.parent == svg }); len(kids) == 0 || kids[0].name != "title" ||
				!strings.HasPrefix(kids[0].text, fam.quantity+" of each leg of "+c.Ours+" and "+c.Baseline) {
				t.Errorf("#%s: the first child is not a title naming the quantity and arms", fig.attr["id"])
			}
			if svg.attr["role"] != "img" || !strings.HasPrefix(svg.attr["aria-label"], fam.quantity+" of each leg relative to "+c.Baseline+"'s median: ") {
				t.Errorf("#%s: role %q aria-label %q", fig.attr["id"], svg.attr["role"], svg.attr["aria-label"])
			}
			if cap := fig.all(named("figcaption")); len(cap) != 1 || !strings.Contains(textOf(cap[0]), "95% confidence interval") {
				t.Errorf("#%s: no caption explaining the interval", fig.attr["id"])
			}
			if l := svg.all(withClass("text", "axis-label")); len(l) != 1 || l[0].text != fam.quantity+" ÷ "+c.Baseline+"'s median" {
				t.Errorf("#%s: axis label %v", fig.attr["id"], l)
			}
			// The scale, from the tick labels.
			ticks := svg.all(withClass("text", "tick"))
			if len(ticks) < 3 {
				t.Errorf("#%s: %d ticks, want at least 3", fig.attr["id"], len(ticks))
				continue
			}
			var tv, tx []float64
			for _, tk := range ticks {
				if !spreadTick.MatchString(tk.text) {
					t.Errorf("#%s: tick %q is not a number", fig.attr["id"], tk.text)
				}
				v, _ := strconv.ParseFloat(tk.text, 64)
				tv, tx = append(tv, v), append(tx, attrF(t, tk, "x"))
			}
			scale := (tx[len(tx)-1] - tx[0]) / (tv[len(tv)-1] - tv[0])
			at := func(rel float64) float64 { return tx[0] + (rel-tv[0])*scale }
			if refs := svg.all(withClass("line", "ref")); len(refs) != 1 || !near(attrF(t, refs[0], "x1"), at(1)) {
				t.Errorf("#%s: the baseline median's line is not at 1", fig.attr["id"])
			}
			if got := len(svg.all(withClass("g", "row"))); got != len(fam.rows) {
				t.Errorf("#%s: %d rows, want %d", fig.attr["id"], got, len(fam.rows))
			}
			for _, r := range fam.rows {
				g := doc.byID(r.id)
				if g == nil {
					t.Errorf("no row #%s", r.id)
					continue
				}
				where := "#" + r.id
				ov, bv := ours.values[r.key], base.values[r.key]
				var ovs, bvs []float64
				for _, v := range ov {
					ovs = append(ovs, v)
				}
				for _, v := range bv {
					bvs = append(bvs, v)
				}
				ref := median(bvs)
				arms := []struct {
					engine, colour string
					vals           map[string]float64
					median         float64
					ci             []*float64
				}{{c.Ours, colourOurs, ov, median(ovs), r.oursCI}, {c.Baseline, colourBaseline, bv, ref, r.baseCI}}
				for a, arm := range arms {
					dots := g.all(func(e *elem) bool { return e.name == "circle" && e.attr["fill"] == arm.colour })
					if len(dots) != len(arm.vals) {
						t.Errorf("%s: %d dots of %s, all-runs.json has %d legs with a value", where, len(dots), arm.engine, len(arm.vals))
					}
					for _, d := range dots {
						title := d.all(named("title"))
						run, v, ok := "", 0.0, len(title) == 1
						if ok {
							head, _, _ := strings.Cut(title[0].text, ":")
							run = strings.TrimPrefix(head, arm.engine+" ")
							v, ok = arm.vals[run]
						}
						if !ok || title[0].text != fmt.Sprintf("%s %s: %s %s", arm.engine, run, num(v), r.unit) {
							t.Errorf("%s: a dot of %s is titled %v, not one of its legs and value", where, arm.engine, title)
							continue
						}
						if cx := attrF(t, d, "cx"); !near(cx, at(v/ref)) {
							t.Errorf("%s: %s %s at x %v, want %v (%s / %s)", where, arm.engine, run, cx, n(at(v/ref)), num(v), num(ref))
						}
						if cy, line := attrF(t, d, "cy"), attrF(t, g.all(withClass("text", "arm-label"))[a], "y"); math.Abs(cy-line) > spreadStack {
							t.Errorf("%s: %s %s at y %v, off its line at %v", where, arm.engine, run, cy, line)
						}
					}
					mine := func(class string) []*elem {
						return g.all(func(e *elem) bool { return withClass("line", class)(e) && e.attr["stroke"] == arm.colour })
					}
					if med := mine("median"); len(med) != 1 || !near(attrF(t, med[0], "x1"), at(arm.median/ref)) {
						t.Errorf("%s: %s's median tick is not at %v", where, arm.engine, n(at(arm.median/ref)))
					}
					finite := 0
					caps := mine("ci-cap")
					for _, b := range arm.ci {
						if b == nil {
							continue
						}
						if finite < len(caps) && !near(attrF(t, caps[finite], "x1"), at(*b/ref)) {
							t.Errorf("%s: %s's bound %v capped at x %v, want %v", where, arm.engine, *b, caps[finite].attr["x1"], n(at(*b/ref)))
						}
						finite++
					}
					wantBar, wantOpen := 1, 2-finite
					if finite == 0 {
						wantBar, wantOpen = 0, 0
					}
					if len(caps) != finite || len(mine("ci")) != wantBar || len(mine("ci-open")) != wantOpen {
						t.Errorf("%s: %s has %d caps, %d bars, %d dashed ends for bounds %v; want %d, %d, %d", where, arm.engine,
							len(caps), len(mine("ci")), len(mine("ci-open")), arm.ci, finite, wantBar, wantOpen)
					}
				}
				wantRatio := "ratio n/a"
				if r.ratio != nil {
					wantRatio = fmt.Sprintf("ratio %.4f", *r.ratio)
				}
				if got := g.all(withClass("text", "row-ratio")); len(got) != 1 || got[0].text != wantRatio {
					t.Errorf("%s: ratio text %v, want %q", where, got, wantRatio)
				}
				if got := g.all(withClass("text", "row-p")); len(got) != 1 {
					t.Errorf("%s: %d p texts", where, len(got))
				} else {
					checkRowP(t, where, got[0].text, r.p)
				}
			}
		}
	}
	if got := len(doc.all(withClass("figure", "spread"))); got != figures {
		t.Errorf("%d spread figures, want %d", got, figures)
	}
}
