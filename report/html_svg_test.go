package report

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/clockgate/clockgate/clocks"
)

// traceLeg folds samples as summarize does, their trace reduced in the same
// pass, and returns their leg, trusted.
func traceLeg(t *testing.T, name string, samples []clocks.Sample) Leg {
	t.Helper()
	f := clocks.NewTracingFold()
	if err := f.FoldStream(bytes.NewReader(encode(samples)), name+".samples.jsonl"); err != nil {
		t.Fatal(err)
	}
	busy, idle := f.Total-f.Idle(), f.Idle()
	return Leg{Name: name, Engine: "ours", Trusted: true, BusySamples: &busy, IdleSamples: &idle, Trace: f.GPUs[0].Trace}
}

// encode is samples as stream lines.
func encode(samples []clocks.Sample) []byte {
	var b []byte
	for i := range samples {
		b = append(samples[i].AppendJSON(b), '\n')
	}
	return b
}

// synth is n samples at 1 Hz from t0 on boot, each busy at mhz(i) unless
// idle(i).
func synth(n int, t0 time.Time, boot string, mhz func(i int) int, idle func(i int) bool) []clocks.Sample {
	out := make([]clocks.Sample, n)
	apps := 2418
	for i := range out {
		util := 95
		if idle(i) {
			util = 0
		}
		out[i] = clocks.Sample{T: t0.Add(time.Duration(i) * time.Second).Format("2006-01-02T15:04:05.000Z"),
			BootID: boot, GPUUUID: "GPU-1", GPUName: "NVIDIA GB10", DriverVersion: "580.159.03",
			SMClockMHz: mhz(i), ClocksMaxSMMHz: 3003, ClocksApplicationsGraphicsMHz: &apps,
			ThrottleReasonsActive: "0x0000000000000000", PersistenceMode: "Enabled", PState: "P0", UtilizationGPUPct: util}
	}
	return out
}

var (
	pathAttr = regexp.MustCompile(`<path class="busy" d="([^"]*)"`)
	coord    = regexp.MustCompile(`[ML](-?[0-9]+\.[0-9]) (-?[0-9]+\.[0-9])`)
)

// busyPoints are the points of every busy trace in an SVG.
func busyPoints(t *testing.T, svg string) [][2]float64 {
	t.Helper()
	var out [][2]float64
	for _, m := range pathAttr.FindAllStringSubmatch(svg, -1) {
		for _, c := range coord.FindAllStringSubmatch(m[1], -1) {
			x, _ := strconv.ParseFloat(c[1], 64)
			y, _ := strconv.ParseFloat(c[2], 64)
			out = append(out, [2]float64{x, y})
		}
	}
	return out
}

// onePanel draws the legs as the ours arm of a comparison with a baseline
// at 2400 MHz.
func onePanel(legs ...Leg) (*panel, string) {
	p := &panel{id: "c1-ours", model: "m", engine: "ours", other: "base", role: "ours",
		colour: colourOurs, otherColour: colourBaseline}
	m := 2400.0
	p.side.MedianMHz, p.otherMedian = &m, &m
	for _, l := range legs {
		p.legs = append(p.legs, traceOf(l))
	}
	ps := []*panel{p}
	return p, svgOf(p, newXLayout(ps), newYScale(ps))
}

