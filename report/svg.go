package report

import (
	"cmp"
	"fmt"
	"html"
	"io"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/clockgate/clockgate/clocks"
)

// The clock-over-time picture's geometry, in SVG user units (the viewBox
// is figW × figH; the page scales it to the column width).
const (
	figW  = 960
	figH  = 310
	padL  = 72  // y tick labels and the MHz axis label
	padR  = 112 // the median labels
	padT  = 48  // leg labels and their clock codes
	padB  = 46  // x tick labels and the seconds axis label
	plotW = figW - padL - padR
	plotH = figH - padT - padB

	// slotW is the width of a leg drawn without a trace; legGap separates legs.
	slotW  = 170.0
	legGap = 14.0
)

// The picture's colours; every one prints on white.
const (
	colourOurs     = "#1f5fa8"
	colourBaseline = "#00796b"
	colourIdle     = "#8a8a8a"
	colourThrottle = "#c62828"
	// colourPowerManaged marks the samples the power controller held at
	// the recorded limit: amber, apart from every arm's colour and from
	// the throttle red.
	colourPowerManaged = "#e69500"
	colourBoot         = "#d35400"
	colourGrid         = "#e3e3e3"
	colourAxis         = "#444444"
	colourRule         = "#9e9e9e"
)

// gpuColours are the muted colours of the GPUs of a leg of several, by
// index: light enough that the slowest GPU, in the arm's colour, stands
// out over them, distinct enough to tell them apart.
var gpuColours = [...]string{"#8da0cb", "#66c2a5", "#fc8d62", "#e78ac3", "#a6d854", "#d4b84a", "#e5c494", "#b3b3b3"}

func gpuColour(index int) string { return gpuColours[index%len(gpuColours)] }

// keyH is the height of the key under a picture of legs of several GPUs,
// per row of the key.
const keyH = 22

// tsample is one sample of a leg's stream as the picture needs it, in 24
// bytes: a large comparison's picture holds some hundreds of thousands.
type tsample struct {
	// t is seconds from the leg's first sample.
	t   float64
	mhz int32
	// boot indexes the leg's boots (legTrace.boots).
	boot uint16
	// idle is utilization 0%; throttled is a busy sample with a bit outside
	// clocks.BenignThrottleMask; pm a busy sample the power controller
	// held at the recorded limit.
	idle, throttled, pm bool
}

// legTrace is one leg of an arm, read for the picture: its samples in time
// order, or the note that says why it has none.
type legTrace struct {
	leg     Leg
	samples []tsample
	// boots are the boot ids the samples' boot indexes, each once.
	boots []string
	// note is set exactly when samples is nil: the leg is drawn as a slot
	// saying it has no trusted clock trace, and why.
	note string
	// span is the seconds from the first sample to the last, at least 1.
	span float64
	// gpus are the lines of a leg of several GPUs, in index order; samples
	// then holds all of theirs, in time order. Nil for a leg of one GPU.
	gpus []gpuLine
	// err is why a trace put in a spool could not be read back; note then
	// says so, and the page is not written.
	err error
}

// gpuLine is one GPU of a leg of several, drawn as a line of its own.
type gpuLine struct {
	index int
	// name is how the picture names the GPU: "GPU 3", or, in a
	// multi-host leg, its host and role too ("node2/decode GPU 0"),
	// index then being its position in the leg.
	name    string
	samples []tsample
	// slowest marks the leg's GPU of the lowest busy median.
	slowest      bool
	median, mean *float64
}

func (lt *legTrace) drawn() bool { return lt.samples != nil }

// traceOf is a leg's trace for the picture, or the note that says why it
// has none: only a leg whose record its stream recomputes to is drawn.
func traceOf(l Leg) legTrace {
	lt := legTrace{leg: l}
	if l.Trusted && (l.Trace == nil || l.Trace.Len() == 0) {
		lt.note = "trace not read"
		return lt
	}
	if !l.Trusted {
		lt.note = "record not trusted"
		for _, c := range l.Codes {
			switch c {
			case clocks.CodeMissing, clocks.CodeInvalid, clocks.CodeStreamMissing, clocks.CodeStreamInvalid, clocks.CodeStreamMismatch:
				lt.note = c
			}
		}
		return lt
	}
	if len(l.GPUs) > 1 {
		return traceOfGPUs(lt)
	}
	points, err := l.Trace.ReadPoints()
	if err != nil {
		return legTrace{leg: l, note: "trace unreadable", err: err}
	}
	lt.samples = make([]tsample, len(points))
	for i, p := range points {
		lt.samples[i] = tsample{t: p.T, mhz: p.MHz, boot: p.Boot, idle: p.Idle, throttled: p.Throttled, pm: p.PowerManaged}
	}
	lt.boots = l.Trace.Boots
	lt.span = max(1, l.Trace.Span)
	return lt
}

