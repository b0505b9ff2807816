package report

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"runtime"
	"slices"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/extension"
	east "github.com/yuin/goldmark/extension/ast"
	"github.com/yuin/goldmark/renderer"
	"github.com/yuin/goldmark/renderer/html"
	gmtext "github.com/yuin/goldmark/text"
	"github.com/yuin/goldmark/util"

	"github.com/clockgate/clockgate/clocks"
	"github.com/clockgate/clockgate/summarize"
)

// HTML writes report.html for a summary.
func HTML(w io.Writer, s *summarize.Summary) error {
	return Build(s).HTML(w)
}

// HTML writes the document as one self-contained page: report.md rendered
// by goldmark (GFM, raw HTML off), with a verdict badge beside each ratio
// heading, each reason linked to the picture that shows it, and per
// comparison an inline SVG picture of each arm's SM clock over time, read
// from the legs' streams under Tree. No script, no network, no timestamp:
// the same tree gives the same bytes.
func (d *Document) HTML(w io.Writer) error { return d.html(w, d.sections) }

// HTMLOf writes report.html as HTML does, from md: the bytes Markdown last
// wrote for the document (report.md read back), whose sections it need
// not render again.
func (d *Document) HTMLOf(w io.Writer, md io.Reader) error {
	if len(d.spans) == 0 {
		return errors.New("report.html: report.md was not written first")
	}
	return d.html(w, func(emit func(section int, md []byte) error) error {
		var buf []byte
		for _, sp := range d.spans {
			buf = slices.Grow(buf[:0], sp.n)[:sp.n]
			if _, err := io.ReadFull(md, buf); err != nil {
				return fmt.Errorf("report.html: reading report.md back: %w", err)
			}
			if err := emit(sp.section, buf); err != nil {
				return err
			}
		}
		if n, _ := md.Read(make([]byte, 1)); n > 0 {
			return errors.New("report.html: report.md read back is longer than written")
		}
		return nil
	})
}

// html writes the page around the Markdown sections renders.
func (d *Document) html(w io.Writer, sections func(emit func(section int, md []byte) error) error) error {
	return d.htmlOn(w, sections, runtime.GOMAXPROCS(0))
}

// goldmarks are goldmark instances with report.html's extensions and
// renderers, one for each section being rendered at a time.
var goldmarks = sync.Pool{New: func() any {
	return goldmark.New(goldmark.WithExtensions(extension.GFM),
		goldmark.WithRendererOptions(html.WithXHTML(), renderer.WithNodeRenderers(util.Prioritized(splicer{}, 100))))
}}

// htmlOn writes the page around the Markdown sections renders, rendering
// the sections on that many goroutines (inOrder): each section is a
// document of its own (it starts with its heading, so the pieces render as
// the whole would).
func (d *Document) htmlOn(w io.Writer, sections func(emit func(section int, md []byte) error) error, workers int) error {
	bw := bufio.NewWriterSize(w, 64<<10)
	// The page is also well-formed XML (void elements closed, goldmark's
	// XHTML output), so that a strict parser can check it.
	bw.WriteString("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\" />\n")
	bw.WriteString("<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\" />\n")
	// Nothing may load: the page is whole as written.
	bw.WriteString("<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'\" />\n")
	fmt.Fprintf(bw, "<title>%s</title>\n<style>\n%s</style>\n</head>\n<body>\n<main>\n", esc(d.Title), pageCSS)

	err := inOrder(workers, func(submit func(func(b *bytes.Buffer) error) error) error {
		return sections(func(section int, md []byte) error {
			// report.md carries a tree's text as written; a control
			// character in it would make the page ill-formed. (The copy
			// is the section's own: md is the caller's to reuse.)
			src := bytes.Map(func(r rune) rune {
				if unicode.IsControl(r) && r != '\n' && r != '\t' {
					return utf8.RuneError
				}
				return r
			}, md)
			return submit(func(b *bytes.Buffer) error {
				gm := goldmarks.Get().(goldmark.Markdown)
				defer goldmarks.Put(gm)
				doc := gm.Parser().Parse(gmtext.NewReader(src))
				if err := d.decorate(doc, src, section); err != nil {
					return fmt.Errorf("report.html: %w", err)
				}
				return gm.Renderer().Render(b, src, doc)
			})
		})
	}, func(section []byte) error {
		_, err := bw.Write(section)
		return err
	})
	if err != nil {
		return err
	}
	bw.WriteString("</main>\n</body>\n</html>\n")
	return bw.Flush()
}

