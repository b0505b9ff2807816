package clocks

import (
	"bytes"
	"fmt"
	"math/rand"
	"slices"
	"testing"
)

// TestFoldCountsAtTheEdges holds a fold's busy counts (Hist) and power
// counts (Power) to counting by brute force, per GPU, on 300 random
// streams whose values sit on either side of every edge of the counting
// arrays (the busy clocks' 4,096 values and the power's ±163.84 W around
// each GPU's first value, and far outside both), with GPU indexes on
// either side of the fold's 64-entry index cache. A third of the streams
// keep every power value in the array's span.
func TestFoldCountsAtTheEdges(t *testing.T) {
	rng := rand.New(rand.NewSource(11))
	indexes := []int{0, 1, 63, 64, 65, 1000}
	for trial := range 300 {
		gpus := make([]int, 1+rng.Intn(3))
		for k := range gpus {
			gpus[k] = indexes[rng.Intn(len(indexes))]
		}
		slices.Sort(gpus)
		gpus = slices.Compact(gpus)
		first := map[int][2]int{} // each GPU's first clock and power (10 mW)
		wantHist := map[int]map[int]int{}
		wantPower := map[int]map[int64]int{}
		var ss []*Sample
		for tick := range 40 + rng.Intn(40) {
			for _, g := range gpus {
				f, seen := first[g]
				mhz, cw := 1000+rng.Intn(3000), 100+rng.Intn(90000)
				if seen {
					// The dense clocks span first-2048 .. first+2047; the
					// dense power spans first-16384 .. first+16383.
					switch rng.Intn(3) {
					case 0:
						mhz = f[0] + []int{-2049, -2048, -2047, 0, 2046, 2047, 2048, 2049, -900, 5000}[rng.Intn(10)]
					case 1:
						cw = f[1] + []int{-16385, -16384, -16383, 0, 16382, 16383, 16384, 16385, -30000, 60000}[rng.Intn(10)]
					}
					if trial%3 == 0 {
						// Every power value in the array's span.
						cw = f[1] + []int{-16384, -16383, -7, 0, 5, 16382, 16383}[rng.Intn(7)]
					}
					mhz, cw = max(mhz, 1), max(cw, 0)
				} else {
					first[g] = [2]int{mhz, cw}
					wantHist[g], wantPower[g] = map[int]int{}, map[int64]int{}
				}
				s := gb10(tick, boot13, mhz, 97)
				s.GPUIndex, s.GPUUUID = g, fmt.Sprintf("GPU-%d", g)
				w := float64(cw) / 100
				s.PowerDrawW = &w
				ss = append(ss, s)
				wantHist[g][mhz]++
				wantPower[g][int64(cw)*10]++
			}
		}
		f := NewFold()
		if err := f.FoldStream(bytes.NewReader(streamOf(ss)), "edges.samples.jsonl"); err != nil {
			t.Fatal(err)
		}
		var got []int
		for _, g := range f.GPUs {
			got = append(got, g.Index)
		}
		if !slices.Equal(got, gpus) {
			t.Fatalf("trial %d: GPUs %v folded, want %v", trial, got, gpus)
		}
		for _, g := range f.GPUs {
			var hist []Count
			for v, n := range wantHist[g.Index] {
				hist = append(hist, Count{v, n})
			}
			slices.SortFunc(hist, func(a, b Count) int { return a.V - b.V })
			if !slices.Equal(g.Hist, hist) {
				t.Fatalf("trial %d, GPU %d: busy counts\n%v\nwant\n%v", trial, g.Index, g.Hist, hist)
			}
			var power []PowerCount
			for mw, n := range wantPower[g.Index] {
				power = append(power, PowerCount{mw, n})
			}
			slices.SortFunc(power, func(a, b PowerCount) int { return int(a.MW - b.MW) })
			if !slices.Equal(g.Power, power) {
				t.Fatalf("trial %d, GPU %d: power counts\n%v\nwant\n%v", trial, g.Index, g.Power, power)
			}
		}
	}
}