// traceOfGPUs is the trace of a trusted leg of several GPUs: a line per
// GPU, the slowest marked, and every GPU's samples together for what the
// picture draws of the leg as a whole (its idle samples, throttle ticks,
// boot changes and ticks).
func traceOfGPUs(lt legTrace) legTrace {
	l := lt.leg
	for _, g := range l.GPUs {
		if g.Trace == nil || g.Trace.Len() == 0 {
			lt.note = "trace not read"
			return lt
		}
	}
	slow := slowestGPU(l.GPUs)
	total := 0
	for _, g := range l.GPUs {
		total += g.Trace.Len()
	}
	lt.samples = make([]tsample, 0, total)
	bootAt := map[string]int{}
	for k, g := range l.GPUs {
		line := gpuLine{index: g.Index, name: fmt.Sprintf("GPU %d", g.Index), slowest: k == slow, median: g.MedianMHz, mean: g.MeanMHz}
		switch {
		case g.Host != "" && g.Role != "":
			line.index, line.name = k, fmt.Sprintf("%s/%s GPU %d", g.Host, g.Role, g.Index)
		case g.Host != "":
			line.index, line.name = k, fmt.Sprintf("%s GPU %d", g.Host, g.Index)
		}
		// The GPU's boot indexes, as indexes of the leg's boots.
		boot := make([]uint16, len(g.Trace.Boots))
		for b, id := range g.Trace.Boots {
			at, ok := bootAt[id]
			if !ok {
				if len(lt.boots) > math.MaxUint16 {
					// Only a leg of hundreds of GPUs, each on hundreds of
					// boots, gets here: a sample's boot is 16 bits.
					return legTrace{leg: l, note: "too many boots to draw"}
				}
				at = len(lt.boots)
				bootAt[id] = at
				lt.boots = append(lt.boots, id)
			}
			boot[b] = uint16(at)
		}
		points, err := g.Trace.ReadPoints()
		if err != nil {
			return legTrace{leg: l, note: "trace unreadable", err: err}
		}
		line.samples = make([]tsample, len(points))
		for i, p := range points {
			line.samples[i] = tsample{t: p.T, mhz: p.MHz, boot: boot[p.Boot], idle: p.Idle, throttled: p.Throttled, pm: p.PowerManaged}
		}
		lt.samples = append(lt.samples, line.samples...)
		lt.span = max(lt.span, g.Trace.Span)
		lt.gpus = append(lt.gpus, line)
	}
	slices.SortStableFunc(lt.samples, func(a, b tsample) int { return cmp.Compare(a.t, b.t) })
	lt.span = max(1, lt.span)
	return lt
}

// slowestGPU is the leg's slowest GPU: the lowest busy median, of those
// the lowest busy mean (a tensor-parallel step runs at the pace of the
// time-averaged clock), of those the first; -1 when none has a median.
func slowestGPU(gpus []LegGPU) int {
	slow := -1
	for k, g := range gpus {
		if g.MedianMHz == nil {
			continue
		}
		if slow < 0 {
			slow = k
			continue
		}
		s := gpus[slow]
		if *g.MedianMHz < *s.MedianMHz || *g.MedianMHz == *s.MedianMHz && g.MeanMHz != nil && s.MeanMHz != nil && *g.MeanMHz < *s.MeanMHz {
			slow = k
		}
	}
	return slow
}

// slowest is the leg's slowest GPU line; nil for a leg of one GPU.
func (lt *legTrace) slowest() *gpuLine {
	for i := range lt.gpus {
		if lt.gpus[i].slowest {
			return &lt.gpus[i]
		}
	}
	return nil
}

// traces are the legs' traces, in the legs' order; the error is the
// first trace that could not be read back from its spool.
func traces(legs []Leg) ([]legTrace, error) {
	out := make([]legTrace, len(legs))
	for i, l := range legs {
		out[i] = traceOf(l)
		if err := out[i].err; err != nil {
			return nil, fmt.Errorf("leg %s %s: %w", l.Engine, l.Name, err)
		}
	}
	return out, nil
}

// panel is one arm's picture.
type panel struct {
	// id is the figure's fragment, such as "c1-ours".
	id            string
	model         string
	engine, other string
	role          string // "ours" or "baseline"
	colour        string
	otherColour   string
	side          clocks.Side
	otherMedian   *float64
	legs          []legTrace
	// host names the one host of multi-host legs the panel draws ("host
	// node2, role decode"); "" for a panel of whole legs.
	host string
}

// multi reports whether some drawn leg of the panel has several GPUs.
func (p *panel) multi() bool {
	for i := range p.legs {
		if p.legs[i].gpus != nil {
			return true
		}
	}
	return false
}

// yScale maps MHz to the plot's y.
type yScale struct{ lo, hi, step float64 }

func (s yScale) y(mhz float64) float64 {
	return padT + plotH - (mhz-s.lo)/(s.hi-s.lo)*plotH
}

