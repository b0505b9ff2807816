package main

import (
	"strings"
	"testing"
)

// healthyGrowths are -short's shapes as a healthy build measures them
// (2-core VM), the two-arms tree's larger size peaking at fewRSSMiB.
func healthyGrowths(fewRSSMiB float64) []growth {
	return []growth{
		{shape: manyArms.name, small: 1000, large: 2000, smallRSS: 56 << 10, rss: 65 << 10},
		{shape: fewArms.name, small: 1000, large: 2000, smallRSS: 62 << 10, rss: int64(fewRSSMiB * 1024)},
	}
}

func TestShapeGuardPassesAHealthyRun(t *testing.T) {
	if bad := shortShapes.check(healthyGrowths(95)); len(bad) > 0 {
		t.Fatalf("a healthy run failed the guard: %q", bad)
	}
}

// TestShapeGuardFailsGrowthPerLeg: an arm of many legs whose --out grows
// past the bound per leg fails the guard, naming the shape, the growth,
// both sizes and the bound; at the bound exactly it passes.
func TestShapeGuardFailsGrowthPerLeg(t *testing.T) {
	// 62 MiB at 1,000 legs; 48 KiB a leg more is 62 + 46.875 MiB at 2,000.
	atBound := 62 + 48.0*1000/1024
	if bad := shortShapes.check(healthyGrowths(atBound)); len(bad) > 0 {
		t.Errorf("growth at exactly the bound failed: %q", bad)
	}
	bad := shortShapes.check(healthyGrowths(atBound + 0.1))
	want := "two arms of many legs: --out's peak RSS grew by 48.1 KiB a leg from 1000 legs (62.0 MiB) to 2000 (109.0 MiB); the bound is 48 KiB a leg"
	if strings.Join(bad, "\n") != want {
		t.Fatalf("got %q, want %q", bad, want)
	}
}

// TestShapeGuardFailsPeakRSS: the two-arms tree peaking past its bound
// fails, whatever its growth (here a large first size).
func TestShapeGuardFailsPeakRSS(t *testing.T) {
	gs := healthyGrowths(113)
	gs[1].smallRSS = 100 << 10
	bad := shortShapes.check(gs)
	want := "two arms of many legs, 2000 legs × 60: --out peaked at 113.0 MiB RSS; the bound is 112 MiB"
	if strings.Join(bad, "\n") != want {
		t.Fatalf("got %q, want %q", bad, want)
	}
	gs = healthyGrowths(112)
	gs[1].smallRSS = 100 << 10
	if bad := shortShapes.check(gs); len(bad) > 0 {
		t.Errorf("a peak at exactly the bound failed: %q", bad)
	}
}

// TestShapeGuardBoundsManyArms: the many-arms shape has its own bounds,
// tighter than the two-arms shape's: a peak or a growth that would pass
// there fails here.
func TestShapeGuardBoundsManyArms(t *testing.T) {
	gs := healthyGrowths(95)
	gs[0].rss = 81 << 10 // 25 KiB a leg from 56 MiB
	bad := shortShapes.check(gs)
	want := []string{
		"many arms of 20 legs, 2000 legs × 60: --out peaked at 81.0 MiB RSS; the bound is 80 MiB",
		"many arms of 20 legs: --out's peak RSS grew by 25.6 KiB a leg from 1000 legs (56.0 MiB) to 2000 (81.0 MiB); the bound is 24 KiB a leg",
	}
	if strings.Join(bad, "\n") != strings.Join(want, "\n") {
		t.Fatalf("got %q, want %q", bad, want)
	}
}