// FigureID is the fragment of the picture of one arm of the i-th
// comparison (counting from 0): role is "ours" or "baseline".
func FigureID(i int, role string) string { return fmt.Sprintf("c%d-%s", i+1, role) }

// FiguresID is the fragment of the i-th comparison's clock pictures.
func FiguresID(i int) string { return fmt.Sprintf("c%d-clock", i+1) }

// Badges are the words of the badges beside a ratio's heading in
// report.html: its verdict, and OVERRIDDEN when the cross-boot override
// waived a boot check on its clock block.
func Badges(established, overridden bool) []string {
	out := []string{Verdict(established)}
	if overridden {
		out = append(out, "OVERRIDDEN")
	}
	return out
}

// The nodes spliced into the Markdown's AST. Their HTML is written by this
// package, every piece of text in it escaped; goldmark only places it.
var (
	kindFigures = ast.NewNodeKind("ClockgateFigures")
	kindBadges  = ast.NewNodeKind("ClockgateBadges")
)

// figuresNode is pictures spliced into a section: write writes their HTML
// straight into the section's, when it is rendered.
type figuresNode struct {
	ast.BaseBlock
	write func(w io.Writer) error
}

// clockNode is the i-th comparison's clock pictures, to splice in.
func (d *Document) clockNode(i int) *figuresNode {
	return &figuresNode{write: func(w io.Writer) error { return d.figures(w, i) }}
}

func (n *figuresNode) Kind() ast.NodeKind         { return kindFigures }
func (n *figuresNode) Dump(src []byte, level int) { ast.DumpHelper(n, src, level, nil, nil) }

type badgesNode struct {
	ast.BaseInline
	words []string
}

func (n *badgesNode) Kind() ast.NodeKind         { return kindBadges }
func (n *badgesNode) Dump(src []byte, level int) { ast.DumpHelper(n, src, level, nil, nil) }

type splicer struct{}

func (splicer) RegisterFuncs(r renderer.NodeRendererFuncRegisterer) {
	r.Register(kindFigures, func(w util.BufWriter, _ []byte, n ast.Node, entering bool) (ast.WalkStatus, error) {
		if entering {
			if err := n.(*figuresNode).write(w); err != nil {
				return ast.WalkStop, fmt.Errorf("report.html: %w", err)
			}
		}
		return ast.WalkSkipChildren, nil
	})
	r.Register(kindBadges, func(w util.BufWriter, _ []byte, n ast.Node, entering bool) (ast.WalkStatus, error) {
		if entering {
			for _, word := range n.(*badgesNode).words {
				_, _ = fmt.Fprintf(w, ` <span class="badge %s">%s</span>`, badgeClass(word), esc(word))
			}
		}
		return ast.WalkSkipChildren, nil
	})
}

func badgeClass(word string) string {
	return strings.ToLower(strings.ReplaceAll(word, " ", "-"))
}