// newYScale covers every busy sample of the panels, each merged median
// with its spread band and each other arm's median, with round ticks.
// Idle samples do not widen it: they price no work, and one at idle clock
// would flatten the busy trace.
func newYScale(panels []*panel) yScale {
	return yScaleOf(panels, func(p *panel, see func(float64)) {
		for _, lt := range p.legs {
			for _, s := range lt.samples {
				if !s.idle {
					see(float64(s.mhz))
				}
			}
		}
	})
}

// yScaleOf is newYScale with the busy samples each panel's busy gives.
func yScaleOf(panels []*panel, busy func(p *panel, see func(float64))) yScale {
	lo, hi := math.Inf(1), math.Inf(-1)
	see := func(x float64) { lo, hi = min(lo, x), max(hi, x) }
	for _, p := range panels {
		if m := p.side.MedianMHz; m != nil {
			see(*m * (1 - clocks.MaxSpreadPct/100))
			see(*m * (1 + clocks.MaxSpreadPct/100))
		}
		if m := p.otherMedian; m != nil {
			see(*m)
		}
		busy(p, see)
	}
	if math.IsInf(lo, 0) {
		lo, hi = 0, 3000
	}
	if hi-lo < 100 {
		mid := (hi + lo) / 2
		lo, hi = mid-50, mid+50
	}
	pad := (hi - lo) * 0.05
	lo, hi = max(0, lo-pad), hi+pad
	step := niceStep((hi-lo)/6, []float64{1, 2, 5, 10, 20, 25, 50, 100, 200, 250, 500, 1000, 2000, 5000, 10000})
	return yScale{lo: math.Floor(lo/step) * step, hi: math.Ceil(hi/step) * step, step: step}
}

// niceStep is the first step not below want, or the last.
func niceStep(want float64, steps []float64) float64 {
	for _, s := range steps {
		if s >= want {
			return s
		}
	}
	return steps[len(steps)-1]
}

// xLayout lays an arm's legs end to end: each drawn leg as wide as its
// span at a scale both panels of a comparison share, each leg without a
// trace as a fixed slot.
type xLayout struct {
	scale float64 // user units per second
	slot  float64
	gap   float64
}

func newXLayout(panels []*panel) xLayout {
	n := 1
	for _, p := range panels {
		n = max(n, len(p.legs))
	}
	// A slot is never wider than an equal share of the plot, so that
	// drawn legs keep at least as much.
	l := xLayout{gap: min(legGap, plotW/float64(8*n))}
	l.slot = min(slotW, (plotW-l.gap*float64(n-1))/float64(n))
	l.scale = math.Inf(1)
	for _, p := range panels {
		avail, span := float64(plotW)-l.gap*float64(len(p.legs)-1), 0.0
		for _, lt := range p.legs {
			if lt.drawn() {
				span += lt.span
			} else {
				avail -= l.slot
			}
		}
		if span > 0 {
			l.scale = min(l.scale, avail/span)
		}
	}
	if math.IsInf(l.scale, 0) {
		l.scale = 1
	}
	return l
}

func (l xLayout) width(lt *legTrace) float64 {
	if lt.drawn() {
		return lt.span * l.scale
	}
	return l.slot
}

// svgWriter writes SVG; every number it prints has one decimal, so the
// same picture is always the same bytes.
type svgWriter struct{ io.Writer }

func (w *svgWriter) f(format string, args ...any) { fmt.Fprintf(w, format, args...) }

// n prints a coordinate with one decimal, never "-0.0".
func n(x float64) string {
	x = math.Round(x*10) / 10
	if x == 0 {
		x = 0
	}
	return strconv.FormatFloat(x, 'f', 1, 64)
}

// esc makes text safe inside SVG and HTML: valid UTF-8, no control
// character, markup escaped.
func esc(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); {
		r, w := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && w == 1, unicode.IsControl(r) && r != '\t', r == '\uFFFE', r == '\uFFFF':
			b.WriteRune(utf8.RuneError)
		default:
			b.WriteString(s[i : i+w])
		}
		i += w
	}
	return html.EscapeString(b.String())
}

// clip shortens s to at most n runes, marking the cut.
func clip(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	if n < 1 {
		return ""
	}
	r := []rune(s)
	return string(r[:n-1]) + "…"
}

// pt is a point of a busy trace, in user units.
type pt struct{ x, y float64 }

// column is the pixel column x falls in.
func column(x float64) int { return int(math.Floor(x)) }

// colX is the centre of a pixel column.
func colX(c int) float64 { return float64(c) + 0.5 }

// reduced is a leg's samples reduced to what a plot of its width can show:
// per pixel column the busy samples' minimum and maximum, in the order
// they occurred; the idle samples' minimum and maximum; whether a busy
// sample was throttled. Every excursion survives and the point count is
// bounded by the width, whatever the number of samples.
type reduced struct {
	// runs are the busy trace's polylines; a run breaks where a pixel
	// column held idle samples and no busy one.
	runs     [][]pt
	idle     []pt
	throttle []int // pixel columns
	// managed are the pixel columns that hold a power-managed sample.
	managed []int
	// boots are the pixel columns where the boot id changes within the leg,
	// with the new boot id.
	boots []bootMark
}

