package report

import (
	"bytes"
	"encoding/json"
	"fmt"
	"html"
	"io"
	"math"
	"math/rand"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/olekukonko/tablewriter"
	"github.com/olekukonko/tablewriter/renderer"
	"github.com/olekukonko/tablewriter/tw"
	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/extension"
	east "github.com/yuin/goldmark/extension/ast"
	gmtext "github.com/yuin/goldmark/text"
	"github.com/yuin/goldmark/util"

	"github.com/clockgate/clockgate/clocks"
	"github.com/clockgate/clockgate/ratio"
	"github.com/clockgate/clockgate/summarize"
)

var gfm = goldmark.New(goldmark.WithExtensions(extension.GFM))

// plain is the visible text of a node's inline content.
func plain(n ast.Node, src []byte) string {
	var b strings.Builder
	ast.Walk(n, func(c ast.Node, entering bool) (ast.WalkStatus, error) {
		if !entering {
			return ast.WalkContinue, nil
		}
		switch t := c.(type) {
		case *ast.Text:
			// The renderer, not the parser, drops the backslash of an escape.
			b.Write(util.UnescapePunctuations(t.Segment.Value(src)))
			if t.SoftLineBreak() {
				b.WriteByte(' ')
			}
		case *ast.String:
			b.Write(t.Value)
		}
		return ast.WalkContinue, nil
	})
	return b.String()
}

// parsed is what a report's AST holds, in document order.
type parsed struct {
	headings []heading
	tables   [][][]string // each table: header row, then body rows
	paras    []string
	// after maps a heading's index to the paragraphs after it, up to the
	// next heading.
	after map[int][]string
	// struck counts strikethrough spans: a report has none.
	struck int
}

type heading struct {
	level int
	text  string
}

