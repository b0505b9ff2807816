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
// one line that counts them; and only its first PictureComparisons
// comparisons have pictures. Every leg stays in summary.json and
// all-runs.json.
const ScaleLegs = 1000

// ListedLegs is the most legs a report at scale lists in its legs tables
// and leg reasons, all comparisons together, given to the comparisons in
// report order: about a screenful of rows per comparison of a report of
// few comparisons, and a bounded page whatever the count.
const ListedLegs = 200

// PictureComparisons is how many comparisons of a report at scale have
// pictures, in report order: each comparison's pictures are some tens of
// KB and a second of a browser's time, so hundreds of them would pass the
// page's bounds; the others say where their numbers are.
const PictureComparisons = 10

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
		give(i, d.Comparisons[i].Legs)
	}
	give(len(d.Comparisons), d.Uncompared)
	d.scale = p
}

// atScale reports whether the document is written at scale.
func (d *Document) atScale() bool { return d.scale != nil }

// pictures reports whether the ci-th comparison has pictures.
func (d *Document) pictures(ci int) bool { return !d.atScale() || ci < PictureComparisons }

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

// picturesNote is the paragraph of a comparison a report at scale draws
// no picture for.
func (d *Document) picturesNote(ci int) string {
	return fmt.Sprintf("Pictures: none for this comparison. A report of more than %s legs draws the pictures of its first %d comparisons only "+
		"(this is comparison %s of %s); every number is in the tables here and in all-runs.json.",
		count(ScaleLegs), PictureComparisons, count(ci+1), count(len(d.Comparisons)))
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