// TestLongLegIsReducedAndKeepsItsDip draws a leg of 7,200 samples: its
// path holds at most two points per pixel column of the plot, and still
// reaches the single-sample dip and the single-sample spike planted in it.
func TestLongLegIsReducedAndKeepsItsDip(t *testing.T) {
	const total, dipAt, dip, spikeAt, spike = 7200, 4321, 1500, 777, 2950
	samples := synth(total, time.Date(2026, 8, 12, 9, 0, 0, 0, time.UTC), "boot-a",
		func(i int) int {
			switch i {
			case dipAt:
				return dip
			case spikeAt:
				return spike
			}
			return 2380 + (i*7919)%41 // noise, 2380 to 2420
		},
		func(i int) bool { return i%600 >= 540 }) // an idle minute every ten
	leg := traceLeg(t, "r1", samples)
	p, svg := onePanel(leg)
	if !p.legs[0].drawn() {
		t.Fatalf("the leg was not drawn: %s", p.legs[0].note)
	}
	pts := busyPoints(t, svg)
	if len(pts) == 0 {
		t.Fatal("no busy trace")
	}
	if len(pts) > 2*plotW {
		t.Errorf("the trace has %d points for a plot %d wide; want at most %d", len(pts), plotW, 2*plotW)
	}
	ys := newYScale([]*panel{p})
	for _, want := range []struct {
		name string
		mhz  float64
	}{{"dip", dip}, {"spike", spike}} {
		y, found := ys.y(want.mhz), false
		for _, q := range pts {
			found = found || n(q[1]) == n(y)
		}
		if !found {
			t.Errorf("the single-sample %s to %g MHz (y %s) is not in the trace", want.name, want.mhz, n(y))
		}
	}
	// Idle gaps several columns wide break the trace: one polyline per busy stretch.
	if runs := strings.Count(pathAttr.FindStringSubmatch(svg)[1], "M"); runs != total/600 {
		t.Errorf("%d polylines, want %d: one per busy stretch between idle gaps", runs, total/600)
	}
	if got := strings.Count(svg, "<circle"); got == 0 || got > 2*plotW {
		t.Errorf("%d idle markers; want some, at most two per column", got)
	}
}

// TestShortLegDrawsEverySample: a leg that fits its width keeps every
// busy sample as a point of its trace.
func TestShortLegDrawsEverySample(t *testing.T) {
	samples := synth(40, time.Date(2026, 8, 12, 9, 0, 0, 0, time.UTC), "boot-a",
		func(i int) int { return 2390 + i%3*10 }, func(int) bool { return false })
	_, svg := onePanel(traceLeg(t, "r1", samples))
	if got := len(busyPoints(t, svg)); got != 40 {
		t.Errorf("%d points for 40 busy samples a column or more apart", got)
	}
}

// TestUntrustedLegHasNoTrace: a leg whose record is not trusted, or whose
// trace was not read, is drawn as a slot saying so, never as a trace.
func TestUntrustedLegHasNoTrace(t *testing.T) {
	t0 := time.Date(2026, 8, 12, 9, 0, 0, 0, time.UTC)
	flat := func(int) int { return 2400 }
	never := func(int) bool { return false }
	good := traceLeg(t, "r1", synth(60, t0, "boot-a", flat, never))
	untrusted := Leg{Name: "r2", Codes: []string{clocks.CodeStreamInvalid}}
	unread := traceLeg(t, "r3", synth(60, t0, "boot-a", flat, never))
	unread.Trace = nil
	doc := func(svg string) *elem { return parsePage(t, []byte(svg)) }
	_, svg := onePanel(good, untrusted, unread)
	d := doc(svg)
	for _, c := range []struct{ name, why string }{
		{"r2", clocks.CodeStreamInvalid},
		{"r3", "trace not read"},
	} {
		g := d.byID("c1-ours-" + c.name)
		if g == nil {
			t.Fatalf("no group for leg %s", c.name)
		}
		if got := g.all(withClass("path", "busy")); len(got) != 0 {
			t.Errorf("leg %s is drawn with a trace", c.name)
		}
		slot := d.byID("c1-ours-" + c.name + "-slot")
		if slot == nil || !strings.Contains(textOf(slot), "no trusted clock trace") || !strings.Contains(textOf(slot), c.why) {
			t.Errorf("leg %s: want a slot saying no trusted clock trace, %s", c.name, c.why)
		}
	}
	if g := d.byID("c1-ours-r1"); g == nil || len(g.all(withClass("path", "busy"))) != 1 || d.byID("c1-ours-r1-slot") != nil {
		t.Error("the trusted leg r1 is not drawn as a trace")
	}
}

