package report

import (
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	"github.com/clockgate/clockgate/ratio"
)

// The spread picture's geometry, in SVG user units: one row per point,
// each arm's legs on a line of their own, on one scale relative to the
// baseline arm's median.
const (
	spreadW     = 960
	spreadPadL  = 160 // the point labels and the arms' names
	spreadPadR  = 170 // the ratio and p of each row
	spreadPadT  = 30  // the reference line's label
	spreadPadB  = 46  // x tick labels and the axis label
	spreadPlotW = spreadW - spreadPadL - spreadPadR
	spreadArmH  = 20 // one arm's line
	spreadGap   = 14 // between two rows
	spreadRowH  = 2*spreadArmH + spreadGap
	spreadDotR  = 4.0
	// spreadStack is how far above and below its line a tied leg's dot
	// may sit.
	spreadStack = 6.0
	// spreadOpen is the length of the dashed end of an interval that is
	// unbounded on that side.
	spreadOpen = 28.0
)

// SpreadID is the fragment of the i-th comparison's (counting from 0)
// picture of the legs' spread for a family: "c1-throughput-spread".
func SpreadID(i int, family string) string {
	return fmt.Sprintf("c%d-%s-spread", i+1, strings.ToLower(family))
}

// spreadRow is one compared quantity: a point's output throughput, or the
// peak GPU memory.
type spreadRow struct {
	// id names the row's group within its picture: "p1".
	id    string
	label string
	test  ratio.Test
	// medians are ours and the baseline's median.
	medians [2]*float64
	ratio   *float64
	unit    string
	// reasons are, per arm, the legs that carry reasons, by run label;
	// only an arm of more than AggregateLegs legs consults them.
	reasons [2]map[string]bool
}

// arms are the row's two arms in drawing order: ours, then the baseline.
func (r *spreadRow) arms() [2]spreadArm {
	return [2]spreadArm{
		{legs: r.test.OursLegs, median: r.medians[0], ci: r.test.OursCI},
		{legs: r.test.BaselineLegs, median: r.medians[1], ci: r.test.BaselineCI},
	}
}

type spreadArm struct {
	legs   []ratio.LegValue
	median *float64
	ci     ratio.CI
}

// ref is the row's scale: the baseline median, or 0 with the reason the
// row cannot be drawn relative to it.
func (r *spreadRow) ref() (float64, string) {
	b := r.medians[1]
	if b == nil || !(*b > 0) || math.IsInf(*b, 0) {
		return 0, "not drawn: no baseline median to draw relative to"
	}
	for _, a := range r.arms() {
		for _, v := range a.values() {
			if rel := v / *b; math.IsInf(rel, 0) || math.IsNaN(rel) {
				return 0, "not drawn: a value is beyond any scale relative to the baseline median"
			}
		}
	}
	return *b, ""
}

// values are every number of the arm the picture places: legs, median
// and finite bounds.
func (a spreadArm) values() []float64 {
	var out []float64
	for _, l := range a.legs {
		out = append(out, l.Value)
	}
	if a.median != nil {
		out = append(out, *a.median)
	}
	for _, b := range a.ci {
		if b != nil {
			out = append(out, *b)
		}
	}
	return out
}

// xScale maps a value relative to the baseline median to the plot's x.
type xScale struct{ lo, hi, step float64 }

func (s xScale) x(rel float64) float64 {
	return spreadPadL + (rel-s.lo)/(s.hi-s.lo)*spreadPlotW
}

// newXScale covers 1 (the baseline median) and every value of every
// drawable row, with round ticks.
func newXScale(rows []spreadRow) xScale {
	lo, hi := 1.0, 1.0
	for i := range rows {
		ref, why := rows[i].ref()
		if why != "" {
			continue
		}
		for _, a := range rows[i].arms() {
			for _, v := range a.values() {
				lo, hi = min(lo, v/ref), max(hi, v/ref)
			}
		}
	}
	if hi-lo < 0.02 {
		mid := (hi + lo) / 2
		lo, hi = mid-0.01, mid+0.01
	}
	// Throughput and memory are never negative: the scale starts at 0 at
	// the lowest. Near float64's largest value the padding and the round
	// end are dropped rather than overflow.
	pad := (hi - lo) * 0.06
	lo = max(0, lo-pad)
	if h := hi + pad; !math.IsInf(h, 0) {
		hi = h
	}
	step := niceStep10((hi - lo) / 6)
	if h := math.Ceil(hi/step) * step; !math.IsInf(h, 0) {
		hi = h
	}
	return xScale{lo: max(0, math.Floor(lo/step)*step), hi: hi, step: step}
}

// niceStep10 is the least of 1, 2 or 5 times a power of ten not below want.
func niceStep10(want float64) float64 {
	mag := math.Pow(10, math.Floor(math.Log10(want)))
	for _, m := range []float64{1, 2, 5, 10} {
		if m*mag >= want {
			return m * mag
		}
	}
	return 10 * mag
}

