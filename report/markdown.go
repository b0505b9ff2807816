package report

import (
	"bytes"
	"fmt"
	"io"
	"math"
	"reflect"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	"github.com/olekukonko/tablewriter"
	"github.com/olekukonko/tablewriter/renderer"
	"github.com/olekukonko/tablewriter/tw"

	"github.com/clockgate/clockgate/clocks"
	"github.com/clockgate/clockgate/ratio"
	"github.com/clockgate/clockgate/summarize"
)

// Markdown writes report.md for a summary.
func Markdown(w io.Writer, s *summarize.Summary) error {
	return Build(s).Markdown(w)
}

// Markdown writes the document as GitHub-flavoured Markdown: the same
// document always gives the same bytes. Its sections are rendered on every
// core and written in order (sectionsOn), so that a large tree's report is
// never whole in memory; the sections' lengths are kept, for HTMLOf.
func (d *Document) Markdown(w io.Writer) error {
	d.spans = d.spans[:0]
	return d.sectionsOn(runtime.GOMAXPROCS(0), func(section int, md []byte) error {
		d.spans = append(d.spans, mdSpan{section, len(md)})
		_, err := w.Write(md)
		return err
	})
}

// mdSpan is one section of the Markdown last written: its number, as
// sections gives it, and its length in bytes.
type mdSpan struct {
	section, n int
}

// sections renders the document's Markdown in sections, one at a time,
// each given to emit in order: the heading and contract (section -1), each
// comparison (section i for Comparisons[i]), then the legs in no
// comparison and the warnings (section len(Comparisons)). md is emit's
// only until it returns.
func (d *Document) sections(emit func(section int, md []byte) error) error {
	return d.sectionsOn(1, emit)
}

// sectionsOn is sections with the sections rendered on that many
// goroutines (inOrder), still given to emit in order.
func (d *Document) sectionsOn(workers int, emit func(section int, md []byte) error) error {
	d.planScale()
	next := -1
	return inOrder(workers, func(submit func(func(b *bytes.Buffer) error) error) error {
		for section := -1; section <= len(d.Comparisons); section++ {
			if err := submit(func(b *bytes.Buffer) error { return d.section(section, b) }); err != nil {
				return err
			}
		}
		return nil
	}, func(md []byte) error {
		err := emit(next, md)
		next++
		return err
	})
}

// section renders one section of the document's Markdown into b.
func (d *Document) section(section int, b *bytes.Buffer) error {
	p := func(format string, args ...any) { fmt.Fprintf(b, format, args...) }
	switch {
	case section < 0:
		d.head(p)
		return nil
	case section < len(d.Comparisons):
		return d.comparison(section, b, p)
	}
	return d.rest(b, p)
}

// rest is the document's last section: the legs in no comparison, and
// the warnings.
func (d *Document) rest(b *bytes.Buffer, p func(format string, args ...any)) error {
	if len(d.Uncompared) > 0 {
		p("## Legs in no comparison\n\n")
		if err := d.legsPart(b, len(d.Comparisons), d.Uncompared, true); err != nil {
			return err
		}
	}

	if d.Grid != nil {
		d.grid(p)
	}
	p("## Warnings\n\n")
	if len(d.Warnings) == 0 {
		p("None.\n")
	}
	for _, wn := range d.Warnings {
		p("- %s\n", text(wn))
	}
	return nil
}

// head is the document's first section: its title, the gate, the
// baseline and the contract.
func (d *Document) head(p func(format string, args ...any)) {
	p("# %s\n\n", text(d.Title))
	gate := "FAIL"
	if d.GatePass {
		gate = "PASS"
	}
	p("- Gate: **%s**: %d of %d ratios ESTABLISHED (binding-eligible).\n", gate, d.Binding, d.Ratios)
	override := "off"
	if d.AllowCrossBoot {
		override = "on (`--allow-cross-boot`: boot identity waived, every other check applies)"
	}
	p("- Baseline engine: %s. Cross-boot override: %s.\n", text(d.Baseline), override)
	c := d.Contract
	p("- Contract: within-window spread ≤ %.1f%%; cross-arm median and mean offset ≤ %.1f%% (per GPU position; a leg's GPUs within it of each other); "+
		"busy samples ≥ %d; busy fraction ≥ %d%%; no gap between samples over %d × interval_s; "+
		"benign throttle mask %s; transfer coefficient %.4f (sizes the estimated effect, never a gate term); "+
		"total_output_tokens within %.1f%% between the arms at a point (THROUGHPUT).\n\n",
		c.MaxSpreadPct, c.MaxOffsetPct, c.MinBusySamples, c.MinBusyFractionPct, clocks.MaxGapIntervals, c.BenignThrottleMask, c.TransferCoefficient,
		ratio.MaxOutputDiffPct)
	if len(d.Comparisons) == 0 {
		p("No comparison: no model has both the baseline arm and another arm.\n\n")
	}
}