// TestBootChangesAndThrottleAreMarked: a leg on a new boot gets an
// orange rule labelled as such, a boot change inside a leg a rule of its
// own, and each busy sample with a non-benign throttle bit a red tick;
// benign bits get none.
func TestBootChangesAndThrottleAreMarked(t *testing.T) {
	t0 := time.Date(2026, 8, 12, 9, 0, 0, 0, time.UTC)
	flat := func(int) int { return 2400 }
	never := func(int) bool { return false }
	r1 := synth(60, t0, "aaaaaaaa-1", flat, never)
	r1[10].ThrottleReasonsActive = "0x0000000000000001" // GpuIdle: benign
	r1[20].ThrottleReasonsActive = "0x0000000000000004" // SwPowerCap
	r2 := synth(60, t0, "aaaaaaaa-1", flat, never)
	r3 := synth(60, t0, "bbbbbbbb-2", flat, never)
	for i := 30; i < 60; i++ {
		r3[i].BootID = "cccccccc-3"
	}
	_, svg := onePanel(traceLeg(t, "r1", r1), traceLeg(t, "r2", r2), traceLeg(t, "r3", r3))
	d := parsePage(t, []byte(svg))

	label := func(leg string) *elem {
		if g := d.byID("c1-ours-" + leg); g != nil {
			if ls := g.all(withClass("text", "leg-label")); len(ls) == 1 {
				return ls[0]
			}
		}
		t.Fatalf("leg %s has no label", leg)
		return nil
	}
	rule := func(leg string) string {
		return d.byID("c1-ours-" + leg).all(withClass("line", "leg-rule"))[0].attr["stroke"]
	}
	if l := label("r2"); l.text != "r2 · aaaaaaaa" || rule("r2") != colourRule {
		t.Errorf("r2, same boot: label %q, rule %s; want a plain rule", l.text, rule("r2"))
	}
	if l := label("r3"); l.text != "r3 · bbbbbbbb (new boot)" || rule("r3") != colourBoot {
		t.Errorf("r3, new boot: label %q, rule %s; want the boot colour", l.text, rule("r3"))
	}
	inLeg := d.byID("c1-ours-r3").all(withClass("line", "boot-change"))
	if len(inLeg) != 1 || !strings.Contains(textOf(d.byID("c1-ours-r3")), "boot cccccccc") {
		t.Errorf("the boot change inside r3: %d rules; want one, labelled boot cccccccc", len(inLeg))
	}
	if got := d.byID("c1-ours-r1").all(withClass("line", "boot-change")); len(got) != 0 {
		t.Errorf("r1 has %d boot-change rules, want none", len(got))
	}
	ticks := d.byID("c1-ours-r1").all(func(e *elem) bool { return e.name == "line" && e.parent.attr["class"] == "throttle" })
	if len(ticks) != 1 {
		t.Fatalf("r1 has %d throttle ticks; want one, for the SwPowerCap sample and not the GpuIdle one", len(ticks))
	}
	x, _ := strconv.ParseFloat(ticks[0].attr["x1"], 64)
	lt := traceOf(traceLeg(t, "probe", r1))
	xs := newXLayout([]*panel{{legs: []legTrace{lt, lt, lt}}})
	if want := colX(column(padL + 20*xs.scale)); n(x) != n(want) {
		t.Errorf("throttle tick at x %s, want %s (the 21st sample)", n(x), n(want))
	}
}

// TestReasonsLinkToPictures: each reason a picture shows links to it; the
// others link nowhere.
func TestReasonsLinkToPictures(t *testing.T) {
	links := func(tree string, allow bool) map[string][]string {
		html, _ := page(t, filepath.Join(treesDir, tree), allow)
		d := parsePage(t, html)
		out := map[string][]string{}
		for _, li := range d.all(named("li")) {
			codes := li.all(named("code"))
			if len(codes) == 0 {
				continue
			}
			href := ""
			if codes[0].parent.name == "a" {
				href = codes[0].parent.attr["href"]
			}
			// A leg reason names its leg before the code: "fastengine r1 clock.throttle".
			pre := ""
			for _, c := range li.children {
				if c.name != "#text" {
					break
				}
				pre += c.text
			}
			key := strings.Join(strings.Fields(pre+" "+codes[0].text), " ")
			out[key] = append(out[key], href)
		}
		return out
	}
	for _, c := range []struct {
		tree  string
		allow bool
		want  map[string]string
	}{
		{"staircase", false, map[string]string{"clock.staircase": "#c1-ours"}},
		{"cross-boot", false, map[string]string{"clock.cross_boot": "#c1-clock", "clock.offset": "#c1-clock"}},
		{"throttled", false, map[string]string{"leg.ineligible": "#c1-ours", "fastengine r1 clock.throttle": "#c1-ours"}},
		{"persistence-disabled", false, map[string]string{"leg.ineligible": "#c1-baseline", "vllm r2 clock.persistence": "#c1-baseline"}},
		{"memory-missing", false, map[string]string{"leg.ineligible": "", "fastengine r2 memory.missing": ""}},
	} {
		t.Run(c.tree, func(t *testing.T) {
			got := links(c.tree, c.allow)
			for key, href := range c.want {
				if len(got[key]) == 0 {
					t.Errorf("no reason %s; found %v", key, got)
				}
				for _, h := range got[key] {
					if h != href {
						t.Errorf("%s links to %q, want %q", key, h, href)
					}
				}
			}
		})
	}
}

