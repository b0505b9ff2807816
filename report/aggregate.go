package report

import (
	"fmt"
	"io"
	"math"
	"sort"
	"strconv"
	"strings"

	"github.com/clockgate/clockgate/clocks"
	"github.com/clockgate/clockgate/ratio"
)

// AggregateLegs is the most legs of one arm a picture draws one by one.
// Past it a leg end to end on the clock picture is under 4 of its 776
// units wide, and the spread picture's dots pile into one smear: a person
// cannot tell them apart, and a browser spends seconds on each element. An
// arm of more legs is drawn as what a person can read: the clock as the
// minimum and maximum of each pixel column over all its legs, the spread
// as its distribution with the legs that carry reasons as dots.
const AggregateLegs = 200

// OutlierDots is the most legs that carry reasons an aggregated arm of
// the spread picture draws as dots, the farthest from its median first;
// its least and greatest legs are drawn besides, whatever their reasons.
// The caption counts the legs with reasons that are not dots.
const OutlierDots = 40

// armLegs counts the legs of each arm of a comparison.
func armLegs(cmp *Comparison) (ours, base int) {
	for _, l := range cmp.Legs {
		if l.Engine == cmp.Ours {
			ours++
		} else {
			base++
		}
	}
	return ours, base
}

// aggregated reports whether a comparison's pictures draw an arm as an
// aggregate: some arm has more than AggregateLegs legs.
func (cmp *Comparison) aggregated() bool {
	o, b := armLegs(cmp)
	return o > AggregateLegs || b > AggregateLegs
}