// decorate walks the report's AST, whose shape Markdown fixes: per
// comparison a level-2 heading, a level-3 heading per ratio with its
// reasons list, then the legs' heading, table and leg reasons. It puts
// badges on the ratio headings, links the reasons to the pictures,
// splices each family's picture of the legs' spread after its medians
// (THROUGHPUT's second points table, MEMORY's paragraph) and each comparison's
// clock pictures before its legs' heading, and turns the links GFM makes
// of bare URLs back into text.
func (d *Document) decorate(doc ast.Node, src []byte, section int) error {
	// GFM links bare URLs and e-mail addresses; in a tree's text they are
	// names, not links, and the page links nowhere but into itself.
	var autolinks []*ast.AutoLink
	_ = ast.Walk(doc, func(n ast.Node, entering bool) (ast.WalkStatus, error) {
		if a, ok := n.(*ast.AutoLink); ok && entering {
			autolinks = append(autolinks, a)
		}
		return ast.WalkContinue, nil
	})
	for _, a := range autolinks {
		a.Parent().ReplaceChild(a.Parent(), a, ast.NewString(a.Label(src)))
	}

	var top []ast.Node
	for c := doc.FirstChild(); c != nil; c = c.NextSibling() {
		top = append(top, c)
	}
	// The section's first level-2 heading is its comparison's, if any.
	ci, ri, h2 := -1, -1, max(section, 0)
	legs, energy := false, false
	// tables counts the tables of the ratio: THROUGHPUT has two, the
	// points' throughput and what it rests on.
	tables := 0
	for _, n := range top {
		switch n := n.(type) {
		case *ast.Heading:
			switch {
			case n.Level == 2:
				ci, ri, legs, energy = -1, -1, false, false
				if h2 < len(d.Comparisons) {
					ci = h2
				}
				h2++
			case n.Level == 3 && ci >= 0:
				cmp := &d.Comparisons[ci]
				if ri+1 < len(cmp.Ratios) {
					ri++
					tables = 0
					if err := badge(n, src, cmp.Ratios[ri], cmp.Clock.CrossBootOverride); err != nil {
						return err
					}
					continue
				}
				if !legs && !energy && cmp.ShowsEnergy() && strings.HasPrefix(plainText(n, src), "ENERGY ") {
					// The ENERGY family, after the ratios: badged like them.
					energy = true
					if err := badge(n, src, Ratio{Family: "ENERGY", Established: cmp.Energy.BindingEligible}, cmp.Clock.CrossBootOverride); err != nil {
						return err
					}
					continue
				}
				energy = false
				// The clock pictures go before the first heading after the
				// ratios: the clock per GPU's, or the legs'.
				if !legs && d.detailed(ci) {
					doc.InsertBefore(doc, n, d.clockNode(ci))
				}
				legs = true
			}
		case *east.Table:
			// THROUGHPUT's second table, of what the points rest on: the
			// legs' spread follows it.
			tables++
			if ci >= 0 && ri >= 0 && !legs && tables == 2 && d.Comparisons[ci].Ratios[ri].Family == FamilyThroughput && d.detailed(ci) {
				if fig := d.spreadNode(ci, FamilyThroughput); fig != nil {
					doc.InsertAfter(doc, n, fig)
				}
			}
		case *ast.Paragraph:
			// MEMORY's medians: the legs' spread follows them.
			if ci >= 0 && ri >= 0 && !legs && d.Comparisons[ci].Ratios[ri].Family == FamilyMemory &&
				strings.HasPrefix(plainText(n, src), MemoryLead) && d.detailed(ci) {
				if fig := d.spreadNode(ci, FamilyMemory); fig != nil {
					doc.InsertAfter(doc, n, fig)
				}
			}
		case *ast.List:
			if ci < 0 || ri < 0 {
				continue
			}
			cmp := &d.Comparisons[ci]
			if p, ok := n.PreviousSibling().(*ast.Paragraph); legs && ok && strings.HasPrefix(plainText(p, src), PowerManagedLead) {
				continue // the power-managed legs' free clocks: no reasons to link
			}
			if energy {
				var targets []reasonTarget
				for _, r := range EnergyReasons(cmp.Energy) {
					targets = append(targets, reasonTarget{code: r.Code})
				}
				if err := linkReasons(n, src, targets); err != nil {
					return fmt.Errorf("ENERGY reasons of %s/%s: %w", cmp.Ours, cmp.Baseline, err)
				}
				continue
			}
			if legs {
				var targets []reasonTarget
				for _, l := range d.listedLegs(ci, cmp.Legs) {
					for _, r := range l.Reasons {
						t := reasonTarget{code: r.Code}
						if clocks.IsClock(r.Code) && d.detailed(ci) {
							t.href = "#" + FigureID(ci, roleOf(cmp, l.Engine))
						}
						targets = append(targets, t)
					}
				}
				if err := linkReasons(n, src, targets); err != nil {
					return fmt.Errorf("leg reasons of %s vs %s: %w", cmp.Ours, cmp.Baseline, err)
				}
				continue
			}
			var targets []reasonTarget
			for _, it := range d.ratioItems(cmp.Ratios[ri].Reasons) {
				t := reasonTarget{code: it.r.Code}
				if it.legs == nil && d.detailed(ci) {
					t.href = ratioReasonHref(ci, cmp, it.r)
				}
				targets = append(targets, t)
			}
			if err := linkReasons(n, src, targets); err != nil {
				return fmt.Errorf("reasons of %s %s/%s: %w", cmp.Ratios[ri].Family, cmp.Ours, cmp.Baseline, err)
			}
		}
	}
	return nil
}

