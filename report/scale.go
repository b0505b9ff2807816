package report

import (
	"fmt"
	"sort"
	"strings"

	"github.com/clockgate/clockgate/clocks"
)

// ScaleLegs is the most legs a report lists one by one. A person does not
// read tens of thousands of rows, nor does a browser open them in seconds:
// a report of more legs is written at scale. Its legs tables list only
// legs that carry reasons, at most ListedLegs of them in the whole report,
// and count the rest by reason code; a ratio's leg.ineligible reasons are
// one line that counts them; and only its first DetailedComparisons
// comparisons are written in full. Every leg stays in summary.json and
// all-runs.json.
const ScaleLegs = 1000

// ListedLegs is the most legs a report at scale lists in its legs tables
// and leg reasons, all comparisons together, given to the comparisons in
// report order: about a screenful of rows per comparison of a report of
// few comparisons, and a bounded page whatever the count.
const ListedLegs = 200

// DetailedComparisons is how many comparisons of a report at scale are
// written in full, in report order: pictures, tables and reasons. Each
// other comparison is its heading and one paragraph of its ratios'
// verdicts and its reasons and legs counted: hundreds of comparisons in
// full are some tens of thousands of table cells and pictures, which a
// browser takes many seconds to lay out and a person does not read.
const DetailedComparisons = 10

// scalePlan is how a report at scale lists its legs: per section (each
// comparison, then the legs in no comparison) how many of its legs that
// carry reasons it lists.
type scalePlan struct {
	legs   int
	listed []int
}

// planScale decides, once, whether the document is at scale and how its
// listed legs are shared; it is called before the sections are rendered.
func (d *Document) planScale() {
	total := len(d.Uncompared)
	for i := range d.Comparisons {
		total += len(d.Comparisons[i].Legs)
	}
	if total <= ScaleLegs {
		d.scale = nil
		return
	}
	p := &scalePlan{legs: total, listed: make([]int, len(d.Comparisons)+1)}
	left := ListedLegs
	give := func(k int, legs []Leg) {
		n := 0
		for _, l := range legs {
			if len(l.Reasons) > 0 {
				n++
			}
		}
		p.listed[k] = min(n, left)
		left -= p.listed[k]
	}
	for i := range d.Comparisons {
		if i < DetailedComparisons {
			give(i, d.Comparisons[i].Legs)
		}
	}
	give(len(d.Comparisons), d.Uncompared)
	d.scale = p
}

// atScale reports whether the document is written at scale.
func (d *Document) atScale() bool { return d.scale != nil }

// detailed reports whether the ci-th comparison is written in full, with
// its pictures.
func (d *Document) detailed(ci int) bool { return !d.atScale() || ci < DetailedComparisons }

// listedLegs are the legs of section k (a comparison's index, or
// len(Comparisons) for the legs in no comparison) its tables list: every
// leg, or at scale the first legs that carry reasons as the plan allots.
func (d *Document) listedLegs(k int, legs []Leg) []Leg {
	if !d.atScale() {
		return legs
	}
	var out []Leg
	for _, l := range legs {
		if len(out) == d.scale.listed[k] {
			break
		}
		if len(l.Reasons) > 0 {
			out = append(out, l)
		}
	}
	return out
}

// legsSummary is the paragraph a report at scale writes before a legs
// table: how many legs the table summarizes, how many it lists, and the
// reason codes of those it does not.
func (d *Document) legsSummary(legs, listed []Leg) string {
	binding, withReasons := 0, 0
	codes := map[string]int{}
	inList := map[[3]string]bool{}
	for _, l := range listed {
		inList[[3]string{l.Model, l.Engine, l.Name}] = true
	}
	for _, l := range legs {
		if l.BindingEligible {
			binding++
		}
		if len(l.Reasons) > 0 {
			withReasons++
		}
		if !inList[[3]string{l.Model, l.Engine, l.Name}] {
			for _, c := range l.Codes {
				codes[c]++
			}
		}
	}
	out := fmt.Sprintf("These tables summarize %s %s: %s binding-eligible, %s with reasons. "+
		"A report of more than %s legs lists only legs that carry reasons, at most %d in all: %s %s listed here; every leg is in all-runs.json.",
		count(len(legs)), plural(len(legs), "leg", "legs"), count(binding), count(withReasons),
		count(ScaleLegs), ListedLegs, count(len(listed)), plural(len(listed), "is", "are"))
	if len(codes) > 0 {
		keys := make([]string, 0, len(codes))
		for c := range codes {
			keys = append(keys, c)
		}
		sort.Strings(keys)
		parts := make([]string, len(keys))
		for i, c := range keys {
			parts[i] = fmt.Sprintf("%s %s", c, count(codes[c]))
		}
		out += " Reason codes of the legs not listed, with the legs that carry each: " + strings.Join(parts, ", ") + "."
	}
	return out
}