// comparison is the section of the ci-th comparison.
func (d *Document) comparison(ci int, b *bytes.Buffer, p func(format string, args ...any)) error {
	cmp := d.Comparisons[ci]
	p("## %s: %s vs %s\n\n", text(cmp.Model), text(cmp.Ours), text(cmp.Baseline))
	if !d.detailed(ci) {
		p("%s\n\n", text(d.brief(ci)))
		return nil
	}
	if bc := cmp.BenchClients; bc != nil {
		p("bench clients: %s %s, %s %s\n\n", text(cmp.Ours), text(bc.Ours), text(cmp.Baseline), text(bc.Baseline))
	}
	for _, r := range cmp.Ratios {
		value := "n/a"
		if r.Value != nil {
			value = fixed(*r.Value, 4)
		}
		p("### %s %s/%s %s: %s\n\n", r.Family, text(cmp.Ours), text(cmp.Baseline), value, Verdict(r.Established))
		switch r.Family {
		case FamilyThroughput:
			p("%s\n\n", text(ThroughputSignificance(cmp.Ours, cmp.Baseline, cmp.Points, r.Significance)))
		case FamilyMemory:
			p("%s\n\n", text(MemorySignificance(cmp.Ours, cmp.Baseline, r.Test)))
		}
		p("%s\n\n", text(Observed(cmp.Clock)))
		for _, side := range []clocks.Side{cmp.Clock.Ours, cmp.Clock.Baseline} {
			p("%s\n\n", text(side.Host.Text(side.Engine)))
		}
		for _, cv := range r.Caveats {
			p("%s\n\n", text(Caveat(cv)))
		}
		switch r.Family {
		case FamilyThroughput:
			p("Output throughput, median over each arm's legs, in tokens/s, at each point (max_concurrency none: no bound; request_rate inf: all at once); "+
				"the ratio is their geometric mean over the points both arms have. "+
				"%s%% CI: each arm's confidence interval around its median over its legs, −∞ or +∞ on a side the legs are too few to bound (both sides need %s). "+
				"p: two-sided Mann–Whitney U of the legs' throughputs, %s against %s; `~` where p ≥ %s (no difference detected), n/a where an arm has %s.\n\n",
				confidenceText(), legsWord(ratio.CILegsNeeded()), text(cmp.Ours), text(cmp.Baseline), alphaText(),
				strings.TrimSuffix(tooFewLegs("throughput"), " in an arm")+" there")
			if err := pointsTable(b, cmp); err != nil {
				return err
			}
			b.WriteString("\n")
			p("Output tokens: median total_output_tokens over the legs with throughput, and their difference.")
			if HasPointWindows(cmp.Points) {
				p(" %s", text(PointClockLead(cmp.Ours, cmp.Baseline)))
			}
			p("\n\n")
			if err := pointEvidenceTable(b, cmp); err != nil {
				return err
			}
			b.WriteString("\n")
		case FamilyMemory:
			p("%s %s %s, %s %s.\n\n", MemoryLead,
				text(cmp.Ours), memCI(r.Ours, r.Test.OursCI, r.Test.OursLegs), text(cmp.Baseline), memCI(r.Baseline, r.Test.BaselineCI, r.Test.BaselineLegs))
		}
		if len(r.Reasons) == 0 {
			p("Reasons: none.\n\n")
			continue
		}
		p("Reasons:\n\n")
		for _, it := range d.ratioItems(r.Reasons) {
			p("- `%s`: %s\n", it.r.Code, it.text())
		}
		b.WriteString("\n")
	}
	if cmp.ShowsEnergy() {
		if err := energySection(b, cmp, p); err != nil {
			return err
		}
	}
	if rows := GPURows(cmp); len(rows) > 0 {
		p("### Clock per GPU position of %s and %s\n\n", text(cmp.Ours), text(cmp.Baseline))
		p("%s\n\n", GPULead)
		if err := gpuTable(b, cmp.Ours, cmp.Baseline, rows); err != nil {
			return err
		}
		b.WriteString("\n")
	}
	p("### Legs of %s and %s\n\n", text(cmp.Ours), text(cmp.Baseline))
	return d.legsPart(b, ci, cmp.Legs, false)
}

// legsPart is a section's legs tables and leg reasons: of every leg, or at
// scale of the legs listedLegs gives, after the paragraph that counts them.
func (d *Document) legsPart(b *bytes.Buffer, k int, legs []Leg, withModel bool) error {
	listed := d.listedLegs(k, legs)
	if d.atScale() {
		fmt.Fprintf(b, "%s\n\n", text(d.legsSummary(legs, listed)))
		if len(listed) == 0 {
			return nil
		}
	}
	if err := legTable(b, listed, withModel); err != nil {
		return err
	}
	b.WriteString("\n")
	legReasons(b, listed, withModel)
	return nil
}

