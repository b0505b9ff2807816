package report

import (
	"bytes"
	"encoding/json"
	"fmt"
	"html"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/extension"
	east "github.com/yuin/goldmark/extension/ast"
	gmtext "github.com/yuin/goldmark/text"
	"github.com/yuin/goldmark/util"

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
			Clock           struct {
				Caveats []struct{ Code string }
			}
			Significance struct {
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
	}
	Warnings []string
}

type goldenPoint struct {
	MaxConcurrency *int `json:"max_concurrency"`
	Ours, Baseline *float64
	OursCI         []*float64 `json:"ours_ci"`
	BaselineCI     []*float64 `json:"baseline_ci"`
	P              *float64
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
	for i, h := range p.headings {
		switch {
		case h.level == 2 && h.text != "Warnings" && h.text != "Legs in no comparison":
			sections = append(sections, h.text)
		case h.level == 3 && ratioHeading.MatchString(h.text):
			ratios = append(ratios, i)
		case h.level == 3 && strings.HasPrefix(h.text, "Legs of "):
		default:
			if h.level != 1 && h.level != 2 {
				t.Errorf("unexpected heading %+v", h)
			}
		}
	}
	if len(sections) != len(sum.Comparisons) || len(ratios) != 2*len(sum.Comparisons) {
		t.Fatalf("%d sections and %d ratio headings for %d comparisons", len(sections), len(ratios), len(sum.Comparisons))
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
	// Tables: per comparison the points table, then the legs table; then
	// the legs in no comparison, when there are any.
	legCols := []string{"engine", "run", "binding", "boot", "median MHz", "spread %", "busy", "idle", "throttle", "peak GPU MiB",
		"points (max_concurrency/request_rate)", "reasons"}
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
		switch {
		case i < 2*len(sum.Comparisons) && i%2 == 0:
			c := sum.Comparisons[i/2]
			if strings.Join(tb[0], ",") != "max_concurrency,request_rate,"+c.Ours+","+c.Baseline+",ratio,"+
				c.Ours+" (95% CI),"+c.Baseline+" (95% CI),p,"+
				c.Ours+" output tokens,"+c.Baseline+" output tokens,output Δ %" {
				t.Errorf("points table header %q", tb[0])
			}
			if len(tb)-1 != len(c.Throughput.Points) {
				t.Errorf("points table has %d rows, summary.json %d points", len(tb)-1, len(c.Throughput.Points))
				continue
			}
			for r, pt := range c.Throughput.Points {
				row, where := tb[r+1], fmt.Sprintf("%s point %d", c.Ours, r+1)
				if len(row) != 11 {
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
		case i < 2*len(sum.Comparisons):
			if strings.Join(tb[0], ",") != strings.Join(legCols, ",") {
				t.Errorf("legs table header %q", tb[0])
			}
		default:
			if tb[0][0] != "model" || len(tb[0]) != len(legCols)+1 {
				t.Errorf("uncompared legs table header %q", tb[0])
			}
		}
	}
	if p.struck != 0 {
		t.Errorf("%d strikethrough spans: a `~` opened one", p.struck)
	}
	if n := len(p.tables); n != 2*len(sum.Comparisons) && n != 2*len(sum.Comparisons)+1 {
		t.Errorf("%d tables for %d comparisons", n, len(sum.Comparisons))
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
	if len(p.tables) != 1 || len(p.tables[0]) != 3 {
		t.Fatalf("tables %q", p.tables)
	}
	row := p.tables[0][1]
	if len(row) != 12 || row[0] != "fast|engine" || row[2] != "NO" || row[11] != "clock.missing" || p.tables[0][2][2] != "yes" {
		t.Errorf("row %q", row)
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
		if got := strings.Count(md, "observed: median SM clock fastengine 2470 MHz (82.25% of max), vllm 2190 MHz (72.93% of max); offset 12.79%; "+
			"estimated effect 9.65% (× transfer 0.7548); busy samples fastengine 61, vllm 50; idle samples excluded fastengine 3, vllm 0\n"); got != 2 {
			t.Errorf("allow %v: %d observed lines with the two-boot capture's numbers, want 2", allow, got)
		}
		if !strings.Contains(md, ": NOT ESTABLISHED\n") || strings.Contains(md, ": ESTABLISHED\n") {
			t.Errorf("allow %v: the override must not establish the ratio", allow)
		}
	}
}