// tickText prints a tick with as many decimals as its step needs.
func (s xScale) tickText(v float64) string {
	if s.step >= 1e6 || s.step < 1e-6 {
		return strconv.FormatFloat(v, 'g', 3, 64)
	}
	d := max(0, int(math.Ceil(-math.Log10(s.step)-1e-9)))
	return strconv.FormatFloat(v, 'f', d, 64)
}

// spreadNode is the i-th comparison's picture of a family's legs, to
// splice in; nil when it has no row to draw.
func (d *Document) spreadNode(i int, family string) *figuresNode {
	rows, quantity := d.spreadRows(i, family)
	if len(rows) == 0 {
		return nil
	}
	return &figuresNode{write: func(w io.Writer) error {
		d.spreadFigure(w, i, family, rows, quantity)
		return nil
	}}
}

// spreadFigure writes the HTML of the i-th comparison's picture of a
// family's legs: its rows, measuring quantity.
func (d *Document) spreadFigure(w io.Writer, i int, family string, rows []spreadRow, quantity string) {
	cmp := &d.Comparisons[i]
	id := SpreadID(i, family)
	fmt.Fprintf(w, "<figure class=\"spread\" id=\"%s\">\n", id)
	notes := spreadSVG(&svgWriter{w}, id, cmp.Ours, cmp.Baseline, quantity, rows)
	caption := spreadCaption(cmp.Baseline, quantity, family)
	if len(notes) > 0 {
		caption += " " + aggregatedSpreadCaption(notes)
	}
	fmt.Fprintf(w, "\n<figcaption>%s</figcaption>\n</figure>\n", caption)
}

// spreadRows are the rows of the i-th comparison's picture of a family's
// legs, and what they measure: THROUGHPUT one row per point both arms
// have, MEMORY one row.
func (d *Document) spreadRows(i int, family string) ([]spreadRow, string) {
	cmp := &d.Comparisons[i]
	var rows []spreadRow
	var reasons [2]map[string]bool
	if cmp.aggregated() {
		reasons = [2]map[string]bool{{}, {}}
		for _, l := range cmp.Legs {
			if len(l.Reasons) > 0 {
				reasons[roleIndex(cmp, l.Engine)][l.Name] = true
			}
		}
	}
	quantity, unit := "output throughput", "tokens/s"
	switch family {
	case FamilyThroughput:
		for k, pt := range cmp.Points {
			if pt.Common {
				rows = append(rows, spreadRow{id: "p" + strconv.Itoa(k+1), label: pt.ID.Label(), test: pt.Test,
					medians: [2]*float64{pt.Ours, pt.Baseline}, ratio: pt.Ratio, unit: unit})
			}
		}
	case FamilyMemory:
		quantity, unit = "peak GPU memory", "MiB"
		for _, r := range cmp.Ratios {
			if r.Family == FamilyMemory && len(r.Test.OursLegs) > 0 && len(r.Test.BaselineLegs) > 0 {
				rows = append(rows, spreadRow{id: "memory", label: "memory", test: r.Test,
					medians: [2]*float64{r.Ours, r.Baseline}, ratio: r.Value, unit: unit})
			}
		}
	}
	for k := range rows {
		rows[k].reasons = reasons
	}
	return rows, quantity
}

func spreadCaption(base, quantity, family string) string {
	where := "at its point"
	if family == FamilyMemory {
		where = "over its legs"
	}
	return fmt.Sprintf("Each dot is one leg's %s divided by %s's median %s (the dashed line at 1); "+
		"a tick marks each arm's median and a bar its %s%% confidence interval, dashed to the edge on a side the legs are too few to bound "+
		"(both sides need %s). On the right, the ratio and the two-sided Mann–Whitney U p of the legs, ~ where p ≥ %s (no difference detected).",
		quantity, esc(base), where, confidenceText(), legsWord(ratio.CILegsNeeded()), alphaText())
}