// energySection is the ENERGY family: a verdict per point, a column per
// point of each arm's J per output token, and its own reasons.
func energySection(b *bytes.Buffer, cmp Comparison, p func(format string, args ...any)) error {
	e := cmp.Energy
	p("### ENERGY %s/%s per point: %s\n\n", text(cmp.Ours), text(cmp.Baseline), Verdict(e.BindingEligible))
	p("%s\n\n", text(EnergyLead))
	header := []string{""}
	ours := []string{cell(cmp.Ours) + " J/output token"}
	base := []string{cell(cmp.Baseline) + " J/output token"}
	power := []string{cell(cmp.Ours) + " / " + cell(cmp.Baseline) + " mean W"}
	idle := []string{cell(cmp.Ours) + " / " + cell(cmp.Baseline) + " idle W"}
	rat := []string{"ENERGY"}
	pv := []string{"p"}
	for _, pt := range e.Points {
		header = append(header, pt.Point)
		ours = append(ours, EnergyCell(pt.Ours))
		base = append(base, EnergyCell(pt.Baseline))
		power = append(power, sideW(pt.Ours, false)+" / "+sideW(pt.Baseline, false))
		idle = append(idle, sideW(pt.Ours, true)+" / "+sideW(pt.Baseline, true))
		rat = append(rat, EnergyRatioText(pt))
		pv = append(pv, PText(pt.Test))
	}
	align := make([]tw.Align, len(header))
	for i := range align {
		align[i] = tw.AlignRight
	}
	align[0] = tw.AlignLeft
	t := newTable(b, align)
	t.Header(header)
	for _, row := range [][]string{ours, base, power, idle, rat, pv} {
		if err := t.Append(row); err != nil {
			return err
		}
	}
	if err := t.Render(); err != nil {
		return err
	}
	b.WriteString("\n")
	rs := EnergyReasons(e)
	if len(rs) == 0 {
		p("ENERGY reasons: none of its own (each point carries its THROUGHPUT reasons too).\n\n")
		return nil
	}
	p("ENERGY reasons (each point carries its THROUGHPUT reasons too):\n\n")
	for _, r := range rs {
		p("- `%s`: %s\n", r.Code, text(r.Message))
	}
	b.WriteString("\n")
	return nil
}

// sideW prints an arm's mean or idle power at a point, in W.
func sideW(s *ratio.EnergySide, idle bool) string {
	if s == nil {
		return "n/a"
	}
	if idle {
		return fixed2(s.IdlePowerW)
	}
	return fixed2(s.MeanPowerW)
}

// legReasons lists every reason of every leg that has one, in full.
// PowerManagedLead opens the list of power-managed legs under a legs table.
const PowerManagedLead = "Power-managed legs:"

func legReasons(b *bytes.Buffer, legs []Leg, withModel bool) {
	managed := false
	for _, l := range legs {
		if l.Power == "" {
			continue
		}
		if !managed {
			b.WriteString(PowerManagedLead + " the median and spread above are over every busy sample; the contract judges the free ones, which no power cap held:\n\n")
			managed = true
		}
		name := text(l.Engine) + " " + l.Name
		if withModel {
			name = text(l.Model) + " " + name
		}
		fmt.Fprintf(b, "- %s: %s\n", name, text(l.Power))
	}
	if managed {
		b.WriteString("\n")
	}
	listed := false
	for _, l := range legs {
		if len(l.Reasons) == 0 {
			continue
		}
		if !listed {
			b.WriteString("Leg reasons:\n\n")
			listed = true
		}
		name := text(l.Engine) + " " + l.Name
		if withModel {
			name = text(l.Model) + " " + name
		}
		for _, r := range l.Reasons {
			fmt.Fprintf(b, "- %s `%s`: %s\n", name, r.Code, text(r.Message))
		}
	}
	if listed {
		b.WriteString("\n")
	}
}

// table is a Markdown table written to w when rendered.
type table struct {
	*tablewriter.Table
	buf bytes.Buffer
	w   io.Writer
}

// tables keeps tables between uses: a tablewriter table is made with a
// cache of some hundreds of KiB, which a report of many comparisons would
// otherwise allocate, and collect, for each of its tables.
var tables = sync.Pool{New: func() any {
	t := &table{}
	t.Table = tablewriter.NewTable(&t.buf,
		tablewriter.WithRenderer(renderer.NewMarkdown()),
		tablewriter.WithHeaderAutoFormat(tw.Off),
		tablewriter.WithRowAutoFormat(tw.Off),
		tablewriter.WithRowAutoWrap(tw.WrapNone),
		tablewriter.WithHeaderAutoWrap(tw.WrapNone),
		tablewriter.WithStringerCacheCustom(noStringerCache{}),
	)
	return t
}}

