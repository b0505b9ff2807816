package report

import (
	"testing"

	"github.com/clockgate/clockgate/clocks"
)

// A GPU with no power-managed sample is not in the power-managed list: at
// 0% its free clock is the busy clock the legs table shows (SPEC §12.1).
// One with any is listed, with its share.
func TestPowerManagedListNotAtZero(t *testing.T) {
	gpu := func(index, managed int) clocks.GPU {
		med, mean, spread, limit := 2090.0, 2088.05, 2.68, 750.0
		mn, mx := 2080, 2136
		idx, m := index, managed
		return clocks.GPU{Index: &idx, SMClockMHz: clocks.Stats{N: 200},
			EnforcedPowerLimitW: &limit, PowerManagedSamples: &m,
			FreeClockMHz: &clocks.FreeStats{Stats: clocks.Stats{N: 200 - managed, Min: &mn, Median: &med, Max: &mx, SpreadPct: &spread}, MeanMHz: &mean}}
	}
	if got := legPower(&clocks.Record{GPUs: []clocks.GPU{gpu(0, 0), gpu(1, 0)}}); got != "" {
		t.Errorf("0%% power-managed listed: %q", got)
	}
	want := "GPU 1: free median 2090 MHz, spread 2.68%, mean 2088.05 MHz, n=199 free of 200 busy; 0.50% power-managed at 750 W"
	if got := legPower(&clocks.Record{GPUs: []clocks.GPU{gpu(0, 0), gpu(1, 1)}}); got != want {
		t.Errorf("got %q\nwant %q", got, want)
	}
}