func roleOf(cmp *Comparison, engine string) string {
	if engine == cmp.Ours {
		return "ours"
	}
	return "baseline"
}

// badge replaces the ": VERDICT" that ends a ratio heading with the badges.
func badge(h *ast.Heading, src []byte, r Ratio, overridden bool) error {
	tail := ": " + Verdict(r.Established)
	// The parser may split the tail over several text nodes.
	var texts []*ast.Text
	suffix := ""
	for c := h.LastChild(); c != nil && len(suffix) < len(tail); c = c.PreviousSibling() {
		t, ok := c.(*ast.Text)
		if !ok {
			break
		}
		texts = append(texts, t)
		suffix = string(t.Segment.Value(src)) + suffix
	}
	if !strings.HasSuffix(suffix, tail) {
		return fmt.Errorf("ratio heading %q does not end with %q", plainText(h, src), tail)
	}
	cut := len(tail)
	for _, t := range texts {
		if l := t.Segment.Len(); l <= cut {
			h.RemoveChild(h, t)
			cut -= l
			continue
		}
		t.Segment = t.Segment.WithStop(t.Segment.Stop - cut)
		break
	}
	h.AppendChild(h, &badgesNode{words: Badges(r.Established, overridden)})
	return nil
}

type reasonTarget struct {
	code string
	// href is the picture that shows the reason; empty when none does.
	href string
}

// linkReasons links the code of each item of a reasons list, in order, to
// its picture. The items must be the reasons given, code for code.
func linkReasons(list *ast.List, src []byte, targets []reasonTarget) error {
	if list.ChildCount() != len(targets) {
		return fmt.Errorf("%d list items for %d reasons", list.ChildCount(), len(targets))
	}
	i := 0
	for item := list.FirstChild(); item != nil; item, i = item.NextSibling(), i+1 {
		var code *ast.CodeSpan
		if block := item.FirstChild(); block != nil {
			for c := block.FirstChild(); c != nil; c = c.NextSibling() {
				if cs, ok := c.(*ast.CodeSpan); ok {
					code = cs
					break
				}
			}
		}
		if code == nil || plainText(code, src) != targets[i].code {
			return fmt.Errorf("item %d is not reason %s", i+1, targets[i].code)
		}
		if targets[i].href == "" {
			continue
		}
		link := ast.NewLink()
		link.Destination = []byte(targets[i].href)
		parent := code.Parent()
		parent.ReplaceChild(parent, code, link)
		link.AppendChild(link, code)
	}
	return nil
}

// ratioReasonHref is the picture that shows a ratio's reason: an arm
// check or an ineligible leg's clock reasons, that arm's picture; a
// check between the arms, the comparison's pictures; bench and memory
// reasons, none.
func ratioReasonHref(ci int, cmp *Comparison, r clocks.Reason) string {
	info, _ := clocks.Info(r.Code)
	switch {
	case r.Code == clocks.CodeLegIneligible:
		for _, l := range cmp.Legs {
			if l.Engine == r.Engine && l.Run == r.Run && clocks.HasClock(l.Reasons) {
				return "#" + FigureID(ci, roleOf(cmp, l.Engine))
			}
		}
	case !info.Clock:
	case r.Scope == clocks.ScopeArm && (r.Engine == cmp.Ours || r.Engine == cmp.Baseline):
		return "#" + FigureID(ci, roleOf(cmp, r.Engine))
	default:
		return "#" + FiguresID(ci)
	}
	return ""
}