// noStringerCache is the cache of a table that has no stringer (cells are
// strings already), so nothing is ever looked up in it. A table's Reset
// empties its stringer cache by allocating a new map of 10,240 entries,
// some hundreds of KiB for every table of a report; this one has nothing
// to empty.
type noStringerCache struct{}

func (noStringerCache) Add(reflect.Type, reflect.Value) bool           { return false }
func (noStringerCache) Get(reflect.Type) (v reflect.Value, found bool) { return v, false }
func (noStringerCache) Purge()                                         {}

// newTable is a Markdown table whose every column has the given alignment;
// the alignment row follows it. Render writes it to w and hands it back.
func newTable(w io.Writer, align []tw.Align) *table {
	t := tables.Get().(*table)
	t.Reset()
	t.buf.Reset()
	t.Options(tablewriter.WithAlignment(tw.Alignment(align)))
	t.w = w
	return t
}

// Render writes the table to its writer; the table is not to be used
// after it.
func (t *table) Render() error {
	err := t.Table.Render()
	if err == nil {
		_, err = t.w.Write(t.buf.Bytes())
	}
	t.w = nil
	tables.Put(t)
	return err
}

// MemoryLead starts the MEMORY ratio's paragraph of medians; report.html
// places the legs' picture after it.
const MemoryLead = "Peak GPU memory, median over each arm's legs:"

// memCI is an arm's median peak GPU memory and its interval.
func memCI(median *float64, ci ratio.CI, legs []ratio.LegValue) string {
	if median == nil {
		return mib(median)
	}
	return fmt.Sprintf("%s (%s%% CI %s)", mib(median), confidenceText(), CIText(ci, legs, 2))
}

// rightTable renders a table of right-aligned columns.
func rightTable(w io.Writer, header []string, rows [][]string) error {
	align := make([]tw.Align, len(header))
	for i := range align {
		align[i] = tw.AlignRight
	}
	t := newTable(w, align)
	t.Header(header)
	if err := t.Bulk(rows); err != nil {
		return err
	}
	return t.Render()
}

// pointsTable is THROUGHPUT's table of each point's throughput: each arm's
// median, the ratio, each arm's interval and the test's p.
func pointsTable(w io.Writer, c Comparison) error {
	header := []string{"max_concurrency", "request_rate", cell(c.Ours), cell(c.Baseline), "ratio",
		cell(CIHeader(c.Ours)), cell(CIHeader(c.Baseline)), "p"}
	rows := make([][]string, 0, len(c.Points))
	for _, pt := range c.Points {
		ratio := "n/a"
		if pt.Ratio != nil {
			ratio = fixed(*pt.Ratio, 4)
		}
		mc, rr, _ := strings.Cut(pt.ID.Label(), "/")
		// "~ " cannot open strikethrough (a space follows it), so the
		// cell keeps benchstat's mark as written.
		rows = append(rows, []string{mc, rr, fixed2(pt.Ours), fixed2(pt.Baseline), ratio,
			CIText(pt.OursCI, pt.OursLegs, 2), CIText(pt.BaselineCI, pt.BaselineLegs, 2), PText(pt.Test)})
	}
	return rightTable(w, header, rows)
}

// pointEvidenceTable is THROUGHPUT's table of what each point's numbers
// rest on: the arms' output tokens and their difference, and, where the
// points have windows, the point's clock offset and each arm's
// power-managed share.
func pointEvidenceTable(w io.Writer, c Comparison) error {
	withClock := HasPointWindows(c.Points)
	header := []string{"max_concurrency", "request_rate", cell(c.Ours) + " output tokens", cell(c.Baseline) + " output tokens", "output Δ %"}
	if withClock {
		header = append(header, "point clock offset %", cell(c.Ours)+" power-managed %", cell(c.Baseline)+" power-managed %")
	}
	rows := make([][]string, 0, len(c.Points))
	for _, pt := range c.Points {
		mc, rr, _ := strings.Cut(pt.ID.Label(), "/")
		row := []string{mc, rr, optNum(pt.OursOutputTokens), optNum(pt.BaselineOutputTokens), optFixed2(pt.OutputDiffPct)}
		if withClock {
			row = append(row, PointOffsetText(pt.Clock), pointPM(pt.Clock, true), pointPM(pt.Clock, false))
		}
		rows = append(rows, row)
	}
	return rightTable(w, header, rows)
}

// HasPointWindows reports whether some point of a THROUGHPUT ratio has
// windows in every leg of both arms: only then do the per-point table and
// the pictures show the points' own clocks.
func HasPointWindows(points []ratio.Point) bool {
	for _, pt := range points {
		if pt.Clock != nil && pt.Clock.Ours != nil {
			return true
		}
	}
	return false
}