func parse(t *testing.T, src []byte) parsed {
	t.Helper()
	doc := gfm.Parser().Parse(gmtext.NewReader(src))
	p := parsed{after: map[int][]string{}}
	err := ast.Walk(doc, func(n ast.Node, entering bool) (ast.WalkStatus, error) {
		if !entering {
			return ast.WalkContinue, nil
		}
		switch n := n.(type) {
		case *ast.Heading:
			p.headings = append(p.headings, heading{n.Level, plain(n, src)})
			return ast.WalkSkipChildren, nil
		case *east.Table:
			var rows [][]string
			for r := n.FirstChild(); r != nil; r = r.NextSibling() {
				var cells []string
				for c := r.FirstChild(); c != nil; c = c.NextSibling() {
					if _, ok := c.(*east.TableCell); !ok {
						return ast.WalkStop, fmt.Errorf("table row holds a %s", c.Kind())
					}
					cells = append(cells, plain(c, src))
				}
				rows = append(rows, cells)
			}
			p.tables = append(p.tables, rows)
			return ast.WalkSkipChildren, nil
		case *ast.Paragraph:
			s := plain(n, src)
			p.paras = append(p.paras, s)
			if i := len(p.headings) - 1; i >= 0 {
				p.after[i] = append(p.after[i], s)
			}
			return ast.WalkSkipChildren, nil
		}
		return ast.WalkContinue, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	ast.Walk(doc, func(n ast.Node, entering bool) (ast.WalkStatus, error) {
		if _, ok := n.(*east.Strikethrough); ok && entering {
			p.struck++
		}
		return ast.WalkContinue, nil
	})
	return p
}

// goldenSummary is what the report is checked against: summary.json beside it.
type goldenSummary struct {
	GatePass    bool `json:"gate_pass"`
	Comparisons []struct {
		Model, Ours, Baseline string
		Throughput, Memory    struct {
			Value           *float64
			BindingEligible bool `json:"binding_eligible"`
			Clock           goldenClock
			Significance    struct {
				Test              string
				Alpha             float64
				Points            int
				SignificantPoints int `json:"significant_points"`
			}
			Points []goldenPoint
			// MEMORY's test, on the family.
			OursCI     []*float64 `json:"ours_ci"`
			BaselineCI []*float64 `json:"baseline_ci"`
			P          *float64
		}
		Energy goldenEnergy
	}
	Warnings []string
}

// goldenEnergy is the part of the ENERGY family the report is checked
// against.
type goldenEnergy struct {
	BindingEligible bool `json:"binding_eligible"`
	Points          []struct {
		Point           string
		Value           *float64
		BindingEligible bool `json:"binding_eligible"`
		Ours, Baseline  *struct {
			JPerOutputToken *float64 `json:"j_per_output_token"`
		}
	}
}

// shown reports whether report.md shows the family: some point priced.
func (e goldenEnergy) shown() bool {
	for _, p := range e.Points {
		if p.Value != nil || p.Ours != nil || p.Baseline != nil {
			return true
		}
	}
	return false
}

var energyHeading = regexp.MustCompile(`^ENERGY (\S+)/(\S+) per point: (ESTABLISHED|NOT ESTABLISHED)$`)

// goldenClock is the part of a clock block the report is checked against.
type goldenClock struct {
	Caveats        []struct{ Code string }
	OffsetPct      *float64 `json:"offset_pct"`
	MeanOffsetPct  *float64 `json:"mean_offset_pct"`
	Ours, Baseline goldenSide
	GPUOffsets     []struct {
		Position      int
		OursGPU       int      `json:"ours_gpu"`
		BaselineGPU   int      `json:"baseline_gpu"`
		OffsetPct     *float64 `json:"offset_pct"`
		MeanOffsetPct *float64 `json:"mean_offset_pct"`
	} `json:"gpu_offsets"`
}

type goldenSide struct {
	Engine          string
	PowerW          *float64 `json:"power_w"`
	PowerManagedPct *float64 `json:"power_managed_pct"`
	GPUs            []struct {
		Position  int
		GPUIndex  int      `json:"gpu_index"`
		GPUUUID   string   `json:"gpu_uuid"`
		Host      string   `json:"host"`
		Role      string   `json:"role"`
		MedianMHz *float64 `json:"median_mhz"`
		MeanMHz   *float64 `json:"mean_mhz"`
		PowerW    *float64 `json:"power_w"`
		// The power management, where the legs record a limit.
		PowerManagedPct       *float64 `json:"power_managed_pct"`
		PowerManagedMedianMHz *float64 `json:"power_managed_median_mhz"`
	}
}

// multi reports whether either arm of the block sampled several GPUs.
func (c goldenClock) multi() bool { return len(c.Ours.GPUs) > 0 || len(c.Baseline.GPUs) > 0 }

// hosts reports whether either arm's GPUs are on named hosts: the legs
// are multi-host, and the legs' tables have a per-host table after them.
func (c goldenClock) hosts() bool {
	for _, s := range []goldenSide{c.Ours, c.Baseline} {
		for _, g := range s.GPUs {
			if g.Host != "" {
				return true
			}
		}
	}
	return false
}

// managed says whether some GPU of either arm has power-managed samples:
// the clock per GPU then has its third table.
func (c goldenClock) managed() bool {
	for _, s := range []goldenSide{c.Ours, c.Baseline} {
		for _, g := range s.GPUs {
			if g.PowerManagedPct != nil {
				return true
			}
		}
	}
	return false
}

type goldenPoint struct {
	MaxConcurrency *int `json:"max_concurrency"`
	Ours, Baseline *float64
	OursCI         []*float64 `json:"ours_ci"`
	BaselineCI     []*float64 `json:"baseline_ci"`
	P              *float64
	Clock          *goldenPointClock
}

// goldenPointClock is a point's own clock block (SPEC §10.2).
type goldenPointClock struct {
	Ours, Baseline *struct {
		PowerManagedPct *float64 `json:"power_managed_pct"`
	}
	OffsetPct     *float64 `json:"offset_pct"`
	MeanOffsetPct *float64 `json:"mean_offset_pct"`
	Judged        bool
}

// pointCells are the clock cells report.md must print for a point.
func pointCells(pc *goldenPointClock) []string {
	if pc == nil || pc.Ours == nil {
		return []string{"no window", "—", "—"}
	}
	off := "too thin"
	if pc.OffsetPct != nil {
		off = fmt.Sprintf("%.2f (%.2f)", *pc.OffsetPct, *pc.MeanOffsetPct)
		if !pc.Judged {
			off = "too thin " + off
		}
	}
	// No share where no limit was recorded (SPEC §11.1): "—", never 0.00.
	pm := func(x *float64) string {
		if x == nil {
			return "—"
		}
		return fmt.Sprintf("%.2f", *x)
	}
	return []string{off, pm(pc.Ours.PowerManagedPct), pm(pc.Baseline.PowerManagedPct)}
}

// ciCell is the cell report.md must print for an interval of
// summary.json: n/a where the arm has no median there.
func ciCell(median *float64, ci []*float64) string {
	if median == nil {
		return "n/a"
	}
	b := []string{"−∞", "+∞"}
	for i, x := range ci {
		if x != nil {
			b[i] = fixed(*x, 2)
		}
	}
	return "[" + b[0] + ", " + b[1] + "]"
}

// checkPCell checks a p cell against summary.json's p: "n/a" for null, the
// p at three decimals (from the unrounded value, so within half a unit of
// the rounded one), "~ " before it where p ≥ α.
func checkPCell(t *testing.T, where, cell string, p *float64) {
	t.Helper()
	if p == nil {
		if cell != "n/a" {
			t.Errorf("%s: p cell %q, summary.json p null", where, cell)
		}
		return
	}
	num, tilde := strings.CutPrefix(cell, "~ ")
	if tilde != (*p >= ratio.Alpha) {
		t.Errorf("%s: p cell %q for p %v: want \"~ \" exactly where p ≥ %v", where, cell, *p, ratio.Alpha)
	}
	got, err := strconv.ParseFloat(num, 64)
	if err != nil && !(num == "< 0.001" && *p < 0.0005) {
		t.Errorf("%s: p cell %q is not a p", where, cell)
		return
	}
	if err == nil && (len(num) != 5 || math.Abs(got-*p) > 0.0005+1e-4) {
		t.Errorf("%s: p cell %q for p %v: want three decimals of it", where, cell, *p)
	}
}

var ratioHeading = regexp.MustCompile(`^(THROUGHPUT|MEMORY) (\S+)/(\S+) (n/a|\d+\.\d{4}): (ESTABLISHED|NOT ESTABLISHED)$`)

// TestGoldenReportsAreGFM parses every golden report.md with goldmark's GFM
// and walks the AST: the headings, the ratio lines and every table must be
// what summary.json beside it says, and each table a real table.
func TestGoldenReportsAreGFM(t *testing.T) {
	paths, _ := filepath.Glob("../golden/*/report.md")
	more, _ := filepath.Glob("../golden/*/with-override/report.md")
	paths = append(paths, more...)
	if len(paths) < 16 {
		t.Fatalf("found %d golden reports, want one per scenario", len(paths))
	}
	for _, path := range paths {
		t.Run(path, func(t *testing.T) {
			src, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			raw, err := os.ReadFile(filepath.Join(filepath.Dir(path), "summary.json"))
			if err != nil {
				t.Fatal(err)
			}
			var sum goldenSummary
			if err := json.Unmarshal(raw, &sum); err != nil {
				t.Fatal(err)
			}
			checkReport(t, parse(t, src), sum)
		})
	}
}

// TestGoldenTablesFitMaxColumns: no table of any golden report.md is wider
// than maxColumns, the most a reader takes in at once.
func TestGoldenTablesFitMaxColumns(t *testing.T) {
	paths, _ := filepath.Glob("../golden/*/report.md")
	more, _ := filepath.Glob("../golden/*/with-override/report.md")
	paths = append(paths, more...)
	if len(paths) < 16 {
		t.Fatalf("found %d golden reports, want one per scenario", len(paths))
	}
	tables, widest := 0, 0
	for _, path := range paths {
		src, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		for _, tb := range parse(t, src).tables {
			tables++
			widest = max(widest, len(tb[0]))
			if len(tb[0]) > maxColumns {
				t.Errorf("%s: a table of %d columns, more than %d: %q", path, len(tb[0]), maxColumns, tb[0])
			}
		}
	}
	if tables == 0 || widest != maxColumns {
		t.Errorf("%d tables, the widest %d columns: the goldens should hold tables of exactly %d", tables, widest, maxColumns)
	}
}

func checkReport(t *testing.T, p parsed, sum goldenSummary) {
	t.Helper()
	if len(p.headings) == 0 || p.headings[0] != (heading{1, "clockgate summary"}) {
		t.Fatalf("first heading %+v, want H1 clockgate summary", p.headings)
	}
	if last := p.headings[len(p.headings)-1]; last != (heading{2, "Warnings"}) {
		t.Errorf("last heading %+v, want H2 Warnings", last)
	}
	var ratios []int
	var sections []string
	var energyHeads []string
	for i, h := range p.headings {
		switch {
		case h.level == 2 && h.text != "Warnings" && h.text != "Legs in no comparison":
			sections = append(sections, h.text)
		case h.level == 3 && ratioHeading.MatchString(h.text):
			ratios = append(ratios, i)
		case h.level == 3 && energyHeading.MatchString(h.text):
			energyHeads = append(energyHeads, h.text)
		case h.level == 3 && strings.HasPrefix(h.text, "Legs of "):
		case h.level == 3 && strings.HasPrefix(h.text, "Clock per GPU position of "):
		default:
			if h.level != 1 && h.level != 2 {
				t.Errorf("unexpected heading %+v", h)
			}
		}
	}
	if len(sections) != len(sum.Comparisons) || len(ratios) != 2*len(sum.Comparisons) {
		t.Fatalf("%d sections and %d ratio headings for %d comparisons", len(sections), len(ratios), len(sum.Comparisons))
	}
	var wantEnergy []string
	for _, c := range sum.Comparisons {
		if c.Energy.shown() {
			wantEnergy = append(wantEnergy, fmt.Sprintf("ENERGY %s/%s per point: %s", c.Ours, c.Baseline, map[bool]string{true: "ESTABLISHED", false: "NOT ESTABLISHED"}[c.Energy.BindingEligible]))
		}
	}
	if strings.Join(energyHeads, "\n") != strings.Join(wantEnergy, "\n") {
		t.Errorf("ENERGY headings %q, want %q", energyHeads, wantEnergy)
	}
	caveats := 0
	for _, para := range p.paras {
		if strings.HasPrefix(para, "CAVEAT: ") {
			caveats++
			if !strings.Contains(para, " (OVERRIDDEN): ") {
				t.Errorf("caveat without (OVERRIDDEN): %q", para)
			}
		}
		if strings.HasPrefix(para, "|") {
			t.Errorf("a paragraph that should have been a table: %q", para)
		}
	}
	wantCaveats := 0
	for i, c := range sum.Comparisons {
		if want := fmt.Sprintf("%s: %s vs %s", c.Model, c.Ours, c.Baseline); sections[i] != want {
			t.Errorf("section %q, want %q", sections[i], want)
		}
		for j, fam := range []struct {
			name    string
			value   *float64
			binding bool
		}{{"THROUGHPUT", c.Throughput.Value, c.Throughput.BindingEligible}, {"MEMORY", c.Memory.Value, c.Memory.BindingEligible}} {
			idx := ratios[2*i+j]
			m := ratioHeading.FindStringSubmatch(p.headings[idx].text)
			value := "n/a"
			if fam.value != nil {
				value = fmt.Sprintf("%.4f", *fam.value)
			}
			verdict := "NOT ESTABLISHED"
			if fam.binding {
				verdict = "ESTABLISHED"
			}
			if m[1] != fam.name || m[2] != c.Ours || m[3] != c.Baseline || m[4] != value || m[5] != verdict {
				t.Errorf("heading %q, want %s %s/%s %s: %s", p.headings[idx].text, fam.name, c.Ours, c.Baseline, value, verdict)
			}
			after := append(p.after[idx], "", "")
			sig := c.Throughput.Significance
			wantSig := fmt.Sprintf("significance: %d of %d point", sig.SignificantPoints, sig.Points)
			if sig.Points == 0 {
				wantSig = "significance: no point both arms have"
			}
			if j == 1 {
				wantSig = "significance: "
			}
			if !strings.HasPrefix(after[0], wantSig) || (sig.Points > 0 && j == 0 && !strings.Contains(after[0], " at α = 0.05 (Mann–Whitney U, ")) {
				t.Errorf("after %q: %q, want the significance line %q…", p.headings[idx].text, after[0], wantSig)
			}
			if fam := []struct {
				Test              string
				Alpha             float64
				Points            int
				SignificantPoints int `json:"significant_points"`
			}{c.Throughput.Significance, c.Memory.Significance}[j]; fam.Test != "mann-whitney-u" || fam.Alpha != ratio.Alpha ||
				fam.SignificantPoints > fam.Points {
				t.Errorf("%s: significance %+v", p.headings[idx].text, fam)
			}
			if obs := after[1]; !strings.HasPrefix(obs, "observed: median SM clock "+c.Ours+" ") || !strings.Contains(obs, "busy samples") ||
				!strings.Contains(obs, "idle samples excluded") || !strings.Contains(obs, "offset") || !strings.Contains(obs, "estimated effect") {
				t.Errorf("after %q: %q, want the observed: line second", p.headings[idx].text, obs)
			} else {
				checkObserved(t, p.headings[idx].text, obs, c.Throughput.Clock)
			}
		}
		// MEMORY's medians and intervals, and whether its line says it differs.
		m := c.Memory
		if len(m.OursCI) != 2 || len(m.BaselineCI) != 2 {
			t.Errorf("%s: memory ours_ci %v baseline_ci %v; want two bounds each", sections[i], m.OursCI, m.BaselineCI)
		}
		memLine := append(p.after[ratios[2*i+1]], "")[0]
		if differs := strings.HasPrefix(memLine, "significance: peak GPU memory differs at α = 0.05"); differs != (m.P != nil && *m.P < ratio.Alpha) {
			t.Errorf("%s: memory line %q for p %v", sections[i], memLine, m.P)
		}
		if m.P != nil && !strings.Contains(memLine, "p = ") {
			t.Errorf("%s: memory line %q does not give p", sections[i], memLine)
		}
		if m.Significance.Points == 1 {
			// Both arms have a memory median: each is followed by its interval.
			has := 1.0
			want := fmt.Sprintf(" MiB (95%% CI %s), %s ", ciCell(&has, m.OursCI), c.Baseline)
			want2 := fmt.Sprintf(" MiB (95%% CI %s).", ciCell(&has, m.BaselineCI))
			para := strings.Join(p.after[ratios[2*i+1]], "\n")
			if !strings.Contains(para, want) || !strings.Contains(para, want2) {
				t.Errorf("%s: no memory paragraph with %q and %q", sections[i], want, want2)
			}
		}
		wantCaveats += 2 * len(c.Throughput.Clock.Caveats)
	}
	if caveats != wantCaveats {
		t.Errorf("%d CAVEAT lines, want %d", caveats, wantCaveats)
	}
	// Tables: per comparison the points' throughput table and the table of
	// what they rest on, the ENERGY table when shown, the clock-per-GPU
	// tables (medians, means, and power-managed where some GPU was) when
	// either arm sampled several GPUs, then the legs' table and their clock
	// table (with a GPU column then), and the per-host table of multi-host
	// legs; then the legs in no comparison, when there are any.
	legCols := []string{"engine", "run", "binding", "boot", "peak GPU MiB", "points (max_concurrency/request_rate)", "reasons"}
	clockCols := []string{"engine", "run", "median MHz", "spread %", "busy", "idle", "throttle"}
	multiClockCols := append([]string{"engine", "run", "GPU"}, clockCols[2:]...)
	var kinds []string
	for _, c := range sum.Comparisons {
		kinds = append(kinds, "points", "evidence")
		if c.Energy.shown() {
			kinds = append(kinds, "energy")
		}
		if c.Throughput.Clock.multi() {
			kinds = append(kinds, "gpus", "gpumeans")
			if c.Throughput.Clock.managed() {
				kinds = append(kinds, "gpumanaged")
			}
		}
		kinds = append(kinds, "legs", "legclock")
		if c.Throughput.Clock.hosts() {
			kinds = append(kinds, "hosts")
		}
	}
	ci := -1
	var gpuTables [][][]string
	for i, tb := range p.tables {
		if len(tb) < 2 {
			t.Errorf("table %d has no body row", i)
			continue
		}
		for r, row := range tb {
			if len(row) != len(tb[0]) {
				t.Errorf("table %d row %d has %d cells, the header %d", i, r, len(row), len(tb[0]))
			}
		}
		kind := "uncompared"
		if i < len(kinds) {
			kind = kinds[i]
		}
		if kind == "points" {
			ci++
		}
		switch kind {
		case "points", "evidence":
			c := sum.Comparisons[ci]
			header := "max_concurrency,request_rate," + c.Ours + "," + c.Baseline + ",ratio," +
				c.Ours + " (95% CI)," + c.Baseline + " (95% CI),p"
			// The point clock's columns only where some point has windows
			// in every leg.
			withClock := false
			for _, pt := range c.Throughput.Points {
				withClock = withClock || pt.Clock != nil && pt.Clock.Ours != nil
			}
			if kind == "evidence" {
				header = "max_concurrency,request_rate," + c.Ours + " output tokens," + c.Baseline + " output tokens,output Δ %"
				if withClock {
					header += ",point clock offset %," + c.Ours + " power-managed %," + c.Baseline + " power-managed %"
				}
			}
			if strings.Join(tb[0], ",") != header {
				t.Errorf("%s table header %q", kind, tb[0])
			}
			if len(tb)-1 != len(c.Throughput.Points) {
				t.Errorf("%s table has %d rows, summary.json %d points", kind, len(tb)-1, len(c.Throughput.Points))
				continue
			}
			for r, pt := range c.Throughput.Points {
				row, where := tb[r+1], fmt.Sprintf("%s point %d", c.Ours, r+1)
				if kind == "evidence" {
					if withClock && len(row) == 8 {
						if got, want := strings.Join(row[5:], " | "), strings.Join(pointCells(pt.Clock), " | "); got != want {
							t.Errorf("%s: point clock cells %q, summary.json says %q", where, got, want)
						}
					}
					continue
				}
				if len(row) != 8 {
					continue
				}
				if got, want := row[5], ciCell(pt.Ours, pt.OursCI); got != want {
					t.Errorf("%s: ours CI cell %q, summary.json says %q", where, got, want)
				}
				if got, want := row[6], ciCell(pt.Baseline, pt.BaselineCI); got != want {
					t.Errorf("%s: baseline CI cell %q, summary.json says %q", where, got, want)
				}
				checkPCell(t, where, row[7], pt.P)
			}
		case "energy":
			// A column per point; the ENERGY row says each point's value
			// and verdict as summary.json does.
			c := sum.Comparisons[ci]
			if len(tb[0]) != len(c.Energy.Points)+1 || len(tb) != 7 || tb[5][0] != "ENERGY" {
				t.Errorf("energy table %q for %d points", tb, len(c.Energy.Points))
				continue
			}
			for k, pt := range c.Energy.Points {
				want := "n/a"
				if pt.Value != nil {
					want = fmt.Sprintf("%.4f", *pt.Value)
				}
				want += " " + map[bool]string{true: "ESTABLISHED", false: "NOT ESTABLISHED"}[pt.BindingEligible]
				if tb[0][k+1] != pt.Point || tb[5][k+1] != want {
					t.Errorf("%s energy column %d: %q %q, summary.json %s %s", c.Ours, k, tb[0][k+1], tb[5][k+1], pt.Point, want)
				}
			}
		case "gpus", "gpumeans", "gpumanaged":
			gpuTables = append(gpuTables, tb)
			c := sum.Comparisons[ci]
			if want := map[bool]int{false: 2, true: 3}[c.Throughput.Clock.managed()]; len(gpuTables) == want {
				checkGPUTable(t, c.Ours+" vs "+c.Baseline, gpuTables, c.Ours, c.Baseline, c.Throughput.Clock)
				gpuTables = nil
			}
		case "legs":
			if strings.Join(tb[0], ",") != strings.Join(legCols, ",") {
				t.Errorf("legs table header %q, want %q", tb[0], legCols)
			}
		case "legclock":
			want := clockCols
			if sum.Comparisons[ci].Throughput.Clock.multi() {
				want = multiClockCols
			}
			if strings.Join(tb[0], ",") != strings.Join(want, ",") {
				t.Errorf("legs' clock table header %q, want %q", tb[0], want)
			}
		case "hosts":
			if h := strings.Join(tb[0], ","); h != "engine,run,host,role,GPUs,median MHz,busy,reasons" {
				t.Errorf("hosts table header %q", tb[0])
			}
		default:
			if i == len(kinds) {
				if strings.Join(tb[0], ",") != "model,"+strings.Join(legCols, ",") {
					t.Errorf("uncompared legs table header %q", tb[0])
				}
				continue
			}
			if h := strings.Join(tb[0], ","); h != "model,"+strings.Join(clockCols, ",") && h != strings.Join(multiClockCols, ",") {
				t.Errorf("uncompared legs' clock table header %q", tb[0])
			}
		}
	}
	if p.struck != 0 {
		t.Errorf("%d strikethrough spans: a `~` opened one", p.struck)
	}
	if n := len(p.tables); n != len(kinds) && n < len(kinds)+2 {
		t.Errorf("%d tables for %d comparisons, want %d, or two more or one per model more", n, len(sum.Comparisons), len(kinds))
	}
}

// checkObserved checks an observed: line against summary.json's clock
// block: the mean offset, for arms of several GPUs the worst GPU
// position, and each arm's median busy power where either has one.
func checkObserved(t *testing.T, where, obs string, c goldenClock) {
	t.Helper()
	if c.OffsetPct != nil && !strings.Contains(obs, fmt.Sprintf("; offset %.2f%%, mean offset %.2f%%", *c.OffsetPct, *c.MeanOffsetPct)) {
		t.Errorf("after %q: %q does not give offset %.2f%% and mean offset %.2f%%", where, obs, *c.OffsetPct, *c.MeanOffsetPct)
	}
	if got := strings.Contains(obs, "worst GPU position"); got != (len(c.GPUOffsets) > 0) {
		t.Errorf("after %q: %q names a worst GPU position: %v, with %d GPU offsets", where, obs, got, len(c.GPUOffsets))
	}
	if c.Ours.PowerW == nil && c.Baseline.PowerW == nil {
		if strings.Contains(obs, "power") {
			t.Errorf("after %q: %q speaks of power, and neither arm sampled it", where, obs)
		}
		return
	}
	w := func(x *float64) string {
		if x == nil {
			return "n/a (not sampled)"
		}
		return fmt.Sprintf("%.1f W", *x)
	}
	per := ""
	if c.multi() {
		per = " per GPU"
	}
	want := fmt.Sprintf("; median busy power%s %s %s, %s %s", per, c.Ours.Engine, w(c.Ours.PowerW), c.Baseline.Engine, w(c.Baseline.PowerW))
	_, rest, found := strings.Cut(obs, want)
	// What may follow the power: the power management, for arms that
	// record a limit, and nothing else.
	managed := c.Ours.PowerManagedPct != nil || c.Baseline.PowerManagedPct != nil
	switch {
	case !found:
		t.Errorf("after %q: %q does not give %q", where, obs, want)
	case !managed && rest != "":
		t.Errorf("after %q: %q has %q after the power, and neither arm records a limit", where, obs, rest)
	case managed:
		pct := func(x *float64) string {
			if x == nil {
				return "n/a"
			}
			return fmt.Sprintf("%.1f%%", *x)
		}
		if w := fmt.Sprintf("; power-managed %s and %s of busy samples at ", pct(c.Ours.PowerManagedPct), pct(c.Baseline.PowerManagedPct)); !strings.HasPrefix(rest, "; free clock (no power cap) ") || !strings.Contains(rest, w) {
			t.Errorf("after %q: %q does not say the power management (%q)", where, rest, w)
		}
	}
}

// checkGPUTable checks a clock-per-GPU table against summary.json: one
// row per GPU position either arm has, each cell what the block says.
// checkGPUTable checks the clock-per-GPU tables (medians, means and
// power, power-managed) against summary.json.
func checkGPUTable(t *testing.T, where string, tbs [][][]string, ours, base string, c goldenClock) {
	t.Helper()
	// The columns of each table, as indices into the one row that holds
	// every value.
	cols := [][]int{{0, 1, 2, 3, 4, 7}, {0, 5, 6, 8, 9, 10}, {0, 11, 12, 13, 14}}
	all := []string{"position", ours + " GPU", base + " GPU", ours + " median MHz", base + " median MHz",
		ours + " mean MHz", base + " mean MHz", "offset %", "mean offset %", ours + " power W", base + " power W",
		ours + " power-managed %", base + " power-managed %", ours + " power-managed median MHz", base + " power-managed median MHz"}
	pick := func(row []string, k int) []string {
		var out []string
		for _, i := range cols[k] {
			out = append(out, row[i])
		}
		return out
	}
	managed := c.managed()
	if want := map[bool]int{false: 2, true: 3}[managed]; len(tbs) != want {
		t.Fatalf("%s: %d clock-per-GPU tables, want %d", where, len(tbs), want)
	}
	for k, tb := range tbs {
		if strings.Join(tb[0], ",") != strings.Join(pick(all, k), ",") {
			t.Errorf("%s: clock-per-GPU table %d header %q", where, k, tb[0])
		}
	}
	n := max(len(c.Ours.GPUs), len(c.Baseline.GPUs))
	for k, tb := range tbs {
		if len(tb)-1 != n {
			t.Errorf("%s: %d rows in clock-per-GPU table %d for %d GPU positions", where, len(tb)-1, k, n)
			return
		}
	}
	opt := func(x *float64, f string) string {
		if x == nil {
			return "—"
		}
		return fmt.Sprintf(f, *x)
	}
	for r := range n {
		want := []string{strconv.Itoa(r), "—", "—", "—", "—", "—", "—", "—", "—", "—", "—", "—", "—", "—", "—"}
		for k, s := range []goldenSide{c.Ours, c.Baseline} {
			if r >= len(s.GPUs) {
				continue
			}
			g := s.GPUs[r]
			uuid := g.GPUUUID
			if len(uuid) > 12 {
				uuid = uuid[:12]
			}
			want[1+k] = fmt.Sprintf("%d (%s)", g.GPUIndex, uuid)
			switch {
			case g.Host != "" && g.Role != "":
				want[1+k] = fmt.Sprintf("%s/%s %d (%s)", g.Host, g.Role, g.GPUIndex, uuid)
			case g.Host != "":
				want[1+k] = fmt.Sprintf("%s %d (%s)", g.Host, g.GPUIndex, uuid)
			}
			want[3+k] = opt(g.MedianMHz, "%g")
			want[5+k] = opt(g.MeanMHz, "%.2f")
			want[9+k] = opt(g.PowerW, "%.1f")
			want[11+k], want[13+k] = opt(g.PowerManagedPct, "%.2f"), opt(g.PowerManagedMedianMHz, "%g")
		}
		for _, o := range c.GPUOffsets {
			if o.Position == r {
				want[7], want[8] = opt(o.OffsetPct, "%.2f"), opt(o.MeanOffsetPct, "%.2f")
			}
		}
		for k, tb := range tbs {
			if got, w := strings.Join(tb[r+1], "|"), strings.Join(pick(want, k), "|"); got != w {
				t.Errorf("%s: clock-per-GPU table %d row %d is %q; summary.json says %q", where, k, r, got, w)
			}
		}
	}
}

// TestTextRendersAsWritten renders text(s) with goldmark and checks the
// visible text is s itself: no emphasis, code, link, HTML, strikethrough
// or entity can start inside a message.
func TestTextRendersAsWritten(t *testing.T) {
	for _, s := range []string{
		"sm_clock_mhz.n: want an integer", "_starts and ends_", "a __dunder__ b", "*bold* and **strong**",
		"`code` span", "<div>raw</div> and <http://example.com>", "a < b > c", "[link](http://x) and [ref]",
		"![img](x.png)", "~~struck~~ ~one~", "&amp; &lt; &#65;", "# not a heading", `back\slash \*`,
		"pipe | in | text", `"[Requested functionality has been deprecated]"`, "x_", "_x", "100%_",
		"invalid \xff byte",
	} {
		var out bytes.Buffer
		if err := gfm.Convert([]byte("p "+text(s)+"\n"), &out); err != nil {
			t.Fatal(err)
		}
		got := html.UnescapeString(regexp.MustCompile(`<[^>]*>`).ReplaceAllString(strings.TrimSpace(out.String()), ""))
		want := "p " + strings.ToValidUTF8(s, "\uFFFD")
		if got != want {
			t.Errorf("text(%q) = %q renders as %q (html %q)", s, text(s), got, out.String())
		}
		if strings.Contains(out.String(), "<em>") || strings.Contains(out.String(), "<code>") || strings.Contains(out.String(), "<del>") {
			t.Errorf("text(%q) renders markup: %s", s, out.String())
		}
	}
}

// TestTableCellsKeepPipes puts a pipe in an engine name: the table must
// keep its columns.
func TestTableCellsKeepPipes(t *testing.T) {
	var b bytes.Buffer
	legs := []Leg{{Engine: "fast|engine", Name: "r1", Codes: []string{"clock.missing"}}, {Engine: "vllm", Name: "r2", BindingEligible: true}}
	if err := legTable(&b, legs, false); err != nil {
		t.Fatal(err)
	}
	p := parse(t, b.Bytes())
	if len(p.tables) != 2 || len(p.tables[0]) != 3 || len(p.tables[1]) != 3 {
		t.Fatalf("tables %q", p.tables)
	}
	row := p.tables[0][1]
	if len(row) != 7 || row[0] != "fast|engine" || row[2] != "NO" || row[6] != "clock.missing" || p.tables[0][2][2] != "yes" {
		t.Errorf("row %q", row)
	}
	if row := p.tables[1][1]; len(row) != 7 || row[0] != "fast|engine" || row[1] != "r1" {
		t.Errorf("clock row %q", row)
	}
}

// TestOverrideIsACaveatNotAReason: under --allow-cross-boot the cross-boot
// check is a CAVEAT line marked (OVERRIDDEN) and no longer a reason; the
// offset still is.
func TestOverrideIsACaveatNotAReason(t *testing.T) {
	for _, allow := range []bool{false, true} {
		s, err := summarize.Summarize("../testdata/trees/cross-boot", summarize.Options{Baseline: "vllm", AllowCrossBoot: allow})
		if err != nil {
			t.Fatal(err)
		}
		var b bytes.Buffer
		if err := Markdown(&b, s); err != nil {
			t.Fatal(err)
		}
		md := b.String()
		caveat := "CAVEAT: clock.cross_boot (OVERRIDDEN): arms on 2 boots: fastengine [f6bbbfc6-2d4a-4c3e-9b1f-7a5e8d2c4b19], vllm [2fca2b02-8e3d-4f1a-b6c7-1d9e5a3f8c20]\n"
		reason := "- `clock.cross_boot`: arms on 2 boots"
		if got := strings.Count(md, caveat); got != map[bool]int{false: 0, true: 2}[allow] {
			t.Errorf("allow %v: %d caveat lines", allow, got)
		}
		if got := strings.Count(md, reason); got != map[bool]int{false: 2, true: 0}[allow] {
			t.Errorf("allow %v: %d cross_boot reasons", allow, got)
		}
		if got := strings.Count(md, "- `clock.offset`: median offset 12.79% > 1.0%"); got != 2 {
			t.Errorf("allow %v: %d offset reasons, want 2", allow, got)
		}
		if got := strings.Count(md, "observed: median SM clock fastengine 2470 MHz (82.25% of max), vllm 2190 MHz (72.93% of max); offset 12.79%, mean offset 12.55%; "+
			"estimated effect 9.65% (× transfer 0.7548); busy samples fastengine 61, vllm 50; idle samples excluded fastengine 3, vllm 0; "+
			"median busy power fastengine 41.1 W, vllm 41.4 W\n"); got != 2 {
			t.Errorf("allow %v: %d observed lines with the two-boot capture's numbers, want 2", allow, got)
		}
		if !strings.Contains(md, ": NOT ESTABLISHED\n") || strings.Contains(md, ": ESTABLISHED\n") {
			t.Errorf("allow %v: the override must not establish the ratio", allow)
		}
	}
}

func fp(x float64) *float64 { return &x }

// TestObservedLine: the observed: line gives the mean offset beside the
// median's, for arms of several GPUs the worst GPU position (the largest
// median offset, of equal ones the largest mean offset), and each arm's
// median busy power where either arm sampled it, never where neither did.
func TestObservedLine(t *testing.T) {
	side := func(engine string, mhz float64, power *float64) clocks.Side {
		return clocks.Side{Engine: engine, ClockStats: clocks.ClockStats{MedianMHz: fp(mhz), PctOfMax: fp(82.25), PowerW: power, BusySamples: 61, IdleSamplesExcluded: 3}}
	}
	one := &clocks.Block{Ours: side("fastengine", 2470, fp(612.25)), Baseline: side("vllm", 2190, fp(598.04)),
		OffsetPct: fp(12.79), MeanOffsetPct: fp(12.55), EstimatedEffectPct: fp(9.65), TransferCoefficient: clocks.TransferCoefficient}
	if got, want := Observed(one), "observed: median SM clock fastengine 2470 MHz (82.25% of max), vllm 2190 MHz (82.25% of max); "+
		"offset 12.79%, mean offset 12.55%; estimated effect 9.65% (× transfer 0.7548); busy samples fastengine 61, vllm 61; "+
		"idle samples excluded fastengine 3, vllm 3; median busy power fastengine 612.2 W, vllm 598.0 W"; got != want {
		t.Errorf("Observed =\n%s\nwant\n%s", got, want)
	}
	one.Baseline.PowerW = nil
	if got := Observed(one); !strings.HasSuffix(got, "; median busy power fastengine 612.2 W, vllm n/a (not sampled)") {
		t.Errorf("one arm without power: %s", got)
	}
	one.Ours.PowerW = nil
	if got := Observed(one); strings.Contains(got, "power") || !strings.HasSuffix(got, "idle samples excluded fastengine 3, vllm 3") {
		t.Errorf("neither arm sampled power: %s", got)
	}

	tp := *one
	tp.Ours.GPUs = []clocks.GPUSide{{Position: 0}, {Position: 1}, {Position: 2}}
	tp.Baseline.GPUs = tp.Ours.GPUs
	tp.Ours.PowerW, tp.Baseline.PowerW = fp(611.75), fp(617.97)
	tp.GPUOffsets = []clocks.GPUOffset{
		{Position: 0, OursGPU: 4, BaselineGPU: 0, OffsetPct: fp(0.51), MeanOffsetPct: fp(0.02)},
		{Position: 1, OursGPU: 5, BaselineGPU: 1, OffsetPct: fp(0.51), MeanOffsetPct: fp(0.42)},
		{Position: 2, OursGPU: 6, BaselineGPU: 2, OffsetPct: fp(0.2), MeanOffsetPct: fp(0.9)},
	}
	tp.OffsetPct, tp.MeanOffsetPct = fp(0.51), fp(0.9)
	got := Observed(&tp)
	if !strings.Contains(got, "; offset 0.51%, mean offset 0.90%; worst GPU position 1 (fastengine GPU 5, vllm GPU 1); estimated effect") {
		t.Errorf("several GPUs: %s; want the worst position 1, the larger mean of the two at 0.51%%", got)
	}
	if !strings.HasSuffix(got, "; median busy power per GPU fastengine 611.8 W, vllm 618.0 W") {
		t.Errorf("several GPUs: %s; want the power per GPU", got)
	}
	if strings.Contains(Observed(one), "worst GPU") {
		t.Error("arms of one GPU have no worst GPU position")
	}
}

// TestLegTableGPURows: when some leg sampled several GPUs, the legs'
// table has a GPU column and a row per GPU of each trusted leg, the leg's
// own cells on its first GPU's row only; an untrusted leg is one row, its
// GPU unknown.
func TestLegTableGPURows(t *testing.T) {
	m := func(x float64) *float64 { return &x }
	legs := []Leg{
		{Engine: "fastengine", Name: "r1", BindingEligible: false, Trusted: true, BootID: "8c3f1e6a-7d2b", Codes: []string{"clock.gpu_skew"},
			PeakGPUMemoryMiB: m(68455.75), Points: []ratio.PointID{{MaxConcurrency: 1}},
			GPUs: []LegGPU{{Index: 4, MedianMHz: m(1980), SpreadPct: m(2.27), BusySamples: 48, IdleSamples: 12, Throttle: []string{"0x0000000000000000"}},
				{Index: 5, MedianMHz: m(1950), SpreadPct: m(2.31), BusySamples: 48, IdleSamples: 12, Throttle: []string{"0x0000000000000004"}}}},
		{Engine: "vllm", Name: "r1", Codes: []string{"clock.stream_invalid"}},
	}
	var b bytes.Buffer
	if err := legTable(&b, legs, false); err != nil {
		t.Fatal(err)
	}
	p := parse(t, b.Bytes())
	if len(p.tables) != 2 {
		t.Fatalf("%d tables", len(p.tables))
	}
	want := [][]string{
		{"engine", "run", "binding", "boot", "peak GPU MiB", "points (max_concurrency/request_rate)", "reasons"},
		{"fastengine", "r1", "NO", "8c3f1e6a", "68455.75", "1/inf", "clock.gpu_skew"},
		{"vllm", "r1", "NO", "—", "—", "—", "clock.stream_invalid"},
	}
	if got := p.tables[0]; fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("legs table\n%q\nwant\n%q", got, want)
	}
	want = [][]string{
		{"engine", "run", "GPU", "median MHz", "spread %", "busy", "idle", "throttle"},
		{"fastengine", "r1", "4", "1980", "2.27", "48", "12", "0x0"},
		{"fastengine", "r1", "5", "1950", "2.31", "48", "12", "0x4"},
		{"vllm", "r1", "—", "—", "—", "—", "—", "—"},
	}
	if got := p.tables[1]; fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("legs' clock table\n%q\nwant\n%q", got, want)
	}
	if !strings.Contains(b.String(), "\nSM clock of each leg's busy samples, per GPU:\n") {
		t.Errorf("no caption:\n%s", b.String())
	}
}