// plainText is a node's text as parsed, escapes undone.
func plainText(n ast.Node, src []byte) string {
	var b strings.Builder
	_ = ast.Walk(n, func(c ast.Node, entering bool) (ast.WalkStatus, error) {
		if t, ok := c.(*ast.Text); ok && entering {
			b.Write(util.UnescapePunctuations(t.Segment.Value(src)))
		}
		return ast.WalkContinue, nil
	})
	return b.String()
}

// figures is the HTML of the i-th comparison's pictures: one per arm, on
// shared scales, and their legend. The error is a trace that could not
// be read back from its spool.
func (d *Document) figures(w io.Writer, i int) error {
	cmp := &d.Comparisons[i]
	ours := &panel{id: FigureID(i, "ours"), model: cmp.Model, engine: cmp.Ours, other: cmp.Baseline, role: "ours",
		colour: colourOurs, otherColour: colourBaseline, side: cmp.Clock.Ours, otherMedian: cmp.Clock.Baseline.MedianMHz}
	base := &panel{id: FigureID(i, "baseline"), model: cmp.Model, engine: cmp.Baseline, other: cmp.Ours, role: "baseline",
		colour: colourBaseline, otherColour: colourOurs, side: cmp.Clock.Baseline, otherMedian: cmp.Clock.Ours.MedianMHz}
	if cmp.aggregated() {
		return d.figuresAggregated(w, i, ours, base)
	}
	lts, err := traces(cmp.Legs)
	if err != nil {
		return err
	}
	for i, lt := range lts {
		p := base
		if cmp.Legs[i].Engine == cmp.Ours {
			p = ours
		}
		p.legs = append(p.legs, lt)
	}
	panels := []*panel{ours, base}
	xs, ys := newXLayout(panels), newYScale(panels)

	fmt.Fprintf(w, "<section class=\"clock\" id=\"%s\">\n<h3>Clock over time: %s and %s</h3>\n", FiguresID(i), esc(cmp.Ours), esc(cmp.Baseline))
	fmt.Fprintf(w, "<p class=\"how\">SM clock of every sample of each arm, its legs end to end; each leg's seconds count from its own first sample. "+
		"Both pictures share one time scale and one MHz scale.</p>\n")
	for _, p := range panels {
		fmt.Fprintf(w, "<figure id=\"%s\">\n", p.id)
		p.svg(&svgWriter{w}, xs, ys)
		fmt.Fprintf(w, "\n<figcaption>%s</figcaption>\n</figure>\n", p.caption())
	}
	fmt.Fprintf(w, "<ul class=\"legend\">\n"+
		"<li><span class=\"key key-busy\"></span>busy samples of the arm, the minimum and maximum of each pixel column, so no excursion is lost</li>\n"+
		"<li><span class=\"key key-idle\"></span>idle sample (utilization 0%%, excluded from the statistics); <span class=\"key key-below\"></span>idle samples below the MHz scale, on its edge</li>\n"+
		"<li><span class=\"key key-median\"></span>the arm's merged median, in a band of ±%.1f%%: a busy sample outside the band fails the spread check (max − min ≤ %.1f%% of the median)</li>\n"+
		"<li><span class=\"key key-other\"></span>the other arm's merged median</li>\n"+
		"<li><span class=\"key key-throttle\"></span>busy sample with a throttle bit outside the benign mask %s</li>\n"+
		"<li><span class=\"key key-rule\"></span>a leg's first sample, labelled with its run, its boot and its clock reasons; <span class=\"key key-boot\"></span>a new boot</li>\n",
		clocks.MaxSpreadPct, clocks.MaxSpreadPct, clocks.FormatThrottle(clocks.BenignThrottleMask))
	if ours.multi() || base.multi() {
		fmt.Fprintf(w, "<li><span class=\"key\" style=\"border-top: 2px solid %s; height: 0\"></span>a leg of several GPUs (tensor parallel): one line per GPU, muted, "+
			"each in its own colour, named in the key under its picture and on hover</li>\n"+
			"<li><span class=\"key\" style=\"border-top: 4px solid %s; height: 0\"></span>the slowest GPU of each leg (the lowest busy median; of equal medians, the lowest mean), "+
			"in the arm's colour, on top, named above its leg: a tensor-parallel step runs at its pace</li>\n", gpuColour(0), colourOurs)
	}
	io.WriteString(w, "</ul>\n")
	if err := hostFigures(w, i, cmp, ours, base); err != nil {
		return err
	}
	io.WriteString(w, "</section>\n")
	return nil
}

