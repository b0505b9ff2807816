package history

import (
	"testing"
)

// A grid whose summary.json has the ENERGY family gives each point's
// ENERGY ratio a series of its own, with its verdict; a grid without it
// (written before the family) gives none.
func TestEnergySeries(t *testing.T) {
	g, err := Load("../testdata/trees/energy-clean")
	if err != nil {
		t.Fatal(err)
	}
	var got []Value
	for _, v := range g.Values {
		if v.Key.Metric == MetricEnergyRatio {
			got = append(got, v)
		}
	}
	if len(got) != 4 {
		t.Fatalf("%d ENERGY series, want one per point (4): %v", len(got), got)
	}
	for i, p := range []string{"1/inf", "2/inf", "4/inf", "8/inf"} {
		v := got[i]
		if v.Key.Point != p || v.Key.Engines != "vllm-copy/vllm" || v.Value < 1.098 || v.Value > 1.102 || !v.Established {
			t.Errorf("series %d: %+v, want %s about 1.1, established", i, v, p)
		}
	}
	g, err = Load("../testdata/trees/energy-disagree")
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range g.Values {
		if v.Key.Metric == MetricEnergyRatio && v.Established {
			t.Errorf("%v established under energy.disagree", v)
		}
	}
}