// PointClockLead explains the per-point table's clock columns.
func PointClockLead(ours, baseline string) string {
	return fmt.Sprintf("Point clock: each arm's free busy samples inside the point's windows (clockgate mark, the result's exact window as AIPerf, GuideLLM and InferenceX state it, or vLLM's date and duration), pooled over its trusted legs; "+
		"the offset of the free medians %s against %s, and in brackets of the free means, held to %.1f%% (clock.point_offset); "+
		"too thin: under %d free busy samples in an arm, not judged; no window: some leg has none. "+
		"Power-managed: each arm's power-managed share of its busy samples there, reported, never gated.",
		ours, baseline, clocks.MaxOffsetPct, clocks.MinFreeSamples)
}

// PointOffsetText is a point's clock offset cell: "0.20 (0.21)" for a
// judged point, "too thin (0.20)" for one sampled too thinly, "no window"
// for one without windows in every leg.
func PointOffsetText(pc *clocks.PointClock) string {
	switch {
	case pc == nil || pc.Ours == nil:
		return "no window"
	case pc.OffsetPct == nil || pc.MeanOffsetPct == nil:
		return "too thin"
	}
	s := fmt.Sprintf("%s (%s)", fixed(*pc.OffsetPct, 2), fixed(*pc.MeanOffsetPct, 2))
	if !pc.Judged {
		s = "too thin " + s
	}
	return s
}

// pointPM is one arm's power-managed share at a point.
func pointPM(pc *clocks.PointClock, ours bool) string {
	if pc == nil || pc.Ours == nil {
		return "—"
	}
	side := pc.Baseline
	if ours {
		side = pc.Ours
	}
	return optFixed2(side.PowerManagedPct)
}

// legTable is the legs' two tables. The first has a row per leg: its
// binding, boot, peak memory, points and reasons. The second has the clock
// of its busy samples: a row per leg, or, when some leg sampled several
// GPUs, a row per GPU of each leg with a GPU column. withModel adds a
// model column to both; where the second would then pass maxColumns, it
// is one table per model instead, each under the model's name.
func legTable(w io.Writer, legs []Leg, withModel bool) error {
	header := []string{"engine", "run", "binding", "boot", "peak GPU MiB", "points (max_concurrency/request_rate)", "reasons"}
	align := []tw.Align{tw.AlignLeft, tw.AlignLeft, tw.AlignLeft, tw.AlignLeft, tw.AlignRight, tw.AlignLeft, tw.AlignLeft}
	if withModel {
		header = append([]string{"model"}, header...)
		align = append([]tw.Align{tw.AlignLeft}, align...)
	}
	rows := make([][]string, 0, len(legs))
	for _, l := range legs {
		binding := "NO"
		if l.BindingEligible {
			binding = "yes"
		}
		row := []string{cell(l.Engine), l.Name, binding, dash(shortBoot(l.BootID)), optNum(l.PeakGPUMemoryMiB),
			dash(pointList(l.Points)), dash(strings.Join(l.Codes, ", "))}
		if withModel {
			row = append([]string{cell(l.Model)}, row...)
		}
		rows = append(rows, row)
	}
	if err := leftTable(w, header, align, rows); err != nil {
		return err
	}
	multi := false
	for _, l := range legs {
		multi = multi || len(l.GPUs) > 1
	}
	caption := "SM clock of each leg's busy samples"
	if multi {
		caption += ", per GPU"
	}
	if !withModel || len(legClockHeader(true, multi)) <= maxColumns {
		fmt.Fprintf(w, "\n%s:\n\n", caption)
		if err := legClockTable(w, legs, withModel, multi); err != nil {
			return err
		}
		return hostTables(w, legs, withModel)
	}
	for i := 0; i < len(legs); {
		j := i
		for j < len(legs) && legs[j].Model == legs[i].Model {
			j++
		}
		fmt.Fprintf(w, "\n%s, %s:\n\n", caption, cell(legs[i].Model))
		if err := legClockTable(w, legs[i:j], false, multi); err != nil {
			return err
		}
		i = j
	}
	return hostTables(w, legs, withModel)
}

// hostTables are the per-host tables of the multi-host legs among legs
// (SPEC §12.3): a row per host of each such leg, one table per model where
// withModel; nothing where no leg is multi-host.
func hostTables(w io.Writer, legs []Leg, withModel bool) error {
	var multi []Leg
	for _, l := range legs {
		if len(l.Hosts) > 0 {
			multi = append(multi, l)
		}
	}
	for i := 0; i < len(multi); {
		j := i
		for j < len(multi) && (!withModel || multi[j].Model == multi[i].Model) {
			j++
		}
		caption := "Each host of a multi-host leg: its role, its GPUs, the busy median SM clock of its slowest GPU, its GPUs' busy samples, and the reasons that name it"
		if withModel {
			caption += ", " + cell(multi[i].Model)
		}
		fmt.Fprintf(w, "\n%s:\n\n", caption)
		if err := hostTable(w, multi[i:j]); err != nil {
			return err
		}
		i = j
	}
	return nil
}