// spreadSVG draws the rows on one scale relative to the baseline median,
// and returns, for each arm of a row drawn as its distribution (more than
// AggregateLegs legs), the words its caption gives it.
func spreadSVG(w *svgWriter, id, ours, base, quantity string, rows []spreadRow) (notes []string) {
	xs := newXScale(rows)
	h := spreadPadT + len(rows)*spreadRowH - spreadGap + spreadPadB
	bottom := float64(h - spreadPadB)
	left, right := float64(spreadPadL), float64(spreadPadL+spreadPlotW)
	colours := [2]string{colourOurs, colourBaseline}
	names := [2]string{ours, base}

	w.f(`<svg xmlns="http://www.w3.org/2000/svg" class="spread" viewBox="0 0 %d %d" role="img" aria-label="%s">`,
		spreadW, h, esc(spreadAria(ours, base, quantity, rows)))
	w.f("\n<title>%s</title>\n", esc(fmt.Sprintf("%s of each leg of %s and %s, relative to %s's median", quantity, ours, base, base)))

	// Grid and ticks.
	for k := 0; ; k++ {
		v := xs.lo + float64(k)*xs.step
		if v-xs.hi > xs.step/2 || math.IsInf(v, 0) || k > 40 {
			break
		}
		x := xs.x(v)
		w.f(`<line class="grid" x1="%s" y1="%s" x2="%s" y2="%s" stroke="%s"/>`+"\n", n(x), n(spreadPadT-6), n(x), n(bottom), colourGrid)
		w.f(`<line class="xtick" x1="%s" y1="%s" x2="%s" y2="%s" stroke="%s"/>`+"\n", n(x), n(bottom), n(x), n(bottom+5), colourAxis)
		w.f(`<text class="tick" x="%s" y="%s" text-anchor="middle">%s</text>`+"\n", n(x), n(bottom+17), xs.tickText(v))
	}
	// The baseline median: 1 on this scale.
	w.f(`<line class="ref" x1="%s" y1="%s" x2="%s" y2="%s" stroke="%s" stroke-width="1.3" stroke-dasharray="6 4"/>`+"\n",
		n(xs.x(1)), n(spreadPadT-6), n(xs.x(1)), n(bottom), colourBaseline)
	w.f(`<text class="ref-label" x="%s" y="%s" text-anchor="middle" fill="%s">%s</text>`+"\n",
		n(xs.x(1)), n(spreadPadT-10), colourBaseline, esc(clip(base, 16)+" median = 1"))

	for r := range rows {
		row := &rows[r]
		top := float64(spreadPadT + r*spreadRowH)
		w.f(`<g class="row" id="%s-%s">`+"\n", id, row.id)
		w.f(`<text class="row-label" x="8" y="%s" dominant-baseline="middle">%s</text>`+"\n", n(top+spreadArmH), esc(clip(row.label, 12)))
		ref, why := row.ref()
		for a, arm := range row.arms() {
			y := top + float64(a)*spreadArmH + spreadArmH/2
			w.f(`<text class="arm-label" x="%s" y="%s" text-anchor="end" dominant-baseline="middle" fill="%s">%s</text>`+"\n",
				n(left-8), n(y), colours[a], esc(clip(names[a], 14)))
			if why != "" {
				continue
			}
			if len(arm.legs) > AggregateLegs {
				var note string
				arm, note = spreadDistribution(w, xs, arm, ref, y, colours[a], names[a], row.unit, row.reasons[a])
				notes = append(notes, esc(row.label)+", "+note)
			}
			spreadArmMarks(w, xs, arm, ref, y, left, right, colours[a], names[a], row.unit)
		}
		if why != "" {
			w.f(`<text class="row-note" x="%s" y="%s" text-anchor="middle" dominant-baseline="middle" fill="%s">%s</text>`+"\n",
				n(left+spreadPlotW/2), n(top+spreadArmH), colourAxis, esc(why))
		}
		ratioText := "ratio n/a"
		if row.ratio != nil {
			ratioText = "ratio " + fixed(*row.ratio, 4)
		}
		w.f(`<text class="row-ratio" x="%s" y="%s" dominant-baseline="middle">%s</text>`+"\n", n(right+12), n(top+spreadArmH/2), esc(ratioText))
		w.f(`<text class="row-p" x="%s" y="%s" dominant-baseline="middle">%s</text>`+"\n", n(right+12), n(top+1.5*spreadArmH), esc(pPicture(row.test)))
		w.f("</g>\n")
	}

	// Axis and its label.
	w.f(`<line class="axis" x1="%s" y1="%s" x2="%s" y2="%s" stroke="%s"/>`+"\n", n(left), n(bottom), n(right), n(bottom), colourAxis)
	w.f(`<text class="axis-label" x="%s" y="%s" text-anchor="middle">%s</text>`+"\n",
		n(left+spreadPlotW/2), n(float64(h)-8), esc(quantity+" ÷ "+clip(base, 16)+"'s median"))
	w.f("</svg>")
	return notes
}

// roleIndex is 0 for the ours arm's engine, 1 for the baseline's.
func roleIndex(cmp *Comparison, engine string) int {
	if engine == cmp.Ours {
		return 0
	}
	return 1
}

// aggregatedSpreadCaption says how the arms of more than AggregateLegs
// legs are drawn, and what each summarizes.
func aggregatedSpreadCaption(notes []string) string {
	return fmt.Sprintf("Aggregated: an arm of more than %d legs is drawn as its distribution, a whisker from its least to its greatest leg and a box "+
		"from its lower to its upper quartile; as dots only its least and greatest legs and, of its legs that carry reasons, the %d farthest from its median "+
		"(every leg is in all-runs.json). %s.", AggregateLegs, OutlierDots, strings.Join(notes, "; "))
}