type bootMark struct {
	col  int
	boot string
}

func reduce(samples []tsample, boots []string, x func(t float64) float64, y func(mhz float64) float64) reduced {
	rd := newReducer(x, y)
	for _, s := range samples {
		rd.add(s, boots[s.boot])
	}
	return rd.finish()
}

// reducer reduces samples as reduce does, one at a time, so that an arm
// of many legs is reduced leg after leg without holding its samples: its
// memory is bounded by the plot's width.
type reducer struct {
	r    reduced
	x, y func(float64) float64
	run  []pt
	cur  reduceAgg
	// lastBusyCol is the column of the last busy sample; idleGapCol the
	// first column after it that held only idle samples so far.
	lastBusyCol, idleGapCol int
	// i counts the samples added; prevBoot is the last one's boot.
	i        int
	prevBoot string
}

type reduceAgg struct {
	col        int
	lo, hi     int
	loAt, hiAt int
	set        bool
	idleLo     int
	idleHi     int
	idleSet    bool
	throttled  bool
	pm         bool
}

func newReducer(x, y func(float64) float64) *reducer {
	return &reducer{x: x, y: y, cur: reduceAgg{col: math.MinInt}, lastBusyCol: math.MinInt, idleGapCol: math.MinInt}
}

func (rd *reducer) flushRun() {
	if len(rd.run) > 0 {
		rd.r.runs = append(rd.r.runs, rd.run)
		rd.run = nil
	}
}

func (rd *reducer) flush() {
	cur, y := &rd.cur, rd.y
	if cur.set {
		first, second := cur.lo, cur.hi
		if cur.hiAt < cur.loAt {
			first, second = cur.hi, cur.lo
		}
		rd.run = append(rd.run, pt{colX(cur.col), y(float64(first))})
		if second != first {
			rd.run = append(rd.run, pt{colX(cur.col), y(float64(second))})
		}
	}
	if cur.idleSet {
		rd.r.idle = append(rd.r.idle, pt{colX(cur.col), y(float64(cur.idleLo))})
		if cur.idleHi != cur.idleLo {
			rd.r.idle = append(rd.r.idle, pt{colX(cur.col), y(float64(cur.idleHi))})
		}
	}
	if cur.throttled {
		rd.r.throttle = append(rd.r.throttle, cur.col)
	}
	if cur.pm {
		rd.r.managed = append(rd.r.managed, cur.col)
	}
}

// add reduces the next sample, taken on the boot id boot.
func (rd *reducer) add(s tsample, boot string) {
	i := rd.i
	rd.i++
	c := column(rd.x(s.t))
	mhz := int(s.mhz)
	if c != rd.cur.col {
		rd.flush()
		rd.cur = reduceAgg{col: c}
	}
	r := &rd.r
	if i > 0 && boot != rd.prevBoot && (len(r.boots) == 0 || r.boots[len(r.boots)-1].col != c) {
		r.boots = append(r.boots, bootMark{col: c, boot: boot})
	}
	rd.prevBoot = boot
	cur := &rd.cur
	if s.idle {
		if !cur.idleSet || mhz < cur.idleLo {
			cur.idleLo = mhz
		}
		if !cur.idleSet || mhz > cur.idleHi {
			cur.idleHi = mhz
		}
		cur.idleSet = true
		// The first column after the last busy one that holds only idle
		// samples so far: a busy sample after it starts a new run.
		if c > rd.lastBusyCol && !cur.set && rd.idleGapCol <= rd.lastBusyCol {
			rd.idleGapCol = c
		}
		return
	}
	if rd.idleGapCol > rd.lastBusyCol && rd.idleGapCol < c {
		rd.flushRun()
	}
	rd.lastBusyCol = c
	if !cur.set || mhz < cur.lo {
		cur.lo, cur.loAt = mhz, i
	}
	if !cur.set || mhz > cur.hi {
		cur.hi, cur.hiAt = mhz, i
	}
	cur.set = true
	cur.throttled = cur.throttled || s.throttled
	cur.pm = cur.pm || s.pm
}

// finish ends the reduction and returns it.
func (rd *reducer) finish() reduced {
	rd.flush()
	rd.flushRun()
	return rd.r
}

// pathData is an SVG path through each run of two points or more.
func pathData(runs [][]pt) string {
	var b strings.Builder
	for _, run := range runs {
		if len(run) < 2 {
			continue // a lone point is drawn as a dot
		}
		for i, p := range run {
			if i == 0 {
				b.WriteString("M")
			} else {
				b.WriteString(" L")
			}
			b.WriteString(n(p.x))
			b.WriteByte(' ')
			b.WriteString(n(p.y))
		}
		b.WriteByte(' ')
	}
	return strings.TrimSpace(b.String())
}