// hostTable is one per-host table: engine, run, host, role, GPUs, median
// MHz, busy samples, reasons.
func hostTable(w io.Writer, legs []Leg) error {
	header := []string{"engine", "run", "host", "role", "GPUs", "median MHz", "busy", "reasons"}
	align := []tw.Align{tw.AlignLeft, tw.AlignLeft, tw.AlignLeft, tw.AlignLeft, tw.AlignLeft, tw.AlignRight, tw.AlignRight, tw.AlignLeft}
	var rows [][]string
	for _, l := range legs {
		for _, h := range l.Hosts {
			gpus := make([]string, len(h.GPUs))
			for k, g := range h.GPUs {
				gpus[k] = strconv.Itoa(g)
			}
			rows = append(rows, []string{cell(l.Engine), l.Name, cell(h.Host), dash(cell(h.Role)), dash(strings.Join(gpus, ", ")),
				optNum(h.MedianMHz), optInt(h.BusySamples), dash(strings.Join(h.Codes, ", "))})
		}
	}
	return leftTable(w, header, align, rows)
}

// maxColumns is the most columns a table of report.md has: wider ones do
// not fit a reader's eye, nor a page.
const maxColumns = 8

// legClockHeader is the header of the legs' clock table.
func legClockHeader(withModel, multi bool) []string {
	h := []string{"engine", "run", "median MHz", "spread %", "busy", "idle", "throttle"}
	if multi {
		h = append(h[:2], append([]string{"GPU"}, h[2:]...)...)
	}
	if withModel {
		h = append([]string{"model"}, h...)
	}
	return h
}

// legClockTable is the legs' clock table: the clock of each leg's busy
// samples, or of each GPU's when multi.
func legClockTable(w io.Writer, legs []Leg, withModel, multi bool) error {
	header := legClockHeader(withModel, multi)
	align := make([]tw.Align, len(header))
	for i, h := range header {
		align[i] = tw.AlignRight
		if h == "engine" || h == "run" || h == "model" || h == "throttle" {
			align[i] = tw.AlignLeft
		}
	}
	var rows [][]string
	add := func(l Leg, r []string) {
		if withModel {
			r = append([]string{cell(l.Model)}, r...)
		}
		rows = append(rows, r)
	}
	for _, l := range legs {
		if !multi {
			add(l, []string{cell(l.Engine), l.Name, optNum(l.MedianMHz), optFixed2(l.SpreadPct), optInt(l.BusySamples), optInt(l.IdleSamples), dash(throttle(l.Throttle))})
			continue
		}
		if len(l.GPUs) == 0 {
			add(l, []string{cell(l.Engine), l.Name, "—", optNum(l.MedianMHz), optFixed2(l.SpreadPct), optInt(l.BusySamples), optInt(l.IdleSamples), dash(throttle(l.Throttle))})
			continue
		}
		for _, g := range l.GPUs {
			busy, idle := g.BusySamples, g.IdleSamples
			add(l, []string{cell(l.Engine), l.Name, gpuName(g.Host, g.Role, g.Index), optNum(g.MedianMHz), optFixed2(g.SpreadPct), optInt(&busy), optInt(&idle), dash(throttle(g.Throttle))})
		}
	}
	return leftTable(w, header, align, rows)
}

// leftTable renders a table with the given alignments.
func leftTable(w io.Writer, header []string, align []tw.Align, rows [][]string) error {
	t := newTable(w, align)
	hs := make([]any, len(header))
	for i, h := range header {
		hs[i] = h
	}
	t.Header(hs...)
	if err := t.Bulk(rows); err != nil {
		return err
	}
	return t.Render()
}

// GPULead says what the clock-per-GPU table holds.
const GPULead = "Each arm's SM clock at each GPU position (the legs' GPUs in index order; GPU: its index and uuid in the arm's first trusted leg), " +
	"merged over the arm's trusted legs: the median and the mean of busy samples, in MHz; the offsets |ours − baseline| / baseline × 100 of the " +
	"medians and of the means, each held to the offset bound; the median busy power draw, in W, reported and never a gate term."

// GPURows are the rows of a comparison's clock-per-GPU table, one per GPU
// position either arm has; none when both arms sampled one GPU per leg.
func GPURows(c Comparison) []GPURow {
	b := c.Clock
	if len(b.Ours.GPUs) == 0 && len(b.Baseline.GPUs) == 0 {
		return nil
	}
	ours, base := armGPUs(b.Ours, c.Legs), armGPUs(b.Baseline, c.Legs)
	offsets := map[int]clocks.GPUOffset{}
	for _, o := range b.GPUOffsets {
		offsets[o.Position] = o
	}
	var rows []GPURow
	for k := range max(len(ours), len(base)) {
		r := GPURow{Position: k}
		if k < len(ours) {
			r.Ours = &ours[k]
		}
		if k < len(base) {
			r.Baseline = &base[k]
		}
		if o, ok := offsets[k]; ok {
			r.OffsetPct, r.MeanOffsetPct = o.OffsetPct, o.MeanOffsetPct
		}
		rows = append(rows, r)
	}
	return rows
}