// hostFigures are, for a comparison of multi-host legs (SPEC §12.3), one
// clock picture per host of the legs and per arm, on the scales of the
// whole legs' pictures: each leg drawn with that host's GPUs only. Nothing
// for single-host legs.
func hostFigures(w io.Writer, i int, cmp *Comparison, ours, base *panel) error {
	var hosts []LegHost
	for _, l := range cmp.Legs {
		if len(l.Hosts) > len(hosts) {
			hosts = l.Hosts
		}
	}
	if len(hosts) == 0 {
		return nil
	}
	fmt.Fprintf(w, "<p class=\"how\">Each host on its own, by its rank in leg.json: the same legs drawn with that host's GPUs only, on the scales above.</p>\n")
	for k := range hosts {
		hp := []*panel{}
		for _, p := range []*panel{ours, base} {
			c := *p
			c.id, c.legs = fmt.Sprintf("%s-host%d", p.id, k+1), nil
			hp = append(hp, &c)
		}
		for _, l := range cmp.Legs {
			lt, err := traces([]Leg{hostLeg(l, k)})
			if err != nil {
				return err
			}
			p := hp[1]
			if l.Engine == cmp.Ours {
				p = hp[0]
			}
			p.legs = append(p.legs, lt[0])
			if k < len(l.Hosts) {
				name := "host " + l.Hosts[k].Host
				if l.Hosts[k].Role != "" {
					name += ", role " + l.Hosts[k].Role
				}
				switch {
				case p.host == "":
					p.host = name
				case !slices.Contains(strings.Split(p.host, " or "), name):
					p.host += " or " + name
				}
			}
		}
		xs, ys := newXLayout(hp), newYScale(hp)
		for _, p := range hp {
			if p.host == "" {
				p.host = fmt.Sprintf("host of rank %d", k+1)
			}
			fmt.Fprintf(w, "<figure id=\"%s\">\n", p.id)
			p.svg(&svgWriter{w}, xs, ys)
			fmt.Fprintf(w, "\n<figcaption>%s, drawn alone; the arm over every host: %s</figcaption>\n</figure>\n", esc(p.host), p.caption())
		}
	}
	return nil
}

// hostLeg is leg l drawn with its k-th host's GPUs only: a leg whose k-th
// host has no trusted record is drawn as one without a trace.
func hostLeg(l Leg, k int) Leg {
	if k >= len(l.Hosts) || len(l.Hosts[k].GPUs) == 0 || !l.Trusted || l.Hosts[k].First+len(l.Hosts[k].GPUs) > len(l.GPUs) {
		l.Trusted, l.Trace, l.GPUs = false, nil, nil
		return l
	}
	h := l.Hosts[k]
	l.GPUs = l.GPUs[h.First : h.First+len(h.GPUs)]
	l.Trace = l.GPUs[0].Trace
	return l
}