// xTickStep is the tick step, in seconds, that keeps labels about 60 units apart.
func xTickStep(scale float64) float64 {
	return niceStep(60/scale, []float64{1, 2, 5, 10, 15, 20, 30, 60, 120, 300, 600, 900, 1200, 1800, 3600, 7200, 14400, 28800, 86400})
}

// svg draws one arm's picture.
func (p *panel) svg(w *svgWriter, xs xLayout, ys yScale) {
	title := fmt.Sprintf("%s (%s arm of %s): SM clock (MHz) over time (seconds from each leg's first sample)", p.engine, p.role, p.model)
	if p.host != "" {
		title = p.host + ": " + title
	}
	key := p.keyItems()
	w.f(`<svg xmlns="http://www.w3.org/2000/svg" class="clock" viewBox="0 0 %d %d" role="img" aria-label="%s">`, figW, figH+keyH*keyRows(key), esc(p.ariaLabel()))
	w.f("\n<title>%s</title>\n", esc(title))
	right := float64(padL + plotW)
	bottom := float64(padT + plotH)

	// Grid and y ticks.
	for v := ys.lo; v <= ys.hi+ys.step/2; v += ys.step {
		y := ys.y(v)
		w.f(`<line class="grid" x1="%s" y1="%s" x2="%s" y2="%s" stroke="%s"/>`+"\n", n(padL), n(y), n(right), n(y), colourGrid)
		w.f(`<text class="tick" x="%s" y="%s" text-anchor="end" dominant-baseline="middle">%s</text>`+"\n", n(padL-6), n(y), strconv.FormatFloat(v, 'f', -1, 64))
	}

	// The merged median, its spread band, and the other arm's median.
	if m := p.side.MedianMHz; m != nil {
		top, bot := ys.y(*m*(1+clocks.MaxSpreadPct/100)), ys.y(*m*(1-clocks.MaxSpreadPct/100))
		w.f(`<rect class="band" x="%s" y="%s" width="%s" height="%s" fill="%s" fill-opacity="0.1"/>`+"\n", n(padL), n(top), n(plotW), n(bot-top), p.colour)
	}

	// The legs, end to end.
	x0 := float64(padL)
	prevBoot := ""
	for i := range p.legs {
		lt := &p.legs[i]
		wid := xs.width(lt)
		p.leg(w, lt, x0, wid, xs, ys, i > 0 && prevBoot != "" && firstBoot(lt) != "" && firstBoot(lt) != prevBoot)
		prevBoot = lastBoot(lt)
		x0 += wid + xs.gap
	}

	// The medians over the traces, thin enough that a trace on them shows.
	if m := p.otherMedian; m != nil {
		w.f(`<line class="other-median" x1="%s" y1="%s" x2="%s" y2="%s" stroke="%s" stroke-width="1.3" stroke-dasharray="7 5"/>`+"\n",
			n(padL), n(ys.y(*m)), n(right), n(ys.y(*m)), p.otherColour)
	}
	if m := p.side.MedianMHz; m != nil {
		w.f(`<line class="median" x1="%s" y1="%s" x2="%s" y2="%s" stroke="%s" stroke-width="1"/>`+"\n",
			n(padL), n(ys.y(*m)), n(right), n(ys.y(*m)), p.colour)
	}
	p.medianLabels(w, ys)
	x0 = float64(padL)
	for i := range p.legs {
		lt := &p.legs[i]
		if !lt.drawn() {
			p.slot(w, lt, x0, xs.width(lt))
		}
		x0 += xs.width(lt) + xs.gap
	}

	// Axes and their labels.
	w.f(`<line class="axis" x1="%s" y1="%s" x2="%s" y2="%s" stroke="%s"/>`+"\n", n(padL), n(padT), n(padL), n(bottom), colourAxis)
	w.f(`<line class="axis" x1="%s" y1="%s" x2="%s" y2="%s" stroke="%s"/>`+"\n", n(padL), n(bottom), n(right), n(bottom), colourAxis)
	w.f(`<text class="axis-label" x="%s" y="%s" text-anchor="middle" transform="rotate(-90 %s %s)">SM clock (MHz)</text>`+"\n",
		n(18), n(padT+plotH/2), n(18), n(padT+plotH/2))
	w.f(`<text class="axis-label" x="%s" y="%s" text-anchor="middle">time (seconds from each leg's first sample)</text>`+"\n",
		n(padL+plotW/2), n(figH-8))
	p.key(w, key)
	w.f("</svg>")
}

// keyItem is one entry of the key under a picture of legs of several
// GPUs: a stroke and its words.
type keyItem struct {
	class, colour, width, text string
	gpu                        int
}