// GPURow is one GPU position of a comparison: each arm's GPU there, nil
// where the arm has no such position, and their offsets.
type GPURow struct {
	Position                 int
	Ours, Baseline           *clocks.GPUSide
	OffsetPct, MeanOffsetPct *float64
}

// armGPUs are an arm's GPU positions: its side's, or, for an arm of one
// GPU per leg, that GPU from the side and the arm's first trusted leg.
func armGPUs(s clocks.Side, legs []Leg) []clocks.GPUSide {
	if len(s.GPUs) > 0 || s.MedianMHz == nil {
		return s.GPUs
	}
	g := clocks.GPUSide{ClockStats: s.ClockStats}
	for _, l := range legs {
		if l.Engine == s.Engine && len(l.GPUs) > 0 {
			g.GPUIndex, g.GPUUUID = l.GPUs[0].Index, l.GPUs[0].UUID
			break
		}
	}
	return []clocks.GPUSide{g}
}

// gpuTable is the clock per GPU position in two tables, three where some
// position has power-managed samples: each arm's GPU, median and their
// offset; the means, their offset and the power; the power-managed share
// and its median clock.
func gpuTable(w io.Writer, ours, base string, rows []GPURow) error {
	managed := false
	for _, r := range rows {
		for _, g := range []*clocks.GPUSide{r.Ours, r.Baseline} {
			managed = managed || g != nil && g.PowerManagedPct != nil
		}
	}
	side := func(g *clocks.GPUSide) (gpu, median, mean, power string) {
		if g == nil {
			return "—", "—", "—", "—"
		}
		gpu = fmt.Sprintf("%s (%s)", gpuName(g.Host, g.Role, g.GPUIndex), cell(shortUUID(g.GPUUUID)))
		if g.PowerW != nil {
			power = fmt.Sprintf("%.1f", *g.PowerW)
		}
		return gpu, optNum(g.MedianMHz), optFixed2(g.MeanMHz), dash(power)
	}
	pm := func(g *clocks.GPUSide) (share, median string) {
		if g == nil {
			return "—", "—"
		}
		return optFixed2(g.PowerManagedPct), optNum(g.PowerManagedMedianMHz)
	}
	var medians, means, managedRows [][]string
	for _, r := range rows {
		pos := strconv.Itoa(r.Position)
		og, om, oa, op := side(r.Ours)
		bg, bm, ba, bp := side(r.Baseline)
		medians = append(medians, []string{pos, og, bg, om, bm, optFixed2(r.OffsetPct)})
		means = append(means, []string{pos, oa, ba, optFixed2(r.MeanOffsetPct), op, bp})
		os, omd := pm(r.Ours)
		bs, bmd := pm(r.Baseline)
		managedRows = append(managedRows, []string{pos, os, bs, omd, bmd})
	}
	o, b := cell(ours), cell(base)
	if err := rightTable(w, []string{"position", o + " GPU", b + " GPU", o + " median MHz", b + " median MHz", "offset %"}, medians); err != nil {
		return err
	}
	fmt.Fprintf(w, "\nThe means of busy samples and the median busy power at each position:\n\n")
	if err := rightTable(w, []string{"position", o + " mean MHz", b + " mean MHz", "mean offset %", o + " power W", b + " power W"}, means); err != nil {
		return err
	}
	if !managed {
		return nil
	}
	fmt.Fprintf(w, "\nThe power-managed share of busy samples at each position, and their median clock:\n\n")
	return rightTable(w, []string{"position", o + " power-managed %", b + " power-managed %", o + " power-managed median MHz", b + " power-managed median MHz"}, managedRows)
}

// shortUUID is a GPU uuid cut to its first group: "GPU-3b9d0f42".
func shortUUID(u string) string {
	if i := strings.IndexByte(u, '-'); i >= 0 {
		if j := strings.IndexByte(u[i+1:], '-'); j >= 0 {
			return u[:i+1+j]
		}
	}
	return u
}

// shortBoot is a boot id cut to its first 8 characters; a marker that is
// not an id ("[unproven]") is shown whole.
func shortBoot(id string) string {
	if id == clocks.Unproven {
		return id
	}
	if len(id) > 8 {
		return id[:8]
	}
	return id
}

// throttle prints recorded throttle bit sets compactly: "0x0, 0x4".
func throttle(list []string) string {
	out := make([]string, 0, len(list))
	for _, s := range list {
		bits, err := clocks.ParseThrottle(s)
		if err != nil {
			out = append(out, cell(s))
			continue
		}
		out = append(out, fmt.Sprintf("0x%x", bits))
	}
	return strings.Join(out, ", ")
}

