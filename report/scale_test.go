package report

import (
	"bytes"
	"fmt"
	"math"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/clockgate/clockgate/clocks"
	"github.com/clockgate/clockgate/ratio"
	"github.com/clockgate/clockgate/summarize"
)

// scaledDoc is the staircase tree's document with each arm of its
// comparison grown to perArm legs (the tree's legs repeated, runs
// renumbered r1…, their traces and throughputs and memory the tree's), and
// the comparison repeated comparisons times, each of a model of its own.
// No golden tree has an arm of more than AggregateLegs legs, nor a report
// of more than ScaleLegs legs: these cross both.
func scaledDoc(t *testing.T, perArm, comparisons int) *Document {
	t.Helper()
	s, err := summarize.Summarize(filepath.Join(treesDir, "staircase"), summarize.Options{Baseline: "vllm", Traces: true})
	if err != nil {
		t.Fatal(err)
	}
	d := Build(s)
	c := d.Comparisons[0]
	var legs []Leg
	for _, engine := range []string{c.Ours, c.Baseline} {
		var src []Leg
		for _, l := range c.Legs {
			if l.Engine == engine {
				src = append(src, l)
			}
		}
		for k := range perArm {
			l := src[k%len(src)]
			l.Run, l.Name = k+1, fmt.Sprintf("r%d", k+1)
			legs = append(legs, l)
		}
	}
	c.Legs = legs
	grow := func(vs []ratio.LegValue) []ratio.LegValue {
		out := make([]ratio.LegValue, perArm)
		for k := range out {
			out[k] = ratio.LegValue{Leg: fmt.Sprintf("r%d", k+1), Value: vs[k%len(vs)].Value}
		}
		return out
	}
	c.Points = append([]ratio.Point(nil), c.Points...)
	for i := range c.Points {
		c.Points[i].Test.OursLegs, c.Points[i].Test.BaselineLegs = grow(c.Points[i].Test.OursLegs), grow(c.Points[i].Test.BaselineLegs)
	}
	c.Ratios = append([]Ratio(nil), c.Ratios...)
	for i := range c.Ratios {
		c.Ratios[i].Reasons = append([]clocks.Reason(nil), c.Ratios[i].Reasons...)
		if c.Ratios[i].Family == FamilyMemory {
			c.Ratios[i].Test.OursLegs, c.Ratios[i].Test.BaselineLegs = grow(c.Ratios[i].Test.OursLegs), grow(c.Ratios[i].Test.BaselineLegs)
		}
	}
	d.Comparisons = nil
	for k := range comparisons {
		ck := c
		ck.Model = fmt.Sprintf("model-%03d", k)
		ck.Legs = append([]Leg(nil), c.Legs...)
		for i := range ck.Legs {
			ck.Legs[i].Model = ck.Model
		}
		ck.Ratios = append([]Ratio(nil), c.Ratios...)
		for i := range ck.Ratios {
			ck.Ratios[i].Reasons = append([]clocks.Reason(nil), c.Ratios[i].Reasons...)
		}
		d.Comparisons = append(d.Comparisons, ck)
	}
	return d
}

// leg is the comparison's leg of an engine and run.
func (c *Comparison) leg(t *testing.T, engine string, run int) *Leg {
	t.Helper()
	for i := range c.Legs {
		if c.Legs[i].Engine == engine && c.Legs[i].Run == run {
			return &c.Legs[i]
		}
	}
	t.Fatalf("no leg %s r%d", engine, run)
	return nil
}

// flag gives a leg a reason of its own, and its ratios the leg.ineligible
// reason that names it, as summarize would.
func (c *Comparison) flag(t *testing.T, engine string, run int, code string) {
	t.Helper()
	l := c.leg(t, engine, run)
	l.Reasons = []clocks.Reason{{Code: code, Message: "planted " + code, Scope: clocks.ScopeLeg, Engine: engine, Run: run}}
	l.Codes, l.BindingEligible = []string{code}, false
	for i := range c.Ratios {
		c.Ratios[i].Reasons = append(c.Ratios[i].Reasons, clocks.Reason{Code: clocks.CodeLegIneligible, Scope: clocks.ScopeRatio,
			Engine: engine, Run: run, Message: fmt.Sprintf("leg %s r%d is not binding-eligible: %s", engine, run, code)})
	}
}