// keyItems are the key's entries: each GPU of the panel's legs by index,
// then the slowest GPU's stroke; none when every leg has one GPU.
func (p *panel) keyItems() []keyItem {
	if !p.multi() {
		return nil
	}
	seen := map[int]string{}
	var idx []int
	for i := range p.legs {
		for _, g := range p.legs[i].gpus {
			if _, ok := seen[g.index]; !ok {
				seen[g.index] = g.name
				idx = append(idx, g.index)
			}
		}
	}
	sort.Ints(idx)
	var out []keyItem
	for _, i := range idx {
		out = append(out, keyItem{class: "gpu-key", colour: gpuColour(i), width: "2", text: seen[i], gpu: i})
	}
	return append(out, keyItem{class: "slowest-key", colour: p.colour, width: "3.5", text: "the slowest GPU of each leg, named above it", gpu: -1})
}

// keyWidth is the room a key entry takes, in user units.
func keyWidth(it keyItem) float64 { return 30 + 6.6*float64(utf8.RuneCountInString(it.text)) + 14 }

// keyPlace lays the key's entries in rows from the plot's left edge, and
// returns each entry's x and row.
func keyPlace(items []keyItem) (xs []float64, rows []int) {
	x, row := float64(padL), 0
	for _, it := range items {
		if wd := keyWidth(it); x > padL && x+wd > figW-8 {
			x, row = padL, row+1
		}
		xs, rows = append(xs, x), append(rows, row)
		x += keyWidth(it)
	}
	return xs, rows
}

// keyRows is how many rows the key takes.
func keyRows(items []keyItem) int {
	if len(items) == 0 {
		return 0
	}
	_, rows := keyPlace(items)
	return rows[len(rows)-1] + 1
}

// key draws the key under the picture.
func (p *panel) key(w *svgWriter, items []keyItem) {
	if len(items) == 0 {
		return
	}
	xs, rows := keyPlace(items)
	w.f("<g class=\"key\">\n")
	for i, it := range items {
		y := float64(figH) + keyH*float64(rows[i]) + 8
		attr := ""
		if it.gpu >= 0 {
			attr = fmt.Sprintf(` data-gpu="%d"`, it.gpu)
		}
		w.f(`<g class="%s"%s><line x1="%s" y1="%s" x2="%s" y2="%s" stroke="%s" stroke-width="%s"/><text x="%s" y="%s" dominant-baseline="middle">%s</text></g>`+"\n",
			it.class, attr, n(xs[i]), n(y), n(xs[i]+24), n(y), it.colour, it.width, n(xs[i]+30), n(y), esc(it.text))
	}
	w.f("</g>\n")
}

// slot covers the place of a leg without a trace, medians included, with
// the note that says why it has none.
func (p *panel) slot(w *svgWriter, lt *legTrace, x0, wid float64) {
	w.f(`<g class="no-trace" id="%s-%s-slot">`+"\n", p.id, esc(lt.leg.Name))
	w.f(`<rect x="%s" y="%s" width="%s" height="%s" fill="#f4f4f4" stroke="%s" stroke-dasharray="4 3"/>`+"\n",
		n(x0+2), n(padT), n(wid-4), n(plotH), colourRule)
	cx, cy := x0+wid/2, float64(padT+plotH/2)
	w.f(`<text class="no-trace-note" x="%s" y="%s" text-anchor="middle" fill="%s">no trusted clock trace</text>`+"\n", n(cx), n(cy-8), colourThrottle)
	w.f(`<text class="no-trace-why" x="%s" y="%s" text-anchor="middle" fill="%s">%s</text>`+"\n", n(cx), n(cy+10), colourAxis, esc(clip(lt.note, int(wid/5.8))))
	w.f("</g>\n")
}

func firstBoot(lt *legTrace) string {
	if lt.drawn() {
		return lt.boots[lt.samples[0].boot]
	}
	return ""
}

func lastBoot(lt *legTrace) string {
	if lt.drawn() {
		return lt.boots[lt.samples[len(lt.samples)-1].boot]
	}
	return ""
}

// medianLabels prints the two medians in the right margin, apart when
// their lines are close.
func (p *panel) medianLabels(w *svgWriter, ys yScale) {
	type label struct {
		y      float64
		text   string
		colour string
	}
	var ls []label
	if m := p.side.MedianMHz; m != nil {
		ls = append(ls, label{ys.y(*m), "median " + num(*m), p.colour})
	}
	if m := p.otherMedian; m != nil {
		ls = append(ls, label{ys.y(*m), clip(p.other, 9) + " " + num(*m), p.otherColour})
	}
	if len(ls) == 2 && math.Abs(ls[0].y-ls[1].y) < 14 {
		mid := (ls[0].y + ls[1].y) / 2
		if ls[0].y <= ls[1].y {
			ls[0].y, ls[1].y = mid-7, mid+7
		} else {
			ls[0].y, ls[1].y = mid+7, mid-7
		}
	}
	for i, l := range ls {
		class := "median-label"
		if i == 1 {
			class = "other-median-label"
		}
		w.f(`<text class="%s" x="%s" y="%s" dominant-baseline="middle" fill="%s">%s</text>`+"\n",
			class, n(padL+plotW+6), n(l.y), l.colour, esc(l.text))
	}
}