// TestTreeTextIsEscaped summarizes a tree whose model and engine names are
// markup: the page still parses, holds no element they name, and shows
// them as written in headings, pictures and captions (a control character
// as U+FFFD).
func TestTreeTextIsEscaped(t *testing.T) {
	const model, engine = "m<script>alert(1)<\x01", `<img src=x onerror=alert(1)>&amp;"f'`
	// A control character cannot be in a well-formed page: it shows as U+FFFD.
	shown := strings.ReplaceAll(model, "\x01", "\uFFFD")
	root := filepath.Join(t.TempDir(), "tree")
	if err := os.CopyFS(root, os.DirFS(filepath.Join(treesDir, "cross-boot"))); err != nil {
		t.Fatal(err)
	}
	for _, sub := range []string{"bench", "memory", "clocks"} {
		from := filepath.Join(root, sub, "llama-3.1-8b-instruct")
		if err := os.Rename(filepath.Join(from, "fastengine"), filepath.Join(from, engine)); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(from, filepath.Join(root, sub, model)); err != nil {
			t.Fatal(err)
		}
	}
	html, _ := page(t, root, false)
	d := parsePage(t, html)
	for _, bad := range []string{"script", "img"} {
		if got := d.all(named(bad)); len(got) != 0 {
			t.Errorf("the page holds %d <%s> elements", len(got), bad)
		}
	}
	if h2 := d.all(named("h2")); len(h2) == 0 || textOf(h2[0]) != shown+": "+engine+" vs vllm" {
		t.Errorf("the comparison heading does not show the names as written")
	}
	fig := d.byID(FigureID(0, "ours"))
	if fig == nil {
		t.Fatal("no picture of the ours arm")
	}
	if title := fig.all(named("title")); len(title) != 1 || !strings.HasPrefix(title[0].text, engine+" (ours arm of "+shown+")") {
		t.Errorf("the picture's title does not show the names as written")
	}
	if cap := fig.all(named("figcaption")); len(cap) != 1 || !strings.HasPrefix(textOf(cap[0]), engine+" (ours)") {
		t.Errorf("the caption does not show the engine as written")
	}
	svgs := d.all(withClass("svg", "clock"))
	if len(svgs) != 2 || !strings.Contains(svgs[1].attr["aria-label"], engine+" median") {
		t.Errorf("the baseline picture's aria-label does not name the other arm as written")
	}
	// The pictures of the legs' spread name the arms as written too.
	for _, fam := range []string{FamilyThroughput, FamilyMemory} {
		fig := d.byID(SpreadID(0, fam))
		if fig == nil {
			t.Fatalf("no spread picture #%s", SpreadID(0, fam))
		}
		if title := fig.all(named("title")); len(title) == 0 || !strings.Contains(title[0].text, " of "+engine+" and vllm") {
			t.Errorf("#%s: the title does not name %q as written", SpreadID(0, fam), engine)
		}
		if labels := fig.all(withClass("text", "arm-label")); len(labels) == 0 || labels[0].text != clip(engine, 14) {
			t.Errorf("#%s: the arm label does not show %q as written", SpreadID(0, fam), engine)
		}
	}
}

// TestEscKeepsTextValid: text from a tree that is not valid UTF-8 or holds
// control characters still makes valid XML text.
func TestEscKeepsTextValid(t *testing.T) {
	got := esc("a\xffb\x01c<&>\"'")
	if want := "a\uFFFDb\uFFFDc&lt;&amp;&gt;&#34;&#39;"; got != want {
		t.Errorf("esc = %q, want %q", got, want)
	}
	parsePage(t, []byte(fmt.Sprintf("<p>%s</p>", got)))
}