// TestLegTablesOfModels: the legs in no comparison carry a model column;
// where the clock table would then pass maxColumns (a leg of several
// GPUs), it is one table per model, under the model's name. Every table
// fits maxColumns.
func TestLegTablesOfModels(t *testing.T) {
	m := func(x float64) *float64 { return &x }
	gpus := []LegGPU{{Index: 0, MedianMHz: m(1980), SpreadPct: m(1), BusySamples: 40, IdleSamples: 2, Throttle: []string{"0x0000000000000000"}},
		{Index: 1, MedianMHz: m(1965), SpreadPct: m(2), BusySamples: 41, IdleSamples: 1, Throttle: []string{"0x0000000000000000"}}}
	for _, multi := range []bool{false, true} {
		legs := []Leg{{Model: "llama", Engine: "vllm", Name: "r1", MedianMHz: m(1980), BootID: clocks.Unproven},
			{Model: "qwen", Engine: "vllm", Name: "r1", MedianMHz: m(1965)}}
		if multi {
			legs[0].GPUs = gpus
		}
		var b bytes.Buffer
		if err := legTable(&b, legs, true); err != nil {
			t.Fatal(err)
		}
		p := parse(t, b.Bytes())
		want := map[bool]int{false: 2, true: 3}[multi]
		if len(p.tables) != want {
			t.Fatalf("multi %v: %d tables, want %d:\n%s", multi, len(p.tables), want, b.String())
		}
		for _, tb := range p.tables {
			if len(tb[0]) > maxColumns {
				t.Errorf("multi %v: %d columns > %d: %q", multi, len(tb[0]), maxColumns, tb[0])
			}
		}
		if got := p.tables[0][1]; got[0] != "llama" || got[4] != "[unproven]" {
			t.Errorf("multi %v: leg row %q: want the model and the whole boot marker", multi, got)
		}
		if !multi {
			if got := p.tables[1][0]; got[0] != "model" || len(got) != 8 {
				t.Errorf("clock header %q", got)
			}
			continue
		}
		for _, caption := range []string{"\nSM clock of each leg's busy samples, per GPU, llama:\n", "\nSM clock of each leg's busy samples, per GPU, qwen:\n"} {
			if !strings.Contains(b.String(), caption) {
				t.Errorf("no caption %q:\n%s", caption, b.String())
			}
		}
		if got := fmt.Sprint(p.tables[1]); got != fmt.Sprint([][]string{
			{"engine", "run", "GPU", "median MHz", "spread %", "busy", "idle", "throttle"},
			{"vllm", "r1", "0", "1980", "1.00", "40", "2", "0x0"}, {"vllm", "r1", "1", "1965", "2.00", "41", "1", "0x0"}}) {
			t.Errorf("llama's clock table %s", got)
		}
	}
}