// count prints a count with thousands separated: "20,000".
func count(n int) string {
	s := strconv.Itoa(n)
	if n < 0 {
		return "-" + count(-n)
	}
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

// legSpan is the seconds a leg takes on the clock picture, and whether it
// has a trace to draw; 0 and false for a leg without one.
func legSpan(l Leg) (float64, bool) {
	if !l.Trusted {
		return 0, false
	}
	if len(l.GPUs) > 1 {
		span := 0.0
		for _, g := range l.GPUs {
			if g.Trace == nil || g.Trace.Len() == 0 {
				return 0, false
			}
			span = max(span, g.Trace.Span)
		}
		return max(1, span), true
	}
	if l.Trace == nil || l.Trace.Len() == 0 {
		return 0, false
	}
	return max(1, l.Trace.Span), true
}

// busyRange gives see the least and greatest busy clock of a leg's
// trace, read once for the scale (the picture reads it again to draw
// it, so that no arm's samples are held whole).
func busyRange(l Leg, see func(float64)) error {
	if _, drawn := legSpan(l); !drawn {
		return nil
	}
	lt := traceOf(l)
	if lt.err != nil {
		return fmt.Errorf("leg %s %s: %w", l.Engine, l.Name, lt.err)
	}
	lo, hi := int32(math.MaxInt32), int32(math.MinInt32)
	for _, s := range lt.samples {
		if !s.idle {
			lo, hi = min(lo, s.mhz), max(hi, s.mhz)
		}
	}
	if lo <= hi {
		see(float64(lo))
		see(float64(hi))
	}
	return nil
}

// aggPanel is one arm's aggregated clock picture: its legs in order.
type aggPanel struct {
	*panel
	legs []Leg
}

// figuresAggregated is the HTML of the i-th comparison's clock pictures
// where some arm has more than AggregateLegs legs: each arm's legs end to
// end, reduced to the minimum and maximum of each pixel column over all of
// them, read one leg at a time.
func (d *Document) figuresAggregated(w io.Writer, i int, ours, base *panel) error {
	cmp := &d.Comparisons[i]
	aps := []*aggPanel{{panel: ours}, {panel: base}}
	for _, l := range cmp.Legs {
		if l.Engine == cmp.Ours {
			aps[0].legs = append(aps[0].legs, l)
		} else {
			aps[1].legs = append(aps[1].legs, l)
		}
	}
	// One time scale for both: the arm of the longest legs fills the plot.
	scale := math.Inf(1)
	for _, ap := range aps {
		span := 0.0
		for _, l := range ap.legs {
			s, _ := legSpan(l)
			span += s
		}
		if span > 0 {
			scale = min(scale, plotW/span)
		}
	}
	if math.IsInf(scale, 0) {
		scale = 1
	}
	var err error
	ys := yScaleOf([]*panel{ours, base}, func(p *panel, see func(float64)) {
		for _, ap := range aps {
			if ap.panel != p {
				continue
			}
			for _, l := range ap.legs {
				if e := busyRange(l, see); e != nil && err == nil {
					err = e
				}
			}
		}
	})
	if err != nil {
		return err
	}

	fmt.Fprintf(w, "<section class=\"clock\" id=\"%s\">\n<h3>Clock over time: %s and %s</h3>\n", FiguresID(i), esc(cmp.Ours), esc(cmp.Baseline))
	fmt.Fprintf(w, "<p class=\"how\">SM clock of every sample of each arm, its legs end to end in run order, each over its own seconds; "+
		"an arm of more than %d legs is too many to tell apart, so each picture shows per pixel column the least and greatest sample of the legs there. "+
		"Both pictures share one time scale and one MHz scale.</p>\n", AggregateLegs)
	for _, ap := range aps {
		fmt.Fprintf(w, "<figure id=\"%s\">\n", ap.id)
		st, err := ap.svg(&svgWriter{w}, scale, ys)
		if err != nil {
			return err
		}
		fmt.Fprintf(w, "\n<figcaption>%s %s</figcaption>\n</figure>\n", ap.caption(), st.caption())
	}
	fmt.Fprintf(w, "<ul class=\"legend\">\n"+
		"<li><span class=\"key key-busy\"></span>busy samples of the arm's legs, the minimum and maximum of each pixel column, so no excursion is lost</li>\n"+
		"<li><span class=\"key\" style=\"border-left: 1.5px solid #8a8a8a; width: 0; margin: 0 .85rem 0 .75rem\"></span>idle samples (utilization 0%%, excluded from the statistics), the minimum and maximum of each pixel column; "+
		"<span class=\"key key-below\"></span>idle samples below the MHz scale, on its edge</li>\n"+
		"<li><span class=\"key key-median\"></span>the arm's merged median, in a band of ±%.1f%%: a busy sample outside the band fails the spread check (max − min ≤ %.1f%% of the median)</li>\n"+
		"<li><span class=\"key key-other\"></span>the other arm's merged median</li>\n"+
		"<li><span class=\"key key-throttle\"></span>a pixel column holding a busy sample with a throttle bit outside the benign mask %s</li>\n"+
		"<li><span class=\"key\" style=\"border-left: 1.5px solid #c62828; width: 0; height: .6rem; margin: 0 .85rem 0 .75rem\"></span>above the plot, a pixel column holding a leg with clock reasons (each listed under Leg reasons); "+
		"<span class=\"key\" style=\"border-left: 1.5px solid #8a8a8a; width: 0; height: .6rem; margin: 0 .85rem 0 .75rem\"></span>one holding a leg without a trusted clock trace</li>\n"+
		"<li><span class=\"key key-boot\"></span>a new boot</li>\n</ul>\n</section>\n",
		clocks.MaxSpreadPct, clocks.MaxSpreadPct, clocks.FormatThrottle(clocks.BenignThrottleMask))
	return nil
}

// aggStats is what an aggregated clock picture drew, for its caption.
type aggStats struct {
	legs, drawn, clockReasons, noTrace, severalGPUs int
}

func (s aggStats) caption() string {
	out := fmt.Sprintf("Aggregated: %s %s summarized, %s drawn end to end as the least and greatest sample of each pixel column",
		count(s.legs), plural(s.legs, "leg", "legs"), count(s.drawn))
	if s.severalGPUs > 0 {
		out += fmt.Sprintf(" (the %s legs of several GPUs with every GPU's samples together)", count(s.severalGPUs))
	}
	out += fmt.Sprintf("; %s with clock reasons, marked red above the plot; %s without a trusted clock trace, marked grey (every leg is in the legs table and all-runs.json).",
		count(s.clockReasons), count(s.noTrace))
	return out
}

// svg draws one arm's aggregated picture, each leg's trace read and
// reduced in turn.
func (ap *aggPanel) svg(w *svgWriter, scale float64, ys yScale) (aggStats, error) {
	st := aggStats{legs: len(ap.legs)}
	title := fmt.Sprintf("%s (%s arm of %s): SM clock (MHz) of %s legs end to end, per pixel column the least and greatest sample",
		ap.engine, ap.role, ap.model, count(len(ap.legs)))
	w.f(`<svg xmlns="http://www.w3.org/2000/svg" class="clock aggregated" viewBox="0 0 %d %d" role="img" aria-label="%s">`, figW, figH, esc(ap.aggAria()))
	w.f("\n<title>%s</title>\n", esc(title))
	right := float64(padL + plotW)
	bottom := float64(padT + plotH)
	for v := ys.lo; v <= ys.hi+ys.step/2; v += ys.step {
		y := ys.y(v)
		w.f(`<line class="grid" x1="%s" y1="%s" x2="%s" y2="%s" stroke="%s"/>`+"\n", n(padL), n(y), n(right), n(y), colourGrid)
		w.f(`<text class="tick" x="%s" y="%s" text-anchor="end" dominant-baseline="middle">%s</text>`+"\n", n(padL-6), n(y), strconv.FormatFloat(v, 'f', -1, 64))
	}
	if m := ap.side.MedianMHz; m != nil {
		top, bot := ys.y(*m*(1+clocks.MaxSpreadPct/100)), ys.y(*m*(1-clocks.MaxSpreadPct/100))
		w.f(`<rect class="band" x="%s" y="%s" width="%s" height="%s" fill="%s" fill-opacity="0.1"/>`+"\n", n(padL), n(top), n(plotW), n(bot-top), ap.colour)
	}

	// The legs end to end, reduced over all of them.
	x0 := float64(padL)
	var xAt float64
	rd := newReducer(func(t float64) float64 { return xAt + t*scale }, ys.y)
	var reasonCols, noTraceCols []int
	mark := func(cols *[]int, x float64) {
		c := column(min(x, right-0.5))
		if len(*cols) == 0 || (*cols)[len(*cols)-1] != c {
			*cols = append(*cols, c)
		}
	}
	step := int(niceStep(float64(len(ap.legs))/6, []float64{1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000, 10000, 20000, 50000, 100000, 200000, 500000}))
	type tick struct {
		x    float64
		name string
	}
	var ticks []tick
	for k, l := range ap.legs {
		if k%step == 0 {
			ticks = append(ticks, tick{x0, l.Name})
		}
		if clocks.HasClock(l.Reasons) {
			mark(&reasonCols, x0)
		}
		span, drawn := legSpan(l)
		if !drawn {
			st.noTrace++
			mark(&noTraceCols, x0)
			continue
		}
		lt := traceOf(l)
		if lt.err != nil {
			return st, fmt.Errorf("leg %s %s: %w", l.Engine, l.Name, lt.err)
		}
		if !lt.drawn() {
			st.noTrace++
			mark(&noTraceCols, x0)
			continue
		}
		st.drawn++
		if lt.gpus != nil {
			st.severalGPUs++
		}
		xAt = x0
		for _, s := range lt.samples {
			rd.add(s, lt.boots[s.boot])
		}
		x0 += span * scale
	}
	for _, l := range ap.legs {
		if clocks.HasClock(l.Reasons) {
			st.clockReasons++
		}
	}
	r := rd.finish()

	busyLine(w, r.runs, "busy", ap.colour, "1.6", "0.85", "2")
	var in, off strings.Builder
	for _, q := range r.idle {
		switch {
		case q.y > bottom:
			fmt.Fprintf(&off, "M%s %s L%s %s L%s %s Z ", n(q.x-3.5), n(bottom-8), n(q.x+3.5), n(bottom-8), n(q.x), n(bottom-2))
		case q.y < padT:
			fmt.Fprintf(&off, "M%s %s L%s %s L%s %s Z ", n(q.x-3.5), n(padT+8), n(q.x+3.5), n(padT+8), n(q.x), n(padT+2))
		default:
			fmt.Fprintf(&in, "M%s %s L%s %s ", n(q.x), n(q.y-1.5), n(q.x), n(q.y+1.5))
		}
	}
	if in.Len() > 0 {
		w.f(`<path class="idle" d="%s" stroke="%s" stroke-width="1.2"/>`+"\n", strings.TrimSpace(in.String()), colourIdle)
	}
	if off.Len() > 0 {
		w.f(`<path class="off-scale" d="%s" fill="%s"/>`+"\n", strings.TrimSpace(off.String()), colourIdle)
	}
	ticksPath := func(class, colour string, cols []int, y1, y2 float64) {
		if len(cols) == 0 {
			return
		}
		var b strings.Builder
		for _, c := range cols {
			fmt.Fprintf(&b, "M%s %s L%s %s ", n(colX(c)), n(y1), n(colX(c)), n(y2))
		}
		w.f(`<path class="%s" d="%s" stroke="%s" stroke-width="1"/>`+"\n", class, strings.TrimSpace(b.String()), colour)
	}
	ticksPath("power-managed", colourPowerManaged, r.managed, bottom-10, bottom)
	ticksPath("throttle", colourThrottle, r.throttle, padT, padT+10)
	ticksPath("clock-reasons", colourThrottle, reasonCols, padT-12, padT-4)
	ticksPath("no-trace", colourIdle, noTraceCols, padT-22, padT-14)
	lastLabel := math.Inf(-1)
	for _, b := range r.boots {
		bx := colX(b.col)
		w.f(`<line class="boot-change" x1="%s" y1="%s" x2="%s" y2="%s" stroke="%s" stroke-width="1"/>`+"\n", n(bx), n(padT), n(bx), n(bottom), colourBoot)
		if bx-lastLabel >= 90 {
			w.f(`<text class="boot-label" x="%s" y="%s" fill="%s">boot %s</text>`+"\n", n(bx+3), n(padT+24), colourBoot, esc(shortBoot(b.boot)))
			lastLabel = bx
		}
	}

	// x ticks: the run at the start of every step-th leg.
	lastTick := math.Inf(-1)
	for _, t := range ticks {
		if t.x-lastTick < 60 || t.x > right {
			continue
		}
		lastTick = t.x
		w.f(`<line class="xtick" x1="%s" y1="%s" x2="%s" y2="%s" stroke="%s"/>`+"\n", n(t.x), n(bottom), n(t.x), n(bottom+5), colourAxis)
		w.f(`<text class="tick" x="%s" y="%s" text-anchor="middle">%s</text>`+"\n", n(t.x), n(bottom+17), esc(clip(t.name, 10)))
	}

	if m := ap.otherMedian; m != nil {
		w.f(`<line class="other-median" x1="%s" y1="%s" x2="%s" y2="%s" stroke="%s" stroke-width="1.3" stroke-dasharray="7 5"/>`+"\n",
			n(padL), n(ys.y(*m)), n(right), n(ys.y(*m)), ap.otherColour)
	}
	if m := ap.side.MedianMHz; m != nil {
		w.f(`<line class="median" x1="%s" y1="%s" x2="%s" y2="%s" stroke="%s" stroke-width="1"/>`+"\n",
			n(padL), n(ys.y(*m)), n(right), n(ys.y(*m)), ap.colour)
	}
	ap.medianLabels(w, ys)
	w.f(`<line class="axis" x1="%s" y1="%s" x2="%s" y2="%s" stroke="%s"/>`+"\n", n(padL), n(padT), n(padL), n(bottom), colourAxis)
	w.f(`<line class="axis" x1="%s" y1="%s" x2="%s" y2="%s" stroke="%s"/>`+"\n", n(padL), n(bottom), n(right), n(bottom), colourAxis)
	w.f(`<text class="axis-label" x="%s" y="%s" text-anchor="middle" transform="rotate(-90 %s %s)">SM clock (MHz)</text>`+"\n",
		n(18), n(padT+plotH/2), n(18), n(padT+plotH/2))
	w.f(`<text class="axis-label" x="%s" y="%s" text-anchor="middle">%s legs end to end, each over its own seconds (the run at each tick)</text>`+"\n",
		n(padL+plotW/2), n(figH-8), count(len(ap.legs)))
	w.f("</svg>")
	return st, nil
}

// aggAria says in words what an aggregated picture shows.
func (ap *aggPanel) aggAria() string {
	out := fmt.Sprintf("SM clock in MHz of %s's %s legs end to end, per pixel column the least and greatest sample", ap.engine, count(len(ap.legs)))
	if m := ap.side.MedianMHz; m != nil {
		out += fmt.Sprintf(". Merged median %s MHz with a ±%.1f%% band", num(*m), clocks.MaxSpreadPct)
	}
	if m := ap.otherMedian; m != nil {
		out += fmt.Sprintf("; %s median %s MHz dashed", ap.other, num(*m))
	}
	return out + "."
}

// quantile is the q-quantile of sorted values, interpolated between the
// two nearest ranks.
func quantile(sorted []float64, q float64) float64 {
	if len(sorted) == 1 {
		return sorted[0]
	}
	pos := q * float64(len(sorted)-1)
	lo := int(math.Floor(pos))
	if lo >= len(sorted)-1 {
		return sorted[len(sorted)-1]
	}
	f := pos - float64(lo)
	return sorted[lo] + f*(sorted[lo+1]-sorted[lo])
}

// armDots are the legs an aggregated arm draws as dots: its least and
// greatest legs, and of the legs that carry reasons the OutlierDots
// farthest from its median (of equal distance, the first); in the legs'
// order. withReasons counts the arm's legs that carry reasons.
func armDots(arm spreadArm, reasons map[string]bool) (dots []ratio.LegValue, withReasons int) {
	if len(arm.legs) == 0 {
		return nil, 0
	}
	lo, hi := 0, 0
	var flagged []int
	for k, l := range arm.legs {
		if l.Value < arm.legs[lo].Value {
			lo = k
		}
		if l.Value > arm.legs[hi].Value {
			hi = k
		}
		if reasons[l.Leg] {
			flagged = append(flagged, k)
		}
	}
	mid := 0.0
	if arm.median != nil {
		mid = *arm.median
	}
	sort.SliceStable(flagged, func(a, b int) bool {
		return math.Abs(arm.legs[flagged[a]].Value-mid) > math.Abs(arm.legs[flagged[b]].Value-mid)
	})
	keep := map[int]bool{lo: true, hi: true}
	for _, k := range flagged[:min(len(flagged), OutlierDots)] {
		keep[k] = true
	}
	for k, l := range arm.legs {
		if keep[k] {
			dots = append(dots, l)
		}
	}
	return dots, len(flagged)
}

// spreadDistribution draws an arm of more than AggregateLegs legs as its
// distribution: a whisker from its least to its greatest leg, a box from
// its lower to its upper quartile, and the dots armDots picks. It returns
// the words the caption gives the arm.
func spreadDistribution(w *svgWriter, xs xScale, arm spreadArm, ref, y float64, colour, engine, unit string, reasons map[string]bool) (spreadArm, string) {
	vals := make([]float64, len(arm.legs))
	for k, l := range arm.legs {
		vals[k] = l.Value
	}
	sort.Float64s(vals)
	q1, q3 := quantile(vals, 0.25), quantile(vals, 0.75)
	w.f(`<g class="distribution"><title>%s</title>`, esc(fmt.Sprintf("%s: %s legs, least %s, lower quartile %s, upper quartile %s, greatest %s %s",
		engine, count(len(vals)), num(vals[0]), num(q1), num(q3), num(vals[len(vals)-1]), unit)))
	w.f(`<line class="whisker" x1="%s" y1="%s" x2="%s" y2="%s" stroke="%s" stroke-width="1.2"/>`, n(xs.x(vals[0]/ref)), n(y), n(xs.x(vals[len(vals)-1]/ref)), n(y), colour)
	w.f(`<rect class="quartiles" x="%s" y="%s" width="%s" height="%s" fill="%s" fill-opacity="0.35" stroke="%s"/>`,
		n(xs.x(q1/ref)), n(y-5), n(xs.x(q3/ref)-xs.x(q1/ref)), n(10.0), colour, colour)
	w.f("</g>\n")
	dots, flagged := armDots(arm, reasons)
	out := arm
	out.legs = dots
	return out, fmt.Sprintf("%s: %s legs summarized, %s with reasons, %s drawn as dots", esc(engine), count(len(vals)), count(flagged), count(len(dots)))
}