// TestMediansBandAndTicks: the arm's median is a solid line in a band of
// ±clocks.MaxSpreadPct around it, the other arm's median a dashed line,
// and every drawn leg's seconds start at 0 on its own rule.
func TestMediansBandAndTicks(t *testing.T) {
	t0 := time.Date(2026, 8, 12, 9, 0, 0, 0, time.UTC)
	never := func(int) bool { return false }
	r1 := traceLeg(t, "r1", synth(90, t0, "boot-a", func(i int) int { return 2380 + i%5*10 }, never))
	r2 := traceLeg(t, "r2", synth(90, t0, "boot-a", func(i int) int { return 2390 }, never))
	p := &panel{id: "c1-ours", model: "m", engine: "ours", other: "base", role: "ours", colour: colourOurs, otherColour: colourBaseline}
	ours, base := 2400.0, 2200.0
	p.side.MedianMHz, p.otherMedian = &ours, &base
	p.legs = []legTrace{traceOf(r1), traceOf(r2)}
	ps := []*panel{p}
	ys := newYScale(ps)
	d := parsePage(t, []byte(svgOf(p, newXLayout(ps), ys)))

	one := func(match func(*elem) bool, what string) *elem {
		got := d.all(match)
		if len(got) != 1 {
			t.Fatalf("%d %s, want 1", len(got), what)
		}
		return got[0]
	}
	band := one(withClass("rect", "band"), "bands")
	top, bot := ys.y(ours*(1+clocks.MaxSpreadPct/100)), ys.y(ours*(1-clocks.MaxSpreadPct/100))
	if band.attr["y"] != n(top) || band.attr["height"] != n(bot-top) {
		t.Errorf("band y %s height %s, want %s and %s: ±%.1f%% of %g MHz", band.attr["y"], band.attr["height"], n(top), n(bot-top), clocks.MaxSpreadPct, ours)
	}
	if m := one(withClass("line", "median"), "medians"); m.attr["y1"] != n(ys.y(ours)) || m.attr["stroke-dasharray"] != "" {
		t.Errorf("median at y %s dashed %q, want solid at %s", m.attr["y1"], m.attr["stroke-dasharray"], n(ys.y(ours)))
	}
	if m := one(withClass("line", "other-median"), "other medians"); m.attr["y1"] != n(ys.y(base)) || m.attr["stroke-dasharray"] == "" {
		t.Errorf("other median at y %s dashed %q, want dashed at %s", m.attr["y1"], m.attr["stroke-dasharray"], n(ys.y(base)))
	}
	if ys.lo > base || ys.hi < ours*(1+clocks.MaxSpreadPct/100) {
		t.Errorf("the MHz scale %g–%g does not cover the other median and the band", ys.lo, ys.hi)
	}
	for _, leg := range []string{"r1", "r2"} {
		g := d.byID("c1-ours-" + leg)
		rule := g.all(withClass("line", "leg-rule"))[0].attr["x1"]
		ticks := g.all(withClass("text", "tick"))
		if len(ticks) < 2 || ticks[0].text != "0" || ticks[0].attr["x"] != rule {
			t.Errorf("leg %s: ticks %d, first %q at x %s; want 0 at its rule, x %s", leg, len(ticks), ticks[0].text, ticks[0].attr["x"], rule)
		}
	}
}

// traceLegGPUs folds the samples of several GPUs as summarize does, each
// GPU's trace reduced in the same pass, and returns their leg, trusted,
// with a LegGPU per GPU as Build gives it.
func traceLegGPUs(t *testing.T, name string, samples []clocks.Sample) Leg {
	t.Helper()
	f := clocks.NewTracingFold()
	if err := f.FoldStream(bytes.NewReader(encode(samples)), name+".samples.jsonl"); err != nil {
		t.Fatal(err)
	}
	rec, err := f.Record(1, clocks.StopPIDExit)
	if err != nil {
		t.Fatal(err)
	}
	l := Leg{Name: name, Engine: "ours", Trusted: true, Trace: f.GPUs[0].Trace}
	for k, g := range rec.GPUs {
		st := g.SMClockMHz
		mean := float64(int(f.GPUs[k].SumMHz.Float()/float64(st.N)*100+0.5)) / 100
		l.GPUs = append(l.GPUs, LegGPU{Index: f.GPUs[k].Index, UUID: g.UUID, MedianMHz: st.Median, MinMHz: st.Min, MaxMHz: st.Max,
			SpreadPct: st.SpreadPct, BusySamples: st.N, IdleSamples: g.IdleSamplesExcluded, MeanMHz: &mean, Trace: f.GPUs[k].Trace})
	}
	l.MedianMHz = l.GPUs[0].MedianMHz
	return l
}