// TestGPUTableArmOfOneGPU: a comparison of an arm of two GPUs per leg with
// an arm of one has a row per position either arm has; the arm of one
// GPU shows its GPU at position 0, named from its first trusted leg, and
// "—" where it has no position.
func TestGPUTableArmOfOneGPU(t *testing.T) {
	c := Comparison{Ours: "fastengine", Baseline: "vllm", Clock: &clocks.Block{
		Ours: clocks.Side{Engine: "fastengine", ClockStats: clocks.ClockStats{MedianMHz: fp(1980)}, GPUs: []clocks.GPUSide{
			{Position: 0, GPUIndex: 2, GPUUUID: "GPU-c8a41f07-93b2-4e5d", ClockStats: clocks.ClockStats{MedianMHz: fp(1980), MeanMHz: fp(1973.25), PowerW: fp(612.25)}},
			{Position: 1, GPUIndex: 3, GPUUUID: "GPU-05f6e3d9-2b7a-4c81", ClockStats: clocks.ClockStats{MedianMHz: fp(1965), MeanMHz: fp(1961.5)}}}},
		Baseline:   clocks.Side{Engine: "vllm", ClockStats: clocks.ClockStats{MedianMHz: fp(1980), MeanMHz: fp(1974.11), PowerW: fp(598.04)}},
		GPUOffsets: []clocks.GPUOffset{{Position: 0, OursGPU: 2, BaselineGPU: 0, OffsetPct: fp(0), MeanOffsetPct: fp(0.04)}},
	}, Legs: []Leg{
		{Engine: "vllm", Name: "r1"},
		{Engine: "vllm", Name: "r2", Trusted: true, GPUs: []LegGPU{{Index: 0, UUID: "GPU-3b9d0f42-6c1e-4a7b"}}},
	}}
	var b bytes.Buffer
	if err := gpuTable(&b, c.Ours, c.Baseline, GPURows(c)); err != nil {
		t.Fatal(err)
	}
	p := parse(t, b.Bytes())
	want := [][][]string{{
		{"position", "fastengine GPU", "vllm GPU", "fastengine median MHz", "vllm median MHz", "offset %"},
		{"0", "2 (GPU-c8a41f07)", "0 (GPU-3b9d0f42)", "1980", "1980", "0.00"},
		{"1", "3 (GPU-05f6e3d9)", "—", "1965", "—", "—"},
	}, {
		{"position", "fastengine mean MHz", "vllm mean MHz", "mean offset %", "fastengine power W", "vllm power W"},
		{"0", "1973.25", "1974.11", "0.04", "612.2", "598.0"},
		{"1", "1961.50", "—", "—", "—", "—"},
	}}
	if fmt.Sprint(p.tables) != fmt.Sprint(want) {
		t.Errorf("clock-per-GPU tables\n%q\nwant\n%q", p.tables, want)
	}
	c.Clock.Ours.GPUs = nil
	if rows := GPURows(c); rows != nil {
		t.Errorf("arms of one GPU each: %d rows, want no table", len(rows))
	}
}

