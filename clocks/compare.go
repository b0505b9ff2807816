package clocks

import (
	"fmt"
	"slices"
	"sort"
	"strconv"
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
	// OffsetPct is |ours − baseline| / baseline × 100 of the merged medians;
	// for arms of several GPUs, the largest over the GPU positions.
	OffsetPct *float64 `json:"offset_pct"`
	// MeanOffsetPct is the same of the merged means: throughput follows the
	// time-averaged clock, which a median does not see dip.
	MeanOffsetPct *float64 `json:"mean_offset_pct"`
	// GPUOffsets are the offsets of each GPU position, for arms of several
	// GPUs.
	GPUOffsets []GPUOffset `json:"gpu_offsets,omitempty"`
	// EstimatedEffectPct is OffsetPct × TransferCoefficient: a size, never a gate term.
	EstimatedEffectPct  *float64 `json:"estimated_effect_pct"`
	TransferCoefficient float64  `json:"transfer_coefficient"`
	Reasons             []Reason `json:"reasons"`
	Caveats             []Reason `json:"caveats"`
}

// GPUOffset is the offset between the arms at one GPU position.
type GPUOffset struct {
	Position      int      `json:"position"`
	OursGPU       int      `json:"ours_gpu"`
	BaselineGPU   int      `json:"baseline_gpu"`
	OffsetPct     *float64 `json:"offset_pct"`
	MeanOffsetPct *float64 `json:"mean_offset_pct"`
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
	if msg := unprovenBoot(ours, baseline); msg != "" {
		r := ratioReason(CodeUnprovenBoot, "%s", msg)
		if allowCrossBoot {
			r.Waived = true
			b.Caveats = append(b.Caveats, r)
		} else {
			b.Reasons = append(b.Reasons, r)
		}
	}
	if len(ours.boots) > 0 && len(baseline.boots) > 0 {
		if len(ours.gpus) != len(baseline.gpus) {
			b.Reasons = append(b.Reasons, ratioReason(CodeHardwareMismatch,
				"arms are not on one machine: %s samples %d GPUs per leg, %s %d", ours.Engine, len(ours.gpus), baseline.Engine, len(baseline.gpus)))
		} else {
			var diff []string
			for k := range ours.gpus {
				for _, name := range staticNames {
					ov, bv := sortedKeys(ours.gpus[k].static[name]), sortedKeys(baseline.gpus[k].static[name])
					if strings.Join(ov, "\x00") != strings.Join(bv, "\x00") {
						diff = append(diff, fmt.Sprintf("%s%s: %s %s, %s %s", ours.position(k), name,
							ours.Engine, strings.Join(ov, " "), baseline.Engine, strings.Join(bv, " ")))
					}
				}
			}
			if len(diff) > 0 {
				b.Reasons = append(b.Reasons, ratioReason(CodeHardwareMismatch,
					"arms are not on one machine: %s", strings.Join(diff, "; ")))
			}
		}
	}
	b.offsets(ours, baseline)
	b.thermalStart(ours, baseline)
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

// offsets takes the offset at each GPU position the arms share, of the
// medians and of the means. The worst of each is reported; any position
// over the bound fails the ratio, with one clock.offset reason naming the
// worst failing position and the statistic that failed there.
func (b *Block) offsets(ours, baseline *Arm) {
	multi := ours.multi || baseline.multi
	var worst, worstMedianFail, worstMeanFail *offsets
	where := map[*offsets]int{}
	for k := range min(len(ours.gpus), len(baseline.gpus)) {
		x, ok := compareGPU(ours.gpus[k], baseline.gpus[k])
		if !ok {
			continue
		}
		px := &x
		where[px] = k
		if multi {
			b.GPUOffsets = append(b.GPUOffsets, GPUOffset{Position: k, OursGPU: ours.gpus[k].index, BaselineGPU: baseline.gpus[k].index,
				OffsetPct: ptr(round2(x.median)), MeanOffsetPct: ptr(round2(x.mean))})
		}
		if worst == nil {
			worst = px
			b.OffsetPct, b.MeanOffsetPct = ptr(x.median), ptr(x.mean)
		}
		*b.OffsetPct, *b.MeanOffsetPct = max(*b.OffsetPct, x.median), max(*b.MeanOffsetPct, x.mean)
		if !x.medianOK && (worstMedianFail == nil || x.median > worstMedianFail.median) {
			worstMedianFail = px
		}
		if !x.meanOK && (worstMeanFail == nil || x.mean > worstMeanFail.mean) {
			worstMeanFail = px
		}
	}
	if worst == nil {
		return
	}
	free := ""
	for _, a := range []*Arm{ours, baseline} {
		for _, g := range a.gpus {
			if g.powerManaged() {
				free = "free "
			}
		}
	}
	off := *b.OffsetPct
	b.OffsetPct, b.MeanOffsetPct = ptr(round2(off)), ptr(round2(*b.MeanOffsetPct))
	b.EstimatedEffectPct = ptr(round2(off * TransferCoefficient))
	switch x := worstMedianFail; {
	case x != nil:
		msg := fmt.Sprintf("%s%smedian offset %.2f%% > %.1f%%: %s %s MHz, %s %s MHz (estimated effect %.2f%% at transfer %.4f)",
			ours.position(where[x]), free, x.median, MaxOffsetPct, ours.Engine, fmtMedian(x.ours2), baseline.Engine, fmtMedian(x.base2),
			x.median*TransferCoefficient, TransferCoefficient)
		if !x.meanOK {
			msg += fmt.Sprintf("; the %smean offset %.2f%% is over it too (%s %.2f MHz, %s %.2f MHz)",
				free, x.mean, ours.Engine, x.oursMean, baseline.Engine, x.baseMean)
		}
		b.Reasons = append(b.Reasons, ratioReason(CodeOffset, "%s", msg))
	case worstMeanFail != nil:
		x := worstMeanFail
		b.Reasons = append(b.Reasons, ratioReason(CodeOffset,
			"%s%smean offset %.2f%% > %.1f%%: %s %.2f MHz, %s %.2f MHz, though the medians agree (%s %s MHz, %s %s MHz, offset %.2f%%): "+
				"throughput follows the time-averaged clock, and one arm's clock dipped where the other's did not",
			ours.position(where[x]), free, x.mean, MaxOffsetPct, ours.Engine, x.oursMean, baseline.Engine, x.baseMean,
			ours.Engine, fmtMedian(x.ours2), baseline.Engine, fmtMedian(x.base2), x.median))
	}
}

// thermalStart holds, where either arm is power-managed and both record
// temperatures, each GPU position's temperature at its legs' first busy
// samples (the median over each arm's legs) within MaxThermalStartDeltaC:
// at one limit a hotter chip leaks more power and caps lower.
func (b *Block) thermalStart(ours, baseline *Arm) {
	for k := range min(len(ours.gpus), len(baseline.gpus)) {
		o, bs := ours.gpus[k], baseline.gpus[k]
		if !o.powerManaged() && !bs.powerManaged() || len(o.firstTemps) == 0 || len(bs.firstTemps) == 0 {
			continue
		}
		// Twice the medians, in hundredths of a degree: exact.
		to, tb := median2(o.firstTemps), median2(bs.firstTemps)
		d := to - tb
		if d < 0 {
			d = -d
		}
		if d <= 2*100*MaxThermalStartDeltaC {
			continue
		}
		b.Reasons = append(b.Reasons, ratioReason(CodeThermalStart,
			"%stemperature at the legs' first busy sample %s %s °C, %s %s °C (median over %d and %d legs): %s °C apart > %d °C, and at one power limit a hotter chip caps lower; let the GPU cool to one temperature before every leg, in both arms",
			ours.position(k), ours.Engine, fmtCenti2(to), baseline.Engine, fmtCenti2(tb), len(o.firstTemps), len(bs.firstTemps),
			fmtCenti2(d), MaxThermalStartDeltaC))
		return
	}
}

// median2 is twice the median of xs: the sum of the middle two (one
// twice for an odd count).
func median2(xs []int64) int64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	return s[(len(s)-1)/2] + s[len(s)/2]
}

// fmtCenti2 prints twice a value in hundredths as the value: 12130 as
// 60.65.
func fmtCenti2(x2 int64) string { return strconv.FormatFloat(float64(x2)/200, 'f', -1, 64) }

func bootList(a *Arm) string {
	ids := sortedKeys(a.boots)
	sort.Strings(ids)
	return "[" + strings.Join(ids, ", ") + "]"
}