// caption is a figure's caption: the arm's merged clock in words.
func (p *panel) caption() string {
	s := p.side
	boots := make([]string, len(s.BootIDs))
	for i, id := range s.BootIDs {
		boots[i] = shortBoot(id)
	}
	out := fmt.Sprintf("<strong>%s</strong> (%s): %d %s", esc(p.engine), p.role, s.Legs, plural(s.Legs, "leg", "legs"))
	if len(boots) > 0 {
		out += fmt.Sprintf(" on %s %s", plural(len(boots), "boot", "boots"), esc(strings.Join(boots, ", ")))
	}
	if s.MedianMHz == nil {
		return out + "; no trusted leg, so no merged median."
	}
	if s.PowerManagedPct != nil {
		out += fmt.Sprintf("; merged free median %s MHz (the samples no power cap held)", num(*s.MedianMHz))
	} else {
		out += fmt.Sprintf("; merged median %s MHz", num(*s.MedianMHz))
	}
	if s.SpreadPct != nil {
		out += fmt.Sprintf(", spread %.2f%%", *s.SpreadPct)
	}
	out += fmt.Sprintf("; %d busy samples, %d idle excluded", s.BusySamples, s.IdleSamplesExcluded)
	if s.PowerManagedPct != nil {
		limit := "at the legs' differing enforced power limits"
		if s.EnforcedPowerLimitW != nil {
			limit = "at the enforced power limit " + num(*s.EnforcedPowerLimitW) + " W"
		}
		out += fmt.Sprintf("; power-managed %.2f%% of busy samples %s", *s.PowerManagedPct, esc(limit))
		if s.PowerManagedMedianMHz != nil {
			out += fmt.Sprintf(" (median %s MHz while power-managed), marked by amber ticks along each plot's foot", num(*s.PowerManagedMedianMHz))
		}
	}
	if k, ok := slowestPosition(s.GPUs); ok {
		g := s.GPUs[k]
		gpu := fmt.Sprintf("GPU %d", g.GPUIndex)
		if g.Host != "" {
			gpu = fmt.Sprintf("host %s%s, GPU %d", esc(g.Host), esc(roleNote(g.Role)), g.GPUIndex)
		}
		out += fmt.Sprintf("; %d GPUs per leg, the slowest GPU position %d (%s) at a merged median of %s MHz", len(s.GPUs), g.Position, gpu, num(*g.MedianMHz))
	}
	return out + "."
}