// synthGPUs is n readings at 1 Hz of the GPUs gpus, one row per GPU per
// reading, all at the reading's time, GPU i busy at mhz(i, k) in reading k,
// idle in the readings idle(k) says.
func synthGPUs(n int, gpus []int, mhz func(gpu, k int) int, idle func(k int) bool) []clocks.Sample {
	t0 := time.Date(2026, 8, 12, 9, 0, 0, 0, time.UTC)
	var out []clocks.Sample
	for k := 0; k < n; k++ {
		for _, g := range gpus {
			s := synth(1, t0.Add(time.Duration(k)*time.Second), "boot-a", func(int) int { return mhz(g, k) }, func(int) bool { return idle(k) })[0]
			s.GPUIndex, s.GPUUUID = g, fmt.Sprintf("GPU-%d", g)
			out = append(out, s)
		}
	}
	return out
}

// TestSeveralGPUsAreNamedLines draws a TP=4 leg whose GPU 2 runs at
// 1950 MHz and GPUs 0, 1 and 3 at 1980: one line per GPU, each named and
// drawn from its own samples, the others muted in their own colours and
// the slowest in the arm's colour, thicker, on top, named above the leg;
// and a key under the picture names every GPU.
func TestSeveralGPUsAreNamedLines(t *testing.T) {
	gpus := []int{0, 1, 2, 3}
	samples := synthGPUs(60, gpus, func(g, _ int) int {
		if g == 2 {
			return 1950
		}
		return 1980
	}, func(k int) bool { return k >= 25 && k < 30 })
	p, svg := onePanel(traceLegGPUs(t, "r1", samples))
	d := parsePage(t, []byte(svg))
	ys := newYScale([]*panel{p})

	leg := d.byID("c1-ours-r1")
	if leg == nil {
		t.Fatal("no group for leg r1")
	}
	lines := leg.all(withClass("g", "gpu"))
	if len(lines) != len(gpus) {
		t.Fatalf("%d GPU lines, want %d", len(lines), len(gpus))
	}
	if got := leg.all(withClass("path", "busy")); len(got) != 0 {
		t.Errorf("the leg of several GPUs also has %d single-GPU busy paths", len(got))
	}
	seen := map[string]bool{}
	for i, g := range lines {
		id := g.attr["data-gpu"]
		seen[id] = true
		title := g.all(named("title"))
		if len(title) != 1 || !strings.HasPrefix(title[0].text, "r1 GPU "+id+", busy median ") {
			t.Errorf("GPU line %s: title %v, want it named r1 GPU %s", id, title, id)
		}
		paths := g.all(withClass("path", "busy-gpu"))
		if len(paths) != 1 {
			t.Fatalf("GPU line %s: %d paths, want 1", id, len(paths))
		}
		slow := strings.Contains(" "+g.attr["class"]+" ", " slowest ")
		index, _ := strconv.Atoi(id)
		want, colour, width := 1980.0, gpuColour(index), "1.4"
		if id == "2" {
			want, colour, width = 1950, colourOurs, "2.6"
			if !slow || i != len(lines)-1 || !strings.Contains(title[0].text, "the slowest GPU of the leg") {
				t.Errorf("GPU 2: class %q, drawn %d of %d, title %q; want it marked slowest, drawn last, named so",
					g.attr["class"], i+1, len(lines), title[0].text)
			}
		} else if slow {
			t.Errorf("GPU %s is marked slowest", id)
		}
		if paths[0].attr["stroke"] != colour || paths[0].attr["stroke-width"] != width {
			t.Errorf("GPU %s: stroke %s width %s, want %s width %s", id, paths[0].attr["stroke"], paths[0].attr["stroke-width"], colour, width)
		}
		// Each line is its own GPU's samples: every point at its clock.
		for _, c := range coord.FindAllStringSubmatch(paths[0].attr["d"], -1) {
			if c[2] != n(ys.y(want)) {
				t.Errorf("GPU %s: a point at y %s, want every point at %s (%g MHz)", id, c[2], n(ys.y(want)), want)
				break
			}
		}
		// Two busy stretches, apart where every GPU was idle.
		if runs := strings.Count(paths[0].attr["d"], "M"); runs != 2 {
			t.Errorf("GPU %s: %d runs, want 2", id, runs)
		}
	}
	if len(seen) != len(gpus) {
		t.Errorf("GPU lines name %v, want each of %v once", seen, gpus)
	}
	if l := leg.all(withClass("text", "leg-label")); len(l) != 1 || l[0].text != "r1 · boot-a · slowest GPU 2" {
		t.Errorf("leg label %v, want it to name the slowest GPU", l)
	}
	key := d.all(withClass("g", "gpu-key"))
	if len(key) != len(gpus) {
		t.Fatalf("%d GPUs in the key, want %d", len(key), len(gpus))
	}
	for i, k := range key {
		line, text := k.all(named("line")), k.all(named("text"))
		if k.attr["data-gpu"] != strconv.Itoa(i) || len(text) != 1 || text[0].text != fmt.Sprintf("GPU %d", i) || line[0].attr["stroke"] != gpuColour(i) {
			t.Errorf("key entry %d: GPU %s %v in %s; want GPU %d in %s", i, k.attr["data-gpu"], text, line[0].attr["stroke"], i, gpuColour(i))
		}
	}
	if s := d.all(withClass("g", "slowest-key")); len(s) != 1 || s[0].all(named("line"))[0].attr["stroke"] != colourOurs {
		t.Error("the key does not show the slowest GPU's stroke in the arm's colour")
	}
	if vb := d.all(named("svg"))[0].attr["viewBox"]; vb != fmt.Sprintf("0 0 %d %d", figW, figH+keyH) {
		t.Errorf("viewBox %q, want the key's row under the picture", vb)
	}
	if !strings.Contains(d.all(named("svg"))[0].attr["aria-label"], "r1 on 4 GPUs, the slowest GPU 2 at a median of 1950 MHz") {
		t.Errorf("aria-label %q does not name the slowest GPU", d.all(named("svg"))[0].attr["aria-label"])
	}
}