// leg draws one leg at x0, wid wide: its rule, its label and clock codes,
// and its trace when it has one (slot covers the place of one that has not).
func (p *panel) leg(w *svgWriter, lt *legTrace, x0, wid float64, xs xLayout, ys yScale, bootChange bool) {
	bottom := float64(padT + plotH)
	w.f(`<g class="leg" id="%s-%s">`+"\n", p.id, esc(lt.leg.Name))
	rule, ink, width, label := colourRule, colourAxis, "1", lt.leg.Name
	if b := firstBoot(lt); b != "" {
		label += " · " + shortBoot(b)
	}
	if bootChange {
		rule, ink, width = colourBoot, colourBoot, "2"
		label += " (new boot)"
	}
	if g := lt.slowest(); g != nil {
		label += " · slowest " + g.name
	}
	w.f(`<line class="leg-rule" x1="%s" y1="%s" x2="%s" y2="%s" stroke="%s" stroke-width="%s"/>`+"\n",
		n(x0), n(padT-30), n(x0), n(bottom), rule, width)
	w.f(`<text class="leg-label" x="%s" y="%s" fill="%s">%s</text>`+"\n", n(x0+4), n(padT-32), ink, esc(label))
	var codes []string
	for _, c := range lt.leg.Codes {
		if clocks.IsClock(c) {
			codes = append(codes, c)
		}
	}
	if len(codes) > 0 {
		w.f(`<text class="leg-codes" x="%s" y="%s" fill="%s">%s</text>`+"\n", n(x0+4), n(padT-18), colourThrottle, esc(strings.Join(codes, ", ")))
	}

	if !lt.drawn() {
		w.f("</g>\n")
		return
	}

	x := func(t float64) float64 { return x0 + t*xs.scale }
	r := reduce(lt.samples, lt.boots, x, ys.y)

	// x ticks, seconds from this leg's first sample.
	step := xTickStep(xs.scale)
	for k := 0; ; k++ {
		t := float64(k) * step
		tx := x(t)
		if t > lt.span || (k > 0 && tx > x0+wid-24) {
			break
		}
		w.f(`<line class="xtick" x1="%s" y1="%s" x2="%s" y2="%s" stroke="%s"/>`+"\n", n(tx), n(bottom), n(tx), n(bottom+5), colourAxis)
		w.f(`<text class="tick" x="%s" y="%s" text-anchor="middle">%s</text>`+"\n", n(tx), n(bottom+17), strconv.FormatFloat(t, 'f', -1, 64))
	}

	p.bands(w, lt, x, x0+wid)
	if lt.gpus != nil {
		p.gpuLines(w, lt, x, ys)
	} else {
		busyLine(w, r.runs, "busy", p.colour, "2.4", "0.85", "3")
	}
	if len(r.idle) > 0 {
		w.f(`<g class="idle" fill="#ffffff" stroke="%s" stroke-width="1">`, colourIdle)
		for _, q := range r.idle {
			switch {
			case q.y > bottom: // below the scale: a triangle on its edge, pointing down
				w.f(`<path class="off-scale" fill="%s" d="M%s %s L%s %s L%s %s Z"/>`, colourIdle, n(q.x-3.5), n(bottom-8), n(q.x+3.5), n(bottom-8), n(q.x), n(bottom-2))
			case q.y < padT: // above it, pointing up
				w.f(`<path class="off-scale" fill="%s" d="M%s %s L%s %s L%s %s Z"/>`, colourIdle, n(q.x-3.5), n(padT+8), n(q.x+3.5), n(padT+8), n(q.x), n(padT+2))
			default:
				w.f(`<circle cx="%s" cy="%s" r="2.6"/>`, n(q.x), n(q.y))
			}
		}
		w.f("</g>\n")
	}
	if len(r.managed) > 0 {
		// Power-managed samples: ticks along the plot's foot, apart from
		// the throttle ticks at its head, since they are no defect.
		w.f(`<g class="power-managed" stroke="%s" stroke-width="2">`, colourPowerManaged)
		for _, c := range r.managed {
			w.f(`<line x1="%s" y1="%s" x2="%s" y2="%s"/>`, n(colX(c)), n(bottom-10), n(colX(c)), n(bottom))
		}
		w.f("</g>\n")
	}
	if len(r.throttle) > 0 {
		w.f(`<g class="throttle" stroke="%s" stroke-width="2">`, colourThrottle)
		for _, c := range r.throttle {
			w.f(`<line x1="%s" y1="%s" x2="%s" y2="%s"/>`, n(colX(c)), n(padT), n(colX(c)), n(padT+10))
		}
		w.f("</g>\n")
	}
	lastLabel := math.Inf(-1)
	for _, b := range r.boots {
		bx := colX(b.col)
		w.f(`<line class="boot-change" x1="%s" y1="%s" x2="%s" y2="%s" stroke="%s" stroke-width="2"/>`+"\n", n(bx), n(padT), n(bx), n(bottom), colourBoot)
		if bx-lastLabel >= 90 {
			w.f(`<text class="boot-label" x="%s" y="%s" fill="%s">boot %s</text>`+"\n", n(bx+3), n(padT+24), colourBoot, esc(shortBoot(b.boot)))
			lastLabel = bx
		}
	}
	w.f("</g>\n")
}