// TestPooledTableIsAFreshOne: a table taken from the pool, after tables
// of other shapes, alignments and widths, renders what a new one does.
func TestPooledTableIsAFreshOne(t *testing.T) {
	rng := rand.New(rand.NewSource(5))
	aligns := []tw.Align{tw.AlignLeft, tw.AlignRight, tw.AlignCenter}
	words := []string{"", "a", "—", "1/inf", "fastengine", "0x0000000000000004", "2467.5", "日本語", "x|y"}
	for trial := range 200 {
		cols := 1 + rng.Intn(13)
		align := make([]tw.Align, cols)
		header := make([]any, cols)
		for i := range align {
			align[i] = aligns[rng.Intn(len(aligns))]
			header[i] = words[rng.Intn(len(words))] + "h"
		}
		rows := make([][]string, rng.Intn(6))
		for r := range rows {
			rows[r] = make([]string, cols)
			for c := range rows[r] {
				rows[r][c] = words[rng.Intn(len(words))]
			}
		}
		render := func(tb interface {
			Header(...any)
			Bulk(any) error
			Render() error
		}) {
			tb.Header(header...)
			if err := tb.Bulk(rows); err != nil {
				t.Fatal(err)
			}
			if err := tb.Render(); err != nil {
				t.Fatal(err)
			}
		}
		var pooled, fresh bytes.Buffer
		render(newTable(&pooled, align))
		render(tablewriter.NewTable(&fresh,
			tablewriter.WithRenderer(renderer.NewMarkdown()),
			tablewriter.WithHeaderAutoFormat(tw.Off),
			tablewriter.WithRowAutoFormat(tw.Off),
			tablewriter.WithRowAutoWrap(tw.WrapNone),
			tablewriter.WithHeaderAutoWrap(tw.WrapNone),
			tablewriter.WithAlignment(tw.Alignment(align))))
		if pooled.String() != fresh.String() {
			t.Fatalf("trial %d: the pooled table renders\n%s\na new one\n%s", trial, pooled.String(), fresh.String())
		}
	}
}

// TestPooledTableAllocatesLittle: a table taken from the pool again does
// not allocate a new stringer cache (a map of 10,240 entries, some hundreds
// of KiB) when it is reset; a small table then costs some KiB to render.
func TestPooledTableAllocatesLittle(t *testing.T) {
	render := func() {
		tb := newTable(io.Discard, []tw.Align{tw.AlignLeft, tw.AlignRight})
		tb.Header("arm", "MHz")
		if err := tb.Bulk([][]string{{"fastengine", "2467.5"}, {"baseline", "2190"}}); err != nil {
			t.Fatal(err)
		}
		if err := tb.Render(); err != nil {
			t.Fatal(err)
		}
	}
	render()
	// The least over some renders: under the race detector the pool drops
	// some of what it is given, and a table made anew allocates more.
	least := uint64(math.MaxUint64)
	for range 20 {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		render()
		runtime.ReadMemStats(&after)
		least = min(least, after.TotalAlloc-before.TotalAlloc)
	}
	const most = 64 << 10
	if least > most {
		t.Errorf("a pooled two-row table allocates %d bytes to render, want at most %d", least, most)
	}
}