// slowestPosition is the GPU position of the lowest merged median (of
// those, the lowest mean; of those, the first); ok is false when no
// position has a median.
func slowestPosition(gpus []clocks.GPUSide) (k int, ok bool) {
	for i, g := range gpus {
		if g.MedianMHz == nil {
			continue
		}
		if !ok {
			k, ok = i, true
			continue
		}
		w := gpus[k]
		if *g.MedianMHz < *w.MedianMHz || *g.MedianMHz == *w.MedianMHz && g.MeanMHz != nil && w.MeanMHz != nil && *g.MeanMHz < *w.MeanMHz {
			k = i
		}
	}
	return k, ok
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// pageCSS styles the page on screen and on paper: white ground, dark text,
// figures never split across pages.
const pageCSS = `:root { color-scheme: light; }
body { margin: 0; background: #ffffff; color: #1a1a1a;
  font: 15px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, "DejaVu Sans", "Liberation Sans", sans-serif; }
main { max-width: 1060px; margin: 0 auto; padding: 1.5rem 1.25rem 3rem; }
h1 { font-size: 1.6rem; margin: 0 0 .75rem; }
h2 { font-size: 1.3rem; margin: 2.25rem 0 .75rem; padding-top: .75rem; border-top: 2px solid #d0d0d0; }
h3 { font-size: 1.08rem; margin: 1.5rem 0 .5rem; }
p, li { overflow-wrap: anywhere; }
code { font: .88em/1.4 ui-monospace, "DejaVu Sans Mono", "Liberation Mono", monospace; background: #f2f2f2; padding: 0 .25em; border-radius: 3px; }
a { color: #1f5fa8; }
a code { text-decoration: underline; }
table { border-collapse: collapse; margin: .5rem 0 1rem; font-size: .88rem; font-variant-numeric: tabular-nums; display: block; overflow-x: auto; }
th, td { border: 1px solid #cfcfcf; padding: .2rem .5rem; white-space: nowrap; }
th { background: #f2f2f2; }
.badge { display: inline-block; margin-left: .35rem; padding: .05rem .55rem; border: 2px solid; border-radius: 1rem;
  font-size: .78rem; font-weight: 700; letter-spacing: .04em; vertical-align: .12em; }
.badge.established { color: #1b5e20; border-color: #2e7d32; background: #e8f5e9; }
.badge.not-established { color: #b71c1c; border-color: #c62828; background: #ffebee; }
.badge.overridden { color: #8a3c00; border-color: #d35400; background: #fff3e0; }
section.clock { margin: 1.5rem 0; }
.how { color: #444; font-size: .92rem; }
figure { margin: .75rem 0 1.25rem; break-inside: avoid; page-break-inside: avoid; }
figure svg { display: block; width: 100%; height: auto; max-width: 960px; }
figcaption { font-size: .92rem; color: #333; margin-top: .25rem; }
svg.spread text { font-family: system-ui, -apple-system, "Segoe UI", Roboto, "DejaVu Sans", "Liberation Sans", sans-serif; font-size: 12px; }
svg.spread text:not([fill]) { fill: #333; }
svg.spread .axis-label { font-size: 13px; font-weight: 600; }
svg.spread .row-label { font-weight: 600; }
svg.spread .row-note { font-size: 11px; }
svg.clock text { font-family: system-ui, -apple-system, "Segoe UI", Roboto, "DejaVu Sans", "Liberation Sans", sans-serif; font-size: 12px; }
svg.clock text:not([fill]) { fill: #333; }
svg.clock .axis-label { font-size: 13px; font-weight: 600; }
svg.clock .leg-label { font-weight: 600; }
svg.clock .leg-codes, svg.clock .boot-label { font-size: 11px; }
svg.clock .no-trace-why { font-size: 10px; }
svg.clock .no-trace-note { font-weight: 700; }
.legend { list-style: none; padding: 0; margin: .25rem 0 1rem; font-size: .88rem; color: #333; columns: 2 26rem; column-gap: 2rem; }
.legend li { margin: .15rem 0; break-inside: avoid; }
.key { display: inline-block; width: 1.6rem; height: .7rem; margin-right: .4rem; vertical-align: middle; box-sizing: border-box; }
.key-busy { border-bottom: 2px solid #1f5fa8; border-top: 2px solid #00796b; height: .6rem; }
.key-idle { width: .7rem; height: .7rem; border: 1.5px solid #8a8a8a; border-radius: 50%; margin-left: .45rem; margin-right: .85rem; }
.key-median { border-top: 2px solid #1f5fa8; border-bottom: 8px solid rgba(31, 95, 168, .14); }
.key-below { width: 0; height: 0; border-left: .3rem solid transparent; border-right: .3rem solid transparent; border-top: .5rem solid #8a8a8a; margin: 0 .4rem 0 .2rem; }
.key-other { border-top: 2px dashed #00796b; height: 0; }
.key-throttle { width: 3px; height: .8rem; border-left: 3px solid #c62828; margin: 0 .9rem 0 .75rem; }
.key-rule { width: 2px; height: .9rem; border-left: 2px solid #9e9e9e; margin: 0 .95rem 0 .75rem; }
.key-boot { width: 3px; height: .9rem; border-left: 3px solid #d35400; margin: 0 .4rem 0 .2rem; }
* { -webkit-print-color-adjust: exact; print-color-adjust: exact; }
@media print {
  body { font-size: 10.5pt; }
  main { max-width: none; padding: 0; }
  a { color: inherit; }
  h2, h3 { break-after: avoid; page-break-after: avoid; }
  section.clock, figure, table, .legend { break-inside: avoid; page-break-inside: avoid; }
  table { display: table; }
}
`

// roleNote is ", role R" where a host has a role.
func roleNote(role string) string {
	if role == "" {
		return ""
	}
	return ", role " + role
}