// spreadArmMarks draws one arm's line: its interval as a bar (none when
// both sides are unbounded), its median as a tick, each leg as a dot that
// names its leg and value.
func spreadArmMarks(w *svgWriter, xs xScale, arm spreadArm, ref, y, left, right float64, colour, engine, unit string) {
	if arm.ci[0] != nil || arm.ci[1] != nil {
		// The bar runs between the finite bounds; on an unbounded side it
		// runs to the farthest leg there and on, dashed, for spreadOpen
		// units: the interval goes on without end.
		lo, hi := math.Inf(1), math.Inf(-1)
		for _, l := range arm.legs {
			lo, hi = min(lo, l.Value), max(hi, l.Value)
		}
		x1, x2 := xs.x(lo/ref), xs.x(hi/ref)
		if arm.ci[0] != nil {
			x1 = xs.x(*arm.ci[0] / ref)
		} else {
			w.f(`<line class="ci-open" x1="%s" y1="%s" x2="%s" y2="%s" stroke="%s" stroke-width="6" stroke-opacity="0.25" stroke-dasharray="4 3"/>`+"\n",
				n(max(left, x1-spreadOpen)), n(y), n(x1), n(y), colour)
		}
		if arm.ci[1] != nil {
			x2 = xs.x(*arm.ci[1] / ref)
		} else {
			w.f(`<line class="ci-open" x1="%s" y1="%s" x2="%s" y2="%s" stroke="%s" stroke-width="6" stroke-opacity="0.25" stroke-dasharray="4 3"/>`+"\n",
				n(x2), n(y), n(min(right, x2+spreadOpen)), n(y), colour)
		}
		w.f(`<line class="ci" x1="%s" y1="%s" x2="%s" y2="%s" stroke="%s" stroke-width="6" stroke-opacity="0.25"/>`+"\n",
			n(x1), n(y), n(x2), n(y), colour)
		for _, b := range arm.ci {
			if b != nil {
				x := xs.x(*b / ref)
				w.f(`<line class="ci-cap" x1="%s" y1="%s" x2="%s" y2="%s" stroke="%s" stroke-width="1.5"/>`+"\n", n(x), n(y-6), n(x), n(y+6), colour)
			}
		}
	}
	if arm.median != nil {
		x := xs.x(*arm.median / ref)
		w.f(`<line class="median" x1="%s" y1="%s" x2="%s" y2="%s" stroke="%s" stroke-width="2.5"/>`+"\n", n(x), n(y-8), n(x), n(y+8), colour)
	}
	// Legs at one x (ties) are spread evenly over the arm's line, the
	// first on top, so that each stays countable.
	count, seen := map[string]int{}, map[string]int{}
	for _, l := range arm.legs {
		count[n(xs.x(l.Value/ref))]++
	}
	for _, l := range arm.legs {
		x := n(xs.x(l.Value / ref))
		k := seen[x]
		seen[x]++
		dy := 0.0
		if c := count[x]; c > 1 {
			dy = -spreadStack + 2*spreadStack*float64(k)/float64(c-1)
		}
		w.f(`<circle class="leg" cx="%s" cy="%s" r="%s" fill="%s" fill-opacity="0.8" stroke="#ffffff" stroke-width="1"><title>%s</title></circle>`+"\n",
			x, n(y+dy), n(spreadDotR), colour, esc(fmt.Sprintf("%s %s: %s %s", engine, l.Leg, num(l.Value), unit)))
	}
}

// pPicture is a row's p as the picture prints it: "p = 0.008", "~ (p =
// 0.690)", benchstat's way, or "p n/a".
func pPicture(t ratio.Test) string {
	switch {
	case t.P == nil:
		return "p n/a"
	case t.Significant():
		return "p = " + pNum(t.Exact)
	}
	return "~ (p = " + pNum(t.Exact) + ")"
}

// spreadAria says in words what the picture shows.
func spreadAria(ours, base, quantity string, rows []spreadRow) string {
	parts := make([]string, len(rows))
	for i := range rows {
		r := &rows[i]
		arm := func(engine string, legs []ratio.LegValue, m *float64) string {
			s := fmt.Sprintf("%s %s", engine, legsWord(len(legs)))
			if m != nil {
				s += " median " + num(*m)
			}
			return s
		}
		parts[i] = fmt.Sprintf("%s: %s, %s, %s", r.label, arm(ours, r.test.OursLegs, r.medians[0]),
			arm(base, r.test.BaselineLegs, r.medians[1]), pPicture(r.test))
	}
	return fmt.Sprintf("%s of each leg relative to %s's median: %s.", quantity, base, strings.Join(parts, "; "))
}
