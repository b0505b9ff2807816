package report

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/clockgate/clockgate/summarize"
)

var update = flag.Bool("update", false, "rewrite golden files")

const treesDir = "../testdata/trees"

// htmlGolden are the trees whose report.html is a golden file.
var htmlGolden = []struct {
	tree   string
	allow  bool
	golden string
}{
	{"staircase", false, "../golden/staircase/report.html"},
	{"cross-boot", true, "../golden/cross-boot/with-override/report.html"},
	{"significance-separated", false, "../golden/significance-separated/report.html"},
	{"significance-ties", false, "../golden/significance-ties/report.html"},
	{"tp8", false, "../golden/tp8/report.html"},
	{"tp4-gpu-skew", false, "../golden/tp4-gpu-skew/report.html"},
	{"energy-disagree", false, "../golden/energy-disagree/report.html"},
}

// page summarizes a tree and renders its report.html and report.md.
func page(t *testing.T, root string, allow bool) (html, md []byte) {
	t.Helper()
	s, err := summarize.Summarize(root, summarize.Options{Baseline: "vllm", AllowCrossBoot: allow, Traces: true})
	if err != nil {
		t.Fatal(err)
	}
	var h, m bytes.Buffer
	if err := HTML(&h, s); err != nil {
		t.Fatal(err)
	}
	if err := Markdown(&m, s); err != nil {
		t.Fatal(err)
	}
	return h.Bytes(), m.Bytes()
}

