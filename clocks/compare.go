package clocks

import (
	"fmt"
	"sort"
	"strings"
)

// Block is the clock block every ratio carries: both arms' clock state,
// their offset, the estimated effect, and every clock reason that stands.
type Block struct {
	// Established is true when no clock reason stands: no leg of either arm
	// carries one and no arm or ratio check failed.
	Established bool `json:"established"`
	// CrossBootOverride is true when --allow-cross-boot waived a boot check
	// on this ratio; Caveats then names each.
	CrossBootOverride bool `json:"cross_boot_override"`
	Ours              Side `json:"ours"`
	Baseline          Side `json:"baseline"`
	// OffsetPct is |ours − baseline| / baseline × 100 of the merged medians.
	OffsetPct *float64 `json:"offset_pct"`
	// EstimatedEffectPct is OffsetPct × TransferCoefficient: a size, never a gate term.
	EstimatedEffectPct  *float64 `json:"estimated_effect_pct"`
	TransferCoefficient float64  `json:"transfer_coefficient"`
	Reasons             []Reason `json:"reasons"`
	Caveats             []Reason `json:"caveats"`
}

// Compare runs the ratio-level clock checks on two merged arms: one boot
// (waivable), one machine (never waivable), and the median offset. Each leg
// of either arm that carries a clock reason is listed once as leg.ineligible
// with all its codes.
func Compare(ours, baseline *Arm, allowCrossBoot bool) *Block {
	b := &Block{Ours: ours.Side, Baseline: baseline.Side, TransferCoefficient: TransferCoefficient,
		Reasons: []Reason{}, Caveats: []Reason{}}
	b.Reasons = append(b.Reasons, ours.Reasons...)
	b.Reasons = append(b.Reasons, baseline.Reasons...)
	b.Caveats = append(b.Caveats, ours.Caveats...)
	b.Caveats = append(b.Caveats, baseline.Caveats...)

	boots := map[string]bool{}
	for _, a := range []*Arm{ours, baseline} {
		for id := range a.boots {
			boots[id] = true
		}
	}
	if len(boots) > 1 {
		r := ratioReason(CodeCrossBoot, "arms on %d boots: %s %s, %s %s",
			len(boots), ours.Engine, bootList(ours), baseline.Engine, bootList(baseline))
		if allowCrossBoot {
			r.Waived = true
			b.Caveats = append(b.Caveats, r)
		} else {
			b.Reasons = append(b.Reasons, r)
		}
	}
	if len(ours.boots) > 0 && len(baseline.boots) > 0 {
		var diff []string
		for _, k := range StaticFields {
			ov, bv := sortedKeys(ours.static[k]), sortedKeys(baseline.static[k])
			if strings.Join(ov, "\x00") != strings.Join(bv, "\x00") {
				diff = append(diff, fmt.Sprintf("%s: %s %s, %s %s", k, ours.Engine, strings.Join(ov, " "), baseline.Engine, strings.Join(bv, " ")))
			}
		}
		if len(diff) > 0 {
			b.Reasons = append(b.Reasons, ratioReason(CodeHardwareMismatch,
				"arms are not on one machine: %s", strings.Join(diff, "; ")))
		}
	}
	if ours.hasMedian && baseline.hasMedian {
		d := ours.median2 - baseline.median2
		if d < 0 {
			d = -d
		}
		off := float64(d) / float64(baseline.median2) * 100
		o, e := round2(off), round2(off*TransferCoefficient)
		b.OffsetPct, b.EstimatedEffectPct = &o, &e
		if !offsetWithin(ours.median2, baseline.median2) {
			b.Reasons = append(b.Reasons, ratioReason(CodeOffset,
				"median offset %.2f%% > %.1f%%: %s %s MHz, %s %s MHz (estimated effect %.2f%% at transfer %.4f)",
				off, MaxOffsetPct, ours.Engine, fmtMedian(ours.median2), baseline.Engine, fmtMedian(baseline.median2),
				off*TransferCoefficient, TransferCoefficient))
		}
	}
	for _, a := range []*Arm{ours, baseline} {
		for i, l := range a.Legs {
			if HasClock(l.Reasons) {
				all := l.Reasons
				if a.LegReasons != nil {
					all = a.LegReasons[i]
				}
				b.Reasons = append(b.Reasons, IneligibleReason(a.Engine, l, all))
			}
		}
	}
	b.CrossBootOverride = len(b.Caveats) > 0
	b.Established = len(b.Reasons) == 0
	return b
}

// IneligibleReason is the leg.ineligible reason a ratio carries for a leg
// with reasons: its engine, its run and the codes of reasons.
func IneligibleReason(engine string, l *Leg, reasons []Reason) Reason {
	r := ratioReason(CodeLegIneligible, "leg %s %s is not binding-eligible: %s",
		engine, l.Name, strings.Join(Codes(reasons), ", "))
	r.Engine, r.Run = engine, l.Run
	return r
}

// ratioReason is a reason about two arms together.
func ratioReason(code, format string, args ...any) Reason {
	return Reason{Code: code, Message: fmt.Sprintf(format, args...), Scope: ScopeRatio}
}

func bootList(a *Arm) string {
	ids := sortedKeys(a.boots)
	sort.Strings(ids)
	return "[" + strings.Join(ids, ", ") + "]"
}