// TestSlowestGPUOfEqualMedians: of GPUs at one busy median, the slowest is
// the one of the lowest mean: its clock dipped where the others' did not.
func TestSlowestGPUOfEqualMedians(t *testing.T) {
	samples := synthGPUs(61, []int{4, 5, 6, 7}, func(g, k int) int {
		if g == 6 && k%4 == 0 {
			return 1935 // a dip in every fourth reading: the median stays 1980
		}
		if g == 5 && k%10 == 0 {
			return 1950
		}
		return 1980
	}, func(int) bool { return false })
	leg := traceLegGPUs(t, "r1", samples)
	for _, g := range leg.GPUs {
		if *g.MedianMHz != 1980 {
			t.Fatalf("GPU %d median %v, want every median 1980", g.Index, *g.MedianMHz)
		}
	}
	_, svg := onePanel(leg)
	d := parsePage(t, []byte(svg))
	slow := d.all(withClass("g", "slowest"))
	if len(slow) != 1 || slow[0].attr["data-gpu"] != "6" {
		t.Fatalf("slowest %v, want GPU 6, the lowest mean", slow)
	}
}

// TestOneGPUPictureHasNoKey: a leg of one GPU is drawn as it always was:
// one busy path, no GPU lines, no key, the picture's height unchanged.
func TestOneGPUPictureHasNoKey(t *testing.T) {
	samples := synth(60, time.Date(2026, 8, 12, 9, 0, 0, 0, time.UTC), "boot-a", func(int) int { return 2400 }, func(int) bool { return false })
	leg := traceLeg(t, "r1", samples)
	_, svg := onePanel(leg)
	d := parsePage(t, []byte(svg))
	if got := d.all(withClass("path", "busy")); len(got) != 1 {
		t.Errorf("%d busy paths, want 1", len(got))
	}
	if got := len(d.all(withClass("g", "gpu"))) + len(d.all(withClass("g", "key"))); got != 0 {
		t.Errorf("%d GPU lines or keys in a picture of one GPU", got)
	}
	if vb := d.all(named("svg"))[0].attr["viewBox"]; vb != fmt.Sprintf("0 0 %d %d", figW, figH) {
		t.Errorf("viewBox %q", vb)
	}
}