// busyLine draws a busy trace's runs: a path through those of two points
// or more, a dot for each lone point.
func busyLine(w *svgWriter, runs [][]pt, class, colour, width, opacity, dot string) {
	if d := pathData(runs); d != "" {
		w.f(`<path class="%s" d="%s" fill="none" stroke="%s" stroke-width="%s" stroke-opacity="%s" stroke-linejoin="round" stroke-linecap="round"/>`+"\n",
			class, d, colour, width, opacity)
	}
	dots := false
	for _, run := range runs {
		if len(run) == 1 {
			if !dots {
				w.f(`<g class="busy-dots" fill="%s">`, colour)
				dots = true
			}
			w.f(`<circle cx="%s" cy="%s" r="%s"/>`, n(run[0].x), n(run[0].y), dot)
		}
	}
	if dots {
		w.f("</g>\n")
	}
}

// gpuLines draws each GPU of a leg of several as its own line, named: the
// others muted, each in its colour, then the slowest over them, in the
// arm's colour and thicker.
func (p *panel) gpuLines(w *svgWriter, lt *legTrace, x func(float64) float64, ys yScale) {
	for _, top := range []bool{false, true} {
		for _, g := range lt.gpus {
			if g.slowest != top {
				continue
			}
			class, name, colour, width, opacity, dot := "gpu", g.name, gpuColour(g.index), "1.4", "0.9", "2"
			if g.median != nil {
				name += fmt.Sprintf(", busy median %s MHz", num(*g.median))
			}
			if g.mean != nil {
				name += fmt.Sprintf(", mean %.2f MHz", *g.mean)
			}
			if g.slowest {
				class, colour, width, opacity, dot = "gpu slowest", p.colour, "2.6", "1", "3"
				name += ", the slowest GPU of the leg"
			}
			w.f(`<g class="%s" data-gpu="%d"><title>%s %s</title>`+"\n", class, g.index, esc(lt.leg.Name), esc(name))
			busyLine(w, reduce(g.samples, lt.boots, x, ys.y).runs, "busy-gpu", colour, width, opacity, dot)
			w.f("</g>\n")
		}
	}
}

// ariaLabel says in words what the picture shows.
func (p *panel) ariaLabel() string {
	var legs []string
	for _, lt := range p.legs {
		s := lt.leg.Name
		switch {
		case !lt.drawn():
			s += " no trusted clock trace (" + lt.note + ")"
		case lt.gpus != nil:
			s += fmt.Sprintf(" on %d GPUs", len(lt.gpus))
			if g := lt.slowest(); g != nil {
				s += fmt.Sprintf(", the slowest %s at a median of %s MHz", g.name, num(*g.median))
			}
		case lt.leg.MedianMHz != nil:
			s += " median " + num(*lt.leg.MedianMHz) + " MHz"
		}
		legs = append(legs, s)
	}
	out := fmt.Sprintf("SM clock in MHz over seconds for %s, legs end to end: %s", p.engine, strings.Join(legs, "; "))
	if m := p.side.MedianMHz; m != nil {
		out += fmt.Sprintf(". Merged median %s MHz with a ±%.1f%% band", num(*m), clocks.MaxSpreadPct)
	}
	if m := p.otherMedian; m != nil {
		out += fmt.Sprintf("; %s median %s MHz dashed", p.other, num(*m))
	}
	return out + "."
}

// colourBand fills a point's window on a clock picture.
const colourBand = "#d9e6f2"

// bands draws a leg's point windows (SPEC §10.2) behind its clock, each
// a band labelled with its point inside the picture, clipped to the leg's
// slot (right ends before x1).
func (p *panel) bands(w *svgWriter, lt *legTrace, x func(float64) float64, x1 float64) {
	if len(lt.leg.Bands) == 0 {
		return
	}
	bottom := float64(padT + plotH)
	w.f(`<g class="point-windows">` + "\n")
	for _, b := range lt.leg.Bands {
		bx0, bx1 := max(x(0), x(b.From)), min(x1, x(b.To))
		if bx1 <= bx0 {
			continue
		}
		w.f(`<rect class="point-window" x="%s" y="%s" width="%s" height="%s" fill="%s" fill-opacity="0.55"><title>point %s: %s to %s s</title></rect>`+"\n",
			n(bx0), n(padT), n(bx1-bx0), n(bottom-padT), colourBand, esc(b.Label),
			strconv.FormatFloat(b.From, 'f', 3, 64), strconv.FormatFloat(b.To, 'f', 3, 64))
		w.f(`<text class="point-window-label" x="%s" y="%s" fill="%s">%s</text>`+"\n", n(bx0+3), n(bottom-14), colourAxis, esc(b.Label))
	}
	w.f("</g>\n")
}