// TestHTMLGolden compares report.html of the staircase tree, and of the
// cross-boot tree under the override, with their golden files;
// go test ./report -update rewrites them.
func TestHTMLGolden(t *testing.T) {
	for _, g := range htmlGolden {
		t.Run(g.golden, func(t *testing.T) {
			got, _ := page(t, filepath.Join(treesDir, g.tree), g.allow)
			if *update {
				if err := os.WriteFile(g.golden, got, 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(g.golden)
			if err != nil {
				t.Fatalf("%v (go test ./report -update writes it)", err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("%s differs from the golden file (go test ./report -update rewrites it):\n%s", g.golden, lineDiff(want, got))
			}
		})
	}
}

// TestHTMLSameTreeSameBytes renders one tree twice, the second time from a
// copy at another path reached by a relative path: not a byte may change.
func TestHTMLSameTreeSameBytes(t *testing.T) {
	first, _ := page(t, filepath.Join(treesDir, "cross-boot"), true)
	tmp := t.TempDir()
	if err := os.CopyFS(filepath.Join(tmp, "copied"), os.DirFS(filepath.Join(treesDir, "cross-boot"))); err != nil {
		t.Fatal(err)
	}
	t.Chdir(tmp)
	again, _ := page(t, "copied", true)
	if !bytes.Equal(first, again) {
		t.Errorf("report.html differs for the same tree at another path:\n%s", lineDiff(first, again))
	}
}

// lineDiff shows the first differing line of two texts with a little context.
func lineDiff(want, got []byte) string {
	w, g := strings.Split(string(want), "\n"), strings.Split(string(got), "\n")
	i := 0
	for i < len(w) && i < len(g) && w[i] == g[i] {
		i++
	}
	var b strings.Builder
	for j := max(0, i-2); j < i; j++ {
		fmt.Fprintf(&b, "  %4d   %.200s\n", j+1, w[j])
	}
	for j := i; j < min(len(w), i+4); j++ {
		fmt.Fprintf(&b, "- %4d   %.200s\n", j+1, w[j])
	}
	for j := i; j < min(len(g), i+4); j++ {
		fmt.Fprintf(&b, "+ %4d   %.200s\n", j+1, g[j])
	}
	fmt.Fprintf(&b, "(want %d lines, got %d)", len(w), len(g))
	return b.String()
}

// elem is an element of a parsed page.
type elem struct {
	name     string
	attr     map[string]string
	children []*elem
	parent   *elem
	// text is the element's own character data, joined; each piece is
	// also a "#text" child, so that textOf reads them in document order.
	text string
}

// parsePage parses report.html strictly, as XML: the page is meant to be
// well formed, so anything unescaped breaks the parse or shows as an element.
func parsePage(t *testing.T, src []byte) *elem {
	t.Helper()
	d := xml.NewDecoder(bytes.NewReader(src))
	d.Strict = true
	root := &elem{name: "#document", attr: map[string]string{}}
	cur := root
	for {
		tok, err := d.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("report.html is not well formed: %v", err)
		}
		switch tok := tok.(type) {
		case xml.StartElement:
			e := &elem{name: tok.Name.Local, attr: map[string]string{}, parent: cur}
			for _, a := range tok.Attr {
				e.attr[a.Name.Local] = a.Value
			}
			cur.children = append(cur.children, e)
			cur = e
		case xml.EndElement:
			cur = cur.parent
		case xml.CharData:
			cur.text += string(tok)
			cur.children = append(cur.children, &elem{name: "#text", text: string(tok), parent: cur})
		}
	}
	return root
}

// all lists the descendants of e that match, in document order.
func (e *elem) all(match func(*elem) bool) []*elem {
	var out []*elem
	for _, c := range e.children {
		if c.name == "#text" {
			continue
		}
		if match(c) {
			out = append(out, c)
		}
		out = append(out, c.all(match)...)
	}
	return out
}

func named(name string) func(*elem) bool { return func(e *elem) bool { return e.name == name } }

func withClass(name, class string) func(*elem) bool {
	return func(e *elem) bool {
		return e.name == name && strings.Contains(" "+e.attr["class"]+" ", " "+class+" ")
	}
}

func (e *elem) byID(id string) *elem {
	if got := e.all(func(c *elem) bool { return c.attr["id"] == id }); len(got) == 1 {
		return got[0]
	}
	return nil
}

func textOf(e *elem) string {
	var b strings.Builder
	var walk func(*elem)
	walk = func(e *elem) {
		if e.name == "#text" {
			b.WriteString(e.text)
		}
		for _, c := range e.children {
			walk(c)
		}
	}
	walk(e)
	return b.String()
}

// htmlSummary is what a page is checked against: summary.json.
type htmlSummary struct {
	Comparisons []struct {
		Model, Ours, Baseline string
		Energy                goldenEnergy
		Throughput, Memory    struct {
			BindingEligible bool `json:"binding_eligible"`
			Clock           struct {
				CrossBootOverride bool `json:"cross_boot_override"`
				Ours, Baseline    struct {
					GPUs []struct{ Position int }
				}
			}
			Value        *float64
			Significance struct{ Points int }
			Points       []struct {
				MaxConcurrency *int `json:"max_concurrency"`
				RequestRate    any  `json:"request_rate"`
				Ours, Baseline *float64
				Ratio          *float64
				OursCI         []*float64 `json:"ours_ci"`
				BaselineCI     []*float64 `json:"baseline_ci"`
				P              *float64
			}
			OursCI     []*float64 `json:"ours_ci"`
			BaselineCI []*float64 `json:"baseline_ci"`
			P          *float64
		}
	}
}

// htmlLegs is what the spread pictures are checked against: all-runs.json,
// each leg's bench objects as written.
type htmlLegs struct {
	Legs []struct {
		Model, Engine string
		Run           int
		Memory        *struct {
			PeakGPUMemoryMiB float64 `json:"peak_gpu_memory_mib"`
		}
		Bench []struct {
			MaxConcurrency   *int    `json:"max_concurrency"`
			RequestRate      any     `json:"request_rate"`
			OutputThroughput float64 `json:"output_throughput"`
		}
	}
}

// label is a point's label from its identity as summary.json and
// all-runs.json write it.
func label(mc *int, rr any) string {
	l := "none"
	if mc != nil {
		l = strconv.Itoa(*mc)
	}
	switch r := rr.(type) {
	case float64:
		return l + "/" + strconv.FormatFloat(r, 'f', -1, 64)
	case string:
		if r == "inf" || r == "Infinity" {
			return l + "/inf"
		}
	case nil:
		return l + "/inf"
	}
	return l + "/?"
}

// armValues are what the spread rows of one arm must draw.
type armValues struct {
	// values maps a point's label to its legs' output throughput (those
	// above 0) by run, and "memory" to their peak GPU memory.
	values map[string]map[string]float64
	// present holds each point the arm ran, with throughput or not.
	present map[string]bool
}

// legValues reads one arm's values from all-runs.json.
func (h htmlLegs) legValues(model, engine string) armValues {
	a := armValues{values: map[string]map[string]float64{}, present: map[string]bool{}}
	add := func(key, run string, v float64) {
		if a.values[key] == nil {
			a.values[key] = map[string]float64{}
		}
		a.values[key][run] = v
	}
	for _, l := range h.Legs {
		if l.Model != model || l.Engine != engine {
			continue
		}
		run := "r" + strconv.Itoa(l.Run)
		for _, b := range l.Bench {
			key := label(b.MaxConcurrency, b.RequestRate)
			a.present[key] = true
			if b.OutputThroughput > 0 {
				add(key, run, b.OutputThroughput)
			}
		}
		if l.Memory != nil {
			add("memory", run, l.Memory.PeakGPUMemoryMiB)
		}
	}
	return a
}

var number = regexp.MustCompile(`^[0-9]+(\.[0-9]+)?$`)

// TestHTMLPage parses each golden page and checks it against summary.json
// and report.md beside it: one picture per arm per comparison, each SVG
// titled, labelled for assistive technology and with both axes labelled
// and ticked; the badges of each ratio heading are its verdict (and
// OVERRIDDEN where the override waived a boot check); nothing loads from
// anywhere, nothing runs, and every link lands on the page.
func TestHTMLPage(t *testing.T) {
	for _, g := range htmlGolden {
		t.Run(g.golden, func(t *testing.T) {
			src, err := os.ReadFile(g.golden)
			if err != nil {
				t.Fatal(err)
			}
			raw, err := os.ReadFile(filepath.Join(filepath.Dir(g.golden), "summary.json"))
			if err != nil {
				t.Fatal(err)
			}
			var sum htmlSummary
			if err := json.Unmarshal(raw, &sum); err != nil {
				t.Fatal(err)
			}
			md, err := os.ReadFile(filepath.Join(filepath.Dir(g.golden), "report.md"))
			if err != nil {
				t.Fatal(err)
			}
			rawLegs, err := os.ReadFile(filepath.Join(filepath.Dir(g.golden), "all-runs.json"))
			if err != nil {
				t.Fatal(err)
			}
			var legs htmlLegs
			if err := json.Unmarshal(rawLegs, &legs); err != nil {
				t.Fatal(err)
			}
			doc := parsePage(t, src)
			checkPage(t, doc, sum, md)
			checkSpread(t, doc, sum, legs)
		})
	}
}

func checkPage(t *testing.T, doc *elem, sum htmlSummary, md []byte) {
	t.Helper()
	if len(sum.Comparisons) == 0 {
		t.Fatal("summary.json has no comparison; these pages are chosen to have one")
	}

	// One clock picture per arm per comparison, and no other; the
	// pictures of the legs' spread are checked by checkSpread.
	figures := doc.all(func(e *elem) bool { return e.name == "figure" && e.attr["class"] != "spread" })
	if len(figures) != 2*len(sum.Comparisons) {
		t.Errorf("%d figures for %d comparisons, want one per arm", len(figures), len(sum.Comparisons))
	}
	for i, c := range sum.Comparisons {
		for _, arm := range []struct{ role, engine string }{{"ours", c.Ours}, {"baseline", c.Baseline}} {
			fig := doc.byID(FigureID(i, arm.role))
			if fig == nil {
				t.Errorf("no figure #%s for %s", FigureID(i, arm.role), arm.engine)
				continue
			}
			svgs := fig.all(named("svg"))
			if len(svgs) != 1 {
				t.Errorf("figure #%s holds %d SVGs, want 1", FigureID(i, arm.role), len(svgs))
				continue
			}
			titles := svgs[0].all(named("title"))
			if len(titles) == 0 || !strings.HasPrefix(titles[0].text, arm.engine+" ("+arm.role+" arm of "+c.Model+")") {
				t.Errorf("figure #%s: the SVG's title does not name %s", FigureID(i, arm.role), arm.engine)
			}
			if got := fig.all(named("figcaption")); len(got) != 1 || !strings.HasPrefix(textOf(got[0]), arm.engine+" ("+arm.role+")") {
				t.Errorf("figure #%s: caption does not name %s (%s)", FigureID(i, arm.role), arm.engine, arm.role)
			}
		}
	}

	// Legs of several GPUs: in each arm's picture, each drawn leg one
	// named line per GPU, one of them the slowest; a key naming every GPU;
	// the pictures before the clock-per-GPU table, which comes before the
	// legs'. Legs of one GPU: none of that.
	var h3 []string
	for _, h := range doc.all(named("h3")) {
		h3 = append(h3, textOf(h))
	}
	for i, c := range sum.Comparisons {
		for _, arm := range []struct {
			role string
			n    int
		}{{"ours", len(c.Throughput.Clock.Ours.GPUs)}, {"baseline", len(c.Throughput.Clock.Baseline.GPUs)}} {
			fig := doc.byID(FigureID(i, arm.role))
			if fig == nil {
				continue
			}
			for _, leg := range fig.all(withClass("g", "leg")) {
				if len(leg.all(withClass("path", "busy")))+len(leg.all(withClass("g", "gpu"))) == 0 {
					continue // not drawn
				}
				lines, slowest := leg.all(withClass("g", "gpu")), leg.all(withClass("g", "slowest"))
				if arm.n == 0 && len(lines) != 0 || arm.n > 0 && (len(lines) != arm.n || len(slowest) != 1) {
					t.Errorf("#%s: %d GPU lines, %d slowest, for %d GPUs per leg", leg.attr["id"], len(lines), len(slowest), arm.n)
				}
				for _, l := range lines {
					if ts := l.all(named("title")); len(ts) != 1 || !strings.Contains(ts[0].text, " GPU "+l.attr["data-gpu"]+",") {
						t.Errorf("#%s: a GPU line is not named by its GPU", leg.attr["id"])
					}
				}
			}
			if got := len(fig.all(withClass("g", "gpu-key"))); got != arm.n {
				t.Errorf("#%s: %d GPUs in the key, want %d", FigureID(i, arm.role), got, arm.n)
			}
		}
		if len(c.Throughput.Clock.Ours.GPUs)+len(c.Throughput.Clock.Baseline.GPUs) == 0 {
			continue
		}
		want := []string{"Clock over time: " + c.Ours + " and " + c.Baseline, "Clock per GPU position of " + c.Ours + " and " + c.Baseline,
			"Legs of " + c.Ours + " and " + c.Baseline}
		at := -1
		for j, h := range h3 {
			if h == want[0] {
				at = j
			}
		}
		if at < 0 || at+3 > len(h3) || strings.Join(h3[at:at+3], "|") != strings.Join(want, "|") {
			t.Errorf("headings %q; want %q in this order", h3, want)
		}
	}

	// Every SVG: a title first, role="img", an aria-label, both axes
	// labelled, and numbers on both axes.
	svgs := doc.all(withClass("svg", "clock"))
	if len(svgs) != len(figures) {
		t.Errorf("%d clock SVGs on the page, %d clock figures", len(svgs), len(figures))
	}
	if all, spread := doc.all(named("svg")), doc.all(withClass("svg", "spread")); len(all) != len(svgs)+len(spread) {
		t.Errorf("%d SVGs on the page: %d clock, %d spread, and others", len(all), len(svgs), len(spread))
	}
	for i, s := range svgs {
		if kids := s.all(func(c *elem) bool { return c.parent == s }); len(kids) == 0 || kids[0].name != "title" || strings.TrimSpace(kids[0].text) == "" {
			t.Errorf("SVG %d: the first child is not a non-empty <title>", i)
		}
		if s.attr["role"] != "img" || strings.TrimSpace(s.attr["aria-label"]) == "" {
			t.Errorf("SVG %d: role %q, aria-label %q; want img and a label", i, s.attr["role"], s.attr["aria-label"])
		}
		var yLabel, xLabel bool
		for _, l := range s.all(withClass("text", "axis-label")) {
			yLabel = yLabel || (strings.Contains(l.text, "MHz") && strings.HasPrefix(l.attr["transform"], "rotate(-90"))
			xLabel = xLabel || (strings.Contains(l.text, "seconds") && l.attr["transform"] == "")
		}
		if !yLabel || !xLabel {
			t.Errorf("SVG %d: y axis labelled in MHz %v, x axis in seconds %v; want both", i, yLabel, xLabel)
		}
		var yTicks, xTicks int
		for _, tk := range s.all(withClass("text", "tick")) {
			if !number.MatchString(tk.text) {
				t.Errorf("SVG %d: tick label %q is not a number", i, tk.text)
			}
			switch tk.attr["text-anchor"] {
			case "end":
				yTicks++
			case "middle":
				xTicks++
			}
		}
		if yTicks < 3 || xTicks < 2 {
			t.Errorf("SVG %d: %d MHz tick labels and %d seconds tick labels; want at least 3 and 2", i, yTicks, xTicks)
		}
	}

	// Badges: the verdicts of summary.json and of report.md, heading by heading.
	var want []string
	for _, c := range sum.Comparisons {
		for _, r := range [][2]bool{
			{c.Throughput.BindingEligible, c.Throughput.Clock.CrossBootOverride},
			{c.Memory.BindingEligible, c.Memory.Clock.CrossBootOverride},
		} {
			want = append(want, strings.Join(Badges(r[0], r[1]), "+"))
		}
		if c.Energy.Points != nil && c.Energy.shown() {
			want = append(want, strings.Join(Badges(c.Energy.BindingEligible, c.Throughput.Clock.CrossBootOverride), "+"))
		}
	}
	var fromMD []string
	for _, m := range regexp.MustCompile(`(?m)^### (?:THROUGHPUT|MEMORY|ENERGY) .*: (ESTABLISHED|NOT ESTABLISHED)$`).FindAllSubmatch(md, -1) {
		fromMD = append(fromMD, string(m[1]))
	}
	var got []string
	for _, h := range doc.all(named("h3")) {
		badges := h.all(withClass("span", "badge"))
		if len(badges) == 0 {
			continue
		}
		var words []string
		for _, b := range badges {
			words = append(words, b.text)
			if cls := badgeClass(b.text); !strings.Contains(b.attr["class"], cls) {
				t.Errorf("badge %q has class %q, want %q", b.text, b.attr["class"], cls)
			}
		}
		if strings.Contains(h.text, "ESTABLISHED") {
			t.Errorf("heading %q still carries its verdict in words beside the badge", h.text)
		}
		got = append(got, strings.Join(words, "+"))
	}
	if strings.Join(got, ", ") != strings.Join(want, ", ") {
		t.Errorf("badges %q, summary.json says %q", got, want)
	}
	if len(fromMD) != len(got) {
		t.Errorf("report.md has %d ratio headings, the page %d with badges", len(fromMD), len(got))
	}
	for i := range min(len(fromMD), len(got)) {
		if verdict, _, _ := strings.Cut(got[i], "+"); verdict != fromMD[i] {
			t.Errorf("ratio %d: badge %q, report.md says %q", i+1, verdict, fromMD[i])
		}
	}

	// Self-contained: no script, nothing with a source, every link a
	// fragment of this page.
	if s := doc.all(named("script")); len(s) > 0 {
		t.Errorf("%d script elements", len(s))
	}
	for _, e := range doc.all(func(e *elem) bool { return e.attr["src"] != "" || e.attr["href"] != "" }) {
		href := e.attr["href"]
		if e.attr["src"] != "" || !strings.HasPrefix(href, "#") || doc.byID(href[1:]) == nil {
			t.Errorf("<%s> src %q href %q: want only links to an id on the page", e.name, e.attr["src"], href)
		}
	}
	styles := doc.all(named("style"))
	if len(styles) != 1 || !strings.Contains(styles[0].text, "@media print") || !strings.Contains(styles[0].text, "page-break-inside: avoid") {
		t.Error("want one inline style sheet with print rules that keep figures whole")
	}
}

// TestTreeTextLinksNowhere: a bare URL or e-mail address in a tree's text
// (here, names of stray files in its warnings) is shown as text, not made
// a link off the page by GFM's autolinking.
func TestTreeTextLinksNowhere(t *testing.T) {
	root := filepath.Join(t.TempDir(), "tree")
	if err := os.CopyFS(root, os.DirFS(filepath.Join(treesDir, "staircase"))); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"www.evil.example", filepath.Join("bench", "mail@evil.example")} {
		if err := os.WriteFile(filepath.Join(root, name), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	html, _ := page(t, root, false)
	d := parsePage(t, html)
	var warnings string
	for _, li := range d.all(named("li")) {
		warnings += textOf(li) + "\n"
	}
	for _, name := range []string{"www.evil.example", "bench/mail@evil.example"} {
		if !strings.Contains(warnings, name+": ") {
			t.Errorf("no warning names %s", name)
		}
	}
	for _, a := range d.all(named("a")) {
		if !strings.HasPrefix(a.attr["href"], "#") {
			t.Errorf("a link off the page: %q", a.attr["href"])
		}
	}
}

// scenarioDocs calls each with the document of every scenario tree that
// summarize reads (with traces, baseline vllm), by tree name; it fails
// when fewer than three in four of the trees are read.
func scenarioDocs(t *testing.T, each func(tree string, d *Document)) {
	t.Helper()
	trees, err := os.ReadDir(treesDir)
	if err != nil {
		t.Fatal(err)
	}
	read := 0
	for _, tr := range trees {
		s, err := summarize.Summarize(filepath.Join(treesDir, tr.Name()), summarize.Options{Baseline: "vllm", Traces: true})
		if err != nil {
			continue // a tree summarize refuses has no report
		}
		read++
		each(tr.Name(), Build(s))
	}
	if read < len(trees)*3/4 {
		t.Fatalf("only %d of %d trees summarized", read, len(trees))
	}
}

// TestHTMLOfReadsReportMDBack: report.html made from report.md read back
// is the page HTML renders, byte for byte, on every scenario tree; a
// report.md cut short, grown, or never written is refused.
func TestHTMLOfReadsReportMDBack(t *testing.T) {
	scenarioDocs(t, func(tree string, d *Document) {
		var want, md, got bytes.Buffer
		if err := d.HTML(&want); err != nil {
			t.Fatal(err)
		}
		if err := d.HTMLOf(&got, bytes.NewReader(nil)); err == nil || !strings.Contains(err.Error(), "report.md was not written first") {
			t.Fatalf("%s: before Markdown: %v", tree, err)
		}
		if err := d.Markdown(&md); err != nil {
			t.Fatal(err)
		}
		if err := d.HTMLOf(&got, bytes.NewReader(md.Bytes())); err != nil {
			t.Fatalf("%s: %v", tree, err)
		}
		if !bytes.Equal(got.Bytes(), want.Bytes()) {
			t.Fatalf("%s: report.html from report.md read back differs:\n%s", tree, lineDiff(want.Bytes(), got.Bytes()))
		}
		if err := d.HTMLOf(io.Discard, bytes.NewReader(md.Bytes()[:md.Len()-1])); err == nil || !strings.Contains(err.Error(), "reading report.md back") {
			t.Fatalf("%s: cut short: %v", tree, err)
		}
		if err := d.HTMLOf(io.Discard, bytes.NewReader(append(md.Bytes(), '\n'))); err == nil || !strings.Contains(err.Error(), "longer than written") {
			t.Fatalf("%s: grown: %v", tree, err)
		}
	})
}

// TestHTMLSameOnAnyCores: the sections are rendered on several goroutines
// and written in order; the page is the same bytes on 1, 2 and 7 of them,
// on every scenario tree.
func TestHTMLSameOnAnyCores(t *testing.T) {
	scenarioDocs(t, func(tree string, d *Document) {
		var one bytes.Buffer
		if err := d.htmlOn(&one, d.sections, 1); err != nil {
			t.Fatal(err)
		}
		for _, workers := range []int{2, 7} {
			var got bytes.Buffer
			if err := d.htmlOn(&got, d.sections, workers); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got.Bytes(), one.Bytes()) {
				t.Fatalf("%s: the page on %d goroutines differs from the page on one:\n%s", tree, workers, lineDiff(one.Bytes(), got.Bytes()))
			}
		}
	})
}

// failAfter is a writer that refuses every write once n bytes are written.
type failAfter struct{ n int }

var errFull = errors.New("disk full")

func (f *failAfter) Write(p []byte) (int, error) {
	if len(p) > f.n {
		return 0, errFull
	}
	f.n -= len(p)
	return len(p), nil
}

// TestHTMLStopsOnFailure: a section that cannot be decorated (its report.md
// read back names another reason than the summary has) or a page that
// cannot be written ends the page with that error, on any number of
// goroutines, whatever section it is: nothing is left waiting.
func TestHTMLStopsOnFailure(t *testing.T) {
	s, err := summarize.Summarize(filepath.Join(treesDir, "all-failed-point"), summarize.Options{Baseline: "vllm", Traces: true})
	if err != nil {
		t.Fatal(err)
	}
	d := Build(s)
	var md bytes.Buffer
	if err := d.Markdown(&md); err != nil {
		t.Fatal(err)
	}
	// The same bytes but one reason's code: as long, so report.md reads
	// back whole, but not the reason the summary has there.
	bad := bytes.Replace(md.Bytes(), []byte("- `leg.ineligible`"), []byte("- `leg.ineligiblX`"), 1)
	if bytes.Equal(bad, md.Bytes()) {
		t.Fatal("no leg.ineligible reason in the report to alter")
	}
	from := func(md []byte) func(emit func(int, []byte) error) error {
		return func(emit func(int, []byte) error) error {
			off := 0
			for _, sp := range d.spans {
				if err := emit(sp.section, md[off:off+sp.n]); err != nil {
					return err
				}
				off += sp.n
			}
			return nil
		}
	}
	// A page of 2,000 sections (the heading section again and again) that
	// cannot be written stops being rendered: the sections stop being
	// asked for long before the last, and no goroutine is left behind.
	head := md.Bytes()[:d.spans[0].n]
	const many = 2000
	goroutines := runtime.NumGoroutine()
	for _, workers := range []int{1, 2, 5} {
		err := d.htmlOn(io.Discard, from(bad), workers)
		if err == nil || !strings.Contains(err.Error(), "is not reason leg.ineligible") {
			t.Errorf("%d goroutines: a section naming another reason gives %v", workers, err)
		}
		for _, n := range []int{0, 100 << 10} {
			emitted := 0
			err := d.htmlOn(&failAfter{n}, func(emit func(int, []byte) error) error {
				for range many {
					emitted++
					if err := emit(-1, head); err != nil {
						return err
					}
				}
				return nil
			}, workers)
			if !errors.Is(err, errFull) || emitted == many {
				t.Errorf("%d goroutines, writer full after %d bytes: %v after %d of %d sections", workers, n, err, emitted, many)
			}
		}
	}
	for i := 0; runtime.NumGoroutine() > goroutines && i < 100; i++ {
		time.Sleep(10 * time.Millisecond)
	}
	if n := runtime.NumGoroutine(); n > goroutines {
		t.Errorf("%d goroutines after the failed pages, %d before", n, goroutines)
	}
}

// TestHTMLEnergy: a tree whose points are priced shows the ENERGY family
// in report.html, its heading badged with the family's verdict, each
// point's J per output token beside the other arm's, and its reasons
// listed with their codes.
func TestHTMLEnergy(t *testing.T) {
	h, _ := page(t, filepath.Join(treesDir, "energy-disagree"), false)
	for _, want := range []string{
		"ENERGY vllm-copy/vllm per point",
		"vllm-copy J/output token",
		"J (counter)",
		"<code>energy.disagree</code>",
		"differ by 7.41% &gt; 5% of the counter",
	} {
		if !bytes.Contains(h, []byte(want)) {
			t.Errorf("report.html lacks %q", want)
		}
	}
	h, _ = page(t, filepath.Join(treesDir, "staircase"), false)
	if bytes.Contains(h, []byte("ENERGY ")) {
		t.Errorf("report.html of a tree without point windows shows an ENERGY section")
	}
}