// brief is the one paragraph of a comparison a report at scale does not
// write in full: each ratio's value, verdict and reason codes counted,
// and its legs counted.
func (d *Document) brief(ci int) string {
	cmp := &d.Comparisons[ci]
	var parts []string
	for _, r := range cmp.Ratios {
		value := "n/a"
		if r.Value != nil {
			value = fixed(*r.Value, 4)
		}
		s := fmt.Sprintf("%s %s %s", r.Family, value, Verdict(r.Established))
		if c := codeCounts(r.Reasons); c != "" {
			s += ", reasons " + c
		}
		parts = append(parts, s)
	}
	binding, withReasons := 0, 0
	var legReasons []clocks.Reason
	for _, l := range cmp.Legs {
		if l.BindingEligible {
			binding++
		}
		if len(l.Reasons) > 0 {
			withReasons++
		}
		for _, c := range l.Codes {
			legReasons = append(legReasons, clocks.Reason{Code: c})
		}
	}
	legs := fmt.Sprintf("%s %s, %s binding-eligible, %s with reasons", count(len(cmp.Legs)), plural(len(cmp.Legs), "leg", "legs"), count(binding), count(withReasons))
	if c := codeCounts(legReasons); c != "" {
		legs += " (" + c + ")"
	}
	return fmt.Sprintf("In brief: %s; %s. A report of more than %s legs writes its first %d comparisons in full (this is comparison %s of %s); "+
		"summary.json and all-runs.json hold every number, leg and reason.",
		strings.Join(parts, "; "), legs, count(ScaleLegs), DetailedComparisons, count(ci+1), count(len(d.Comparisons)))
}

// codeCounts counts reasons by code, codes sorted: "clock.offset 1,
// leg.ineligible 40"; "" for none.
func codeCounts(reasons []clocks.Reason) string {
	n := map[string]int{}
	for _, r := range reasons {
		n[r.Code]++
	}
	keys := make([]string, 0, len(n))
	for c := range n {
		keys = append(keys, c)
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, c := range keys {
		parts[i] = c + " " + count(n[c])
	}
	return strings.Join(parts, ", ")
}

// ratioItem is one item of a ratio's reasons list: a reason, or, at
// scale, every leg.ineligible reason counted in one line.
type ratioItem struct {
	r clocks.Reason
	// legs counts the leg.ineligible reasons the item stands for, by
	// engine in order; nil for a single reason.
	legs    []int
	engines []string
}

// ratioItems are a ratio's reasons as its list shows them: every one, or
// at scale the leg.ineligible reasons of single legs as one item, where
// the first of them stood.
func (d *Document) ratioItems(reasons []clocks.Reason) []ratioItem {
	out := make([]ratioItem, 0, len(reasons))
	agg := -1
	for _, r := range reasons {
		if !d.atScale() || r.Code != clocks.CodeLegIneligible || r.Run == 0 {
			out = append(out, ratioItem{r: r})
			continue
		}
		if agg < 0 {
			agg = len(out)
			out = append(out, ratioItem{r: clocks.Reason{Code: r.Code, Scope: r.Scope}})
		}
		it := &out[agg]
		k := -1
		for i, e := range it.engines {
			if e == r.Engine {
				k = i
			}
		}
		if k < 0 {
			it.engines, it.legs = append(it.engines, r.Engine), append(it.legs, 0)
			k = len(it.engines) - 1
		}
		it.legs[k]++
	}
	return out
}

// text is the item's line after its code.
func (it ratioItem) text() string {
	if it.legs == nil {
		return text(it.r.Message)
	}
	total := 0
	parts := make([]string, len(it.legs))
	for i, n := range it.legs {
		total += n
		parts[i] = text(it.engines[i]) + " " + count(n)
	}
	return fmt.Sprintf("%s %s not binding-eligible (%s); the legs tables list those that carry reasons, and summary.json names every one",
		count(total), plural(total, "leg is", "legs are"), strings.Join(parts, ", "))
}
