package ratio

import (
	"encoding/json"
	"math"
	"testing"

	"github.com/clockgate/clockgate/clocks"
)

// FuzzCompareNumbers holds the ratios to their contract on any finite
// throughput, token count and memory peak: no value, median or ratio is
// ever 0, infinite or NaN (a value is a positive finite number or null),
// every null value has a ratio.undefined saying why, and the comparison
// always encodes as JSON.
func FuzzCompareNumbers(f *testing.F) {
	f.Add(13.2, 12.2, 0.0, 44.0, 66334.0, 71234.0, 768, 768)
	f.Add(1e305, 13.0, 5e-324, 22.0, math.MaxFloat64, 5e-324, 768, 700)
	f.Add(math.MaxFloat64, math.MaxFloat64, 3e-5, 1.0, 1.0, 1.0, 0, 0)
	f.Add(0.0, 0.0, 0.0, 0.0, 5e-324, 5e-324, 1, 0)
	f.Fuzz(func(t *testing.T, o1, b1, o2, b2, om, bm float64, oOut, bOut int) {
		for _, x := range []float64{o1, b1, o2, b2, om, bm} {
			if !(x >= 0) || math.IsInf(x, 0) {
				return // the reader refuses these: never a point or a record
			}
		}
		if oOut < 0 || bOut < 0 || om == 0 || bm == 0 {
			return
		}
		ours := Arm{Engine: "a", Legs: []*Leg{{Clock: &clocks.Leg{Name: "r1"}, Points: points("m", o1, o2), PeakGPUMemoryMiB: &om}}}
		baseline := Arm{Engine: "b", Legs: []*Leg{{Clock: &clocks.Leg{Name: "r1"}, Points: points("m", b1, b2), PeakGPUMemoryMiB: &bm}}}
		ours.Legs[0].Points[0].TotalOutputTokens, baseline.Legs[0].Points[0].TotalOutputTokens = oOut, bOut
		c, err := Compare("m", ours, baseline, false)
		if err != nil {
			t.Fatal(err)
		}
		bad := func(p *float64) bool { return p != nil && (!(*p > 0) || math.IsInf(*p, 0)) }
		for _, p := range c.Throughput.Points {
			if bad(p.Ours) || bad(p.Baseline) || bad(p.Ratio) {
				t.Fatalf("point %s", show([]Point{p}))
			}
		}
		if bad(c.Throughput.Value) || bad(c.Memory.Value) {
			t.Fatalf("values %v %v", c.Throughput.Value, c.Memory.Value)
		}
		if c.Throughput.Value == nil && len(undefinedOf(c.Throughput.Reasons)) == 0 ||
			c.Memory.Value == nil && len(undefinedOf(c.Memory.Reasons)) == 0 {
			t.Fatalf("a null value without ratio.undefined: %+v %+v", c.Throughput.Reasons, c.Memory.Reasons)
		}
		if _, err := json.Marshal(c); err != nil {
			t.Fatalf("does not encode: %v", err)
		}
	})
}