// untrust makes a leg one without a trusted clock record.
func (c *Comparison) untrust(t *testing.T, engine string, run int) {
	t.Helper()
	l := c.leg(t, engine, run)
	l.Trusted, l.Trace, l.GPUs, l.MedianMHz, l.MinMHz, l.MaxMHz = false, nil, nil, nil, nil, nil
}

func figuresOf(t *testing.T, d *Document, i int) string {
	t.Helper()
	var b bytes.Buffer
	if err := d.figures(&b, i); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// TestArmPastAggregateLegsIsAggregated: an arm of AggregateLegs legs is
// drawn leg by leg; one more and both clock pictures are aggregated, each
// a bounded number of elements and points, still reaching a one-sample
// dip of one leg, marking the leg with clock reasons and the leg without
// a trace, and saying in its caption how many legs it summarizes.
func TestArmPastAggregateLegsIsAggregated(t *testing.T) {
	d := scaledDoc(t, AggregateLegs, 1)
	svg := figuresOf(t, d, 0)
	if got := strings.Count(svg, `<g class="leg"`); got != 2*AggregateLegs || strings.Contains(svg, "aggregated") || strings.Contains(svg, "Aggregated") {
		t.Fatalf("arms of %d legs: %d legs drawn one by one, aggregated %v; want every leg drawn and nothing aggregated",
			AggregateLegs, got, strings.Contains(svg, "ggregated"))
	}

	d = scaledDoc(t, AggregateLegs+1, 1)
	c := &d.Comparisons[0]
	c.flag(t, c.Ours, 7, clocks.CodeSpread)
	c.untrust(t, c.Ours, 9)
	// A leg whose one busy sample dips to 1,500 MHz among 2,300.
	const dip = 1500
	samples := synth(240, time.Date(2026, 8, 12, 9, 0, 0, 0, time.UTC), "13dc5579-455c-45c8-8e4d-d09c457fa826",
		func(i int) int {
			if i == 120 {
				return dip
			}
			return 2300
		}, func(i int) bool { return i < 6 })
	c.leg(t, c.Ours, 50).Trace = traceLeg(t, "r50", samples).Trace
	svg = figuresOf(t, d, 0)
	if got := strings.Count(svg, `<g class="leg"`); got != 0 {
		t.Errorf("arms of %d legs: %d legs drawn one by one, want none", AggregateLegs+1, got)
	}
	if got := strings.Count(svg, `class="clock aggregated"`); got != 2 {
		t.Fatalf("%d aggregated clock pictures, want 2", got)
	}
	for _, elem := range []string{"<path", "<line", "<circle", "<text", "<rect"} {
		if got := strings.Count(svg, elem); got > 400 {
			t.Errorf("%d %s elements in the two aggregated pictures: not bounded", got, elem)
		}
	}
	pts := busyPoints(t, svg)
	if len(pts) > 2*2*plotW {
		t.Errorf("%d busy points, more than two per pixel column of two pictures", len(pts))
	}
	// The dip is the lowest busy sample: the scale reaches down to it and
	// the path draws it near the plot's foot.
	maxY := 0.0
	for _, p := range pts {
		maxY = max(maxY, p[1])
	}
	if maxY < padT+0.85*plotH {
		t.Errorf("the busy path's lowest point is at y %.1f, above the plot's foot %d: the dip to %d MHz was lost", maxY, padT+plotH, dip)
	}
	want := []string{
		fmt.Sprintf("Aggregated: %s legs summarized, %s drawn end to end as the least and greatest sample of each pixel column; 1 with clock reasons, marked red above the plot; 1 without a trusted clock trace, marked grey",
			count(AggregateLegs+1), count(AggregateLegs)),
		fmt.Sprintf("Aggregated: %s legs summarized, %s drawn end to end as the least and greatest sample of each pixel column; 0 with clock reasons, marked red above the plot; 0 without a trusted clock trace, marked grey",
			count(AggregateLegs+1), count(AggregateLegs+1)),
		`<path class="clock-reasons"`, `<path class="no-trace"`,
		fmt.Sprintf("an arm of more than %d legs is too many to tell apart", AggregateLegs),
	}
	for _, w := range want {
		if !strings.Contains(svg, w) {
			t.Errorf("the aggregated pictures lack %q", w)
		}
	}
	if strings.Count(svg, `<path class="clock-reasons"`) != 1 || strings.Count(svg, `<path class="no-trace"`) != 1 {
		t.Error("the marks of the leg with clock reasons and of the leg without a trace are not on the ours arm's picture alone")
	}
}

var dotTitle = regexp.MustCompile(`<circle class="leg"[^>]*><title>([^<]*)</title>`)

// TestSpreadPastAggregateLegsIsADistribution: an arm of more than
// AggregateLegs legs is a box and whisker with its least and greatest legs
// and, of those with reasons, the OutlierDots farthest from its median as
// dots; the caption counts what each arm's row summarizes. At
// AggregateLegs every leg is a dot.
func TestSpreadPastAggregateLegsIsADistribution(t *testing.T) {
	d := scaledDoc(t, AggregateLegs, 1)
	rows, quantity := d.spreadRows(0, FamilyThroughput)
	var b bytes.Buffer
	d.spreadFigure(&b, 0, FamilyThroughput, rows, quantity)
	if got, want := strings.Count(b.String(), `<circle class="leg"`), 2*AggregateLegs*len(rows); got != want || strings.Contains(b.String(), "ggregated") {
		t.Fatalf("arms of %d legs: %d dots, want %d and no aggregate", AggregateLegs, got, want)
	}

	perArm := AggregateLegs + 1
	d = scaledDoc(t, perArm, 1)
	c := &d.Comparisons[0]
	// Fifty legs of ours with reasons, each farther from the median than
	// the one before: the last OutlierDots are drawn. Ours' leg 200 is the
	// arm's least, its leg 201 its greatest, neither with a reason.
	for k := 1; k <= 50; k++ {
		c.flag(t, c.Ours, 100+k, clocks.CodeSpread)
		for i := range c.Points {
			c.Points[i].Test.OursLegs[100+k-1].Value = *c.Points[i].Ours * (1 + 0.0005*float64(k))
		}
	}
	for i := range c.Points {
		c.Points[i].Test.OursLegs[199].Value = *c.Points[i].Ours * 0.5
		c.Points[i].Test.OursLegs[200].Value = *c.Points[i].Ours * 1.5
	}
	rows, quantity = d.spreadRows(0, FamilyThroughput)
	b.Reset()
	d.spreadFigure(&b, 0, FamilyThroughput, rows, quantity)
	out := b.String()
	if got := strings.Count(out, `<g class="distribution">`); got != 2*len(rows) {
		t.Errorf("%d distributions, want one per arm of %d rows", got, len(rows))
	}
	// Per row: ours 40 farthest with reasons and its two extremes; the
	// baseline (no reason) its two extremes.
	if got, want := strings.Count(out, `<circle class="leg"`), len(rows)*(OutlierDots+2+2); got != want {
		t.Errorf("%d dots, want %d", got, want)
	}
	drawn := map[string]bool{}
	for _, m := range dotTitle.FindAllStringSubmatch(out, -1) {
		drawn[strings.SplitN(m[1], ":", 2)[0]] = true
	}
	for k := 1; k <= 50; k++ {
		name := fmt.Sprintf("%s r%d", c.Ours, 100+k)
		if want := k > 50-OutlierDots; drawn[name] != want {
			t.Errorf("%s (with reasons, %d-th nearest the median): drawn %v, want %v", name, k, drawn[name], want)
		}
	}
	for _, name := range []string{c.Ours + " r200", c.Ours + " r201"} {
		if !drawn[name] {
			t.Errorf("%s, an extreme of its arm, is not drawn", name)
		}
	}
	for _, w := range []string{
		fmt.Sprintf("Aggregated: an arm of more than %d legs is drawn as its distribution", AggregateLegs),
		fmt.Sprintf("the %d farthest from its median", OutlierDots),
		fmt.Sprintf("1/inf, %s: %s legs summarized, 50 with reasons, %d drawn as dots", c.Ours, count(perArm), OutlierDots+2),
		fmt.Sprintf("1/inf, %s: %s legs summarized, 0 with reasons, 2 drawn as dots", c.Baseline, count(perArm)),
	} {
		if !strings.Contains(out, w) {
			t.Errorf("the spread picture lacks %q", w)
		}
	}
}

// render writes a document's report.md and report.html.
func render(t *testing.T, d *Document) (md, html []byte) {
	t.Helper()
	var m, h bytes.Buffer
	if err := d.Markdown(&m); err != nil {
		t.Fatal(err)
	}
	if err := d.HTMLOf(&h, bytes.NewReader(m.Bytes())); err != nil {
		t.Fatal(err)
	}
	return m.Bytes(), h.Bytes()
}

var mdLegRow = regexp.MustCompile(`(?m)^\| (fastengine|vllm) +\| r[0-9]+ +\| (yes|NO) `)

// TestReportPastScaleLegs: a report of ScaleLegs legs lists every one; of
// one more, its legs tables list only the legs with reasons, say how
// many legs they summarize and count the others' codes, and a ratio's
// leg.ineligible reasons are one line that counts them.
func TestReportPastScaleLegs(t *testing.T) {
	d := scaledDoc(t, ScaleLegs/2, 1)
	md, _ := render(t, d)
	if got := len(mdLegRow.FindAll(md, -1)); got != ScaleLegs || bytes.Contains(md, []byte("These tables summarize")) {
		t.Fatalf("a report of %d legs lists %d legs, summarized %v; want every leg listed", ScaleLegs, got, bytes.Contains(md, []byte("These tables summarize")))
	}

	d = scaledDoc(t, ScaleLegs/2+1, 1)
	c := &d.Comparisons[0]
	c.flag(t, c.Ours, 3, clocks.CodeSpread)
	c.flag(t, c.Baseline, 5, clocks.CodeBusySamples)
	c.flag(t, c.Baseline, 8, clocks.CodeBusySamples)
	md, html := render(t, d)
	if got := len(mdLegRow.FindAll(md, -1)); got != 3 {
		t.Errorf("a report of %d legs lists %d legs, want the 3 with reasons", 2*(ScaleLegs/2+1), got)
	}
	for _, w := range []string{
		fmt.Sprintf("These tables summarize %s legs: %s binding-eligible, 3 with reasons. A report of more than %s legs lists only legs that carry reasons, at most %d in all: 3 are listed here; every leg is in all-runs.json.",
			count(ScaleLegs+2), count(ScaleLegs-1), count(ScaleLegs), ListedLegs),
		"- `leg.ineligible`: 3 legs are not binding-eligible (fastengine 1, vllm 2); the legs tables list those that carry reasons, and summary.json names every one\n",
		"- fastengine r3 `clock.spread`: planted clock.spread\n",
		"- vllm r8 `clock.busy_samples`: planted clock.busy_samples\n",
	} {
		if !bytes.Contains(md, []byte(w)) {
			t.Errorf("report.md lacks %q", w)
		}
	}
	if n := bytes.Count(md, []byte("`leg.ineligible`")); n != 2 {
		t.Errorf("%d leg.ineligible lines, want one per ratio", n)
	}
	var direct bytes.Buffer
	if err := d.HTML(&direct); err != nil || !bytes.Equal(direct.Bytes(), html) {
		t.Errorf("report.html written directly (err %v) differs from report.html of report.md read back", err)
	}
	if w := fmt.Sprintf("These tables summarize %s legs", count(ScaleLegs+2)); !bytes.Contains(html, []byte(w)) {
		t.Errorf("report.html lacks %q", w)
	}
	doc := parsePage(t, html)
	if got := len(doc.all(withClass("section", "clock"))); got != 1 {
		t.Errorf("%d clock pictures sections, want 1", got)
	}

	// More legs with reasons than ListedLegs: the first are listed, the
	// codes of the rest counted.
	d = scaledDoc(t, ScaleLegs/2+1, 1)
	c = &d.Comparisons[0]
	for k := 1; k <= ListedLegs+10; k++ {
		c.flag(t, c.Ours, k, clocks.CodeBusySamples)
	}
	md, _ = render(t, d)
	if got := len(mdLegRow.FindAll(md, -1)); got != ListedLegs {
		t.Errorf("%d legs listed, want %d", got, ListedLegs)
	}
	if w := "Reason codes of the legs not listed, with the legs that carry each: clock.busy_samples 10."; !bytes.Contains(md, []byte(w)) {
		t.Errorf("report.md lacks %q", w)
	}
}

// TestReportOfManyComparisonsIsBounded: twenty thousand legs in both
// shapes, 500 comparisons of 20 legs an arm and one comparison of 10,000
// legs an arm, every leg with reasons: report.html is at most 5 MB and
// report.md at most 2.5 MB; only the first DetailedComparisons comparisons
// are written in full with pictures, each other one in brief.
func TestReportOfManyComparisonsIsBounded(t *testing.T) {
	if testing.Short() {
		t.Skip("renders two reports of 20,000 legs")
	}
	for _, shape := range []struct{ perArm, comparisons int }{{20, 500}, {10000, 1}} {
		d := scaledDoc(t, shape.perArm, shape.comparisons)
		for ci := range d.Comparisons {
			c := &d.Comparisons[ci]
			for _, e := range []string{c.Ours, c.Baseline} {
				for k := 1; k <= shape.perArm; k++ {
					c.flag(t, e, k, clocks.CodeBusySamples)
				}
			}
		}
		md, html := render(t, d)
		where := fmt.Sprintf("%d comparisons of %d legs an arm", shape.comparisons, shape.perArm)
		if len(html) > 5_000_000 || len(md) > 2_500_000 {
			t.Errorf("%s: report.html %d bytes, report.md %d; want at most 5 MB and 2.5 MB", where, len(html), len(md))
		}
		if got, want := bytes.Count(html, []byte(`<section class="clock"`)), min(shape.comparisons, DetailedComparisons); got != want {
			t.Errorf("%s: %d comparisons with pictures, want %d", where, got, want)
		}
		if got := bytes.Count(md, []byte("\n## model-")); got != shape.comparisons {
			t.Errorf("%s: %d comparison headings in report.md, want every one", where, got)
		}
		if shape.comparisons > DetailedComparisons {
			w := fmt.Sprintf("A report of more than %s legs writes its first %d comparisons in full (this is comparison %d of %d)",
				count(ScaleLegs), DetailedComparisons, DetailedComparisons+1, shape.comparisons)
			if got := bytes.Count(md, []byte("In brief: THROUGHPUT ")); !bytes.Contains(md, []byte(w)) || got != shape.comparisons-DetailedComparisons {
				t.Errorf("%s: report.md lacks %q, or has %d comparisons in brief, want %d", where, w, got, shape.comparisons-DetailedComparisons)
			}
			for _, w := range []string{"leg.ineligible 40", "; 40 legs, 0 binding-eligible, 40 with reasons (clock.busy_samples 40)."} {
				if !bytes.Contains(md, []byte(w)) {
					t.Errorf("%s: report.md's comparisons in brief lack %q", where, w)
				}
			}
		}
		t.Logf("%s: report.html %d bytes, report.md %d", where, len(html), len(md))
	}
}

func TestCount(t *testing.T) {
	for n, want := range map[int]string{0: "0", 999: "999", 1000: "1,000", 20000: "20,000", 1234567: "1,234,567", -4500: "-4,500"} {
		if got := count(n); got != want {
			t.Errorf("count(%d) = %q, want %q", n, got, want)
		}
	}
	if q := quantile([]float64{1, 2, 3, 4}, 0.25); math.Abs(q-1.75) > 1e-12 {
		t.Errorf("quantile 0.25 of 1..4 = %v, want 1.75", q)
	}
}