func pointList(ids []ratio.PointID) string {
	out := make([]string, len(ids))
	for i, id := range ids {
		out[i] = id.Label()
	}
	return strings.Join(out, " ")
}

func dash(s string) string {
	if s == "" {
		return "—"
	}
	return s
}

func optNum(x *float64) string {
	if x == nil {
		return "—"
	}
	return num(*x)
}

func mib(x *float64) string {
	if x == nil {
		return "n/a (no valid memory record)"
	}
	return num(*x) + " MiB"
}

func optInt(x *int) string {
	if x == nil {
		return "—"
	}
	return strconv.Itoa(*x)
}

func optFixed2(x *float64) string {
	if x == nil {
		return "—"
	}
	return fmt.Sprintf("%.2f", *x)
}

func fixed2(x *float64) string {
	if x == nil {
		return "n/a"
	}
	return fixed(*x, 2)
}

// fixed prints x with d decimals or, where d decimals would show a
// non-zero value as 0 or print hundreds of digits, in exponent form: its
// shortest exact form when that is short (5e-324), else 4 significant
// digits. A value is never shown as 0 unless it is 0.
func fixed(x float64, d int) string {
	if a := math.Abs(x); a != 0 && (a >= 1e15 || a < 0.5*math.Pow10(-d)) {
		if s := strconv.FormatFloat(x, 'g', -1, 64); len(s) <= 10 {
			return s
		}
		return strconv.FormatFloat(x, 'g', 4, 64)
	}
	return strconv.FormatFloat(x, 'f', d, 64)
}

// cell is text for a table cell: one line, Markdown and pipes escaped.
func cell(s string) string { return text(s) }

// text escapes s so that Markdown shows it as written: no emphasis, code,
// inline link, HTML or table syntax can start inside it, and it stays on
// one line. Characters that cannot start syntax mid-line (a lone "]" or
// ">", a "<" before a space or digit, an underscore inside a word such as
// sm_clock_mhz) are left alone,
// so the raw file stays readable.
func text(s string) string {
	var b strings.Builder
	prev := rune(-1)
	for i := 0; i < len(s); {
		r, w := utf8.DecodeRuneInString(s[i:])
		next, _ := utf8.DecodeRuneInString(s[i+w:])
		switch {
		case r == '\n' || r == '\r':
			b.WriteByte(' ')
			r = ' '
		case strings.ContainsRune("\\`*|~&", r),
			r == '<' && (unicode.IsLetter(next) || strings.ContainsRune("/!?", next)),
			r == ']' && next == '(',
			r == '#' && i == 0,
			r == '_' && !(isWord(prev) && isWord(next)):
			b.WriteByte('\\')
			b.WriteRune(r)
		case r == utf8.RuneError && w == 1:
			b.WriteRune(utf8.RuneError) // a report is valid UTF-8
		default:
			b.WriteString(s[i : i+w])
		}
		prev = r
		i += w
	}
	return b.String()
}

func isWord(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) }

// grid is the "Grid" section: how clockgate grid ran the tree.
func (d *Document) grid(p func(format string, args ...any)) {
	g := d.Grid
	p("## Grid\n\n")
	seed := "none"
	if g.Seed != nil {
		seed = strconv.FormatInt(*g.Seed, 10)
	}
	p("- Order: %s, seed %s; plan sha256 `%s`.\n", text(g.Order), seed, text(g.PlanSHA256))
	p("- %d legs committed, %d failed attempts.\n\n", len(g.Legs), len(g.Failed))
	if len(g.Legs) > 0 {
		p("| leg | block | start °C | cooldown wait | attempts |\n| --- | --- | --- | --- | --- |\n")
		for _, l := range g.Legs {
			ts := make([]string, len(l.StartTempC))
			for i, c := range l.StartTempC {
				ts[i] = strconv.FormatFloat(c, 'f', 1, 64)
			}
			p("| %s/r%d | %d | %s | %.1f s | %d |\n", text(l.Engine), l.N, l.Block, strings.Join(ts, ", "), l.WaitS, l.Attempts)
		}
		p("\n")
	}
	if len(g.Failed) > 0 {
		p("Failed attempts:\n\n")
		for _, f := range g.Failed {
			cause := f.Cause
			if i := strings.IndexByte(cause, '\n'); i >= 0 {
				cause = cause[:i] + " …"
			}
			p("- %s/r%d, %s: %s\n", text(f.Engine), f.N, text(f.Phase), text(cause))
		}
		p("\n")
	}
}

// gpuName names a GPU in a table: its index, after its host and role in
// a multi-host leg ("node2/decode 0").
func gpuName(host, role string, index int) string {
	switch {
	case host == "":
		return strconv.Itoa(index)
	case role == "":
		return fmt.Sprintf("%s %d", cell(host), index)
	}
	return fmt.Sprintf("%s/%s %d", cell(host), cell(role), index)
}