// svgOf is p's picture as a string.
func svgOf(p *panel, xs xLayout, ys yScale) string {
	var b strings.Builder
	p.svg(&svgWriter{&b}, xs, ys)
	return b.String()
}

// spreadSVGOf is the picture of spread rows as a string.
func spreadSVGOf(id, ours, base, quantity string, rows []spreadRow) string {
	var b strings.Builder
	spreadSVG(&svgWriter{&b}, id, ours, base, quantity, rows)
	return b.String()
}

// TestBootChangeOfSeveralGPUs: a TP=2 leg whose GPU 1 is first seen after
// the boot change (its trace knows only the new boot, GPU 0's both) is
// drawn with one boot change, where it is, labelled with the new boot: the
// GPUs' boot tables are read as one table for the leg.
func TestBootChangeOfSeveralGPUs(t *testing.T) {
	var samples []clocks.Sample
	for i, s := range synthGPUs(60, []int{0, 1}, func(int, int) int { return 1980 }, func(int) bool { return false }) {
		k := i / 2 // the reading: a row per GPU
		switch {
		case k < 30 && s.GPUIndex == 1:
			continue
		case k >= 30:
			s.BootID = "bbbbbbbb-2"
		default:
			s.BootID = "aaaaaaaa-1"
		}
		samples = append(samples, s)
	}
	leg := traceLegGPUs(t, "r1", samples)
	if got := leg.GPUs[1].Trace.Boots; len(got) != 1 || got[0] != "bbbbbbbb-2" {
		t.Fatalf("GPU 1's trace boots %q; the test needs it to know only the new boot", got)
	}
	_, svg := onePanel(leg)
	d := parsePage(t, []byte(svg))
	g := d.byID("c1-ours-r1")
	if got := g.all(withClass("line", "boot-change")); len(got) != 1 {
		t.Fatalf("%d boot-change rules, want one", len(got))
	}
	if txt := textOf(g); !strings.Contains(txt, "boot bbbbbbbb") || !strings.Contains(txt, "r1 · aaaaaaaa") {
		t.Errorf("leg text %q: want its label on the first boot and the change to bbbbbbbb", txt)
	}
}

// TestBootsOfALegFitSixteenBits: a picture's sample holds its boot in 16
// bits. A leg of 256 GPUs, each on 256 boots of its own, has 65,536 boots
// and is drawn, each sample on its own boot; one boot more (a 257th GPU on
// one boot) and the leg is a slot saying why, never a sample on another
// sample's boot.
func TestBootsOfALegFitSixteenBits(t *testing.T) {
	leg := func(gpus int) Leg {
		l := Leg{Name: "r1", Engine: "ours", Trusted: true}
		for g := range gpus {
			tr := &clocks.Trace{Span: 1}
			boots := 256
			if g == 256 {
				boots = 1
			}
			for b := range boots {
				tr.Boots = append(tr.Boots, fmt.Sprintf("boot-%d-%d", g, b))
			}
			tr.Points = []clocks.TracePoint{{T: 0, MHz: 1980, Boot: uint16(boots - 1)}}
			l.GPUs = append(l.GPUs, LegGPU{Index: g, Trace: tr})
		}
		l.Trace = l.GPUs[0].Trace
		return l
	}
	lt := traceOf(leg(256))
	if !lt.drawn() || len(lt.boots) != 1<<16 {
		t.Fatalf("256 GPUs: drawn %v, %d boots (note %q)", lt.drawn(), len(lt.boots), lt.note)
	}
	for _, line := range lt.gpus {
		if got, want := lt.boots[line.samples[0].boot], fmt.Sprintf("boot-%d-255", line.index); got != want {
			t.Fatalf("GPU %d's sample is on %s, want %s", line.index, got, want)
		}
	}
	if lt := traceOf(leg(257)); lt.drawn() || lt.note != "too many boots to draw" {
		t.Fatalf("257 GPUs: drawn %v, note %q", lt.drawn(), lt.note)
	}
}
