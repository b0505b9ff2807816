package clocks

import (
	"fmt"
	"sort"
	"strings"
)

// Side is one arm's part of a clock block.
type Side struct {
	Engine string `json:"engine"`
	// BootIDs lists every boot the arm's trusted legs ran on, sorted.
	BootIDs []string `json:"boot_ids"`
	// MedianMHz is the median SM clock over the union of the trusted legs'
	// busy samples, in MHz; nil when the arm has no trusted leg.
	MedianMHz *float64 `json:"median_mhz"`
	// PctOfMax is MedianMHz as a percentage of clocks.max.sm.
	PctOfMax *float64 `json:"pct_of_max"`
	// SpreadPct is (max − min) / median × 100 over the same union.
	SpreadPct           *float64 `json:"spread_pct"`
	BusySamples         int      `json:"busy_samples"`
	IdleSamplesExcluded int      `json:"idle_samples_excluded"`
	// Legs counts the arm's legs, trusted or not.
	Legs int `json:"legs"`
}

// Arm is every leg of one (model, engine), merged.
type Arm struct {
	Engine string
	Legs   []*Leg
	// LegReasons, when not nil, holds every reason of each of Legs (bench
	// and memory ones too, which a caller reading more evidence knows of):
	// a leg's leg.ineligible names all their codes. Nil means the legs'
	// clock reasons.
	LegReasons [][]Reason
	Side       Side
	// Reasons are the arm checks that stand; Caveats the ones the
	// cross-boot override waived.
	Reasons []Reason
	Caveats []Reason

	hist      map[int]int
	median2   int64
	hasMedian bool
	// static maps each STATIC_FIELDS name to its printed values and the
	// trusted legs that carry each.
	static map[string]map[string][]string
	boots  map[string][]string
	// maxSM holds the trusted legs' clocks.max.sm values, in MHz.
	maxSM map[int]bool
}

// reason is a reason about the arm.
func (a *Arm) reason(code, format string, args ...any) Reason {
	return Reason{Code: code, Message: fmt.Sprintf(format, args...), Scope: ScopeArm, Engine: a.Engine}
}

// Merge folds legs into an arm and runs the arm checks: one boot (waivable),
// one set of STATIC_FIELDS, and the merged spread over the union of the
// trusted legs' busy samples when two or more legs are trusted.
func Merge(engine string, legs []*Leg, allowCrossBoot bool) *Arm {
	a := &Arm{Engine: engine, Legs: legs, hist: map[int]int{},
		static: map[string]map[string][]string{}, boots: map[string][]string{}, maxSM: map[int]bool{}}
	a.Side = Side{Engine: engine, BootIDs: []string{}, Legs: len(legs)}
	trusted := 0
	for _, l := range legs {
		if !l.Trusted() {
			continue
		}
		trusted++
		for v, c := range l.Fold.Hist {
			a.hist[v] += c
		}
		a.Side.BusySamples += summarize(l.Fold.Hist).n
		a.Side.IdleSamplesExcluded += l.Fold.Idle
		a.boots[l.Record.BootID] = append(a.boots[l.Record.BootID], l.Name)
		a.maxSM[l.Record.ClocksMaxSMMHz] = true
		for k, v := range l.Record.static() {
			if a.static[k] == nil {
				a.static[k] = map[string][]string{}
			}
			a.static[k][v] = append(a.static[k][v], l.Name)
		}
	}
	a.Side.BootIDs = sortedKeys(a.boots)
	h := summarize(a.hist)
	if h.n > 0 {
		a.hasMedian, a.median2 = true, h.median2
		md := float64(h.median2) / 2
		sp := round2(spreadPct(int64(h.min), int64(h.max), h.median2))
		a.Side.MedianMHz, a.Side.SpreadPct = &md, &sp
		if len(a.maxSM) == 1 {
			for mx := range a.maxSM {
				a.Side.PctOfMax = ptr(round2(md / float64(mx) * 100))
			}
		}
	}
	if len(a.boots) > 1 {
		r := a.reason(CodeStraddledBoot, "arm %s spans %d boots: %s", engine, len(a.boots), describeGroups(a.boots))
		if allowCrossBoot {
			r.Waived = true
			a.Caveats = append(a.Caveats, r)
		} else {
			a.Reasons = append(a.Reasons, r)
		}
	}
	var drift []string
	for _, k := range StaticFields {
		if vals := a.static[k]; len(vals) > 1 {
			drift = append(drift, fmt.Sprintf("%s: %s", k, describeGroups(vals)))
		}
	}
	if len(drift) > 0 {
		a.Reasons = append(a.Reasons, a.reason(CodeStaticMismatch,
			"arm %s legs differ in STATIC_FIELDS: %s", engine, strings.Join(drift, "; ")))
	}
	if trusted >= 2 && !spreadWithin(int64(h.min), int64(h.max), h.median2) {
		a.Reasons = append(a.Reasons, a.reason(CodeStaircase,
			"arm %s merged spread %.2f%% > %.1f%%: min %d, median %s, max %d MHz over %d legs, n=%d",
			engine, spreadPct(int64(h.min), int64(h.max), h.median2), MaxSpreadPct,
			h.min, fmtMedian(h.median2), h.max, trusted, h.n))
	}
	return a
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// describeGroups prints value (leg, leg), value (leg) in sorted order.
func describeGroups(groups map[string][]string) string {
	var parts []string
	for _, v := range sortedKeys(groups) {
		parts = append(parts, fmt.Sprintf("%s (%s)", v, strings.Join(groups[v], ", ")))
	}
	return strings.Join(parts, ", ")
}
